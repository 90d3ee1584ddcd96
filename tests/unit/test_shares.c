/*
 * Unit tests of the sampled shares of instrumentation and the repairs by
 * cause (SPEC section 14): a data file written with the real writer
 * (call-tree nodes, their samples, the threads' sample totals and repair
 * causes), read back through the reader and the analysis, and the shares
 * checked exactly against values worked out by hand, in every grouping,
 * the call tree, callers and callees, and the table, CSV, JSON and pprof
 * outputs.  Files without the records show no shares; damaged records
 * leave the shares out with a one-line reason and the interval values
 * intact.
 *
 * The profile (process 1, functions main, f, g; every node 1 sample of
 * EE = 10 ns so the interval values stay simple):
 *
 *   thread 10: [root] 5 samples
 *                main 10 -> f 20 -> f 30 -> g 15
 *                        -> g 5
 *              samples 95, 10 of them in probe code: 85 its own
 *   thread 11: [root] 0
 *                g 15
 *              samples 19, 4 in probe code: 15 its own
 *
 * 100 own samples in all (the denominator), 14 in probe code.
 */
#include "analysis/analysis.h"
#include "analysis/cct.h"
#include "format/scdata.h"
#include "output/export.h"
#include "output/output.h"
#include "tap.h"
#include "report_build.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FBASE 0x400000ULL
#define FSIZE 0x100ULL

static const char *const names[] = { "main", "f", "g" };
static const char *const modules[] = { "/bin/app", "/lib/liba.so", "/lib/libb.so" };
enum { MAIN, F, G };

static int fake_resolve(void *ctx, uint32_t proc_id, uint64_t addr, bool is_return,
			struct sym_frame *out, int max)
{
	uint64_t a = is_return ? addr - 1 : addr;
	unsigned i;

	(void)ctx;
	(void)proc_id;
	if (a < FBASE || a >= FBASE + 3 * FSIZE || max < 1)
		return 0;
	i = (unsigned)((a - FBASE) / FSIZE);
	out[0] = (struct sym_frame){ .function = names[i], .module = modules[i], .file = "x.c",
				     .line = 10 * i + 1, .module_offset = a - FBASE };
	return 1;
}

static const struct an_resolver fake = { fake_resolve, NULL, NULL };
static char path[] = "/tmp/sc-test-shares-XXXXXX";

/* What to write: which records, and which damage. */
struct variant {
	bool samples;            /* cct_samples records */
	bool more;               /* thread_more records */
	uint32_t frequency;      /* session frequency_hz */
	uint32_t bad_node;       /* a cct_samples record for this node id (0: none) */
	uint64_t more_extra;     /* added to thread 10's samples */
	bool orphan;             /* node samples of a thread with no tree */
	uint64_t cause_extra;    /* added to thread 10's longjmp repairs */
	uint32_t more_size;      /* bytes of a thread_more record (0: all) */
	bool detach;             /* thread 10's open frames: detach, not exit */
};

struct nd {
	uint32_t tid, id, parent;
	int fn;
	uint64_t samples;
};

static const struct nd nodes[] = {
	{ 10, 0, UINT32_MAX, -1, 5 },
	{ 10, 1, 0, MAIN, 10 },
	{ 10, 2, 1, F, 20 },
	{ 10, 3, 2, F, 30 },
	{ 10, 4, 3, G, 15 },
	{ 10, 5, 1, G, 5 },
	{ 11, 0, UINT32_MAX, -1, 0 },
	{ 11, 1, 0, G, 15 },
};

