/*
 * Instrumentation rows from calling-context trees (SPEC section 2).
 *
 * Every interval of a thread was charged by the recorder's engine to the
 * CCT node of the stack as it stood: the node's stored exclusive values.
 * For any grouping key (function, module, thread, process) a key is on the
 * stack of an interval iff the interval's node lies in the subtree of an
 * outermost node of that key (a node with no ancestor of the same key), and
 * those subtrees are disjoint.  So
 *     inclusive(key) = sum over outermost nodes n of key of subtree(n),
 *     exclusive(key) = sum over nodes n of key of own(n),
 * computed in one depth-first walk per thread with a per-key "on the path"
 * counter: O(nodes), charged once for recursion by construction.
 */
#include "analysis/internal.h"
#include "util/util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct acc {
	uint64_t calls, completed;
	uint64_t repairs, open_frames;   /* thread and process groupings */
	uint64_t ei, ee, ai, ae;
	uint64_t min_i, max_i, sum_i, min_e, max_e, sum_e;
	bool used;
};

/* One thread instance's nodes, indexed: alive nodes, parent index, children. */
struct tree {
	size_t n;
	uint32_t *par;            /* parent index, AN_NONE for tops */
	bool *alive;
	uint32_t *cstart, *child; /* CSR children lists */
	bool *root;               /* the thread's root node (func 0) */
};

static void tree_release(struct tree *t)
{
	free(t->par);
	free(t->alive);
	free(t->cstart);
	free(t->child);
	free(t->root);
	memset(t, 0, sizeof(*t));
}

/*
 * Node id -> index.  Recorders number a thread's nodes densely from 0, so a
 * plain array serves; a hash is the fallback for sparse ids (damage, or a
 * recorder that numbers otherwise).
 */
struct id_index {
	uint32_t *pos;            /* dense: id -> index, AN_NONE if absent */
	size_t npos;
	struct an_map map;        /* sparse */
};

static uint32_t id_get(const struct id_index *x, uint32_t id)
{
	if (x->pos)
		return id < x->npos ? x->pos[id] : AN_NONE;
	return an_map_get(&x->map, id, 0);
}

/* Index id -> i; returns the index id had before, or AN_NONE. */
static uint32_t id_set(struct id_index *x, uint32_t id, uint32_t i)
{
	uint32_t prev;

	if (x->pos) {
		prev = x->pos[id];
		x->pos[id] = i;
		return prev;
	}
	prev = an_map_get(&x->map, id, 0);
	an_map_set(&x->map, id, 0, i);
	return prev;
}

/*
 * Index a thread's nodes.  A node id seen twice keeps its last copy; a node
 * whose parent is missing (a damaged file) hangs from the top.
 */
static void tree_build(const struct an_thread *th, struct tree *t)
{
	struct id_index ids = { 0 };
	size_t n = th->nnodes;
	uint32_t max_id = 0;

	t->n = n;
	t->par = xmalloc(n * sizeof(*t->par));
	t->alive = xcalloc(n, sizeof(*t->alive));
	t->root = xcalloc(n, sizeof(*t->root));
	t->cstart = xcalloc(n + 1, sizeof(*t->cstart));
	t->child = xmalloc(n * sizeof(*t->child));
	for (size_t i = 0; i < n; i++)
		if (th->nodes[i].id > max_id)
			max_id = th->nodes[i].id;
	if (max_id < 2 * n + 1024) {
		ids.npos = (size_t)max_id + 1;
		ids.pos = xmalloc(ids.npos * sizeof(*ids.pos));
		memset(ids.pos, 0xff, ids.npos * sizeof(*ids.pos));
	}
	for (size_t i = 0; i < n; i++) {
		uint32_t prev = id_set(&ids, th->nodes[i].id, (uint32_t)i);

		if (prev != AN_NONE)
			t->alive[prev] = false;
		t->alive[i] = true;
	}
	for (size_t i = 0; i < n; i++) {
		const struct sc_rec_cct_node *nd = &th->nodes[i];
		uint32_t pi = AN_NONE;

		if (!t->alive[i])
			continue;
		if (nd->parent == UINT32_MAX)
			t->root[i] = true;
		else
			pi = id_get(&ids, nd->parent);
		if (pi == i)
			pi = AN_NONE;
		t->par[i] = pi;
		if (pi != AN_NONE)
			t->cstart[pi + 1]++;
	}
	for (size_t i = 0; i < n; i++)
		t->cstart[i + 1] += t->cstart[i];
	{
		uint32_t *fill = xmalloc((n + 1) * sizeof(*fill));

		memcpy(fill, t->cstart, (n + 1) * sizeof(*fill));
		for (size_t i = 0; i < n; i++)
			if (t->alive[i] && t->par[i] != AN_NONE)
				t->child[fill[t->par[i]]++] = (uint32_t)i;
		free(fill);
	}
	free(ids.pos);
	an_map_release(&ids.map);
}

