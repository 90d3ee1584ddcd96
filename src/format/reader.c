/*
 * scdata reader — validates a chunk as a whole, then hands out its records.
 *
 * A chunk is checked completely before its first record is returned: sizes
 * against the limits, the CRC of the stored bytes, the decompressed size
 * against raw_size, and every record header against the chunk's end and
 * the chunk's record count.  So a damaged chunk yields no record at all,
 * every record returned comes from an intact chunk, and record pointers
 * can be handed out without further checks (sc_record_check() then
 * validates a record's own fields).
 *
 * The same code reads a memory buffer or a file: src_read() returns the
 * next bytes either as a pointer into the buffer or through a read() into
 * a buffer the reader owns.  Files are read with read() rather than mmap so
 * that a file shrinking under us is a short read, not a SIGBUS.
 */
#include "format/scdata.h"
#include "util/util.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the data file is little-endian and read in place"
#endif

enum reader_state { RD_READING, RD_EOF };

struct sc_reader {
	int fd;                  /* -1 when reading from memory */
	const uint8_t *mem;
	size_t mem_len;
	uint64_t pos;            /* file offset of the next chunk */
	struct sc_file_header hdr;

	uint8_t *stored;         /* file source: the chunk's stored bytes */
	size_t stored_alloc;
	uint8_t *raw;            /* decompressed (or realigned) records */
	size_t raw_alloc;
	ZSTD_DCtx *dctx;

	const uint8_t *recs;     /* records of the current chunk */
	uint32_t rec_len, rec_off;
	struct sc_chunk_info chunk;
	bool have_chunk;
	bool keep_unknown;
	enum reader_state state;
	char damage[256];
};

