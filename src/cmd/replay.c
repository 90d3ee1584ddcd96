/*
 * stackclock replay — the timeline (SPEC section 12, record --timeline):
 * per thread, every kept call in order, nested, with its duration; OS
 * events where they happened; samples with their stacks.
 *
 * Text (default): one line per call, "name() {" ... "}" around what it
 * encloses, "name();" for a call with nothing shown inside it, the start
 * (since the recording's first event) and the duration on the call's line,
 * as uftrace's replay reads.  --format json: one object, threads with
 * their events (docs/timeline.md gives the fields).
 *
 * Output is buffered in large blocks and numbers are formatted by hand: a
 * replay of millions of calls is bound by how fast lines are made.
 */
#include "analysis/timeline.h"
#include "cmd/cmd.h"
#include "output/output.h"
#include "util/util.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char replay_usage[] =
	"usage: stackclock replay [-i FILE] [--tid TID] [--since T] [--until T]\n"
	"                         [--min-time DUR] [--depth N] [--format text|json]\n"
	"\n"
	"  -i, --input FILE    data file recorded with --timeline, default stackclock.data\n"
	"  --tid TID           only this thread\n"
	"  --since T           only what ends at or after T (since the first event:\n"
	"                      1.5s, 200ms, 10us)\n"
	"  --until T           only what starts at or before T\n"
	"  --min-time DUR      only calls and OS events lasting DUR or more\n"
	"  --depth N           only calls less than N deep (1: the outermost)\n"
	"  --format F          text (default) or json\n";

enum { OPT_TID = 256, OPT_SINCE, OPT_UNTIL, OPT_MIN_TIME, OPT_DEPTH, OPT_FORMAT };

struct replay_opts {
	const char *input;
	struct an_tl_filter f;
	bool json;
};

static int parse_args(int argc, char **argv, struct replay_opts *o)
{
	static const struct option longopts[] = {
		{ "input", required_argument, NULL, 'i' },
		{ "tid", required_argument, NULL, OPT_TID },
		{ "since", required_argument, NULL, OPT_SINCE },
		{ "until", required_argument, NULL, OPT_UNTIL },
		{ "min-time", required_argument, NULL, OPT_MIN_TIME },
		{ "depth", required_argument, NULL, OPT_DEPTH },
		{ "format", required_argument, NULL, OPT_FORMAT },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	unsigned long v;
	int c;

	o->input = "stackclock.data";
	o->f = AN_TL_FILTER_ALL;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":i:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'i':
			o->input = optarg;
			break;
		case OPT_TID:
			if (cmd_parse_ulong("replay", "--tid", optarg, 1, 4194304UL, &v))
				return -2;
			o->f.tid = (uint32_t)v;
			break;
		case OPT_SINCE:
			if (cmd_parse_duration("replay", "--since", optarg, &o->f.since_ns))
				return -2;
			break;
		case OPT_UNTIL:
			if (cmd_parse_duration("replay", "--until", optarg, &o->f.until_ns))
				return -2;
			break;
		case OPT_MIN_TIME:
			if (cmd_parse_duration("replay", "--min-time", optarg, &o->f.min_ns))
				return -2;
			break;
		case OPT_DEPTH:
			if (cmd_parse_ulong("replay", "--depth", optarg, 1, 1u << 20, &v))
				return -2;
			o->f.max_depth = (uint32_t)v;
			break;
		case OPT_FORMAT:
			if (!strcmp(optarg, "json")) {
				o->json = true;
			} else if (strcmp(optarg, "text")) {
				pr_err("replay: unknown format '%s' (expected text or json)", optarg);
				return -2;
			}
			break;
		case 'h':
			fputs(replay_usage, stdout);
			return 1;
		default:
			cmd_bad_option("replay", c, argv);
			return -2;
		}
	}
	if (optind < argc) {
		pr_err("replay: unexpected argument '%s' (see 'stackclock replay --help')", argv[optind]);
		return -2;
	}
	if (o->f.since_ns > o->f.until_ns) {
		pr_err("replay: --since is after --until: nothing to show");
		return -2;
	}
	return 0;
}

/* ---- text ---------------------------------------------------------------- */

/* "12.345 ms"-style duration, 3 significant decimals, into buf (>= 24). */
static int fmt_dur(char *buf, uint64_t ns)
{
	static const struct { uint64_t div; const char *unit; } u[] = {
		{ 1000000000, "s " }, { 1000000, "ms" }, { 1000, "us" },
	};

	for (size_t i = 0; i < ARRAY_SIZE(u); i++)
		if (ns >= u[i].div)
			return sprintf(buf, "%8.3f %s", (double)ns / (double)u[i].div, u[i].unit);
	return sprintf(buf, "%8" PRIu64 " ns", ns);
}

