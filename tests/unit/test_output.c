/*
 * Unit tests of the output writers (src/output) on reports built from
 * hand-made records:
 *  - JSON: parsed back by a strict JSON grammar checker written here
 *    (strings: escapes, no raw control characters, valid UTF-8), with the
 *    field names of SPEC section 5 present, in every grouping of both
 *    methods; hostile names (quotes, backslashes, control bytes, invalid
 *    UTF-8) stay valid JSON;
 *  - CSV: the header is exactly the SPEC names; fields parsed back with
 *    RFC 4180 rules give the full, unshortened names;
 *  - table: every line within 80 columns (long C++ names, long paths, big
 *    numbers), columns aligned, the summary tells what was not observed;
 *  - human-scaled times; --top.
 */
#include "analysis/analysis.h"
#include "output/output.h"
#include "json_check.h"
#include "tap.h"
#include "util/util.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

/* ---- a fake resolver: function i at 0x1000 * (i + 1) ---------------------- */

static const char *names[] = {
	"main",
	"std::vector<std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >, "
	"std::allocator<std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> > > >"
	"::_M_realloc_insert<std::__cxx11::basic_string<char, std::char_traits<char>, "
	"std::allocator<char> > const&>(__gnu_cxx::__normal_iterator<std::__cxx11::basic_string<char, "
	"std::char_traits<char>, std::allocator<char> >*, std::vector<std::__cxx11::basic_string<char, "
	"std::char_traits<char>, std::allocator<char> > > >, std::__cxx11::basic_string<char, "
	"std::char_traits<char>, std::allocator<char> > const&)",
	"quote\"back\\slash,comma\nnewline\ttab\x01" "ctl",
	"bad\xff\xfe utf8 \xc3\xa9t\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 \xed\xa0\x80 \xc0\xaf",
	"leaf",
};
#define NNAMES (int)(sizeof(names) / sizeof(names[0]))

static const char *const long_module =
	"/very/long/path/to/some/deeply/nested/installation/prefix/lib/x86_64-linux-gnu/libexample.so.1.2.3";

static int fake_resolve(void *ctx, uint32_t proc_id, uint64_t addr, bool is_return,
			struct sym_frame *out, int max)
{
	uint64_t a = is_return ? addr - 1 : addr;
	int i = (int)(a / 0x1000) - 1;

	(void)ctx;
	(void)proc_id;
	if (i < 0 || i >= NNAMES || max < 1)
		return 0;
	out[0] = (struct sym_frame){
		.function = names[i],
		.module = i == 1 ? long_module : "/bin/app,with\"odd",
		.file = i == 3 ? "/src/dir with space/odd\"file.c" : "/src/app.c",
		.line = (unsigned)(a & 0xfff), .module_offset = a };
	return 1;
}

static const struct an_resolver fake = { fake_resolve, NULL, NULL };

static uint64_t F(int i)
{
	return 0x1000 * (uint64_t)(i + 1);
}

static void add_rec(struct an_profile *p, enum sc_rec_type type, const void *d, size_t size)
{
	struct sc_record rec = { type, (uint32_t)size, d };

	an_profile_add(p, &rec);
}

static void add_session(struct an_profile *p, enum sc_method m, uint32_t requested, uint32_t observed)
{
	struct {
		struct sc_rec_session s;
		char argv[64];
	} s = { { .method = m, .frequency_hz = m == SC_METHOD_SAMPLE ? 999 : 0,
		  .os_requested = requested, .argc = 3 }, "./prog\0--flag\0arg \"q\"" };
	struct sc_rec_session_end e = { .duration_ns = 2500000000ULL, .os_observed = observed,
					.lost_events = 7, .lost_samples = 3 };
	struct {
		struct sc_rec_thread t;
		char name[16];
	} th = { { .proc_id = 1, .tid = 42 }, "worker\"1" };

	add_rec(p, SC_REC_SESSION, &s, sizeof(s));
	add_rec(p, SC_REC_SESSION_END, &e, sizeof(e));
	add_rec(p, SC_REC_THREAD, &th, sizeof(th));
}

static struct an_profile *instr_profile(void)
{
	struct an_profile *p = an_profile_new(&fake);
	struct sc_rec_thread_stats st = { .proc_id = 1, .tid = 42, .repairs = 4, .open_frames = 2,
					  .os_count = { 11, 22, 0 } };
	struct sc_rec_callsite cs = { 1, 42, F(0) + 0x11, F(4), 5, 500, 400, 300, 200 };

