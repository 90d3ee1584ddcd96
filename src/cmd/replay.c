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
#include <unistd.h>

static const char replay_usage[] =
	"usage: stackclock replay [-i FILE] [--tid TID] [--since T] [--until T]\n"
	"                         [--min-time DUR] [--depth N] [--format text|json]\n"
	"\n"
	"  -i, --input FILE    data file recorded with --timeline, default stackclock.data\n"
	"  --tid TID           only this thread\n"
	"  --since T           only what ends at or after T: seconds since the first\n"
	"                      event, as the START (s) column (0.005), or with a unit\n"
	"                      (5ms, 10us, 500ns, 1.5s)\n"
	"  --until T           only what starts at or before T (as --since)\n"
	"  --min-time DUR      only calls and OS events lasting DUR or more; DUR takes\n"
	"                      its unit (100us, 2ms, 1s, 500ns), as uftrace's -t does\n"
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
			if (cmd_parse_time("replay", "--since", optarg, &o->f.since_ns))
				return -2;
			break;
		case OPT_UNTIL:
			if (cmd_parse_time("replay", "--until", optarg, &o->f.until_ns))
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

/*
 * The text is made in a 1 MiB block written straight to the descriptor
 * (no stdio copy).  Each line is made in one go after one check for room:
 * numbers by hand (pairs of digits), names, indents and fixed words copied
 * in 32-byte steps from sources padded for it, so a line costs no call.
 */
#define OBUF_SIZE (1u << 20)
#define OBUF_SLACK 64             /* the 32-byte steps may write past a line */
#define LINE_FAST 1024            /* a line checked once for this much room */

struct obuf {
	int fd;
	int err;                  /* errno of the first failed write, or 0 */
	char *b;
	size_t n;
};

static void ob_flush(struct obuf *o)
{
	size_t done = 0;

	while (done < o->n && !o->err) {
		ssize_t w = write(o->fd, o->b + done, o->n - done);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			o->err = w < 0 ? errno : EIO;
		else
			done += (size_t)w;
	}
	o->n = 0;
}

static inline void ob_room(struct obuf *o, size_t len)
{
	if (o->n + len > OBUF_SIZE)
		ob_flush(o);
}

static void ob_mem(struct obuf *o, const char *s, size_t len)
{
	while (len) {
		size_t k;

		ob_room(o, 1);
		k = OBUF_SIZE - o->n < len ? OBUF_SIZE - o->n : len;
		memcpy(o->b + o->n, s, k);
		o->n += k;
		s += k;
		len -= k;
	}
}

static void ob_str(struct obuf *o, const char *s)
{
	ob_mem(o, s, strlen(s));
}

/* Copy len bytes from src in 32-byte steps: src readable and dst writable
 * up to the next multiple of 32 past len. */
static inline char *copy32(char *dst, const char *src, size_t len)
{
	for (size_t k = 0; k < len; k += 32)
		memcpy(dst + k, src + k, 32);
	return dst + len;
}

static const char digit_pairs[201] =
	"00010203040506070809101112131415161718192021222324252627282930313233343536373839"
	"40414243444546474849505152535455565758596061626364656667686970717273747576777879"
	"8081828384858687888990919293949596979899";

static inline char *put2(char *p, unsigned v)
{
	memcpy(p, digit_pairs + 2 * v, 2);
	return p + 2;
}

/* The digits of v right-aligned in width (padded with pad), at most 20
 * digits. */
static inline char *put_u64(char *p, uint64_t v, int width, char pad)
{
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
		e -= 2;
		memcpy(e, digit_pairs + 2 * r, 2);
	}
	if (v >= 10)
		memcpy(e - 2, digit_pairs + 2 * v, 2);
	else
		e[-1] = (char)('0' + v);
	return p + digits;
}

/* "   12.345 ms": 8 columns of number, 3 decimals, then the unit */
static inline char *put_dur(char *p, uint64_t ns)
{
	uint64_t v;
	char unit;
	unsigned frac;

	if (ns < 1000) {
		p = put_u64(p, ns, 8, ' ');
		memcpy(p, " ns", 3);
		return p + 3;
	}
	if (ns < 1000000) {
		v = ns;
		unit = 'u';
	} else if (ns < 1000000000) {
		v = (ns + 500) / 1000;
		unit = 'm';
	} else {
		v = (ns + 500000) / 1000000;
		unit = 0;
	}
	if (v < 1000000) {
		/* 1.000 to 999.999 (1000.000 after rounding): "%4u" */
		unsigned w = (unsigned)(v / 1000);

		memcpy(p, "    ", 4);
		if (w >= 1000)
			memcpy(p, "1000", 4);
		else if (w >= 100)
			p[1] = (char)('0' + w / 100), put2(p + 2, w % 100);
		else if (w >= 10)
			put2(p + 2, w);
		else
			p[3] = (char)('0' + w);
		p += 4;
	} else {
		p = put_u64(p, v / 1000, 4, ' ');
	}
	frac = (unsigned)(v % 1000);
	*p++ = '.';
	*p++ = (char)('0' + frac / 100);
	p = put2(p, frac % 100);
	if (unit) {
		p[0] = ' ';
		p[1] = unit;
		p[2] = 's';
	} else {
		memcpy(p, " s ", 3);
	}
	return p + 3;
}