static int write_file(const struct variant *v)
{
	struct sc_writer *w;
	struct sc_rec_session sess = { .method = SC_METHOD_INSTRUMENT, .frequency_hz = v->frequency,
				       .os_requested = SC_OS_ALL, .argc = 1 };
	struct sc_rec_session_end end = { .duration_ns = 1000000, .os_observed = SC_OS_ALL };
	struct sc_rec_process pr = { .proc_id = 1, .pid = 100, .parent_proc_id = UINT32_MAX };
	struct sc_rec_thread_stats st[2] = {
		{ .proc_id = 1, .tid = 10, .events = 100, .repairs = 12, .open_frames = 3 },
		{ .proc_id = 1, .tid = 11, .events = 2 },
	};
	struct sc_rec_thread_more tm[2] = {
		{ .proc_id = 1, .tid = 10, .samples = 95 + v->more_extra, .probe_samples = 10,
		  .repairs = { 10 + v->cause_extra, 2, 0, 0, v->detach ? 0 : 3, 0, v->detach ? 3 : 0 } },
		{ .proc_id = 1, .tid = 11, .samples = 19, .probe_samples = 4 },
	};
	int fd = mkstemp(path);
	int ret = 0;

	if (fd < 0)
		return -1;
	close(fd);
	if (sc_writer_open(path, SC_FEAT_INSTRUMENT, &w))
		return -1;
	ret |= sc_writer_add2(w, SC_REC_SESSION, &sess, sizeof(sess), "prog", 5);
	ret |= sc_writer_add2(w, SC_REC_PROCESS, &pr, sizeof(pr), "/bin/app", 9);
	for (uint32_t tid = 10; tid <= 11; tid++) {
		for (size_t i = 0; i < sizeof(nodes) / sizeof(nodes[0]); i++) {
			const struct nd *n = &nodes[i];
			struct sc_rec_cct_node r = {
				.proc_id = 1, .tid = n->tid, .id = n->id, .parent = n->parent,
				.func = n->fn < 0 ? 0 : FBASE + (uint64_t)n->fn * FSIZE,
				.calls = n->fn < 0 ? 0 : 1, .elapsed_excl = n->fn < 0 ? 0 : 10,
				.app_excl = n->fn < 0 ? 0 : 10, .app_excl_exact = n->fn < 0 ? 0 : 10,
			};

			if (n->tid == tid)
				ret |= sc_writer_add(w, SC_REC_CCT_NODE, &r, sizeof(r));
		}
		for (size_t i = 0; v->samples && i < sizeof(nodes) / sizeof(nodes[0]); i++) {
			const struct nd *n = &nodes[i];
			struct sc_rec_cct_samples r = { .proc_id = 1, .tid = n->tid, .id = n->id,
							.samples = n->samples };

			if (n->tid == tid && n->samples)
				ret |= sc_writer_add(w, SC_REC_CCT_SAMPLES, &r, sizeof(r));
		}
		if (v->bad_node && tid == 10) {
			struct sc_rec_cct_samples r = { .proc_id = 1, .tid = 10, .id = v->bad_node,
							.samples = 0 };

			ret |= sc_writer_add(w, SC_REC_CCT_SAMPLES, &r, sizeof(r));
		}
		ret |= sc_writer_add(w, SC_REC_THREAD_STATS, &st[tid - 10], sizeof(st[0]));
		if (v->more)
			ret |= sc_writer_add(w, SC_REC_THREAD_MORE, &tm[tid - 10],
					     v->more_size ? v->more_size : sizeof(tm[0]));
	}
	if (v->orphan) {
		struct sc_rec_cct_samples r = { .proc_id = 1, .tid = 99, .id = 0, .samples = 3 };

		ret |= sc_writer_add(w, SC_REC_CCT_SAMPLES, &r, sizeof(r));
	}
	ret |= sc_writer_add(w, SC_REC_SESSION_END, &end, sizeof(end));
	if (sc_writer_close(w))
		ret = -1;
	return ret;
}

static struct an_profile *load(const struct variant *v)
{
	struct an_profile *p = an_profile_new(&fake);
	const char *damaged = NULL;
	char err[256];

	if (write_file(v) < 0 || an_profile_load(p, path, &damaged, err, sizeof(err)) < 0 || damaged) {
		ok(0, "write and load %s: %s", path, damaged ? damaged : err);
		an_profile_free(p);
		p = NULL;
	}
	unlink(path);
	strcpy(path, "/tmp/sc-test-shares-XXXXXX");
	return p;
}

static struct an_report *build(struct an_profile *p, enum an_group by, const char *what)
{
	return build_checked(p, by, AN_APP_INTERVAL, what);
}

static const struct an_row *row_s(const struct an_report *r, enum an_col c, const char *s)
{
	for (size_t i = 0; i < r->nrows; i++)
		if (r->rows[i].v[c].present && !strcmp(r->rows[i].v[c].s, s))
			return &r->rows[i];
	return NULL;
}

