/*
 * --format callgrind: the callgrind profile format, for KCachegrind and
 * callgrind_annotate.
 *
 * Events: "Samples" (sampling) or "Elapsed Application" in nanoseconds
 * (instrumentation).  Per function its self cost: per source line where
 * the recording knows lines (sampling: the leaf's line of every sample),
 * else on line 0.  Per call edge (analysis/cct.h an_cct_edges) a
 * cfn=/calls= pair with the inclusive cost SPEC section 6 credits to the
 * edge, so that callgrind_annotate --inclusive=yes, which adds a
 * function's self cost and the costs of its calls, shows the report's
 * inclusive values, recursion included.  "totals:" are the session totals.
 * calls= is the number of calls for instrumentation, and 1 for sampling
 * (samples carry no call counts).
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

static int write_callgrind(FILE *f, struct an_profile *p, const struct exp_options *o,
			   char *err, size_t errlen)
{
	const struct an_cct *c = an_profile_cct(p, AN_CCT_MERGED, o->app_time);
	bool sample = an_cct_method(c) == SC_METHOD_SAMPLE;
	size_t nfuncs = an_cct_nfuncs(c), nnodes = an_cct_size(c), nedges, nlines = 0, li;
	uint32_t *key = xmalloc((nnodes ? nnodes : 1) * sizeof(*key));
	struct an_fold *fold = xcalloc(nfuncs ? nfuncs : 1, sizeof(*fold));
	struct names obs = { 0 }, fls = { 0 }, fns = { 0 };
	size_t nmods = 0;
	struct an_cct_edge *edges = NULL;
	struct line_cost *lines = NULL;
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
	if (an_report_build(p, &ro, &flat, err, errlen) < 0) {
		ret = -EINVAL;
		goto out;
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
			struct line_cost want = { .name = name, .module = mod };
			size_t lo = 0, hi = nlines;

			while (lo < hi) {      /* the function's first line */
				size_t mid = lo + (hi - lo) / 2;

				if (cmp_line_cost(&lines[mid], &want) < 0)
					lo = mid + 1;
				else
					hi = mid;
			}
			for (li = lo; li < nlines && lines[li].name == name && lines[li].module == mod; li++)
				fprintf(f, "%" PRIu64 " %" PRIu64 "\n", lines[li].line, lines[li].excl);
		} else if (self) {
			fprintf(f, "0 %" PRIu64 " %" PRIu64 "\n", fold[fn].excl, fold[fn].app_excl);
		}
		for (; e < nedges && edges[e].caller == fn; e++) {
			const struct an_cct_edge *ed = &edges[e];

			if (!ed->incl && !ed->app_incl && !ed->calls)
				continue;
			put_keyed(f, "cob", &obs, an_cct_func_mod(c, ed->callee),
				  an_cct_func_module(c, ed->callee));
			put_file(f, "cfi", &fls, an_cct_func_file(c, ed->callee));
			put_keyed(f, "cfn", &fns, ed->callee, an_cct_func_name(c, ed->callee));
			fprintf(f, "calls=%" PRIu64 " 0\n", sample ? 1 : ed->calls);
			if (sample)
				fprintf(f, "0 %" PRIu64 "\n", ed->incl);
			else
				fprintf(f, "0 %" PRIu64 " %" PRIu64 "\n", ed->incl, ed->app_incl);
		}
	}
out:
	an_report_free(flat);
	free(lines);
	free(edges);
	free(fold);
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
