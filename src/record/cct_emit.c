/*
 * cct_emit — engine thread state to data-file records.  See cct_emit.h.
 *
 * The arena may come from a target that was killed in the middle of a probe,
 * or that scribbled over its own memory: everything read here is copied out
 * and checked before use.  Counts that the engine does not keep on its hot
 * path are derived here: a node's completed calls are its calls minus its
 * frames still open, and the events of a thread are its entries plus the
 * exits that closed a frame plus the stray exits.
 *
 * Ticks to nanoseconds without drift: converting every node's exclusive
 * time on its own would make the inclusive time the report derives (a sum
 * over a subtree) differ from the same time converted once (a call's
 * inclusive time) by up to half a nanosecond per node.  So each node's
 * subtree sum is converted (rounded down) and a node's exclusive time is its
 * converted subtree sum minus its children's: sums over subtrees are then
 * exactly the converted tick sums, and never negative (floor(a) - sum of
 * floor(b_i) >= 0 when a >= sum of b_i).
 */
#include "record/cct_emit.h"
#include "format/scdata.h"
#include "runtime/engine.h"
#include "format/varint.h"
#include "util/util.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static uint64_t to_ns(const struct sc_tick_conv *c, uint64_t ticks)
{
	return (uint64_t)floor((double)ticks * c->ns_per_tick);
}

static uint64_t stamp_ns(const struct sc_tick_conv *c, uint64_t tick)
{
	double d = ((double)tick - (double)c->tick0) * c->ns_per_tick + (double)c->ns0;
	return d > 0 ? (uint64_t)llround(d) : 0;
}

static int range_ok(uint64_t arena_len, uint64_t off, uint64_t len)
{
	return off >= sizeof(struct sc_eng_arena_hdr) && off <= arena_len && len <= arena_len - off;
}

static int load_thread(const void *arena, uint64_t arena_len, uint64_t off, struct sc_eng_thread *t)
{
	if (!range_ok(arena_len, off, sizeof(*t)))
		return -EINVAL;
	memcpy(t, (const uint8_t *)arena + off, sizeof(*t));
	return t->magic == SC_ENG_THREAD_MAGIC && t->self_off == off ? 0 : -EINVAL;
}

int sc_cct_threads(const void *arena, uint64_t arena_len, uint64_t *offs, int max)
{
	struct sc_eng_arena_hdr hdr;
	struct sc_eng_thread t;
	uint64_t off, limit = arena_len / sizeof(t);
	int n = 0, i;

	if (arena_len < sizeof(hdr))
		return -EINVAL;
	memcpy(&hdr, arena, sizeof(hdr));
	for (off = hdr.threads; off; off = t.next_off) {
		if ((uint64_t)n > limit || load_thread(arena, arena_len, off, &t))
			return -EINVAL;
		if (n < max)
			offs[n] = off;
		n++;
	}
	/* the list is newest first; callers want creation order */
	for (i = 0; i < (n < max ? n : max) / 2; i++) {
		int j = (n < max ? n : max) - 1 - i;
		uint64_t x = offs[i];
		offs[i] = offs[j];
		offs[j] = x;
	}
	return n;
}

/*
 * What the frames still open add: the engine adds a call's exclusive time
 * when it returns, so a frame open at the end (a killed process, exit())
 * contributes its time up to the thread's last event here.
 */
struct open_adj {
	uint64_t nopen;
	uint32_t *open;           /* per node id: frames open */
	uint64_t *node_ee;        /* per node id: exclusive ticks of open frames */
	uint64_t *node_rem;       /* per node id: cost taken out of open frames' subtrees */
	uint64_t *cs_ee, *cs_ei, *cs_osb;  /* per call-site slot */
	uint8_t *cs_seen;         /* per slot: an open frame below has it */
};

static int read_node(const void *arena, uint64_t arena_len, const struct sc_eng_thread *t,
		     const struct sc_eng_node *ptr, struct sc_eng_node *n)
{
	uint64_t off = (uint64_t)((uintptr_t)ptr - (uintptr_t)t->base);

	if (off % SC_ENG_NODE_SIZE || !range_ok(arena_len, off, sizeof(*n)))
		return -EINVAL;
	memcpy(n, (const uint8_t *)arena + off, sizeof(*n));
	return 0;
}

