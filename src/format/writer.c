/*
 * scdata writer — buffers records into a chunk and writes whole chunks.
 *
 * The file is written beside its destination and renamed over it by
 * sc_writer_close() once complete and on disk (util.h, outfile): a full
 * disk or a crash leaves what the destination held before.
 *
 * Why whole chunks: a chunk goes out with one writev() of header + payload,
 * so a recorder that dies between two flushes leaves a temporary file
 * whose chunks are all complete (readable), and one that dies inside a
 * write leaves a partial last chunk that the reader reports as damage.
 * Everything before it survives.
 *
 * A chunk is compressed with zstd at a fast level when that makes it
 * smaller (sc_writer_add_stored: a large record stored as it is, in a
 * chunk of its own); records are padded to 8 bytes so that a reader can hand out
 * aligned pointers into its decompressed buffer without copying.
 */
#include "format/scdata.h"
#include "util/util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>
#include <zlib.h>
#include <stdbool.h>
#include <zstd.h>

/* Flush when the raw records reach this; big enough for zstd to find
 * repetition, small enough that a crash loses little. */
#define SC_CHUNK_TARGET   (1u << 20)
#define SC_ZSTD_LEVEL     1

struct sc_writer {
	struct outfile out;      /* the temporary file, renamed when closed */
	int fd;                  /* out.fd */
	int error;               /* first failure, sticky: 0 or -errno */
	struct sc_file_header hdr;
	uint8_t *raw;            /* records of the current chunk */
	size_t raw_len, raw_alloc;
	uint32_t nrecords;
	uint8_t *zbuf;           /* compressed payload */
	size_t zbuf_alloc;
	ZSTD_CCtx *cctx;
};

static int write_all(int fd, struct iovec *iov, int iovcnt)
{
	while (iovcnt > 0) {
		ssize_t n = writev(fd, iov, iovcnt);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		while (iovcnt > 0 && (size_t)n >= iov->iov_len) {
			n -= iov->iov_len;
			iov++;
			iovcnt--;
		}
		if (iovcnt > 0) {
			iov->iov_base = (char *)iov->iov_base + n;
			iov->iov_len -= n;
		}
	}
	return 0;
}

int sc_writer_open(const char *path, uint32_t features, struct sc_writer **out)
{
	struct sc_writer *w;
	struct iovec iov;
	int ret;

	*out = NULL;
	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	memcpy(w->hdr.magic, SC_FILE_MAGIC, sizeof(w->hdr.magic));
	w->hdr.version = SC_FILE_VERSION;
	w->hdr.min_version = SC_FILE_MIN_VERSION;
	w->hdr.features = features;

	ret = outfile_open(&w->out, path);
	if (ret) {
		free(w);
		return ret;
	}
	w->fd = w->out.fd;
	iov.iov_base = &w->hdr;
	iov.iov_len = sizeof(w->hdr);
	ret = write_all(w->fd, &iov, 1);
	if (ret) {
		outfile_discard(&w->out);
		free(w);
		return ret;
	}
	*out = w;
	return 0;
}

/*
 * The first compressed chunk sets SC_FEAT_ZSTD in the file header, which
 * was written before anyone knew.  Readers go by each chunk's own flag, so
 * this is informational and a failure to rewrite it (a pipe) is harmless.
 */
static void note_zstd(struct sc_writer *w)
{
	if (w->hdr.features & SC_FEAT_ZSTD)
		return;
	w->hdr.features |= SC_FEAT_ZSTD;
	if (pwrite(w->fd, &w->hdr, sizeof(w->hdr), 0) != sizeof(w->hdr))
		pr_debug("could not update the file header's features");
}

int sc_writer_flush(struct sc_writer *w)
{
	struct sc_chunk_header ch = { .magic = SC_CHUNK_MAGIC };
	struct iovec iov[2];
	const void *stored = w->raw;
	size_t stored_len = w->raw_len;
	int ret;

	if (w->error)
		return w->error;
	if (!w->nrecords)
		return 0;

	if (!w->cctx)
		w->cctx = ZSTD_createCCtx();
	if (w->cctx && !grow_bytes(&w->zbuf, &w->zbuf_alloc, ZSTD_compressBound(w->raw_len))) {
		size_t z = ZSTD_compressCCtx(w->cctx, w->zbuf, w->zbuf_alloc,
					     w->raw, w->raw_len, SC_ZSTD_LEVEL);
		if (!ZSTD_isError(z) && z < w->raw_len) {
			stored = w->zbuf;
			stored_len = z;
			ch.flags |= SC_CHUNK_ZSTD;
		}
	}
	ch.stored_size = stored_len;
	ch.raw_size = w->raw_len;
	ch.crc32 = crc32(0, stored, stored_len);
	ch.nrecords = w->nrecords;

	iov[0].iov_base = &ch;
	iov[0].iov_len = sizeof(ch);
	iov[1].iov_base = (void *)stored;
	iov[1].iov_len = stored_len;
	ret = write_all(w->fd, iov, 2);
	if (ret) {
		w->error = ret;
		return ret;
	}
	if (ch.flags & SC_CHUNK_ZSTD)
		note_zstd(w);
	w->raw_len = 0;
	w->nrecords = 0;
	return 0;
}