static const struct an_row *row_u(const struct an_report *r, enum an_col c, uint64_t u)
{
	for (size_t i = 0; i < r->nrows; i++)
		if (r->rows[i].v[c].present && r->rows[i].v[c].u == u)
			return &r->rows[i];
	return NULL;
}

/* A row's two shares, exactly (they are n / 100 * 100). */
static void shares(const struct an_row *row, double incl, double excl, const char *what)
{
	ok(row && row->v[AN_COL_SMP_INCL_PCT].present && row->v[AN_COL_SMP_EXCL_PCT].present &&
	   row->v[AN_COL_SMP_INCL_PCT].d == incl && row->v[AN_COL_SMP_EXCL_PCT].d == excl,
	   "%s: sampled inclusive/exclusive %% = %.0f/%.0f", what, incl, excl);
	if (row && (row->v[AN_COL_SMP_INCL_PCT].d != incl || row->v[AN_COL_SMP_EXCL_PCT].d != excl))
		tap_diag("got %.6f/%.6f", row->v[AN_COL_SMP_INCL_PCT].d, row->v[AN_COL_SMP_EXCL_PCT].d);
}

static bool has_col(const enum an_col *cols, unsigned n, enum an_col c)
{
	for (unsigned i = 0; i < n; i++)
		if (cols[i] == c)
			return true;
	return false;
}

static char *render(const struct out_format *fmt, const struct an_report *r)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct out_options o = { .width = 100 };

	if (fmt->write(f, r, &o))
		tap_diag("%s writer failed", fmt->name);
	fclose(f);
	return buf;
}

static char *render_tree(const struct out_format *fmt, const struct an_tree *t)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct out_options o = { .width = 100 };

	if (fmt->write_tree(f, t, &o))
		tap_diag("%s tree writer failed", fmt->name);
	fclose(f);
	return buf;
}

/* The CSV field of column name on the line that starts with prefix. */
static double csv_field(const char *csv, const char *prefix, const char *name)
{
	const char *nl = strchr(csv, '\n'), *line;
	int col = -1, k = 0;

	for (const char *h = csv; h < nl; k++) {
		const char *e = strpbrk(h, ",\n");

		if ((size_t)(e - h) == strlen(name) && !strncmp(h, name, strlen(name)))
			col = k;
		h = e + 1;
	}
	line = strstr(csv, prefix);
	if (col < 0 || !line)
		return -1;
	for (k = 0; k < col; k++)
		line = strchr(line, ',') + 1;
	return atof(line);
}

