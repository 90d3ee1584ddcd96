/*
 * --format callgrind: the callgrind profile format, for KCachegrind and
 * callgrind_annotate.
 *
 * Events: "Samples" (sampling) or "Elapsed Application" in nanoseconds
 * (instrumentation).  Per function its self cost: sampling, per source
 * line (the leaf's line of every sample); instrumentation, which does not
 * see lines, on the function's first line (its entry's).  Per call edge
 * (analysis/cct.h an_cct_edges) cfn=/calls= lines with the inclusive cost
 * SPEC section 6 credits to the edge, so that callgrind_annotate
 * --inclusive=yes, which adds a function's self cost and the costs of its
 * calls, shows the report's inclusive values, recursion included.  An
 * edge is written once per line of the caller that makes the call (the
 * call sites of report --by callsite), its cost split over those lines in
 * proportion to theirs, to the unit; calls enter the callee's first line.
 * "totals:" are the session totals.  calls= is the number of calls for
 * instrumentation, and 1 for sampling (samples carry no call counts).
 */
#include "output/export.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/cct.h"
#include "util/util.h"

/*
 * Name compression: "(id) name" the first time, "(id)" after.  Names are
 * keyed by a dense number (function id, module id) or, for files, by the
 * profile's interned string (few of them: searched).
 */
struct names {
	uint32_t *id;             /* by key: 0 = not written yet */
	size_t nkeys;
	const char **files;       /* files written, id - 1 */
	size_t nfiles, afiles;
	uint32_t next;
};

static void put_keyed(FILE *f, const char *tag, struct names *t, uint32_t key, const char *s)
{
	if (key < t->nkeys && t->id[key]) {
		fprintf(f, "%s=(%u)\n", tag, t->id[key]);
		return;
	}
	if (key < t->nkeys)
		t->id[key] = ++t->next;
	fprintf(f, "%s=(%u) %s\n", tag, t->next, s && *s ? s : "???");
}

static void put_file(FILE *f, const char *tag, struct names *t, const char *s)
{
	size_t i;

	if (!s || !*s)
		s = "???";
	for (i = 0; i < t->nfiles && t->files[i] != s && strcmp(t->files[i], s); i++)
		;
	if (i < t->nfiles) {
		fprintf(f, "%s=(%zu)\n", tag, i + 1);
		return;
	}
	ALLOC_GROW(t->files, t->nfiles + 1, t->afiles);
	t->files[t->nfiles++] = s;
	fprintf(f, "%s=(%zu) %s\n", tag, t->nfiles, s);
}

/* One self cost of a function at a line (sampling, --by line). */
struct line_cost {
	const char *name, *module;
	uint64_t line, excl;
};

static int cmp_line_cost(const void *a, const void *b)
{
	const struct line_cost *x = a, *y = b;

	if (x->name != y->name)
		return x->name < y->name ? -1 : 1;
	if (x->module != y->module)
		return x->module < y->module ? -1 : 1;
	return x->line < y->line ? -1 : x->line > y->line;
}

/* The sampling self costs by function and line, sorted; NULL on failure. */
static struct line_cost *line_costs(struct an_profile *p, size_t *n, char *err, size_t errlen)
{
	struct an_report_options ro = { .by = AN_BY_LINE };
	struct an_report *r;
	struct line_cost *v;
	size_t k = 0;

	if (an_report_build(p, &ro, &r, err, errlen) < 0)
		return NULL;
	v = xcalloc(r->nrows ? r->nrows : 1, sizeof(*v));
	for (size_t i = 0; i < r->nrows; i++) {
		const struct an_value *val = r->rows[i].v;

		if (!val[AN_COL_EXCL_SAMPLES].u)
			continue;
		v[k].name = val[AN_COL_FUNCTION].s;
		v[k].module = val[AN_COL_MODULE].s;
		v[k].line = val[AN_COL_LINE].present ? val[AN_COL_LINE].u : 0;
		v[k].excl = val[AN_COL_EXCL_SAMPLES].u;
		k++;
	}
	an_report_free(r);
	if (k > 1)
		qsort(v, k, sizeof(*v), cmp_line_cost);
	*n = k;
	return v;
}

