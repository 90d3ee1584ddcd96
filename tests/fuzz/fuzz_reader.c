/*
 * libFuzzer harness for the data-file reader: open the bytes as a data
 * file, read every record, and run sc_record_check() and a typed access on
 * each, as the report does.  Built and run by tests/fuzz/run-fuzz.sh.
 *
 * Random mutations almost never keep a chunk's CRC32 right, which would
 * stop the fuzzer at the CRC check; so each input is read twice: as is
 * (the CRC and header paths) and with every chunk's CRC recomputed (the
 * decompression, record-walking and record-checking paths behind it).
 */
#include "format/scdata.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

static volatile uint64_t sink;

/* What a typed reader does after sc_record_check() says yes. */
static void touch(const struct sc_record *rec)
{
	const char *p = rec->data;

	switch (rec->type) {
	case SC_REC_SESSION: {
		const struct sc_rec_session *s = rec->data;
		const char *arg = (const char *)(s + 1);
		for (uint32_t i = 0; i < s->argc; i++)
			arg += strlen(arg) + 1;
		sink += (uintptr_t)arg;
		break;
	}
	case SC_REC_PROCESS:
		sink += strlen(p + sizeof(struct sc_rec_process));
		break;
	case SC_REC_THREAD:
		sink += strlen(p + sizeof(struct sc_rec_thread));
		break;
	case SC_REC_MODULE: {
		const struct sc_rec_module *m = rec->data;
		for (uint32_t i = 0; i < m->build_id_len; i++)
			sink += m->build_id[i];
		sink += strlen(p + sizeof(*m));
		break;
	}
	case SC_REC_STACK: {
		const struct sc_rec_stack *s = rec->data;
		const uint64_t *ip = (const uint64_t *)(s + 1);
		for (unsigned i = 0; i < s->nframes; i++)
			sink += ip[i];
		break;
	}
	default:
		if (rec->size)
			sink += (uint8_t)p[rec->size - 1];
		break;
	}
}

static void read_all(const uint8_t *data, size_t size, int keep_unknown)
{
	struct sc_reader *r;
	struct sc_record rec;
	char err[256];
	int ret;

	if (sc_reader_open_mem(data, size, &r, err, sizeof(err))) {
		if (!memchr(err, '\0', sizeof(err)) || !err[0])
			abort();      /* a refusal must say why */
		return;
	}
	sc_reader_keep_unknown(r, keep_unknown);
	sink += sc_reader_version(r) + sc_reader_features(r);
	while ((ret = sc_reader_next(r, &rec)) == SC_READ_OK) {
		if ((uintptr_t)rec.data % 8)
			abort();      /* promised aligned */
		if (!sc_record_check(&rec))
			touch(&rec);
		sink += sc_reader_chunk(r)->offset;
		sink += sc_rec_type_name(rec.type) != NULL;
	}
	if (ret == SC_READ_DAMAGED && (!sc_reader_damage(r) || sc_reader_next(r, &rec) != SC_READ_EOF))
		abort();          /* damage is described, and reported once */
	sc_reader_close(r);
}

/* Copy of data with each chunk's crc32 made right, as far as chunks parse. */
static uint8_t *fix_crcs(const uint8_t *data, size_t size)
{
	size_t off = sizeof(struct sc_file_header);
	struct sc_chunk_header ch;
	uint8_t *copy;

	if (size < off)
		return NULL;
	copy = malloc(size);
	memcpy(copy, data, size);
	while (size - off >= sizeof(ch)) {
		memcpy(&ch, copy + off, sizeof(ch));
		if (ch.stored_size > size - off - sizeof(ch))
			break;
		ch.crc32 = crc32(0, copy + off + sizeof(ch), ch.stored_size);
		memcpy(copy + off, &ch, sizeof(ch));
		off += sizeof(ch) + ch.stored_size;
	}
	return copy;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *fixed;

	read_all(data, size, 0);
	fixed = fix_crcs(data, size);
	if (fixed) {
		read_all(fixed, size, 1);
		free(fixed);
	}
	return 0;
}