/* The function of a node: the outermost frame of its entry address (the
 * hooks fire per real, non-inlined function). */
static uint32_t node_func(struct an_profile *p, const struct sc_rec_cct_node *nd)
{
	struct an_span s = an_resolve(p, nd->proc_id, nd->func, false);

	return p->frames[s.first + s.n - 1].func;
}

static uint64_t node_app(const struct sc_rec_cct_node *nd, enum an_app_time mode)
{
	return mode == AN_APP_EXACT ? nd->app_excl_exact : nd->app_excl;
}

static void acc_call_stats(struct acc *a, const struct sc_rec_cct_node *nd)
{
	a->calls += nd->calls;
	if (!nd->completed)
		return;
	if (!a->completed || nd->incl_min < a->min_i)
		a->min_i = nd->incl_min;
	if (!a->completed || nd->excl_min < a->min_e)
		a->min_e = nd->excl_min;
	if (nd->incl_max > a->max_i)
		a->max_i = nd->incl_max;
	if (nd->excl_max > a->max_e)
		a->max_e = nd->excl_max;
	a->sum_i += nd->incl_sum;
	a->sum_e += nd->excl_sum;
	a->completed += nd->completed;
}

struct walk {
	uint32_t *stack, *pos;
	uint64_t *sub_e, *sub_a;
	size_t cap;
};

/*
 * Depth-first walk of one thread's tree from top node s, charging acc[]
 * through key[] (AN_NONE: the root, charged to nothing).  cnt[key] counts
 * the key's nodes on the current path.
 */
static void walk_from(const struct an_thread *th, const struct tree *t, uint32_t s,
		      const uint32_t *key, uint32_t *cnt, struct acc *acc,
		      bool *visited, struct walk *w, enum an_app_time mode)
{
	size_t sp = 0;

	w->stack[sp] = s;
	w->pos[sp] = t->cstart[s];
	sp++;
	visited[s] = true;
	w->sub_e[s] = w->sub_a[s] = 0;
	if (key[s] != AN_NONE)
		cnt[key[s]]++;
	while (sp) {
		uint32_t top = w->stack[sp - 1];

		if (w->pos[sp - 1] < t->cstart[top + 1]) {
			uint32_t c = t->child[w->pos[sp - 1]++];

			if (visited[c])
				continue;
			visited[c] = true;
			w->sub_e[c] = w->sub_a[c] = 0;
			if (key[c] != AN_NONE)
				cnt[key[c]]++;
			w->stack[sp] = c;
			w->pos[sp] = t->cstart[c];
			sp++;
			continue;
		}
		sp--;
		if (key[top] != AN_NONE) {
			const struct sc_rec_cct_node *nd = &th->nodes[top];
			struct acc *a = &acc[key[top]];
			uint64_t app = node_app(nd, mode);

			w->sub_e[top] += nd->elapsed_excl;
			w->sub_a[top] += app;
			a->used = true;
			a->ee += nd->elapsed_excl;
			a->ae += app;
			acc_call_stats(a, nd);
			if (--cnt[key[top]] == 0) {
				a->ei += w->sub_e[top];
				a->ai += w->sub_a[top];
			}
		}
		if (sp) {
			w->sub_e[w->stack[sp - 1]] += w->sub_e[top];
			w->sub_a[w->stack[sp - 1]] += w->sub_a[top];
		}
	}
}