	add_session(p, SC_METHOD_INSTRUMENT, SC_OS_ALL, SC_OS_BIT(SC_OS_SWITCH) | SC_OS_BIT(SC_OS_SYSCALL));
	for (int i = 0; i < NNAMES; i++) {
		struct sc_rec_cct_node n = {
			.proc_id = 1, .tid = 42, .id = (uint32_t)i + 1, .parent = i ? (uint32_t)i : 0,
			.func = F(i), .calls = 123456789ULL * (uint64_t)(i + 1),
			.elapsed_excl = 1000000000ULL * (uint64_t)(i + 1), .app_excl = 999 * (uint64_t)i,
			.app_excl_exact = 1999 * (uint64_t)i, .completed = i == 0 ? 0 : 3,
			.incl_min = 5, .incl_max = 50, .incl_sum = 60, .excl_min = 1, .excl_max = 9,
			.excl_sum = 12,
		};
		struct sc_rec_cct_node root = { .proc_id = 1, .tid = 42, .parent = UINT32_MAX };

		if (!i)
			add_rec(p, SC_REC_CCT_NODE, &root, sizeof(root));
		add_rec(p, SC_REC_CCT_NODE, &n, sizeof(n));
	}
	add_rec(p, SC_REC_THREAD_STATS, &st, sizeof(st));
	add_rec(p, SC_REC_CALLSITE, &cs, sizeof(cs));
	/* OS-event records the kernel dropped, reported per process image */
	add_rec(p, SC_REC_LOST, &(struct sc_rec_lost){ SC_LOST_OS_RECORDS, 1, 5 }, sizeof(struct sc_rec_lost));
	add_rec(p, SC_REC_LOST, &(struct sc_rec_lost){ SC_LOST_OS_RECORDS, 2, 8 }, sizeof(struct sc_rec_lost));
	return p;
}

static struct an_profile *sample_profile(void)
{
	struct an_profile *p = an_profile_new(&fake);
	struct {
		struct sc_rec_stack h;
		uint64_t ip[8];
	} st = { { 1, (uint16_t)NNAMES, SC_STACK_ROOT }, { 0 } };
	struct sc_rec_samples sm = { 1, 42, 1, 0, 4000000000ULL };

	add_session(p, SC_METHOD_SAMPLE, 0, 0);
	for (int i = 0; i < NNAMES; i++)
		st.ip[i] = F(NNAMES - 1 - i) + 0x21;
	add_rec(p, SC_REC_STACK, &st, sizeof(st.h) + NNAMES * sizeof(uint64_t));
	add_rec(p, SC_REC_SAMPLES, &sm, sizeof(sm));
	st.h.id = 2;
	st.h.nframes = 1;
	st.h.flags = SC_STACK_TRUNCATED;
	add_rec(p, SC_REC_STACK, &st, sizeof(st.h) + sizeof(uint64_t));
	sm.stack_id = 2;
	sm.count = 17;
	add_rec(p, SC_REC_SAMPLES, &sm, sizeof(sm));
	return p;
}

/* r in fmt, table lines within width (0: no limit), with the highlights h. */
static char *render_with(const struct out_format *fmt, const struct an_report *r, size_t top,
			 unsigned width, const struct an_highlights *h)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct out_options o = { .top = top, .width = width, .highlights = h };
	int ret = fmt->write(f, r, &o);

	fclose(f);
	if (ret)
		tap_diag("%s writer returned %d", fmt->name, ret);
	return buf;
}

/* As a terminal of 80 columns shows it. */
static char *render(const struct out_format *fmt, const struct an_report *r, size_t top)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct out_options o = { .top = top, .width = 80 };
	int ret = fmt->write(f, r, &o);

	fclose(f);
	if (ret)
		tap_diag("%s writer returned %d", fmt->name, ret);
	return buf;
}

/* ---- checks ---------------------------------------------------------------------- */

static bool has_key(const char *json, const char *key)
{
	char pat[128];

	snprintf(pat, sizeof(pat), "\"%s\": ", key);
	return strstr(json, pat) != NULL;
}

static int count_occurrences(const char *s, const char *pat)
{
	int n = 0;

	for (const char *p = s; (p = strstr(p, pat)); p++)
		n++;
	return n;
}

/* ---- tests ---------------------------------------------------------------------- */

static const char *const instr_row_keys[] = {
	"calls", "elapsed_inclusive_ns", "elapsed_exclusive_ns", "application_inclusive_ns",
	"application_exclusive_ns", "elapsed_inclusive_pct", "elapsed_exclusive_pct",
	"application_inclusive_pct", "application_exclusive_pct",
};
static const char *const per_call_keys[] = {
	"min_elapsed_inclusive_ns", "max_elapsed_inclusive_ns", "mean_elapsed_inclusive_ns",
	"min_elapsed_exclusive_ns", "max_elapsed_exclusive_ns", "mean_elapsed_exclusive_ns",
};
static const char *const sample_row_keys[] = {
	"inclusive_samples", "exclusive_samples", "inclusive_pct", "exclusive_pct",
};

static struct an_report *build(struct an_profile *p, enum an_group by)
{
	struct an_report_options o = { by, AN_APP_INTERVAL };
	struct an_report *r = NULL;
	char err[256];

	/* groupings of the other method are refused: test_analysis checks how */
	if (an_report_build(p, &o, &r, err, sizeof(err)) < 0)
		return NULL;
	return r;
}

