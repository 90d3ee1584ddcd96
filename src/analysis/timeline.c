/*
 * timeline — decode the SC_REC_TIMELINE records a profile kept, name their
 * items and put them in order (timeline.h).
 *
 * Calls are recorded when they end (the runtime knows a call's duration
 * only then), so a thread's items arrive in the order of their ends; here
 * they are sorted by start, an enclosing call first.  A call's function and
 * depth come from its calling-context node (the thread's CCT records):
 * depth is the node's distance from the root, less one.
 */
#include "analysis/timeline.h"
#include "analysis/internal.h"
#include "format/varint.h"
#include "util/util.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "syscalls.h"              /* generated (Makefile) */

/* A node's function and depth (calls at it have depth - 1): timeline.h's
 * struct an_tl_node. */
#define node_info an_tl_node

struct tl_build {
	struct an_profile *p;
	struct an_timeline *tl;
	struct node_info **ninfo;     /* per thread instance, by node id */
	size_t *nninfo;
};

#define DEPTH_UNKNOWN UINT32_MAX

/* (function, depth) of every node of thread instance inst, by node id. */
static const struct node_info *node_infos(struct tl_build *b, uint32_t inst, size_t *n)
{
	struct an_thread *t = &b->p->threads[inst];
	struct node_info *ni;
	uint32_t *walk;
	size_t max = 0, i;

	if (b->ninfo[inst]) {
		*n = b->nninfo[inst];
		return b->ninfo[inst];
	}
	for (i = 0; i < t->nnodes; i++)
		if (t->nodes[i].id >= max)
			max = (size_t)t->nodes[i].id + 1;
	ni = xcalloc(max ? max : 1, sizeof(*ni));
	for (i = 0; i < max; i++)
		ni[i] = (struct node_info){ AN_NONE, DEPTH_UNKNOWN, UINT32_MAX, 0 };
	for (i = 0; i < t->nnodes; i++) {
		const struct sc_rec_cct_node *nd = &t->nodes[i];

		ni[nd->id].parent = nd->parent;
		if (nd->parent == UINT32_MAX) {
			ni[nd->id].depth = 0;
		} else {
			ni[nd->id].func = an_resolve_entry(b->p, nd->proc_id, nd->func);
			ni[nd->id].libcall = an_map_get(&b->p->libcall_map, nd->proc_id, nd->func) != AN_NONE;
		}
	}
	/* depths: up the parents to a known one, then back down; a chain
	 * that breaks or loops (damage) is taken as starting at depth 1 */
	walk = xmalloc((max ? max : 1) * sizeof(*walk));
	for (i = 0; i < max; i++) {
		size_t nw = 0;
		uint32_t id = (uint32_t)i, d;

		while (ni[id].depth == DEPTH_UNKNOWN && nw < max) {
			walk[nw++] = id;
			if (ni[id].parent >= max)
				break;
			id = ni[id].parent;
		}
		d = ni[id].depth == DEPTH_UNKNOWN ? 0 : ni[id].depth;
		while (nw--) {
			if (walk[nw] == id && ni[id].depth != DEPTH_UNKNOWN)
				continue;
			ni[walk[nw]].depth = ++d;
		}
	}
	free(walk);
	*n = max;
	b->ninfo[inst] = ni;
	b->nninfo[inst] = max;
	return ni;
}

/* The functions of a sample's stack, innermost first, into tl->frames. */
static void sample_frames(struct tl_build *b, uint32_t proc_id, uint64_t stack_id,
			  struct an_tl_item *it)
{
	struct an_profile *p = b->p;
	struct an_timeline *tl = b->tl;
	uint32_t si = stack_id > UINT32_MAX ? AN_NONE : an_map_get(&p->stack_map, stack_id, 0);
	size_t alloc = tl->nframes;

	it->stack = (uint32_t)tl->nframes;
	it->nstack = 0;
	it->func = AN_NONE;
	if (si == AN_NONE)
		return;
	for (uint32_t k = 0; k < p->stacks[si].nframes; k++) {
		uint64_t ip = p->ips[p->stacks[si].ip + k];
		struct an_span sp = an_resolve(p, proc_id, k ? ip - 1 : ip, k > 0);

		for (uint32_t j = 0; j < sp.n; j++) {
			ALLOC_GROW(tl->frames, tl->nframes + 1, alloc);
			tl->frames[tl->nframes++] = p->frames[sp.first + j].func;
			it->nstack++;
		}
	}
	if (it->nstack)
		it->func = tl->frames[it->stack];
}

