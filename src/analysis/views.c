/*
 * The views of SPEC section 6 over the calling-context tree (cct.h): the
 * call tree with its threshold, depth limit and hot path, and the
 * caller/callee split of a function, with their invariant checkers.
 *
 * Both are linear in the tree's nodes plus a sort of what is shown: the
 * tree sorts only the children of shown nodes; the caller/callee split is
 * one depth-first walk per function matched.
 */
#include "analysis/cct.h"
#include "analysis/internal.h"
#include "util/util.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fail(char *why, size_t len, const char *fmt, ...) SC_PRINTF(3, 4);
static int fail(char *why, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, len, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/*
 * The session summary every view shows: the flat function report's, kept
 * with the view (the summary points into it).
 */
static int view_session(struct an_profile *p, enum an_app_time app_time, struct an_session *s,
			struct an_report **keep, char *err, size_t errlen)
{
	struct an_report_options o = { .by = AN_BY_FUNCTION, .app_time = app_time };
	int ret = an_report_build(p, &o, keep, err, errlen);

	if (ret < 0)
		return ret;
	*s = (*keep)->session;
	return 0;
}

/* A node's values as a row: the flat row's value columns. */
static void node_values(const struct an_session *s, const struct an_cct_node *nd,
			struct an_row *row, bool per_call)
{
	if (s->method == SC_METHOD_SAMPLE) {
		an_row_set_u(row, AN_COL_INCL_SAMPLES, nd->incl);
		an_row_set_u(row, AN_COL_EXCL_SAMPLES, nd->excl);
		an_row_set_d(row, AN_COL_INCL_PCT, an_pct(nd->incl, s->samples));
		an_row_set_d(row, AN_COL_EXCL_PCT, an_pct(nd->excl, s->samples));
		return;
	}
	an_row_set_u(row, AN_COL_CALLS, nd->calls);
	an_row_set_u(row, AN_COL_EI, nd->incl);
	an_row_set_u(row, AN_COL_EE, nd->excl);
	an_row_set_u(row, AN_COL_AI, nd->app_incl);
	an_row_set_u(row, AN_COL_AE, nd->app_excl);
	an_row_set_d(row, AN_COL_EI_PCT, an_pct(nd->incl, s->elapsed_inclusive_ns));
	an_row_set_d(row, AN_COL_EE_PCT, an_pct(nd->excl, s->elapsed_inclusive_ns));
	an_row_set_d(row, AN_COL_AI_PCT, an_pct(nd->app_incl, s->application_inclusive_ns));
	an_row_set_d(row, AN_COL_AE_PCT, an_pct(nd->app_excl, s->application_inclusive_ns));
	if (s->have_shares) {
		an_row_set_d(row, AN_COL_SMP_INCL_PCT, an_pct(nd->smp_incl, s->samples));
		an_row_set_d(row, AN_COL_SMP_EXCL_PCT, an_pct(nd->smp_excl, s->samples));
	}
	an_row_set_resolution(row, s);
	if (!per_call || nd->parent == AN_CCT_NONE)
		return;
	{
		uint64_t c = nd->call.completed;
		bool raw = s->raw_times;   /* raw sums, compensated extremes: the mean unbounded */

		an_row_set_u(row, AN_COL_COMPLETED, c);
		an_row_set_u(row, AN_COL_MIN_EI, c ? nd->call.incl_min : 0);
		an_row_set_u(row, AN_COL_MAX_EI, c ? nd->call.incl_max : 0);
		an_row_set_u(row, AN_COL_MEAN_EI, an_mean(nd->call.incl_sum, c, raw ? 0 : nd->call.incl_min,
							  raw ? UINT64_MAX : nd->call.incl_max));
		an_row_set_u(row, AN_COL_MIN_EE, c ? nd->call.excl_min : 0);
		an_row_set_u(row, AN_COL_MAX_EE, c ? nd->call.excl_max : 0);
		an_row_set_u(row, AN_COL_MEAN_EE, an_mean(nd->call.excl_sum, c, raw ? 0 : nd->call.excl_min,
							  raw ? UINT64_MAX : nd->call.excl_max));
	}
}

/* ---- tree --------------------------------------------------------------- */

uint64_t an_tree_value(const struct an_tree *t, uint32_t id)
{
	return an_cct_node(t->cct, id)->incl;
}

static uint64_t tree_total(const struct an_tree *t)
{
	return t->session.method == SC_METHOD_SAMPLE ? t->session.samples :
		t->session.elapsed_inclusive_ns;
}

static int cmp_nodes(const void *a, const void *b, void *arg)
{
	const struct an_tree *t = arg;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	uint64_t vx = an_tree_value(t, x), vy = an_tree_value(t, y);

	if (vx != vy)
		return vx > vy ? -1 : 1;
	return x < y ? -1 : x > y;     /* first met first */
}

/*
 * The hot path (SPEC section 6): from the largest root, the child with the
 * largest inclusive value for as long as it holds at least half of its
 * parent's, over the whole tree (hidden nodes too).  Kept as the chain of
 * node ids (the report's summary prints it) and as t->hot[] (the tree's
 * '*' marks).
 */
static void hot_path(struct an_tree *t, const uint32_t *tops, size_t ntops)
{
	const struct an_cct *c = t->cct;
	uint32_t best = AN_CCT_NONE;
	size_t alloc = 0;

	if (!ntops)
		return;
	if (t->merged) {
		const struct an_cct_node *top = an_cct_node(c, tops[0]);

		for (uint32_t k = top->first_child; k != AN_CCT_NONE; k = an_cct_node(c, k)->next_sibling)
			if (best == AN_CCT_NONE || cmp_nodes(&k, &best, t) < 0)
				best = k;
	} else {
		for (size_t g = 0; g < ntops; g++)
			if (best == AN_CCT_NONE || cmp_nodes(&tops[g], &best, t) < 0)
				best = tops[g];
	}
	while (best != AN_CCT_NONE && an_tree_value(t, best)) {
		const struct an_cct_node *nd = an_cct_node(c, best);
		uint32_t next = AN_CCT_NONE;

		t->hot[best] = true;
		ALLOC_GROW(t->hot_path, t->nhot + 1, alloc);
		t->hot_path[t->nhot++] = best;
		for (uint32_t k = nd->first_child; k != AN_CCT_NONE; k = an_cct_node(c, k)->next_sibling)
			if (next == AN_CCT_NONE || cmp_nodes(&k, &next, t) < 0)
				next = k;
		if (next != AN_CCT_NONE && 2 * an_tree_value(t, next) < an_tree_value(t, best))
			next = AN_CCT_NONE;
		best = next;
	}
}

int an_tree_build(struct an_profile *p, const struct an_tree_options *o, struct an_tree **out,
		  char *err, size_t errlen)
{
	enum an_cct_split split;
	struct an_tree *t;
	const struct an_cct *c;
	size_t n, ntops, nroots = 0;
	const uint32_t *tops;
	uint64_t limit;
	bool *shown;
	uint32_t *fill;
	int ret;

	*out = NULL;
	if (o->by != AN_BY_FUNCTION && o->by != AN_BY_THREAD && o->by != AN_BY_PROCESS) {
		snprintf(err, errlen, "--tree shows functions, merged or per --by thread or process; "
			 "not by %s", an_group_name(o->by));
		return -EINVAL;
	}
	t = xcalloc(1, sizeof(*t));
	ret = view_session(p, o->app_time, &t->session, &t->flat, err, errlen);
	if (ret < 0) {
		free(t);
		return ret;
	}
	split = o->by == AN_BY_THREAD ? AN_CCT_BY_THREAD :
		o->by == AN_BY_PROCESS ? AN_CCT_BY_PROCESS : AN_CCT_MERGED;
	c = t->cct = an_profile_cct(p, split, o->app_time);
	t->by = o->by;
	t->merged = split == AN_CCT_MERGED;
	t->cols = an_tree_colset(t->session.method, o->by, &t->ncols);
	t->ncols = an_cols_for(t->cols, t->ncols, &t->session, t->colbuf);
	t->cols = t->colbuf;
	n = an_cct_size(c);
	ntops = an_cct_tops(c, &tops);
	limit = (uint64_t)(o->threshold_pct / 100.0 * (double)tree_total(t) + 0.999999);
	if (o->threshold_pct <= 0)
		limit = 0;

	/* which nodes are shown: parents come before children in id order */
	shown = xcalloc(n ? n : 1, sizeof(*shown));
	t->hidden = xcalloc(n ? n : 1, sizeof(*t->hidden));
	t->hidden_value = xcalloc(n ? n : 1, sizeof(*t->hidden_value));
	t->kid_start = xcalloc(n + 1, sizeof(*t->kid_start));
	t->hot = xcalloc(n ? n : 1, sizeof(*t->hot));
	for (size_t i = 0; i < n; i++) {
		const struct an_cct_node *nd = an_cct_node(c, (uint32_t)i);
		bool top = nd->parent == AN_CCT_NONE;
		/* a merged tree's top is not shown: its functions are the roots */
		bool parent_shown = top || shown[nd->parent] ||
			(t->merged && an_cct_node(c, nd->parent)->parent == AN_CCT_NONE);

		if (top) {
			shown[i] = !t->merged && nd->incl >= limit;
			if (!t->merged && !shown[i]) {
				t->root_hidden++;
				t->root_hidden_value += nd->incl;
			}
			continue;
		}
		if (!parent_shown)
			continue;
		if (nd->incl >= limit && (!o->max_depth || nd->depth <= o->max_depth)) {
			shown[i] = true;
			if (t->merged && an_cct_node(c, nd->parent)->parent == AN_CCT_NONE)
				nroots++;
			else
				t->kid_start[nd->parent + 1]++;
		} else if (t->merged && an_cct_node(c, nd->parent)->parent == AN_CCT_NONE) {
			t->root_hidden++;
			t->root_hidden_value += nd->incl;
		} else {
			t->hidden[nd->parent]++;
			t->hidden_value[nd->parent] += nd->incl;
		}
	}
	for (size_t i = 0; i < n; i++)
		t->kid_start[i + 1] += t->kid_start[i];
	t->kids = xmalloc((t->kid_start[n] ? t->kid_start[n] : 1) * sizeof(*t->kids));
	fill = xmalloc((n + 1) * sizeof(*fill));
	memcpy(fill, t->kid_start, (n + 1) * sizeof(*fill));
	if (!t->merged)
		nroots = 0;
	t->roots = xmalloc((ntops + nroots + 1) * sizeof(*t->roots));
	for (size_t i = 0; i < n; i++) {
		const struct an_cct_node *nd = an_cct_node(c, (uint32_t)i);

		if (!shown[i])
			continue;
		if (nd->parent == AN_CCT_NONE)
			t->roots[t->nroots++] = (uint32_t)i;
		else if (t->merged && an_cct_node(c, nd->parent)->parent == AN_CCT_NONE)
			t->roots[t->nroots++] = (uint32_t)i;
		else
			t->kids[fill[nd->parent]++] = (uint32_t)i;
		t->shown++;
	}
	free(fill);
	qsort_r(t->roots, t->nroots, sizeof(*t->roots), cmp_nodes, t);
	for (size_t i = 0; i < n; i++)
		if (t->kid_start[i + 1] - t->kid_start[i] > 1)
			qsort_r(t->kids + t->kid_start[i], t->kid_start[i + 1] - t->kid_start[i],
				sizeof(*t->kids), cmp_nodes, t);
	hot_path(t, tops, ntops);
	free(shown);
	*out = t;
	return 0;
}

void an_tree_free(struct an_tree *t)
{
	if (!t)
		return;
	free(t->roots);
	free(t->kid_start);
	free(t->kids);
	free(t->hidden);
	free(t->hidden_value);
	free(t->hot);
	free(t->hot_path);
	an_report_free(t->flat);
	free(t);
}

size_t an_tree_children(const struct an_tree *t, uint32_t id, const uint32_t **ids)
{
	*ids = t->kids + t->kid_start[id];
	return t->kid_start[id + 1] - t->kid_start[id];
}

void an_tree_row(const struct an_tree *t, uint32_t id, struct an_row *row)
{
	const struct an_cct_node *nd = an_cct_node(t->cct, id);
	struct an_profile *p = NULL;

	memset(row, 0, sizeof(*row));
	row->order = id;
	if (nd->parent == AN_CCT_NONE) {
		uint32_t proc_id, tid;

		an_cct_group(t->cct, nd->group, &proc_id, &tid);
		p = an_cct_profile(t->cct);
		an_row_set_u(row, AN_COL_PID, an_proc_pid(p, proc_id));
		if (t->by == AN_BY_THREAD) {
			an_row_set_u(row, AN_COL_TID, tid);
			an_row_set_s(row, AN_COL_THREAD_NAME, an_thread_name(p, proc_id, tid));
		} else {
			an_row_set_s(row, AN_COL_EXECUTABLE, an_proc_exe(p, proc_id));
		}
	} else {
		an_row_set_s(row, AN_COL_FUNCTION, an_cct_func_name(t->cct, nd->func));
		an_row_set_s(row, AN_COL_MODULE, an_cct_func_module(t->cct, nd->func));
	}
	node_values(&t->session, nd, row, true);
}

int an_highlights_build(struct an_profile *p, enum an_app_time app_time, size_t ntop,
			struct an_highlights **out, char *err, size_t errlen)
{
	struct an_tree_options to = { .by = AN_BY_FUNCTION, .app_time = app_time };
	struct an_highlights *h = xcalloc(1, sizeof(*h));
	const struct an_report *flat;
	enum an_col excl;
	int ret;

	*out = NULL;
	ret = an_tree_build(p, &to, &h->tree, err, errlen);
	if (ret < 0) {
		free(h);
		return ret;
	}
	flat = h->tree->flat;
	excl = flat->session.method == SC_METHOD_SAMPLE ? AN_COL_EXCL_SAMPLES : AN_COL_EE;
	h->top = xmalloc((flat->nrows ? flat->nrows : 1) * sizeof(*h->top));
	if (flat->nrows)
		memcpy(h->top, flat->rows, flat->nrows * sizeof(*h->top));
	an_rows_sort(h->top, flat->nrows, excl);
	while (h->ntop < ntop && h->ntop < flat->nrows && h->top[h->ntop].v[excl].u)
		h->ntop++;
	h->npath = h->tree->nhot;
	h->path = xmalloc((h->npath ? h->npath : 1) * sizeof(*h->path));
	for (size_t i = 0; i < h->npath; i++)
		an_tree_row(h->tree, h->tree->hot_path[i], &h->path[i]);
	*out = h;
	return 0;
}

void an_highlights_free(struct an_highlights *h)
{
	if (!h)
		return;
	free(h->top);
	free(h->path);
	an_tree_free(h->tree);
	free(h);
}

int an_tree_check(const struct an_tree *t, char *why, size_t whylen)
{
	const struct an_cct *c = t->cct;
	const uint32_t *tops;
	size_t n = an_cct_size(c), ntops = an_cct_tops(c, &tops);
	uint64_t sum = 0;

	for (size_t i = 0; i < n; i++) {
		const struct an_cct_node *nd = an_cct_node(c, (uint32_t)i);
		uint64_t kids = 0, app_kids = 0, smp_kids = 0;
		const char *name = nd->func == AN_CCT_NONE ? "[top]" : an_cct_func_name(c, nd->func);

		for (uint32_t k = nd->first_child; k != AN_CCT_NONE; k = an_cct_node(c, k)->next_sibling) {
			const struct an_cct_node *kid = an_cct_node(c, k);

			if (kid->incl > nd->incl || kid->app_incl > nd->app_incl)
				return fail(why, whylen, "tree node %zu (%s): a child's inclusive value "
					    "%" PRIu64 " exceeds the node's %" PRIu64, i, name, kid->incl,
					    nd->incl);
			kids += kid->incl;
			app_kids += kid->app_incl;
			smp_kids += kid->smp_incl;
		}
		if (nd->smp_excl + smp_kids != nd->smp_incl)
			return fail(why, whylen, "tree node %zu (%s): own samples %" PRIu64 " + children's %"
				    PRIu64 " != its subtree's %" PRIu64, i, name, nd->smp_excl, smp_kids,
				    nd->smp_incl);
		if (nd->excl + kids != nd->incl || nd->app_excl + app_kids != nd->app_incl)
			return fail(why, whylen, "tree node %zu (%s): exclusive %" PRIu64 " + children %"
				    PRIu64 " != inclusive %" PRIu64, i, name, nd->excl, kids, nd->incl);
		if (!(nd->app_excl <= nd->excl && nd->excl <= nd->incl &&
		      nd->app_excl <= nd->app_incl && nd->app_incl <= nd->incl))
			return fail(why, whylen, "tree node %zu (%s): AE <= EE <= EI, AE <= AI <= EI broken",
				    i, name);
	}
	for (size_t g = 0; g < ntops; g++)
		sum += an_cct_node(c, tops[g])->incl;
	if (sum != tree_total(t))
		return fail(why, whylen, "tree roots sum to %" PRIu64 ", session total %" PRIu64,
			    sum, tree_total(t));
	if (t->session.method == SC_METHOD_INSTRUMENT) {
		uint64_t app = 0;

		for (size_t g = 0; g < ntops; g++)
			app += an_cct_node(c, tops[g])->app_incl;
		if (app != t->session.application_inclusive_ns)
			return fail(why, whylen, "tree roots' AI %" PRIu64 " != session AI %" PRIu64,
				    app, t->session.application_inclusive_ns);
		if (t->session.have_shares && an_cct_smp_total(c) != t->session.samples)
			return fail(why, whylen, "the tree's samples %" PRIu64 " != the session's %" PRIu64,
				    an_cct_smp_total(c), t->session.samples);
	}
	return 0;
}

/* ---- callers and callees ------------------------------------------------ */

/* Edit distance, case-insensitive, of the first 64 characters. */
static unsigned distance(const char *a, const char *b)
{
	unsigned row[65], la = (unsigned)strnlen(a, 64), lb = (unsigned)strnlen(b, 64);

	for (unsigned j = 0; j <= lb; j++)
		row[j] = j;
	for (unsigned i = 1; i <= la; i++) {
		unsigned diag = row[0];

		row[0] = i;
		for (unsigned j = 1; j <= lb; j++) {
			unsigned up = row[j];
			unsigned cost = tolower((unsigned char)a[i - 1]) != tolower((unsigned char)b[j - 1]);
			unsigned best = diag + cost;

			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			diag = up;
		}
	}
	return row[lb];
}

/* "closest: a, b, c" over the names of rows: a name holding the query comes
 * first, then by edit distance. */
static void closest_names(const struct an_report *r, const char *name, char *out, size_t len)
{
	struct {
		const char *s;
		unsigned d;
	} best[3] = { { NULL, UINT32_MAX }, { NULL, UINT32_MAX }, { NULL, UINT32_MAX } };
	size_t n = 0;

	for (size_t i = 0; i < r->nrows; i++) {
		const char *s = r->rows[i].v[AN_COL_FUNCTION].s;
		unsigned d;
		int k;

		if (!s)
			continue;
		d = strcasestr(s, name) ? 0 : distance(name, s);
		for (k = 0; k < 3; k++)
			if (best[k].s && !strcmp(best[k].s, s))
				break;
		if (k < 3)
			continue;
		for (k = 0; k < 3; k++)
			if (!best[k].s || d < best[k].d || (d == best[k].d && strcmp(s, best[k].s) < 0))
				break;
		if (k == 3)
			continue;
		memmove(&best[k + 1], &best[k], (size_t)(2 - k) * sizeof(best[0]));
		best[k].s = s;
		best[k].d = d;
	}
	out[0] = '\0';
	for (int k = 0; k < 3 && best[k].s; k++)
		n += (size_t)snprintf(out + n, n < len ? len - n : 0, "%s%s", k ? ", " : "", best[k].s);
}

static void edge_row(const struct an_callers *cc, struct an_profile *p, uint32_t func,
		     const struct an_fold *a, struct an_row *row, uint32_t order)
{
	const struct an_session *s = &cc->session;

	memset(row, 0, sizeof(*row));
	row->order = order;
	if (func == AN_NONE) {
		an_row_set_s(row, AN_COL_FUNCTION, "[root]");
	} else {
		an_row_set_s(row, AN_COL_FUNCTION, an_str(&p->strs, p->funcs[func].name));
		an_row_set_s(row, AN_COL_MODULE, an_str(&p->strs, p->funcs[func].module));
	}
	if (s->method == SC_METHOD_SAMPLE) {
		an_row_set_u(row, AN_COL_INCL_SAMPLES, a->incl);
		an_row_set_u(row, AN_COL_EXCL_SAMPLES, a->excl);
		an_row_set_d(row, AN_COL_INCL_PCT, an_pct(a->incl, s->samples));
		an_row_set_d(row, AN_COL_EXCL_PCT, an_pct(a->excl, s->samples));
		return;
	}
	an_row_set_u(row, AN_COL_CALLS, a->calls);
	an_row_set_u(row, AN_COL_EI, a->incl);
	an_row_set_u(row, AN_COL_EE, a->excl);
	an_row_set_u(row, AN_COL_AI, a->app_incl);
	an_row_set_u(row, AN_COL_AE, a->app_excl);
	an_row_set_d(row, AN_COL_EI_PCT, an_pct(a->incl, s->elapsed_inclusive_ns));
	an_row_set_d(row, AN_COL_EE_PCT, an_pct(a->excl, s->elapsed_inclusive_ns));
	an_row_set_d(row, AN_COL_AI_PCT, an_pct(a->app_incl, s->application_inclusive_ns));
	an_row_set_d(row, AN_COL_AE_PCT, an_pct(a->app_excl, s->application_inclusive_ns));
	if (s->have_shares) {
		an_row_set_d(row, AN_COL_SMP_INCL_PCT, an_pct(a->smp_incl, s->samples));
		an_row_set_d(row, AN_COL_SMP_EXCL_PCT, an_pct(a->smp_excl, s->samples));
	}
}

/*
 * One walk for function f.  callers[nfuncs] is "[root]".  act[d] is the
 * callee (function) through which the node at depth d is reached from the
 * innermost occurrence of f above it, or AN_NONE.
 */
static void split_function(const struct an_cct *c, uint32_t f, struct an_fold *callers,
			   struct an_fold *callees)
{
	const uint32_t *tops;
	size_t ntops = an_cct_tops(c, &tops), nfuncs = an_cct_nfuncs(c);
	uint32_t *act = NULL, cur_caller = AN_NONE, depth_cap = 0;
	size_t on_path = 0;

	for (size_t t = 0; t < ntops; t++) {
		uint32_t top = tops[t], n = top;

		for (;;) {
			const struct an_cct_node *nd = an_cct_node(c, n);

			if (nd->depth >= depth_cap) {
				depth_cap = nd->depth * 2 + 16;
				act = xrealloc(act, depth_cap * sizeof(*act));
			}
			if (nd->parent == AN_CCT_NONE) {
				act[nd->depth] = AN_NONE;
			} else {
				const struct an_cct_node *par = an_cct_node(c, nd->parent);
				bool par_top = par->parent == AN_CCT_NONE;
				uint32_t pf = par_top ? (uint32_t)nfuncs : par->func;
				bool from_f = !par_top && par->func == f;

				if (nd->func == f) {
					uint32_t d = act[par->depth];

					callers[pf].calls += nd->calls;
					callers[pf].used = true;
					if (!on_path++) {
						cur_caller = pf;
						callers[pf].incl += nd->incl;
						callers[pf].app_incl += nd->app_incl;
						callers[pf].smp_incl += nd->smp_incl;
					}
					callers[cur_caller].excl += nd->excl;
					callers[cur_caller].app_excl += nd->app_excl;
					callers[cur_caller].smp_excl += nd->smp_excl;
					if (d != AN_NONE) {
						callees[d].incl -= nd->incl;
						callees[d].app_incl -= nd->app_incl;
						callees[d].smp_incl -= nd->smp_incl;
					}
					if (from_f) {
						callees[f].calls += nd->calls;
						callees[f].used = true;
					}
					act[nd->depth] = AN_NONE;
				} else if (from_f) {
					struct an_fold *a = &callees[nd->func];

					a->used = true;
					a->calls += nd->calls;
					a->incl += nd->incl;
					a->app_incl += nd->app_incl;
					a->excl += nd->excl;
					a->app_excl += nd->app_excl;
					a->smp_incl += nd->smp_incl;
					a->smp_excl += nd->smp_excl;
					act[nd->depth] = nd->func;
				} else {
					act[nd->depth] = act[par->depth];
				}
			}
			if (nd->first_child != AN_CCT_NONE) {
				n = nd->first_child;
				continue;
			}
			for (;;) {
				if (an_cct_node(c, n)->func == f)
					on_path--;
				if (n == top)
					goto next_top;
				if (an_cct_node(c, n)->next_sibling != AN_CCT_NONE) {
					n = an_cct_node(c, n)->next_sibling;
					break;
				}
				n = an_cct_node(c, n)->parent;
			}
		}
next_top:;
	}
	free(act);
}

static struct an_row *fold_rows(const struct an_callers *cc, struct an_profile *p,
				const struct an_fold *acc, size_t nacc, bool root_slot, size_t *count)
{
	struct an_row *rows;
	size_t n = 0;
	/* sampling has no calls: an edge without samples (a recursive call
	 * neither outermost nor innermost) would be an empty row */
	bool smp = cc->session.method == SC_METHOD_SAMPLE;

	for (size_t k = 0; k < nacc; k++)
		n += acc[k].used && (!smp || acc[k].incl);
	rows = xcalloc(n ? n : 1, sizeof(*rows));
	n = 0;
	for (size_t k = 0; k < nacc; k++)
		if (acc[k].used && (!smp || acc[k].incl)) {
			bool root = root_slot && k == nacc - 1;

			edge_row(cc, p, root ? AN_NONE : (uint32_t)k, &acc[k], &rows[n], (uint32_t)n);
			n++;
		}
	*count = n;
	return rows;
}

int an_callers_build(struct an_profile *p, const char *name, enum an_app_time app_time,
		     struct an_callers **out, char *err, size_t errlen)
{
	struct an_callers *cc;
	struct an_report *flat = NULL;
	const struct an_cct *c;
	enum an_col sort;
	size_t nfuncs;
	int ret;

	*out = NULL;
	cc = xcalloc(1, sizeof(*cc));
	ret = view_session(p, app_time, &cc->session, &cc->flat, err, errlen);
	if (ret < 0) {
		free(cc);
		return ret;
	}
	flat = cc->flat;
	c = an_profile_cct(p, AN_CCT_MERGED, app_time);
	nfuncs = an_cct_nfuncs(c);
	cc->self_cols = flat->cols;
	cc->nself_cols = flat->ncols;
	cc->cols = an_edge_colset(cc->session.method, &cc->ncols);
	cc->ncols = an_cols_for(cc->cols, cc->ncols, &cc->session, cc->colbuf);
	cc->cols = cc->colbuf;
	sort = an_report_default_sort(flat);
	for (size_t i = 0; i < flat->nrows; i++) {
		const struct an_row *row = &flat->rows[i];
		struct an_fold *callers, *callees;
		struct an_callers_entry *e;
		uint32_t f = AN_NONE;

		if (!row->v[AN_COL_FUNCTION].present || strcmp(row->v[AN_COL_FUNCTION].s, name))
			continue;
		/* the row's strings are the profile's interned ones */
		for (size_t k = 0; k < nfuncs && f == AN_NONE; k++)
			if (an_cct_func_name(c, (uint32_t)k) == row->v[AN_COL_FUNCTION].s &&
			    an_cct_func_module(c, (uint32_t)k) == row->v[AN_COL_MODULE].s)
				f = (uint32_t)k;
		if (f == AN_NONE)
			continue;
		callers = xcalloc(nfuncs + 1, sizeof(*callers));
		callees = xcalloc(nfuncs + 1, sizeof(*callees));
		split_function(c, f, callers, callees);
		cc->fn = xrealloc(cc->fn, (cc->nfn + 1) * sizeof(*cc->fn));
		e = &cc->fn[cc->nfn++];
		e->self = *row;
		e->callers = fold_rows(cc, p, callers, nfuncs + 1, true, &e->ncallers);
		e->callees = fold_rows(cc, p, callees, nfuncs, false, &e->ncallees);
		an_rows_sort(e->callers, e->ncallers, sort);
		an_rows_sort(e->callees, e->ncallees, sort);
		free(callers);
		free(callees);
	}
	if (!cc->nfn) {
		char names[512];

		closest_names(flat, name, names, sizeof(names));
		if (names[0])
			snprintf(err, errlen, "no function named '%s'; the closest names: %s", name, names);
		else
			snprintf(err, errlen, "no function named '%s' (the profile has no functions)", name);
		an_callers_free(cc);
		return -ENOENT;
	}
	*out = cc;
	return 0;
}

void an_callers_free(struct an_callers *cc)
{
	if (!cc)
		return;
	for (size_t i = 0; i < cc->nfn; i++) {
		free(cc->fn[i].callers);
		free(cc->fn[i].callees);
	}
	free(cc->fn);
	an_report_free(cc->flat);
	free(cc);
}

int an_callers_sort(struct an_callers *cc, enum an_col col)
{
	bool has = false;

	for (unsigned i = 0; i < cc->ncols; i++)
		has |= cc->cols[i] == col;
	if (!has)
		return -EINVAL;
	for (size_t i = 0; i < cc->nfn; i++) {
		an_rows_sort(cc->fn[i].callers, cc->fn[i].ncallers, col);
		an_rows_sort(cc->fn[i].callees, cc->fn[i].ncallees, col);
	}
	return 0;
}

int an_callers_check(const struct an_callers *cc, char *why, size_t whylen)
{
	bool smp = cc->session.method == SC_METHOD_SAMPLE;
	enum an_col ci = smp ? AN_COL_INCL_SAMPLES : AN_COL_EI;
	enum an_col ce = smp ? AN_COL_EXCL_SAMPLES : AN_COL_EE;

	for (size_t i = 0; i < cc->nfn; i++) {
		const struct an_callers_entry *e = &cc->fn[i];
		const char *name = e->self.v[AN_COL_FUNCTION].s;
		uint64_t in = e->self.v[ci].u, ex = e->self.v[ce].u;
		uint64_t ai = smp ? 0 : e->self.v[AN_COL_AI].u, ae = smp ? 0 : e->self.v[AN_COL_AE].u;
		uint64_t s_in = 0, s_ex = 0, s_ai = 0, s_ae = 0, d_in = 0, d_ai = 0;

		for (size_t k = 0; k < e->ncallers; k++) {
			s_in += e->callers[k].v[ci].u;
			s_ex += e->callers[k].v[ce].u;
			if (!smp) {
				s_ai += e->callers[k].v[AN_COL_AI].u;
				s_ae += e->callers[k].v[AN_COL_AE].u;
			}
		}
		for (size_t k = 0; k < e->ncallees; k++) {
			d_in += e->callees[k].v[ci].u;
			if (!smp)
				d_ai += e->callees[k].v[AN_COL_AI].u;
		}
		if (s_in != in || s_ai != ai)
			return fail(why, whylen, "%s: callers' inclusive values sum to %" PRIu64
				    ", the function's is %" PRIu64, name, s_in, in);
		if (s_ex != ex || s_ae != ae)
			return fail(why, whylen, "%s: callers' exclusive values sum to %" PRIu64
				    ", the function's is %" PRIu64, name, s_ex, ex);
		if (ex + d_in != in || ae + d_ai != ai)
			return fail(why, whylen, "%s: exclusive %" PRIu64 " + callees' inclusive %" PRIu64
				    " != inclusive %" PRIu64, name, ex, d_in, in);
	}
	return 0;
}