static void test_json(struct an_profile *p, enum sc_method m)
{
	const char *method = m == SC_METHOD_SAMPLE ? "sampling" : "instrumentation";
	int built = 0;

	for (enum an_group g = 0; g < AN_NGROUPS; g++) {
		struct an_report *r = build(p, g);
		char *js;
		bool keys = true;

		if (!r)
			continue;
		built++;
		js = render(&out_json, r, 0);
		ok(json_valid(js), "json %s by %s parses", method, an_group_name(g));
		for (const char *const *k = (const char *const[]){ "method", "command", "processes",
				 "threads", "duration_ns", NULL }; *k; k++)
			keys &= has_key(js, *k);
		if (m == SC_METHOD_SAMPLE) {
			for (const char *const *k = (const char *const[]){ "samples", "frequency_hz",
					 "lost_samples", "root_reached_pct", NULL }; *k; k++)
				keys &= has_key(js, *k);
			for (size_t i = 0; i < ARRAY_SIZE(sample_row_keys); i++)
				keys &= has_key(js, sample_row_keys[i]);
		} else {
			for (const char *const *k = (const char *const[]){ "elapsed_inclusive_ns",
					 "application_inclusive_ns", "os_events", "not_observed",
					 "repairs", "open_frames", "lost_events", "lost_os_records",
					 NULL }; *k; k++)
				keys &= has_key(js, *k);
			for (size_t i = 0; i < ARRAY_SIZE(instr_row_keys); i++)
				keys &= has_key(js, instr_row_keys[i]);
			/* per call: functions and the groups of them, not lines or sites */
			if (g != AN_BY_CALLSITE && g != AN_BY_LINE)
				for (size_t i = 0; i < ARRAY_SIZE(per_call_keys); i++)
					keys &= has_key(js, per_call_keys[i]);
		}
		if (g == AN_BY_FUNCTION)
			keys &= has_key(js, "function") && has_key(js, "module");
		if (g == AN_BY_THREAD)
			keys &= has_key(js, "tid");
		if (g == AN_BY_THREAD && m == SC_METHOD_INSTRUMENT)
			if (!ok(strstr(js, "\"repairs\": 4, \"open_frames\": 2}") != NULL,
				"json by thread: the thread's repairs and open frames"))
				tap_diag("%s", js);
		if (g == AN_BY_PROCESS && m == SC_METHOD_INSTRUMENT)
			ok(strstr(js, "\"repairs\": 4, \"open_frames\": 2}") != NULL,
			   "json by process: its threads' repairs and open frames");
		if (g == AN_BY_PROCESS)
			keys &= has_key(js, "pid");
		if (g == AN_BY_LINE)
			keys &= has_key(js, "file") && has_key(js, "line");
		if (g == AN_BY_ADDRESS)
			keys &= has_key(js, "address");
		ok(keys, "json %s by %s has the SPEC fields", method, an_group_name(g));
		if (g == AN_BY_FUNCTION) {
			ok(strstr(js, "\"method\": \"") && strstr(js, method), "json method is \"%s\"", method);
			ok(strstr(js, "[\"./prog\", \"--flag\", \"arg \\\"q\\\"\"]") != NULL,
			   "json command is the argv list, escaped");
			ok(strstr(js, "\"quote\\\"back\\\\slash,comma\\nnewline\\ttab\\u0001ctl\"") != NULL,
			   "json escapes quotes, backslashes and control characters");
			ok(strstr(js, "\\ufffd\\ufffd utf8 \xc3\xa9t\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 "
				  "\\ufffd\\ufffd\\ufffd \\ufffd\\ufffd") != NULL,
			   "json keeps valid UTF-8 and replaces invalid bytes");
			ok(strstr(js, names[1]) != NULL, "json names are complete, not shortened");
			if (m == SC_METHOD_INSTRUMENT) {
				ok(strstr(js, "\"os_events\": {\"switch\": 11, \"syscall\": 22, \"fault\": null, "
					  "\"requested\": [\"switch\", \"syscall\", \"fault\"], "
					  "\"not_observed\": [\"fault\"]}") != NULL,
				   "json os_events: counts, and fault not observed (null, listed)");
				ok(strstr(js, "\"min_elapsed_inclusive_ns\": 0, \"max_elapsed_inclusive_ns\": 0, "
					  "\"mean_elapsed_inclusive_ns\": 0, \"min_elapsed_exclusive_ns\": 0, "
					  "\"max_elapsed_exclusive_ns\": 0, \"mean_elapsed_exclusive_ns\": 0, "
					  "\"completed\": 0}") != NULL,
				   "json per-call values of a function with no completed call: 0, completed 0");
				ok(strstr(js, "\"duration_ns\": 2500000000") && strstr(js, "\"lost_events\": 7") &&
				   strstr(js, "\"repairs\": 4") && strstr(js, "\"open_frames\": 2"),
				   "json session numbers");
				ok(strstr(js, "\"lost_os_records\": 13,") != NULL,
				   "json lost_os_records: the OS-record losses of every image, summed");
			}
			free(js);
			js = render(&out_json, r, 2);
			ok(json_valid(js) && count_occurrences(js, "\n    {") == 2, "json --top 2 gives 2 rows");
		}
		free(js);
		an_report_free(r);
	}
	/* every grouping but address for instrumentation (no instruction addresses) */
	is_u64(built, m == SC_METHOD_SAMPLE ? 7 : 6, "json %s: every grouping of the method built", method);
}

