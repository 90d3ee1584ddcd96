/*
 * Unit tests of the analysis (src/analysis): the report's numbers against
 * SPEC sections 2 and 3, exactly.
 *
 *  (a) every vector of tests/vectors (or $SC_VECTORS): events drive
 *      the real engine (src/runtime/engine.h), its records go through a real
 *      data file, the analysis builds the report; every expected value is
 *      compared exactly;
 *  (b) hand-built CCT record sets (recursion, mutual recursion, several
 *      threads and processes, module grouping, two addresses of one
 *      function, damaged trees) with values worked out by hand;
 *  (c) random event streams: a brute-force implementation of SPEC section 2
 *      written here (a plain stack, every interval charged to every distinct
 *      function, module, thread and process on it) against engine+analysis,
 *      in both --app-time modes, for every grouping; call-site rows (of the
 *      vectors too) against a brute force of their own, every distinct
 *      (caller, callee) on the stack charged once per interval;
 *  (d) sampling on synthetic stacks with inline frames and lines: a hand
 *      case and random stacks against a brute-force count.
 * The invariant checker runs on every report built here.
 */
#include "analysis/analysis.h"
#include "analysis/cct.h"
#include "format/scdata.h"
#include "record/cct_emit.h"
#include "runtime/engine.h"
#include "tap.h"
#include "report_build.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- a fake symbol table -------------------------------------------------
 * Function i occupies [FBASE + i*FSIZE, +FSIZE).  Its module is mods[i % 3]
 * unless overridden.  Lines: file "f<i>.c", line 10*i + offset/16.  A
 * function may hold one inlined function in [inl_lo, inl_hi) of its range,
 * called from line inl_line.
 */
#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))
#define FBASE 0x400000ULL
#define FSIZE 0x100ULL
#define MAXFN 64

struct fake_fn {
	char name[64];
	const char *module;
	int inl;                 /* index of the inlined function, or -1 */
	uint64_t inl_lo, inl_hi;
	unsigned inl_line;
};

static struct fake_fn fns[MAXFN];
static int nfns;
static char files[MAXFN][16];
static const char *const mods[3] = { "/bin/app", "/lib/liba.so", "/lib/libb.so" };

static void fake_reset(void)
{
	nfns = 0;
}

static int fake_fn(const char *name)
{
	for (int i = 0; i < nfns; i++)
		if (!strcmp(fns[i].name, name))
			return i;
	snprintf(fns[nfns].name, sizeof(fns[nfns].name), "%s", name);
	fns[nfns].module = mods[nfns % 3];
	fns[nfns].inl = -1;
	snprintf(files[nfns], sizeof(files[nfns]), "f%d.c", nfns);
	return nfns++;
}

static uint64_t fake_addr(int i)
{
	return FBASE + (uint64_t)i * FSIZE;
}

static unsigned fake_line(int i, uint64_t a)
{
	return 10u * (unsigned)i + (unsigned)((a - fake_addr(i)) / 16);
}

static int fake_resolve(void *ctx, uint32_t proc_id, uint64_t addr, bool is_return,
			struct sym_frame *out, int max)
{
	uint64_t a = is_return ? addr - 1 : addr;
	int i, n = 0;

	(void)ctx;
	(void)proc_id;
	if (a < FBASE || a >= FBASE + (uint64_t)nfns * FSIZE)
		return 0;
	i = (int)((a - FBASE) / FSIZE);
	if (fns[i].inl >= 0 && a >= fake_addr(i) + fns[i].inl_lo && a < fake_addr(i) + fns[i].inl_hi) {
		int j = fns[i].inl;

		if (n < max)
			out[n++] = (struct sym_frame){
				.function = fns[j].name, .module = fns[i].module,
				.file = files[j], .inlined = true, .module_offset = addr,
				.line = 10u * (unsigned)j + (unsigned)((a - fake_addr(i)) % 7) };
		if (n < max)
			out[n++] = (struct sym_frame){
				.function = fns[i].name, .module = fns[i].module,
				.file = files[i], .line = fns[i].inl_line, .module_offset = addr };
		return n;
	}
	if (n < max)
		out[n++] = (struct sym_frame){
			.function = fns[i].name, .module = fns[i].module, .file = files[i],
			.line = fake_line(i, a), .module_offset = addr };
	return n;
}

static const struct an_resolver fake = { fake_resolve, NULL, NULL };

/* ---- helpers ---------------------------------------------------------------- */

static char tmp_path[] = "/tmp/sc-test-analysis-XXXXXX";

static const struct an_row *find_row(const struct an_report *r, enum an_col c, const char *s)
{
	for (size_t i = 0; i < r->nrows; i++)
		if (r->rows[i].v[c].present && !strcmp(r->rows[i].v[c].s, s))
			return &r->rows[i];
	return NULL;
}

static const struct an_row *find_row_u(const struct an_report *r, enum an_col c, uint64_t v)
{
	for (size_t i = 0; i < r->nrows; i++)
		if (r->rows[i].v[c].present && r->rows[i].v[c].u == v)
			return &r->rows[i];
	return NULL;
}

static struct an_report *build(struct an_profile *p, enum an_group by, enum an_app_time mode,
			       const char *what)
{
	return build_checked(p, by, mode, what);
}

static uint64_t val(const struct an_row *row, enum an_col c)
{
	return row && row->v[c].present ? row->v[c].u : UINT64_MAX;
}

/* ---- event streams and the engine ------------------------------------------ */

enum ev_kind { EV_ENTER, EV_EXIT, EV_OS };

struct event {
	enum ev_kind kind;
	uint64_t t;
	int fn;                  /* EV_ENTER/EV_EXIT */
	uint64_t os_ns;          /* EV_OS: measured OS time (exact mode) */
	int site_fn;             /* EV_ENTER: caller function for the site, -1 */
};

struct thread_stream {
	uint32_t pid, tid;
	struct event *ev;
	size_t n, alloc;
};

struct stream {
	struct thread_stream th[16];
	int nth;
};

static void stream_free(struct stream *s)
{
	for (int i = 0; i < s->nth; i++)
		free(s->th[i].ev);
	memset(s, 0, sizeof(*s));
}

static void push_ev(struct thread_stream *t, struct event e)
{
	if (t->n == t->alloc) {
		t->alloc = t->alloc ? t->alloc * 2 : 64;
		t->ev = realloc(t->ev, t->alloc * sizeof(*t->ev));
	}
	t->ev[t->n++] = e;
}

/*
 * Every entry's call site is its caller's, as the compiler passes it: the
 * function on top of the stack as SPEC section 2 keeps it (an exit pops
 * down to the topmost frame of its function, an exit of a function not on
 * the stack pops nothing), -1 with an empty stack (site address 0).
 */
static void assign_sites(struct stream *s)
{
	for (int ti = 0; ti < s->nth; ti++) {
		struct thread_stream *ts = &s->th[ti];
		int stack[4096], depth = 0;

		for (size_t k = 0; k < ts->n; k++) {
			struct event *e = &ts->ev[k];

			if (e->kind == EV_ENTER) {
				e->site_fn = depth ? stack[depth - 1] : -1;
				if (depth < 4096)
					stack[depth++] = e->fn;
			} else if (e->kind == EV_EXIT) {
				for (int j = depth - 1; j >= 0; j--)
					if (stack[j] == e->fn) {
						depth = j;
						break;
					}
			}
		}
	}
}

/*
 * Call sites by brute force (SPEC section 2, "call site" grouping, the
 * interval rule): a key is (caller, callee), the caller's call site being
 * one address per caller here.  Each interval adds its length to EI (and AI
 * if not OS-bound) of every distinct key on the stack, so a key nested in
 * itself (recursion through the same call) is charged once, and to EE (AE)
 * of the top frame's key; calls count entries.  This is what the engine
 * computes from the outermost call of each (call site, callee) and the
 * report adds up per caller line and callee.
 */
struct csb {
	struct {
		uint64_t calls, ei, ee, ai, ae;
	} v[MAXFN + 1][MAXFN];   /* [caller + 1][callee] */
};

static void brute_callsites(const struct stream *s, struct csb *b)
{
	memset(b, 0, sizeof(*b));
	for (int ti = 0; ti < s->nth; ti++) {
		const struct thread_stream *ts = &s->th[ti];
		static int fn[4096], site[4096];
		int depth = 0;
		uint64_t last = 0;
		bool started = false, osb = false;

		for (size_t k = 0; k < ts->n; k++) {
			const struct event *e = &ts->ev[k];

			if (e->kind == EV_OS) {
				osb |= started;
				continue;
			}
			if (started && depth > 0) {
				uint64_t d = e->t - last, app = osb ? 0 : d;
				static bool seen[MAXFN + 1][MAXFN];

				memset(seen, 0, sizeof(seen));
				for (int i = 0; i < depth; i++) {
					if (seen[site[i] + 1][fn[i]])
						continue;
					seen[site[i] + 1][fn[i]] = true;
					b->v[site[i] + 1][fn[i]].ei += d;
					b->v[site[i] + 1][fn[i]].ai += app;
				}
				b->v[site[depth - 1] + 1][fn[depth - 1]].ee += d;
				b->v[site[depth - 1] + 1][fn[depth - 1]].ae += app;
			}
			started = true;
			last = e->t;
			osb = false;
			if (e->kind == EV_ENTER) {
				fn[depth] = e->fn;
				site[depth] = e->site_fn;
				depth++;
				b->v[e->site_fn + 1][e->fn].calls++;
			} else {
				for (int j = depth - 1; j >= 0; j--)
					if (fn[j] == e->fn) {
						depth = j;
						break;
					}
			}
		}
	}
}

/*
 * The report's call-site rows against brute_callsites() on the same stream,
 * exactly, and against SPEC's invariants (an_report_check).  Failures are
 * counted over all vectors and seeds and reported in one line.
 */
static int callsite_bad, callsite_checked;
static char callsite_example[300];

static void check_callsites(struct an_profile *p, const struct stream *s)
{
	struct an_report_options o = { AN_BY_CALLSITE, AN_APP_INTERVAL };
	struct an_report *r;
	static struct csb b;
	char err[256], why[256];
	size_t keys = 0;
	int bad = 0;

	callsite_checked++;
	if (an_report_build(p, &o, &r, err, sizeof(err)) < 0) {
		if (!callsite_bad++)
			snprintf(callsite_example, sizeof(callsite_example), "build: %s", err);
		return;
	}
	if (an_report_check(r, why, sizeof(why)) < 0) {
		bad++;
		snprintf(callsite_example, sizeof(callsite_example), "%s", why);
	}
	brute_callsites(s, &b);
	for (int c = -1; c < nfns; c++) {
		for (int f = 0; f < nfns; f++) {
			const struct an_row *row = NULL;
			const char *caller = c >= 0 ? fns[c].name : "0x0";

			if (!b.v[c + 1][f].calls)
				continue;
			keys++;
			for (size_t i = 0; i < r->nrows && !row; i++)
				if (!strcmp(r->rows[i].v[AN_COL_FUNCTION].s, caller) &&
				    !strcmp(r->rows[i].v[AN_COL_CALLEE].s, fns[f].name))
					row = &r->rows[i];
			if (row && val(row, AN_COL_CALLS) == b.v[c + 1][f].calls &&
			    val(row, AN_COL_EI) == b.v[c + 1][f].ei && val(row, AN_COL_EE) == b.v[c + 1][f].ee &&
			    val(row, AN_COL_AI) == b.v[c + 1][f].ai && val(row, AN_COL_AE) == b.v[c + 1][f].ae)
				continue;
			if (!bad++)
				snprintf(callsite_example, sizeof(callsite_example),
					 "%.60s -> %.60s: got %llu/%llu/%llu/%llu/%llu want %llu/%llu/%llu/%llu/%llu",
					 caller, fns[f].name, (unsigned long long)val(row, AN_COL_CALLS),
					 (unsigned long long)val(row, AN_COL_EI),
					 (unsigned long long)val(row, AN_COL_EE),
					 (unsigned long long)val(row, AN_COL_AI),
					 (unsigned long long)val(row, AN_COL_AE),
					 (unsigned long long)b.v[c + 1][f].calls,
					 (unsigned long long)b.v[c + 1][f].ei, (unsigned long long)b.v[c + 1][f].ee,
					 (unsigned long long)b.v[c + 1][f].ai, (unsigned long long)b.v[c + 1][f].ae);
		}
	}
	if (keys != r->nrows && !bad++)
		snprintf(callsite_example, sizeof(callsite_example), "%zu rows for %zu (caller, callee) keys",
			 r->nrows, keys);
	callsite_bad += bad != 0;
	an_report_free(r);
}

/*
 * The views of SPEC section 6 against a brute force on the same stream:
 * every interval (interval rule) charged to its whole stack as a path
 * (the merged call tree: a path's inclusive value is every interval whose
 * stack starts with it), and for every function F to the caller of F's
 * outermost occurrence and the callee of its innermost one; calls from
 * the entries.  The tree, the callers and the callees must equal it
 * exactly and pass their own checkers.  Failures are counted over all
 * vectors and seeds and reported in one line.
 */
struct bpath {
	char *key;                /* function indexes + 1, root first */
	uint64_t incl, excl, ai, ae;
};

struct bpaths {
	struct bpath *slot;
	size_t cap, n;
};

