/*
 * Building the calling-context tree (cct.h) from a loaded profile.
 *
 * Instrumentation: each thread instance's recorded nodes are indexed
 * (node id -> index, children lists), then walked depth first from their
 * tops; every recorded node lands on the model node of its function under
 * its parent's model node, so nodes of one path that resolved to the same
 * function (two entry addresses of one function, a tid reused by a second
 * thread, several threads when merged) become one, their values summed.
 * A recorded root (the thread's empty stack) is the model's top and is
 * not charged; a node whose parent is missing (damage) hangs from the top.
 *
 * Sampling: each (thread, stack, count) is expanded into frames, inline
 * frames as frames of their own, and inserted root first; the leaf gets
 * the count.
 *
 * Symbols are resolved in the same order the flat rows always did (nodes
 * of a thread in record order; a stack leaf first), so function ids, and
 * with them the order of tied rows, do not depend on the tree.
 */
#include "analysis/cct.h"
#include "analysis/internal.h"
#include "util/util.h"

#include <stdlib.h>
#include <string.h>

struct an_cct {
	struct an_profile *p;
	enum sc_method method;
	struct an_cct_node *nodes;
	size_t n, alloc;
	uint32_t *tops;
	struct {
		uint32_t proc_id, tid;
	} *groups;
	size_t ntops, atops, agroups;
	struct an_map top_map;        /* (proc_id, tid) -> group */
	struct an_map child_map;      /* sampling: (parent id, func) -> child id, while building */
	uint64_t total, app_total, smp_total;
};

/* ---- nodes -------------------------------------------------------------- */

static uint32_t new_node(struct an_cct *c, uint32_t parent, uint32_t func)
{
	struct an_cct_node *nd;
	uint32_t id = (uint32_t)c->n;

	ALLOC_GROW(c->nodes, c->n + 1, c->alloc);
	nd = &c->nodes[c->n++];
	*nd = (struct an_cct_node){ .func = func, .parent = parent,
				    .first_child = AN_CCT_NONE, .next_sibling = AN_CCT_NONE };
	if (parent != AN_CCT_NONE) {
		struct an_cct_node *pn = &c->nodes[parent];

		nd->group = pn->group;
		nd->depth = pn->depth + 1;
		/* children are linked newest first; views sort them anyway */
		nd->next_sibling = pn->first_child;
		pn->first_child = id;
	}
	return id;
}

static uint32_t top_of(struct an_cct *c, enum an_cct_split split, uint32_t proc_id, uint32_t tid)
{
	uint64_t a = split == AN_CCT_MERGED ? 0 : proc_id;
	uint64_t b = split == AN_CCT_BY_THREAD ? tid : 0;
	bool found;
	uint32_t g = an_map_put(&c->top_map, a, b, (uint32_t)c->ntops, &found);
	uint32_t id;

	if (found)
		return c->tops[g];
	id = new_node(c, AN_CCT_NONE, AN_CCT_NONE);
	c->nodes[id].group = g;
	ALLOC_GROW(c->tops, c->ntops + 1, c->atops);
	ALLOC_GROW(c->groups, c->ntops + 1, c->agroups);
	c->tops[g] = id;
	c->groups[g].proc_id = (uint32_t)a;
	c->groups[g].tid = (uint32_t)b;
	c->ntops++;
	return id;
}

static uint32_t child_of(struct an_cct *c, uint32_t parent, uint32_t func)
{
	bool found;
	uint32_t id = an_map_put(&c->child_map, parent, func, (uint32_t)c->n, &found);

	return found ? id : new_node(c, parent, func);
}

/* ---- instrumentation ---------------------------------------------------- */

/* One thread instance's recorded nodes, indexed. */
struct rtree {
	size_t n;
	uint32_t *par;            /* parent index, AN_NONE for tops */
	bool *alive;              /* the last copy of its node id */
	uint32_t *cstart, *child; /* CSR children lists */
	uint64_t *smp;            /* sampled shares: samples per index */
};

static void rtree_release(struct rtree *t)
{
	free(t->smp);
	free(t->par);
	free(t->alive);
	free(t->cstart);
	free(t->child);
}