/* The start column: seconds since the first event, to the microsecond,
 * "%6llu.%06llu  ". */
static inline char *put_start(char *p, uint64_t ns)
{
	uint64_t s = ns / 1000000000;
	unsigned us = (unsigned)(ns / 1000 % 1000000);

	if (s < 10) {
		memcpy(p, "     ", 5);
		p[5] = (char)('0' + s);
		p += 6;
	} else {
		p = put_u64(p, s, 6, ' ');
	}
	*p++ = '.';
	p = put2(p, us / 10000);
	p = put2(p, us / 100 % 100);
	p = put2(p, us % 100);
	p[0] = ' ';
	p[1] = ' ';
	return p + 2;
}

#define INDENT_MAX 512
static const char spaces[INDENT_MAX + 32 + 1] =
	"                                                                "
	"                                                                "
	"                                                                "
	"                                                                "
	"                                                                "
	"                                                                "
	"                                                                "
	"                                                                "
	"                                ";

static void ob_indent(struct obuf *o, uint32_t n)
{
	while (n > 0) {
		uint32_t k = n < INDENT_MAX ? n : INDENT_MAX;

		ob_mem(o, spaces, k);
		n -= k;
	}
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

/* Function names, copied once per function with room for copy32. */
struct names {
	char **s;
	uint32_t *len;
	size_t n;
};

static inline void names_get(struct names *nm, const struct an_timeline *tl, uint32_t func)
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
		size_t len;

		if (!name)
			name = "?";
		len = strlen(name);
		nm->s[func] = xcalloc(1, (len + 63) & ~(size_t)31);
		memcpy(nm->s[func], name, len);
		nm->len[func] = (uint32_t)len;
	}
}

static void names_free(struct names *nm)
{
	for (size_t i = 0; i < nm->n; i++)
		free(nm->s[i]);
	free(nm->s);
	free(nm->len);
}

static void ob_name(struct obuf *o, const struct an_timeline *tl, struct names *nm, uint32_t func)
{
	names_get(nm, tl, func);
	ob_mem(o, nm->s[func], nm->len[func]);
}

/* "}" closing a call at depth d */
static inline void ob_close(struct obuf *o, uint32_t depth)
{
	uint32_t n = COL_FUNC + 2 * depth;

	if (n <= INDENT_MAX) {
		char *p;

		ob_room(o, INDENT_MAX + OBUF_SLACK);
		p = copy32(o->b + o->n, spaces, n);
		p[0] = '}';
		p[1] = '\n';
		o->n = (size_t)(p + 2 - o->b);
	} else {
		ob_indent(o, n);
		ob_mem(o, "}\n", 2);
	}
}