/* An instrumented sample's stack: its node and the nodes above it. */
static void node_frames(struct tl_build *b, const struct node_info *ni, size_t nni, uint64_t node,
			struct an_tl_item *it)
{
	struct an_timeline *tl = b->tl;
	size_t alloc = tl->nframes, steps = 0;

	it->stack = (uint32_t)tl->nframes;
	it->nstack = 0;
	it->func = node < nni ? ni[node].func : AN_NONE;
	while (node < nni && ni[node].func != AN_NONE && steps++ < nni) {
		ALLOC_GROW(tl->frames, tl->nframes + 1, alloc);
		tl->frames[tl->nframes++] = ni[node].func;
		it->nstack++;
		node = ni[node].parent;
	}
}

/*
 * A thread's items are decoded twice: first only their starts (key: start
 * << 1 | 1 if not a call), from which their order is found (dest: where
 * each goes), then whole, each written where it goes.  Two passes over
 * the coded bytes cost less than a second array of items to move them
 * from (on a VM, fresh memory's faults and zeroing were most of a replay).
 */
struct decode_out {
	uint64_t *key;            /* pass 1 */
	size_t n, akey;
	uint32_t *dest;           /* pass 2 */
	size_t adest, k;
	struct an_tl_item *items;
	size_t nitems, alloc;
	uint64_t t0;
	/* pass 0 */
	bool full;                /* the thread is shown (--tid) */
	bool other;               /* it has items other than calls */
	struct an_tl_citem *citems;     /* (n, alloc) */
	struct an_tl_item *wide;
	size_t nwide, awide;
};

/* A tick time of record r in ns (not rounded): one function for every
 * time, monotonic in the tick, so that equal ticks give equal times. */
static double tick_ns(const struct an_tlrec *r, uint64_t tick)
{
	return (double)r->ns0 + ((double)tick - (double)r->tick0) * r->ns_per_tick;
}

/* Decode one record's items: pass 1 their keys, pass 2 the items; pass 0
 * (linked build) the items in the order recorded, their starts absolute,
 * samples' stacks only if o->full. */