/* One call site: calls of callee from a line of caller, and its costs. */
struct site_cost {
	const char *caller, *caller_mod, *callee, *callee_mod;
	uint64_t line, calls, incl, app_incl;
};

static int cmp_site_cost(const void *a, const void *b)
{
	const struct site_cost *x = a, *y = b;
	const void *kx[4] = { x->caller, x->caller_mod, x->callee, x->callee_mod };
	const void *ky[4] = { y->caller, y->caller_mod, y->callee, y->callee_mod };

	for (int i = 0; i < 4; i++)
		if (kx[i] != ky[i])
			return (uintptr_t)kx[i] < (uintptr_t)ky[i] ? -1 : 1;
	return x->line < y->line ? -1 : x->line > y->line;
}

/*
 * The call sites by caller, callee and line, sorted (report --by callsite);
 * NULL with *n 0 when there are none to be had (instrumentation with
 * --app-time=exact keeps no call sites): calls then sit on the caller's
 * first line.
 */
static struct site_cost *site_costs(struct an_profile *p, enum an_app_time app_time, size_t *n)
{
	struct an_report_options ro = { .by = AN_BY_CALLSITE, .app_time = app_time };
	bool sample = an_profile_method(p) == SC_METHOD_SAMPLE;
	struct an_report *r;
	struct site_cost *v;
	char err[256];
	size_t k = 0;

	*n = 0;
	if (an_report_build(p, &ro, &r, err, sizeof(err)) < 0)
		return NULL;
	v = xcalloc(r->nrows ? r->nrows : 1, sizeof(*v));
	for (size_t i = 0; i < r->nrows; i++) {
		const struct an_value *val = r->rows[i].v;

		if (!val[AN_COL_LINE].present)
			continue;
		v[k] = (struct site_cost){
			.caller = val[AN_COL_FUNCTION].s, .caller_mod = val[AN_COL_MODULE].s,
			.callee = val[AN_COL_CALLEE].s, .callee_mod = val[AN_COL_CALLEE_MODULE].s,
			.line = val[AN_COL_LINE].u,
			.calls = sample ? 0 : val[AN_COL_CALLS].u,
			.incl = sample ? val[AN_COL_INCL_SAMPLES].u : val[AN_COL_EI].u,
			.app_incl = sample ? 0 : val[AN_COL_AI].u,
		};
		k++;
	}
	an_report_free(r);
	if (k > 1)
		qsort(v, k, sizeof(*v), cmp_site_cost);
	*n = k;
	return v;
}

/*
 * Split total into n parts in proportion to the weights w (the units left
 * over go one each to the first parts of non-zero weight; equal parts when
 * every weight is 0), so that the parts add up to total exactly.
 */
static void split(uint64_t total, const uint64_t *w, size_t n, uint64_t *out)
{
	unsigned __int128 sum = 0;
	uint64_t given = 0;

	for (size_t i = 0; i < n; i++)
		sum += w[i];
	for (size_t i = 0; i < n; i++) {
		out[i] = sum ? (uint64_t)((unsigned __int128)total * w[i] / sum) : total / n;
		given += out[i];
	}
	for (size_t i = 0; given < total; i = (i + 1) % n)
		if (!sum || w[i]) {
			out[i]++;
			given++;
		}
}

/* One call edge's costs over its n call sites (n >= 1). */
struct edge_split {
	uint64_t *calls, *incl, *app, *w;
};

static void edge_split(struct edge_split *sp, const struct site_cost *sites, size_t n,
		       const struct an_cct_edge *ed, bool sample)
{
	sp->calls = xcalloc(n, sizeof(uint64_t));
	sp->incl = xcalloc(n, sizeof(uint64_t));
	sp->app = xcalloc(n, sizeof(uint64_t));
	sp->w = xcalloc(n, sizeof(uint64_t));
	for (size_t k = 0; k < n; k++)
		sp->w[k] = sites[k].calls;
	split(sample ? 0 : ed->calls, sp->w, n, sp->calls);
	for (size_t k = 0; k < n; k++)
		sp->w[k] = sites[k].incl;
	split(ed->incl, sp->w, n, sp->incl);
	for (size_t k = 0; k < n; k++)
		sp->w[k] = sites[k].app_incl;
	split(ed->app_incl, sp->w, n, sp->app);
}