static int open_frames(const void *arena, uint64_t arena_len, const struct sc_eng_thread *t,
		       uint64_t slots, struct open_adj *adj)
{
	uintptr_t top = (uintptr_t)t->top, stack = (uintptr_t)t->stack;
	uint64_t depth, i;
	struct sc_eng_frame *fr;
	struct sc_eng_node n;
	uint64_t *incl;

	if (top < stack || (top - stack) % sizeof(struct sc_eng_frame))
		return -EINVAL;
	depth = (top - stack) / sizeof(struct sc_eng_frame);
	if (!depth && !t->stack_cap && (t->flags & SC_ENG_THREAD_RETIRED))
		return 0;                  /* ended with no frame open: stack given back */
	if (depth >= t->stack_cap ||
	    !range_ok(arena_len, t->stack_off, t->stack_cap * sizeof(struct sc_eng_frame)))
		return -EINVAL;
	fr = malloc((depth + 1) * (sizeof(*fr) + sizeof(*incl)));
	if (!fr)
		return -ENOMEM;
	incl = (uint64_t *)(fr + depth + 1);
	memcpy(fr, (const uint8_t *)arena + t->stack_off, (depth + 1) * sizeof(*fr));
	/* each open frame closes at the last reading, innermost first, as the
	 * engine's exits would (sc_eng_close) */
	for (i = depth; i >= 1; i--) {
		struct sc_eng_closed r;
		uint64_t slot;

		if (read_node(arena, arena_len, t, fr[i].node, &n))
			goto bad;
		if (n.func == SC_ENG_DROP_FUNC)
			continue;          /* its time is the frame below's own */
		if (n.id >= t->nnodes || fr[i].entry > t->last_raw)
			goto bad;
		r = sc_eng_close(&fr[i], t->last_raw, t->acc, &fr[i - 1].owed);
		sc_eng_fold(&fr[i - 1], &r);
		incl[i] = r.incl;
		adj->open[n.id]++;
		adj->node_ee[n.id] += r.excl;
		adj->node_rem[n.id] += r.raw - r.incl;
		adj->nopen++;
		slot = (uint64_t)((uintptr_t)fr[i].cs - (uintptr_t)t->cs_tab) / sizeof(struct sc_eng_cs);
		if ((uintptr_t)fr[i].cs < (uintptr_t)t->cs_tab || slot >= slots)
			continue;
		adj->cs_ee[slot] += r.excl;
	}
	/* the root (time outside every function) closes too: the cost taken
	 * out of its intervals */
	{
		uint64_t unpaid = 0;
		struct sc_eng_closed r = sc_eng_close(&fr[0], t->last_raw, t->acc, &unpaid);

		if (!read_node(arena, arena_len, t, fr[0].node, &n) && n.id < t->nnodes)
			adj->node_rem[n.id] += r.raw - r.incl;
	}
	/* the outermost open call of each site, outermost first */
	for (i = 1; i <= depth; i++) {
		uint64_t slot = (uint64_t)((uintptr_t)fr[i].cs - (uintptr_t)t->cs_tab) / sizeof(struct sc_eng_cs);

		if ((uintptr_t)fr[i].cs < (uintptr_t)t->cs_tab || slot >= slots || adj->cs_seen[slot])
			continue;
		if (read_node(arena, arena_len, t, fr[i].node, &n) || n.func == SC_ENG_DROP_FUNC)
			continue;
		adj->cs_seen[slot] = 1;
		adj->cs_ei[slot] += incl[i];
		adj->cs_osb[slot] += t->osb_total >= fr[i].osb_entry ? t->osb_total - fr[i].osb_entry : 0;
	}
	free(fr);
	return 0;
bad:
	free(fr);
	return -EINVAL;
}

static uint64_t sub_clamped(uint64_t a, uint64_t b)
{
	return a > b ? a - b : 0;
}

/*
 * The thread's nodes as the emitter reads them, in id order: in place in
 * the arena (a tree of a compiler's has half a million nodes; a copy of
 * them cost as much fresh memory, whose first touch is what is slow on a
 * VM), read only, with the one field used as an index, the parent, checked
 * once and kept apart, and their own removed cost (own_removed).
 */
struct node_view {
	const struct sc_eng_node **at;
	uint32_t *parent;
	uint64_t *removed;
};