static struct bpath *bpath_get(struct bpaths *m, const char *key, size_t len)
{
	uint64_t h = 1469598103934665603ULL;
	size_t i;

	if (2 * (m->n + 1) > m->cap) {
		struct bpaths g = { calloc(m->cap ? 2 * m->cap : 1024, sizeof(*g.slot)),
				    m->cap ? 2 * m->cap : 1024, 0 };

		for (size_t k = 0; k < m->cap; k++)
			if (m->slot[k].key) {
				struct bpath *d = bpath_get(&g, m->slot[k].key, strlen(m->slot[k].key));

				free(d->key);
				*d = m->slot[k];
			}
		free(m->slot);
		*m = g;
	}
	for (size_t k = 0; k < len; k++)
		h = (h ^ (unsigned char)key[k]) * 1099511628211ULL;
	for (i = h & (m->cap - 1); m->slot[i].key; i = (i + 1) & (m->cap - 1))
		if (strlen(m->slot[i].key) == len && !memcmp(m->slot[i].key, key, len))
			return &m->slot[i];
	m->slot[i].key = strndup(key, len);
	m->n++;
	return &m->slot[i];
}

static void bpaths_free(struct bpaths *m)
{
	for (size_t k = 0; k < m->cap; k++)
		free(m->slot[k].key);
	free(m->slot);
	memset(m, 0, sizeof(*m));
}

struct bedge {
	uint64_t calls, incl, excl, ai, ae;
};

/* [F][other + 1]: other -1 is the thread's root (callers only) */
static struct bedge bcallers[MAXFN][MAXFN + 1], bcallees[MAXFN][MAXFN + 1];

/* One interval (sample) of length d, app of it application time, charged
 * to the path stack[0..depth) and to every function's caller and callee. */
static void charge_path(const int *stack, int depth, uint64_t d, uint64_t app, struct bpaths *paths)
{
	char key[4097];
	int top = stack[depth - 1];

	for (int i = 0; i < depth; i++) {
		struct bpath *bp;

		key[i] = (char)(stack[i] + 1);
		bp = bpath_get(paths, key, (size_t)i + 1);
		bp->incl += d;
		bp->ai += app;
		if (i == depth - 1) {
			bp->excl += d;
			bp->ae += app;
		}
	}
	for (int f = 0; f < nfns; f++) {
		int out = -1, in = -1;

		for (int i = 0; i < depth; i++)
			if (stack[i] == f) {
				if (out < 0)
					out = i;
				in = i;
			}
		if (out < 0)
			continue;
		{
			struct bedge *c = &bcallers[f][out ? stack[out - 1] + 1 : 0];

			c->incl += d;
			c->ai += app;
			if (top == f) {
				c->excl += d;
				c->ae += app;
			}
		}
		if (in < depth - 1) {
			struct bedge *c = &bcallees[f][stack[in + 1] + 1];

			c->incl += d;
			c->ai += app;
			if (in + 1 == depth - 1) {
				c->excl += d;
				c->ae += app;
			}
		}
	}
}

static void brute_views(const struct stream *s, struct bpaths *paths)
{
	memset(bcallers, 0, sizeof(bcallers));
	memset(bcallees, 0, sizeof(bcallees));
	for (int ti = 0; ti < s->nth; ti++) {
		const struct thread_stream *ts = &s->th[ti];
		int stack[4096], depth = 0;
		uint64_t last = 0;
		bool started = false, osb = false;

		for (size_t k = 0; k < ts->n; k++) {
			const struct event *e = &ts->ev[k];

			if (e->kind == EV_OS) {
				osb |= started;
				continue;
			}
			if (started && depth > 0)
				charge_path(stack, depth, e->t - last, osb ? 0 : e->t - last, paths);
			started = true;
			last = e->t;
			osb = false;
			if (e->kind == EV_ENTER) {
				int parent = depth ? stack[depth - 1] : -1;

				bcallers[e->fn][parent + 1].calls++;
				if (parent >= 0)
					bcallees[parent][e->fn + 1].calls++;
				if (depth < 4096)
					stack[depth++] = e->fn;
			} else {
				for (int j = depth - 1; j >= 0; j--)
					if (stack[j] == e->fn) {
						depth = j;
						break;
					}
			}
		}
	}
}

static int views_bad, views_checked;
static char views_example[300];

static bool edge_same(const struct an_row *row, const struct bedge *b)
{
	if (row && row->v[AN_COL_INCL_SAMPLES].present)
		return val(row, AN_COL_INCL_SAMPLES) == b->incl && val(row, AN_COL_EXCL_SAMPLES) == b->excl;
	return row && val(row, AN_COL_CALLS) == b->calls && val(row, AN_COL_EI) == b->incl &&
		val(row, AN_COL_EE) == b->excl && val(row, AN_COL_AI) == b->ai &&
		val(row, AN_COL_AE) == b->ae;
}

static const struct an_row *edge_row(const struct an_row *rows, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(rows[i].v[AN_COL_FUNCTION].s, name))
			return &rows[i];
	return NULL;
}

static int check_edges(const struct an_row *rows, size_t n, struct bedge *b, bool root,
		       const char *what, const char *fname)
{
	size_t used = 0;

	for (int o = root ? -1 : 0; o < nfns; o++) {
		const struct bedge *e = &b[o + 1];
		const char *name = o < 0 ? "[root]" : fns[o].name;
		const struct an_row *row;

		if (!e->calls && !e->incl)
			continue;
		used++;
		row = edge_row(rows, n, name);
		if (!edge_same(row, e)) {
			snprintf(views_example, sizeof(views_example),
				 "%s of %s: %s got %llu/%llu/%llu/%llu/%llu want %llu/%llu/%llu/%llu/%llu",
				 what, fname, name, (unsigned long long)val(row, AN_COL_CALLS),
				 (unsigned long long)val(row, AN_COL_EI), (unsigned long long)val(row, AN_COL_EE),
				 (unsigned long long)val(row, AN_COL_AI), (unsigned long long)val(row, AN_COL_AE),
				 (unsigned long long)e->calls, (unsigned long long)e->incl,
				 (unsigned long long)e->excl, (unsigned long long)e->ai, (unsigned long long)e->ae);
			return 1;
		}
	}
	if (used != n) {
		snprintf(views_example, sizeof(views_example), "%s of %s: %zu rows for %zu", what, fname,
			 n, used);
		return 1;
	}
	return 0;
}

/* The views of p against the brute force in paths, bcallers, bcallees. */
static void check_views_against(struct an_profile *p, struct bpaths *paths)
{
	struct an_tree_options to = { .by = AN_BY_FUNCTION, .app_time = AN_APP_INTERVAL };
	struct an_tree *t = NULL;
	char err[256], key[4097];
	int bad = 0;
	size_t nonzero = 0, bnonzero = 0;

	views_checked++;
	if (an_tree_build(p, &to, &t, err, sizeof(err)) < 0) {
		snprintf(views_example, sizeof(views_example), "tree: %s", err);
		views_bad++;
		return;
	}
	if (an_tree_check(t, err, sizeof(err)) < 0) {
		snprintf(views_example, sizeof(views_example), "tree check: %s", err);
		bad++;
	}
	for (size_t i = 0; i < an_cct_size(t->cct) && !bad; i++) {
		const struct an_cct_node *nd = an_cct_node(t->cct, (uint32_t)i);
		struct bpath *bp;
		size_t len = nd->depth;

		if (nd->parent == AN_CCT_NONE || !nd->incl)
			continue;
		nonzero++;
		for (const struct an_cct_node *x = nd; x->parent != AN_CCT_NONE;
		     x = an_cct_node(t->cct, x->parent))
			key[x->depth - 1] = (char)(fake_fn(an_cct_func_name(t->cct, x->func)) + 1);
		bp = bpath_get(paths, key, len);
		if (bp->incl != nd->incl || bp->excl != nd->excl || bp->ai != nd->app_incl ||
		    bp->ae != nd->app_excl) {
			snprintf(views_example, sizeof(views_example),
				 "tree node %zu (%s, depth %u): got %llu/%llu want %llu/%llu", i,
				 an_cct_func_name(t->cct, nd->func), nd->depth,
				 (unsigned long long)nd->incl, (unsigned long long)nd->excl,
				 (unsigned long long)bp->incl, (unsigned long long)bp->excl);
			bad++;
		}
	}
	for (size_t k = 0; k < paths->cap; k++)
		bnonzero += paths->slot[k].key && paths->slot[k].incl;
	if (!bad && nonzero != bnonzero) {
		snprintf(views_example, sizeof(views_example), "%zu tree nodes with time, %zu paths",
			 nonzero, bnonzero);
		bad++;
	}
	an_tree_free(t);
	for (int f = 0; f < nfns && !bad; f++) {
		struct an_callers *c = NULL;
		bool any = false;

		for (int o = 0; o <= nfns; o++)
			any |= bcallers[f][o].calls || bcallers[f][o].incl;
		if (an_callers_build(p, fns[f].name, AN_APP_INTERVAL, &c, err, sizeof(err)) < 0) {
			if (any) {
				snprintf(views_example, sizeof(views_example), "callers of %.40s: %.200s",
					 fns[f].name, err);
				bad++;
			}
			continue;
		}
		if (c->nfn != 1 || an_callers_check(c, err, sizeof(err)) < 0) {
			snprintf(views_example, sizeof(views_example), "callers of %.40s: %zu entries, %.200s",
				 fns[f].name, c->nfn, c->nfn == 1 ? err : "");
			bad++;
		} else {
			bad += check_edges(c->fn[0].callers, c->fn[0].ncallers, bcallers[f], true,
					   "callers", fns[f].name);
			bad += !bad && check_edges(c->fn[0].callees, c->fn[0].ncallees, bcallees[f],
						   false, "callees", fns[f].name);
		}
		an_callers_free(c);
	}
	views_bad += bad != 0;
}

static void check_views(struct an_profile *p, const struct stream *s)
{
	struct bpaths paths = { 0 };

	brute_views(s, &paths);
	check_views_against(p, &paths);
	bpaths_free(&paths);
}

/*
 * Drive the engine with the stream and write its records (plus a session
 * record) to tmp_path.  One arena per process; proc_id = pid.
 */
static int record_stream(const struct stream *s)
{
	size_t len = 4u << 20;
	struct {
		uint32_t pid;
		void *buf;
		struct sc_eng_arena a;
	} procs[16];
	int nprocs = 0, ret = 0;
	struct sc_writer *w;
	struct sc_rec_session sess = { .method = SC_METHOD_INSTRUMENT, .os_requested = SC_OS_ALL,
				       .argc = 2 };
	struct sc_rec_session_end end = { .duration_ns = 1000, .os_observed = SC_OS_ALL };

	for (int i = 0; i < s->nth; i++) {
		const struct thread_stream *ts = &s->th[i];
		struct sc_eng_thread *t;
		int p;
		uint64_t os_pending = 0;
		bool pending = false;

		for (p = 0; p < nprocs && procs[p].pid != ts->pid; p++)
			;
		if (p == nprocs) {
			procs[p].pid = ts->pid;
			procs[p].buf = calloc(1, len);
			sc_eng_arena_init(&procs[p].a, procs[p].buf, len);
			nprocs++;
		}
		t = NULL;
		for (size_t k = 0; k < ts->n; k++) {
			const struct event *e = &ts->ev[k];

			if (e->kind == EV_OS) {
				pending = true;
				os_pending += e->os_ns;
				continue;
			}
			if (!t)
				t = sc_eng_thread_new(&procs[p].a, ts->tid, e->t);
			if (pending)
				sc_eng_os_exact(t, e->t, os_pending);
			pending = false;
			os_pending = 0;
			if (e->kind == EV_ENTER)
				sc_eng_enter(t, fake_addr(e->fn),
					     e->site_fn >= 0 ? fake_addr(e->site_fn) + 0x21 : 0, e->t);
			else
				sc_eng_exit(t, fake_addr(e->fn), e->t);
		}
	}
	if (sc_writer_open(tmp_path, SC_FEAT_INSTRUMENT, &w))
		return -1;
	sc_writer_add2(w, SC_REC_SESSION, &sess, sizeof(sess), "prog\0arg\0", 9);
	for (int p = 0; p < nprocs; p++) {
		uint64_t offs[64];
		int n = sc_cct_threads(procs[p].buf, len, offs, 64);
		struct sc_tick_conv conv = SC_TICK_CONV_IDENTITY;
		struct sc_rec_process pr = { .proc_id = procs[p].pid, .pid = procs[p].pid + 1000,
					     .parent_proc_id = UINT32_MAX };

		sc_writer_add2(w, SC_REC_PROCESS, &pr, sizeof(pr), "/bin/app", 9);
		for (int j = 0; j < n && j < 64; j++)
			if (sc_cct_emit_thread(w, procs[p].buf, len, offs[j], procs[p].pid, &conv, NULL))
				ret = -1;
		free(procs[p].buf);
	}
	sc_writer_add(w, SC_REC_SESSION_END, &end, sizeof(end));
	if (sc_writer_close(w))
		ret = -1;
	return ret;
}

static struct an_profile *load_tmp(void)
{
	struct an_profile *p = an_profile_new(&fake);
	char err[256];
	const char *damaged;

	if (an_profile_load(p, tmp_path, &damaged, err, sizeof(err)) < 0 || damaged) {
		ok(0, "load %s: %s", tmp_path, damaged ? damaged : err);
		an_profile_free(p);
		return NULL;
	}
	return p;
}

