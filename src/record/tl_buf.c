/*
 * tl_buf — timeline items kept by the recorder until written (tl_buf.h).
 */
#include "record/tl_buf.h"
#include "format/scdata.h"
#include "format/varint.h"
#include "util/util.h"

#include <stdlib.h>
#include <string.h>

int tl_buf_add(struct tl_buf *b, uint64_t *budget, uint64_t t_ns, unsigned kind,
	       uint64_t a, uint64_t c, int n)
{
	uint8_t tmp[3 * SC_VARINT_MAX], *q = tmp;
	struct tl_seg *s = b->nsegs ? &b->segs[b->nsegs - 1] : NULL;
	size_t len;

	if (!s || s->len > TL_SEG_MAX - sizeof(tmp)) {
		ALLOC_GROW(b->segs, b->nsegs + 1, b->asegs);
		s = &b->segs[b->nsegs++];
		memset(s, 0, sizeof(*s));
		s->base_ns = s->last_ns = t_ns;
	}
	q = sc_varint_put(q, sc_zigzag((int64_t)(t_ns - s->last_ns)) << 2 | (kind & 3));
	q = sc_varint_put(q, a);
	if (n > 1)
		q = sc_varint_put(q, c);
	len = (size_t)(q - tmp);
	if (budget) {
		if (*budget < len) {
			b->dropped++;
			return -1;
		}
		*budget -= len;
	}
	ALLOC_GROW(s->data, s->len + len, s->alloc);
	memcpy(s->data + s->len, tmp, len);
	s->len += len;
	s->nitems++;
	s->last_ns = t_ns;
	b->items++;
	b->bytes += len;
	return 0;
}

int tl_buf_write(const struct tl_buf *b, struct sc_writer *w, uint32_t proc_id, uint32_t tid)
{
	struct sc_rec_timeline r = { .proc_id = proc_id, .tid = tid,
				     .dropped = b->dropped, .filtered = b->filtered };
	int ret = 0;

	if (!b->nsegs && (b->dropped || b->filtered))
		return sc_writer_add(w, SC_REC_TIMELINE, &r, sizeof(r));
	for (size_t i = 0; i < b->nsegs && !ret; i++) {
		r.base_ns = b->segs[i].base_ns;
		r.nitems = b->segs[i].nitems;
		ret = sc_writer_add2(w, SC_REC_TIMELINE, &r, sizeof(r), b->segs[i].data, b->segs[i].len);
	}
	return ret;
}

void tl_buf_release(struct tl_buf *b)
{
	for (size_t i = 0; i < b->nsegs; i++)
		free(b->segs[i].data);
	free(b->segs);
	memset(b, 0, sizeof(*b));
}