/*
 * The engine counts the probe cost taken out of a call's whole subtree
 * (node->removed, engine.h); each node's own is its subtree's less its
 * children's, open frames included (rem: per node, their subtrees').  Every
 * call of a child node is inside a call of its parent node, so the
 * difference is exact.  `rem` is used up.
 */
static void own_removed(struct node_view *nv, uint64_t count, uint64_t *rem)
{
	uint64_t i;

	for (i = 0; i < count; i++) {
		rem[i] += nv->at[i]->removed;
		nv->removed[i] = rem[i];
	}
	for (i = count; i-- > 1;)
		nv->removed[nv->parent[i]] -= rem[i];
	for (i = 0; i < count; i++)
		if ((int64_t)nv->removed[i] < 0)
			nv->removed[i] = 0;
}

/* Find the thread's nodes in the arena, in id order; count them. */
static int load_nodes(const void *arena, uint64_t arena_len, const struct sc_eng_thread *t,
		      struct node_view *nv, uint64_t *count)
{
	uint64_t coff = t->chunk_head_off, next_id = 0;

	while (coff && next_id < t->nnodes) {
		struct sc_eng_chunk c;
		uint32_t i;

		if (!range_ok(arena_len, coff, sizeof(c)))
			return -EINVAL;
		memcpy(&c, (const uint8_t *)arena + coff, sizeof(c));
		if (c.slots > SC_ENG_CHUNK_MAX || c.used >= c.slots || c.first_id != next_id ||
		    !range_ok(arena_len, coff, (uint64_t)c.slots * SC_ENG_NODE_SIZE))
			return -EINVAL;
		for (i = 0; i < c.used && next_id < t->nnodes; i++) {
			const struct sc_eng_node *n = (const struct sc_eng_node *)
				((const uint8_t *)arena + coff + (uint64_t)(i + 1) * SC_ENG_NODE_SIZE);
			uint32_t id = n->id, parent = n->parent;

			if (id != next_id || (id == 0 ? parent != UINT32_MAX : parent >= id))
				return -EINVAL;
			nv->at[next_id] = n;
			nv->parent[next_id] = parent;
			next_id++;
		}
		coff = c.next_off;
	}
	*count = next_id;
	return 0;
}

/*
 * Subtree sums (ticks) of elapsed, application and exact-application
 * exclusive time, converted to ns rounded down (sum_ns); children come
 * after their parent, so one backward pass adds them up.  The same for the
 * raw values (the probe cost the engine took out added back: `removed`).
 */
struct subtree_sum {
	double e, a, x;           /* ticks, summed */
	uint64_t ce_ns, ca_ns, cx_ns;  /* the children's converted sums */
};

struct subtree {
	struct subtree_sum v, raw;
	double removed;           /* ticks taken out in the subtree */
};

static uint64_t sum_ns(double ticks, const struct sc_tick_conv *conv)
{
	return (uint64_t)floor(ticks * conv->ns_per_tick);
}

static void sum_add(struct subtree_sum *s, uint64_t ee, uint64_t ae, uint64_t xe)
{
	s->e += (double)ee;
	s->a += (double)ae;
	s->x += (double)xe;
}

/* A complete child's sums into its parent's. */
static void sum_up(struct subtree_sum *p, const struct subtree_sum *c, const struct sc_tick_conv *conv)
{
	p->e += c->e;
	p->a += c->a;
	p->x += c->x;
	p->ce_ns += sum_ns(c->e, conv);
	p->ca_ns += sum_ns(c->a, conv);
	p->cx_ns += sum_ns(c->x, conv);
}

static void subtree_sums(const struct node_view *nv, uint64_t count, const struct open_adj *adj,
			 const struct sc_tick_conv *conv, struct subtree *st)
{
	uint64_t i;

	for (i = count; i-- > 0;) {
		const struct sc_eng_node *n = nv->at[i];
		uint64_t ee = n->excl_sum + adj->node_ee[i], raw = ee + nv->removed[i];
		uint64_t osb = n->osb, osx = n->osx;

		sum_add(&st[i].v, ee, sub_clamped(ee, osb), sub_clamped(ee, osx));
		sum_add(&st[i].raw, raw, sub_clamped(raw, osb), sub_clamped(raw, osx));
		st[i].removed += (double)nv->removed[i];
		if (i > 0) {
			uint32_t p = nv->parent[i];

			sum_up(&st[p].v, &st[i].v, conv);
			sum_up(&st[p].raw, &st[i].raw, conv);
			st[p].removed += st[i].removed;
		}
	}
}