/* RFC 4180 parse of one record at *pp into fields; returns the count. */
static int csv_record(const char **pp, char fields[][2048], int max)
{
	const char *p = *pp;
	int n = 0;

	for (;;) {
		size_t len = 0;
		char *out = fields[n];

		if (*p == '"') {
			p++;
			for (;;) {
				if (!*p)
					return -1;
				if (*p == '"' && p[1] == '"') {
					out[len++] = '"';
					p += 2;
				} else if (*p == '"') {
					p++;
					break;
				} else {
					out[len++] = *p++;
				}
				if (len >= 2047)
					return -1;
			}
		} else {
			while (*p && *p != ',' && *p != '\n') {
				if (*p == '"' || len >= 2047)
					return -1;
				out[len++] = *p++;
			}
		}
		out[len] = '\0';
		n++;
		if (*p == ',' && n < max) {
			p++;
			continue;
		}
		if (*p == '\n')
			p++;
		*pp = p;
		return n;
	}
}

static void test_csv(struct an_profile *pi, struct an_profile *ps)
{
	static const struct {
		enum sc_method m;
		enum an_group g;
		const char *header;
	} cases[] = {
		{ SC_METHOD_INSTRUMENT, AN_BY_FUNCTION,
		  "function,module,calls,elapsed_inclusive_ns,elapsed_exclusive_ns,application_inclusive_ns,"
		  "application_exclusive_ns,elapsed_inclusive_pct,elapsed_exclusive_pct,"
		  "application_inclusive_pct,application_exclusive_pct,below_resolution,"
		  "min_elapsed_inclusive_ns,max_elapsed_inclusive_ns,mean_elapsed_inclusive_ns,"
		  "min_elapsed_exclusive_ns,max_elapsed_exclusive_ns,mean_elapsed_exclusive_ns,completed" },
		{ SC_METHOD_INSTRUMENT, AN_BY_THREAD,
		  "tid,pid,thread_name,calls,elapsed_inclusive_ns,elapsed_exclusive_ns,"
		  "application_inclusive_ns,application_exclusive_ns,elapsed_inclusive_pct,"
		  "elapsed_exclusive_pct,application_inclusive_pct,application_exclusive_pct,"
		  "min_elapsed_inclusive_ns,max_elapsed_inclusive_ns,mean_elapsed_inclusive_ns,"
		  "min_elapsed_exclusive_ns,max_elapsed_exclusive_ns,mean_elapsed_exclusive_ns,completed,"
		  "repairs,open_frames" },
		{ SC_METHOD_INSTRUMENT, AN_BY_PROCESS,
		  "pid,executable,calls,elapsed_inclusive_ns,elapsed_exclusive_ns,"
		  "application_inclusive_ns,application_exclusive_ns,elapsed_inclusive_pct,"
		  "elapsed_exclusive_pct,application_inclusive_pct,application_exclusive_pct,"
		  "min_elapsed_inclusive_ns,max_elapsed_inclusive_ns,mean_elapsed_inclusive_ns,"
		  "min_elapsed_exclusive_ns,max_elapsed_exclusive_ns,mean_elapsed_exclusive_ns,completed,"
		  "repairs,open_frames" },
		{ SC_METHOD_SAMPLE, AN_BY_FUNCTION,
		  "function,module,inclusive_samples,exclusive_samples,inclusive_pct,exclusive_pct" },
		{ SC_METHOD_SAMPLE, AN_BY_LINE,
		  "file,line,function,module,inclusive_samples,exclusive_samples,inclusive_pct,exclusive_pct" },
		{ SC_METHOD_SAMPLE, AN_BY_ADDRESS,
		  "address,function,module,file,line,inclusive_samples,exclusive_samples,inclusive_pct,"
		  "exclusive_pct" },
	};
	static char fields[32][2048];

	for (size_t c = 0; c < ARRAY_SIZE(cases); c++) {
		struct an_report *r = build(cases[c].m == SC_METHOD_SAMPLE ? ps : pi, cases[c].g);
		char *csv;
		const char *p;
		size_t nl;
		int nf, rows = 0, bad = 0;
		bool found_long = false, found_quote = false;

		if (!r)
			continue;
		csv = render(&out_csv, r, 0);
		nl = strcspn(csv, "\n");
		ok(nl == strlen(cases[c].header) && !strncmp(csv, cases[c].header, nl),
		   "csv %s by %s: header is the SPEC names", cases[c].m == SC_METHOD_SAMPLE ? "sampling" :
		   "instrumentation", an_group_name(cases[c].g));
		p = csv + nl + 1;
		while (*p) {
			nf = csv_record(&p, fields, 32);
			if (nf != (int)r->ncols)
				bad++;
			for (int i = 0; i < nf; i++) {
				found_long |= !strcmp(fields[i], names[1]);
				found_quote |= !strcmp(fields[i], names[2]);
			}
			rows++;
		}
		ok(!bad && rows == (int)r->nrows, "csv by %s: %d records of %u fields (RFC 4180)",
		   an_group_name(cases[c].g), rows, r->ncols);
		if (cases[c].g == AN_BY_FUNCTION)
			ok(found_long && found_quote,
			   "csv by function: full C++ name, and a name with quotes/commas/newline, read back intact");
		free(csv);
		an_report_free(r);
	}
}