static void walk_thread(const struct an_thread *th, const struct tree *t, const uint32_t *key,
			uint32_t *cnt, struct acc *acc, struct walk *w, enum an_app_time mode)
{
	bool *visited = xcalloc(t->n ? t->n : 1, sizeof(*visited));

	if (w->cap < t->n) {
		w->cap = t->n;
		w->stack = xrealloc(w->stack, w->cap * sizeof(*w->stack));
		w->pos = xrealloc(w->pos, w->cap * sizeof(*w->pos));
		w->sub_e = xrealloc(w->sub_e, w->cap * sizeof(*w->sub_e));
		w->sub_a = xrealloc(w->sub_a, w->cap * sizeof(*w->sub_a));
	}
	for (size_t i = 0; i < t->n; i++)
		if (t->alive[i] && t->par[i] == AN_NONE && !visited[i])
			walk_from(th, t, (uint32_t)i, key, cnt, acc, visited, w, mode);
	/* nodes on a parent cycle (damaged file): walk each from itself */
	for (size_t i = 0; i < t->n; i++)
		if (t->alive[i] && !visited[i])
			walk_from(th, t, (uint32_t)i, key, cnt, acc, visited, w, mode);
	free(visited);
}

static void set_values(struct an_row *row, const struct acc *a, const struct an_session *s,
		       bool per_call)
{
	an_row_set_u(row, AN_COL_CALLS, a->calls);
	an_row_set_u(row, AN_COL_EI, a->ei);
	an_row_set_u(row, AN_COL_EE, a->ee);
	an_row_set_u(row, AN_COL_AI, a->ai);
	an_row_set_u(row, AN_COL_AE, a->ae);
	an_row_set_d(row, AN_COL_EI_PCT, an_pct(a->ei, s->elapsed_inclusive_ns));
	an_row_set_d(row, AN_COL_EE_PCT, an_pct(a->ee, s->elapsed_inclusive_ns));
	an_row_set_d(row, AN_COL_AI_PCT, an_pct(a->ai, s->application_inclusive_ns));
	an_row_set_d(row, AN_COL_AE_PCT, an_pct(a->ae, s->application_inclusive_ns));
	if (!per_call)
		return;
	/*
	 * Per call: over the calls that returned (repaired ones included).
	 * When none did (frames open at the end), SPEC's integer fields are 0
	 * and "completed" says there was nothing to measure.
	 */
	an_row_set_u(row, AN_COL_COMPLETED, a->completed);
	an_row_set_u(row, AN_COL_MIN_EI, a->completed ? a->min_i : 0);
	an_row_set_u(row, AN_COL_MAX_EI, a->completed ? a->max_i : 0);
	an_row_set_u(row, AN_COL_MEAN_EI, a->completed ? (a->sum_i + a->completed / 2) / a->completed : 0);
	an_row_set_u(row, AN_COL_MIN_EE, a->completed ? a->min_e : 0);
	an_row_set_u(row, AN_COL_MAX_EE, a->completed ? a->max_e : 0);
	an_row_set_u(row, AN_COL_MEAN_EE, a->completed ? (a->sum_e + a->completed / 2) / a->completed : 0);
}