/* A node's exclusive values in ns from its subtree sums: AE, exact AE <= EE. */
static void excl_ns(const struct subtree_sum *s, const struct sc_tick_conv *conv,
		    uint64_t *ee, uint64_t *ae, uint64_t *xe)
{
	*ee = sub_clamped(sum_ns(s->e, conv), s->ce_ns);
	/* rounding may leave these a few ns above EE: AE <= EE holds */
	*ae = sub_clamped(sum_ns(s->a, conv), s->ca_ns);
	if (*ae > *ee)
		*ae = *ee;
	*xe = sub_clamped(sum_ns(s->x, conv), s->cx_ns);
	if (*xe > *ee)
		*xe = *ee;
}

static int emit_nodes(struct sc_writer *w, const struct sc_eng_thread *t, uint32_t proc_id,
		      const struct node_view *nv, uint64_t count, const struct subtree *st,
		      const struct open_adj *adj, const struct sc_tick_conv *conv,
		      uint64_t *calls, uint64_t *closed)
{
	uint64_t i;
	int ret;

	*calls = *closed = 0;
	for (i = 0; i < count; i++) {
		struct sc_eng_node n = *nv->at[i];
		struct sc_rec_cct_node r = { 0 };
		uint64_t completed = sub_clamped(n.calls, adj->open[i]);

		r.proc_id = proc_id;
		r.tid = t->tid;
		r.id = (uint32_t)i;
		r.parent = nv->parent[i];
		r.func = n.func;
		r.calls = n.calls;
		excl_ns(&st[i].v, conv, &r.elapsed_excl, &r.app_excl, &r.app_excl_exact);
		r.completed = completed;
		if (completed && n.incl_min <= n.incl_max) {
			r.incl_min = to_ns(conv, n.incl_min);
			r.incl_max = to_ns(conv, n.incl_max);
			r.incl_sum = to_ns(conv, n.incl_sum);
			r.excl_min = to_ns(conv, n.excl_min);
			r.excl_max = to_ns(conv, n.excl_max);
			r.excl_sum = to_ns(conv, n.excl_sum);
		}
		if (i) {
			*calls += n.calls;
			*closed += completed;
		}
		ret = sc_writer_add(w, SC_REC_CCT_NODE, &r, sizeof(r));
		if (ret)
			return ret;
	}
	/* what compensation took out, for the raw values */
	for (i = 0; i < count; i++) {
		const struct sc_eng_node *n = nv->at[i];
		struct sc_rec_cct_removed x = { 0 };
		uint64_t ee, ae, xe, ree, rae, rxe, ncalls = n->calls, incl_sum = n->incl_sum, excl_sum = n->excl_sum;

		if (!st[i].removed)
			continue;
		excl_ns(&st[i].v, conv, &ee, &ae, &xe);
		excl_ns(&st[i].raw, conv, &ree, &rae, &rxe);
		x.proc_id = proc_id;
		x.tid = t->tid;
		x.id = (uint32_t)i;
		x.elapsed_excl = sub_clamped(ree, ee);
		x.app_excl = sub_clamped(rae, ae);
		x.app_excl_exact = sub_clamped(rxe, xe);
		if (sub_clamped(ncalls, adj->open[i]) && n->incl_min <= n->incl_max) {
			x.incl_sum = sub_clamped(to_ns(conv, incl_sum + (uint64_t)st[i].removed),
						 to_ns(conv, incl_sum));
			x.excl_sum = sub_clamped(to_ns(conv, excl_sum + nv->removed[i]), to_ns(conv, excl_sum));
		}
		ret = sc_writer_add(w, SC_REC_CCT_REMOVED, &x, sizeof(x));
		if (ret)
			return ret;
	}
	return 0;
}