static void decode_rec(struct tl_build *b, const struct an_tlrec *r, struct decode_out *o, int pass)
{
	const uint8_t *q = r->data, *end = r->data + r->len;
	const struct node_info *ni = NULL;
	size_t nni = 0;
	uint64_t t = r->base_ns, tick = r->base_tick;
	bool ticks = r->flags & SC_TL_TICKS, noderel = ticks && (r->flags & SC_TL_NODEREL);
	uint64_t prev = UINT64_MAX;       /* SC_TL_NODEREL: the last call's node */
	uint32_t k;

	if (r->inst != AN_NONE && r->inst < b->p->nthreads)
		ni = node_infos(b, r->inst, &nni);
	for (k = 0; k < r->nitems && !(r->nitems == SC_TL_ALL && q == end); k++) {
		uint64_t head, a, c;
		struct an_tl_item it;

		memset(&it, 0, sizeof(it));
		unsigned kind;

		if (sc_varint_get(&q, end, &head) < 0)
			goto damaged;
		if (noderel) {
			if ((head & 3) != SC_TL_N_OTHER) {
				kind = SC_TL_CALL;
				tick += head >> 2;
			} else {
				kind = (head >> 2 & 1) == SC_TL_X_OS ? SC_TL_OS : SC_TL_SAMPLE;
				t += (uint64_t)sc_unzigzag(head >> 3);
			}
		} else {
			kind = (unsigned)(head & 3);
			if (ticks && kind == SC_TL_CALL)
				tick += (uint64_t)sc_unzigzag(head >> 2);
			else
				t += (uint64_t)sc_unzigzag(head >> 2);
		}
		it.func = AN_NONE;
		it.sysno = -1;
		switch (kind) {
		case SC_TL_CALL:
			if (sc_varint_get(&q, end, &a) < 0)
				goto damaged;
			if (!noderel || (head & 3) == SC_TL_N_NODE) {
				if (sc_varint_get(&q, end, &c) < 0)
					goto damaged;
			} else if (prev >= nni) {
				goto damaged;
			} else {
				c = (uint64_t)((head & 3) == SC_TL_N_SAME ? prev : ni[prev].parent) << 2;
			}
			if ((c >> 2) >= nni || ni[c >> 2].func == AN_NONE)
				goto damaged;
			prev = c >> 2;
			if (ticks) {
				double e = tick_ns(r, tick);

				if (e < 0 || a > tick || tick_ns(r, tick - a) < 0)
					goto damaged;
				/* start and end each converted from its tick by one
				 * rounded function, monotonic: a call that starts on
				 * the tick its caller (or the call before it) started
				 * (ended) on never starts before (ends after) it */
				it.start_ns = (uint64_t)(tick_ns(r, tick - a) + 0.5);
				it.dur_ns = (uint64_t)(e + 0.5) - it.start_ns;
			} else {
				if (a > t)
					goto damaged;
				it.start_ns = t - a;
				it.dur_ns = a;
			}
			it.kind = AN_TL_CALL;
			it.func = ni[c >> 2].func;
			it.depth = ni[c >> 2].depth - 1;
			if (c & SC_TL_F_OPEN)
				it.flags |= AN_TL_OPEN;
			if (c & SC_TL_F_REPAIRED)
				it.flags |= AN_TL_REPAIRED;
			if (ni[c >> 2].libcall)
				it.flags |= AN_TL_LIBCALL;
			break;
		case SC_TL_OS:
			if (sc_varint_get(&q, end, &a) < 0 || sc_varint_get(&q, end, &c) < 0)
				goto damaged;
			if ((c & 3) >= SC_OS_NCAT)
				goto damaged;
			it.kind = AN_TL_OS;
			it.start_ns = t;
			it.dur_ns = a;
			it.os_cat = (uint32_t)(c & 3);
			it.sysno = (int32_t)((int64_t)(c >> 2) - 1);
			break;
		case SC_TL_SAMPLE:
			if (sc_varint_get(&q, end, &a) < 0)
				goto damaged;
			it.kind = AN_TL_SAMPLE;
			it.start_ns = t;
			if (pass == 1 || (pass == 0 && !o->full))
				break;
			if (ni)
				node_frames(b, ni, nni, a, &it);
			else
				sample_frames(b, r->proc_id, a, &it);
			break;
		default:
			goto damaged;
		}
		if (pass == 0) {
			struct an_tl_citem ci = { it.start_ns, 0, AN_TL_C_WIDE };

			if (it.kind == AN_TL_CALL && it.dur_ns <= UINT32_MAX && (c >> 2) <= AN_TL_C_NODE_MAX) {
				ci.dur = (uint32_t)it.dur_ns;
				ci.ref = (uint32_t)(c >> 2) << 4 | (c & SC_TL_F_OPEN ? AN_TL_C_OPEN : 0) |
					 (c & SC_TL_F_REPAIRED ? AN_TL_C_REPAIRED : 0);
			} else {
				ALLOC_GROW(o->wide, o->nwide + 1, o->awide);
				ci.dur = (uint32_t)o->nwide;
				o->wide[o->nwide++] = it;
				o->other |= it.kind != AN_TL_CALL;
			}
			if (o->n == o->alloc)
				big_grow((void **)&o->citems, &o->alloc, o->n + 1, sizeof(*o->citems));
			o->citems[o->n++] = ci;
		} else if (pass == 1) {
			if (o->n == o->akey)
				big_grow((void **)&o->key, &o->akey, o->n + 1, sizeof(*o->key));
			o->key[o->n++] = it.start_ns << 1 | (it.kind != AN_TL_CALL);
		} else {
			it.start_ns -= o->t0;
			o->items[o->dest[o->k++]] = it;
		}
	}
	return;
damaged:
	if (pass == 2 || (pass == 0 && o->full))
		b->tl->damaged_items += r->nitems == SC_TL_ALL ? 1 : r->nitems - k;
}

/*
 * Items by start; at one start, calls before the rest, outer calls first.
 *
 * Calls arrive in the order of their ends (post-order): each call's
 * subtree, in start order, is made when it arrives from the subtrees
 * before it that start at or after it (its callees, the latest on top of
 * a stack), in linear time and without keys; a replay of millions of
 * calls spends no time in a comparison sort.  The other items (OS events,
 * samples) come in time order within their kind (checked: sorted if not)
 * and are merged in, after the calls that start with them.
 */
/* Fault in [p, p + len) at once: on a VM, a fault per page costs more
 * than what is then written there. */
static void populate(void *p, size_t len)
{
#ifdef MADV_POPULATE_WRITE
	madvise(p, len, MADV_POPULATE_WRITE);
#else
	(void)p;
	(void)len;
#endif
}

struct sub {
	uint32_t head, tail;      /* the subtree's items, linked by next[] */
	uint64_t start;
};

/* The calls put in start order as they come (each after its callees:
 * a call is kept when it returns), linked by next[]. */