/*
 * Index a thread's nodes: a node id seen twice keeps its last copy; a node
 * whose parent is missing hangs from the top.  Recorders number nodes
 * densely from 0, so an array maps ids; a hash is the fallback for sparse
 * ids (damage, or a recorder that numbers otherwise).
 */
static void rtree_build(const struct an_thread *th, struct rtree *t)
{
	size_t n = th->nnodes;
	uint32_t max_id = 0, *pos = NULL, *fill;
	size_t npos = 0;
	struct an_map ids = { 0 };

	t->n = n;
	t->par = xmalloc((n ? n : 1) * sizeof(*t->par));
	t->alive = xcalloc(n ? n : 1, sizeof(*t->alive));
	t->cstart = xcalloc(n + 1, sizeof(*t->cstart));
	t->child = xmalloc((n ? n : 1) * sizeof(*t->child));
	for (size_t i = 0; i < n; i++)
		if (th->nodes[i].id > max_id)
			max_id = th->nodes[i].id;
	if (max_id < 2 * n + 1024) {
		npos = (size_t)max_id + 1;
		pos = xmalloc(npos * sizeof(*pos));
		memset(pos, 0xff, npos * sizeof(*pos));
	}
	for (size_t i = 0; i < n; i++) {
		uint32_t id = th->nodes[i].id, prev;

		if (pos) {
			prev = pos[id];
			pos[id] = (uint32_t)i;
		} else {
			prev = an_map_get(&ids, id, 0);
			an_map_set(&ids, id, 0, (uint32_t)i);
		}
		if (prev != AN_NONE)
			t->alive[prev] = false;
		t->alive[i] = true;
	}
	for (size_t i = 0; i < n; i++) {
		uint32_t parent = th->nodes[i].parent, pi = AN_NONE;

		t->par[i] = AN_NONE;
		if (!t->alive[i])
			continue;
		if (parent != UINT32_MAX)
			pi = pos ? (parent < npos ? pos[parent] : AN_NONE) : an_map_get(&ids, parent, 0);
		if (pi == i)
			pi = AN_NONE;
		t->par[i] = pi;
		if (pi != AN_NONE)
			t->cstart[pi + 1]++;
	}
	for (size_t i = 0; i < n; i++)
		t->cstart[i + 1] += t->cstart[i];
	fill = xmalloc((n + 1) * sizeof(*fill));
	memcpy(fill, t->cstart, (n + 1) * sizeof(*fill));
	for (size_t i = 0; i < n; i++)
		if (t->alive[i] && t->par[i] != AN_NONE)
			t->child[fill[t->par[i]]++] = (uint32_t)i;
	free(fill);
	/* a node's samples go to its last copy, as its other values do; ids
	 * of no node are left out (an_shares_check() reports them) */
	t->smp = xcalloc(n ? n : 1, sizeof(*t->smp));
	for (size_t j = 0; j < th->nsmp; j++) {
		uint32_t id = th->smp[j].id;
		uint32_t i = pos ? (id < npos ? pos[id] : AN_NONE) : an_map_get(&ids, id, 0);

		if (i != AN_NONE)
			t->smp[i] += th->smp[j].samples;
	}
	free(pos);
	an_map_release(&ids);
}

static void merge_calls(struct an_cct_node *m, const struct sc_rec_cct_node *nd,
			enum an_app_time app_time)
{
	m->calls += nd->calls;
	m->excl += nd->elapsed_excl;
	m->app_excl += app_time == AN_APP_EXACT ? nd->app_excl_exact : nd->app_excl;
	if (!nd->completed)
		return;
	if (!m->call.completed || nd->incl_min < m->call.incl_min)
		m->call.incl_min = nd->incl_min;
	if (!m->call.completed || nd->excl_min < m->call.excl_min)
		m->call.excl_min = nd->excl_min;
	if (nd->incl_max > m->call.incl_max)
		m->call.incl_max = nd->incl_max;
	if (nd->excl_max > m->call.excl_max)
		m->call.excl_max = nd->excl_max;
	m->call.incl_sum += nd->incl_sum;
	m->call.excl_sum += nd->excl_sum;
	m->call.completed += nd->completed;
}