/* ---- (a) the shared vectors --------------------------------------------------- */

struct expect {
	char fn[64];
	uint64_t calls, ei, ee, ai, ae;
};

static uint64_t kv(const char *line, const char *key)
{
	char pat[32];
	const char *s;

	snprintf(pat, sizeof(pat), " %s=", key);
	s = strstr(line, pat);
	return s ? strtoull(s + strlen(pat), NULL, 10) : UINT64_MAX;
}

static void test_vector(const char *dir, const char *name)
{
	char path[512], line[512];
	FILE *f;
	struct stream s = { 0 };
	struct thread_stream *cur = NULL;
	struct expect ex[MAXFN];
	int nex = 0;
	uint64_t s_ei = 0, s_ai = 0, s_rep = 0;
	struct an_profile *p;
	struct an_report *r;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "r");
	if (!ok(f != NULL, "%s: open", name))
		return;
	fake_reset();
	while (fgets(line, sizeof(line), f)) {
		char kind[32], arg[64];
		unsigned long long a, b;

		if (line[0] == '#' || line[0] == '\n')
			continue;
		if (sscanf(line, "thread %llu %llu", &a, &b) == 2) {
			cur = &s.th[s.nth++];
			cur->pid = (uint32_t)a;
			cur->tid = (uint32_t)b;
		} else if (sscanf(line, "expect session %31s", kind) == 1) {
			s_ei = kv(line, "ei");
			s_ai = kv(line, "ai");
			s_rep = kv(line, "repairs");
		} else if (sscanf(line, "expect %63s", arg) == 1) {
			struct expect *e = &ex[nex++];

			snprintf(e->fn, sizeof(e->fn), "%s", arg);
			e->calls = kv(line, "calls");
			e->ei = kv(line, "ei");
			e->ee = kv(line, "ee");
			e->ai = kv(line, "ai");
			e->ae = kv(line, "ae");
		} else if (sscanf(line, "%31s %llu %63s", kind, &a, arg) == 3 && cur) {
			struct event e = { .t = a, .site_fn = -1 };

			if (!strcmp(kind, "enter")) {
				e.kind = EV_ENTER;
				e.fn = fake_fn(arg);
			} else if (!strcmp(kind, "exit")) {
				e.kind = EV_EXIT;
				e.fn = fake_fn(arg);
			} else {
				e.kind = EV_OS;
			}
			push_ev(cur, e);
		}
	}
	fclose(f);
	assign_sites(&s);
	if (!ok(record_stream(&s) == 0, "%s: engine records written", name) || !(p = load_tmp())) {
		stream_free(&s);
		return;
	}
	r = build(p, AN_BY_FUNCTION, AN_APP_INTERVAL, name);
	if (r) {
		is_u64(r->session.elapsed_inclusive_ns, s_ei, "%s: session EI", name);
		is_u64(r->session.application_inclusive_ns, s_ai, "%s: session AI", name);
		is_u64(r->session.repairs, s_rep, "%s: repairs", name);
		for (int i = 0; i < nex; i++) {
			const struct an_row *row = find_row(r, AN_COL_FUNCTION, ex[i].fn);
			int good = row && val(row, AN_COL_CALLS) == ex[i].calls &&
				val(row, AN_COL_EI) == ex[i].ei && val(row, AN_COL_EE) == ex[i].ee &&
				val(row, AN_COL_AI) == ex[i].ai && val(row, AN_COL_AE) == ex[i].ae;

			ok(good, "%s: %s calls/ei/ee/ai/ae", name, ex[i].fn);
			if (!good)
				tap_diag("got %llu/%llu/%llu/%llu/%llu want %llu/%llu/%llu/%llu/%llu",
					 (unsigned long long)val(row, AN_COL_CALLS),
					 (unsigned long long)val(row, AN_COL_EI),
					 (unsigned long long)val(row, AN_COL_EE),
					 (unsigned long long)val(row, AN_COL_AI),
					 (unsigned long long)val(row, AN_COL_AE),
					 (unsigned long long)ex[i].calls, (unsigned long long)ex[i].ei,
					 (unsigned long long)ex[i].ee, (unsigned long long)ex[i].ai,
					 (unsigned long long)ex[i].ae);
		}
		is_u64(r->nrows, nex, "%s: one row per function", name);
		an_report_free(r);
	}
	/* every other grouping of the same data satisfies the invariants */
	for (enum an_group g = AN_BY_MODULE; g <= AN_BY_PROCESS; g++)
		an_report_free(build(p, g, AN_APP_INTERVAL, name));
	check_callsites(p, &s);
	check_views(p, &s);
	an_profile_free(p);
	stream_free(&s);
}

static void test_vectors(void)
{
	const char *dir = getenv("SC_VECTORS") ? getenv("SC_VECTORS") : "tests/vectors";
	DIR *d = opendir(dir);
	struct dirent *de;
	char *names[256];
	int n = 0;

	if (!ok(d != NULL, "vectors directory %s", dir))
		return;
	while ((de = readdir(d)) && n < 256) {
		size_t l = strlen(de->d_name);

		if (l > 4 && !strcmp(de->d_name + l - 4, ".vec"))
			names[n++] = strdup(de->d_name);
	}
	closedir(d);
	ok(n >= 10, "found %d vectors", n);
	for (int i = 0; i < n; i++) {
		test_vector(dir, names[i]);
		free(names[i]);
	}
}

/* ---- (b) hand-built CCT records -------------------------------------------------- */

static void add_rec(struct an_profile *p, enum sc_rec_type type, const void *d, size_t size)
{
	struct sc_record rec = { type, (uint32_t)size, d };

	an_profile_add(p, &rec);
}

/* A node: own EE/AE (exact AE = AE / 2), calls, and one completed call
 * statistic so per-call values are predictable. */
static void node(struct an_profile *p, uint32_t proc, uint32_t tid, uint32_t id, uint32_t parent,
		 uint64_t func, uint64_t calls, uint64_t ee, uint64_t ae, uint64_t incl)
{
	struct sc_rec_cct_node n = {
		.proc_id = proc, .tid = tid, .id = id, .parent = parent, .func = func,
		.calls = calls, .elapsed_excl = ee, .app_excl = ae, .app_excl_exact = ae / 2,
		.completed = calls, .incl_min = incl, .incl_max = incl, .incl_sum = incl * calls,
		.excl_min = ee / (calls ? calls : 1), .excl_max = ee / (calls ? calls : 1),
		.excl_sum = ee / (calls ? calls : 1) * calls,
	};

	add_rec(p, SC_REC_CCT_NODE, &n, sizeof(n));
}

static void root(struct an_profile *p, uint32_t proc, uint32_t tid)
{
	node(p, proc, tid, 0, UINT32_MAX, 0, 0, 0, 0, 0);
}

static void expect_row(const struct an_report *r, const char *what, const struct an_row *row,
		       uint64_t calls, uint64_t ei, uint64_t ee, uint64_t ai, uint64_t ae)
{
	int good = row && val(row, AN_COL_CALLS) == calls && val(row, AN_COL_EI) == ei &&
		val(row, AN_COL_EE) == ee && val(row, AN_COL_AI) == ai && val(row, AN_COL_AE) == ae;

	(void)r;
	ok(good, "%s: calls/ei/ee/ai/ae = %llu/%llu/%llu/%llu/%llu", what,
	   (unsigned long long)calls, (unsigned long long)ei, (unsigned long long)ee,
	   (unsigned long long)ai, (unsigned long long)ae);
	if (!good && row)
		tap_diag("got %llu/%llu/%llu/%llu/%llu", (unsigned long long)val(row, AN_COL_CALLS),
			 (unsigned long long)val(row, AN_COL_EI), (unsigned long long)val(row, AN_COL_EE),
			 (unsigned long long)val(row, AN_COL_AI), (unsigned long long)val(row, AN_COL_AE));
}

static void test_hand_recursion(void)
{
	struct an_profile *p;
	struct an_report *r;
	int m, f, g;

	fake_reset();
	m = fake_fn("main");            /* module /bin/app */
	f = fake_fn("f");               /* /lib/liba.so */
	g = fake_fn("g");               /* /lib/libb.so */
	/*
	 * main(10) -> f(20) -> f(30) -> g(5)
	 *                   -> g(7) -> f(11)
	 * main, f and g each appear; f recursive directly and through g.
	 */
	p = an_profile_new(&fake);
	root(p, 1, 1);
	node(p, 1, 1, 1, 0, fake_addr(m), 1, 10, 8, 83);
	node(p, 1, 1, 2, 1, fake_addr(f), 2, 20, 20, 73);
	node(p, 1, 1, 3, 2, fake_addr(f), 3, 30, 10, 35);
	node(p, 1, 1, 4, 3, fake_addr(g), 1, 5, 5, 5);
	node(p, 1, 1, 5, 2, fake_addr(g) + 0x10, 1, 7, 0, 18);   /* same g, other address */
	node(p, 1, 1, 6, 5, fake_addr(f), 1, 11, 11, 11);
	r = build(p, AN_BY_FUNCTION, AN_APP_INTERVAL, "recursion");
	if (r) {
		is_u64(r->session.elapsed_inclusive_ns, 83, "recursion: session EI");
		is_u64(r->session.application_inclusive_ns, 54, "recursion: session AI");
		is_u64(r->nrows, 3, "recursion: g's two addresses are one row");
		expect_row(r, "main", find_row(r, AN_COL_FUNCTION, "main"), 1, 83, 10, 54, 8);
		/* f: outermost node 2 only: 20+30+5+7+11 */
		expect_row(r, "f charged once", find_row(r, AN_COL_FUNCTION, "f"), 6, 73, 61, 46, 41);
		/* g: outermost nodes 4 and 5: 5 + (7 + 11) */
		expect_row(r, "g", find_row(r, AN_COL_FUNCTION, "g"), 2, 23, 12, 16, 5);
		is_near(r->rows[0].v[AN_COL_EI_PCT].d, 100.0, 1e-9, "recursion: main EI%% = 100");
		ok(!strcmp(r->rows[0].v[AN_COL_FUNCTION].s, "main"), "recursion: sorted by EI, main first");
		{
			const struct an_row *row = find_row(r, AN_COL_FUNCTION, "f");

			is_near(row->v[AN_COL_EE_PCT].d, 100.0 * 61 / 83, 1e-9, "f EE%% of session EI");
			is_near(row->v[AN_COL_AE_PCT].d, 100.0 * 41 / 54, 1e-9, "f AE%% of session AI");
			is_u64(val(row, AN_COL_MIN_EI), 11, "f min EI per call");
			is_u64(val(row, AN_COL_MAX_EI), 73, "f max EI per call");
			is_u64(val(row, AN_COL_MEAN_EI), (73 * 2 + 35 * 3 + 11 + 3) / 6, "f mean EI per call");
		}
		an_report_free(r);
	}
	/* exact mode: AE exact is AE/2 per node */
	r = build(p, AN_BY_FUNCTION, AN_APP_EXACT, "recursion exact");
	if (r) {
		is_u64(r->session.application_inclusive_ns, 4 + 10 + 5 + 2 + 0 + 5, "exact: session AI");
		expect_row(r, "exact f", find_row(r, AN_COL_FUNCTION, "f"), 6, 73, 61, 22, 20);
		an_report_free(r);
	}
	/* modules: app, liba (f), libb (g); liba is charged once across g */
	r = build(p, AN_BY_MODULE, AN_APP_INTERVAL, "modules");
	if (r) {
		is_u64(r->nrows, 3, "modules: three rows");
		expect_row(r, "module /bin/app", find_row(r, AN_COL_MODULE, "/bin/app"), 1, 83, 10, 54, 8);
		expect_row(r, "module liba", find_row(r, AN_COL_MODULE, "/lib/liba.so"), 6, 73, 61, 46, 41);
		expect_row(r, "module libb", find_row(r, AN_COL_MODULE, "/lib/libb.so"), 2, 23, 12, 16, 5);
		an_report_free(r);
	}
	an_profile_free(p);
}