static int emit_callsites(struct sc_writer *w, const void *arena, const struct sc_eng_thread *t,
			  uint32_t proc_id, uint64_t slots, const struct open_adj *adj,
			  const struct sc_tick_conv *conv, uint64_t *count)
{
	uint64_t i;
	int ret;

	*count = 0;
	for (i = 0; i < slots; i++) {
		struct sc_eng_cs e;
		struct sc_rec_callsite r;
		uint64_t ei, ee;

		memcpy(&e, (const uint8_t *)arena + t->cs_off + i * sizeof(e), sizeof(e));
		if (!e.callee || !e.calls)
			continue;
		ei = e.ei + adj->cs_ei[i];
		ee = e.ee + adj->cs_ee[i];
		r.proc_id = proc_id;
		r.tid = t->tid;
		r.site = e.site;
		r.callee = e.callee;
		r.calls = e.calls;
		r.elapsed_incl = to_ns(conv, ei);
		r.elapsed_excl = to_ns(conv, ee);
		r.app_incl = to_ns(conv, sub_clamped(ei, e.osb_incl + adj->cs_osb[i]));
		r.app_excl = to_ns(conv, sub_clamped(ee, e.osb_excl));
		ret = sc_writer_add(w, SC_REC_CALLSITE, &r, sizeof(r));
		if (ret)
			return ret;
		(*count)++;
	}
	return 0;
}

/*
 * The nodes' samples (engine.h, sc_eng_sample): the table is checked like
 * everything else the recorder follows; an entry for a node that is not
 * there (a damaged table) is dropped, with its samples taken off the
 * thread's count so that the nodes' still add up to it.
 */
static int emit_samples(struct sc_writer *w, const void *arena, uint64_t arena_len,
			const struct sc_eng_thread *t, const struct sc_eng_more *m, uint32_t proc_id,
			uint64_t nodes_n, uint64_t *samples)
{
	uint64_t slots = (uint64_t)m->samp_mask + 1, got = 0, i;
	const struct sc_eng_samp *tab;

	if (!m->samp_off || (slots & (slots - 1)) || slots > (1ull << 30) ||
	    !range_ok(arena_len, m->samp_off, slots * sizeof(*tab)))
		return 0;
	tab = (const struct sc_eng_samp *)((const uint8_t *)arena + m->samp_off);
	for (i = 0; i < slots; i++) {
		struct sc_eng_samp e;
		struct sc_rec_cct_samples r = { 0 };
		int ret;

		memcpy(&e, &tab[i], sizeof(e));
		if (!e.key || !e.count || e.key > nodes_n)
			continue;
		r.proc_id = proc_id;
		r.tid = t->tid;
		r.id = e.key - 1;
		r.samples = e.count;
		ret = sc_writer_add(w, SC_REC_CCT_SAMPLES, &r, sizeof(r));
		if (ret)
			return ret;
		got += e.count;
	}
	*samples = got;
	return 0;
}

/*
 * The thread's timeline (engine.h, struct sc_eng_tl_chunk): each chunk
 * one SC_REC_TIMELINE record, its items copied as the runtime coded them
 * (SC_TL_TICKS: calls in ticks, with the conversion; SC_TL_NODEREL: most
 * call items name their node by the previous one's; the bases the chunk
 * header keeps; as many items as the bytes hold, which the reader
 * validates), then a record of the frames still open, ending at the
 * thread's last event.
 */