static void check_table(const char *t, const char *what, size_t name_col)
{
	const char *line = t;
	size_t maxw = 0;
	int lines = 0, misaligned = 0, ctl = 0;
	bool in_rows = false;

	while (*line) {
		size_t len = strcspn(line, "\n");

		if (len > maxw)
			maxw = len;
		for (size_t i = 0; i < len; i++)
			if ((unsigned char)line[i] < 0x20 || line[i] == 0x7f)
				ctl++;
		if (in_rows && len > name_col && strncmp(line, "(", 1)) {
			/* two spaces before the name column, a value right before them */
			if (line[name_col - 1] != ' ' || line[name_col - 2] != ' ' ||
			    line[name_col - 3] == ' ' || line[name_col] == ' ')
				misaligned++;
		}
		if (!strncmp(line, "  Calls", 7) || !strncmp(line, " Inclusive", 10))
			in_rows = true;
		lines++;
		line += len + (line[len] == '\n');
	}
	ok(maxw <= 80, "table %s: widest line %zu <= 80 columns", what, maxw);
	ok(!ctl, "table %s: no control characters from names reach the terminal", what);
	ok(!misaligned, "table %s: name column aligned at %zu (%d lines off)", what, name_col, misaligned);
}

static void test_table(struct an_profile *pi, struct an_profile *ps)
{
	for (enum an_group g = 0; g < AN_NGROUPS; g++) {
		struct an_report *r;
		char *t, what[64];

		if ((r = build(pi, g))) {
			t = render(&out_table, r, 0);
			snprintf(what, sizeof(what), "instrumentation by %s", an_group_name(g));
			check_table(t, what, 57);
			if (g == AN_BY_FUNCTION) {
				ok(strstr(t, "NOT observed") && strstr(t, "fault"),
				   "table says fault events were NOT observed");
				ok(strstr(t, "Repairs 4") && strstr(t, "open frames 2") && strstr(t, "lost events 7"),
				   "table summary: repairs, open frames, lost events");
				ok(strstr(t, "Duration 2.50s") != NULL, "table summary: human-scaled duration");
				ok(strstr(t, "\n  OS records lost by the kernel: 13 (ring overflow)\n") &&
				   strstr(t, "\n  OS event counts are short; intervals that lost them count as OS\n"),
				   "table summary: lost OS records, and what they mean for the values");
				ok(strstr(t, "..") != NULL && !strstr(t, names[1]),
				   "table shortens the long C++ name");
				ok(strstr(t, "123.5M") || strstr(t, "123456789") == NULL,
				   "table scales call counts that do not fit");
				puts("# ---- table sample ----");
				for (char *l = strtok(t, "\n"); l; l = strtok(NULL, "\n"))
					printf("# %s\n", l);
			}
			free(t);
			an_report_free(r);
		}
		if ((r = build(ps, g))) {
			t = render(&out_table, r, 0);
			snprintf(what, sizeof(what), "sampling by %s", an_group_name(g));
			check_table(t, what, 34);
			if (g == AN_BY_FUNCTION) {
				ok(strstr(t, "Samples 4000000017 at 999 Hz, lost samples 3") != NULL,
				   "table summary: samples, rate, lost samples");
				ok(strstr(t, "Stacks reaching the root 100.0%, truncated 0.0%") != NULL,
				   "table summary: root-reached and truncated shares");
			}
			free(t);
			if (r->nrows > 1) {
				t = render(&out_table, r, 1);
				ok(strstr(t, "(1 of ") != NULL, "table --top 1 says how many rows were left out");
				free(t);
			}
			an_report_free(r);
		}
	}
}

/* The line of t that contains what, or NULL (a static copy). */
static const char *line_with(const char *t, const char *what)
{
	static char line[1024];
	const char *p = strstr(t, what), *b;
	size_t n;

	if (!p)
		return NULL;
	for (b = p; b > t && b[-1] != '\n'; b--)
		;
	n = strcspn(b, "\n");
	snprintf(line, sizeof(line), "%.*s", (int)(n < sizeof(line) ? n : sizeof(line) - 1), b);
	return line;
}

static size_t widest_line(const char *t)
{
	size_t maxw = 0;

	for (const char *l = t; *l;) {
		size_t len = strcspn(l, "\n");

		maxw = len > maxw ? len : maxw;
		l += len + (l[len] == '\n');
	}
	return maxw;
}

/*
 * Widths: piped output (width 0) keeps every name whole, the long C++
 * name and the long module included; --width 110 fits 110 columns and
 * gives the module column more room than 80 does.
 */