static void callsite_rows(struct an_profile *p, struct an_report *r, size_t *alloc)
{
	struct an_map keys = { 0 };
	struct acc *acc = NULL;
	struct {
		uint32_t caller, callee, file, line;
	} *info = NULL;
	size_t n = 0, a_acc = 0, a_info = 0;

	for (size_t i = 0; i < p->nsites; i++) {
		const struct sc_rec_callsite *cs = &p->sites[i];
		struct an_span ss = an_resolve(p, cs->proc_id, cs->site, true);
		struct an_span cs_span = an_resolve(p, cs->proc_id, cs->callee, false);
		const struct an_frame *site = &p->frames[ss.first];
		uint32_t callee = p->frames[cs_span.first + cs_span.n - 1].func;
		bool found;
		uint32_t k = an_map_put(&keys, (uint64_t)site->func << 32 | callee,
					(uint64_t)site->file << 32 | site->line,
					(uint32_t)n, &found);

		if (!found) {
			ALLOC_GROW(acc, n + 1, a_acc);
			ALLOC_GROW(info, n + 1, a_info);
			memset(&acc[n], 0, sizeof(acc[n]));
			info[n].caller = site->func;
			info[n].callee = callee;
			info[n].file = site->file;
			info[n].line = site->line;
			n++;
		}
		acc[k].calls += cs->calls;
		acc[k].ei += cs->elapsed_incl;
		acc[k].ee += cs->elapsed_excl;
		acc[k].ai += cs->app_incl;
		acc[k].ae += cs->app_excl;
	}
	for (size_t k = 0; k < n; k++) {
		struct an_row *row = an_report_add_row(r, alloc);
		const struct an_func *caller = &p->funcs[info[k].caller];
		const struct an_func *callee = &p->funcs[info[k].callee];

		an_row_set_s(row, AN_COL_FUNCTION, an_str(&p->strs, caller->name));
		an_row_set_s(row, AN_COL_MODULE, an_str(&p->strs, caller->module));
		an_row_set_s(row, AN_COL_FILE, an_str(&p->strs, info[k].file));
		if (info[k].file != AN_NONE)     /* no line information: null, not 0 */
			an_row_set_u(row, AN_COL_LINE, info[k].line);
		an_row_set_s(row, AN_COL_CALLEE, an_str(&p->strs, callee->name));
		an_row_set_s(row, AN_COL_CALLEE_MODULE, an_str(&p->strs, callee->module));
		set_values(row, &acc[k], &r->session, false);
	}
	free(acc);
	free(info);
	an_map_release(&keys);
}

int an_build_instrument(struct an_profile *p, const struct an_report_options *o,
			struct an_report *r, char *err, size_t errlen)
{
	struct tree *trees = xcalloc(p->nthreads ? p->nthreads : 1, sizeof(*trees));
	uint32_t **fid = xcalloc(p->nthreads ? p->nthreads : 1, sizeof(*fid));
	struct an_map gmap = { 0 };  /* thread/process key -> dense group */
	struct acc *acc = NULL;
	struct {
		uint32_t proc_id, tid;
	} *group = NULL;             /* thread/process keys */
	uint32_t *cnt = NULL;
	size_t nkeys = 0, agroup = 0, alloc = 0;
	struct walk w = { 0 };
	struct an_session *s = &r->session;

	(void)err;
	(void)errlen;
	/* Pass 1: index every tree, symbolize every node, session totals. */
	for (size_t ti = 0; ti < p->nthreads; ti++) {
		const struct an_thread *th = &p->threads[ti];
		struct tree *t = &trees[ti];

		tree_build(th, t);
		fid[ti] = xmalloc((t->n ? t->n : 1) * sizeof(**fid));
		for (size_t i = 0; i < t->n; i++) {
			fid[ti][i] = AN_NONE;
			if (!t->alive[i])
				continue;
			if (t->root[i]) {
				if (th->nodes[i].elapsed_excl)
					pr_debug("thread %u: root node holds %llu ns with an empty stack; not charged",
						 th->tid, (unsigned long long)th->nodes[i].elapsed_excl);
				continue;
			}
			fid[ti][i] = node_func(p, &th->nodes[i]);
			if (p->funcs[fid[ti][i]].unnamed)
				an_unnamed_add(p, r, p->funcs[fid[ti][i]].mod,
					       th->nodes[i].elapsed_excl);
			s->elapsed_inclusive_ns += th->nodes[i].elapsed_excl;
			s->application_inclusive_ns += node_app(&th->nodes[i], o->app_time);
		}
	}

	if (o->by == AN_BY_CALLSITE) {
		callsite_rows(p, r, &alloc);
		goto out;
	}