static void indent(FILE *f, uint32_t depth)
{
	static const char sp[] = "                                                                ";

	depth *= 2;
	while (depth > 0) {
		uint32_t k = depth < sizeof(sp) - 1 ? depth : (uint32_t)sizeof(sp) - 1;

		fwrite(sp, 1, k, f);
		depth -= k;
	}
}

/* The start column: seconds since the first event, to the microsecond. */
static void put_start(FILE *f, uint64_t ns)
{
	char b[40];
	int n = sprintf(b, "%6" PRIu64 ".%06" PRIu64 "  ", ns / 1000000000, ns / 1000 % 1000000);

	fwrite(b, 1, (size_t)n, f);
}

static const char *os_label(const struct an_tl_item *it, char *buf, size_t len)
{
	const char *sys = it->os_cat == SC_OS_SYSCALL ? an_tl_syscall_name(it->sysno) : NULL;

	if (it->os_cat == SC_OS_SYSCALL && sys)
		snprintf(buf, len, "syscall %s", sys);
	else if (it->os_cat == SC_OS_SYSCALL && it->sysno >= 0)
		snprintf(buf, len, "syscall %d", it->sysno);
	else
		snprintf(buf, len, "%s", sc_os_cat_name(it->os_cat));
	return buf;
}

static void text_thread(FILE *f, const struct an_timeline *tl, const struct an_tl_thread *th)
{
	/* open calls: their end and depth, to close them with "}" */
	struct { uint64_t end; uint32_t depth; } *st = NULL;
	size_t nst = 0, ast = 0;
	char d[32], lab[64];

	fprintf(f, "# thread %u%s%s%s, pid %u%s%s: %zu events", th->tid,
		th->name ? " (" : "", th->name ? th->name : "", th->name ? ")" : "", th->pid,
		th->exe ? ", " : "", th->exe ? th->exe : "", th->nitems);
	if (th->dropped)
		fprintf(f, ", %" PRIu64 " DROPPED (the --timeline size was reached)", th->dropped);
	if (th->filtered)
		fprintf(f, ", %" PRIu64 " calls left out by record's filters", th->filtered);
	fprintf(f, "\n#  START (s)     DURATION  FUNCTION\n");
	for (size_t i = 0; i < th->nitems; i++) {
		const struct an_tl_item *it = &th->items[i];
		bool inner;

		while (nst && st[nst - 1].end <= it->start_ns) {
			nst--;
			fputs("                           ", f);
			indent(f, st[nst].depth);
			fputs("}\n", f);
		}
		put_start(f, it->start_ns);
		if (it->kind == AN_TL_SAMPLE) {
			fputs("      sample  ", f);
			indent(f, it->depth);
			for (uint32_t k = 0; k < it->nstack; k++)
				fprintf(f, "%s%s", k ? " < " : "", an_tl_name(tl, tl->frames[it->stack + k]));
			fputc('\n', f);
			continue;
		}
		fmt_dur(d, it->dur_ns);
		fputs(d, f);
		fputs("  ", f);
		indent(f, it->depth);
		if (it->kind == AN_TL_OS) {
			fprintf(f, "[%s]\n", os_label(it, lab, sizeof(lab)));
			continue;
		}
		/* something inside it follows: then braces */
		inner = i + 1 < th->nitems && th->items[i + 1].start_ns < it->start_ns + it->dur_ns +
			(it->dur_ns == 0) && th->items[i + 1].depth > it->depth;
		fputs(an_tl_name(tl, it->func), f);
		fputs(inner ? "() {" : "();", f);
		if (it->flags & AN_TL_OPEN)
			fputs(" /* had not returned */", f);
		else if (it->flags & AN_TL_REPAIRED)
			fputs(" /* closed by a repair */", f);
		if (it->flags & AN_TL_LIBCALL)
			fprintf(f, " /* %s */", an_tl_module(tl, it->func));
		fputc('\n', f);
		if (inner) {
			ALLOC_GROW(st, nst + 1, ast);
			st[nst].end = it->start_ns + it->dur_ns + (it->dur_ns == 0);
			st[nst++].depth = it->depth;
		}
	}
	while (nst--) {
		fputs("                           ", f);
		indent(f, st[nst].depth);
		fputs("}\n", f);
	}
	free(st);
}

/* ---- json ---------------------------------------------------------------- */