static void test_flat(struct an_profile *p)
{
	struct an_report *r;
	char *out;

	r = build(p, AN_BY_FUNCTION, "functions");
	if (!r)
		return;
	ok(r->session.have_shares, "the session has sampled shares");
	is_u64(r->session.samples, 100, "session samples: the program's own, probe code left out");
	is_u64(r->session.probe_samples, 14, "session probe samples: 10 + 4");
	is_u64(r->session.frequency_hz, 999, "session frequency of the shares");
	ok(r->session.have_causes, "the session has repairs by cause");
	ok(r->session.repairs_by_cause[SC_REPAIR_LONGJMP] == 10 &&
	   r->session.repairs_by_cause[SC_REPAIR_EXCEPTION] == 2 &&
	   r->session.repairs_by_cause[SC_REPAIR_EXIT] == 3 &&
	   r->session.repairs_by_cause[SC_REPAIR_SIGNAL] + r->session.repairs_by_cause[SC_REPAIR_OTHER] +
	   r->session.repairs_by_cause[SC_REPAIR_KILL] == 0, "repairs by cause: longjmp 10, exception 2, exit 3");
	is_u64(r->nrows, 3, "three function rows, the roots in none");
	shares(row_s(r, AN_COL_FUNCTION, "main"), 80, 10, "main");
	/* f's outermost node brings 20 + 30 + 15; the inner f is not counted again */
	shares(row_s(r, AN_COL_FUNCTION, "f"), 65, 50, "f recursive, charged once");
	/* g at two contexts in thread 10 and the root of thread 11 */
	shares(row_s(r, AN_COL_FUNCTION, "g"), 35, 35, "g at three places");
	{
		double sum = 0;

		for (size_t i = 0; i < r->nrows; i++)
			sum += r->rows[i].v[AN_COL_SMP_EXCL_PCT].d;
		ok(sum == 95, "function rows' exclusive shares sum to 95: the roots' 5 samples are in the "
		   "denominator, in no row");
	}
	ok(an_report_sort_by_name(r, "sampled_exclusive") == 0 &&
	   !strcmp(r->rows[0].v[AN_COL_FUNCTION].s, "f") && !strcmp(r->rows[2].v[AN_COL_FUNCTION].s, "main"),
	   "--sort sampled_exclusive: f (50), g (35), main (10)");
	ok(an_report_sort_by_name(r, "sampled_inclusive_pct") == 0 &&
	   !strcmp(r->rows[0].v[AN_COL_FUNCTION].s, "main"), "--sort sampled_inclusive_pct: main first");

	out = render(&out_csv, r);
	ok(strstr(out, ",sampled_inclusive_pct,sampled_exclusive_pct,"), "CSV: the two share columns");
	is_near(csv_field(out, "\nf,", "sampled_inclusive_pct"), 65, 1e-9, "CSV: f's inclusive share");
	is_near(csv_field(out, "\nf,", "sampled_exclusive_pct"), 50, 1e-9, "CSV: f's exclusive share");
	is_near(csv_field(out, "\ng,", "sampled_exclusive_pct"), 35, 1e-9, "CSV: g's exclusive share");
	free(out);

	out = render(&out_json, r);
	ok(strstr(out, "\"samples\": 100,\n    \"probe_samples\": 14,\n    \"frequency_hz\": 999"),
	   "JSON session: samples 100, probe_samples 14, frequency_hz 999");
	ok(strstr(out, "\"repairs_by_cause\": {\"longjmp\": 10, \"exception\": 2, \"signal\": 0, "
		  "\"other\": 0, \"exit\": 3, \"kill\": 0, \"detach\": 0}"), "JSON session: repairs_by_cause");
	ok(strstr(out, "\"function\": \"f\", \"module\": \"/lib/liba.so\"") &&
	   strstr(strstr(out, "\"function\": \"f\""), "\"sampled_inclusive_pct\": 65.0000, "
		  "\"sampled_exclusive_pct\": 50.0000"), "JSON row f: the shares computed");
	free(out);

	out = render(&out_table, r);
	ok(strstr(out, "Samples 100 at 999 Hz (the shares' 100%), 14 more in probe code"),
	   "table summary: samples and those in probe code");
	ok(strstr(out, "Repairs 12 (longjmp 10, exception 2), open frames 3 (exit 3)"),
	   "table summary: repairs and open frames by cause");
	ok(strstr(out, " SI%  SE%  Function"), "table: the SI%% and SE%% columns");
	ok(strstr(out, " 20ns 33.3 65.0 50.0  f\n"), "table: f's shares in its row");
	free(out);
	an_report_free(r);

	r = build(p, AN_BY_MODULE, "modules");
	if (r) {
		shares(row_s(r, AN_COL_MODULE, "/lib/liba.so"), 65, 50, "module liba (f)");
		shares(row_s(r, AN_COL_MODULE, "/lib/libb.so"), 35, 35, "module libb (g)");
		an_report_free(r);
	}
	r = build(p, AN_BY_THREAD, "threads");
	if (r) {
		/* a thread's own samples, its root's among them: the rows add up to 100 */
		shares(row_u(r, AN_COL_TID, 10), 85, 85, "thread 10 with its root's samples");
		shares(row_u(r, AN_COL_TID, 11), 15, 15, "thread 11");
		an_report_free(r);
	}
	r = build(p, AN_BY_PROCESS, "processes");
	if (r) {
		shares(row_u(r, AN_COL_PID, 100), 100, 100, "process 100: all the samples");
		an_report_free(r);
	}
	r = build(p, AN_BY_LINE, "lines");
	if (r) {
		const struct an_row *row = row_s(r, AN_COL_FUNCTION, "f");

		ok(!has_col(r->cols, r->ncols, AN_COL_SMP_INCL_PCT) &&
		   has_col(r->cols, r->ncols, AN_COL_SMP_EXCL_PCT), "by line: the exclusive share only");
		ok(row && row->v[AN_COL_SMP_EXCL_PCT].d == 50, "by line: f's first line has its 50%%");
		an_report_free(r);
	}
	r = build(p, AN_BY_CALLSITE, "call sites");
	if (r) {
		ok(!has_col(r->cols, r->ncols, AN_COL_SMP_EXCL_PCT), "by call site: no shares");
		an_report_free(r);
	}
}