static void text_thread(struct obuf *o, struct an_timeline *tl, size_t ti, struct names *nm)
{
	/* open calls: their end and depth, to close them with "}" */
	struct { uint64_t end; uint32_t depth; } *st = NULL;
	size_t nst = 0, ast = 0;
	const struct an_tl_thread *th = &tl->threads[ti];
	struct an_tl_item cur, nxt;
	bool more;
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
	/* the item after a call is read before its line (braces or not); a
	 * sample's frames last until the next item is read: its line first */
	an_tl_begin(tl, ti);
	more = an_tl_next(tl, &nxt);
	while (more) {
		const struct an_tl_item *it = &cur;
		uint64_t end;
		uint32_t ind;
		bool inner;
		char *p;

		cur = nxt;
		more = cur.kind == AN_TL_SAMPLE || an_tl_next(tl, &nxt);
		ind = 2 * it->depth;
		while (nst && st[nst - 1].end <= it->start_ns)
			ob_close(o, st[--nst].depth);
		ob_room(o, LINE_FAST);
		p = put_start(o->b + o->n, it->start_ns);
		if (it->kind == AN_TL_SAMPLE) {
			memcpy(p, "      sample  ", 14);
			o->n = (size_t)(p + 14 - o->b);
			ob_indent(o, ind);
			for (uint32_t s = 0; s < it->nstack; s++) {
				if (s)
					ob_mem(o, " < ", 3);
				ob_name(o, tl, nm, tl->frames[it->stack + s]);
			}
			ob_mem(o, "\n", 1);
			more = an_tl_next(tl, &nxt);
			continue;
		}
		p = put_dur(p, it->dur_ns);
		p[0] = ' ';
		p[1] = ' ';
		p += 2;
		if (it->kind == AN_TL_OS) {
			o->n = (size_t)(p - o->b);
			ob_indent(o, ind);
			ob_mem(o, "[", 1);
			ob_str(o, os_label(it, lab, sizeof(lab)));
			ob_mem(o, "]\n", 2);
			continue;
		}
		/* something inside it follows: then braces */
		end = it->start_ns + it->dur_ns + (it->dur_ns == 0);
		inner = more && nxt.start_ns < end && nxt.depth > it->depth;
		names_get(nm, tl, it->func);
		if (ind + nm->len[it->func] <= INDENT_MAX) {
			p = copy32(p, spaces, ind);
			p = copy32(p, nm->s[it->func], nm->len[it->func]);
			memcpy(p, inner ? "() {" : "();", 4);
			p += 3 + inner;
			if (!(it->flags & (AN_TL_OPEN | AN_TL_REPAIRED | AN_TL_LIBCALL))) {
				*p++ = '\n';
				o->n = (size_t)(p - o->b);
				goto pushed;
			}
			o->n = (size_t)(p - o->b);
		} else {
			o->n = (size_t)(p - o->b);
			ob_indent(o, ind);
			ob_name(o, tl, nm, it->func);
			ob_mem(o, inner ? "() {" : "();", 3 + inner);
		}
		if (it->flags & (AN_TL_OPEN | AN_TL_REPAIRED | AN_TL_LIBCALL)) {
			if (it->flags & AN_TL_OPEN)
				ob_str(o, " /* had not returned */");
			else if (it->flags & AN_TL_REPAIRED)
				ob_str(o, " /* closed by a repair */");
			if (it->flags & AN_TL_LIBCALL) {
				ob_str(o, " /* ");
				ob_str(o, out_base_name(an_tl_module(tl, it->func), "?"));
				ob_str(o, " */");
			}
		}
		ob_mem(o, "\n", 1);
pushed:
		if (inner) {
			ALLOC_GROW(st, nst + 1, ast);
			st[nst].end = end;
			st[nst++].depth = it->depth;
		}
	}
	while (nst--)
		ob_close(o, st[nst].depth);
	free(st);
}

/* ---- json ---------------------------------------------------------------- */

static void json_thread(FILE *f, struct an_timeline *tl, size_t ti)
{
	const struct an_tl_thread *th = &tl->threads[ti];
	struct an_tl_item item;
	char lab[64];

	fprintf(f, "{\"pid\":%u,\"tid\":%u,\"name\":", th->pid, th->tid);
	out_json_string(f, th->name ? th->name : "");
	fprintf(f, ",\"dropped\":%" PRIu64 ",\"filtered\":%" PRIu64 ",\"events\":[", th->dropped,
		th->filtered);
	an_tl_begin(tl, ti);
	for (size_t k = 0; an_tl_next(tl, &item); k++) {
		const struct an_tl_item *it = &item;

		fprintf(f, "%s\n{\"kind\":\"%s\",\"start_ns\":%" PRIu64, k ? "," : "",
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
			for (uint32_t s = 0; s < it->nstack; s++) {
				if (s)
					fputc(',', f);
				out_json_string(f, an_tl_name(tl, tl->frames[it->stack + s]));
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
	ret = an_timeline_stream(p, &o.f, 0, &tl, err, sizeof(err));
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
			json_thread(stdout, tl, i);
		}
		printf("]}\n");
	} else {
		struct obuf ob = { fileno(stdout), 0, xmalloc(OBUF_SIZE + OBUF_SLACK), 0 };
		struct names nm = { 0 };
		size_t shown = 0;

		fflush(stdout);
		for (size_t i = 0; i < tl->nthreads && !ob.err; i++) {
			if (o.f.tid && tl->threads[i].tid != o.f.tid)
				continue;
			if (shown++)
				ob_mem(&ob, "\n", 1);
			text_thread(&ob, tl, i, &nm);
		}
		ob_flush(&ob);
		free(ob.b);
		names_free(&nm);
		if (ob.err) {
			errno = ob.err;
			pr_err("replay: cannot write to standard output: %s", strerror(errno));
			goto out_buf;
		}
		if (!shown)
			pr_warn("replay: no thread %u in %s", o.f.tid, o.input);
	}
	status = fflush(stdout) != 0 || ferror(stdout);
	if (status)
		pr_err("replay: cannot write to standard output: %s", strerror(errno));
out_buf:
	setvbuf(stdout, NULL, _IONBF, 0);
	free(buf);
out:
	an_timeline_free(tl);
	an_profile_free(p);
	return status;
}
