/*
 * tl_buf — a thread's timeline items, coded as SC_REC_TIMELINE records
 * carry them (format/scdata.h), kept by the recorder until the data file
 * is written: the sampler's samples as they come, the instrumentation's
 * events as cct_emit converts the runtime's ticks to nanoseconds.
 *
 * Items go into segments of at most TL_SEG_MAX bytes, each one record of
 * the file (its first item coded against the segment's base).  A budget,
 * when given, is the bytes still allowed across every buffer that shares
 * it: an item that does not fit is counted in dropped, not kept.
 * Not thread-safe.  tl_buf_release() frees; a zeroed struct is empty.
 */
#ifndef SC_RECORD_TL_BUF_H
#define SC_RECORD_TL_BUF_H

#include <stddef.h>
#include <stdint.h>

struct sc_writer;

#define TL_SEG_MAX (1u << 20)

struct tl_seg {
	uint64_t base_ns, last_ns;
	uint32_t nitems;
	uint8_t *data;
	size_t len, alloc;
};

struct tl_buf {
	struct tl_seg *segs;
	size_t nsegs, asegs;
	uint64_t items, bytes;
	uint64_t dropped;         /* items the budget kept out */
	uint64_t filtered;        /* calls the record-time filters kept out */
};

/* One item of kind SC_TL_* at time t_ns with its n varint fields (1 or
 * 2).  budget: bytes still allowed (decremented), or NULL for no limit.
 * 0, or -1 if it was dropped. */
int tl_buf_add(struct tl_buf *b, uint64_t *budget, uint64_t t_ns, unsigned kind,
	       uint64_t a, uint64_t c, int n);
/* Its records (none if empty and nothing was dropped); 0 or -errno. */
int tl_buf_write(const struct tl_buf *b, struct sc_writer *w, uint32_t proc_id, uint32_t tid);
void tl_buf_release(struct tl_buf *b);

#endif