static void test_views(struct an_profile *p)
{
	struct an_tree_options to = { .by = AN_BY_FUNCTION };
	struct an_tree *t = NULL;
	struct an_callers *c = NULL;
	struct an_row row;
	char err[256], why[256];

	if (an_tree_build(p, &to, &t, err, sizeof(err)) < 0) {
		ok(0, "tree builds: %s", err);
		return;
	}
	ok(an_tree_check(t, why, sizeof(why)) == 0, "tree invariants with shares (%s)", why);
	ok(has_col(t->cols, t->ncols, AN_COL_SMP_INCL_PCT), "tree nodes carry the shares");
	for (size_t i = 0; i < t->nroots; i++) {
		an_tree_row(t, t->roots[i], &row);
		if (!strcmp(row.v[AN_COL_FUNCTION].s, "main")) {
			const uint32_t *kids;
			size_t nk = an_tree_children(t, t->roots[i], &kids);

			shares(&row, 80, 10, "tree node main");
			for (size_t k = 0; k < nk; k++) {
				struct an_row kr;

				an_tree_row(t, kids[k], &kr);
				if (!strcmp(kr.v[AN_COL_FUNCTION].s, "f"))
					shares(&kr, 65, 20, "tree node main>f");
				else
					shares(&kr, 5, 5, "tree node main>g");
			}
		} else {
			shares(&row, 15, 15, "tree root g (thread 11)");
		}
	}
	{
		char *out = render_tree(&out_json, t);

		ok(strstr(out, "\"function\": \"main\"") &&
		   strstr(strstr(out, "\"function\": \"main\""), "\"sampled_inclusive_pct\": 80.0000, "
			  "\"sampled_exclusive_pct\": 10.0000"), "JSON tree: main's shares");
		free(out);
		out = render_tree(&out_table, t);
		ok(strstr(out, "  SI%   SE% Depth"), "text tree: the SI%% and SE%% columns");
		ok(strstr(out, "  80.0  10.0     1 "), "text tree: main's 80.0 and 10.0");
		free(out);
	}
	an_tree_free(t);

	to.by = AN_BY_THREAD;
	if (an_tree_build(p, &to, &t, err, sizeof(err)) == 0) {
		ok(an_tree_check(t, why, sizeof(why)) == 0, "per-thread tree invariants (%s)", why);
		for (size_t i = 0; i < t->nroots; i++) {
			an_tree_row(t, t->roots[i], &row);
			if (row.v[AN_COL_TID].u == 10)
				shares(&row, 85, 5, "thread 10's top: its samples, 5 with no call open");
		}
		an_tree_free(t);
	}

	if (an_callers_build(p, "g", AN_APP_INTERVAL, &c, err, sizeof(err)) < 0) {
		ok(0, "callers of g: %s", err);
		return;
	}
	ok(an_callers_check(c, why, sizeof(why)) == 0, "callers invariants (%s)", why);
	{
		const struct an_callers_entry *e = &c->fn[0];
		double in = 0, ex = 0;

		for (size_t i = 0; i < e->ncallers; i++) {
			const struct an_row *cr = &e->callers[i];

			in += cr->v[AN_COL_SMP_INCL_PCT].d;
			ex += cr->v[AN_COL_SMP_EXCL_PCT].d;
			if (!strcmp(cr->v[AN_COL_FUNCTION].s, "f"))
				shares(cr, 15, 15, "g's caller f");
			else if (!strcmp(cr->v[AN_COL_FUNCTION].s, "main"))
				shares(cr, 5, 5, "g's caller main");
			else
				shares(cr, 15, 15, "g's caller [root]");
		}
		ok(in == 35 && ex == 35, "g's callers' shares sum to g's own");
	}
	an_callers_free(c);
	if (an_callers_build(p, "f", AN_APP_INTERVAL, &c, err, sizeof(err)) == 0) {
		const struct an_callers_entry *e = &c->fn[0];
		double in = 0;

		for (size_t i = 0; i < e->ncallees; i++)
			in += e->callees[i].v[AN_COL_SMP_INCL_PCT].d;
		ok(in == 15 && e->self.v[AN_COL_SMP_EXCL_PCT].d + in == 65,
		   "f's callees: 15, + its exclusive 50 = its inclusive 65");
		an_callers_free(c);
	}
}