static void test_table_widths(struct an_profile *pi, struct an_profile *ps)
{
	struct an_report *ri = build(pi, AN_BY_FUNCTION), *rs = build(ps, AN_BY_FUNCTION);
	char *t0, *t80, *t110;
	const char *row;

	t0 = render_with(&out_table, ri, 0, 0, NULL);
	ok(strstr(t0, names[1]) != NULL, "table without a width limit: the long C++ name whole");
	free(t0);
	t0 = render_with(&out_table, rs, 0, 0, NULL);
	row = line_with(t0, "std::vector<");
	ok(row && strstr(row, names[1]) && strstr(row, " libexample.so.1.2.3"),
	   "sampling table without a limit: the long name whole, then its module whole");
	{
		char want[160];

		/* the name column as wide as the longest name, at most 60 */
		snprintf(want, sizeof(want), "  %-60s %s", "leaf", "app,with\"odd");
		row = line_with(t0, "  leaf ");
		ok(row && strlen(row) > strlen(want) && !strcmp(row + strlen(row) - strlen(want), want),
		   "sampling table without a limit: a short name padded to the 60-column cap");
	}
	free(t0);

	t80 = render_with(&out_table, rs, 0, 80, NULL);
	t110 = render_with(&out_table, rs, 0, 110, NULL);
	is_u64(widest_line(t110) <= 110, 1, "--width 110: widest line %zu <= 110", widest_line(t110));
	ok(widest_line(t110) > 80, "--width 110: the room is used (widest line %zu)", widest_line(t110));
	row = line_with(t80, "  Function");
	ok(row && !strcmp(strstr(row, "Function"), "Function                      Module"),
	   "--width 80: function column 29, module 16 ('%s')", row ? row : "");
	if (!ok(!strstr(t80, "libexample.so.1.2.3") && strstr(t80, " ...mple.so.1.2.3\n"),
		"--width 80: the 19-character module is cut to 16"))
		tap_diag("%s", t80);
	row = line_with(t110, "  Function");
	ok(row && !strcmp(strstr(row, "Function"),
			  "Function                                                 Module"),
	   "--width 110: function column 56 ('%s')", row ? row : "");
	ok(strstr(t110, " libexample.so.1.2.3\n") != NULL, "--width 110: the module column widens to "
	   "its longest name (19 of at most 25): the module whole");
	free(t80);
	free(t110);
	an_report_free(ri);
	an_report_free(rs);
}

/* ---- the first screen: a hot spot behind wrappers ---------------------------- */

static const char *hot_names[] = { "_start", "wrap", "main", "hot", "leaf", "cold" };

static int hot_resolve(void *ctx, uint32_t proc_id, uint64_t addr, bool is_return,
		       struct sym_frame *out, int max)
{
	int i = (int)((is_return ? addr - 1 : addr) / 0x1000) - 1;

	(void)ctx;
	(void)proc_id;
	if (i < 0 || i >= (int)ARRAY_SIZE(hot_names) || max < 1)
		return 0;
	out[0] = (struct sym_frame){ .function = hot_names[i], .module = "/bin/hotprog",
				     .file = "/src/hot.c", .line = 10 * (unsigned)(i + 1) };
	return 1;
}

/*
 * _start > wrap > main > { hot > leaf, cold }: own values _start 0, wrap 0,
 * main 10, hot 600, leaf 200, cold 100 (ns or samples), total 910.
 */
static struct an_profile *hot_profile(enum sc_method m)
{
	static const struct an_resolver res = { hot_resolve, NULL, NULL };
	static const struct { int func, parent; uint64_t own; } nodes[] = {
		{ 0, -1, 0 }, { 1, 0, 0 }, { 2, 1, 10 }, { 3, 2, 600 }, { 4, 3, 200 }, { 5, 2, 100 },
	};
	struct an_profile *p = an_profile_new(&res);

	add_session(p, m, 0, 0);
	for (size_t i = 0; i < ARRAY_SIZE(nodes); i++) {
		if (m == SC_METHOD_INSTRUMENT) {
			struct sc_rec_cct_node n = {
				.proc_id = 1, .tid = 42, .id = (uint32_t)i + 1,
				.parent = (uint32_t)(nodes[i].parent + 1), .func = F(nodes[i].func),
				.calls = 1, .elapsed_excl = nodes[i].own, .app_excl = nodes[i].own / 2,
				.app_excl_exact = nodes[i].own / 2,
			};

			if (!i)
				add_rec(p, SC_REC_CCT_NODE, &(struct sc_rec_cct_node){ .proc_id = 1, .tid = 42,
					.parent = UINT32_MAX }, sizeof(struct sc_rec_cct_node));
			add_rec(p, SC_REC_CCT_NODE, &n, sizeof(n));
		} else if (nodes[i].own) {
			struct {
				struct sc_rec_stack h;
				uint64_t ip[8];
			} st = { { (uint32_t)i + 1, 0, SC_STACK_ROOT }, { 0 } };
			struct sc_rec_samples sm = { 1, 42, (uint32_t)i + 1, 0, nodes[i].own };

			/* leaf first: the pc, then return addresses */
			for (int k = (int)i; k >= 0; k = nodes[k].parent, st.h.nframes++)
				st.ip[st.h.nframes] = F(nodes[k].func) + (st.h.nframes ? 0x11 : 0x10);
			add_rec(p, SC_REC_STACK, &st, sizeof(st.h) + st.h.nframes * sizeof(uint64_t));
			add_rec(p, SC_REC_SAMPLES, &sm, sizeof(sm));
		}
	}
	return p;
}