/*
 * Children by function without a hash: per model node being filled, every
 * function already among its children is stamped with the visit number
 * and remembers its child, so finding or creating a child is two array
 * reads.  A model node fed by several recorded nodes (threads merged, two
 * addresses of one function) has its existing children stamped first.
 */
struct filler {
	uint32_t *stamp, *slot;   /* per function id */
	uint32_t visit;
};

static void fill_begin(struct an_cct *c, struct filler *fl, uint32_t m)
{
	fl->visit++;
	for (uint32_t k = c->nodes[m].first_child; k != AN_CCT_NONE; k = c->nodes[k].next_sibling) {
		fl->stamp[c->nodes[k].func] = fl->visit;
		fl->slot[c->nodes[k].func] = k;
	}
}

static uint32_t fill_child(struct an_cct *c, struct filler *fl, uint32_t m, uint32_t func)
{
	if (fl->stamp[func] != fl->visit) {
		fl->stamp[func] = fl->visit;
		fl->slot[func] = new_node(c, m, func);
	}
	return fl->slot[func];
}

/* Recorded node s and everything below it, s going under model node
 * mparent (s itself is mparent when it is the thread's root). */
static void insert_from(struct an_cct *c, const struct an_thread *th, const struct rtree *t,
			const uint32_t *fid, uint32_t s, uint32_t mparent, bool *visited,
			uint32_t *stack, uint32_t *mid, struct filler *fl, enum an_app_time app_time)
{
	size_t sp = 0;

	visited[s] = true;
	if (th->nodes[s].parent == UINT32_MAX) {
		mid[s] = mparent;
		/* the root's samples: no call open, the top's own */
		c->nodes[mparent].smp_excl += t->smp[s];
	} else {
		fill_begin(c, fl, mparent);
		mid[s] = fill_child(c, fl, mparent, fid[s]);
		merge_calls(&c->nodes[mid[s]], &th->nodes[s], app_time);
		c->nodes[mid[s]].smp_excl += t->smp[s];
	}
	stack[sp++] = s;
	while (sp) {
		uint32_t r = stack[--sp], m = mid[r];

		fill_begin(c, fl, m);
		for (uint32_t k = t->cstart[r]; k < t->cstart[r + 1]; k++) {
			uint32_t ch = t->child[k];

			if (visited[ch])
				continue;
			visited[ch] = true;
			mid[ch] = fill_child(c, fl, m, fid[ch]);
			merge_calls(&c->nodes[mid[ch]], &th->nodes[ch], app_time);
			c->nodes[mid[ch]].smp_excl += t->smp[ch];
			stack[sp++] = ch;
		}
	}
}