struct subs {
	struct sub *st;
	size_t nst, ast;
	uint32_t *next;
};

/* Call i, starting at start: the subtrees that start within it are its
 * callees, and their lists follow it in the order they were made. */
static void subs_call(struct subs *s, uint32_t i, uint64_t start)
{
	struct sub c = { i, i, start };
	size_t k;

	s->next[i] = UINT32_MAX;
	if (s->nst && s->st[s->nst - 1].start >= start) {
		k = s->nst;
		while (k && s->st[k - 1].start >= start)
			k--;
		s->next[c.head] = s->st[k].head;
		for (size_t j = k; j + 1 < s->nst; j++)
			s->next[s->st[j].tail] = s->st[j + 1].head;
		c.tail = s->st[s->nst - 1].tail;
		s->nst = k;
	}
	ALLOC_GROW(s->st, s->nst + 1, s->ast);
	s->st[s->nst++] = c;
}

/* The outermost subtrees joined: the first call in start order (or
 * UINT32_MAX); the stack freed. */
static uint32_t subs_first(struct subs *s)
{
	uint32_t first = UINT32_MAX, last = UINT32_MAX;

	for (size_t i = 0; i < s->nst; i++) {
		if (last == UINT32_MAX)
			first = s->st[i].head;
		else
			s->next[last] = s->st[i].head;
		last = s->st[i].tail;
	}
	free(s->st);
	s->st = NULL;
	s->nst = s->ast = 0;
	return first;
}

/* An item that is not a call: its start and where it is. */
struct other {
	uint64_t start;
	uint32_t idx;
};

static int other_cmp(const void *x, const void *y)
{
	const struct other *a = x, *b = y;

	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	return a->idx < b->idx ? -1 : a->idx > b->idx;
}

static void order_items(struct decode_out *o)
{
	const uint64_t *key = o->key;
	size_t n = o->n, nother = 0, aother = 0, i, k;
	uint32_t *next = NULL, *dest, first;
	struct other *other = NULL;
	struct subs subs = { 0 };
	bool sorted = true;

	big_grow((void **)&next, &o->adest, n, sizeof(*next));
	populate(next, n * sizeof(*next));
	subs.next = next;
	for (i = 0; i < n; i++) {

		if (key[i] & 1) {
			ALLOC_GROW(other, nother + 1, aother);
			other[nother] = (struct other){ key[i] >> 1, (uint32_t)i };
			sorted &= !nother || other[nother - 1].start <= other[nother].start;
			nother++;
			continue;
		}
		subs_call(&subs, (uint32_t)i, key[i] >> 1);
	}
	first = subs_first(&subs);
	if (!sorted)
		qsort(other, nother, sizeof(*other), other_cmp);
	/* where each item goes: the calls' list merged with the rest */
	dest = next;               /* next[x] is read before dest[x] is set */
	for (i = 0, k = 0; i < n; i++) {
		if (first != UINT32_MAX && (k == nother || key[first] >> 1 <= other[k].start)) {
			uint32_t x = first;

			first = next[x];
			dest[x] = (uint32_t)i;
		} else {
			dest[other[k++].idx] = (uint32_t)i;
		}
	}
	free(other);
	o->dest = dest;
}

static int thread_cmp(const void *x, const void *y)
{
	const struct an_tl_thread *a = x, *b = y;
	uint64_t sa = a->nitems ? a->items[0].start_ns : UINT64_MAX;
	uint64_t sb = b->nitems ? b->items[0].start_ns : UINT64_MAX;

	if (a->proc_id != b->proc_id)
		return a->proc_id < b->proc_id ? -1 : 1;
	if (sa != sb)
		return sa < sb ? -1 : 1;
	return a->tid < b->tid ? -1 : a->tid > b->tid;
}

static bool dec_has_other(const struct an_tl_item *it, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (it[i].kind != AN_TL_CALL)
			return true;
	return false;
}

/* OS events' and samples' depths: inside the innermost call around them. */
static void set_depths(struct an_tl_item *it, size_t n)
{
	struct { uint64_t end; uint32_t depth; } *st = NULL;
	size_t nst = 0, ast = 0;

	for (size_t i = 0; i < n; i++) {
		/* a call ending exactly when the item starts is over (an OS
		 * event starting at a call's end belongs to its caller) */
		while (nst && st[nst - 1].end <= it[i].start_ns)
			nst--;
		if (it[i].kind == AN_TL_CALL) {
			ALLOC_GROW(st, nst + 1, ast);
			st[nst].end = it[i].start_ns + it[i].dur_ns;
			st[nst++].depth = it[i].depth;
		} else {
			it[i].depth = nst ? st[nst - 1].depth + 1 : 0;
		}
	}
	free(st);
}