static void test_highlights(enum sc_method m)
{
	struct an_profile *p = hot_profile(m);
	struct an_report *r = build(p, AN_BY_FUNCTION), *rm = build(p, AN_BY_MODULE);
	struct an_highlights *h = NULL;
	const char *what = m == SC_METHOD_SAMPLE ? "sampling" : "instrumentation";
	char err[256] = "", *t, *t_json;

	if (!ok(r && an_highlights_build(p, AN_APP_INTERVAL, 5, &h, err, sizeof(err)) == 0,
		"%s highlights build (%s)", what, err))
		goto out;
	is_u64(h->ntop, 4, "%s: 4 functions with own work (of 6; _start and wrap have none)", what);
	ok(h->ntop == 4 && !strcmp(h->top[0].v[AN_COL_FUNCTION].s, "hot") &&
	   !strcmp(h->top[1].v[AN_COL_FUNCTION].s, "leaf") && !strcmp(h->top[2].v[AN_COL_FUNCTION].s, "cold") &&
	   !strcmp(h->top[3].v[AN_COL_FUNCTION].s, "main"), "%s: hot, leaf, cold, main by exclusive value", what);
	is_u64(h->npath, 4, "%s: the hot path has 4 nodes (leaf holds 200 of hot's 800: < half)", what);
	t = render_with(&out_table, r, 0, 80, h);
	if (m == SC_METHOD_SAMPLE) {
		ok(strstr(t, "Functions doing most individual work (largest exclusive samples first):\n"
			  " Inclusive     % Exclusive     %  Function                               Module\n"
			  "       800  87.9       600  65.9  hot                                    hotprog\n"
			  "       200  22.0       200  22.0  leaf                                   hotprog\n"
			  "       100  11.0       100  11.0  cold                                   hotprog\n"
			  "       910 100.0        10   1.1  main                                   hotprog\n"
			  "Hot path (inclusive % of samples): _start > wrap > main 100.0% > hot 87.9%\n\n"
			  " Inclusive     % Exclusive     %  Function") != NULL,
		   "sampling table: the work and the hot path, then the full table");
	} else {
		ok(strstr(t, "EI/EE elapsed incl./excl., % of session EI; AI/AE application, % of session AI\n"
			  "Functions doing most individual work (largest EE first):\n"
			  "  Calls     EI  EI%     EE  EE%     AI  AI%     AE  AE%  Function\n"
			  "      1  800ns 87.9  600ns 65.9  400ns 87.9  300ns 65.9  hot\n"
			  "      1  200ns 22.0  200ns 22.0  100ns 22.0  100ns 22.0  leaf\n"
			  "      1  100ns 11.0  100ns 11.0   50ns 11.0   50ns 11.0  cold\n"
			  "      1  910ns  100   10ns  1.1  455ns  100    5ns  1.1  main\n"
			  "Hot path (EI % of session EI): _start > wrap > main 100.0% > hot 87.9%\n\n"
			  "  Calls     EI  EI%") != NULL,
		   "instrumentation table: the work and the hot path, then the full table");
	}
	if (!ok(strstr(t, "Hot path") != NULL, "%s: the table names the hot path", what))
		tap_diag("%s", t);
	puts("# ---- first screen ----");
	for (char *l = strtok(t, "\n"); l; l = strtok(NULL, "\n"))
		printf("# %s\n", l);
	free(t);
	/* grouped by module, the first screen is still about functions */
	t = render_with(&out_table, rm, 0, 80, h);
	ok(strstr(t, "Hot path") && strstr(t, "  Module\n"), "%s by module: highlights, then module rows", what);
	free(t);
	/* JSON is not changed by them */
	t = render_with(&out_json, r, 0, 0, h);
	t_json = render_with(&out_json, r, 0, 0, NULL);
	ok(!strcmp(t, t_json), "%s: JSON is the same with or without highlights", what);
	free(t);
	free(t_json);
out:
	an_highlights_free(h);
	an_report_free(rm);
	an_report_free(r);
	an_profile_free(p);
}

static void test_times(void)
{
	static const struct {
		uint64_t ns;
		const char *s;
	} cases[] = {
		{ 0, "0ns" }, { 999, "999ns" }, { 1000, "1.00us" }, { 1234, "1.23us" },
		{ 99949, "99.9us" }, { 999499, "999us" }, { 999500, "1.00ms" }, { 45600000, "45.6ms" },
		{ 1234567890ULL, "1.23s" }, { 123456789012ULL, "123s" }, { 99999000000000ULL, "99999s" },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		char b[32];

		out_fmt_time(b, sizeof(b), cases[i].ns);
		is_str(b, cases[i].s, "time %llu ns prints as %s", (unsigned long long)cases[i].ns, cases[i].s);
		ok(strlen(b) <= 6, "time %s fits 6 columns", b);
	}
	ok(out_format_find("json") == &out_json && out_format_find("csv") == &out_csv &&
	   out_format_find("table") == &out_table && !out_format_find("xml"), "formats by name");
}

/*
 * The views (call tree, callers and callees, diff) through every format on
 * the same odd names: JSON strictly valid with one "function" per node,
 * CSV with one record per node and a constant field count, tables within
 * 80 columns without control characters.
 */