static void test_pprof(struct an_profile *p, bool want)
{
	char *buf = NULL, err[256];
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct exp_options o = { .app_time = AN_APP_INTERVAL };
	int ret = exp_pprof.write(f, p, &o, err, sizeof(err));
	char cmd[128], out[256] = "";
	FILE *gz;

	fclose(f);
	/* the string table holds the sample type's name: gunzip and look */
	snprintf(cmd, sizeof(cmd), "gzip -dc > /tmp/sc-test-shares-%d.pb", (int)getpid());
	gz = popen(cmd, "w");
	if (gz) {
		fwrite(buf, 1, len, gz);
		pclose(gz);
	}
	snprintf(cmd, sizeof(cmd), "grep -c samples /tmp/sc-test-shares-%d.pb", (int)getpid());
	gz = popen(cmd, "r");
	if (gz) {
		if (!fgets(out, sizeof(out), gz))
			out[0] = '\0';
		pclose(gz);
	}
	snprintf(cmd, sizeof(cmd), "/tmp/sc-test-shares-%d.pb", (int)getpid());
	unlink(cmd);
	ok(ret == 0 && (atoi(out) > 0) == want, "pprof: a \"samples\" sample type %s",
	   want ? "when sampled" : "only when sampled");
	free(buf);
}

static void test_without(void)
{
	struct variant old = { .frequency = 0 };
	struct variant off = { .samples = false, .more = true, .frequency = 0 };
	struct an_profile *p = load(&old);
	struct an_report *r;
	char *out;

	if (!p)
		return;
	r = build(p, AN_BY_FUNCTION, "old file");
	if (r) {
		ok(!r->session.have_shares && !r->session.have_causes, "old file: no shares, no causes");
		ok(!has_col(r->cols, r->ncols, AN_COL_SMP_INCL_PCT) &&
		   !has_col(r->cols, r->ncols, AN_COL_SMP_EXCL_PCT), "old file: no share columns");
		out = render(&out_json, r);
		ok(!strstr(out, "sampled_") && !strstr(out, "probe_samples") && !strstr(out, "repairs_by_cause") &&
		   !strstr(out, "\"samples\""), "old file: JSON without sampled fields");
		free(out);
		out = render(&out_csv, r);
		ok(!strstr(out, "sampled_"), "old file: CSV without sampled columns");
		free(out);
		out = render(&out_table, r);
		ok(!strstr(out, "SI%") && !strstr(out, "Samples") && strstr(out, "Repairs 12, open frames 3,"),
		   "old file: table without shares, repairs without causes");
		free(out);
		an_report_free(r);
	}
	test_pprof(p, false);
	an_profile_free(p);

	/* sampling turned off: thread_more records (causes), frequency 0 */
	p = load(&off);
	if (!p)
		return;
	r = build(p, AN_BY_FUNCTION, "sampling off");
	if (r) {
		ok(!r->session.have_shares && r->session.have_causes && !r->session.shares_damage,
		   "frequency 0: no shares, repairs by cause, no complaint");
		ok(!has_col(r->cols, r->ncols, AN_COL_SMP_EXCL_PCT), "frequency 0: no share columns");
		an_report_free(r);
	}
	an_profile_free(p);
}

static void test_damaged(const char *what, const struct variant *v, const char *reason, bool causes)
{
	struct an_profile *p = load(v);
	struct an_report *r;
	char *out;

	if (!p)
		return;
	r = build(p, AN_BY_FUNCTION, what);
	if (r) {
		const char *why = causes ? r->session.causes_damage : r->session.shares_damage;

		if (causes)
			ok(r->session.have_shares && !r->session.have_causes,
			   "%s: repairs by cause left out, the shares kept", what);
		else
			ok(!r->session.have_shares && !has_col(r->cols, r->ncols, AN_COL_SMP_EXCL_PCT),
			   "%s: shares left out", what);
		ok(why && strstr(why, reason) && !strchr(why, '\n'), "%s: one line says why (%s)", what,
		   why ? why : "nothing");
		is_u64(r->session.elapsed_inclusive_ns, 60, "%s: the interval values are intact", what);
		out = render(&out_json, r);
		ok(strstr(out, causes ? "\"repairs_by_cause_damaged\": \"" : "\"sampled_shares_damaged\": \""),
		   "%s: JSON names the damage", what);
		free(out);
		out = render(&out_table, r);
		ok(strstr(out, causes ? "Repairs by cause left out" : "Sampled shares left out"),
		   "%s: the table says so", what);
		free(out);
		an_report_free(r);
	}
	an_profile_free(p);
}