static void test_hand_threads(void)
{
	struct an_profile *p;
	struct an_report *r;
	int a, b;
	struct sc_rec_process pr1 = { .proc_id = 7, .pid = 700, .parent_proc_id = UINT32_MAX };
	struct sc_rec_thread_stats st = { .proc_id = 7, .tid = 700, .repairs = 2, .open_frames = 1,
					  .os_count = { 3, 4, 5 } };

	fake_reset();
	a = fake_fn("a");
	b = fake_fn("b");
	p = an_profile_new(&fake);
	{
		struct {
			struct sc_rec_process h;
			char exe[16];
		} rec = { pr1, "/bin/app" };

		add_rec(p, SC_REC_PROCESS, &rec, sizeof(rec));
	}
	/* thread 700 of process 7: a(100) -> b(50, 10 app) ; thread 701: b(40) */
	root(p, 7, 700);
	node(p, 7, 700, 1, 0, fake_addr(a), 1, 100, 100, 150);
	node(p, 7, 700, 2, 1, fake_addr(b), 4, 50, 10, 50);
	root(p, 7, 701);
	node(p, 7, 701, 3, 0, fake_addr(b), 2, 40, 40, 40);     /* ids need not be dense */
	/* process 8 (a fork): a(9) */
	root(p, 8, 800);
	node(p, 8, 800, 1, 0, fake_addr(a), 1, 9, 0, 9);
	add_rec(p, SC_REC_THREAD_STATS, &st, sizeof(st));
	r = build(p, AN_BY_FUNCTION, AN_APP_INTERVAL, "threads");
	if (r) {
		is_u64(r->session.elapsed_inclusive_ns, 199, "threads: session EI");
		is_u64(r->session.application_inclusive_ns, 150, "threads: session AI");
		is_u64(r->session.threads, 3, "threads: 3 threads");
		is_u64(r->session.processes, 2, "threads: 2 processes");
		is_u64(r->session.repairs, 2, "threads: repairs from thread stats");
		is_u64(r->session.open_frames, 1, "threads: open frames");
		expect_row(r, "a over processes", find_row(r, AN_COL_FUNCTION, "a"), 2, 159, 109, 110, 100);
		expect_row(r, "b over threads", find_row(r, AN_COL_FUNCTION, "b"), 6, 90, 90, 50, 50);
		an_report_free(r);
	}
	r = build(p, AN_BY_THREAD, AN_APP_INTERVAL, "threads");
	if (r) {
		is_u64(r->nrows, 3, "by thread: three rows");
		expect_row(r, "tid 700", find_row_u(r, AN_COL_TID, 700), 5, 150, 150, 110, 110);
		expect_row(r, "tid 701", find_row_u(r, AN_COL_TID, 701), 2, 40, 40, 40, 40);
		is_u64(val(find_row_u(r, AN_COL_TID, 700), AN_COL_PID), 700, "tid 700 has pid 700");
		an_report_free(r);
	}
	r = build(p, AN_BY_PROCESS, AN_APP_INTERVAL, "processes");
	if (r) {
		is_u64(r->nrows, 2, "by process: two rows");
		expect_row(r, "process 7", find_row_u(r, AN_COL_PID, 700), 7, 190, 190, 150, 150);
		/* no PROCESS record for 8: pid falls back to the proc id */
		expect_row(r, "process 8", find_row_u(r, AN_COL_PID, 8), 1, 9, 9, 0, 0);
		an_report_free(r);
	}
	an_profile_free(p);
}

static void test_hand_damaged(void)
{
	struct an_profile *p;
	struct an_report *r;
	int a, b;
	struct sc_rec_cct_node bad = { 0 };
	struct sc_record rec = { SC_REC_CCT_NODE, 8, &bad };

	fake_reset();
	a = fake_fn("a");
	b = fake_fn("b");
	p = an_profile_new(&fake);
	root(p, 1, 1);
	node(p, 1, 1, 1, 0, fake_addr(a), 1, 10, 10, 10);
	node(p, 1, 1, 2, 99, fake_addr(b), 1, 5, 5, 5);     /* parent missing */
	node(p, 1, 1, 3, 4, fake_addr(a), 1, 3, 3, 3);      /* a cycle: 3 <-> 4 */
	node(p, 1, 1, 4, 3, fake_addr(b), 1, 2, 2, 2);
	node(p, 1, 1, 5, 5, fake_addr(b), 1, 1, 1, 1);      /* its own parent */
	node(p, 1, 1, 4000000000u, 1, fake_addr(b), 1, 6, 6, 6);   /* sparse ids: hashed */
	node(p, 1, 1, 4000000001u, 4000000000u, fake_addr(a), 1, 7, 7, 7);
	ok(an_profile_add(p, &rec) < 0, "a truncated record is refused");
	r = build(p, AN_BY_FUNCTION, AN_APP_INTERVAL, "damaged tree");
	if (r) {
		is_u64(r->session.elapsed_inclusive_ns, 34, "damaged: every node counted once");
		is_u64(r->session.bad_records, 1, "damaged: bad record counted");
		ok(val(find_row(r, AN_COL_FUNCTION, "a"), AN_COL_EE) == 20 &&
		   val(find_row(r, AN_COL_FUNCTION, "b"), AN_COL_EE) == 14, "damaged: EE of a and b");
		/* a: outermost at node 1 (10 + 6 + 7) and node 3 (3 + 2) */
		is_u64(val(find_row(r, AN_COL_FUNCTION, "a"), AN_COL_EI), 28, "damaged: EI of a through sparse ids");
		an_report_free(r);
	}
	an_profile_free(p);
}

static void test_hand_callsite(void)
{
	struct an_profile *p;
	struct an_report *r;
	int m, f;
	struct sc_rec_callsite cs1 = { 1, 1, 0, 0, 3, 30, 20, 25, 15 };
	struct sc_rec_callsite cs2 = { 1, 1, 0, 0, 2, 10, 10, 0, 0 };
	char err[256];
	struct an_report_options o = { AN_BY_LINE, AN_APP_INTERVAL };

	fake_reset();
	m = fake_fn("main");
	f = fake_fn("f");
	cs1.site = fake_addr(m) + 0x21;         /* line 0 + 2 of main */
	cs1.callee = fake_addr(f);
	cs2.site = fake_addr(m) + 0x22;         /* same line: merged */
	cs2.callee = fake_addr(f) + 4;          /* same function */
	p = an_profile_new(&fake);
	root(p, 1, 1);
	node(p, 1, 1, 1, 0, fake_addr(m), 1, 10, 10, 50);
	node(p, 1, 1, 2, 1, fake_addr(f), 5, 40, 25, 8);
	add_rec(p, SC_REC_CALLSITE, &cs1, sizeof(cs1));
	add_rec(p, SC_REC_CALLSITE, &cs2, sizeof(cs2));
	r = build(p, AN_BY_CALLSITE, AN_APP_INTERVAL, "callsite");
	if (r) {
		is_u64(r->nrows, 1, "callsite: one line, one callee");
		expect_row(r, "main:2 -> f", &r->rows[0], 5, 40, 30, 25, 15);
		is_str(r->rows[0].v[AN_COL_CALLEE].s, "f", "callsite: callee");
		is_str(r->rows[0].v[AN_COL_FUNCTION].s, "main", "callsite: caller");
		is_u64(val(&r->rows[0], AN_COL_LINE), 2, "callsite: line of the call");
		is_str(r->rows[0].v[AN_COL_FILE].s, "f0.c", "callsite: file");
		an_report_free(r);
	}
	o.by = AN_BY_CALLSITE;
	o.app_time = AN_APP_EXACT;
	ok(an_report_build(p, &o, &r, err, sizeof(err)) == -EINVAL, "callsite + exact is refused");
	o.by = AN_BY_LINE;
	ok(an_report_build(p, &o, &r, err, sizeof(err)) == -EINVAL && strstr(err, "--by line"),
	   "instrumentation line + exact is refused");
	o.by = AN_BY_ADDRESS;
	o.app_time = AN_APP_INTERVAL;
	ok(an_report_build(p, &o, &r, err, sizeof(err)) == -EINVAL && strstr(err, "--by line"),
	   "--by address of an instrumentation recording is refused, pointing to line");
	an_profile_free(p);
}

/*
 * Instrumentation by line: a line's calls give it their inclusive time;
 * a function's own time is on its first line (its entry's), so the
 * exclusive values add up to the session's.
 */
static void test_instr_lines(void)
{
	struct an_profile *p;
	struct an_report *r;
	struct sc_rec_callsite cs1 = { 1, 1, 0, 0, 3, 30, 20, 25, 15 };
	struct sc_rec_callsite cs2 = { 1, 1, 0, 0, 2, 10, 10, 0, 0 };
	char why[256];
	int m, f;

	fake_reset();
	fake_fn("unused");                      /* function 0 would have line 0 */
	m = fake_fn("main");                    /* f1.c, entry line 10 */
	f = fake_fn("f");                       /* f2.c, entry line 20 */
	cs1.site = fake_addr(m) + 0x31;         /* line 13 */
	cs1.callee = fake_addr(f);
	cs2.site = fake_addr(m) + 0x32;         /* the same line */
	cs2.callee = fake_addr(f);
	p = an_profile_new(&fake);
	root(p, 1, 1);
	node(p, 1, 1, 1, 0, fake_addr(m), 1, 10, 10, 50);
	node(p, 1, 1, 2, 1, fake_addr(f), 5, 40, 25, 8);
	add_rec(p, SC_REC_CALLSITE, &cs1, sizeof(cs1));
	add_rec(p, SC_REC_CALLSITE, &cs2, sizeof(cs2));
	r = build(p, AN_BY_LINE, AN_APP_INTERVAL, "instrumentation by line");
	if (r) {
		const struct an_row *row;

		is_u64(r->nrows, 3, "lines: the call line and two first lines");
		is_u64(r->ncols, 13, "lines: file, line, function, module and the values");
		row = find_row_u(r, AN_COL_LINE, 13);
		expect_row(r, "f1.c:13 (main's calls of f)", row, 5, 40, 0, 25, 0);
		ok(row && !strcmp(row->v[AN_COL_FILE].s, "f1.c") && !strcmp(row->v[AN_COL_FUNCTION].s, "main"),
		   "lines: the call line is main's, in f1.c");
		row = find_row_u(r, AN_COL_LINE, 10);
		expect_row(r, "f1.c:10 (main's own time)", row, 0, 10, 10, 10, 10);
		row = find_row_u(r, AN_COL_LINE, 20);
		expect_row(r, "f2.c:20 (f's own time)", row, 0, 40, 40, 25, 25);
		ok(row && !strcmp(row->v[AN_COL_FILE].s, "f2.c") && !strcmp(row->v[AN_COL_FUNCTION].s, "f"),
		   "lines: f's first line, in f2.c");
		ok(an_report_check(r, why, sizeof(why)) == 0, "lines: EE adds up to session EI (%s)", why);
		an_report_free(r);
	}
	an_profile_free(p);
}

/*
 * SPEC section 14: resolution_ns is the probe cost removed from one call
 * (2 x the mean cost per event); a row whose EE per call is under it is
 * marked, in the flat rows and the tree, and nothing is marked without a
 * measured cost.
 */
static void test_resolution(void)
{
	struct sc_rec_probe_cost pc = { .samples = 3, .cost_ps = { 9000, 11000, 10000, 10000 } };
	struct an_tree_options to = { .by = AN_BY_FUNCTION };
	struct an_profile *p;
	struct an_report *r;
	struct an_tree *t;
	const uint32_t *kids;
	struct an_row row;
	char err[256];
	int m, f, g;

	fake_reset();
	m = fake_fn("main");
	f = fake_fn("f");
	g = fake_fn("g");
	for (int with_cost = 1; with_cost >= 0; with_cost--) {
		p = an_profile_new(&fake);
		if (with_cost)
			add_rec(p, SC_REC_PROBE_COST, &pc, sizeof(pc));
		root(p, 1, 1);
		node(p, 1, 1, 1, 0, fake_addr(m), 1, 1000, 1000, 1390);
		node(p, 1, 1, 2, 1, fake_addr(f), 10, 190, 190, 19);   /* 19 ns a call: under 20 */
		node(p, 1, 1, 3, 1, fake_addr(g), 10, 200, 200, 20);   /* 20 ns a call: not under */
		r = build(p, AN_BY_FUNCTION, AN_APP_INTERVAL, "resolution");
		if (r) {
			is_u64(r->session.resolution_ns, with_cost ? 20 : 0, "resolution: %s", with_cost ?
			       "2 x the 10 ns mean cost per event" : "none without a measured cost");
			is_u64(val(find_row(r, AN_COL_FUNCTION, "f"), AN_COL_BELOW_RES), with_cost,
			       "resolution: f (19 ns a call) %s", with_cost ? "below" : "not marked");
			is_u64(val(find_row(r, AN_COL_FUNCTION, "g"), AN_COL_BELOW_RES), 0,
			       "resolution: g (20 ns a call) not below");
			is_u64(val(find_row(r, AN_COL_FUNCTION, "main"), AN_COL_BELOW_RES), 0,
			       "resolution: main (1000 ns a call) not below");
			an_report_free(r);
		}
		if (with_cost && ok(an_tree_build(p, &to, &t, err, sizeof(err)) == 0, "resolution: tree builds")) {
			int marked = 0, n = 0;

			n = (int)an_tree_children(t, t->roots[0], &kids);
			for (int i = 0; i < n; i++) {
				an_tree_row(t, kids[i], &row);
				marked += (int)row.v[AN_COL_BELOW_RES].u * (strcmp(row.v[AN_COL_FUNCTION].s, "f") ? 10 : 1);
			}
			is_u64((uint64_t)marked, 1, "resolution: in the tree, f's node marked and g's not");
			an_tree_free(t);
		}
		an_profile_free(p);
	}
}