static char *render_view(const struct out_format *fmt, int view, const void *obj)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct out_options o = { .width = 80 };
	int ret = view == 0 ? fmt->write_tree(f, obj, &o) :
		view == 1 ? fmt->write_callers(f, obj, &o) : fmt->write_diff(f, obj, &o);

	fclose(f);
	if (ret)
		tap_diag("%s writer returned %d", fmt->name, ret);
	return buf;
}

static void csv_shape(const char *csv, const char *what, int want_records)
{
	static char fields[64][2048];
	const char *p = csv;
	int n = 0, nf = -1, bad = 0;

	while (p && *p) {
		int k = csv_record(&p, fields, 64);

		if (nf < 0)
			nf = k;
		bad += k != nf;
		n++;
	}
	ok(!bad && n == want_records + 1, "CSV %s: %d records of %d fields after the header (want %d)",
	   what, n - 1, nf, want_records);
}

static void max_width(const char *t, const char *what)
{
	size_t maxw = 0;
	int ctl = 0;

	for (const char *line = t; *line;) {
		size_t len = strcspn(line, "\n"), cols = 0;

		/* terminal columns: UTF-8 continuation bytes take none */
		for (size_t i = 0; i < len; i++) {
			ctl += (unsigned char)line[i] < 0x20 || line[i] == 0x7f;
			cols += ((unsigned char)line[i] & 0xc0) != 0x80;
		}
		if (cols > maxw)
			maxw = cols;
		line += len + (line[len] == '\n');
	}
	if (!ok(maxw <= 80 && !ctl, "table %s: widest line %zu <= 80, no control characters", what, maxw))
		tap_diag("%s", t);
}

static void test_views(struct an_profile *p, const char *method)
{
	struct an_tree_options to = { .by = AN_BY_FUNCTION };
	struct an_tree *t = NULL;
	struct an_callers *c = NULL;
	struct an_report *r = build(p, AN_BY_FUNCTION);
	struct an_diff *d = NULL;
	char err[256] = "", what[64], *out;

	if (ok(an_tree_build(p, &to, &t, err, sizeof(err)) == 0, "%s tree builds (%s)", method, err)) {
		out = render_view(&out_json, 0, t);
		snprintf(what, sizeof(what), "%s tree", method);
		ok(json_valid(out) && has_key(out, "tree") && has_key(out, "hot") && has_key(out, "children") &&
		   count_occurrences(out, "{\"function\": ") == (int)t->shown,
		   "JSON %s: valid, one node object per shown node (%llu)", what, (unsigned long long)t->shown);
		free(out);
		out = render_view(&out_csv, 0, t);
		csv_shape(out, what, (int)t->shown);
		free(out);
		out = render_view(&out_table, 0, t);
		max_width(out, what);
		free(out);
		an_tree_free(t);
	}
	if (ok(an_callers_build(p, names[2], AN_APP_INTERVAL, &c, err, sizeof(err)) == 0,
	       "%s callers of the quoted name build (%s)", method, err)) {
		snprintf(what, sizeof(what), "%s callers", method);
		out = render_view(&out_json, 1, c);
		ok(json_valid(out) && has_key(out, "function") && has_key(out, "callers") && has_key(out, "callees"),
		   "JSON %s: valid, function, callers, callees", what);
		free(out);
		out = render_view(&out_csv, 1, c);
		csv_shape(out, what, 1 + (int)c->fn[0].ncallers + (int)c->fn[0].ncallees);
		free(out);
		out = render_view(&out_table, 1, c);
		max_width(out, what);
		free(out);
		an_callers_free(c);
	}
	if (r && ok(an_diff_build(r, r, &d, err, sizeof(err)) == 0, "%s diff of a report with itself", method)) {
		snprintf(what, sizeof(what), "%s diff", method);
		out = render_view(&out_json, 2, d);
		ok(json_valid(out) && has_key(out, "base") && has_key(out, "new") &&
		   count_occurrences(out, "\"status\": \"both\"") == (int)r->nrows &&
		   !strstr(out, "\"delta_") == false && !strstr(out, "-0.0000"),
		   "JSON %s: valid, every row in both, deltas present and never -0", what);
		free(out);
		out = render_view(&out_csv, 2, d);
		csv_shape(out, what, (int)r->nrows);
		free(out);
		out = render_view(&out_table, 2, d);
		max_width(out, what);
		free(out);
		an_diff_free(d);
	}
	an_report_free(r);
}

int main(void)
{
	struct an_profile *pi = instr_profile(), *ps = sample_profile();

	test_json(pi, SC_METHOD_INSTRUMENT);
	test_json(ps, SC_METHOD_SAMPLE);
	test_csv(pi, ps);
	test_table(pi, ps);
	test_table_widths(pi, ps);
	test_highlights(SC_METHOD_INSTRUMENT);
	test_highlights(SC_METHOD_SAMPLE);
	test_times();
	test_views(pi, "instrumentation");
	test_views(ps, "sampling");
	an_profile_free(pi);
	an_profile_free(ps);
	return tap_done();
}
