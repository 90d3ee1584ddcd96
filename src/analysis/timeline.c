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
#include <unistd.h>

#include "syscalls.h"              /* generated (Makefile) */

/* A calling-context node: its function, its distance from the root
 * (calls at it are depth - 1 deep), its parent, whether it is a library
 * call's. */
struct node_info {
	uint32_t func, depth, parent;
	uint32_t libcall;
};

struct tl_build {
	struct an_profile *p;
	struct an_timeline *tl;
	struct node_info **ninfo;     /* per thread instance, by node id */
	size_t *nninfo;
	uint8_t *buf;                 /* a record's bytes read from the file */
	size_t abuf;
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
};

/* A tick time of record r in ns (not rounded): one function for every
 * time, monotonic in the tick, so that equal ticks give equal times. */
static double tick_ns(const struct an_tlrec *r, uint64_t tick)
{
	return (double)r->ns0 + ((double)tick - (double)r->tick0) * r->ns_per_tick;
}

/* Where a decoder is in one record's coded items, and what the coding
 * carries from one item to the next. */
struct tl_dstate {
	const uint8_t *q, *end;
	uint32_t k;               /* items decoded */
	uint64_t t, tick;
	uint64_t prev;            /* SC_TL_NODEREL: the last call's node */
};

static void dstate_init(struct tl_dstate *d, const struct an_tlrec *r, const uint8_t *data)
{
	d->q = data;
	d->end = data + r->len;
	d->k = 0;
	d->t = r->base_ns;
	d->tick = r->base_tick;
	d->prev = UINT64_MAX;
}

static bool dstate_more(const struct an_tlrec *r, const struct tl_dstate *d)
{
	return d->k < r->nitems && !(r->nitems == SC_TL_ALL && d->q == d->end);
}

/* The items a damaged record loses from where d stopped. */
static uint64_t dstate_lost(const struct an_tlrec *r, const struct tl_dstate *d)
{
	return r->nitems == SC_TL_ALL ? 1 : r->nitems - d->k;
}

/*
 * The next item of record r: 0, or -1 if it does not decode (the record's
 * items end there).  A sample's stack is left out (func AN_NONE, no
 * frames): its coded id in *stack_id.
 */