static bool keep(const struct an_tl_item *it, const struct an_tl_filter *f)
{
	if (it->start_ns + it->dur_ns < f->since_ns || it->start_ns > f->until_ns)
		return false;
	if (it->kind != AN_TL_SAMPLE && it->dur_ns < f->min_ns)
		return false;
	if (f->max_depth && (it->kind == AN_TL_CALL ? it->depth >= f->max_depth : it->depth > f->max_depth))
		return false;
	return true;
}

int an_timeline_build(struct an_profile *p, const struct an_tl_filter *f,
		      struct an_timeline **out, char *err, size_t errlen)
{
	struct an_tl_filter all = AN_TL_FILTER_ALL;
	struct an_timeline *tl;
	struct tl_build b;
	struct decode_out *dec = NULL;
	struct an_map tmap = { 0 };
	size_t nthr = 0, athr = 0, adec = 0, i, j;
	uint64_t t0 = UINT64_MAX;

	*out = NULL;
	if (!f)
		f = &all;
	if (!p->ntlrecs) {
		snprintf(err, errlen, "the recording has no timeline: record again with --timeline");
		return -ENOENT;
	}
	tl = xcalloc(1, sizeof(*tl));
	tl->profile = p;
	tl->method = an_profile_method(p);
	b.p = p;
	b.tl = tl;
	b.ninfo = xcalloc(p->nthreads + 1, sizeof(*b.ninfo));
	b.nninfo = xcalloc(p->nthreads + 1, sizeof(*b.nninfo));
	/* pass 1: the threads, their items' starts and kinds */
	for (i = 0; i < p->ntlrecs; i++) {
		const struct an_tlrec *r = &p->tlrecs[i];
		bool found;
		uint32_t k = an_map_put(&tmap, (uint64_t)r->proc_id << 32 | r->tid, r->inst,
					(uint32_t)nthr, &found);

		if (!found) {
			ALLOC_GROW(tl->threads, nthr + 1, athr);
			ALLOC_GROW(dec, nthr + 1, adec);
			memset(&tl->threads[nthr], 0, sizeof(tl->threads[nthr]));
			memset(&dec[nthr], 0, sizeof(dec[nthr]));
			tl->threads[nthr].proc_id = r->proc_id;
			tl->threads[nthr].tid = r->tid;
			tl->threads[nthr].pid = an_proc_pid(p, r->proc_id);
			tl->threads[nthr].name = an_thread_name(p, r->proc_id, r->tid);
			tl->threads[nthr].exe = an_proc_exe(p, r->proc_id);
			nthr++;
		}
		decode_rec(&b, r, &dec[k], 1);
		/* the counts are cumulative: the last record's is the total */
		tl->threads[k].dropped = r->dropped;
		tl->threads[k].filtered = r->filtered;
	}
	for (i = 0; i < nthr; i++)
		for (j = 0; j < dec[i].n; j++)
			if (dec[i].key[j] >> 1 < t0)
				t0 = dec[i].key[j] >> 1;
	tl->t0_ns = t0 == UINT64_MAX ? 0 : t0;
	/* the order, then pass 2: each item where it goes */
	for (i = 0; i < nthr; i++) {
		struct decode_out *o = &dec[i];

		if (f->tid && tl->threads[i].tid != f->tid)
			continue;
		order_items(o);
		big_free(o->key, o->akey, sizeof(*o->key));
		o->key = NULL;
		if (o->n) {
			big_grow((void **)&o->items, &o->alloc, o->n, sizeof(*o->items));
			populate(o->items, o->n * sizeof(*o->items));
		}
		o->t0 = tl->t0_ns;
	}
	for (i = 0; i < p->ntlrecs; i++) {
		const struct an_tlrec *r = &p->tlrecs[i];
		uint32_t k = an_map_get(&tmap, (uint64_t)r->proc_id << 32 | r->tid, r->inst);

		if (k != AN_NONE && dec[k].dest)
			decode_rec(&b, r, &dec[k], 2);
	}
	for (i = 0; i < nthr; i++) {
		struct an_tl_thread *th = &tl->threads[i];
		struct an_tl_item *it = dec[i].items;
		size_t n = dec[i].dest ? dec[i].n : 0, m = 0;

		tl->dropped += th->dropped;
		tl->filtered += th->filtered;
		if (dec[i].dest)
			big_free(dec[i].dest, dec[i].adest, sizeof(*dec[i].dest));
		big_free(dec[i].key, dec[i].akey, sizeof(*dec[i].key));
		if (dec_has_other(it, n))
			set_depths(it, n);
		if (f->since_ns || f->until_ns != UINT64_MAX || f->min_ns || f->max_depth) {
			for (j = 0; j < n; j++) {
				if (!keep(&it[j], f))
					continue;
				if (m != j)
					it[m] = it[j];
				m++;
			}
		} else {
			m = n;
		}
		th->items = it;
		th->items_alloc = dec[i].alloc;
		th->nitems = m;
		for (j = 0; j < m; j++) {
			th->calls += it[j].kind == AN_TL_CALL;
			if (it[j].start_ns + it[j].dur_ns > tl->end_ns)
				tl->end_ns = it[j].start_ns + it[j].dur_ns;
		}
		tl->items += m;
	}
	if (nthr)
		qsort(tl->threads, nthr, sizeof(*tl->threads), thread_cmp);
	tl->nthreads = nthr;
	for (i = 0; i < p->nthreads + 1; i++)
		free(b.ninfo[i]);
	free(b.ninfo);
	free(b.nninfo);
	free(dec);
	an_map_release(&tmap);
	*out = tl;
	return 0;
}

