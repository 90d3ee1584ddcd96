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

/* A line buffer written out in large blocks: numbers by hand, no stdio
 * per field (a replay is bound by how fast its lines are made). */
struct obuf {
	FILE *f;
	char *b;
	size_t n;
};
#define OBUF_SIZE (1u << 20)
#define OBUF_ROOM 512             /* most a field adds without a check */

static void ob_flush(struct obuf *o)
{
	fwrite(o->b, 1, o->n, o->f);
	o->n = 0;
}

static inline void ob_mem(struct obuf *o, const char *s, size_t len)
{
	if (o->n + len > OBUF_SIZE)
		ob_flush(o);
	if (len > OBUF_SIZE) {
		fwrite(s, 1, len, o->f);
		return;
	}
	memcpy(o->b + o->n, s, len);
	o->n += len;
}

static void ob_str(struct obuf *o, const char *s)
{
	ob_mem(o, s, strlen(s));
}

/* The digits of v right-aligned in width (padded with pad), at most 20
 * digits; two digits per division, written straight into the buffer. */
static inline char *put_u64(char *p, uint64_t v, int width, char pad)
{
	static const char pairs[] =
		"00010203040506070809101112131415161718192021222324252627282930313233343536373839"
		"40414243444546474849505152535455565758596061626364656667686970717273747576777879"
		"8081828384858687888990919293949596979899";
	static const uint64_t p10[20] = {
		1ull, 10ull, 100ull, 1000ull, 10000ull, 100000ull, 1000000ull, 10000000ull,
		100000000ull, 1000000000ull, 10000000000ull, 100000000000ull, 1000000000000ull,
		10000000000000ull, 100000000000000ull, 1000000000000000ull, 10000000000000000ull,
		100000000000000000ull, 1000000000000000000ull, 10000000000000000000ull,
	};
	/* the number of digits from the number of bits: log10(2) ~ 1233/4096 */
	int t = ((64 - __builtin_clzll(v | 1)) * 1233) >> 12;
	int digits = t + (v >= p10[t]);
	char *e;

	if (!digits)
		digits = 1;
	for (; width > digits; width--)
		*p++ = pad;
	e = p + digits;
	while (v >= 100) {
		unsigned r = (unsigned)(v % 100);

		v /= 100;
		*--e = pairs[2 * r + 1];
		*--e = pairs[2 * r];
	}
	if (v >= 10) {
		*--e = pairs[2 * v + 1];
		*--e = pairs[2 * v];
	} else {
		*--e = (char)('0' + v);
	}
	return p + digits;
}

static inline void ob_room(struct obuf *o)
{
	if (o->n + OBUF_ROOM > OBUF_SIZE)
		ob_flush(o);
}

/* "   12.345 ms": 8 columns of number, 3 decimals, then the unit */
static inline void ob_dur(struct obuf *o, uint64_t ns)
{
	char *p;
	uint64_t v;
	const char *unit;

	ob_room(o);
	p = o->b + o->n;
	if (ns >= 1000000000) {
		v = (ns + 500000) / 1000000;
		unit = " s ";
	} else if (ns >= 1000000) {
		v = (ns + 500) / 1000;
		unit = " ms";
	} else if (ns >= 1000) {
		v = ns;
		unit = " us";
	} else {
		p = put_u64(p, ns, 8, ' ');
		memcpy(p, " ns", 3);
		o->n = (size_t)(p + 3 - o->b);
		return;
	}
	p = put_u64(p, v / 1000, 4, ' ');
	*p++ = '.';
	p = put_u64(p, v % 1000, 3, '0');
	memcpy(p, unit, 3);
	o->n = (size_t)(p + 3 - o->b);
}

static void ob_indent(struct obuf *o, uint32_t n)
{
	static const char sp[] = "                                                                ";

	while (n > 0) {
		uint32_t k = n < sizeof(sp) - 1 ? n : (uint32_t)sizeof(sp) - 1;

		ob_mem(o, sp, k);
		n -= k;
	}
}