static int item_get(const struct an_tlrec *r, struct tl_dstate *d, const struct node_info *ni,
		    size_t nni, struct an_tl_item *it, uint64_t *stack_id)
{
	bool ticks = r->flags & SC_TL_TICKS, noderel = ticks && (r->flags & SC_TL_NODEREL);
	uint64_t head, a, c;
	unsigned kind;

	memset(it, 0, sizeof(*it));
	if (sc_varint_get(&d->q, d->end, &head) < 0)
		return -1;
	if (noderel) {
		if ((head & 3) != SC_TL_N_OTHER) {
			kind = SC_TL_CALL;
			d->tick += head >> 2;
		} else {
			kind = (head >> 2 & 1) == SC_TL_X_OS ? SC_TL_OS : SC_TL_SAMPLE;
			d->t += (uint64_t)sc_unzigzag(head >> 3);
		}
	} else {
		kind = (unsigned)(head & 3);
		if (ticks && kind == SC_TL_CALL)
			d->tick += (uint64_t)sc_unzigzag(head >> 2);
		else
			d->t += (uint64_t)sc_unzigzag(head >> 2);
	}
	it->func = AN_NONE;
	it->sysno = -1;
	switch (kind) {
	case SC_TL_CALL:
		if (sc_varint_get(&d->q, d->end, &a) < 0)
			return -1;
		if (!noderel || (head & 3) == SC_TL_N_NODE) {
			if (sc_varint_get(&d->q, d->end, &c) < 0)
				return -1;
		} else if (d->prev >= nni) {
			return -1;
		} else {
			c = (uint64_t)((head & 3) == SC_TL_N_SAME ? d->prev : ni[d->prev].parent) << 2;
		}
		if ((c >> 2) >= nni || ni[c >> 2].func == AN_NONE)
			return -1;
		d->prev = c >> 2;
		if (ticks) {
			double e = tick_ns(r, d->tick);

			if (e < 0 || a > d->tick || tick_ns(r, d->tick - a) < 0)
				return -1;
			/* start and end each converted from its tick by one
			 * rounded function, monotonic: a call that starts on
			 * the tick its caller (or the call before it) started
			 * (ended) on never starts before (ends after) it */
			it->start_ns = (uint64_t)(tick_ns(r, d->tick - a) + 0.5);
			it->dur_ns = (uint64_t)(e + 0.5) - it->start_ns;
		} else {
			if (a > d->t)
				return -1;
			it->start_ns = d->t - a;
			it->dur_ns = a;
		}
		it->kind = AN_TL_CALL;
		it->func = ni[c >> 2].func;
		it->depth = ni[c >> 2].depth - 1;
		if (c & SC_TL_F_OPEN)
			it->flags |= AN_TL_OPEN;
		if (c & SC_TL_F_REPAIRED)
			it->flags |= AN_TL_REPAIRED;
		if (ni[c >> 2].libcall)
			it->flags |= AN_TL_LIBCALL;
		break;
	case SC_TL_OS:
		if (sc_varint_get(&d->q, d->end, &a) < 0 || sc_varint_get(&d->q, d->end, &c) < 0)
			return -1;
		if ((c & 3) >= SC_OS_NCAT)
			return -1;
		it->kind = AN_TL_OS;
		it->start_ns = d->t;
		it->dur_ns = a;
		it->os_cat = (uint32_t)(c & 3);
		it->sysno = (int32_t)((int64_t)(c >> 2) - 1);
		break;
	case SC_TL_SAMPLE:
		if (sc_varint_get(&d->q, d->end, &a) < 0)
			return -1;
		it->kind = AN_TL_SAMPLE;
		it->start_ns = d->t;
		*stack_id = a;
		break;
	default:
		return -1;
	}
	d->k++;
	return 0;
}

/* A sample's frames into tl->frames: by its node (instrumentation) or
 * its stack record (sampling). */
static void item_frames(struct tl_build *b, const struct an_tlrec *r, const struct node_info *ni,
			size_t nni, uint64_t stack_id, struct an_tl_item *it)
{
	if (ni)
		node_frames(b, ni, nni, stack_id, it);
	else
		sample_frames(b, r->proc_id, stack_id, it);
}

/* The bytes of record r: in memory, or read from the data file into
 * *buf.  NULL if they cannot be read (then the record is damage). */