/* Open frames by cause in the records of both sizes: a file older than
 * the detach cause (72-byte thread_more) keeps its causes, detach 0; a
 * detach is a cause of open frames, and they add up. */
static void test_cause_sizes(void)
{
	struct variant old = { .samples = true, .more = true, .frequency = 999,
			       .more_size = 72 };   /* before the detach cause */
	struct variant det = { .samples = true, .more = true, .frequency = 999, .detach = true };
	const struct variant *vs[2] = { &old, &det };

	for (int i = 0; i < 2; i++) {
		struct an_profile *p = load(vs[i]);
		struct an_report *r = p ? build(p, AN_BY_FUNCTION, "functions") : NULL;
		const uint64_t *c = r ? r->session.repairs_by_cause : NULL;

		ok(r && r->session.have_causes, "%s: the causes are read", i ? "detach" : "72-byte record");
		if (r) {
			ok(c[SC_REPAIR_LONGJMP] == 10 && c[SC_REPAIR_EXCEPTION] == 2 &&
			   c[SC_REPAIR_EXIT] == (i ? 0u : 3u) && c[SC_REPAIR_KILL] == 0 &&
			   c[SC_REPAIR_DETACH] == (i ? 3u : 0u),
			   "%s: longjmp 10, exception 2, %s 3", i ? "detach" : "72-byte record",
			   i ? "detach" : "exit (no detach)");
			char *out = render(&out_table, r);

			ok(out && strstr(out, i ? "open frames 3 (detach 3)" : "open frames 3 (exit 3)"),
			   "%s: the table's open frames by cause", i ? "detach" : "72-byte record");
			free(out);
			an_report_free(r);
		}
		an_profile_free(p);
	}
}

/* "test_shares --write FILE [damage]": the profile above as a data file
 * (damage: "node", "sum", "orphan" or "cause"), for trying the command
 * line and the e2e checker on it. */
static int write_only(const char *file, const char *damage)
{
	struct variant v = { .samples = true, .more = true, .frequency = 999 };
	char cmd[512];

	if (damage && !strcmp(damage, "node"))
		v.bad_node = 9;
	else if (damage && !strcmp(damage, "sum"))
		v.more_extra = 5;
	else if (damage && !strcmp(damage, "orphan"))
		v.orphan = true;
	else if (damage && !strcmp(damage, "cause"))
		v.cause_extra = 1;
	else if (damage && !strcmp(damage, "old"))
		v = (struct variant){ .frequency = 0 };
	if (write_file(&v) < 0)
		return 1;
	snprintf(cmd, sizeof(cmd), "mv '%s' '%s'", path, file);
	return system(cmd) ? 1 : 0;
}

int main(int argc, char **argv)
{
	struct variant good = { .samples = true, .more = true, .frequency = 999 };
	struct variant bad_node = good, short_more = good, orphan = good, bad_cause = good;
	struct an_profile *p;

	if (argc >= 3 && !strcmp(argv[1], "--write"))
		return write_only(argv[2], argc > 3 ? argv[3] : NULL);
	p = load(&good);

	if (p) {
		test_flat(p);
		test_views(p);
		test_pprof(p, true);
		an_profile_free(p);
	}
	test_without();
	test_cause_sizes();
	bad_node.bad_node = 9;
	test_damaged("unknown node", &bad_node, "node 9 of thread 10", false);
	short_more.more_extra = 5;
	test_damaged("samples not adding up", &short_more, "thread 10: its nodes hold 85 samples, its totals 90",
		     false);
	orphan.orphan = true;
	test_damaged("thread never seen", &orphan, "thread 99", false);
	bad_cause.cause_extra = 1;
	test_damaged("causes not adding up", &bad_cause, "repairs by cause sum to 13 and 3", true);
	return tap_done();
}