/* ---- the linked build (replay) ------------------------------------------- */

/*
 * A thread's items, decoded in the order recorded, in start order
 * (order_items' order: the same subtrees, the other items merged in after
 * the calls that start with them): ord[k] is the k-th item.  next[] (n
 * entries) is scratch space: the calls linked in order.  ord[] is read in
 * sequence and the items it names can be fetched ahead of their use (a
 * linked list cannot: each item's address waits on the one before).
 */
static void order_linked(const struct an_tl_thread *th, size_t n, uint32_t *next, uint32_t *ord)
{
	size_t nother = 0, aother = 0, i, k;
	uint32_t first;
	struct other *other = NULL;
	struct subs subs = { .next = next };
	bool sorted = true;
	const struct an_tl_citem *it = th->citems;

	for (i = 0; i < n; i++) {

		if ((it[i].ref & AN_TL_C_WIDE) && th->wide[it[i].dur].kind != AN_TL_CALL) {
			ALLOC_GROW(other, nother + 1, aother);
			other[nother] = (struct other){ it[i].start_ns, (uint32_t)i };
			sorted &= !nother || other[nother - 1].start <= other[nother].start;
			nother++;
			continue;
		}
		subs_call(&subs, (uint32_t)i, it[i].start_ns);
	}
	first = subs_first(&subs);
	if (!sorted)
		qsort(other, nother, sizeof(*other), other_cmp);
	/* the calls' list merged with the rest, in order into ord[] */
	for (i = 0, k = 0; i < n; i++) {
		if (first != UINT32_MAX && (k == nother || it[first].start_ns <= other[k].start)) {
			ord[i] = first;
			first = next[first];
		} else {
			ord[i] = other[k++].idx;
		}
	}
	free(other);
}

/*
 * A thread's view-time work, in order: OS events' and samples' depths
 * (set_depths), the filters (items left out are dropped from ord[]), the
 * counts.  Starts stay absolute (an_timeline_build_linked).
 */
static void linked_finish(struct an_timeline *tl, struct an_tl_thread *th, const struct an_tl_filter *f,
			  bool other)
{
	struct { uint64_t end; uint32_t depth; } *st = NULL;
	size_t nst = 0, ast = 0, m = 0, n = th->nitems;
	bool filter = f->since_ns || f->until_ns != UINT64_MAX || f->min_ns || f->max_depth;
	uint32_t *ord = th->order;
	uint64_t t0 = tl->t0_ns;

	for (size_t k = 0; k < n; k++) {
		const struct an_tl_citem *c = &th->citems[ord[k]];
		struct an_tl_item it;

		if (k + 16 < n)
			__builtin_prefetch(&th->citems[ord[k + 16]]);
		an_tl_citem_get(th, c, &it);
		if (other) {
			while (nst && st[nst - 1].end <= it.start_ns)
				nst--;
			if (it.kind == AN_TL_CALL) {
				ALLOC_GROW(st, nst + 1, ast);
				st[nst].end = it.start_ns + it.dur_ns;
				st[nst++].depth = it.depth;
			} else {
				it.depth = nst ? st[nst - 1].depth + 1 : 0;
				th->wide[c->dur].depth = it.depth;
			}
		}
		it.start_ns -= t0;
		if (filter && !keep(&it, f))
			continue;
		ord[m++] = ord[k];
		th->calls += it.kind == AN_TL_CALL;
		if (it.start_ns + it.dur_ns > tl->end_ns)
			tl->end_ns = it.start_ns + it.dur_ns;
	}
	free(st);
	th->nitems = m;
}