static const uint8_t *rec_bytes(const struct an_profile *p, const struct an_tlrec *r,
				uint8_t **buf, size_t *alloc)
{
	size_t got = 0;

	if (r->data || !r->len)
		return r->data ? r->data : (const uint8_t *)"";
	if (p->tl_fd < 0)
		return NULL;
	if (*alloc < r->len) {
		free(*buf);
		*alloc = r->len;
		*buf = xmalloc(*alloc);
	}
	while (got < r->len) {
		ssize_t n = pread(p->tl_fd, *buf + got, r->len - got, r->off + (off_t)got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return NULL;
		got += (size_t)n;
	}
	return *buf;
}

/* Decode one record's items: pass 1 their keys, pass 2 the items, each
 * where it goes. */
static void decode_rec(struct tl_build *b, const struct an_tlrec *r, struct decode_out *o, int pass)
{
	const struct node_info *ni = NULL;
	const uint8_t *data = rec_bytes(b->p, r, &b->buf, &b->abuf);
	struct tl_dstate d;
	size_t nni = 0;

	if (r->inst != AN_NONE && r->inst < b->p->nthreads)
		ni = node_infos(b, r->inst, &nni);
	if (!data) {
		if (pass == 2)
			b->tl->damaged_items += r->nitems == SC_TL_ALL ? 1 : r->nitems;
		return;
	}
	dstate_init(&d, r, data);
	while (dstate_more(r, &d)) {
		struct an_tl_item it;
		uint64_t stack_id = 0;

		if (item_get(r, &d, ni, nni, &it, &stack_id) < 0) {
			if (pass == 2)
				b->tl->damaged_items += dstate_lost(r, &d);
			return;
		}
		if (pass == 1) {
			if (o->n == o->akey)
				big_grow((void **)&o->key, &o->akey, o->n + 1, sizeof(*o->key));
			o->key[o->n++] = it.start_ns << 1 | (it.kind != AN_TL_CALL);
		} else {
			if (it.kind == AN_TL_SAMPLE)
				item_frames(b, r, ni, nni, stack_id, &it);
			it.start_ns -= o->t0;
			o->items[o->dest[o->k++]] = it;
		}
	}
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
	if (s->nst == s->ast)
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
	memset(&b, 0, sizeof(b));
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
	free(b.buf);
	free(dec);
	an_map_release(&tmap);
	*out = tl;
	return 0;
}

/* ---- the stream (replay, export --format chrome) -------------------------- */

/*
 * The same items, in the same order, with memory bounded whatever the
 * timeline's length: nothing is kept per item.
 *
 * Calls arrive in post-order (as they end) and go out in pre-order (by
 * start, an enclosing call first), the order subs_call makes: a call's
 * subtree is the contiguous run of calls [lo, itself] it adopts.  Numbered
 * by arrival, the calls are cut into windows of W; the output is the calls
 * sorted by (lo, arrival descending), so the calls whose lo falls in
 * window k go out together, after those of windows before it.  These are
 * the calls of window k that do not straddle its start, and the few after
 * it that straddle its end but not its start (their subtree starts in the
 * window: the calls open across its end, one per depth).  A first pass
 * (stream_index) finds, for every boundary, the calls that straddle it,
 * with subs_call's stack kept as one entry per window (the latest start
 * of the calls whose lo falls there: enough to tell in which window a
 * call's first adopted call lies), and notes where the decoder stands at
 * each boundary.  Then window k is decoded from its checkpoint, and
 * subs_call run over its calls and its straddlers of the end (a straddler
 * of the start adopts whatever is on the stack: that part is done), giving
 * them in order.  OS events and samples come in time order from a second
 * decoder over the same records (or, if a thread's are not in order,
 * sorted in memory: few), merged in as order_items does.
 *
 * Memory: a window's calls (W 32-byte items and their links), per
 * boundary the calls open across it (the call depth), the nodes of the
 * calling-context trees; one record's bytes per decoder.
 */
#define TL_WINDOW (1u << 20)

/* A decoder over one thread's records, in order. */
struct tl_cur {
	size_t ri;                /* index in the thread's recs */
	bool started;             /* d is in recs[ri] */
	struct tl_dstate d;
	uint8_t *buf;
	size_t abuf;
};

/* A decoder's place, to start another there. */
struct tl_ckpt {
	size_t ri;
	bool started;
	uint32_t k;
	size_t off;
	uint64_t t, tick, prev;
};

/* A call that straddles boundary m: arrives at pos >= m * W, its lo
 * before; wlo the window of its lo. */
struct tl_strad {
	uint64_t m, pos, wlo;
	struct an_tl_item it;
};

/* An OS event or sample, and its stack's id. */
struct tl_other {
	struct an_tl_item it;
	uint64_t stack_id;
	size_t ri;                /* its record, for the frames */
	uint64_t seq;
};

struct an_tl_tstream {
	uint32_t *recs;           /* indices in p->tlrecs, in order */
	size_t nrecs, arecs;
	const struct node_info *ni;
	size_t nni;
	bool shown;               /* --tid selects it */
	/* stream_index */
	uint64_t ncalls, nothers, min_start;
	bool others_sorted;
	uint64_t last_other;
	struct tl_ckpt *ck;       /* ck[k]: where window k starts */
	size_t nck, ack;
	struct tl_strad *strad;   /* by boundary, then arrival */
	size_t nstrad, astrad;
	size_t *sfirst;           /* strad of boundary m: [sfirst[m], sfirst[m + 1]) */
};

/* The thread being read (an_tl_begin .. an_tl_next). */
struct tl_reader {
	struct an_tl_thread *th;
	struct an_tl_tstream *ts;
	struct tl_cur wc, oc;     /* the windows' decoder, the others' */
	uint64_t window;          /* next window to load */
	struct an_tl_item *win;   /* the window's calls ... */
	size_t nwin, awin;
	uint32_t *next, *ord;     /* ... their links, their order */
	size_t anext, aord, nord, kord;
	struct tl_other *others;  /* others not in order: sorted here */
	size_t nothers, aothers, kother;
	bool have_call, have_other;
	struct an_tl_item call;
	struct tl_other other;
	struct { uint64_t end; uint32_t depth; } *st;
	size_t nst, ast;
};

struct an_tl_stream {
	struct tl_build b;
	struct an_tl_filter f;
	uint64_t window;          /* calls per window */
	struct tl_reader rd;
};

/* The next item of ts from cursor c: 1, or 0 at the end; items lost to
 * damage are added to *damaged. */
static int cur_next(struct an_tl_stream *s, struct an_tl_tstream *ts, struct tl_cur *c,
		    struct an_tl_item *it, uint64_t *stack_id, size_t *ri, uint64_t *damaged)
{
	struct an_profile *p = s->b.p;

	for (;;) {
		const struct an_tlrec *r;

		if (c->ri >= ts->nrecs)
			return 0;
		r = &p->tlrecs[ts->recs[c->ri]];
		if (!c->started) {
			const uint8_t *data = rec_bytes(p, r, &c->buf, &c->abuf);

			if (!data) {
				*damaged += r->nitems == SC_TL_ALL ? 1 : r->nitems;
				c->ri++;
				continue;
			}
			dstate_init(&c->d, r, data);
			c->started = true;
		}
		if (!dstate_more(r, &c->d)) {
			c->ri++;
			c->started = false;
			continue;
		}
		if (item_get(r, &c->d, ts->ni, ts->nni, it, stack_id) < 0) {
			*damaged += dstate_lost(r, &c->d);
			c->ri++;
			c->started = false;
			continue;
		}
		*ri = ts->recs[c->ri];
		return 1;
	}
}

static struct tl_ckpt cur_save(const struct an_tl_stream *s, const struct an_tl_tstream *ts,
			       const struct tl_cur *c)
{
	struct tl_ckpt k = { c->ri, c->started, 0, 0, 0, 0, 0 };

	if (c->started) {
		const struct an_tlrec *r = &s->b.p->tlrecs[ts->recs[c->ri]];

		k.k = c->d.k;
		k.off = (size_t)(c->d.q - (c->d.end - r->len));
		k.t = c->d.t;
		k.tick = c->d.tick;
		k.prev = c->d.prev;
	}
	return k;
}

static void cur_restore(struct an_tl_stream *s, const struct an_tl_tstream *ts, struct tl_cur *c,
			const struct tl_ckpt *k)
{
	c->ri = k->ri;
	c->started = false;
	if (k->started) {
		const struct an_tlrec *r = &s->b.p->tlrecs[ts->recs[k->ri]];
		const uint8_t *data = rec_bytes(s->b.p, r, &c->buf, &c->abuf);

		if (!data) {            /* read before: counted then */
			c->ri++;
			return;
		}
		dstate_init(&c->d, r, data);
		c->d.q = data + k->off;
		c->d.k = k->k;
		c->d.t = k->t;
		c->d.tick = k->tick;
		c->d.prev = k->prev;
		c->started = true;
	}
}

static void cur_release(struct tl_cur *c)
{
	free(c->buf);
	memset(c, 0, sizeof(*c));
}

static int strad_cmp(const void *x, const void *y)
{
	const struct tl_strad *a = x, *b = y;

	if (a->m != b->m)
		return a->m < b->m ? -1 : 1;
	return a->pos < b->pos ? -1 : a->pos > b->pos;
}

/* The first pass over a thread (all threads: t0 is the earliest of all):
 * counts, checkpoints, straddlers. */
static void stream_index(struct an_tl_stream *s, struct an_tl_thread *th, struct an_tl_tstream *ts,
			 uint64_t *damaged)
{
	struct { uint64_t w, last; } *cs = NULL;        /* subs_call's stack, by window */
	size_t ncs = 0, acs = 0, ri;
	struct tl_cur c = { 0 };
	struct an_tl_item it;
	uint64_t stack_id, pos = 0, lost = 0, W = s->window;

	ts->min_start = UINT64_MAX;
	ts->others_sorted = true;
	ALLOC_GROW(ts->ck, 1, ts->ack);
	ts->ck[ts->nck++] = cur_save(s, ts, &c);
	while (cur_next(s, ts, &c, &it, &stack_id, &ri, &lost)) {
		uint64_t w;

		if (it.start_ns < ts->min_start)
			ts->min_start = it.start_ns;
		if (it.kind != AN_TL_CALL) {
			ts->others_sorted &= !ts->nothers || ts->last_other <= it.start_ns;
			ts->last_other = it.start_ns;
			ts->nothers++;
			continue;
		}
		/* the window of the first call it adopts: the lowest whose
		 * latest start is at or after its start */
		w = pos / W;
		if (ncs && cs[ncs - 1].last >= it.start_ns) {
			while (ncs && cs[ncs - 1].last >= it.start_ns)
				ncs--;
			w = cs[ncs].w;
		}
		if (ncs && cs[ncs - 1].w == w) {
			cs[ncs - 1].last = it.start_ns;
		} else {
			ALLOC_GROW(cs, ncs + 1, acs);
			cs[ncs].w = w;
			cs[ncs++].last = it.start_ns;
		}
		for (uint64_t m = w + 1; m <= pos / W; m++) {
			ALLOC_GROW(ts->strad, ts->nstrad + 1, ts->astrad);
			ts->strad[ts->nstrad++] = (struct tl_strad){ m, pos, w, it };
		}
		pos++;
		if (pos % W == 0) {
			ALLOC_GROW(ts->ck, ts->nck + 1, ts->ack);
			ts->ck[ts->nck++] = cur_save(s, ts, &c);
		}
	}
	ts->ncalls = pos;
	if (ts->shown)
		*damaged += lost;
	free(cs);
	cur_release(&c);
	if (ts->nstrad)
		qsort(ts->strad, ts->nstrad, sizeof(*ts->strad), strad_cmp);
	ts->sfirst = xcalloc(ts->nck + 2, sizeof(*ts->sfirst));
	for (size_t m = 0, i = 0; m <= ts->nck + 1; m++) {
		while (i < ts->nstrad && ts->strad[i].m < m)
			i++;
		ts->sfirst[m] = i;
	}
	th->calls = ts->ncalls;
	th->nitems = ts->ncalls + ts->nothers;
}

/* The order of the calls on subs' stack, appended to ord[]; the stack
 * emptied. */
static void window_flush(struct tl_reader *rd, struct subs *sub)
{
	for (uint32_t x = subs_first(sub); x != UINT32_MAX; x = rd->next[x])
		rd->ord[rd->nord++] = x;
}

/* Window k of the reader's thread: its calls in order in win[ord[]].
 * false past the last window. */
static bool window_load(struct an_tl_stream *s, struct tl_reader *rd, uint64_t k)
{
	struct an_tl_tstream *ts = rd->ts;
	uint64_t W = s->window, pos = k * W, end = pos + W, ignored = 0, stack_id;
	size_t si, se, ri, cap;
	struct subs sub = { 0 };
	struct an_tl_item it;

	if (k >= ts->nck || pos >= ts->ncalls)
		return false;
	cap = (size_t)W + (ts->sfirst[k + 2] - ts->sfirst[k + 1]);
	if (rd->awin < cap) {
		rd->win = xrealloc(rd->win, cap * sizeof(*rd->win));
		rd->next = xrealloc(rd->next, cap * sizeof(*rd->next));
		rd->ord = xrealloc(rd->ord, cap * sizeof(*rd->ord));
		rd->awin = cap;
	}
	rd->nwin = rd->nord = rd->kord = 0;
	sub.next = rd->next;
	cur_restore(s, ts, &rd->wc, &ts->ck[k]);
	/* the window's calls; those that straddle its start adopt the stack */
	si = ts->sfirst[k];
	se = ts->sfirst[k + 1];
	while (pos < end && cur_next(s, ts, &rd->wc, &it, &stack_id, &ri, &ignored)) {
		if (it.kind != AN_TL_CALL)
			continue;
		while (si < se && ts->strad[si].pos < pos)
			si++;
		if (si < se && ts->strad[si].pos == pos) {
			window_flush(rd, &sub);
		} else {
			rd->win[rd->nwin] = it;
			subs_call(&sub, (uint32_t)rd->nwin, it.start_ns);
			rd->nwin++;
		}
		pos++;
	}
	/* the calls open across its end: those whose subtree starts here */
	for (si = ts->sfirst[k + 1]; si < ts->sfirst[k + 2]; si++) {
		const struct tl_strad *x = &ts->strad[si];

		if (x->wlo != k) {
			window_flush(rd, &sub);
			continue;
		}
		rd->win[rd->nwin] = x->it;
		subs_call(&sub, (uint32_t)rd->nwin, x->it.start_ns);
		rd->nwin++;
	}
	window_flush(rd, &sub);
	return true;
}

static int other_seq_cmp(const void *x, const void *y)
{
	const struct tl_other *a = x, *b = y;

	if (a->it.start_ns != b->it.start_ns)
		return a->it.start_ns < b->it.start_ns ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

static bool next_call(struct an_tl_stream *s, struct tl_reader *rd, struct an_tl_item *it)
{
	while (rd->kord == rd->nord)
		if (!window_load(s, rd, rd->window++))
			return false;
	/* the order jumps about the window: fetch ahead (ord[] is read in
	 * sequence, so the addresses are known) */
	if (rd->kord + 16 < rd->nord)
		__builtin_prefetch(&rd->win[rd->ord[rd->kord + 16]]);
	*it = rd->win[rd->ord[rd->kord++]];
	return true;
}

static bool next_other(struct an_tl_stream *s, struct tl_reader *rd, struct tl_other *o)
{
	uint64_t ignored = 0;

	if (!rd->ts->nothers)
		return false;
	if (!rd->ts->others_sorted) {
		if (rd->kother == rd->nothers)
			return false;
		*o = rd->others[rd->kother++];
		return true;
	}
	while (cur_next(s, rd->ts, &rd->oc, &o->it, &o->stack_id, &o->ri, &ignored))
		if (o->it.kind != AN_TL_CALL)
			return true;
	return false;
}

static void reader_release(struct tl_reader *rd)
{
	cur_release(&rd->wc);
	cur_release(&rd->oc);
	free(rd->win);
	free(rd->next);
	free(rd->ord);
	free(rd->others);
	free(rd->st);
	memset(rd, 0, sizeof(*rd));
}

void an_tl_begin(struct an_timeline *tl, size_t i)
{
	struct an_tl_stream *s = tl->stream;
	struct tl_reader *rd = &s->rd;
	struct an_tl_tstream *ts = tl->threads[i].ts;

	rd->th = &tl->threads[i];
	rd->ts = ts;
	rd->window = 0;
	rd->nord = rd->kord = rd->nwin = 0;
	rd->have_call = rd->have_other = false;
	rd->nst = 0;
	cur_release(&rd->oc);
	cur_release(&rd->wc);
	rd->nothers = rd->kother = 0;
	if (ts->shown && ts->nothers && !ts->others_sorted) {
		struct tl_cur c = { 0 };
		struct tl_other o;
		uint64_t ignored = 0;

		while (cur_next(s, ts, &c, &o.it, &o.stack_id, &o.ri, &ignored)) {
			if (o.it.kind == AN_TL_CALL)
				continue;
			o.seq = rd->nothers;
			ALLOC_GROW(rd->others, rd->nothers + 1, rd->aothers);
			rd->others[rd->nothers++] = o;
		}
		cur_release(&c);
		qsort(rd->others, rd->nothers, sizeof(*rd->others), other_seq_cmp);
	}
}

/* The next item in order, filters not applied. */
static bool next_any(struct an_tl_stream *s, struct tl_reader *rd, struct an_tl_item *it)
{
	if (!rd->have_call)
		rd->have_call = next_call(s, rd, &rd->call);
	if (!rd->have_other)
		rd->have_other = next_other(s, rd, &rd->other);
	if (rd->have_call && (!rd->have_other || rd->call.start_ns <= rd->other.it.start_ns)) {
		*it = rd->call;
		rd->have_call = false;
	} else if (rd->have_other) {
		const struct an_tlrec *r = &s->b.p->tlrecs[rd->other.ri];

		*it = rd->other.it;
		rd->have_other = false;
		if (it->kind == AN_TL_SAMPLE) {
			s->b.tl->nframes = 0;
			item_frames(&s->b, r, rd->ts->ni, rd->ts->nni, rd->other.stack_id, it);
		}
	} else {
		return false;
	}
	/* OS events' and samples' depths (set_depths) */
	if (rd->ts->nothers) {
		while (rd->nst && rd->st[rd->nst - 1].end <= it->start_ns)
			rd->nst--;
		if (it->kind == AN_TL_CALL) {
			if (rd->nst == rd->ast)
				ALLOC_GROW(rd->st, rd->nst + 1, rd->ast);
			rd->st[rd->nst].end = it->start_ns + it->dur_ns;
			rd->st[rd->nst++].depth = it->depth;
		} else {
			it->depth = rd->nst ? rd->st[rd->nst - 1].depth + 1 : 0;
		}
	}
	it->start_ns -= s->b.tl->t0_ns;
	return true;
}

static bool filtering(const struct an_tl_filter *f)
{
	return f->since_ns || f->until_ns != UINT64_MAX || f->min_ns || f->max_depth;
}

int an_tl_next(struct an_timeline *tl, struct an_tl_item *it)
{
	struct an_tl_stream *s = tl->stream;
	struct tl_reader *rd = &s->rd;

	if (!rd->ts || !rd->ts->shown)
		return 0;
	while (next_any(s, rd, it))
		if (!filtering(&s->f) || keep(it, &s->f))
			return 1;
	return 0;
}

static int thread_cmp_stream(const void *x, const void *y)
{
	const struct an_tl_thread *a = x, *b = y;
	uint64_t sa = a->nitems ? a->first_ns : UINT64_MAX;
	uint64_t sb = b->nitems ? b->first_ns : UINT64_MAX;

	if (a->proc_id != b->proc_id)
		return a->proc_id < b->proc_id ? -1 : 1;
	if (sa != sb)
		return sa < sb ? -1 : 1;
	return a->tid < b->tid ? -1 : a->tid > b->tid;
}

int an_timeline_stream(struct an_profile *p, const struct an_tl_filter *f, size_t window,
		       struct an_timeline **out, char *err, size_t errlen)
{
	struct an_tl_filter all = AN_TL_FILTER_ALL;
	struct an_timeline *tl;
	struct an_tl_stream *s;
	struct an_map tmap = { 0 };
	size_t nthr = 0, athr = 0, i;
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
	s = xcalloc(1, sizeof(*s));
	tl->stream = s;
	s->b.p = p;
	s->b.tl = tl;
	s->b.ninfo = xcalloc(p->nthreads + 1, sizeof(*s->b.ninfo));
	s->b.nninfo = xcalloc(p->nthreads + 1, sizeof(*s->b.nninfo));
	s->f = *f;
	s->window = window ? window : TL_WINDOW;
	/* the threads and their records */
	for (i = 0; i < p->ntlrecs; i++) {
		const struct an_tlrec *r = &p->tlrecs[i];
		bool found;
		uint32_t k = an_map_put(&tmap, (uint64_t)r->proc_id << 32 | r->tid, r->inst,
					(uint32_t)nthr, &found);
		struct an_tl_tstream *ts;

		if (!found) {
			ALLOC_GROW(tl->threads, nthr + 1, athr);
			memset(&tl->threads[nthr], 0, sizeof(tl->threads[nthr]));
			tl->threads[nthr].proc_id = r->proc_id;
			tl->threads[nthr].tid = r->tid;
			tl->threads[nthr].pid = an_proc_pid(p, r->proc_id);
			tl->threads[nthr].name = an_thread_name(p, r->proc_id, r->tid);
			tl->threads[nthr].exe = an_proc_exe(p, r->proc_id);
			ts = tl->threads[nthr].ts = xcalloc(1, sizeof(*ts));
			ts->shown = !f->tid || r->tid == f->tid;
			if (r->inst != AN_NONE && r->inst < p->nthreads)
				ts->ni = node_infos(&s->b, r->inst, &ts->nni);
			nthr++;
		}
		ts = tl->threads[k].ts;
		ALLOC_GROW(ts->recs, ts->nrecs + 1, ts->arecs);
		ts->recs[ts->nrecs++] = (uint32_t)i;
		/* the counts are cumulative: the last record's is the total */
		tl->threads[k].dropped = r->dropped;
		tl->threads[k].filtered = r->filtered;
	}
	tl->nthreads = nthr;
	for (i = 0; i < nthr; i++) {
		struct an_tl_thread *th = &tl->threads[i];

		stream_index(s, th, th->ts, &tl->damaged_items);
		if (th->ts->min_start < t0)
			t0 = th->ts->min_start;
		tl->dropped += th->dropped;
		tl->filtered += th->filtered;
	}
	tl->t0_ns = t0 == UINT64_MAX ? 0 : t0;
	/* what is shown: all of it, or what the filters keep (counted by a
	 * pass over it) */
	for (i = 0; i < nthr; i++) {
		struct an_tl_thread *th = &tl->threads[i];

		th->first_ns = th->ts->min_start - tl->t0_ns;
		if (!th->ts->shown) {
			th->nitems = 0;
			th->calls = 0;
			continue;
		}
		if (filtering(f)) {
			struct an_tl_item it;

			th->nitems = 0;
			th->calls = 0;
			an_tl_begin(tl, i);
			while (an_tl_next(tl, &it)) {
				if (!th->nitems++)
					th->first_ns = it.start_ns;
				th->calls += it.kind == AN_TL_CALL;
			}
		}
		tl->items += th->nitems;
	}
	reader_release(&s->rd);
	if (nthr)
		qsort(tl->threads, nthr, sizeof(*tl->threads), thread_cmp_stream);
	an_map_release(&tmap);
	*out = tl;
	return 0;
}

static void stream_free(struct an_timeline *tl)
{
	struct an_tl_stream *s = tl->stream;

	for (size_t i = 0; i < tl->nthreads; i++) {
		struct an_tl_tstream *ts = tl->threads[i].ts;

		if (!ts)
			continue;
		free(ts->recs);
		free(ts->ck);
		free(ts->strad);
		free(ts->sfirst);
		free(ts);
	}
	if (!s)
		return;
	reader_release(&s->rd);
	for (size_t i = 0; i < s->b.p->nthreads + 1; i++)
		free(s->b.ninfo[i]);
	free(s->b.ninfo);
	free(s->b.nninfo);
	free(s->b.buf);
	free(s);
}

void an_timeline_free(struct an_timeline *tl)
{
	if (!tl)
		return;
	stream_free(tl);
	for (size_t i = 0; i < tl->nthreads; i++)
		big_free(tl->threads[i].items, tl->threads[i].items_alloc, sizeof(*tl->threads[i].items));
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