int sc_writer_add2(struct sc_writer *w, enum sc_rec_type type,
		   const void *fixed, size_t fixed_size,
		   const void *tail, size_t tail_size)
{
	struct sc_rec_header rh = { .type = type };
	size_t size = fixed_size + tail_size;
	size_t need;
	uint8_t *p;
	int ret;

	if (w->error)
		return w->error;
	if ((unsigned)type == 0 || (unsigned)type > UINT16_MAX)
		return -EINVAL;
	if (size > SC_CHUNK_MAX_RAW - sizeof(rh) - 7)
		return -E2BIG;
	need = sizeof(rh) + SC_REC_PAD(size);

	if (w->raw_len && w->raw_len + need > SC_CHUNK_TARGET) {
		ret = sc_writer_flush(w);
		if (ret)
			return ret;
	}
	if (grow_bytes(&w->raw, &w->raw_alloc, w->raw_len + need))
		return -ENOMEM;

	rh.size = size;
	p = w->raw + w->raw_len;
	memcpy(p, &rh, sizeof(rh));
	p += sizeof(rh);
	if (fixed_size)
		memcpy(p, fixed, fixed_size);
	if (tail_size)
		memcpy(p + fixed_size, tail, tail_size);
	memset(p + size, 0, SC_REC_PAD(size) - size);
	w->raw_len += need;
	w->nrecords++;

	if (w->raw_len >= SC_CHUNK_TARGET)
		return sc_writer_flush(w);
	return 0;
}

/*
 * A chunk of one record, stored as it is: the records before it go out
 * first (order kept), then the chunk header, the record's header and fixed
 * part, and its tail straight from the caller's memory (one writev, no
 * copy of the tail: a timeline's tens of megabytes were a copy and a
 * compression that cost more than their bytes on disk).
 */
int sc_writer_add_stored(struct sc_writer *w, enum sc_rec_type type,
			 const void *fixed, size_t fixed_size,
			 const void *tail, size_t tail_size)
{
	static const uint8_t zeros[8];
	struct sc_chunk_header ch = { .magic = SC_CHUNK_MAGIC, .nrecords = 1 };
	struct sc_rec_header rh = { .type = type };
	size_t size = fixed_size + tail_size, pad;
	uint8_t head[sizeof(rh) + 128];
	struct iovec iov[4];
	uint32_t crc;
	int ret;

	if (w->error)
		return w->error;
	if ((unsigned)type == 0 || (unsigned)type > UINT16_MAX || fixed_size > sizeof(head) - sizeof(rh))
		return -EINVAL;
	if (size > SC_CHUNK_MAX_RAW - sizeof(rh) - 7)
		return -E2BIG;
	ret = sc_writer_flush(w);
	if (ret)
		return ret;
	rh.size = (uint32_t)size;
	memcpy(head, &rh, sizeof(rh));
	memcpy(head + sizeof(rh), fixed, fixed_size);
	pad = SC_REC_PAD(size) - size;
	crc = crc32(0, head, (uInt)(sizeof(rh) + fixed_size));
	crc = crc32(crc, tail, (uInt)tail_size);
	crc = crc32(crc, zeros, (uInt)pad);
	ch.stored_size = ch.raw_size = (uint32_t)(sizeof(rh) + SC_REC_PAD(size));
	ch.crc32 = crc;
	iov[0] = (struct iovec){ &ch, sizeof(ch) };
	iov[1] = (struct iovec){ head, sizeof(rh) + fixed_size };
	iov[2] = (struct iovec){ (void *)tail, tail_size };
	iov[3] = (struct iovec){ (void *)zeros, pad };
	ret = write_all(w->fd, iov, 4);
	if (ret)
		w->error = ret;
	return ret;
}

int sc_writer_add(struct sc_writer *w, enum sc_rec_type type,
		  const void *payload, size_t size)
{
	return sc_writer_add2(w, type, payload, size, NULL, 0);
}

static void writer_free(struct sc_writer *w)
{
	ZSTD_freeCCtx(w->cctx);
	free(w->raw);
	free(w->zbuf);
	free(w);
}

int sc_writer_close(struct sc_writer *w)
{
	int ret;

	if (!w)
		return 0;
	ret = sc_writer_flush(w);
	if (ret)
		outfile_discard(&w->out);
	else
		ret = outfile_commit(&w->out);
	writer_free(w);
	return ret;
}

void sc_writer_discard(struct sc_writer *w)
{
	if (!w)
		return;
	outfile_discard(&w->out);
	writer_free(w);
}