static int thread_cmp_linked(const void *x, const void *y)
{
	const struct an_tl_thread *a = x, *b = y;
	uint64_t sa = a->nitems ? a->citems[a->order[0]].start_ns : UINT64_MAX;
	uint64_t sb = b->nitems ? b->citems[b->order[0]].start_ns : UINT64_MAX;

	if (a->proc_id != b->proc_id)
		return a->proc_id < b->proc_id ? -1 : 1;
	if (sa != sb)
		return sa < sb ? -1 : 1;
	return a->tid < b->tid ? -1 : a->tid > b->tid;
}

int an_timeline_build_linked(struct an_profile *p, const struct an_tl_filter *f,
			     struct an_timeline **out, char *err, size_t errlen)
{
	struct an_tl_filter all = AN_TL_FILTER_ALL;
	struct an_timeline *tl;
	struct tl_build b;
	struct decode_out *dec = NULL;
	struct an_map tmap = { 0 };
	size_t nthr = 0, athr = 0, adec = 0, anext = 0, i, j;
	uint64_t t0 = UINT64_MAX;
	uint32_t *next = NULL, *r_inst = NULL;
	size_t ar_inst = 0;
	bool filter;

	*out = NULL;
	if (!f)
		f = &all;
	if (!p->ntlrecs) {
		snprintf(err, errlen, "the recording has no timeline: record again with --timeline");
		return -ENOENT;
	}
	tl = xcalloc(1, sizeof(*tl));
	tl->profile = p;
	tl->method = an_profile_method(p);
	tl->linked = true;
	b.p = p;
	b.tl = tl;
	b.ninfo = xcalloc(p->nthreads + 1, sizeof(*b.ninfo));
	b.nninfo = xcalloc(p->nthreads + 1, sizeof(*b.nninfo));
	/* one pass: the threads, their items in the order recorded */
	for (i = 0; i < p->ntlrecs; i++) {
		const struct an_tlrec *r = &p->tlrecs[i];
		bool found;
		uint32_t k = an_map_put(&tmap, (uint64_t)r->proc_id << 32 | r->tid, r->inst,
					(uint32_t)nthr, &found);

		if (!found) {
			ALLOC_GROW(tl->threads, nthr + 1, athr);
			ALLOC_GROW(dec, nthr + 1, adec);
			memset(&tl->threads[nthr], 0, sizeof(tl->threads[nthr]));
			memset(&dec[nthr], 0, sizeof(dec[nthr]));
			tl->threads[nthr].proc_id = r->proc_id;
			tl->threads[nthr].tid = r->tid;
			tl->threads[nthr].pid = an_proc_pid(p, r->proc_id);
			tl->threads[nthr].name = an_thread_name(p, r->proc_id, r->tid);
			tl->threads[nthr].exe = an_proc_exe(p, r->proc_id);
			dec[nthr].full = !f->tid || r->tid == f->tid;
			ALLOC_GROW(r_inst, nthr + 1, ar_inst);
			r_inst[nthr] = r->inst;
			nthr++;
		}
		decode_rec(&b, r, &dec[k], 0);
		tl->threads[k].dropped = r->dropped;
		tl->threads[k].filtered = r->filtered;
	}
	for (i = 0; i < nthr; i++)
		for (j = 0; j < dec[i].n; j++)
			if (dec[i].citems[j].start_ns < t0)
				t0 = dec[i].citems[j].start_ns;
	tl->t0_ns = t0 == UINT64_MAX ? 0 : t0;
	filter = f->since_ns || f->until_ns != UINT64_MAX || f->min_ns || f->max_depth;
	for (i = 0; i < nthr; i++) {
		struct an_tl_thread *th = &tl->threads[i];
		struct decode_out *o = &dec[i];

		tl->dropped += th->dropped;
		tl->filtered += th->filtered;
		th->citems = o->citems;
		th->citems_alloc = o->alloc;
		th->wide = o->wide;
		th->wide_alloc = o->awide;
		if (r_inst[i] != AN_NONE && r_inst[i] < p->nthreads) {
			th->nodes = b.ninfo[r_inst[i]];
			b.ninfo[r_inst[i]] = NULL;
		}
		if (!o->full || !o->n)
			continue;
		big_grow((void **)&next, &anext, o->n, sizeof(*next));
		big_grow((void **)&th->order, &th->order_alloc, o->n, sizeof(*th->order));
		order_linked(th, o->n, next, th->order);
		th->nitems = o->n;
		if (o->other || filter) {
			linked_finish(tl, th, f, o->other);
		} else {
			/* nothing moves: the counts in the order recorded */
			for (j = 0; j < o->n; j++) {
				struct an_tl_item it;

				an_tl_citem_get(th, &o->citems[j], &it);
				th->calls += it.kind == AN_TL_CALL;
				if (it.start_ns - tl->t0_ns + it.dur_ns > tl->end_ns)
					tl->end_ns = it.start_ns - tl->t0_ns + it.dur_ns;
			}
		}
		tl->items += th->nitems;
	}
	big_free(next, anext, sizeof(*next));
	free(r_inst);
	if (nthr)
		qsort(tl->threads, nthr, sizeof(*tl->threads), thread_cmp_linked);
	tl->nthreads = nthr;
	for (i = 0; i < p->nthreads + 1; i++)
		free(b.ninfo[i]);
	free(b.ninfo);
	free(b.nninfo);
	free(dec);
	an_map_release(&tmap);
	*out = tl;
	return 0;
}