static void test_sort(void)
{
	struct an_profile *p;
	struct an_report *r;
	int a, b, c;

	fake_reset();
	a = fake_fn("aa");
	b = fake_fn("bb");
	c = fake_fn("cc");
	p = an_profile_new(&fake);
	root(p, 1, 1);
	node(p, 1, 1, 1, 0, fake_addr(a), 1, 10, 0, 10);
	node(p, 1, 1, 2, 0, fake_addr(b), 7, 30, 5, 30);
	node(p, 1, 1, 3, 0, fake_addr(c), 3, 20, 20, 20);
	r = build(p, AN_BY_FUNCTION, AN_APP_INTERVAL, "sort");
	if (!r)
		goto out;
	ok(!strcmp(r->rows[0].v[AN_COL_FUNCTION].s, "bb") &&
	   !strcmp(r->rows[2].v[AN_COL_FUNCTION].s, "aa"), "default sort: EI descending");
	ok(an_report_sort_by_name(r, "ai") == 0 && !strcmp(r->rows[0].v[AN_COL_FUNCTION].s, "cc"),
	   "--sort ai");
	ok(an_report_sort_by_name(r, "calls") == 0 && !strcmp(r->rows[0].v[AN_COL_FUNCTION].s, "bb") &&
	   !strcmp(r->rows[1].v[AN_COL_FUNCTION].s, "cc"), "--sort calls");
	ok(an_report_sort_by_name(r, "function") == 0 && !strcmp(r->rows[0].v[AN_COL_FUNCTION].s, "aa"),
	   "--sort function: ascending");
	ok(an_report_sort_by_name(r, "application_exclusive_pct") == 0 &&
	   !strcmp(r->rows[0].v[AN_COL_FUNCTION].s, "cc"), "--sort by a JSON name");
	ok(an_report_sort_by_name(r, "inclusive") == 0 && !strcmp(r->rows[0].v[AN_COL_FUNCTION].s, "bb"),
	   "--sort inclusive means EI in an instrumentation report");
	ok(an_report_sort_by_name(r, "exclusive_samples") < 0, "a sampling column is refused");
	ok(an_report_sort_by_name(r, "nonsense") < 0, "an unknown column is refused");
	an_report_free(r);
out:
	an_profile_free(p);
}

/* The checker itself must catch violations. */
static void test_checker(void)
{
	struct an_profile *p;
	struct an_report *r;
	char why[256];
	int a;

	fake_reset();
	a = fake_fn("a");
	p = an_profile_new(&fake);
	root(p, 1, 1);
	node(p, 1, 1, 1, 0, fake_addr(a), 1, 10, 5, 10);
	r = build(p, AN_BY_FUNCTION, AN_APP_INTERVAL, "checker");
	if (r) {
		r->rows[0].v[AN_COL_AE].u = 11;
		ok(an_report_check(r, why, sizeof(why)) < 0 && strstr(why, "AE"), "checker: AE > EE caught (%s)", why);
		r->rows[0].v[AN_COL_AE].u = 5;
		r->rows[0].v[AN_COL_EE].u = 9;
		r->rows[0].v[AN_COL_EE_PCT].d = 90;
		ok(an_report_check(r, why, sizeof(why)) < 0 && strstr(why, "sum of EE"),
		   "checker: sum of EE != session EI caught (%s)", why);
		r->rows[0].v[AN_COL_EE].u = 10;
		r->rows[0].v[AN_COL_EE_PCT].d = 100;
		ok(an_report_check(r, why, sizeof(why)) == 0, "checker: restored report passes");
		r->rows[0].v[AN_COL_AI_PCT].d = 50;
		ok(an_report_check(r, why, sizeof(why)) < 0, "checker: wrong percentage caught");
		an_report_free(r);
	}
	an_profile_free(p);
}

/*
 * Per-call values as the recorder writes them: each of min, max and sum
 * converted from ticks on its own, floored, so two calls of 128.6 ns are
 * min = max = 128 with sum 257 (seen on sqlite3's sqlite3TableColumnToIndex,
 * patched).  The mean is held within [min, max] in the flat rows, the tree's
 * nodes and the callers' rows, and the report passes its checker; with raw
 * times (sums with the cost added back) it is not held.
 */
/* Function f's mean EI and EE in report r are both `want`. */
static void ok_means_f(const struct an_report *r, uint64_t want, const char *what)
{
	const struct an_row *row = find_row(r, AN_COL_FUNCTION, "f");

	ok(row && val(row, AN_COL_MEAN_EI) == want && val(row, AN_COL_MEAN_EE) == want,
	   "%s: f's mean EI and EE %llu (got %llu, %llu)", what, (unsigned long long)want,
	   row ? (unsigned long long)val(row, AN_COL_MEAN_EI) : 0ULL,
	   row ? (unsigned long long)val(row, AN_COL_MEAN_EE) : 0ULL);
}

static void test_hand_mean(void)
{
	struct an_profile *p;
	struct an_report *r;
	char why[256] = "";
	int m, f;
	struct sc_rec_cct_node n = {
		.proc_id = 1, .tid = 1, .id = 2, .parent = 1, .calls = 2, .completed = 2,
		.elapsed_excl = 257, .app_excl = 257, .app_excl_exact = 128,
		.incl_min = 128, .incl_max = 128, .incl_sum = 257,
		.excl_min = 128, .excl_max = 128, .excl_sum = 257,
	};

	fake_reset();
	m = fake_fn("main");
	f = fake_fn("f");
	p = an_profile_new(&fake);
	root(p, 1, 1);
	node(p, 1, 1, 1, 0, fake_addr(m), 1, 10, 10, 267);
	n.func = fake_addr(f);
	add_rec(p, SC_REC_CCT_NODE, &n, sizeof(n));
	r = build(p, AN_BY_FUNCTION, AN_APP_INTERVAL, "floored per-call values");
	if (r) {
		ok_means_f(r, 128, "floored sums: held at its max");
		ok(an_report_check(r, why, sizeof(why)) == 0, "floored sums: the report passes its checker (%s)",
		   why);
		an_report_free(r);
	}
	{
		struct an_tree_options to = { .by = AN_BY_FUNCTION, .app_time = AN_APP_INTERVAL };
		struct an_tree *t = NULL;
		struct an_row row = { 0 };
		uint32_t id = AN_CCT_NONE;

		if (an_tree_build(p, &to, &t, why, sizeof(why)) == 0) {
			for (size_t i = 0; i < an_cct_size(t->cct); i++)
				if (an_cct_node(t->cct, (uint32_t)i)->parent != AN_CCT_NONE &&
				    !strcmp(an_cct_func_name(t->cct, an_cct_node(t->cct, (uint32_t)i)->func), "f"))
					id = (uint32_t)i;
			if (id != AN_CCT_NONE)
				an_tree_row(t, id, &row);
		}
		ok(id != AN_CCT_NONE && row.v[AN_COL_MEAN_EI].u == 128 && row.v[AN_COL_MEAN_EE].u == 128 &&
		   row.v[AN_COL_MAX_EI].u == 128,
		   "floored sums: f's tree node has mean EI and EE 128 (got %llu, %llu)",
		   (unsigned long long)row.v[AN_COL_MEAN_EI].u, (unsigned long long)row.v[AN_COL_MEAN_EE].u);
		an_tree_free(t);
	}
	an_profile_free(p);
	/* raw times: the sums get what compensation took out; no bound then */
	p = an_profile_new(&fake);
	an_profile_set_raw_times(p, true);
	root(p, 1, 1);
	node(p, 1, 1, 1, 0, fake_addr(m), 1, 10, 10, 267);
	add_rec(p, SC_REC_CCT_NODE, &n, sizeof(n));
	{
		struct sc_rec_cct_removed x = { .proc_id = 1, .tid = 1, .id = 2, .elapsed_excl = 40,
						.incl_sum = 40, .excl_sum = 40 };

		add_rec(p, SC_REC_CCT_REMOVED, &x, sizeof(x));
	}
	r = build(p, AN_BY_FUNCTION, AN_APP_INTERVAL, "raw per-call values (no min or max: the checker passes)");
	if (r) {
		ok_means_f(r, 149, "raw times: (257 + 40) / 2 rounded, not held");
		an_report_free(r);
	}
	an_profile_free(p);
}

/* ---- (c) random streams against brute force -------------------------------------- */

static uint64_t rng_state;

static uint32_t rnd(uint32_t n)
{
	rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
	return (uint32_t)(rng_state >> 33) % n;
}

#define NF 7

struct bvals {
	uint64_t calls, ei, ee, ai, ae, aix, aex;
	uint64_t completed, imin, imax, isum, emin, emax, esum;
};

struct brute {
	struct bvals fn[NF], mod[3], th[16], proc[16];
	uint64_t ei, ai, aix, repairs, open;
	uint64_t th_repairs[16], th_open[16], proc_repairs[16], proc_open[16];
};

static int mod_of(int f)
{
	return f % 3;            /* fake_fn() assigns mods[i % 3] */
}

static void bstat(struct bvals *v, uint64_t incl, uint64_t excl)
{
	if (!v->completed || incl < v->imin)
		v->imin = incl;
	if (!v->completed || excl < v->emin)
		v->emin = excl;
	if (incl > v->imax)
		v->imax = incl;
	if (excl > v->emax)
		v->emax = excl;
	v->isum += incl;
	v->esum += excl;
	v->completed++;
}

/* SPEC section 2 on the plain event stream. */
static void brute_force(const struct stream *s, struct brute *b, int *proc_index)
{
	memset(b, 0, sizeof(*b));
	for (int ti = 0; ti < s->nth; ti++) {
		const struct thread_stream *ts = &s->th[ti];
		int stack[4096], depth = 0;
		uint64_t entry[4096], child[4096];
		uint64_t last = 0, os_in = 0;
		bool started = false, osb = false;
		int pi = proc_index[ti];

		for (size_t k = 0; k < ts->n; k++) {
			const struct event *e = &ts->ev[k];

			if (e->kind == EV_OS) {
				if (started) {
					osb = true;
					os_in += e->os_ns;
				}
				continue;
			}
			if (started && depth > 0) {
				uint64_t d = e->t - last;
				uint64_t app = osb ? 0 : d;
				uint64_t appx = d - (os_in < d ? os_in : d);
				bool fseen[NF] = { 0 }, mseen[3] = { 0 };

				b->ei += d;
				b->ai += app;
				b->aix += appx;
				for (int i = 0; i < depth; i++) {
					int f = stack[i], m = mod_of(stack[i]);

					if (!fseen[f]) {
						fseen[f] = true;
						b->fn[f].ei += d;
						b->fn[f].ai += app;
						b->fn[f].aix += appx;
					}
					if (!mseen[m]) {
						mseen[m] = true;
						b->mod[m].ei += d;
						b->mod[m].ai += app;
						b->mod[m].aix += appx;
					}
				}
				b->fn[stack[depth - 1]].ee += d;
				b->fn[stack[depth - 1]].ae += app;
				b->fn[stack[depth - 1]].aex += appx;
				b->mod[mod_of(stack[depth - 1])].ee += d;
				b->mod[mod_of(stack[depth - 1])].ae += app;
				b->mod[mod_of(stack[depth - 1])].aex += appx;
				b->th[ti].ei += d;
				b->th[ti].ai += app;
				b->th[ti].aix += appx;
				b->proc[pi].ei += d;
				b->proc[pi].ai += app;
				b->proc[pi].aix += appx;
			}
			started = true;
			last = e->t;
			osb = false;
			os_in = 0;
			if (e->kind == EV_ENTER) {
				stack[depth] = e->fn;
				entry[depth] = e->t;
				child[depth] = 0;
				depth++;
				b->fn[e->fn].calls++;
				b->mod[mod_of(e->fn)].calls++;
				b->th[ti].calls++;
				b->proc[pi].calls++;
			} else {
				int j;

				for (j = depth - 1; j >= 0 && stack[j] != e->fn; j--)
					;
				if (j < 0) {
					b->repairs++;
					b->th_repairs[ti]++;
					b->proc_repairs[pi]++;
					continue;
				}
				while (depth > j) {
					int f = stack[depth - 1];
					uint64_t incl = e->t - entry[depth - 1];

					bstat(&b->fn[f], incl, incl - child[depth - 1]);
					if (depth - 1 > j) {
						b->repairs++;
						b->th_repairs[ti]++;
						b->proc_repairs[pi]++;
					}
					depth--;
					if (depth > 0)
						child[depth - 1] += incl;
				}
			}
		}
		b->open += (uint64_t)depth;
		b->th_open[ti] += (uint64_t)depth;
		b->proc_open[pi] += (uint64_t)depth;
	}
}

static void gen_stream(struct stream *s, uint32_t seed)
{
	int nproc = 1 + (int)rnd(3);

	memset(s, 0, sizeof(*s));
	s->nth = 0;
	for (int p = 0; p < nproc; p++) {
		int nthr = 1 + (int)rnd(3);

		for (int k = 0; k < nthr; k++) {
			struct thread_stream *ts = &s->th[s->nth++];
			int stack[64], depth = 0;
			uint64_t t = 1000 * seed + rnd(100);
			int nev = 20 + (int)rnd(300);

			ts->pid = 10 + (uint32_t)p;
			ts->tid = 100 * (10 + (uint32_t)p) + (uint32_t)k;
			for (int e = 0; e < nev; e++) {
				uint32_t dt = rnd(4) == 0 ? 0 : 1 + rnd(50);
				uint32_t what = rnd(100);

				/* an OS event strictly after the previous event, at or
				 * before the next one (the vectors' rule) */
				if (dt > 0 && e > 0 && rnd(5) == 0)
					push_ev(ts, (struct event){ EV_OS, t + 1 + rnd(dt), 0, rnd(3) * rnd(40), -1 });
				t += dt;
				if (depth == 0 || (what < 55 && depth < 60)) {
					int f = (int)rnd(NF);

					push_ev(ts, (struct event){ EV_ENTER, t, f, 0,
								    depth ? stack[depth - 1] : -1 });
					stack[depth++] = f;
				} else if (what < 90) {
					push_ev(ts, (struct event){ EV_EXIT, t, stack[depth - 1], 0, -1 });
					depth--;
				} else if (what < 96 && depth > 1) {
					/* longjmp: exit of a deeper frame */
					int j = (int)rnd((uint32_t)depth - 1);

					push_ev(ts, (struct event){ EV_EXIT, t, stack[j], 0, -1 });
					depth = j;
				} else {
					/* an exit that may match nothing */
					push_ev(ts, (struct event){ EV_EXIT, t, (int)rnd(NF), 0, -1 });
					/* keep the generator's own stack in step with SPEC */
					for (int j = depth - 1; j >= 0; j--)
						if (stack[j] == ts->ev[ts->n - 1].fn) {
							depth = j;
							break;
						}
				}
			}
		}
	}
}