static void json_thread(FILE *f, const struct an_timeline *tl, const struct an_tl_thread *th)
{
	char lab[64];

	fprintf(f, "{\"pid\":%u,\"tid\":%u,\"name\":", th->pid, th->tid);
	out_json_string(f, th->name ? th->name : "");
	fprintf(f, ",\"dropped\":%" PRIu64 ",\"filtered\":%" PRIu64 ",\"events\":[", th->dropped,
		th->filtered);
	for (size_t i = 0; i < th->nitems; i++) {
		const struct an_tl_item *it = &th->items[i];

		fprintf(f, "%s\n{\"kind\":\"%s\",\"start_ns\":%" PRIu64, i ? "," : "",
			it->kind == AN_TL_CALL ? "call" : it->kind == AN_TL_OS ? "os" : "sample",
			it->start_ns);
		if (it->kind != AN_TL_SAMPLE)
			fprintf(f, ",\"duration_ns\":%" PRIu64, it->dur_ns);
		fprintf(f, ",\"depth\":%u", it->depth);
		if (it->kind == AN_TL_CALL) {
			fputs(",\"function\":", f);
			out_json_string(f, an_tl_name(tl, it->func));
			fputs(",\"module\":", f);
			out_json_string(f, an_tl_module(tl, it->func));
			if (it->flags & AN_TL_OPEN)
				fputs(",\"open\":true", f);
			if (it->flags & AN_TL_REPAIRED)
				fputs(",\"repaired\":true", f);
			if (it->flags & AN_TL_LIBCALL)
				fputs(",\"libcall\":true", f);
		} else if (it->kind == AN_TL_OS) {
			fprintf(f, ",\"category\":\"%s\"", sc_os_cat_name(it->os_cat));
			if (it->os_cat == SC_OS_SYSCALL && it->sysno >= 0) {
				const char *sys = an_tl_syscall_name(it->sysno);

				fprintf(f, ",\"syscall\":%d,\"name\":", it->sysno);
				out_json_string(f, sys ? sys : os_label(it, lab, sizeof(lab)));
			}
		} else {
			fputs(",\"stack\":[", f);
			for (uint32_t k = 0; k < it->nstack; k++) {
				if (k)
					fputc(',', f);
				out_json_string(f, an_tl_name(tl, tl->frames[it->stack + k]));
			}
			fputc(']', f);
		}
		fputc('}', f);
	}
	fputs("]}", f);
}

int cmd_replay(int argc, char **argv)
{
	struct replay_opts o = { 0 };
	struct an_profile *p;
	struct an_timeline *tl = NULL;
	const char *damaged = NULL;
	char err[512] = "", *buf;
	int ret, status = 1;

	ret = parse_args(argc, argv, &o);
	if (ret)
		return ret > 0 ? 0 : 2;
	p = an_profile_new(NULL);
	ret = an_profile_load(p, o.input, &damaged, err, sizeof(err));
	if (ret < 0) {
		pr_err("replay: cannot read %s", err);
		goto out;
	}
	if (damaged)
		pr_warn("%s is damaged (%s); replaying the events read before the damage",
			o.input, damaged);
	ret = an_timeline_build(p, &o.f, &tl, err, sizeof(err));
	if (ret < 0) {
		pr_err("replay: %s: %s", o.input, err);
		goto out;
	}
	if (tl->damaged_items)
		pr_warn("%s: %" PRIu64 " timeline events could not be decoded (damaged records)",
			o.input, tl->damaged_items);
	buf = xmalloc(1 << 20);
	setvbuf(stdout, buf, _IOFBF, 1 << 20);
	if (o.json) {
		printf("{\"method\":\"%s\",\"t0_ns\":%" PRIu64 ",\"dropped\":%" PRIu64
		       ",\"filtered\":%" PRIu64 ",\"threads\":[",
		       tl->method == SC_METHOD_SAMPLE ? "sample" : "instrument", tl->t0_ns,
		       tl->dropped, tl->filtered);
		for (size_t i = 0, n = 0; i < tl->nthreads; i++) {
			if (o.f.tid && tl->threads[i].tid != o.f.tid)
				continue;
			if (n++)
				putchar(',');
			json_thread(stdout, tl, &tl->threads[i]);
		}
		printf("]}\n");
	} else {
		size_t shown = 0;

		for (size_t i = 0; i < tl->nthreads; i++) {
			if (o.f.tid && tl->threads[i].tid != o.f.tid)
				continue;
			if (shown++)
				putchar('\n');
			text_thread(stdout, tl, &tl->threads[i]);
		}
		if (!shown)
			pr_warn("replay: no thread %u in %s", o.f.tid, o.input);
	}
	status = fflush(stdout) != 0 || ferror(stdout);
	if (status)
		pr_err("replay: cannot write to standard output: %s", strerror(errno));
	setvbuf(stdout, NULL, _IONBF, 0);
	free(buf);
out:
	an_timeline_free(tl);
	an_profile_free(p);
	return status;
}
