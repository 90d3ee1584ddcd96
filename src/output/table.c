/*
 * --format table: a session summary, then aligned rows, every line within
 * the width (80 columns by default).
 *
 * Instrumentation rows show calls and the four values with their
 * percentages (EI/EE of session EI, AI/AE of session AI); per-call
 * min/max/mean, and the repairs and open frames of each thread or process,
 * are in CSV and JSON, which have room for them.  Sampling
 * rows show inclusive and exclusive samples with percentages.  Times are
 * human-scaled; long C++ names are shortened with sym_shorten(), paths
 * keep their tail.  The summary says what was and was not observed: OS
 * event categories the kernel refused, repairs, open frames, losses, the
 * share of stacks that reached the root.
 */
#include "analysis/cct.h"
#include "format/execcheck.h"
#include "output/output.h"
#include "record/reloc.h"
#include "symbols/symbols.h"
#include "util/util.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <signal.h>
#include <stdarg.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>

struct out_line {
	char buf[4096];
	size_t len;
};

static void lf(struct out_line *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void lf(struct out_line *l, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (l->len >= sizeof(l->buf))
		return;
	va_start(ap, fmt);
	n = vsnprintf(l->buf + l->len, sizeof(l->buf) - l->len, fmt, ap);
	va_end(ap);
	if (n > 0)
		l->len += (size_t)n;
	if (l->len >= sizeof(l->buf))
		l->len = sizeof(l->buf) - 1;
}

/* Names come from the profiled binary: keep control bytes (a newline in a
 * name would break the table, an escape sequence would drive the terminal)
 * out of the output. */
static void sanitize(char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			*s = '?';
}

/*
 * Print a summary line within the width: a longer one is wrapped (at a
 * space when there is one), its continuation lines indented by two, so
 * that nothing it says is lost, on a terminal or piped.
 */
static void line_out(FILE *f, struct out_line *l, unsigned width)
{
	const char *p = l->buf;
	size_t len, room = width;

	sanitize(l->buf);
	len = strlen(p);
	while (width >= 20 && len > room) {
		size_t cut = room;

		while (cut > room / 2 && p[cut] != ' ')
			cut--;
		if (p[cut] != ' ')
			cut = room;
		fprintf(f, "%s%.*s\n", p == l->buf ? "" : "  ", (int)cut, p);
		p += cut;
		while (*p == ' ')
			p++;
		len = strlen(p);
		room = width - 2;
	}
	if (*p || p == l->buf)
		fprintf(f, "%s%s\n", p == l->buf ? "" : "  ", p);
	l->len = 0;
	l->buf[0] = '\0';
}

/* Copy s into dst (w characters at most), keeping its tail: for paths. */
static void fit_tail(char *dst, size_t w, const char *s)
{
	size_t n = strlen(s);

	if (n <= w || w < 4)
		snprintf(dst, w + 1, "%s", s);
	else
		snprintf(dst, w + 1, "...%s", s + n - (w - 3));
}

/* A function name in w characters (sym_shorten counts the NUL). */
static void fit_name(char *dst, size_t w, const char *s)
{
	if (!w) {
		dst[0] = '\0';
		return;
	}
	sym_shorten(s ? s : "?", dst, (unsigned)(w + 1));
}

static void fmt_pct4(char *b, size_t len, double v)
{
	if (v >= 99.95)
		snprintf(b, len, "100");
	else
		snprintf(b, len, "%.1f", v);
}

static void fmt_count(char *b, size_t len, uint64_t v, unsigned width)
{
	uint64_t limit = 1;

	for (unsigned i = 0; i < width && limit < UINT64_MAX / 10; i++)
		limit *= 10;
	if (v < limit)
		snprintf(b, len, "%" PRIu64, v);
	else if (v < 1000000000ULL)
		snprintf(b, len, "%.1fM", (double)v / 1e6);
	else
		snprintf(b, len, "%.1fG", (double)v / 1e9);
}

/* ---- summary ------------------------------------------------------------ */

static void command_line(FILE *f, const struct an_session *s, unsigned width)
{
	struct out_line l = { .len = 0 };

	lf(&l, "%s profile of:", s->method == SC_METHOD_SAMPLE ? "Sampling" : "Instrumentation");
	for (uint32_t i = 0; i < s->argc; i++)
		lf(&l, " %s", s->argv[i]);
	if (!s->argc)
		lf(&l, " (command not recorded)");
	if (s->attached)
		lf(&l, " (attached)");
	line_out(f, &l, width);
}

static void run_line(FILE *f, const struct an_session *s, unsigned width)
{
	struct out_line l = { .len = 0 };
	char t[16];

	out_fmt_time(t, sizeof(t), s->duration_ns);
	if (s->have_end)
		lf(&l, "Duration %s", t);
	else
		lf(&l, "Duration %s (recording incomplete: no end record)", s->duration_ns ? t : "unknown");
	lf(&l, ", %" PRIu64 " process%s", s->processes, s->processes == 1 ? "" : "es");
	if (s->images > s->processes)
		lf(&l, " (%" PRIu64 " images: execs)", s->images);
	lf(&l, ", %" PRIu64 " thread%s", s->threads, s->threads == 1 ? "" : "s");
	if (s->have_end && s->exit_status >= 0) {
		if (WIFEXITED(s->exit_status))
			lf(&l, ", exit status %d", WEXITSTATUS(s->exit_status));
		else if (WIFSIGNALED(s->exit_status))
			lf(&l, ", killed by signal %d (%s)", WTERMSIG(s->exit_status),
			   sigabbrev_np(WTERMSIG(s->exit_status)) ? sigabbrev_np(WTERMSIG(s->exit_status)) : "?");
	}
	line_out(f, &l, width);
}

static void os_lines(FILE *f, const struct an_session *s, unsigned width)
{
	struct out_line l = { .len = 0 };
	unsigned missing = s->os_requested & ~s->os_observed & SC_OS_ALL;
	unsigned unasked = ~s->os_requested & ~s->os_observed & SC_OS_ALL;
	bool any = false;

	lf(&l, "OS events:");
	for (int c = 0; c < SC_OS_NCAT; c++)
		if (s->os_observed & SC_OS_BIT(c)) {
			lf(&l, "%s %s %" PRIu64, any ? "," : "", sc_os_cat_name(c), s->os_count[c]);
			any = true;
		}
	if (!any)
		lf(&l, s->have_end ? " none observed: application time = elapsed time" :
		   " none seen (the recording has no end record to say more)");
	line_out(f, &l, width);
	if (missing && !s->threads) {
		/* nothing ran under the probes: no sign of what the kernel did */
		lf(&l, "  no thread recorded an event: no instrumented code ran (a program whose"
		   " code is in its shared libraries, as a python built with libpython.so:"
		   " record with --patch all; or a wrapper that runs a program the recorder"
		   " could not plan? see docs/patching.md)");
		line_out(f, &l, width);
	} else if (missing) {
		lf(&l, "  NOT observed (the kernel refused):");
		any = false;
		for (int c = 0; c < SC_OS_NCAT; c++)
			if (missing & SC_OS_BIT(c)) {
				lf(&l, "%s %s", any ? "," : "", sc_os_cat_name(c));
				any = true;
			}
		lf(&l, "; their time counts as application");
		line_out(f, &l, width);
	}
	if (unasked && unasked != SC_OS_ALL) {
		lf(&l, "  not requested (--os-events):");
		any = false;
		for (int c = 0; c < SC_OS_NCAT; c++)
			if (unasked & SC_OS_BIT(c)) {
				lf(&l, "%s %s", any ? "," : "", sc_os_cat_name(c));
				any = true;
			}
		line_out(f, &l, width);
	}
}

/* " (longjmp 10, exception 2)": the causes first..last of a count, those
 * above 0; nothing when the count is 0 or the causes are not known. */
static void causes(struct out_line *l, const struct an_session *s, int first, int last,
		   uint64_t total)
{
	const char *sep = " (";

	if (!s->have_causes || !total)
		return;
	for (int c = first; c <= last; c++) {
		if (!s->repairs_by_cause[c])
			continue;
		lf(l, "%s%s %" PRIu64, sep, sc_repair_cause_name((unsigned)c), s->repairs_by_cause[c]);
		sep = ", ";
	}
	lf(l, ")");
}

static void summary(FILE *f, const struct an_report *r, unsigned width)
{
	const struct an_session *s = &r->session;
	struct out_line l = { .len = 0 };
	char a[16], b[16];

	command_line(f, s, width);
	run_line(f, s, width);
	if (s->method == SC_METHOD_SAMPLE) {
		lf(&l, "Samples %" PRIu64, s->samples);
		if (s->frequency_hz)
			lf(&l, " at %" PRIu64 " Hz", s->frequency_hz);
		lf(&l, ", lost samples %" PRIu64, s->lost_samples);
		if (s->unwind_failures)
			lf(&l, ", unwind failures %" PRIu64, s->unwind_failures);
		line_out(f, &l, width);
		lf(&l, "Stacks reaching the root %.1f%%, truncated %.1f%%",
		   s->root_reached_pct, s->truncated_pct);
		line_out(f, &l, width);
	} else {
		out_fmt_time(a, sizeof(a), s->elapsed_inclusive_ns);
		out_fmt_time(b, sizeof(b), s->application_inclusive_ns);
		lf(&l, "Session EI %s, session AI %s (app time: %s)", a, b,
		   s->app_time == AN_APP_EXACT ? "exact, measured OS time removed" :
		   "interval rule");
		line_out(f, &l, width);
		os_lines(f, s, width);
		if (s->have_shares) {
			lf(&l, "Samples %" PRIu64, s->samples);
			if (s->frequency_hz)
				lf(&l, " at %" PRIu64 " Hz", s->frequency_hz);
			lf(&l, " (the shares' 100%%), %" PRIu64 " more in probe code", s->probe_samples);
			line_out(f, &l, width);
		} else if (s->shares_damage) {
			lf(&l, "Sampled shares left out, the records do not add up: %s", s->shares_damage);
			line_out(f, &l, width);
		}
		lf(&l, "Repairs %" PRIu64, s->repairs);
		causes(&l, s, SC_REPAIR_LONGJMP, SC_REPAIR_OTHER, s->repairs);
		lf(&l, ", open frames %" PRIu64, s->open_frames);
		causes(&l, s, SC_REPAIR_EXIT, SC_REPAIR_DETACH, s->open_frames);
		lf(&l, ", lost events %" PRIu64, s->lost_events);
		line_out(f, &l, width);
		if (s->causes_damage) {
			lf(&l, "Repairs by cause left out, the records do not add up: %s", s->causes_damage);
			line_out(f, &l, width);
		}
		if (s->probe_cost_ns > 0) {
			out_fmt_time(a, sizeof(a), s->probe_removed_ns);
			if (s->raw_times)
				lf(&l, "Raw times: the probes' cost (%.1fns per event, %s) is left in",
				   s->probe_cost_ns, a);
			else
				lf(&l, "Probe cost removed: %.1fns per event, %s in all (--raw-times: left in)",
				   s->probe_cost_ns, a);
			line_out(f, &l, width);
		}
		if (s->have_patch) {
			/* built without hooks: patched at run time (SPEC section 10) */
			const char *sep = "  not patched: ";

			lf(&l, "Patched at run time: %" PRIu64 " functions", s->patched);
			if (s->unhooked_returns)
				lf(&l, " (%" PRIu64 " returns left alone, their exits inferred: calls deeper "
				   "than the runtime's stack of return addresses, or live at a coroutine "
				   "switch)", s->unhooked_returns);
			line_out(f, &l, width);
			for (unsigned k = 1; k < PATCH_NREASONS; k++) {
				if (!s->unpatched[k])
					continue;
				lf(&l, "%s%s %" PRIu64, sep, patch_reason_name(k), s->unpatched[k]);
				sep = ", ";
			}
			if (*sep == ',')
				line_out(f, &l, width);
			if (s->unpatched[PATCH_CALL_SITES]) {
				uint64_t n = s->unpatched[PATCH_CALL_SITES];

				lf(&l, "  call_sites: %" PRIu64 " function%s too short to patch %s counted at "
				   "their direct calls; their calls through pointers are not counted",
				   n, n == 1 ? "" : "s", n == 1 ? "is" : "are");
				line_out(f, &l, width);
			}
		}
		if (s->lost_os_records) {
			/* the runtime charges an interval that overflowed the
			 * kernel's ring as OS time whole, in both modes */
			lf(&l, "  OS records lost by the kernel: %" PRIu64 " (ring overflow)",
			   s->lost_os_records);
			line_out(f, &l, width);
			lf(&l, "  OS event counts are short; intervals that lost them count as OS");
			line_out(f, &l, width);
		}
	}
	if (s->nunnamed) {
		lf(&l, "Without symbols %.1f%% of %s, in functions named FILE+0xOFFSET:",
		   s->unnamed_pct, s->method == SC_METHOD_SAMPLE ? "samples" : "time");
		line_out(f, &l, width);
		bool dbgsym = false;

		for (size_t i = 0; i < s->nunnamed; i++) {
			const char *slash = strrchr(s->unnamed[i].module, '/');

			lf(&l, "  %s %.1f%%: %s", slash ? slash + 1 : s->unnamed[i].module,
			   s->unnamed[i].pct, s->unnamed[i].hint);
			line_out(f, &l, width);
			dbgsym |= strstr(s->unnamed[i].hint, "-dbgsym") != NULL;
		}
		if (dbgsym) {
			lf(&l, "  (-dbgsym packages are in Debian's debian-debug archive)");
			line_out(f, &l, width);
		}
		lf(&l, "  or fetch debug files: DEBUGINFOD_URLS=https://debuginfod.debian.net");
		line_out(f, &l, width);
	}
	for (size_t i = 0; i < s->nunrecorded; i++) {
		const struct an_unrecorded *u = &s->unrecorded[i];

		lf(&l, "Not recorded: process %" PRIu32 " ran %s: %s", u->pid, u->path, sc_exec_why_text(u->reason));
		line_out(f, &l, width);
	}
	if (s->damage) {
		lf(&l, "DAMAGED FILE, read up to: %s", s->damage);
		line_out(f, &l, width);
	}
	if (s->bad_records) {
		lf(&l, "Malformed records skipped: %" PRIu64, s->bad_records);
		line_out(f, &l, width);
	}
}

/* ---- rows --------------------------------------------------------------- */

static const char *label_title(enum an_group by)
{
	switch (by) {
	case AN_BY_MODULE:   return "Module";
	case AN_BY_THREAD:   return "Thread";
	case AN_BY_PROCESS:  return "Process";
	case AN_BY_LINE:     return "Line";
	case AN_BY_CALLSITE: return "Call site";
	case AN_BY_ADDRESS:  return "Address";
	default:             return "Function";
	}
}

static const char *str_or(const struct an_row *row, enum an_col c, const char *dflt)
{
	return row->v[c].present ? row->v[c].s : dflt;
}

/* A plain cut to w characters: for labels that have no better way. */
static void fit_cut(char *dst, size_t w, const char *s)
{
	snprintf(dst, w + 1, "%s", s);
}

/*
 * prefix then s, fitted by fit() into what is left of w columns; whole
 * when w is 0 (no width limit).  Malloc'ed, control bytes replaced.
 */
static char *fitted(size_t w, const char *prefix, void (*fit)(char *, size_t, const char *),
		    const char *s)
{
	size_t n = strlen(prefix);
	char *dst, *rest;

	if (!w) {
		dst = xasprintf("%s%s", prefix, s);
	} else {
		dst = xmalloc(w + 1);
		rest = xmalloc(w + 1);
		fit(rest, w > n ? w - n : 0, s);
		snprintf(dst, w + 1, "%s%s", prefix, rest);
		free(rest);
	}
	sanitize(dst);
	return dst;
}

/* "caller:line -> callee" in w columns (0: whole), the callee given half. */
static char *callsite_label(size_t w, const struct an_row *row)
{
	const char *caller = str_or(row, AN_COL_FUNCTION, "?"), *callee = str_or(row, AN_COL_CALLEE, "?");
	char mid[48], *a, *b, *dst;
	size_t half, len = 0;

	if (row->v[AN_COL_FILE].present)
		snprintf(mid, sizeof(mid), ":%" PRIu64 " -> ", row->v[AN_COL_LINE].u);
	else
		snprintf(mid, sizeof(mid), " -> ");
	if (!w) {
		dst = xasprintf("%s%s%s", caller, mid, callee);
		sanitize(dst);
		return dst;
	}
	a = xmalloc(w + 1);
	b = xmalloc(w + 1);
	dst = xmalloc(w + 1);
	half = w > strlen(mid) ? (w - strlen(mid)) / 2 : 0;
	fit_name(b, half, callee);
	fit_name(a, w > strlen(mid) + strlen(b) ? w - strlen(mid) - strlen(b) : 0, caller);
	/* the parts were fitted to w; a longer total is cut there */
	{
		const char *parts[3] = { a, mid, b };

		for (int i = 0; i < 3; i++) {
			size_t n = strlen(parts[i]);

			if (n > w - len)
				n = w - len;
			memcpy(dst + len, parts[i], n);
			len += n;
		}
		dst[len] = '\0';
	}
	free(a);
	free(b);
	sanitize(dst);
	return dst;
}

/* The row's name column in w characters (0: whole).  Malloc'ed. */
static char *label(size_t w, const struct an_report *r, const struct an_row *row)
{
	char a[160];

	switch (r->by) {
	case AN_BY_MODULE:
		return fitted(w, "", fit_tail, str_or(row, AN_COL_MODULE, "?"));
	case AN_BY_THREAD:
		snprintf(a, sizeof(a), "%" PRIu64 "%s%s (pid %" PRIu64 ")", row->v[AN_COL_TID].u,
			 row->v[AN_COL_THREAD_NAME].present ? " " : "",
			 str_or(row, AN_COL_THREAD_NAME, ""), row->v[AN_COL_PID].u);
		return fitted(w, "", fit_cut, a);
	case AN_BY_PROCESS:
		snprintf(a, sizeof(a), "%" PRIu64 " ", row->v[AN_COL_PID].u);
		return fitted(w, a, fit_tail, str_or(row, AN_COL_EXECUTABLE, "?"));
	case AN_BY_LINE:
		if (row->v[AN_COL_FILE].present)
			snprintf(a, sizeof(a), "%.100s:%" PRIu64 " ", out_base_name(row->v[AN_COL_FILE].s, "?"),
				 row->v[AN_COL_LINE].u);
		else
			snprintf(a, sizeof(a), "?? ");
		return fitted(w, a, fit_name, str_or(row, AN_COL_FUNCTION, "?"));
	case AN_BY_ADDRESS:
		snprintf(a, sizeof(a), "0x%" PRIx64 " ", row->v[AN_COL_ADDRESS].u);
		return fitted(w, a, fit_name, str_or(row, AN_COL_FUNCTION, "?"));
	case AN_BY_CALLSITE:
		return callsite_label(w, row);
	default:
		return fitted(w, "", fit_name, str_or(row, AN_COL_FUNCTION, "?"));
	}
}

/* Instrumentation: calls(7) + 4 x " time(6) pct(4)" + "  " = 57, then the
 * name; with sampled shares (SPEC section 14) 2 x " pct(4)" more. */
#define I_FIXED 57
#define I_SHARES 10

/* The columns a name gets in a line of width (0: no limit, 0 too). */
static size_t name_room(unsigned width, size_t fixed)
{
	if (!width)
		return 0;
	return width > fixed + 8 ? width - fixed : 8;
}

static const char instr_legend[] =
	"EI/EE elapsed incl./excl., % of session EI; AI/AE application, % of session AI\n";
static const char shares_legend[] =
	"SI%/SE% sampled incl./excl., % of the program's samples (probe code left out)\n";

static void legend(FILE *f, const struct an_session *s)
{
	fputs(instr_legend, f);
	if (s->have_shares)
		fputs(shares_legend, f);
}

/*
 * SPEC section 14: rows whose mean exclusive time per call is under the
 * resolution carry '~' before their name; one line says what it means
 * when any row shown has it.
 */
static void resolution_note(FILE *f, uint64_t res, size_t k)
{
	char t[32];

	if (!k)
		return;
	out_fmt_time(t, sizeof(t), res);
	fprintf(f, "~ below the resolution: %zu shown take under %s of EE a call (the probe cost\n"
		"  removed from one call): their times are not reliable, their counts are\n", k, t);
}

static void instr_rows(FILE *f, const struct an_report *r, size_t n, unsigned width)
{
	static const enum an_col vals[4][2] = {
		{ AN_COL_EI, AN_COL_EI_PCT }, { AN_COL_EE, AN_COL_EE_PCT },
		{ AN_COL_AI, AN_COL_AI_PCT }, { AN_COL_AE, AN_COL_AE_PCT },
	};
	bool shares = r->session.have_shares;
	/* by line: no inclusive share (SPEC section 14, docs/values.md) */
	bool incl = shares && r->by != AN_BY_LINE;
	size_t w = name_room(width, I_FIXED + (shares ? I_SHARES : 0));
	char t[32], p[32], calls[32];

	fprintf(f, "%7s %6s %4s %6s %4s %6s %4s %6s %4s", "Calls",
		"EI", "EI%", "EE", "EE%", "AI", "AI%", "AE", "AE%");
	if (shares)
		fprintf(f, " %4s %4s", incl ? "SI%" : "", "SE%");
	fprintf(f, "  %s\n", label_title(r->by));
	for (size_t i = 0; i < n; i++) {
		const struct an_row *row = &r->rows[i];
		char *name;

		fmt_count(calls, sizeof(calls), row->v[AN_COL_CALLS].u, 7);
		fprintf(f, "%7s", calls);
		for (int k = 0; k < 4; k++) {
			out_fmt_time(t, sizeof(t), row->v[vals[k][0]].u);
			fmt_pct4(p, sizeof(p), row->v[vals[k][1]].d);
			fprintf(f, " %6s %4s", t, p);
		}
		if (shares) {
			fmt_pct4(p, sizeof(p), row->v[AN_COL_SMP_INCL_PCT].d);
			fprintf(f, " %4s", incl ? p : "");
			fmt_pct4(p, sizeof(p), row->v[AN_COL_SMP_EXCL_PCT].d);
			fprintf(f, " %4s", p);
		}
		name = label(w, r, row);
		fprintf(f, " %c%s\n", row->v[AN_COL_BELOW_RES].u ? '~' : ' ', name);
		free(name);
	}
}

/*
 * Sampling: " incl(9) pct(5) excl(9) pct(5)" + "  " = 34, then the name
 * and, by function, the module's file name.  Within a width the module
 * column is as wide as its longest name up to a third of the room (at
 * least S_MODULE), the function the rest; without a limit the function
 * column is as wide as its longest name up to S_NAME_PAD (a longer name
 * pushes its module to the right) and nothing is cut.
 */
#define S_FIXED 34
#define S_MODULE 16
#define S_NAME_PAD 60

static void sample_rows(FILE *f, const struct an_report *r, size_t n, unsigned width)
{
	size_t w = name_room(width, S_FIXED), mw = strlen("Module"), fw = strlen("Function");
	bool module = r->by == AN_BY_FUNCTION && (!width || w >= 40);
	char a[32], b[32];

	if (module) {
		for (size_t i = 0; i < n; i++) {
			size_t len = strlen(out_base_name(str_or(&r->rows[i], AN_COL_MODULE, "?"), "?"));

			if (len > mw)
				mw = len;
			if (!width) {
				char *name = label(0, r, &r->rows[i]);

				if (strlen(name) > fw)
					fw = strlen(name);
				free(name);
			}
		}
		if (width) {
			size_t most = w / 3 > S_MODULE ? w / 3 : S_MODULE;

			if (mw > most)
				mw = most;
			fw = w - mw - 1;
		} else if (fw > S_NAME_PAD) {
			fw = S_NAME_PAD;
		}
	}
	fprintf(f, " %9s %5s %9s %5s  ", "Inclusive", "%", "Exclusive", "%");
	if (module)
		fprintf(f, "%-*s %s\n", (int)fw, label_title(r->by), "Module");
	else
		fprintf(f, "%s\n", label_title(r->by));
	for (size_t i = 0; i < n; i++) {
		const struct an_row *row = &r->rows[i];
		char *name;

		fmt_count(a, sizeof(a), row->v[AN_COL_INCL_SAMPLES].u, 9);
		fmt_count(b, sizeof(b), row->v[AN_COL_EXCL_SAMPLES].u, 9);
		fprintf(f, " %9s %5.1f %9s %5.1f  ", a, row->v[AN_COL_INCL_PCT].d,
			b, row->v[AN_COL_EXCL_PCT].d);
		name = label(module ? (width ? fw : 0) : w, r, row);
		if (module) {
			char *mod = fitted(width ? mw : 0, "", fit_tail,
					   out_base_name(str_or(row, AN_COL_MODULE, "?"), "?"));

			fprintf(f, "%-*s %s\n", (int)fw, name, mod);
			free(mod);
		} else {
			fprintf(f, "%s\n", name);
		}
		free(name);
	}
}

/* Rows of one method's layout: a view of n rows by r->by. */
static void value_rows(FILE *f, const struct an_report *r, size_t n, unsigned width)
{
	if (r->session.method == SC_METHOD_SAMPLE)
		sample_rows(f, r, n, width);
	else
		instr_rows(f, r, n, width);
}

/*
 * The hot path on lines of at most width - 2 columns after its title:
 * "a > b > c 97.5% > d 62.0%", each share written where it changes (a
 * chain of wrappers at the same share is written once).  Lines break
 * between nodes only: a name is never split, and is shortened only when
 * the width is limited and it alone is wider.
 */
static void hot_path_lines(FILE *f, const struct an_session *s, const struct an_highlights *h,
			   unsigned width)
{
	bool smp = s->method == SC_METHOD_SAMPLE;
	enum an_col in_pct = smp ? AN_COL_INCL_PCT : AN_COL_EI_PCT;
	size_t room = width ? width : 80, col;
	char pct[16], next_pct[16];

	col = (size_t)fprintf(f, "Hot path (%s):", smp ? "inclusive % of samples" : "EI % of session EI");
	for (size_t i = 0; i < h->npath; i++) {
		const struct an_row *row = &h->path[i];
		char *name, *item;
		size_t len;

		snprintf(pct, sizeof(pct), "%.1f%%", row->v[in_pct].d);
		if (i + 1 < h->npath)
			snprintf(next_pct, sizeof(next_pct), "%.1f%%", h->path[i + 1].v[in_pct].d);
		name = fitted(width ? (room > 16 ? room - 12 : 4) : 0, "", fit_name,
			      str_or(row, AN_COL_FUNCTION, "?"));
		item = xasprintf("%s%s%s%s", name, i + 1 < h->npath && !strcmp(pct, next_pct) ? "" : " ",
				 i + 1 < h->npath && !strcmp(pct, next_pct) ? "" : pct,
				 i + 1 < h->npath ? " >" : "");
		len = strlen(item);
		if (col > 2 && col + 1 + len > room) {
			fputs("\n ", f);
			col = 1;
		}
		col += (size_t)fprintf(f, " %s", item);
		free(item);
		free(name);
	}
	fputc('\n', f);
}

/*
 * The first screen's answer to "where is the time": the functions doing
 * most individual work, then the hot path.
 */
static void highlights(FILE *f, const struct an_session *s, const struct an_highlights *h,
		       unsigned width)
{
	bool smp = s->method == SC_METHOD_SAMPLE;
	struct an_report view = { .session = *s, .by = AN_BY_FUNCTION, .rows = h->top, .nrows = h->ntop };

	if (!h->ntop && !h->npath)
		return;
	fprintf(f, "Functions doing most individual work (largest %s first):\n",
		smp ? "exclusive samples" : "EE");
	value_rows(f, &view, h->ntop, width);
	if (h->npath)
		hot_path_lines(f, s, h, width);
	fputc('\n', f);
}

static int write_table(FILE *f, const struct an_report *r, const struct out_options *o)
{
	size_t n = out_rows_shown(r, o);

	summary(f, r, o->width ? o->width : 80);
	fputc('\n', f);
	if (r->session.method != SC_METHOD_SAMPLE) {
		size_t k = 0;

		legend(f, &r->session);
		for (size_t i = 0; i < n; i++)
			k += r->rows[i].v[AN_COL_BELOW_RES].u != 0;
		for (size_t i = 0; o->highlights && i < o->highlights->ntop; i++)
			k += o->highlights->top[i].v[AN_COL_BELOW_RES].u != 0;
		resolution_note(f, r->session.resolution_ns, k);
	}
	if (o->highlights)
		highlights(f, &r->session, o->highlights, o->width);
	value_rows(f, r, n, o->width);
	if (!r->nrows)
		fprintf(f, "(no rows)\n");
	else if (n < r->nrows)
		fprintf(f, "(%zu of %zu rows; --top 0 shows all)\n", n, r->nrows);
	return out_finish(f);
}

/* ---- call tree ---------------------------------------------------------- */

/*
 * Each line: the node's values, its depth, '*' on the hot path, then the
 * name.  To stay readable 30 levels deep, indentation grows only where a
 * parent has several children shown ("+ "); an only child is printed under
 * its parent at the same indentation ("> "), so a long chain of single
 * calls stays in one column; indentation stops growing at a third of the
 * name column and the Depth column gives the true depth.  Children below
 * the threshold or --depth are counted in one "... N hidden" line.
 */
#define T_MAX_INDENT_DIV 3

static void tree_values(FILE *f, const struct an_tree *t, const struct an_row *row)
{
	char a[32], b[32], c[32];

	if (t->session.method == SC_METHOD_SAMPLE) {
		fmt_count(a, sizeof(a), row->v[AN_COL_INCL_SAMPLES].u, 9);
		fmt_count(b, sizeof(b), row->v[AN_COL_EXCL_SAMPLES].u, 9);
		fprintf(f, " %9s %5.1f %9s %5.1f", a, row->v[AN_COL_INCL_PCT].d, b,
			row->v[AN_COL_EXCL_PCT].d);
		return;
	}
	fmt_count(c, sizeof(c), row->v[AN_COL_CALLS].u, 7);
	out_fmt_time(a, sizeof(a), row->v[AN_COL_EI].u);
	out_fmt_time(b, sizeof(b), row->v[AN_COL_EE].u);
	fprintf(f, "%7s %6s %5.1f %6s %5.1f %5.1f", c, a, row->v[AN_COL_EI_PCT].d, b,
		row->v[AN_COL_EE_PCT].d, row->v[AN_COL_AI_PCT].d);
	if (t->session.have_shares)
		fprintf(f, " %5.1f %5.1f", row->v[AN_COL_SMP_INCL_PCT].d, row->v[AN_COL_SMP_EXCL_PCT].d);
}

/* The width of tree_values() plus " Depth * ". */
static size_t tree_fixed(const struct an_tree *t)
{
	return (t->session.method == SC_METHOD_SAMPLE ? 32 : t->session.have_shares ? 51 : 39) + 9;
}

/* A node's name in w columns (0: whole).  Malloc'ed. */
static char *tree_node_label(size_t w, const struct an_tree *t, const struct an_row *row)
{
	char a[160];

	if (row->v[AN_COL_FUNCTION].present)
		return fitted(w, "", fit_name, row->v[AN_COL_FUNCTION].s);
	if (t->by == AN_BY_THREAD) {
		snprintf(a, sizeof(a), "thread %" PRIu64 "%s%s (pid %" PRIu64 ")", row->v[AN_COL_TID].u,
			 row->v[AN_COL_THREAD_NAME].present ? " " : "",
			 str_or(row, AN_COL_THREAD_NAME, ""), row->v[AN_COL_PID].u);
		return fitted(w, "", fit_cut, a);
	}
	snprintf(a, sizeof(a), "process %" PRIu64 " ", row->v[AN_COL_PID].u);
	return fitted(w, a, fit_tail, str_or(row, AN_COL_EXECUTABLE, "?"));
}

static void hidden_line(FILE *f, const struct an_tree *t, size_t indent, uint32_t n, uint64_t v)
{
	uint64_t total = t->session.method == SC_METHOD_SAMPLE ? t->session.samples :
		t->session.elapsed_inclusive_ns;
	double pct = total ? 100.0 * (double)v / (double)total : 0;

	fprintf(f, "%*s%*s... %u hidden (%.1f%% together)\n", (int)tree_fixed(t), "", (int)indent, "",
		n, pct);
}

static int write_table_tree(FILE *f, const struct an_tree *t, const struct out_options *o)
{
	/* without a width limit names are whole; indentation stops as at 80 */
	unsigned width = o->width ? o->width : 80;
	size_t namew = width > tree_fixed(t) + 16 ? width - tree_fixed(t) : 16;
	size_t max_indent = namew / T_MAX_INDENT_DIV;
	size_t nroots = o->top && o->top < t->nroots ? o->top : t->nroots;
	struct frame {
		const uint32_t *kids;
		size_t n, next;
		uint32_t parent;
		size_t indent;
		bool only;
	} *st;
	size_t sp = 0, cap = 64, below = 0;
	struct an_row row;
	char *name;
	bool smp = t->session.method == SC_METHOD_SAMPLE;

	summary(f, &(struct an_report){ .session = t->session, .by = t->by }, width);
	fputc('\n', f);
	fprintf(f, "Call tree %s: largest %s first, * the hot path\n",
		t->merged ? "(threads merged)" : t->by == AN_BY_THREAD ? "per thread" : "per process",
		smp ? "inclusive samples" : "EI");
	fprintf(f, "'+' a child among several (indented), '>' an only child (same column)\n");
	if (t->session.have_shares)
		fputs(shares_legend, f);
	if (smp)
		fprintf(f, " %9s %5s %9s %5s Depth   Function\n", "Inclusive", "%", "Exclusive", "%");
	else if (t->session.have_shares)
		fprintf(f, "%7s %6s %5s %6s %5s %5s %5s %5s Depth   Function\n", "Calls", "EI", "EI%",
			"EE", "EE%", "AI%", "SI%", "SE%");
	else
		fprintf(f, "%7s %6s %5s %6s %5s %5s Depth   Function\n", "Calls", "EI", "EI%", "EE",
			"EE%", "AI%");
	st = malloc(cap * sizeof(*st));
	if (!st)
		return -ENOMEM;
	st[sp++] = (struct frame){ t->roots, nroots, 0, UINT32_MAX, 0, false };
	while (sp) {
		struct frame *fr = &st[sp - 1];
		const struct an_cct_node *nd;
		const uint32_t *kids;
		size_t nk, w;
		uint32_t id;
		const char *mark;

		if (fr->next == fr->n) {
			if (fr->parent != UINT32_MAX && t->hidden[fr->parent])
				hidden_line(f, t, fr->indent, t->hidden[fr->parent], t->hidden_value[fr->parent]);
			sp--;
			continue;
		}
		id = fr->kids[fr->next++];
		nd = an_cct_node(t->cct, id);
		an_tree_row(t, id, &row);
		tree_values(f, t, &row);
		mark = fr->parent == UINT32_MAX ? "" : fr->only ? "> " : "+ ";
		w = namew > fr->indent + strlen(mark) ? namew - fr->indent - strlen(mark) : 1;
		name = tree_node_label(o->width ? w : 0, t, &row);
		below += row.v[AN_COL_BELOW_RES].u != 0;
		fprintf(f, " %5u%c%c %*s%s%s\n", nd->depth, row.v[AN_COL_BELOW_RES].u ? '~' : ' ',
			t->hot[id] ? '*' : ' ', (int)fr->indent, "", mark, name);
		free(name);
		nk = an_tree_children(t, id, &kids);
		if (sp == cap) {
			struct frame *grown = realloc(st, 2 * cap * sizeof(*st));

			if (!grown) {
				free(st);
				return -ENOMEM;
			}
			st = grown;
			cap *= 2;
			fr = &st[sp - 1];
		}
		{
			bool only = nk == 1 && !t->hidden[id];
			size_t ind = fr->indent;

			/* a root's children, and several children, step in */
			if (!only || fr->parent == UINT32_MAX)
				ind = ind + 2 <= max_indent ? ind + 2 : ind;
			st[sp++] = (struct frame){ kids, nk, 0, id, ind, only };
		}
	}
	free(st);
	if (t->root_hidden)
		hidden_line(f, t, 0, t->root_hidden, t->root_hidden_value);
	resolution_note(f, t->session.resolution_ns, below);
	if (!t->nroots)
		fprintf(f, "(no nodes above the threshold)\n");
	else if (nroots < t->nroots)
		fprintf(f, "(%zu of %zu roots; --top 0 shows all)\n", nroots, t->nroots);
	return out_finish(f);
}

/* ---- callers and callees ------------------------------------------------ */

/* Rows of a list in the flat table's layout, under a title. */
static void rows_block(FILE *f, const struct an_session *s, const char *title, struct an_row *rows,
		       size_t n, size_t top, unsigned width)
{
	struct an_report view = { .session = *s, .by = AN_BY_FUNCTION, .rows = rows, .nrows = n };
	size_t shown = top && top < n ? top : n;

	fprintf(f, "%s\n", title);
	if (s->method != SC_METHOD_SAMPLE)
		legend(f, s);
	value_rows(f, &view, shown, width);
	if (!n)
		fprintf(f, "(none)\n");
	else if (shown < n)
		fprintf(f, "(%zu of %zu rows; --top 0 shows all)\n", shown, n);
}

static int write_table_callers(FILE *f, const struct an_callers *c, const struct out_options *o)
{
	unsigned width = o->width ? o->width : 80;
	bool smp = c->session.method == SC_METHOD_SAMPLE;

	summary(f, &(struct an_report){ .session = c->session, .by = AN_BY_FUNCTION }, width);
	for (size_t i = 0; i < c->nfn; i++) {
		struct an_callers_entry *e = &c->fn[i];
		char mod[32], *name, *title;

		fit_tail(mod, 24, out_base_name(str_or(&e->self, AN_COL_MODULE, "?"), "?"));
		name = fitted(o->width ? (width > strlen(mod) + 8 ? width - strlen(mod) - 8 : 8) : 0, "",
			      fit_name, str_or(&e->self, AN_COL_FUNCTION, "?"));
		fputc('\n', f);
		title = xasprintf("== %s (%s)", name, mod);
		sanitize(title);
		rows_block(f, &c->session, title, &e->self, 1, 0, o->width);
		rows_block(f, &c->session, smp ?
			   "Callers (samples of its outermost call from each; they sum to its inclusive):" :
			   "Callers (time of its outermost call made from each; EI adds up to its EI):",
			   e->callers, e->ncallers, o->top, o->width);
		rows_block(f, &c->session, smp ?
			   "Callees (samples of what its innermost call called; + exclusive = inclusive):" :
			   "Callees (what its innermost call called; EI + its EE = its EI):",
			   e->callees, e->ncallees, o->top, o->width);
		free(title);
		free(name);
	}
	return out_finish(f);
}

/* ---- diff --------------------------------------------------------------- */

static void fmt_delta(char *b, size_t len, double v)
{
	if (v > -0.05 && v < 0.05)
		snprintf(b, len, "0");
	else
		snprintf(b, len, "%+.1f", v);
}

/* A diff value of column c in at most 7 characters: a percentage, a time
 * or a count, a delta with its sign. */
static void fmt_diff_value(char *b, size_t len, const struct an_diff_row *row, enum an_col c,
			   enum an_diff_part part)
{
	enum an_type type = an_column_info(c)->type;
	char t[32];

	if ((part == AN_DIFF_BASE && !row->in_base) || (part == AN_DIFF_NEW && !row->in_new)) {
		snprintf(b, len, "-");
		return;
	}
	if (type == AN_T_PCT) {
		double v = an_diff_value(row, c, part);

		if (part == AN_DIFF_DELTA)
			fmt_delta(b, len, v);
		else
			snprintf(b, len, "%.1f", v);
		return;
	}
	{
		int64_t v = out_diff_int(row, c, part);
		uint64_t mag = v < 0 ? (uint64_t)-v : (uint64_t)v;

		if (type == AN_T_NS)
			out_fmt_time(t, sizeof(t), mag);
		else
			fmt_count(t, sizeof(t), mag, 6);
		snprintf(b, len, "%s%s", part != AN_DIFF_DELTA || !v ? "" : v < 0 ? "-" : "+", t);
	}
}

/*
 * Columns: the exclusive percentage (base, new, delta), then the inclusive
 * percentage, or, when the rows are sorted by another value column
 * (--sort calls), that column: a table sorted by what it does not show
 * would read as unordered.
 */
static int write_table_diff(FILE *f, const struct an_diff *d, const struct out_options *o)
{
	unsigned width = o->width ? o->width : 80;
	bool smp = d->base->session.method == SC_METHOD_SAMPLE;
	enum an_col ex = smp ? AN_COL_EXCL_PCT : AN_COL_EE_PCT, in = smp ? AN_COL_INCL_PCT : AN_COL_EI_PCT;
	enum an_col second = in;
	size_t n = o->top && o->top < d->nrows ? o->top : d->nrows;
	size_t w = name_room(o->width, 59);
	const char *sort_name = an_column_info(d->sort_col)->name;
	char a[16];

	if (!an_col_is_key(d->sort_col) && d->sort_col != ex)
		second = d->sort_col;
	fputs("Base: ", f);
	command_line(f, &d->base->session, width > 6 ? width - 6 : width);
	fputs("New:  ", f);
	command_line(f, &d->new->session, width > 6 ? width - 6 : width);
	if (smp)
		fprintf(f, "Samples: base %" PRIu64 ", new %" PRIu64 "\n", d->base->session.samples,
			d->new->session.samples);
	else {
		char b[16];

		out_fmt_time(a, sizeof(a), d->base->session.elapsed_inclusive_ns);
		out_fmt_time(b, sizeof(b), d->new->session.elapsed_inclusive_ns);
		fprintf(f, "Session EI: base %s, new %s\n", a, b);
	}
	fputc('\n', f);
	fprintf(f, "%% of each run's %s; delta = new - base; rows by %s%s%s%s\n",
		smp ? "samples" : "session EI", d->sort_part == AN_DIFF_DELTA ? "|delta " : "",
		d->sort_part == AN_DIFF_BASE ? "base " : d->sort_part == AN_DIFF_NEW ? "new " : "",
		d->sort_col == ex && !smp ? "EE%" : d->sort_col == ex ? "exclusive %" : sort_name,
		d->sort_part == AN_DIFF_DELTA ? "|" : "");
	fprintf(f, "%20s  %23s\n", smp ? "exclusive %" : "EE% (exclusive)",
		second != in ? an_column_info(second)->name : smp ? "inclusive %" : "EI% (inclusive)");
	fprintf(f, "%6s %6s %6s  %7s %7s %7s  %-8s  %s\n", "base", "new", "delta", "base", "new",
		"delta", "", label_title(d->base->by));
	for (size_t i = 0; i < n; i++) {
		const struct an_diff_row *row = &d->rows[i];
		const struct an_row *side = row->in_base ? &row->base : &row->new;
		char e[3][16], c[3][40], *name;

		for (int p = 0; p < 3; p++) {
			fmt_diff_value(e[p], sizeof(e[p]), row, ex, (enum an_diff_part)p);
			fmt_diff_value(c[p], sizeof(c[p]), row, second, (enum an_diff_part)p);
		}
		name = label(w, &(struct an_report){ .by = d->base->by }, side);
		fprintf(f, "%6s %6s %6s  %7s %7s %7s  %-8s  %s\n", e[0], e[1], e[2], c[0], c[1], c[2],
			!row->in_new ? "vanished" : !row->in_base ? "new" : "", name);
		free(name);
	}
	if (!d->nrows)
		fprintf(f, "(no rows)\n");
	else if (n < d->nrows)
		fprintf(f, "(%zu of %zu rows; --top 0 shows all)\n", n, d->nrows);
	return out_finish(f);
}

const struct out_format out_table = {
	"table", write_table, write_table_tree, write_table_callers, write_table_diff,
};