static bool same(const struct an_row *row, uint64_t calls, uint64_t ei, uint64_t ee, uint64_t ai,
		 uint64_t ae)
{
	return row && val(row, AN_COL_CALLS) == calls && val(row, AN_COL_EI) == ei &&
		val(row, AN_COL_EE) == ee && val(row, AN_COL_AI) == ai && val(row, AN_COL_AE) == ae;
}

static void test_random(int seeds)
{
	int bad_fn = 0, bad_mod = 0, bad_th = 0, bad_proc = 0, bad_sess = 0, bad_call = 0, ran = 0;
	char names[NF][8];

	for (int seed = 1; seed <= seeds; seed++) {
		struct stream s;
		struct brute b;
		int proc_index[16];
		struct an_profile *p;

		rng_state = (uint64_t)seed * 0x9e3779b97f4a7c15ULL;
		fake_reset();
		for (int i = 0; i < NF; i++) {
			snprintf(names[i], sizeof(names[i]), "f%d", i);
			fake_fn(names[i]);
		}
		gen_stream(&s, (uint32_t)seed);
		assign_sites(&s);
		for (int i = 0; i < s.nth; i++)
			proc_index[i] = (int)s.th[i].pid - 10;
		brute_force(&s, &b, proc_index);
		if (record_stream(&s) || !(p = load_tmp())) {
			bad_sess++;
			stream_free(&s);
			continue;
		}
		for (int mode = 0; mode < 2; mode++) {
			bool exact = mode == 1;
			struct an_report *r = build(p, AN_BY_FUNCTION, exact ? AN_APP_EXACT : AN_APP_INTERVAL,
						    "random");

			if (!r) {
				bad_sess++;
				continue;
			}
			if (r->session.elapsed_inclusive_ns != b.ei ||
			    r->session.application_inclusive_ns != (exact ? b.aix : b.ai) ||
			    r->session.repairs != b.repairs || r->session.open_frames != b.open) {
				bad_sess++;
				tap_diag("seed %d: session %llu/%llu/%llu/%llu want %llu/%llu/%llu/%llu", seed,
					 (unsigned long long)r->session.elapsed_inclusive_ns,
					 (unsigned long long)r->session.application_inclusive_ns,
					 (unsigned long long)r->session.repairs,
					 (unsigned long long)r->session.open_frames,
					 (unsigned long long)b.ei, (unsigned long long)(exact ? b.aix : b.ai),
					 (unsigned long long)b.repairs, (unsigned long long)b.open);
			}
			for (int f = 0; f < NF; f++) {
				const struct bvals *v = &b.fn[f];
				const struct an_row *row = find_row(r, AN_COL_FUNCTION, names[f]);

				if (!v->calls) {
					bad_fn += row != NULL;
					continue;
				}
				if (!same(row, v->calls, v->ei, v->ee, exact ? v->aix : v->ai,
					  exact ? v->aex : v->ae)) {
					bad_fn++;
					tap_diag("seed %d %s f%d: got %llu/%llu/%llu/%llu/%llu want "
						 "%llu/%llu/%llu/%llu/%llu", seed, exact ? "exact" : "interval", f,
						 (unsigned long long)val(row, AN_COL_CALLS),
						 (unsigned long long)val(row, AN_COL_EI),
						 (unsigned long long)val(row, AN_COL_EE),
						 (unsigned long long)val(row, AN_COL_AI),
						 (unsigned long long)val(row, AN_COL_AE),
						 (unsigned long long)v->calls, (unsigned long long)v->ei,
						 (unsigned long long)v->ee,
						 (unsigned long long)(exact ? v->aix : v->ai),
						 (unsigned long long)(exact ? v->aex : v->ae));
				}
				if (val(row, AN_COL_COMPLETED) != v->completed ||
				    (v->completed &&
				     (val(row, AN_COL_MIN_EI) != v->imin || val(row, AN_COL_MAX_EI) != v->imax ||
				      val(row, AN_COL_MEAN_EI) != (v->isum + v->completed / 2) / v->completed ||
				      val(row, AN_COL_MIN_EE) != v->emin || val(row, AN_COL_MAX_EE) != v->emax ||
				      val(row, AN_COL_MEAN_EE) != (v->esum + v->completed / 2) / v->completed)) ||
				    (!v->completed && (val(row, AN_COL_MIN_EI) || val(row, AN_COL_MAX_EI) ||
						       val(row, AN_COL_MEAN_EE)))) {
					bad_call++;
					tap_diag("seed %d f%d: per-call values differ (completed %llu vs %llu)",
						 seed, f, (unsigned long long)val(row, AN_COL_COMPLETED),
						 (unsigned long long)v->completed);
				}
			}
			an_report_free(r);

			r = build(p, AN_BY_MODULE, exact ? AN_APP_EXACT : AN_APP_INTERVAL, "random");
			for (int m = 0; r && m < 3; m++) {
				const struct bvals *v = &b.mod[m];
				const struct an_row *row = find_row(r, AN_COL_MODULE, mods[m]);

				if (v->calls && !same(row, v->calls, v->ei, v->ee, exact ? v->aix : v->ai,
						      exact ? v->aex : v->ae)) {
					bad_mod++;
					tap_diag("seed %d module %d differs", seed, m);
				}
			}
			an_report_free(r);

			r = build(p, AN_BY_THREAD, exact ? AN_APP_EXACT : AN_APP_INTERVAL, "random");
			for (int t = 0; r && t < s.nth; t++) {
				const struct bvals *v = &b.th[t];
				const struct an_row *row = find_row_u(r, AN_COL_TID, s.th[t].tid);
				uint64_t ai = exact ? v->aix : v->ai;

				if (v->calls && (!same(row, v->calls, v->ei, v->ei, ai, ai) ||
						 val(row, AN_COL_REPAIRS) != b.th_repairs[t] ||
						 val(row, AN_COL_OPEN_FRAMES) != b.th_open[t])) {
					bad_th++;
					tap_diag("seed %d thread %u differs", seed, s.th[t].tid);
				}
			}
			an_report_free(r);

			r = build(p, AN_BY_PROCESS, exact ? AN_APP_EXACT : AN_APP_INTERVAL, "random");
			for (int pi = 0; r && pi < 3; pi++) {
				const struct bvals *v = &b.proc[pi];
				const struct an_row *row = find_row_u(r, AN_COL_PID, 10 + pi + 1000);
				uint64_t ai = exact ? v->aix : v->ai;

				if (v->calls && (!same(row, v->calls, v->ei, v->ei, ai, ai) ||
						 val(row, AN_COL_REPAIRS) != b.proc_repairs[pi] ||
						 val(row, AN_COL_OPEN_FRAMES) != b.proc_open[pi])) {
					bad_proc++;
					tap_diag("seed %d process %d differs", seed, pi);
				}
			}
			an_report_free(r);
		}
		check_callsites(p, &s);
		check_views(p, &s);
		an_profile_free(p);
		stream_free(&s);
		ran++;
	}
	ok(bad_sess == 0, "random streams: session EI/AI/repairs/open frames equal brute force (%d seeds)", ran);
	ok(bad_fn == 0, "random streams: per function calls/EI/EE/AI/AE equal brute force, both modes");
	ok(bad_call == 0, "random streams: per-call min/max/mean equal brute force");
	ok(bad_mod == 0, "random streams: per module values equal brute force");
	ok(bad_th == 0, "random streams: per thread values (repairs and open frames too) equal brute force");
	ok(bad_proc == 0, "random streams: per process values (repairs and open frames too) equal brute force");
}

/* ---- (d) sampling ------------------------------------------------------------------- */

static void add_stack(struct an_profile *p, uint32_t id, uint16_t flags, const uint64_t *ip, int n)
{
	struct {
		struct sc_rec_stack h;
		uint64_t ip[64];
	} s = { { id, (uint16_t)n, flags }, { 0 } };

	if (n)
		memcpy(s.ip, ip, (size_t)n * sizeof(*ip));
	add_rec(p, SC_REC_STACK, &s, sizeof(s.h) + (size_t)n * sizeof(*ip));
}

static void add_samples(struct an_profile *p, uint32_t proc, uint32_t tid, uint32_t stack,
			uint64_t count)
{
	struct sc_rec_samples s = { proc, tid, stack, 0, count };

	add_rec(p, SC_REC_SAMPLES, &s, sizeof(s));
}