static int emit_timeline(struct sc_writer *w, const void *arena, uint64_t arena_len, int fd,
			 const struct sc_eng_thread *t, const struct sc_eng_more *more, uint32_t proc_id,
			 const struct sc_tick_conv *conv, struct sc_cct_totals *tot)
{
	const uint8_t *base = arena;
	uint64_t off = more->tl_head_off, cur_off, steps = 0, bytes = 0;
	/* the chunks count in units of 2^tl_shift ticks: the record's "ticks"
	 * are those units (tick0 rounded up to one, ns0 moved with it) */
	unsigned shift = t->tl_shift < SC_ENG_TL_SHIFT_MAX ? t->tl_shift : SC_ENG_TL_SHIFT_MAX;
	uint64_t unit = 1ull << shift, tick0_u = (conv->tick0 + unit - 1) >> shift;
	struct sc_rec_timeline r = {
		.proc_id = proc_id, .tid = t->tid, .flags = SC_TL_TICKS,
		.dropped = more->tl_dropped, .filtered = more->tl_filtered,
		.tick0 = tick0_u,
		.ns0 = conv->ns0 + (uint64_t)((double)((tick0_u << shift) - conv->tick0) * conv->ns_per_tick + 0.5),
		.ns_per_tick = conv->ns_per_tick * (double)unit,
	};
	uint64_t tick, os_ns;
	uint8_t *copy = NULL;
	int ret = 0;

	if (!t->tl_cur && !off)
		return 0;
	copy = malloc(SC_ENG_TL_CHUNK + SC_ENG_TL_STAGE + SC_ENG_TL_ROOM);
	if (!copy)
		return -ENOMEM;
	cur_off = (uint64_t)((uintptr_t)t->tl_cur - (uintptr_t)t->base);
	while (off && !ret && steps++ < arena_len / SC_ENG_TL_CHUNK + 1) {
		struct sc_eng_tl_chunk c;
		uint64_t len, pending = 0;

		if (!range_ok(arena_len, off, SC_ENG_TL_CHUNK))
			break;
		memcpy(&c, base + off, sizeof(c));
		len = c.len;
		if (len > SC_ENG_TL_CHUNK - sizeof(c))
			break;
		/* the last chunk's items go on in the staging buffer, up to
		 * tl_cur, unless a copy of them was counted (flush_to) */
		if (!c.next_off && range_ok(arena_len, c.stage_off, SC_ENG_TL_STAGE + SC_ENG_TL_ROOM) &&
		    cur_off >= c.stage_off && cur_off <= c.stage_off + SC_ENG_TL_STAGE + SC_ENG_TL_ROOM &&
		    !(c.flush_to && c.flush_to == len))
			pending = cur_off - c.stage_off;
		/* written as they are, straight from the image, uncompressed
		 * (zstd's fast mode took 60-100 ms of fib(32)'s 26 MB, more
		 * than the bytes it saved cost): the reader validates every
		 * item (a pass here over millions of them cost more) */
		if (len + pending) {
			const uint8_t *items = base + off + sizeof(c);

			/* read with pread from the image's file when it is
			 * given: the kernel copies from its own mapping of the
			 * pages, where a first touch of each page through ours
			 * cost more than the bytes (a VM's shadow page tables:
			 * the crc over the mapping took 15-18 ms of fib(32)'s
			 * 17.7 MB, 4-6 ms from the copy) */
			if (fd >= 0 && len && pread(fd, copy, len, (off_t)(off + sizeof(c))) == (ssize_t)len)
				items = copy;
			if (pending) {
				if (items != copy)
					memcpy(copy, items, len);
				memcpy(copy + len, base + c.stage_off, pending);
				items = copy;
			}
			r.base_tick = c.base_tick;
			r.base_ns = c.base_ns;
			r.nitems = SC_TL_ALL;
			r.flags = SC_TL_TICKS | SC_TL_NODEREL;
			ret = sc_writer_add_stored(w, SC_REC_TIMELINE, &r, sizeof(r), items, len + pending);
			bytes += len + pending;
		}
		off = c.next_off;
	}
	free(copy);
	tick = t->tl_last;
	os_ns = more->tl_last_ns;
	/* frames open at the end: calls that had not returned (in the same
	 * units as the chunks, rounded down alike, so that they nest) */
	{
		uintptr_t top = (uintptr_t)t->top, stack = (uintptr_t)t->stack;
		uint64_t depth = top >= stack ? (top - stack) / sizeof(struct sc_eng_frame) : 0;
		uint8_t buf[64 * 3 * SC_VARINT_MAX], *p = buf;
		uint32_t n = 0;

		r.base_tick = tick;
		r.base_ns = os_ns;
		r.flags = SC_TL_TICKS;
		if (depth && depth < t->stack_cap &&
		    range_ok(arena_len, t->stack_off, t->stack_cap * sizeof(struct sc_eng_frame))) {
			for (uint64_t i = depth; i >= 1 && !ret; i--) {
				struct sc_eng_frame f;
				struct sc_eng_node nd;

				memcpy(&f, base + t->stack_off + i * sizeof(f), sizeof(f));
				if (read_node(arena, arena_len, t, f.node, &nd) || nd.func == SC_ENG_DROP_FUNC ||
				    nd.id >= t->nnodes || f.entry > t->last_raw)
					continue;
				p = sc_varint_put(p, sc_zigzag((int64_t)((t->last_raw >> shift) - tick)) << 2 |
						     SC_TL_CALL);
				p = sc_varint_put(p, (t->last_raw >> shift) - (f.entry >> shift));
				p = sc_varint_put(p, (uint64_t)nd.id << 2 | SC_TL_F_OPEN);
				tick = t->last_raw >> shift;
				n++;
				if (p - buf > (long)sizeof(buf) - 3 * SC_VARINT_MAX || i == 1) {
					r.nitems = n;
					ret = sc_writer_add2(w, SC_REC_TIMELINE, &r, sizeof(r), buf, (size_t)(p - buf));
					bytes += (uint64_t)(p - buf);
					r.base_tick = tick;
					p = buf;
					n = 0;
				}
			}
		}
		if (n && !ret) {
			r.nitems = n;
			ret = sc_writer_add2(w, SC_REC_TIMELINE, &r, sizeof(r), buf, (size_t)(p - buf));
			bytes += (uint64_t)(p - buf);
		}
	}
	if (!bytes && !ret && (r.dropped || r.filtered)) {
		r.nitems = 0;
		ret = sc_writer_add(w, SC_REC_TIMELINE, &r, sizeof(r));
	}
	if (tot) {
		tot->tl_bytes = bytes;
		tot->tl_dropped = r.dropped;
		tot->tl_filtered = r.filtered;
	}
	return ret;
}