/* The start column: seconds since the first event, to the microsecond. */
static inline void ob_start(struct obuf *o, uint64_t ns)
{
	char *p;

	ob_room(o);
	p = put_u64(o->b + o->n, ns / 1000000000, 6, ' ');
	*p++ = '.';
	p = put_u64(p, ns / 1000 % 1000000, 6, '0');
	*p++ = ' ';
	*p++ = ' ';
	o->n = (size_t)(p - o->b);
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

#define COL_FUNC 27               /* where the function column starts */

/* Function names and their lengths, looked up once per function. */
struct names {
	const char **s;
	uint32_t *len;
	size_t n;
};

static void ob_name(struct obuf *o, const struct an_timeline *tl, struct names *nm, uint32_t func)
{
	if (func >= nm->n) {
		size_t n = (size_t)func + 1 > 2 * nm->n ? (size_t)func + 1 : 2 * nm->n;

		nm->s = xrealloc(nm->s, n * sizeof(*nm->s));
		nm->len = xrealloc(nm->len, n * sizeof(*nm->len));
		memset(nm->s + nm->n, 0, (n - nm->n) * sizeof(*nm->s));
		nm->n = n;
	}
	if (!nm->s[func]) {
		const char *name = an_tl_name(tl, func);

		nm->s[func] = name ? name : "?";
		nm->len[func] = (uint32_t)strlen(nm->s[func]);
	}
	ob_mem(o, nm->s[func], nm->len[func]);
}

static void text_thread(struct obuf *o, const struct an_timeline *tl, const struct an_tl_thread *th,
			struct names *nm)
{
	/* open calls: their end and depth, to close them with "}" */
	struct { uint64_t end; uint32_t depth; } *st = NULL;
	size_t nst = 0, ast = 0;
	char lab[160];

	snprintf(lab, sizeof(lab), "# thread %u%s%s%s, pid %u, ", th->tid, th->name ? " (" : "",
		 th->name ? th->name : "", th->name ? ")" : "", th->pid);
	ob_str(o, lab);
	ob_str(o, th->exe ? th->exe : "?");
	snprintf(lab, sizeof(lab), ": %zu events", th->nitems);
	ob_str(o, lab);
	if (th->dropped) {
		snprintf(lab, sizeof(lab), ", %" PRIu64 " DROPPED (the --timeline size was reached)",
			 th->dropped);
		ob_str(o, lab);
	}
	if (th->filtered) {
		snprintf(lab, sizeof(lab), ", %" PRIu64 " calls left out by record's filters", th->filtered);
		ob_str(o, lab);
	}
	ob_str(o, "\n#  START (s)     DURATION  FUNCTION\n");
	for (size_t i = 0; i < th->nitems; i++) {
		const struct an_tl_item *it = &th->items[i];
		bool inner;

		while (nst && st[nst - 1].end <= it->start_ns) {
			nst--;
			ob_indent(o, COL_FUNC + 2 * st[nst].depth);
			ob_mem(o, "}\n", 2);
		}
		ob_start(o, it->start_ns);
		if (it->kind == AN_TL_SAMPLE) {
			ob_str(o, "      sample  ");
			ob_indent(o, 2 * it->depth);
			for (uint32_t k = 0; k < it->nstack; k++) {
				if (k)
					ob_mem(o, " < ", 3);
				ob_name(o, tl, nm, tl->frames[it->stack + k]);
			}
			ob_mem(o, "\n", 1);
			continue;
		}
		ob_dur(o, it->dur_ns);
		ob_mem(o, "  ", 2);
		ob_indent(o, 2 * it->depth);
		if (it->kind == AN_TL_OS) {
			ob_mem(o, "[", 1);
			ob_str(o, os_label(it, lab, sizeof(lab)));
			ob_mem(o, "]\n", 2);
			continue;
		}
		/* something inside it follows: then braces */
		inner = i + 1 < th->nitems && th->items[i + 1].start_ns < it->start_ns + it->dur_ns +
			(it->dur_ns == 0) && th->items[i + 1].depth > it->depth;
		ob_name(o, tl, nm, it->func);
		if (inner)
			ob_mem(o, "() {", 4);
		else
			ob_mem(o, "();", 3);
		if (it->flags & AN_TL_OPEN)
			ob_str(o, " /* had not returned */");
		else if (it->flags & AN_TL_REPAIRED)
			ob_str(o, " /* closed by a repair */");
		if (it->flags & AN_TL_LIBCALL) {
			ob_str(o, " /* ");
			ob_str(o, out_base_name(an_tl_module(tl, it->func), "?"));
			ob_str(o, " */");
		}
		ob_mem(o, "\n", 1);
		if (inner) {
			ALLOC_GROW(st, nst + 1, ast);
			st[nst].end = it->start_ns + it->dur_ns + (it->dur_ns == 0);
			st[nst++].depth = it->depth;
		}
	}
	while (nst--) {
		ob_indent(o, COL_FUNC + 2 * st[nst].depth);
		ob_mem(o, "}\n", 2);
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
		struct obuf ob = { stdout, xmalloc(OBUF_SIZE), 0 };
		struct names nm = { 0 };
		size_t shown = 0;

		for (size_t i = 0; i < tl->nthreads; i++) {
			if (o.f.tid && tl->threads[i].tid != o.f.tid)
				continue;
			if (shown++)
				ob_mem(&ob, "\n", 1);
			text_thread(&ob, tl, &tl->threads[i], &nm);
		}
		ob_flush(&ob);
		free(ob.b);
		free(nm.s);
		free(nm.len);
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