	/* Pass 2: each node's group key, then the walk. */
	if (o->by == AN_BY_FUNCTION)
		nkeys = p->nfuncs;
	else if (o->by == AN_BY_MODULE)
		nkeys = p->nmods;
	for (size_t ti = 0; ti < p->nthreads; ti++) {
		const struct an_thread *th = &p->threads[ti];
		uint32_t g = AN_NONE;

		if (o->by == AN_BY_THREAD || o->by == AN_BY_PROCESS) {
			bool found;

			g = an_map_put(&gmap, th->proc_id, o->by == AN_BY_THREAD ? th->tid : 0,
				       (uint32_t)nkeys, &found);
			if (!found) {
				ALLOC_GROW(group, nkeys + 1, agroup);
				group[nkeys].proc_id = th->proc_id;
				group[nkeys].tid = th->tid;
				nkeys++;
			}
		}
		for (size_t i = 0; i < trees[ti].n; i++) {
			uint32_t *k = &fid[ti][i];

			if (*k == AN_NONE)
				continue;
			*k = o->by == AN_BY_MODULE ? p->funcs[*k].mod : g != AN_NONE ? g : *k;
		}
	}
	acc = xcalloc(nkeys ? nkeys : 1, sizeof(*acc));
	cnt = xcalloc(nkeys ? nkeys : 1, sizeof(*cnt));
	if (o->by == AN_BY_THREAD || o->by == AN_BY_PROCESS) {
		/* which thread or process had its stack repaired, or left open */
		for (size_t i = 0; i < p->ntstats; i++) {
			const struct an_tstats *ts = &p->tstats[i];
			uint32_t g = an_map_get(&gmap, ts->proc_id, o->by == AN_BY_THREAD ? ts->tid : 0);

			if (g == AN_NONE)
				continue;
			acc[g].repairs += ts->repairs;
			acc[g].open_frames += ts->open_frames;
		}
	}
	for (size_t ti = 0; ti < p->nthreads; ti++)
		walk_thread(&p->threads[ti], &trees[ti], fid[ti], cnt, acc, &w, o->app_time);

	for (size_t k = 0; k < nkeys; k++) {
		struct an_row *row;

		if (!acc[k].used)
			continue;
		row = an_report_add_row(r, &alloc);
		switch (o->by) {
		case AN_BY_FUNCTION:
			an_row_set_s(row, AN_COL_FUNCTION, an_str(&p->strs, p->funcs[k].name));
			an_row_set_s(row, AN_COL_MODULE, an_str(&p->strs, p->funcs[k].module));
			break;
		case AN_BY_MODULE:
			an_row_set_s(row, AN_COL_MODULE, an_str(&p->strs, p->mods[k]));
			break;
		case AN_BY_THREAD:
			an_row_set_u(row, AN_COL_TID, group[k].tid);
			an_row_set_u(row, AN_COL_PID, an_proc_pid(p, group[k].proc_id));
			an_row_set_s(row, AN_COL_THREAD_NAME,
				     an_thread_name(p, group[k].proc_id, group[k].tid));
			an_row_set_u(row, AN_COL_REPAIRS, acc[k].repairs);
			an_row_set_u(row, AN_COL_OPEN_FRAMES, acc[k].open_frames);
			break;
		case AN_BY_PROCESS:
			an_row_set_u(row, AN_COL_PID, an_proc_pid(p, group[k].proc_id));
			an_row_set_s(row, AN_COL_EXECUTABLE, an_proc_exe(p, group[k].proc_id));
			an_row_set_u(row, AN_COL_REPAIRS, acc[k].repairs);
			an_row_set_u(row, AN_COL_OPEN_FRAMES, acc[k].open_frames);
			break;
		default:
			break;
		}
		set_values(row, &acc[k], s, true);
	}
out:
	for (size_t ti = 0; ti < p->nthreads; ti++) {
		tree_release(&trees[ti]);
		free(fid[ti]);
	}
	free(trees);
	free(fid);
	free(acc);
	free(cnt);
	free(group);
	free(w.stack);
	free(w.pos);
	free(w.sub_e);
	free(w.sub_a);
	an_map_release(&gmap);
	return 0;
}