static void build_instrument(struct an_cct *c, enum an_cct_split split, enum an_app_time app_time)
{
	struct an_profile *p = c->p;
	struct filler fl = { 0 };
	/* the last function id of a few recent entry addresses: a recording
	 * has far fewer functions than nodes */
	struct {
		uint64_t addr;
		uint32_t proc_id, func;
	} memo[1024];

	memset(memo, 0xff, sizeof(memo));
	for (size_t ti = 0; ti < p->nthreads; ti++) {
		const struct an_thread *th = &p->threads[ti];
		struct rtree t = { 0 };
		size_t n = th->nnodes ? th->nnodes : 1;
		uint32_t *fid = xmalloc(n * sizeof(*fid));
		uint32_t *stack = xmalloc(n * sizeof(*stack));
		uint32_t *mid = xmalloc(n * sizeof(*mid));
		bool *visited = xcalloc(n, sizeof(*visited));
		uint32_t top;

		rtree_build(th, &t);
		/* the hooks fire per real function: a node's function is the
		 * outermost frame of its entry address */
		for (size_t i = 0; i < t.n; i++) {
			const struct sc_rec_cct_node *nd = &th->nodes[i];
			size_t h = (size_t)(hash_u64(nd->func ^ nd->proc_id) & 1023);

			fid[i] = AN_NONE;
			if (!t.alive[i])
				continue;
			if (nd->parent == UINT32_MAX) {
				if (nd->elapsed_excl)
					pr_debug("thread %u: root node holds %llu ns with an empty stack; not charged",
						 th->tid, (unsigned long long)nd->elapsed_excl);
				continue;
			}
			if (memo[h].addr == nd->func && memo[h].proc_id == nd->proc_id) {
				fid[i] = memo[h].func;
				continue;
			}
			fid[i] = an_resolve_entry(p, nd->proc_id, nd->func);
			memo[h].addr = nd->func;
			memo[h].proc_id = nd->proc_id;
			memo[h].func = fid[i];
		}
		/* function ids met so far, each stamped at most once per visit */
		fl.stamp = xrealloc(fl.stamp, (p->nfuncs + 1) * sizeof(*fl.stamp));
		fl.slot = xrealloc(fl.slot, (p->nfuncs + 1) * sizeof(*fl.slot));
		memset(fl.stamp, 0, (p->nfuncs + 1) * sizeof(*fl.stamp));
		fl.visit = 0;
		top = top_of(c, split, th->proc_id, th->tid);
		for (size_t i = 0; i < t.n; i++)
			if (t.alive[i] && t.par[i] == AN_NONE && !visited[i])
				insert_from(c, th, &t, fid, (uint32_t)i, top, visited, stack, mid, &fl, app_time);
		/* nodes on a parent cycle (damaged file): each from the top */
		for (size_t i = 0; i < t.n; i++)
			if (t.alive[i] && !visited[i])
				insert_from(c, th, &t, fid, (uint32_t)i, top, visited, stack, mid, &fl, app_time);
		rtree_release(&t);
		free(fid);
		free(stack);
		free(mid);
		free(visited);
	}
	free(fl.stamp);
	free(fl.slot);
}

/* ---- sampling ----------------------------------------------------------- */

static enum an_stack_state stack_state(const struct an_stack *st)
{
	if (st && (st->flags & SC_STACK_ROOT))
		return AN_STACK_ROOT;
	if (st && (st->flags & SC_STACK_TRUNCATED))
		return AN_STACK_TRUNC;
	return AN_STACK_PARTIAL;
}

static void build_sample(struct an_cct *c, enum an_cct_split split)
{
	struct an_profile *p = c->p;
	struct an_span *spans = NULL;
	size_t aspans = 0;

	for (size_t k = 0; k < p->nsamples; k++) {
		const struct an_sample *sm = &p->samples[k];
		uint32_t si = an_map_get(&p->stack_map, sm->stack_id, 0);
		const struct an_stack *st = si == AN_NONE ? NULL : &p->stacks[si];
		uint32_t nf = st ? st->nframes : 0, node = top_of(c, split, sm->proc_id, sm->tid);
		struct an_cct_node *leaf;

		if (!nf) {
			uint32_t f = an_func_intern(p, "[unknown]", st ? "[no frames]" : "[missing stack]");

			node = child_of(c, node, f);
		} else {
			ALLOC_GROW(spans, nf, aspans);
			/* leaf first, as the flat rows always resolved: return
			 * addresses, except the user pc after kernel frames */
			for (uint32_t i = 0; i < nf; i++) {
				uint64_t ip = p->ips[st->ip + i];
				bool ret = i > 0 && !(p->ips[st->ip + i - 1] >= AN_KERNEL_START &&
						      ip < AN_KERNEL_START);

				spans[i] = an_resolve(p, sm->proc_id, ip, ret);
			}
			for (uint32_t i = nf; i-- > 0;)
				for (uint32_t j = spans[i].n; j-- > 0;) {
					const struct an_frame *f = &p->frames[spans[i].first + j];

					node = child_of(c, node, f->func);
					c->nodes[node].inlined |= f->inlined != 0;
				}
		}
		leaf = &c->nodes[node];
		leaf->excl += sm->count;
		leaf->state[stack_state(st)][st && (st->flags & SC_STACK_KERNEL)] += sm->count;
	}
	free(spans);
}

/* ---- the tree ----------------------------------------------------------- */

static struct an_cct *cct_build(struct an_profile *p, enum an_cct_split split,
				enum an_app_time app_time)
{
	struct an_cct *c = xcalloc(1, sizeof(*c));