static void edge_split_release(struct edge_split *sp)
{
	free(sp->calls);
	free(sp->incl);
	free(sp->app);
	free(sp->w);
}

static int write_callgrind(FILE *f, struct an_profile *p, const struct exp_options *o,
			   char *err, size_t errlen)
{
	const struct an_cct *c = an_profile_cct(p, AN_CCT_MERGED, o->app_time);
	bool sample = an_cct_method(c) == SC_METHOD_SAMPLE;
	size_t nfuncs = an_cct_nfuncs(c), nnodes = an_cct_size(c), nedges, nlines = 0, nsites = 0, li;
	uint32_t *key = xmalloc((nnodes ? nnodes : 1) * sizeof(*key));
	struct an_fold *fold = xcalloc(nfuncs ? nfuncs : 1, sizeof(*fold));
	unsigned *first = xcalloc(nfuncs ? nfuncs : 1, sizeof(*first));
	size_t *first_cost = xcalloc(nfuncs ? nfuncs : 1, sizeof(*first_cost));
	struct names obs = { 0 }, fls = { 0 }, fns = { 0 };
	size_t nmods = 0;
	struct an_cct_edge *edges = NULL;
	struct line_cost *lines = NULL;
	struct site_cost *sites = NULL;
	struct an_report *flat = NULL;
	struct an_report_options ro = { .by = AN_BY_FUNCTION, .app_time = o->app_time };
	size_t e = 0;
	int ret = 0;

	for (size_t i = 0; i < nnodes; i++)
		key[i] = an_cct_node(c, (uint32_t)i)->func;
	for (uint32_t fn = 0; fn < nfuncs; fn++)
		if (an_cct_func_mod(c, fn) + 1 > nmods)
			nmods = an_cct_func_mod(c, fn) + 1;
	fns.nkeys = nfuncs;
	fns.id = xcalloc(nfuncs ? nfuncs : 1, sizeof(*fns.id));
	obs.nkeys = nmods;
	obs.id = xcalloc(nmods ? nmods : 1, sizeof(*obs.id));
	an_cct_fold(c, key, nfuncs, fold);
	nedges = an_cct_edges(c, &edges);
	if (sample && !(lines = line_costs(p, &nlines, err, errlen))) {
		ret = -EINVAL;
		goto out;
	}
	sites = site_costs(p, o->app_time, &nsites);
	if (an_report_build(p, &ro, &flat, err, errlen) < 0) {
		ret = -EINVAL;
		goto out;
	}
	/*
	 * Each function's first line: its entry's (instrumentation), else the
	 * first line of its sampled own cost; the line its own cost sits on
	 * (instrumentation) and that calls to it enter.
	 */
	for (uint32_t fn = 0; fn < nfuncs; fn++) {
		struct line_cost want = { .name = an_cct_func_name(c, fn), .module = an_cct_func_module(c, fn) };
		size_t lo = 0, hi = nlines;

		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;

			if (cmp_line_cost(&lines[mid], &want) < 0)
				lo = mid + 1;
			else
				hi = mid;
		}
		first_cost[fn] = lo;
		first[fn] = an_cct_func_line(c, fn);
		if (!first[fn] && lo < nlines && lines[lo].name == want.name && lines[lo].module == want.module)
			first[fn] = (unsigned)lines[lo].line;
	}

	fputs("# callgrind format\nversion: 1\ncreator: stackclock\n", f);
	fputs("cmd:", f);
	for (uint32_t i = 0; i < flat->session.argc; i++)
		fprintf(f, " %s", flat->session.argv[i]);
	fputs("\npositions: line\n", f);
	if (sample)
		fprintf(f, "events: Samples\ntotals: %" PRIu64 "\n", an_cct_total(c));
	else
		fprintf(f, "events: Elapsed Application\ntotals: %" PRIu64 " %" PRIu64 "\n",
			an_cct_total(c), an_cct_app_total(c));

	for (uint32_t fn = 0; fn < nfuncs; fn++) {
		const char *name = an_cct_func_name(c, fn), *mod = an_cct_func_module(c, fn);
		const char *file = an_cct_func_file(c, fn);
		bool self = fold[fn].excl || fold[fn].app_excl;

		while (e < nedges && edges[e].caller < fn)
			e++;
		if (!fold[fn].used || (!self && (e >= nedges || edges[e].caller != fn)))
			continue;
		fputc('\n', f);
		put_keyed(f, "ob", &obs, an_cct_func_mod(c, fn), mod);
		put_file(f, "fl", &fls, file);
		put_keyed(f, "fn", &fns, fn, name);
		if (sample) {
			for (li = first_cost[fn]; li < nlines && lines[li].name == name && lines[li].module == mod; li++)
				fprintf(f, "%" PRIu64 " %" PRIu64 "\n", lines[li].line, lines[li].excl);
		} else if (self) {
			fprintf(f, "%u %" PRIu64 " %" PRIu64 "\n", first[fn], fold[fn].excl, fold[fn].app_excl);
		}
		for (; e < nedges && edges[e].caller == fn; e++) {
			const struct an_cct_edge *ed = &edges[e];
			const char *callee = an_cct_func_name(c, ed->callee);
			const char *callee_mod = an_cct_func_module(c, ed->callee);
			struct site_cost want = { name, mod, callee, callee_mod, 0, 0, 0, 0 };
			size_t lo = 0, hi = nsites, n;
			uint64_t one[3];
			struct edge_split sp;

			if (!ed->incl && !ed->app_incl && !ed->calls)
				continue;
			while (lo < hi) {      /* the edge's first call site */
				size_t mid = lo + (hi - lo) / 2;

				if (cmp_site_cost(&sites[mid], &want) < 0)
					lo = mid + 1;
				else
					hi = mid;
			}
			for (n = 0; lo + n < nsites && !cmp_site_cost(&sites[lo + n], &(struct site_cost){
				     name, mod, callee, callee_mod, sites[lo + n].line, 0, 0, 0 }); n++)
				;
			/* the edge's costs over its call lines, in proportion to
			 * theirs; no call site known: all on the caller's first line */
			if (n) {
				edge_split(&sp, &sites[lo], n, ed, sample);
			} else {
				one[0] = ed->calls;
				one[1] = ed->incl;
				one[2] = ed->app_incl;
				sp = (struct edge_split){ &one[0], &one[1], &one[2], NULL };
			}
			for (size_t k = 0; k < (n ? n : 1); k++) {
				put_keyed(f, "cob", &obs, an_cct_func_mod(c, ed->callee), callee_mod);
				put_file(f, "cfi", &fls, an_cct_func_file(c, ed->callee));
				put_keyed(f, "cfn", &fns, ed->callee, callee);
				/* sampling counts no calls: 1 per line that calls */
				fprintf(f, "calls=%" PRIu64 " %u\n", sample ? 1 : sp.calls[k], first[ed->callee]);
				fprintf(f, "%" PRIu64 " %" PRIu64, n ? sites[lo + k].line : first[fn], sp.incl[k]);
				if (!sample)
					fprintf(f, " %" PRIu64, sp.app[k]);
				fputc('\n', f);
			}
			if (n)
				edge_split_release(&sp);
		}
	}
out:
	an_report_free(flat);
	free(lines);
	free(sites);
	free(edges);
	free(fold);
	free(first);
	free(first_cost);
	free(key);
	free(obs.id);
	free(fls.files);
	free(fns.id);
	return ret;
}

const struct exp_format exp_callgrind = {
	.name = "callgrind",
	.default_out = "callgrind.out.stackclock",
	.write = write_callgrind,
};