static void test_sampling_hand(void)
{
	struct an_profile *p;
	struct an_report *r;
	struct sc_rec_session sess = { .method = SC_METHOD_SAMPLE, .frequency_hz = 999 };
	int m, mid, leaf, rec, inl;
	/* main -> mid -> leaf (inlined helper inside leaf at +0x40..+0x60) */
	uint64_t s1[3], s2[3], s3[5], s4[1];

	fake_reset();
	m = fake_fn("main");            /* /bin/app */
	mid = fake_fn("mid");           /* liba */
	leaf = fake_fn("leaf");         /* libb */
	rec = fake_fn("rec");           /* /bin/app */
	inl = fake_fn("helper");        /* liba */
	fns[leaf].inl = inl;
	fns[leaf].inl_lo = 0x40;
	fns[leaf].inl_hi = 0x60;
	fns[leaf].inl_line = 27;
	s1[0] = fake_addr(leaf) + 0x10;  /* leaf itself, line 21 */
	s1[1] = fake_addr(mid) + 0x31;   /* return address: line 10+3 */
	s1[2] = fake_addr(m) + 0x21;     /* line 0+2 */
	s2[0] = fake_addr(leaf) + 0x44;  /* in the inlined helper */
	s2[1] = s1[1];
	s2[2] = s1[2];
	/* recursion: rec -> rec -> rec -> mid -> main */
	s3[0] = fake_addr(rec) + 0x08;
	s3[1] = fake_addr(rec) + 0x51;
	s3[2] = fake_addr(rec) + 0x51;
	s3[3] = fake_addr(mid) + 0x71;
	s3[4] = fake_addr(m) + 0x21;
	s4[0] = fake_addr(m) + 0x05;
	p = an_profile_new(&fake);
	add_rec(p, SC_REC_SESSION, &sess, sizeof(sess));
	add_stack(p, 1, SC_STACK_ROOT, s1, 3);
	add_stack(p, 2, SC_STACK_ROOT, s2, 3);
	add_stack(p, 3, SC_STACK_TRUNCATED, s3, 5);
	add_stack(p, 4, SC_STACK_ROOT, s4, 1);
	add_samples(p, 1, 11, 1, 10);
	add_samples(p, 1, 12, 1, 5);     /* same stack, other thread */
	add_samples(p, 1, 11, 2, 4);
	add_samples(p, 1, 11, 3, 6);
	add_samples(p, 1, 11, 4, 1);
	add_samples(p, 1, 11, 2, 2);     /* repeated record: summed */
	add_samples(p, 1, 11, 99, 3);    /* a stack that is not in the file */
	r = build(p, AN_BY_FUNCTION, AN_APP_INTERVAL, "sampling");
	if (r) {
		const struct an_row *row;

		is_u64(r->session.samples, 31, "sampling: total samples");
		is_u64(r->session.root_reached, 22, "sampling: samples reaching the root");
		is_near(r->session.root_reached_pct, 100.0 * 22 / 31, 1e-9, "sampling: root reached %%");
		is_near(r->session.truncated_pct, 100.0 * 6 / 31, 1e-9, "sampling: truncated %%");
		is_u64(r->session.frequency_hz, 999, "sampling: frequency");
		row = find_row(r, AN_COL_FUNCTION, "main");
		ok(val(row, AN_COL_INCL_SAMPLES) == 28 && val(row, AN_COL_EXCL_SAMPLES) == 1, "main 28/1");
		row = find_row(r, AN_COL_FUNCTION, "mid");
		ok(val(row, AN_COL_INCL_SAMPLES) == 27 && val(row, AN_COL_EXCL_SAMPLES) == 0, "mid 27/0");
		row = find_row(r, AN_COL_FUNCTION, "leaf");
		ok(val(row, AN_COL_INCL_SAMPLES) == 21 && val(row, AN_COL_EXCL_SAMPLES) == 15,
		   "leaf 21/15: inclusive over its inlined helper");
		row = find_row(r, AN_COL_FUNCTION, "helper");
		ok(val(row, AN_COL_INCL_SAMPLES) == 6 && val(row, AN_COL_EXCL_SAMPLES) == 6,
		   "inlined helper is a frame of its own: 6/6");
		row = find_row(r, AN_COL_FUNCTION, "rec");
		ok(val(row, AN_COL_INCL_SAMPLES) == 6 && val(row, AN_COL_EXCL_SAMPLES) == 6,
		   "recursive rec counted once per sample: 6/6");
		row = find_row(r, AN_COL_FUNCTION, "[missing stack]");
		ok(val(row, AN_COL_EXCL_SAMPLES) == 3, "samples of an unknown stack are kept, not dropped");
		is_near(find_row(r, AN_COL_FUNCTION, "main")->v[AN_COL_INCL_PCT].d, 100.0 * 28 / 31, 1e-9,
			"inclusive %% of total samples");
		an_report_free(r);
	}
	r = build(p, AN_BY_MODULE, AN_APP_INTERVAL, "sampling");
	if (r) {
		/* app: main, rec; liba: mid; libb: leaf and the helper inlined in it
		 * (an inlined frame belongs to the object holding its code) */
		const struct an_row *row = find_row(r, AN_COL_MODULE, "/bin/app");

		ok(val(row, AN_COL_INCL_SAMPLES) == 28 && val(row, AN_COL_EXCL_SAMPLES) == 7, "module app 28/7");
		row = find_row(r, AN_COL_MODULE, "/lib/liba.so");
		ok(val(row, AN_COL_INCL_SAMPLES) == 27 && val(row, AN_COL_EXCL_SAMPLES) == 0, "module liba 27/0");
		row = find_row(r, AN_COL_MODULE, "/lib/libb.so");
		ok(val(row, AN_COL_INCL_SAMPLES) == 21 && val(row, AN_COL_EXCL_SAMPLES) == 21, "module libb 21/21");
		an_report_free(r);
	}
	r = build(p, AN_BY_THREAD, AN_APP_INTERVAL, "sampling");
	if (r) {
		ok(val(find_row_u(r, AN_COL_TID, 11), AN_COL_EXCL_SAMPLES) == 26 &&
		   val(find_row_u(r, AN_COL_TID, 12), AN_COL_INCL_SAMPLES) == 5, "threads 26 and 5");
		an_report_free(r);
	}
	r = build(p, AN_BY_LINE, AN_APP_INTERVAL, "sampling");
	if (r) {
		const struct an_row *row = NULL;

		/* leaf's own line 21: exclusive 15; mid's call line 13: inclusive 21 */
		for (size_t i = 0; i < r->nrows; i++) {
			if (val(&r->rows[i], AN_COL_LINE) == 21 && !strcmp(r->rows[i].v[AN_COL_FILE].s, "f2.c"))
				row = &r->rows[i];
		}
		ok(val(row, AN_COL_EXCL_SAMPLES) == 15 && val(row, AN_COL_INCL_SAMPLES) == 15, "line f2.c:21 15/15");
		row = NULL;
		for (size_t i = 0; i < r->nrows; i++)
			if (val(&r->rows[i], AN_COL_LINE) == 13)
				row = &r->rows[i];
		ok(val(row, AN_COL_EXCL_SAMPLES) == 0 && val(row, AN_COL_INCL_SAMPLES) == 21,
		   "call-site line f1.c:13 0/21");
		row = NULL;
		for (size_t i = 0; i < r->nrows; i++)
			if (val(&r->rows[i], AN_COL_LINE) == 27)
				row = &r->rows[i];
		ok(val(row, AN_COL_INCL_SAMPLES) == 6 && val(row, AN_COL_EXCL_SAMPLES) == 0,
		   "inlined call's line in leaf 0/6");
		row = NULL;
		for (size_t i = 0; i < r->nrows; i++)
			if (val(&r->rows[i], AN_COL_LINE) == 35)
				row = &r->rows[i];
		ok(val(row, AN_COL_INCL_SAMPLES) == 6, "recursive call line counted once per sample");
		an_report_free(r);
	}
	r = build(p, AN_BY_ADDRESS, AN_APP_INTERVAL, "sampling");
	if (r) {
		const struct an_row *row = find_row_u(r, AN_COL_ADDRESS, s3[1]);

		ok(val(row, AN_COL_INCL_SAMPLES) == 6 && val(row, AN_COL_EXCL_SAMPLES) == 0,
		   "address: a repeated return address counted once");
		row = find_row_u(r, AN_COL_ADDRESS, s1[0]);
		ok(val(row, AN_COL_EXCL_SAMPLES) == 15, "address: leaf pc exclusive 15");
		an_report_free(r);
	}
	r = build(p, AN_BY_CALLSITE, AN_APP_INTERVAL, "sampling by call site");
	if (r) {
		/* (caller, its line, callee): inclusive / exclusive samples */
		static const struct {
			const char *caller;
			unsigned line;
			const char *callee;
			uint64_t incl, excl;
		} want[] = {
			{ "main", 2, "mid", 27, 0 },      /* s1, s2, s3 */
			{ "mid", 13, "leaf", 21, 15 },    /* s1 (leaf on top), s2 */
			{ "leaf", 27, "helper", 6, 6 },   /* the inlined call */
			{ "rec", 35, "rec", 6, 6 },       /* twice on s3: once */
			{ "mid", 17, "rec", 6, 0 },
		};
		char why[256];
		int good = 0;

		is_u64(r->nrows, sizeof(want) / sizeof(want[0]), "sampled call sites: 5 (one-frame stacks make none)");
		for (size_t k = 0; k < sizeof(want) / sizeof(want[0]); k++)
			for (size_t i = 0; i < r->nrows; i++) {
				const struct an_row *row = &r->rows[i];

				good += !strcmp(row->v[AN_COL_FUNCTION].s, want[k].caller) &&
					val(row, AN_COL_LINE) == want[k].line &&
					!strcmp(row->v[AN_COL_CALLEE].s, want[k].callee) &&
					val(row, AN_COL_INCL_SAMPLES) == want[k].incl &&
					val(row, AN_COL_EXCL_SAMPLES) == want[k].excl;
			}
		is_u64(good, sizeof(want) / sizeof(want[0]), "sampled call sites: caller:line -> callee, samples as computed by hand");
		ok(find_row(r, AN_COL_CALLEE, "mid") &&
		   !strcmp(find_row(r, AN_COL_CALLEE, "mid")->v[AN_COL_CALLEE_MODULE].s, "/lib/liba.so") &&
		   !strcmp(find_row(r, AN_COL_CALLEE, "mid")->v[AN_COL_FILE].s, "f0.c"),
		   "sampled call sites: the caller's file, the callee's module");
		ok(an_report_check(r, why, sizeof(why)) == 0, "sampled call sites pass --check (%s)", why);
		an_report_free(r);
	}
	an_profile_free(p);
}

/* Random stacks: function counts against a direct count over expanded frames. */
static void test_sampling_random(int seeds)
{
	int bad = 0;

	for (int seed = 1; seed <= seeds; seed++) {
		struct an_profile *p;
		struct an_report *r;
		uint64_t incl[16] = { 0 }, excl[16] = { 0 }, total = 0;
		char names[10][8];
		int nstk;
		struct bpaths paths = { 0 };

		rng_state = (uint64_t)seed * 0x2545f4914f6cdd1dULL;
		nstk = 1 + (int)rnd(20);
		fake_reset();
		for (int i = 0; i < 10; i++) {
			snprintf(names[i], sizeof(names[i]), "s%d", i);
			fake_fn(names[i]);
		}
		fns[3].inl = 6;         /* same module as 3: one function */
		fns[3].inl_lo = 0x80;
		fns[3].inl_hi = 0xc0;
		fns[3].inl_line = 99;
		p = an_profile_new(&fake);
		memset(bcallers, 0, sizeof(bcallers));
		memset(bcallees, 0, sizeof(bcallees));
		for (int k = 0; k < nstk; k++) {
			uint64_t ip[40];
			int n = 1 + (int)rnd(40);
			uint64_t cnt = 1 + rnd(100);
			bool seen[16] = { 0 };
			int path[80], depth = 0, inner[80], ninner = 0;

			for (int i = 0; i < n; i++) {
				int f = (int)rnd(10);
				uint64_t off = rnd(0xf0) + 1;
				uint64_t a = fake_addr(f) + off;
				uint64_t look = i ? a - 1 : a;
				bool in_inl = f == 3 && look >= fake_addr(3) + 0x80 && look < fake_addr(3) + 0xc0;

				ip[i] = a;
				/* brute force: frames of this address, innermost first */
				/* the path, innermost frame first for now */
				if (in_inl)
					inner[ninner++] = 6;
				inner[ninner++] = f;
				if (in_inl) {
					if (i == 0)
						excl[6] += cnt;
					if (!seen[6])
						incl[6] += cnt;
					seen[6] = true;
				} else if (i == 0) {
					excl[f] += cnt;
				}
				if (!seen[f])
					incl[f] += cnt;
				seen[f] = true;
			}
			total += cnt;
			while (ninner)
				path[depth++] = inner[--ninner];
			charge_path(path, depth, cnt, 0, &paths);
			add_stack(p, (uint32_t)k, 0, ip, n);
			add_samples(p, 1, 1, (uint32_t)k, cnt);
		}
		check_views_against(p, &paths);
		bpaths_free(&paths);
		r = build(p, AN_BY_FUNCTION, AN_APP_INTERVAL, "random stacks");
		if (r) {
			bad += r->session.samples != total;
			for (int f = 0; f < 10; f++) {
				const struct an_row *row = find_row(r, AN_COL_FUNCTION, names[f]);

				if (incl[f] ? val(row, AN_COL_INCL_SAMPLES) != incl[f] ||
					      val(row, AN_COL_EXCL_SAMPLES) != excl[f] : row != NULL) {
					bad++;
					tap_diag("seed %d s%d: got %llu/%llu want %llu/%llu", seed, f,
						 (unsigned long long)val(row, AN_COL_INCL_SAMPLES),
						 (unsigned long long)val(row, AN_COL_EXCL_SAMPLES),
						 (unsigned long long)incl[f], (unsigned long long)excl[f]);
				}
			}
			an_report_free(r);
		} else {
			bad++;
		}
		for (enum an_group g = AN_BY_MODULE; g < AN_NGROUPS; g++)
			if (g != AN_BY_CALLSITE)
				an_report_free(build(p, g, AN_APP_INTERVAL, "random stacks"));
		an_profile_free(p);
	}
	ok(bad == 0, "random stacks: inclusive/exclusive per function equal a direct count (%d seeds)", seeds);
}

/* Edge cases: a stack with no frames, a session with no data at all. */
static void test_sampling_edges(void)
{
	struct an_profile *p = an_profile_new(&fake);
	struct an_report *r;
	struct sc_rec_session sess = { .method = SC_METHOD_SAMPLE };

	add_rec(p, SC_REC_SESSION, &sess, sizeof(sess));
	r = build(p, AN_BY_FUNCTION, AN_APP_INTERVAL, "no samples");
	ok(r && r->nrows == 0 && r->session.samples == 0, "a sampling session without samples: no rows");
	an_report_free(r);
	add_stack(p, 7, 0, NULL, 0);
	add_samples(p, 1, 1, 7, 5);
	r = build(p, AN_BY_FUNCTION, AN_APP_INTERVAL, "empty stack");
	ok(r && r->nrows == 1 && val(&r->rows[0], AN_COL_EXCL_SAMPLES) == 5 &&
	   !strcmp(r->rows[0].v[AN_COL_FUNCTION].s, "[no frames]"),
	   "samples of an empty stack are kept as [no frames]");
	an_report_free(r);
	an_profile_free(p);
}

/* Random bytes in well-framed records: never a crash, whatever the numbers. */
static void test_garbage_records(int rounds)
{
	int built = 0;

	fake_reset();
	for (int i = 0; i < 8; i++) {
		char nm[8];

		snprintf(nm, sizeof(nm), "g%d", i);
		fake_fn(nm);
	}
	for (int round = 0; round < rounds; round++) {
		struct an_profile *p = an_profile_new(&fake);
		uint64_t buf[64];

		rng_state = (uint64_t)round * 0x9e3779b97f4a7c15ULL + 7;
		for (int k = 0; k < 200; k++) {
			enum sc_rec_type type = (enum sc_rec_type)(1 + rnd(SC_REC_MAX - 1));
			uint32_t size = 8 * (1 + rnd(40));
			struct sc_record rec = { type, size, buf };

			for (size_t i = 0; i < ARRAY_LEN(buf); i++)
				buf[i] = rnd(4) ? rnd(16) : ((uint64_t)rnd(1u << 31) << 33 | rnd(1u << 31));
			/* small values make ids, parents and addresses collide often */
			if (type == SC_REC_CCT_NODE || type == SC_REC_CALLSITE)
				buf[2] = fake_addr((int)rnd(8)) + rnd(3);
			((char *)buf)[size - 1] = '\0';   /* let string tails pass sometimes */
			an_profile_add(p, &rec);
		}
		for (enum an_group g = 0; g < AN_NGROUPS; g++) {
			for (int mode = 0; mode < 2; mode++) {
				struct an_report_options o = { g, mode };
				struct an_report *r = NULL;
				char err[256], why[256];

				if (an_report_build(p, &o, &r, err, sizeof(err)) == 0) {
					built++;
					an_report_check(r, why, sizeof(why));
				}
				an_report_free(r);
			}
		}
		an_profile_free(p);
	}
	ok(built > 0, "random records: %d reports built and checked without a crash", built);
}