	c->p = p;
	c->method = an_profile_method(p);
	/* room for every node at once: at most one per recorded node (per
	 * frame of each distinct stack, inline frames aside) */
	if (c->method == SC_METHOD_INSTRUMENT) {
		size_t n = 0;

		for (size_t i = 0; i < p->nthreads; i++)
			n += p->threads[i].nnodes;
		ALLOC_GROW(c->nodes, n + p->nthreads + 1, c->alloc);
	}
	if (c->method == SC_METHOD_SAMPLE)
		build_sample(c, split);
	else if (c->method == SC_METHOD_INSTRUMENT)
		build_instrument(c, split, app_time);
	an_map_release(&c->child_map);
	an_map_release(&c->top_map);
	for (size_t i = 0; i < c->n; i++) {
		c->nodes[i].incl = c->nodes[i].excl;
		c->nodes[i].app_incl = c->nodes[i].app_excl;
		c->nodes[i].smp_incl = c->nodes[i].smp_excl;
		c->total += c->nodes[i].excl;
		c->app_total += c->nodes[i].app_excl;
		c->smp_total += c->nodes[i].smp_excl;
	}
	for (size_t i = c->n; i-- > 0;) {
		const struct an_cct_node *nd = &c->nodes[i];

		if (nd->parent != AN_CCT_NONE) {
			c->nodes[nd->parent].incl += nd->incl;
			c->nodes[nd->parent].app_incl += nd->app_incl;
			c->nodes[nd->parent].smp_incl += nd->smp_incl;
		}
	}
	return c;
}

void an_cct_free(struct an_cct *c)
{
	if (!c)
		return;
	free(c->nodes);
	free(c->tops);
	free(c->groups);
	an_map_release(&c->top_map);
	an_map_release(&c->child_map);
	free(c);
}

const struct an_cct *an_profile_cct(struct an_profile *p, enum an_cct_split split,
				    enum an_app_time app_time)
{
	struct an_cct **slot = &p->cct[split][app_time == AN_APP_EXACT];

	if (!*slot)
		*slot = cct_build(p, split, app_time);
	return *slot;
}

struct an_profile *an_cct_profile(const struct an_cct *c)
{
	return c->p;
}

enum sc_method an_cct_method(const struct an_cct *c)
{
	return c->method;
}

size_t an_cct_size(const struct an_cct *c)
{
	return c->n;
}

const struct an_cct_node *an_cct_node(const struct an_cct *c, uint32_t id)
{
	return id < c->n ? &c->nodes[id] : NULL;
}

size_t an_cct_tops(const struct an_cct *c, const uint32_t **ids)
{
	*ids = c->tops;
	return c->ntops;
}

void an_cct_group(const struct an_cct *c, uint32_t g, uint32_t *proc_id, uint32_t *tid)
{
	*proc_id = g < c->ntops ? c->groups[g].proc_id : 0;
	*tid = g < c->ntops ? c->groups[g].tid : 0;
}

uint32_t an_cct_group_pid(const struct an_cct *c, uint32_t g)
{
	return g < c->ntops ? an_proc_pid(c->p, c->groups[g].proc_id) : 0;
}

const char *an_cct_group_exe(const struct an_cct *c, uint32_t g)
{
	return g < c->ntops ? an_proc_exe(c->p, c->groups[g].proc_id) : NULL;
}

const char *an_cct_group_thread_name(const struct an_cct *c, uint32_t g)
{
	return g < c->ntops ? an_thread_name(c->p, c->groups[g].proc_id, c->groups[g].tid) : NULL;
}

size_t an_cct_nfuncs(const struct an_cct *c)
{
	return c->p->nfuncs;
}

const char *an_cct_func_name(const struct an_cct *c, uint32_t func)
{
	return func < c->p->nfuncs ? an_str(&c->p->strs, c->p->funcs[func].name) : NULL;
}

const char *an_cct_func_module(const struct an_cct *c, uint32_t func)
{
	return func < c->p->nfuncs ? an_str(&c->p->strs, c->p->funcs[func].module) : NULL;
}