void an_timeline_free(struct an_timeline *tl)
{
	if (!tl)
		return;
	for (size_t i = 0; i < tl->nthreads; i++) {
		big_free(tl->threads[i].items, tl->threads[i].items_alloc, sizeof(*tl->threads[i].items));
		big_free(tl->threads[i].order, tl->threads[i].order_alloc, sizeof(*tl->threads[i].order));
		big_free(tl->threads[i].citems, tl->threads[i].citems_alloc, sizeof(*tl->threads[i].citems));
		free(tl->threads[i].wide);
		free(tl->threads[i].nodes);
	}
	free(tl->threads);
	free(tl->frames);
	free(tl);
}

const char *an_tl_name(const struct an_timeline *tl, uint32_t func)
{
	const struct an_profile *p = tl->profile;

	return func < p->nfuncs ? an_str(&p->strs, p->funcs[func].name) : NULL;
}

const char *an_tl_module(const struct an_timeline *tl, uint32_t func)
{
	const struct an_profile *p = tl->profile;

	return func < p->nfuncs ? an_str(&p->strs, p->funcs[func].module) : NULL;
}

const char *an_tl_syscall_name(int32_t sysno)
{
	return sysno >= 0 && (size_t)sysno < sizeof(sc_syscall_names) / sizeof(*sc_syscall_names)
		? sc_syscall_names[sysno] : NULL;
}

int an_timeline_check(const struct an_timeline *tl, char *why, size_t whylen)
{
	const struct an_profile *p = tl->profile;
	uint64_t *ends = NULL;
	size_t aends = 0;
	int ret = 0;

	for (size_t i = 0; i < tl->nthreads && !ret; i++) {
		const struct an_tl_thread *th = &tl->threads[i];
		size_t nends = 0;

		for (size_t j = 0; j < th->nitems; j++) {
			const struct an_tl_item *it = &th->items[j];
			uint64_t end = it->start_ns + it->dur_ns;

			if (j && it->start_ns < th->items[j - 1].start_ns) {
				snprintf(why, whylen, "thread %u: item %zu starts before the one before it",
					 th->tid, j);
				ret = -EINVAL;
				break;
			}
			if ((it->kind == AN_TL_CALL && it->func >= p->nfuncs) ||
			    (it->kind == AN_TL_SAMPLE && (size_t)it->stack + it->nstack > tl->nframes)) {
				snprintf(why, whylen, "thread %u: item %zu has no valid function", th->tid, j);
				ret = -EINVAL;
				break;
			}
			if (end > tl->end_ns) {
				snprintf(why, whylen, "thread %u: item %zu ends after the timeline", th->tid, j);
				ret = -EINVAL;
				break;
			}
			if (it->kind != AN_TL_CALL)
				continue;
			while (nends && ends[nends - 1] <= it->start_ns)
				nends--;
			if (nends && end > ends[nends - 1]) {
				snprintf(why, whylen, "thread %u: call %zu (%s) overlaps the call around it",
					 th->tid, j, an_tl_name(tl, it->func));
				ret = -EINVAL;
				break;
			}
			ALLOC_GROW(ends, nends + 1, aends);
			ends[nends++] = end;
		}
	}
	free(ends);
	return ret;
}