static void test_file_errors(void)
{
	struct an_profile *p = an_profile_new(&fake);
	char err[256];
	const char *damaged;
	FILE *f;

	ok(an_profile_load(p, "/nonexistent/x.data", &damaged, err, sizeof(err)) == -ENOENT &&
	   strstr(err, "/nonexistent/x.data"), "a missing file: -ENOENT, named (%s)", err);
	f = fopen(tmp_path, "w");
	fputs("this is not a stackclock data file, just text\n", f);
	fclose(f);
	ok(an_profile_load(p, tmp_path, &damaged, err, sizeof(err)) < 0 && strstr(err, tmp_path),
	   "a text file is refused, named (%s)", err);
	an_profile_free(p);
}

/*
 * The views on the hand-built recursion of test_hand_recursion, with values
 * worked out by hand, then diff against a second profile.
 *   main(10) -> f(20) -> f(30) -> g(5)
 *                     -> g(7) -> f(11)
 */
static const struct an_row *edge(const struct an_row *rows, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(rows[i].v[AN_COL_FUNCTION].s, name))
			return &rows[i];
	return NULL;
}

static void test_hand_views(void)
{
	struct an_profile *p, *q, *smp;
	struct an_report *ra, *rb, *rs;
	struct an_tree *t;
	struct an_callers *c;
	struct an_diff *d;
	struct an_tree_options to = { .by = AN_BY_FUNCTION, .app_time = AN_APP_INTERVAL };
	const uint32_t *kids;
	const struct an_cct_node *nd;
	char err[256];
	int m, f, g, h;

	fake_reset();
	m = fake_fn("main");
	f = fake_fn("f");
	g = fake_fn("g");
	p = an_profile_new(&fake);
	root(p, 1, 1);
	node(p, 1, 1, 1, 0, fake_addr(m), 1, 10, 8, 83);
	node(p, 1, 1, 2, 1, fake_addr(f), 2, 20, 20, 73);
	node(p, 1, 1, 3, 2, fake_addr(f), 3, 30, 10, 35);
	node(p, 1, 1, 4, 3, fake_addr(g), 1, 5, 5, 5);
	node(p, 1, 1, 5, 2, fake_addr(g) + 0x10, 1, 7, 0, 18);
	node(p, 1, 1, 6, 5, fake_addr(f), 1, 11, 11, 11);

	/* tree: main 83 > f 73 > {f 35 > g 5, g 18 > f 11}; hot: main, f */
	if (ok(an_tree_build(p, &to, &t, err, sizeof(err)) == 0, "hand tree builds")) {
		ok(t->nroots == 1 && an_cct_node(t->cct, t->roots[0])->incl == 83, "hand tree: one root, main, EI 83");
		is_u64(an_tree_children(t, t->roots[0], &kids), 1, "hand tree: main has one child");
		nd = an_cct_node(t->cct, kids[0]);
		ok(nd->incl == 73 && nd->excl == 20 && nd->app_incl == 46 && nd->calls == 2,
		   "hand tree: main > f: EI 73, EE 20, AI 46, 2 calls");
		ok(t->hot[t->roots[0]] && t->hot[kids[0]], "hand tree: main and f on the hot path");
		{
			uint32_t fnode = kids[0];

			is_u64(an_tree_children(t, fnode, &kids), 2, "hand tree: f has two children");
			ok(an_cct_node(t->cct, kids[0])->incl == 35 && an_cct_node(t->cct, kids[1])->incl == 18,
			   "hand tree: children largest first (f 35, g 18)");
			ok(!t->hot[kids[0]], "hand tree: f 35 < half of 73, the hot path ends at f");
		}
		ok(an_tree_check(t, err, sizeof(err)) == 0, "hand tree: invariants hold (%s)", err);
		an_tree_free(t);
	}
	to.threshold_pct = 20;     /* 16.6 of 83: g 5 and f 11 hidden */
	if (ok(an_tree_build(p, &to, &t, err, sizeof(err)) == 0, "hand tree --threshold 20 builds")) {
		uint64_t hidden = 0, hvalue = 0;

		is_u64(t->shown, 4, "hand tree --threshold 20: 4 nodes shown");
		for (size_t i = 0; i < an_cct_size(t->cct); i++) {
			hidden += t->hidden[i];
			hvalue += t->hidden_value[i];
		}
		ok(hidden == 2 && hvalue == 16, "hand tree --threshold 20: 2 hidden, 5 + 11 ns");
		an_tree_free(t);
	}
	to.threshold_pct = 0;
	to.max_depth = 2;
	if (ok(an_tree_build(p, &to, &t, err, sizeof(err)) == 0, "hand tree --depth 2 builds")) {
		uint32_t fnode;

		an_tree_children(t, t->roots[0], &kids);
		fnode = kids[0];
		ok(t->shown == 2 && an_tree_children(t, fnode, &kids) == 0 && t->hidden[fnode] == 2 &&
		   t->hidden_value[fnode] == 53, "hand tree --depth 2: main and f, f's 2 children hidden (35 + 18)");
		an_tree_free(t);
	}

	/* callers of f: main (2 calls, EI 73, EE 61, AI 46, AE 41), f (3), g (1);
	 * callees: g (2 calls, EI 12 = 5 + 7, AI 5), f (3 calls, nothing) */
	if (ok(an_callers_build(p, "f", AN_APP_INTERVAL, &c, err, sizeof(err)) == 0, "hand callers of f")) {
		const struct an_callers_entry *e = &c->fn[0];
		const struct an_row *r1 = edge(e->callers, e->ncallers, "main");
		const struct an_row *r2 = edge(e->callers, e->ncallers, "f");
		const struct an_row *r3 = edge(e->callers, e->ncallers, "g");
		const struct an_row *d1 = edge(e->callees, e->ncallees, "g");
		const struct an_row *d2 = edge(e->callees, e->ncallees, "f");

		ok(c->nfn == 1 && e->ncallers == 3 && e->ncallees == 2, "hand callers: 3 callers, 2 callees");
		ok(r1 && val(r1, AN_COL_CALLS) == 2 && val(r1, AN_COL_EI) == 73 && val(r1, AN_COL_EE) == 61 &&
		   val(r1, AN_COL_AI) == 46 && val(r1, AN_COL_AE) == 41, "hand callers: main 2/73/61/46/41");
		ok(r2 && val(r2, AN_COL_CALLS) == 3 && val(r2, AN_COL_EI) == 0 &&
		   r3 && val(r3, AN_COL_CALLS) == 1 && val(r3, AN_COL_EI) == 0,
		   "hand callers: f (3 calls) and g (1 call) hold no time: not outermost");
		ok(d1 && val(d1, AN_COL_CALLS) == 2 && val(d1, AN_COL_EI) == 12 && val(d1, AN_COL_EE) == 12 &&
		   val(d1, AN_COL_AI) == 5, "hand callees: g 2 calls, EI 12, EE 12, AI 5");
		ok(d2 && val(d2, AN_COL_CALLS) == 3 && val(d2, AN_COL_EI) == 0, "hand callees: f 3 calls, no time");
		ok(an_callers_check(c, err, sizeof(err)) == 0, "hand callers: the split adds up (%s)", err);
		an_callers_free(c);
	}
	ok(an_callers_build(p, "ff", AN_APP_INTERVAL, &c, err, sizeof(err)) == -ENOENT &&
	   strstr(err, "closest names: f, g, main"), "unknown name: %s", err);

	/* one name in two modules: each function shown with its own lists */
	{
		struct an_profile *dp = an_profile_new(&fake);
		int d1 = fake_fn("dup in app"), d2 = fake_fn("dup in liba");

		snprintf(fns[d1].name, sizeof(fns[d1].name), "dup");
		snprintf(fns[d2].name, sizeof(fns[d2].name), "dup");
		root(dp, 1, 1);
		node(dp, 1, 1, 1, 0, fake_addr(m), 1, 1, 1, 11);
		node(dp, 1, 1, 2, 1, fake_addr(d1), 1, 4, 4, 4);
		node(dp, 1, 1, 3, 1, fake_addr(d2), 2, 6, 6, 3);
		if (ok(an_callers_build(dp, "dup", AN_APP_INTERVAL, &c, err, sizeof(err)) == 0,
		       "callers of a name in two modules")) {
			ok(c->nfn == 2 && strcmp(c->fn[0].self.v[AN_COL_MODULE].s, c->fn[1].self.v[AN_COL_MODULE].s) &&
			   c->fn[0].ncallers == 1 && c->fn[1].ncallers == 1 &&
			   val(&c->fn[0].callers[0], AN_COL_EI) + val(&c->fn[1].callers[0], AN_COL_EI) == 10 &&
			   val(&c->fn[0].self, AN_COL_EI) * val(&c->fn[1].self, AN_COL_EI) == 24,
			   "a name in two modules: two entries (EI 4 and 6), each with caller main");
			an_callers_free(c);
		}
		an_profile_free(dp);
	}

	/* diff: the same program moved to another directory, g gone, h new */
	ra = build(p, AN_BY_FUNCTION, AN_APP_INTERVAL, "diff base");
	h = fake_fn("h");
	fns[m].module = "/opt/v2/bin/app";
	q = an_profile_new(&fake);
	root(q, 1, 1);
	node(q, 1, 1, 1, 0, fake_addr(m), 1, 10, 10, 35);
	node(q, 1, 1, 2, 1, fake_addr(f), 1, 20, 20, 20);
	node(q, 1, 1, 3, 1, fake_addr(h), 1, 5, 5, 5);
	rb = build(q, AN_BY_FUNCTION, AN_APP_INTERVAL, "diff new");
	if (ra && rb && ok(an_diff_build(ra, rb, &d, err, sizeof(err)) == 0, "diff builds")) {
		static const char *const order[] = { "main", "f", "g", "h" };
		static const char *const status[] = { "both", "both", "vanished", "new" };
		bool good = d->nrows == 4;

		/* |delta EE%|: main +16.5, f -16.3, g -14.5, h +14.3 */
		for (size_t i = 0; good && i < 4; i++)
			good = !strcmp(an_diff_key(&d->rows[i], AN_COL_FUNCTION)->s, order[i]) &&
				!strcmp(!d->rows[i].in_new ? "vanished" : !d->rows[i].in_base ? "new" : "both",
					status[i]);
		ok(good, "diff: main (moved directory) and f matched, g vanished, h new, by |delta EE%%|");
		ok(an_diff_value(&d->rows[0], AN_COL_EI, AN_DIFF_DELTA) == -48 &&
		   an_diff_value(&d->rows[2], AN_COL_EI, AN_DIFF_NEW) == 0 &&
		   an_diff_value(&d->rows[2], AN_COL_EI, AN_DIFF_BASE) == 23 &&
		   an_diff_value(&d->rows[3], AN_COL_CALLS, AN_DIFF_DELTA) == 1,
		   "diff: deltas are new - base, a missing side counts 0");
		ok(an_diff_sort(d, "delta_calls") == 0 && an_diff_sort(d, "base_ei") == 0 &&
		   !strcmp(an_diff_key(&d->rows[0], AN_COL_FUNCTION)->s, "main") &&
		   an_diff_sort(d, "no_such") == -EINVAL, "diff: --sort by base_/new_/delta_ columns");
		an_diff_free(d);
	}
	smp = an_profile_new(&fake);
	{
		uint64_t ip[1] = { fake_addr(f) };

		add_stack(smp, 1, SC_STACK_ROOT, ip, 1);
		add_samples(smp, 1, 1, 1, 3);
	}
	rs = build(smp, AN_BY_FUNCTION, AN_APP_INTERVAL, "diff sampling");
	ok(ra && rs && an_diff_build(ra, rs, &d, err, sizeof(err)) == -EINVAL && strstr(err, "same -m"),
	   "diff refuses instrumentation against sampling: %s", err);
	an_report_free(rs);
	an_report_free(ra);
	an_report_free(rb);
	an_profile_free(smp);
	an_profile_free(q);
	an_profile_free(p);
}

int main(int argc, char **argv)
{
	int fd = mkstemp(tmp_path);
	int seeds = argc > 1 ? atoi(argv[1]) : 300;

	if (fd < 0)
		return 1;
	close(fd);
	test_vectors();
	test_hand_recursion();
	test_hand_threads();
	test_hand_damaged();
	test_hand_callsite();
	test_instr_lines();
	test_resolution();
	test_hand_views();
	test_sort();
	test_checker();
	test_hand_mean();
	test_random(seeds);
	ok(callsite_bad == 0 && callsite_checked > seeds,
	   "call-site rows of %d vectors and random streams equal brute force (calls, EI, EE, AI, AE "
	   "per caller and callee) and satisfy the SPEC invariants (%d differ%s%s)", callsite_checked,
	   callsite_bad, callsite_bad ? ", e.g. " : "", callsite_example);
	test_sampling_hand();
	test_sampling_random(seeds);
	ok(views_bad == 0 && views_checked > 2 * seeds,
	   "call tree, callers and callees of %d vectors, random streams and random sampled stacks "
	   "equal brute force (every path's EI/EE/AI/AE or samples; per caller and callee calls/EI/EE/"
	   "AI/AE or samples) and pass their checkers (%d differ%s%s)", views_checked, views_bad,
	   views_bad ? ", e.g. " : "", views_example);
	test_sampling_edges();
	test_garbage_records(seeds / 3 + 1);
	test_file_errors();
	unlink(tmp_path);
	return tap_done();
}