uint32_t an_cct_func_mod(const struct an_cct *c, uint32_t func)
{
	return func < c->p->nfuncs ? c->p->funcs[func].mod : AN_CCT_NONE;
}

const char *an_cct_func_system_name(const struct an_cct *c, uint32_t func)
{
	return func < c->p->nfuncs ? an_str(&c->p->strs, c->p->funcs[func].system) : NULL;
}

const char *an_cct_func_file(const struct an_cct *c, uint32_t func)
{
	return func < c->p->nfuncs ? an_str(&c->p->strs, c->p->funcs[func].file) : NULL;
}

unsigned an_cct_func_line(const struct an_cct *c, uint32_t func)
{
	return func < c->p->nfuncs ? c->p->funcs[func].line : 0;
}

size_t an_cct_func_build_id(const struct an_cct *c, uint32_t func, const uint8_t **id)
{
	uint32_t i;

	if (func >= c->p->nfuncs)
		return 0;
	i = an_map_get(&c->p->bid_map, c->p->funcs[func].module, 0);
	if (i == AN_NONE)
		return 0;
	*id = c->p->bids[i].id;
	return c->p->bids[i].len;
}

uint64_t an_cct_total(const struct an_cct *c)
{
	return c->total;
}

uint64_t an_cct_app_total(const struct an_cct *c)
{
	return c->app_total;
}

uint64_t an_cct_smp_total(const struct an_cct *c)
{
	return c->smp_total;
}

/* ---- fold --------------------------------------------------------------- */

static void fold_own(struct an_fold *a, const struct an_cct_node *nd, bool calls)
{
	a->used = true;
	a->excl += nd->excl;
	a->app_excl += nd->app_excl;
	a->smp_excl += nd->smp_excl;
	if (!calls)
		return;
	a->calls += nd->calls;
	an_fold_call_stats(a, nd);
}

void an_fold_call_stats(struct an_fold *a, const struct an_cct_node *nd)
{
	if (!nd->call.completed)
		return;
	if (!a->completed || nd->call.incl_min < a->incl_min)
		a->incl_min = nd->call.incl_min;
	if (!a->completed || nd->call.excl_min < a->excl_min)
		a->excl_min = nd->call.excl_min;
	if (nd->call.incl_max > a->incl_max)
		a->incl_max = nd->call.incl_max;
	if (nd->call.excl_max > a->excl_max)
		a->excl_max = nd->call.excl_max;
	a->incl_sum += nd->call.incl_sum;
	a->excl_sum += nd->call.excl_sum;
	a->completed += nd->call.completed;
}

/*
 * Depth first without a stack (first child, next sibling, parent); cnt[k]
 * counts the nodes of key k on the current path, so the node that raises
 * it from 0 is an outermost one and brings its subtree's sum.
 */
void an_cct_fold(const struct an_cct *c, const uint32_t *key, size_t nkeys, struct an_fold *acc)
{
	uint32_t *cnt = xcalloc(nkeys ? nkeys : 1, sizeof(*cnt));
	bool calls = c->method == SC_METHOD_INSTRUMENT;

	for (size_t t = 0; t < c->ntops; t++) {
		uint32_t top = c->tops[t], n = top;

		for (;;) {
			const struct an_cct_node *nd = &c->nodes[n];
			uint32_t k = key[n];

			if (k != AN_CCT_NONE) {
				if (!cnt[k]++) {
					acc[k].incl += nd->incl;
					acc[k].app_incl += nd->app_incl;
					acc[k].smp_incl += nd->smp_incl;
				}
				fold_own(&acc[k], nd, calls);
			}
			if (nd->first_child != AN_CCT_NONE) {
				n = nd->first_child;
				continue;
			}
			for (;;) {
				if (key[n] != AN_CCT_NONE)
					cnt[key[n]]--;
				if (n == top)
					goto next_top;
				if (c->nodes[n].next_sibling != AN_CCT_NONE) {
					n = c->nodes[n].next_sibling;
					break;
				}
				n = c->nodes[n].parent;
			}
		}
next_top:;
	}
	free(cnt);
}