int sc_cct_emit_thread(struct sc_writer *w, const void *arena, uint64_t arena_len,
		       uint64_t thread_off, uint32_t proc_id,
		       const struct sc_tick_conv *conv, struct sc_cct_totals *tot)
{
	return sc_cct_emit_thread_fd(w, arena, arena_len, -1, thread_off, proc_id, conv, tot);
}

/* Bytes of the per-node arrays of sc_cct_emit_thread_fd, per node: the
 * widest elements first, each array stays aligned. */
#define PER_NODE_BYTES (sizeof(struct subtree) + sizeof(void *) + 3 * sizeof(uint64_t) + 2 * sizeof(uint32_t))

int sc_cct_emit_thread_fd(struct sc_writer *w, const void *arena, uint64_t arena_len, int fd,
			  uint64_t thread_off, uint32_t proc_id,
			  const struct sc_tick_conv *conv, struct sc_cct_totals *tot)
{
	struct sc_eng_thread t;
	struct sc_rec_thread_stats st = { 0 };
	struct open_adj adj = { 0 };
	struct node_view nv = { 0 };
	struct subtree *sub = NULL;
	uint8_t *per_node = NULL;
	uint64_t calls = 0, closed = 0, nodes_n = 0, sites = 0, slots, node_samples = 0;
	struct sc_eng_more more = { 0 };
	int ret, i;

	if (tot)
		memset(tot, 0, sizeof(*tot));
	ret = load_thread(arena, arena_len, thread_off, &t);
	if (ret)
		return ret;
	if (t.nnodes == 0 || t.nnodes > arena_len / SC_ENG_NODE_SIZE)
		return -EINVAL;
	/* the slow paths' counters (none in a damaged state: all zero) */
	if (range_ok(arena_len, t.more_off, sizeof(more)) && t.more_off)
		memcpy(&more, (const uint8_t *)arena + t.more_off, sizeof(more));
	if (t.flags & SC_ENG_THREAD_PACKED) {
		/* an ended thread's table: cs_count entries, packed */
		slots = t.cs_count;
		if (slots > SC_ENG_CS_MAX + SC_ENG_CS_PROBE ||
		    !range_ok(arena_len, t.cs_off, slots * sizeof(struct sc_eng_cs)))
			return -EINVAL;
	} else {
		slots = t.cs_mask + 1;
		if (slots > SC_ENG_CS_MAX || (slots & (slots - 1)) ||
		    !range_ok(arena_len, t.cs_off, (slots + SC_ENG_CS_PROBE) * sizeof(struct sc_eng_cs)))
			return -EINVAL;
		slots += SC_ENG_CS_PROBE;
	}
	/* the per-node arrays in one block, so that nearly all of it is in
	 * huge pages (calloc_huge): on a VM a fresh 4 KiB page costs ~23 us
	 * of CPU, a huge page's share 0.4-6 us */
	per_node = calloc_huge(t.nnodes, PER_NODE_BYTES);
	if (per_node) {
		uint8_t *p = per_node;

		sub = (struct subtree *)p;
		p += t.nnodes * sizeof(*sub);
		nv.at = (const struct sc_eng_node **)p;
		p += t.nnodes * sizeof(*nv.at);
		nv.removed = (uint64_t *)p;
		p += t.nnodes * sizeof(*nv.removed);
		adj.node_ee = (uint64_t *)p;
		p += t.nnodes * sizeof(*adj.node_ee);
		adj.node_rem = (uint64_t *)p;
		p += t.nnodes * sizeof(*adj.node_rem);
		nv.parent = (uint32_t *)p;
		p += t.nnodes * sizeof(*nv.parent);
		adj.open = (uint32_t *)p;
	}
	adj.cs_ee = calloc(slots + 1, sizeof(uint64_t));
	adj.cs_ei = calloc(slots + 1, sizeof(uint64_t));
	adj.cs_osb = calloc(slots + 1, sizeof(uint64_t));
	adj.cs_seen = calloc(slots + 1, 1);
	if (!per_node || !adj.cs_ee || !adj.cs_ei || !adj.cs_osb || !adj.cs_seen) {
		ret = -ENOMEM;
		goto out;
	}
	if (open_frames(arena, arena_len, &t, slots, &adj)) {
		/* damaged stack: the completed calls still count */
		memset(adj.open, 0, t.nnodes * sizeof(*adj.open));
		memset(adj.node_ee, 0, t.nnodes * sizeof(*adj.node_ee));
		memset(adj.node_rem, 0, t.nnodes * sizeof(*adj.node_rem));
		memset(adj.cs_ee, 0, slots * sizeof(uint64_t));
		memset(adj.cs_ei, 0, slots * sizeof(uint64_t));
		memset(adj.cs_osb, 0, slots * sizeof(uint64_t));
		adj.nopen = 0;
	}
	/* a damaged chunk list ends the nodes there: the ones before are kept */
	ret = load_nodes(arena, arena_len, &t, &nv, &nodes_n);
	own_removed(&nv, nodes_n, adj.node_rem);
	subtree_sums(&nv, nodes_n, &adj, conv, sub);
	{
		int r2 = emit_nodes(w, &t, proc_id, &nv, nodes_n, sub, &adj, conv, &calls, &closed);
		if (r2)
			ret = r2;
	}
	if (!ret)
		ret = emit_callsites(w, arena, &t, proc_id, slots, &adj, conv, &sites);
	if (!ret)
		ret = emit_samples(w, arena, arena_len, &t, &more, proc_id, nodes_n, &node_samples);
	if (!ret)
		ret = emit_timeline(w, arena, arena_len, fd, &t, &more, proc_id, conv, tot);

	st.proc_id = proc_id;
	st.tid = t.tid;
	st.events = calls + sub_clamped(closed, t.repair_closed) + t.stray_exits;
	st.lost_events = t.lost + t.lost_nested;
	st.repairs = t.repair_closed + t.stray_exits;
	st.open_frames = adj.nopen;
	for (i = 0; i < SC_OS_NCAT; i++)
		st.os_count[i] = t.os_count[i];
	st.first_ns = stamp_ns(conv, t.first);
	st.last_ns = stamp_ns(conv, t.last_raw);
	if (ret == 0 || ret == -EINVAL) {   /* not after a writer error */
		int r2 = sc_writer_add(w, SC_REC_THREAD_STATS, &st, sizeof(st));
		if (r2)
			ret = r2;
	}
	if (tot) {
		tot->calls = calls;
		tot->nodes = nodes_n;
		tot->callsites = sites;
		tot->events = st.events;
		tot->lost_events = st.lost_events;
		tot->repairs = st.repairs;
		tot->open_frames = st.open_frames;
		for (i = 0; i < SC_OS_NCAT; i++)
			tot->os_count[i] = st.os_count[i];
		tot->os_lost = t.os_lost;
		tot->first_ns = st.first_ns;
		tot->last_ns = st.last_ns;
		/* what the nodes hold, and what fell in the probes */
		tot->probe_samples = more.probe_samples <= more.samples ? more.probe_samples : 0;
		tot->samples = node_samples + tot->probe_samples;
		{
			uint64_t sum = 0;

			for (i = 0; i < 4; i++)
				sum += tot->repair_by[i] = more.repair_by[i];
			if (sum != st.repairs) {   /* an older or damaged state */
				memset(tot->repair_by, 0, sizeof(tot->repair_by));
				tot->repair_by[SC_REPAIR_OTHER] = st.repairs;
			}
		}
	}
out:
	free(per_node);
	free(adj.cs_ee);
	free(adj.cs_ei);
	free(adj.cs_osb);
	free(adj.cs_seen);
	return ret;
}