static void seterr(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void seterr(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || !errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

/*
 * Next len bytes at r->pos into *out.  Returns how many are there (less
 * than len at the end of the data), or -errno.  For a file, *out points
 * into r->stored and stays valid until the next call.
 */
static ssize_t src_read(struct sc_reader *r, size_t len, const uint8_t **out)
{
	size_t got = 0;

	if (r->fd < 0) {
		size_t left = r->pos < r->mem_len ? r->mem_len - r->pos : 0;

		/* no arithmetic on the pointer past its end (or on NULL, 0) */
		*out = left ? r->mem + r->pos : r->mem;
		return len < left ? len : left;
	}
	if (grow_bytes(&r->stored, &r->stored_alloc, len))
		return -ENOMEM;
	while (got < len) {
		ssize_t n = read(r->fd, r->stored + got, len - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			break;
		got += n;
	}
	*out = r->stored;
	return got;
}

/* Say why a data file cannot be opened or read, and what to do about it. */
static void set_open_error(char *err, size_t errlen, int errnum)
{
	switch (errnum) {
	case ENOENT:
		seterr(err, errlen, "no such file (record one with 'stackclock record', "
		       "or name it with -i FILE)");
		break;
	case EACCES:
	case EPERM:
		seterr(err, errlen, "permission denied (run as the file's owner, or as root)");
		break;
	case EISDIR:
		seterr(err, errlen, "is a directory, not a data file (name the file with -i FILE)");
		break;
	default:
		seterr(err, errlen, "%s", strerror(errnum));
	}
}

static int check_header(struct sc_reader *r, char *err, size_t errlen)
{
	const struct sc_file_header *h = &r->hdr;
	const uint8_t *p;
	ssize_t n;

	n = src_read(r, sizeof(r->hdr), &p);
	if (n < 0) {
		set_open_error(err, errlen, (int)-n);
		return (int)n;
	}
	if (n == 0) {
		seterr(err, errlen, "empty file, not a stackclock data file "
		       "(did the recording fail before it started?)");
		return -EINVAL;
	}
	if (memcmp(p, SC_FILE_MAGIC, (size_t)n < sizeof(h->magic) ? (size_t)n : sizeof(h->magic))) {
		seterr(err, errlen, "not a stackclock data file (bad magic)");
		return -EINVAL;
	}
	if ((size_t)n < sizeof(*h)) {
		seterr(err, errlen, "truncated stackclock data file (header has %zd of %zu bytes)",
		       n, sizeof(*h));
		return -EINVAL;
	}
	memcpy(&r->hdr, p, sizeof(r->hdr));
	r->pos = sizeof(*h);
	if (h->version == 0 || h->min_version > h->version) {
		seterr(err, errlen, "corrupt stackclock data file header (version %u, min_version %u)",
		       h->version, h->min_version);
		return -EINVAL;
	}
	if (h->min_version > SC_FILE_VERSION) {
		seterr(err, errlen, "data file is version %u, this stackclock reads up to %u: "
		       "upgrade stackclock", h->version, SC_FILE_VERSION);
		return -EPROTONOSUPPORT;
	}
	return 0;
}

/*
 * Common end of both open functions: fd (or -1 with mem/len) becomes the
 * reader's; on failure everything is released and *out stays NULL.
 */
static int reader_start(int fd, const void *mem, size_t len, struct sc_reader **out,
			char *err, size_t errlen)
{
	struct sc_reader *r;
	int ret;

	*out = NULL;
	r = calloc(1, sizeof(*r));
	if (!r) {
		if (fd >= 0)
			close(fd);
		seterr(err, errlen, "out of memory");
		return -ENOMEM;
	}
	r->fd = fd;
	r->mem = mem;
	r->mem_len = len;
	ret = check_header(r, err, errlen);
	if (ret) {
		sc_reader_close(r);
		return ret;
	}
	*out = r;
	return 0;
}

int sc_reader_open_mem(const void *buf, size_t len, struct sc_reader **out,
		       char *err, size_t errlen)
{
	return reader_start(-1, buf, len, out, err, errlen);
}

int sc_reader_open(const char *path, struct sc_reader **out,
		   char *err, size_t errlen)
{
	struct stat st;
	int fd;

	*out = NULL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		int ret = -errno;

		set_open_error(err, errlen, -ret);
		return ret;
	}
	/* a directory opens fine and fails only at read(): say so plainly */
	if (!fstat(fd, &st) && S_ISDIR(st.st_mode)) {
		close(fd);
		set_open_error(err, errlen, EISDIR);
		return -EISDIR;
	}
	return reader_start(fd, NULL, 0, out, err, errlen);
}

static int damaged(struct sc_reader *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static int damaged(struct sc_reader *r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r->damage, sizeof(r->damage), fmt, ap);
	va_end(ap);
	r->state = RD_EOF;
	r->recs = NULL;
	r->rec_len = r->rec_off = 0;
	return SC_READ_DAMAGED;
}

/*
 * Walk the record headers of a chunk: each must lie inside it, and their
 * number must be the header's.  Returns the byte offset of the first bad
 * one, or -1 if all are good.
 */
static int64_t walk_records(const uint8_t *p, uint32_t len, uint32_t nrecords)
{
	uint32_t off = 0, n = 0;

	while (off < len) {
		const struct sc_rec_header *rh = (const void *)(p + off);
		uint32_t room;

		if (len - off < sizeof(*rh) || n == nrecords)
			return off;
		room = len - off - sizeof(*rh);
		if (SC_REC_PAD(rh->size) > room)
			return off;
		off += sizeof(*rh) + SC_REC_PAD(rh->size);
		n++;
	}
	return n == nrecords ? -1 : (int64_t)off;
}

/* Read and validate the chunk at r->pos.  OK, EOF or DAMAGED. */
static int next_chunk(struct sc_reader *r)
{
	uint64_t at = r->pos;
	struct sc_chunk_header ch;
	const uint8_t *p;
	uint32_t crc;
	int64_t bad;
	ssize_t n;

	n = src_read(r, sizeof(ch), &p);
	if (n < 0)
		return damaged(r, "read error at byte %" PRIu64 ": %s", at, strerror((int)-n));
	if (n == 0) {
		r->state = RD_EOF;
		return SC_READ_EOF;
	}
	if ((size_t)n < sizeof(ch))
		return damaged(r, "truncated chunk header at byte %" PRIu64 " (%zd of %zu bytes)",
			       at, n, sizeof(ch));
	memcpy(&ch, p, sizeof(ch));
	if (ch.magic != SC_CHUNK_MAGIC)
		return damaged(r, "bad chunk magic at byte %" PRIu64, at);
	if (ch.flags & ~SC_CHUNK_ZSTD)
		return damaged(r, "chunk at byte %" PRIu64 " has unknown flags 0x%x", at, ch.flags);
	if (ch.raw_size > SC_CHUNK_MAX_RAW)
		return damaged(r, "chunk at byte %" PRIu64 " too large (%u bytes, limit %u)",
			       at, ch.raw_size, SC_CHUNK_MAX_RAW);
	if (ch.raw_size % 8 || ch.nrecords > ch.raw_size / sizeof(struct sc_rec_header) ||
	    (ch.flags & SC_CHUNK_ZSTD ? ch.stored_size > ZSTD_compressBound(ch.raw_size)
				      : ch.stored_size != ch.raw_size))
		return damaged(r, "chunk at byte %" PRIu64 " has inconsistent sizes "
			       "(stored %u, raw %u, %u records)",
			       at, ch.stored_size, ch.raw_size, ch.nrecords);

	r->pos += sizeof(ch);
	n = src_read(r, ch.stored_size, &p);
	if (n < 0)
		return damaged(r, "read error at byte %" PRIu64 ": %s", r->pos, strerror((int)-n));
	if ((size_t)n < ch.stored_size)
		return damaged(r, "truncated chunk at byte %" PRIu64 " (%u bytes announced, %zd present)",
			       at, ch.stored_size, n);
	crc = crc32(0, p, ch.stored_size);
	if (crc != ch.crc32)
		return damaged(r, "chunk at byte %" PRIu64 " fails its CRC check "
			       "(stored 0x%08x, computed 0x%08x)", at, ch.crc32, crc);

	if (ch.flags & SC_CHUNK_ZSTD) {
		size_t got;

		if (!r->dctx && !(r->dctx = ZSTD_createDCtx()))
			return damaged(r, "out of memory for decompression at byte %" PRIu64, at);
		if (grow_bytes(&r->raw, &r->raw_alloc, ch.raw_size ? ch.raw_size : 1))
			return damaged(r, "out of memory for a chunk of %u bytes at byte %" PRIu64,
				       ch.raw_size, at);
		got = ZSTD_decompressDCtx(r->dctx, r->raw, ch.raw_size, p, ch.stored_size);
		if (ZSTD_isError(got))
			return damaged(r, "chunk at byte %" PRIu64 " does not decompress (%s)",
				       at, ZSTD_getErrorName(got));
		if (got != ch.raw_size)
			return damaged(r, "chunk at byte %" PRIu64 " decompresses to %zu bytes, "
				       "header says %u", at, got, ch.raw_size);
		p = r->raw;
	} else if ((uintptr_t)p % 8) {
		/* after a compressed chunk in a memory buffer: realign */
		if (grow_bytes(&r->raw, &r->raw_alloc, ch.raw_size ? ch.raw_size : 1))
			return damaged(r, "out of memory for a chunk of %u bytes at byte %" PRIu64,
				       ch.raw_size, at);
		memcpy(r->raw, p, ch.raw_size);
		p = r->raw;
	}

	bad = walk_records(p, ch.raw_size, ch.nrecords);
	if (bad >= 0)
		return damaged(r, "chunk at byte %" PRIu64 " has a bad record at offset %" PRId64
			       " of its %u bytes (%u records announced)",
			       at, bad, ch.raw_size, ch.nrecords);

	r->pos += ch.stored_size;
	r->recs = p;
	r->rec_len = ch.raw_size;
	r->rec_off = 0;
	r->chunk.index = r->have_chunk ? r->chunk.index + 1 : 0;
	r->chunk.offset = at;
	r->chunk.flags = ch.flags;
	r->chunk.stored_size = ch.stored_size;
	r->chunk.raw_size = ch.raw_size;
	r->chunk.crc32 = ch.crc32;
	r->chunk.nrecords = ch.nrecords;
	r->have_chunk = true;
	return SC_READ_OK;
}

int sc_reader_next(struct sc_reader *r, struct sc_record *rec)
{
	for (;;) {
		const struct sc_rec_header *rh;
		int ret;

		if (r->state == RD_EOF)
			return SC_READ_EOF;
		if (r->rec_off >= r->rec_len) {
			ret = next_chunk(r);
			if (ret != SC_READ_OK)
				return ret;
			continue;
		}
		/* sizes were checked by walk_records() */
		rh = (const void *)(r->recs + r->rec_off);
		r->rec_off += sizeof(*rh) + SC_REC_PAD(rh->size);
		if (!r->keep_unknown && (rh->type == 0 || rh->type >= SC_REC_MAX))
			continue;
		rec->type = rh->type;
		rec->size = rh->size;
		rec->data = rh + 1;
		return SC_READ_OK;
	}
}

const char *sc_reader_damage(const struct sc_reader *r)
{
	return r->damage[0] ? r->damage : NULL;
}

int64_t sc_reader_payload_offset(const struct sc_reader *r, const struct sc_record *rec)
{
	const uint8_t *d = rec->data;

	if (r->fd < 0 || !r->have_chunk || (r->chunk.flags & SC_CHUNK_ZSTD) || r->recs != r->stored ||
	    d < r->recs || d > r->recs + r->rec_len)
		return -1;
	return (int64_t)(r->chunk.offset + sizeof(struct sc_chunk_header) + (uint64_t)(d - r->recs));
}

int sc_reader_file_fd(const struct sc_reader *r)
{
	struct stat st;

	return r->fd >= 0 && !fstat(r->fd, &st) && S_ISREG(st.st_mode) ? r->fd : -1;
}

uint32_t sc_reader_features(const struct sc_reader *r)
{
	return r->hdr.features;
}

unsigned sc_reader_version(const struct sc_reader *r)
{
	return r->hdr.version;
}

const struct sc_file_header *sc_reader_header(const struct sc_reader *r)
{
	return &r->hdr;
}

const struct sc_chunk_info *sc_reader_chunk(const struct sc_reader *r)
{
	return r->have_chunk ? &r->chunk : NULL;
}

void sc_reader_keep_unknown(struct sc_reader *r, int keep)
{
	r->keep_unknown = keep;
}

void sc_reader_close(struct sc_reader *r)
{
	if (!r)
		return;
	if (r->fd >= 0)
		close(r->fd);
	ZSTD_freeDCtx(r->dctx);
	free(r->stored);
	free(r->raw);
	free(r);
}