uint32_t an_cct_next(const struct an_cct *c, uint32_t id, uint32_t *left)
{
	const struct an_cct_node *nd = &c->nodes[id];

	*left = 0;
	if (nd->first_child != AN_CCT_NONE)
		return nd->first_child;
	for (;;) {
		(*left)++;
		if (nd->next_sibling != AN_CCT_NONE)
			return nd->next_sibling;
		nd = &c->nodes[nd->parent];
		if (nd->func == AN_CCT_NONE)
			return AN_CCT_NONE;
	}
}

/* ---- call edges --------------------------------------------------------- */

static int cmp_edge(const void *a, const void *b)
{
	const struct an_cct_edge *x = a, *y = b;

	if (x->caller != y->caller)
		return x->caller < y->caller ? -1 : 1;
	return x->callee < y->callee ? -1 : x->callee > y->callee;
}

static struct an_cct_edge *edge_at(struct an_map *m, struct an_cct_edge **v, size_t *n,
				   size_t *alloc, uint32_t caller, uint32_t callee)
{
	bool found;
	uint32_t i = an_map_put(m, caller, callee, (uint32_t)*n, &found);

	if (!found) {
		ALLOC_GROW(*v, *n + 1, *alloc);
		(*v)[*n] = (struct an_cct_edge){ .caller = caller, .callee = callee };
		(*n)++;
	}
	return &(*v)[i];
}

/*
 * One depth-first walk.  A node m of function D under a node of function F
 * adds its calls and inclusive values to the edge F->D.  Its inclusive
 * value belongs to the innermost F above it, though: when m's function
 * already occurs above it, at node a, the intervals under m are ones in
 * which a was not the innermost of its function, so m's inclusive values
 * are taken back from the edge of a's child on the path (the edge that
 * counted them first).
 */
size_t an_cct_edges(const struct an_cct *c, struct an_cct_edge **out)
{
	size_t nfuncs = c->p->nfuncs, n = 0, alloc = 0, depth_cap = 64;
	uint32_t *last = xmalloc((nfuncs ? nfuncs : 1) * sizeof(*last));
	uint32_t *prev = xmalloc((c->n ? c->n : 1) * sizeof(*prev));
	uint32_t *path = xmalloc(depth_cap * sizeof(*path));
	struct an_cct_edge *v = NULL;
	struct an_map map = { 0 };

	for (size_t i = 0; i < nfuncs; i++)
		last[i] = AN_CCT_NONE;
	for (size_t t = 0; t < c->ntops; t++) {
		uint32_t left;

		path[0] = c->tops[t];
		for (uint32_t id = c->nodes[c->tops[t]].first_child; id != AN_CCT_NONE;) {
			const struct an_cct_node *nd = &c->nodes[id];
			const struct an_cct_node *up = &c->nodes[nd->parent];
			uint32_t next, done;

			if (nd->depth >= depth_cap) {
				depth_cap *= 2;
				path = xrealloc(path, depth_cap * sizeof(*path));
			}
			path[nd->depth] = id;
			if (up->func != AN_CCT_NONE) {
				struct an_cct_edge *e = edge_at(&map, &v, &n, &alloc, up->func, nd->func);

				e->calls += nd->calls;
				e->incl += nd->incl;
				e->app_incl += nd->app_incl;
			}
			prev[id] = last[nd->func];
			if (prev[id] != AN_CCT_NONE) {
				const struct an_cct_node *a = &c->nodes[prev[id]];
				uint32_t first = path[a->depth + 1];
				struct an_cct_edge *e = edge_at(&map, &v, &n, &alloc, nd->func,
								c->nodes[first].func);

				e->incl -= nd->incl;
				e->app_incl -= nd->app_incl;
			}
			last[nd->func] = id;
			next = an_cct_next(c, id, &left);
			/* the finished nodes no longer stand above what follows */
			for (done = id; left--; done = c->nodes[done].parent)
				last[c->nodes[done].func] = prev[done];
			id = next;
		}
	}
	if (n > 1)
		qsort(v, n, sizeof(*v), cmp_edge);
	free(last);
	free(prev);
	free(path);
	an_map_release(&map);
	*out = v;
	return n;
}
