/*
 * Unit tests of the timeline (SPEC section 12) from the probes to the
 * view, without a target: the engine (runtime/engine.h) driven on a heap
 * arena with known times, its threads emitted as the recorder does
 * (record/cct_emit.c: chunks copied, SC_TL_TICKS with a conversion, the
 * frames still open), read back and built into a timeline
 * (analysis/timeline.c):
 *  - every call with its exact start and duration (ticks * ns_per_tick),
 *    in start order, outer calls first at a tie, depths from the nodes,
 *    an OS event inside its call, a repair and an open call flagged;
 *  - a chunk boundary crossed (thousands of calls), the order still exact;
 *  - the staging buffer: copied through the arena's write (or by the
 *    engine when it fails), a thread killed inside a copy read once;
 *  - the record-time filters: min ticks, depth, only (a node marked);
 *  - the size limit: items dropped and counted, those kept still decode;
 *  - view filters and an_timeline_check; damaged items end a record
 *    without a crash; a profile without a timeline is -ENOENT;
 *  - varints and zigzag read back;
 *  - the stream (replay's and the chrome export's: windows of calls put in
 *    order one after the other) visits the very items of an_timeline_build,
 *    with every view filter and --tid, windows of 1, 2, 3, 7 calls and
 *    more, a 5 s call and damaged records included.
 */
#include "analysis/timeline.h"
#include "format/varint.h"
#include "record/cct_emit.h"
#include "runtime/engine.h"
#include "tap.h"
#include "util/util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char path[64];

/* function i at 0x1000 * i, named f<i> */
static int fake_resolve(void *ctx, uint32_t proc_id, uint64_t addr, bool is_return,
			struct sym_frame *out, int max)
{
	static char names[64][8];
	uint64_t i = (is_return ? addr - 1 : addr) / 0x1000;

	(void)ctx;
	(void)proc_id;
	if (i >= 64 || max < 1)
		return 0;
	snprintf(names[i], sizeof(names[i]), "f%u", (unsigned)i);
	out[0] = (struct sym_frame){ .function = names[i], .module = "/app", .module_offset = i * 0x1000 };
	return 1;
}

static const struct an_resolver fake = { fake_resolve, NULL, NULL };
#define F(i) (0x1000ull * (i))

struct rig {
	void *buf;
	size_t len;
	struct sc_eng_arena a;
	struct sc_eng_thread *t;
	uint64_t left;
};

static void rig_start(struct rig *g, uint64_t budget, uint64_t min, uint32_t depth, int only)
{
	g->len = 64 << 20;
	g->buf = calloc(1, g->len);
	sc_eng_arena_init(&g->a, g->buf, g->len);
	g->left = budget;
	g->a.tl_left = budget ? &g->left : NULL;
	g->t = sc_eng_thread_new(&g->a, 7, 1000);
	sc_eng_tl_start(g->t, min, min, depth, only);
	sc_eng_tl_unit(g->t, 0);     /* the tests' times are exact */
}

/* Emit the rig's thread with tick conversion conv and build its timeline. */
static struct an_timeline *rig_timeline_conv(struct rig *g, struct an_profile **pp, const struct an_tl_filter *f,
					     struct sc_tick_conv conv)
{
	struct sc_writer *w;
	uint64_t off[4];
	struct an_timeline *tl = NULL;
	char err[256];

	*pp = an_profile_new(&fake);
	if (sc_writer_open(path, SC_FEAT_INSTRUMENT, &w) || sc_cct_threads(g->buf, g->len, off, 4) != 1 ||
	    sc_cct_emit_thread(w, g->buf, g->len, off[0], 1, &conv, NULL) || sc_writer_close(w))
		return NULL;
	if (an_profile_load(*pp, path, NULL, err, sizeof(err)) ||
	    an_timeline_build(*pp, f, &tl, err, sizeof(err))) {
		printf("# %s\n", err);
		return NULL;
	}
	return tl;
}

/* Emit the rig's thread (ticks are half nanoseconds) and build its timeline. */
static struct an_timeline *rig_timeline(struct rig *g, struct an_profile **pp, const struct an_tl_filter *f)
{
	return rig_timeline_conv(g, pp, f, (struct sc_tick_conv){ 0, 0, 0.5 });
}

/* The stream of p, window calls at a time, gives the same threads,
 * counts and items, in the same order, as an_timeline_build with filter
 * f; "" or the difference. */
static const char *stream_differs(struct an_profile *p, const struct an_tl_filter *f, size_t window)
{
	static char why[200];
	struct an_timeline *a = NULL, *b = NULL;
	char err[256];

	why[0] = 0;
	if (an_timeline_build(p, f, &a, err, sizeof(err)) ||
	    an_timeline_stream(p, f, window, &b, err, sizeof(err))) {
		snprintf(why, sizeof(why), "build: %.100s", err);
		goto out;
	}
	if (a->nthreads != b->nthreads || a->t0_ns != b->t0_ns ||
	    a->items != b->items || a->damaged_items != b->damaged_items || a->dropped != b->dropped ||
	    a->filtered != b->filtered) {
		snprintf(why, sizeof(why), "window %zu: totals differ (items %llu/%llu, damaged %llu/%llu)",
			 window, (unsigned long long)a->items, (unsigned long long)b->items,
			 (unsigned long long)a->damaged_items, (unsigned long long)b->damaged_items);
		goto out;
	}
	for (size_t i = 0; i < a->nthreads; i++) {
		const struct an_tl_thread *x = &a->threads[i], *y = &b->threads[i];
		struct an_tl_item v;
		size_t k = 0;

		if (x->tid != y->tid || x->nitems != y->nitems || x->calls != y->calls ||
		    (x->nitems && x->items[0].start_ns != y->first_ns)) {
			snprintf(why, sizeof(why), "window %zu, thread %zu: tid %u/%u, %zu/%zu items", window, i,
				 x->tid, y->tid, x->nitems, y->nitems);
			goto out;
		}
		an_tl_begin(b, i);
		for (; an_tl_next(b, &v); k++) {
			const struct an_tl_item *u = &x->items[k];
			bool same = k < x->nitems;

			same = same && u->start_ns == v.start_ns && u->dur_ns == v.dur_ns && u->kind == v.kind &&
			       u->flags == v.flags && u->depth == v.depth && u->func == v.func &&
			       u->os_cat == v.os_cat && u->nstack == v.nstack &&
			       (u->kind != AN_TL_OS || u->sysno == v.sysno);
			for (uint32_t j = 0; same && u->kind == AN_TL_SAMPLE && j < u->nstack; j++)
				same = a->frames[u->stack + j] == b->frames[v.stack + j];
			if (!same) {
				snprintf(why, sizeof(why), "window %zu, thread %zu item %zu: start %llu/%llu dur %llu/%llu depth %u/%u",
					 window, i, k, k < x->nitems ? (unsigned long long)u->start_ns : 0ull,
					 (unsigned long long)v.start_ns,
					 k < x->nitems ? (unsigned long long)u->dur_ns : 0ull, (unsigned long long)v.dur_ns,
					 k < x->nitems ? u->depth : 0, v.depth);
				goto out;
			}
		}
		if (k != x->nitems) {
			snprintf(why, sizeof(why), "window %zu, thread %zu: %zu items streamed, %zu built", window,
				 i, k, x->nitems);
			goto out;
		}
	}
out:
	an_timeline_free(a);
	an_timeline_free(b);
	return why;
}

/* stream_differs over a set of view filters and windows (1: every call
 * a window of its own); a profile of many calls (big) with the larger
 * windows only (windows of a few calls over 200,000 calls read the file
 * again for each: two minutes here, over five under ASan) */
static void stream_same_n(struct an_profile *p, const char *what, int big)
{
	static const struct { uint64_t since, until, min; uint32_t depth; } fs[] = {
		{ 0, UINT64_MAX, 0, 0 }, { 0, UINT64_MAX, 0, 1 }, { 0, UINT64_MAX, 40, 0 },
		{ 100, 250, 0, 0 }, { 30, UINT64_MAX, 0, 2 }, { 0, 60, 20, 3 }, { 400, 300, 0, 0 },
	};
	static const size_t windows[] = { 1000, 0, 7, 1, 2, 3 };
	const char *why = "";

	for (size_t w = 0; w < (big ? 3 : sizeof(windows) / sizeof(*windows)) && !*why; w++)
		for (size_t i = 0; i < sizeof(fs) / sizeof(*fs) && !*why; i++) {
			struct an_tl_filter f = AN_TL_FILTER_ALL;

			f.since_ns = fs[i].since;
			f.until_ns = fs[i].until;
			f.min_ns = fs[i].min;
			f.max_depth = fs[i].depth;
			why = stream_differs(p, &f, windows[w]);
			if (!*why) {
				f.tid = 7;           /* the rig's thread */
				why = stream_differs(p, &f, windows[w]);
			}
		}
	ok(!*why, "%s: the stream visits the same items in the same order%s%s", what,
	   *why ? ": " : "", why);
}

static void stream_same(struct an_profile *p, const char *what)
{
	stream_same_n(p, what, 0);
}

static const struct an_tl_item *nth_call(const struct an_timeline *tl, size_t k)
{
	for (size_t i = 0; i < tl->threads[0].nitems; i++)
		if (tl->threads[0].items[i].kind == AN_TL_CALL && !k--)
			return &tl->threads[0].items[i];
	return NULL;
}

static void test_order(void)
{
	struct rig g;
	struct an_profile *p;
	struct an_timeline *tl;
	const struct an_tl_item *c;
	char why[256];

	rig_start(&g, 0, 0, 0, 0);
	/* in ticks: f1 [1000, 1400] { f2 [1100, 1200] { f3 [1100, 1150] }, a
	 * system call at 1240-1280, f3 [1300, 1350] }, f4 [1500, 1700] { f5
	 * [1600, 1700] closed by f4's exit }, f6 from 1800, open */
	sc_eng_enter(g.t, F(1), 0, 1000);
	sc_eng_enter(g.t, F(2), 0, 1100);
	sc_eng_enter(g.t, F(3), 0, 1100);
	sc_eng_exit(g.t, F(3), 1150);
	sc_eng_exit(g.t, F(2), 1200);
	sc_eng_tl_os(g.t, 620, 20, SC_OS_SYSCALL, 0);   /* ns: ticks 1240-1280 */
	sc_eng_enter(g.t, F(3), 0, 1300);
	sc_eng_exit(g.t, F(3), 1350);
	sc_eng_exit(g.t, F(1), 1400);
	sc_eng_enter(g.t, F(4), 0, 1500);
	sc_eng_enter(g.t, F(5), 0, 1600);
	sc_eng_exit(g.t, F(4), 1700);                    /* f5 closed by a repair */
	sc_eng_enter(g.t, F(6), 0, 1800);                /* open at the end */
	tl = rig_timeline(&g, &p, NULL);
	ok(tl && tl->nthreads == 1, "one thread's timeline");
	if (!tl)
		return;
	is_u64(tl->threads[0].calls, 7, "7 calls (5 returned, 1 closed by a repair, 1 open)");
	ok(an_timeline_check(tl, why, sizeof(why)) == 0, "an_timeline_check: %s", why);
	{
		static const char *want[] = { "f1", "f2", "f3", "f3", "f4", "f5", "f6" };
		static const uint64_t start[] = { 500, 550, 550, 650, 750, 800, 900 };
		static const uint64_t dur[] = { 200, 50, 25, 25, 100, 50, 0 };
		static const uint32_t depth[] = { 0, 1, 2, 1, 0, 1, 0 };
		int good = 1;

		for (size_t k = 0; k < 7; k++) {
			c = nth_call(tl, k);
			if (!c || strcmp(an_tl_name(tl, c->func), want[k]) || c->depth != depth[k] ||
			    c->start_ns + tl->t0_ns != start[k] || (k < 6 && c->dur_ns != dur[k])) {
				printf("# call %zu: %s start %llu dur %llu depth %u\n", k,
				       c ? an_tl_name(tl, c->func) : "-",
				       c ? (unsigned long long)(c->start_ns + tl->t0_ns) : 0ull,
				       c ? (unsigned long long)c->dur_ns : 0ull, c ? c->depth : 0);
				good = 0;
			}
		}
		ok(good, "calls in start order, outer first, exact starts, durations and depths");
	}
	c = nth_call(tl, 5);
	ok(c && (c->flags & AN_TL_REPAIRED), "the call a deeper exit closed is flagged repaired");
	c = nth_call(tl, 6);
	ok(c && (c->flags & AN_TL_OPEN) && c->start_ns + tl->t0_ns == 900, "the call still open is flagged open");
	{
		const struct an_tl_item *os = NULL;

		for (size_t i = 0; i < tl->threads[0].nitems; i++)
			if (tl->threads[0].items[i].kind == AN_TL_OS)
				os = &tl->threads[0].items[i];
		ok(os && os->start_ns + tl->t0_ns == 620 && os->dur_ns == 20 && os->depth == 1 &&
		   os->sysno == 0 && !strcmp(an_tl_syscall_name(os->sysno), "read"),
		   "the OS event: its time, inside f1 (depth 1), system call 0 is read");
	}
	an_timeline_free(tl);
	{
		struct an_tl_filter f = AN_TL_FILTER_ALL;

		f.max_depth = 1;
		f.min_ns = 40;
		tl = an_timeline_build(p, &f, &tl, why, sizeof(why)) ? NULL : tl;
		ok(tl && tl->threads[0].calls == 2, "view filter: depth < 1 and 40 ns or more: f1 and f4 (%llu)",
		   tl ? (unsigned long long)tl->threads[0].calls : 0ull);
		an_timeline_free(tl);
	}
	stream_same(p, "calls, an OS event, a repair, an open call");
	an_profile_free(p);
	free(g.buf);
}

static void test_many(void)
{
	struct rig g;
	struct an_profile *p;
	struct an_timeline *tl;
	uint64_t now = 2000;
	int good = 1;
	char why[256];

	/* 100,000 calls of f1 > f2: several 256 KiB chunks (even ticks: whole ns) */
	rig_start(&g, 0, 0, 0, 0);
	for (int i = 0; i < 100000; i++) {
		sc_eng_enter(g.t, F(1), 0, now);
		sc_eng_enter(g.t, F(2), 0, now + 10 + 2 * (i % 7));
		sc_eng_exit(g.t, F(2), now + 30 + 2 * (i % 5));
		sc_eng_exit(g.t, F(1), now + 40);
		now += 50 + 2 * (i % 3);
	}
	tl = rig_timeline(&g, &p, NULL);
	ok(tl && tl->threads[0].calls == 200000, "200,000 calls across chunks");
	now = 2000;
	for (int i = 0; tl && i < 100000 && good; i++) {
		const struct an_tl_item *a = &tl->threads[0].items[2 * i], *b = a + 1;

		good = a->func != b->func && a->depth == 0 && b->depth == 1 &&
		       (a->start_ns + tl->t0_ns) * 2 == now && a->dur_ns * 2 == 40 &&
		       (b->start_ns + tl->t0_ns) * 2 == now + 10 + 2 * (i % 7) &&
		       (int64_t)b->dur_ns * 2 == 20 + 2 * (i % 5) - 2 * (i % 7);
		if (!good)
			printf("# call %d\n", i);
		now += 50 + 2 * (i % 3);
	}
	ok(good, "each call's start and duration exact after the chunk boundaries");
	ok(tl && an_timeline_check(tl, why, sizeof(why)) == 0, "an_timeline_check");
	an_timeline_free(tl);
	stream_same_n(p, "200,000 calls across chunks", 1);
	an_profile_free(p);
	free(g.buf);

	/* the size limit: one chunk */
	rig_start(&g, SC_ENG_TL_CHUNK, 0, 0, 0);
	now = 2000;
	for (int i = 0; i < 100000; i++) {
		sc_eng_enter(g.t, F(1), 0, now);
		sc_eng_exit(g.t, F(1), now + 40);
		now += 50;
	}
	tl = rig_timeline(&g, &p, NULL);
	ok(tl && tl->threads[0].calls > 10000 && tl->threads[0].calls < 100000 &&
	   tl->threads[0].calls + tl->threads[0].dropped == 100000,
	   "a 256 KiB limit: %llu calls kept, %llu dropped, 100,000 in all",
	   tl ? (unsigned long long)tl->threads[0].calls : 0ull,
	   tl ? (unsigned long long)tl->threads[0].dropped : 0ull);
	an_timeline_free(tl);
	stream_same_n(p, "a 256 KiB limit", 1);
	an_profile_free(p);
	free(g.buf);
}

static void test_long(void)
{
	struct rig g;
	struct an_profile *p;
	struct an_timeline *tl;
	const struct an_tl_item *c;

	/* f1 lasts 5 s (10^10 half-ns ticks: more than 32 bits of ns), f2
	 * inside it, a system call inside f2 */
	rig_start(&g, 0, 0, 0, 0);
	sc_eng_enter(g.t, F(1), 0, 1000);
	sc_eng_enter(g.t, F(2), 0, 2000);
	sc_eng_tl_os(g.t, 1100, 50, SC_OS_SYSCALL, 1);
	sc_eng_exit(g.t, F(2), 3000);
	sc_eng_exit(g.t, F(1), 1000 + 10000000000ull);
	tl = rig_timeline(&g, &p, NULL);
	c = tl ? nth_call(tl, 0) : NULL;
	ok(c && c->dur_ns == 5000000000ull, "a 5 s call's duration exact");
	an_timeline_free(tl);
	stream_same(p, "a 5 s call");
	an_profile_free(p);
	free(g.buf);
}

/* The runtime's unit (4 ticks): every time rounded down, calls still nested. */
static void test_units(void)
{
	static const uint64_t start[4] = { 500, 500, 506, 600 }, dur[4] = { 6, 4, 44, 0 };
	struct rig g;
	struct an_profile *p;
	struct an_timeline *tl;
	int good;
	char why[256];

	rig_start(&g, 0, 0, 0, 0);
	sc_eng_tl_unit(g.t, SC_ENG_TL_SHIFT);
	sc_eng_enter(g.t, F(1), 0, 1001);      /* ticks are half ns: a unit is 2 ns */
	sc_eng_enter(g.t, F(2), 0, 1003);      /* in f1's first unit */
	sc_eng_exit(g.t, F(2), 1010);
	sc_eng_exit(g.t, F(1), 1013);
	sc_eng_enter(g.t, F(3), 0, 1013);
	sc_eng_exit(g.t, F(3), 1100);
	sc_eng_enter(g.t, F(4), 0, 1200);      /* open at the end */
	tl = rig_timeline(&g, &p, NULL);
	good = tl && tl->threads[0].calls == 4;
	for (size_t k = 0; good && k < 4; k++) {
		const struct an_tl_item *c = nth_call(tl, k);

		good = c && c->start_ns + tl->t0_ns == start[k] && c->dur_ns == dur[k] &&
		       c->depth == (k == 1);
		if (!good)
			printf("# call %zu: %llu + %llu\n", k, c ? (unsigned long long)(c->start_ns + tl->t0_ns) : 0ull,
			       c ? (unsigned long long)c->dur_ns : 0ull);
	}
	ok(good, "units of 4 ticks: starts and ends rounded down (500+6, 500+4 inside it, 506+44, open 600)");
	ok(tl && nth_call(tl, 3) && (nth_call(tl, 3)->flags & AN_TL_OPEN), "the open call in the same units");
	ok(tl && an_timeline_check(tl, why, sizeof(why)) == 0, "an_timeline_check: %s", tl ? why : "");
	an_timeline_free(tl);
	an_profile_free(p);
	free(g.buf);
}

/*
 * A real machine's conversion (CLOCK_MONOTONIC ns of 23 hours' uptime,
 * 1.915 ns a tick): a call starting on the tick its sibling ended on, or
 * its caller started on, 4,000 times each.  Each time is converted from
 * its tick alone: converting a call's end and taking its duration off
 * gave a start 1 ns before the sibling's end in about 1 case of 800 (the
 * doubles round differently), which replay showed as a call overlapping
 * the one before it.
 */
static void test_ties(void)
{
	struct sc_tick_conv conv = { 5120197164568ull, 84627707715863ull, 1.9153216497822312 };
	uint64_t t = 5120657089406ull, *ends = NULL, *starts = NULL, bad = 0, calls = 0;
	size_t nend = 0;
	struct rig g;
	struct an_profile *p;
	struct an_timeline *tl;

	rig_start(&g, 0, 0, 0, 0);
	for (unsigned i = 0; i < 4000; i++) {
		uint64_t a = 1 + (i * 7) % 300, b = 1 + (i * 13) % 200;

		sc_eng_enter(g.t, F(1), 0, t);             /* f1, then f2 from its end */
		sc_eng_exit(g.t, F(1), t + a);
		sc_eng_enter(g.t, F(2), 0, t + a);
		sc_eng_exit(g.t, F(2), t + a + b);
		sc_eng_enter(g.t, F(3), 0, t + a + b + 5);  /* f3 > f4, both at one tick */
		sc_eng_enter(g.t, F(4), 0, t + a + b + 5);
		sc_eng_exit(g.t, F(4), t + 2 * a + b + 5);
		sc_eng_exit(g.t, F(3), t + 2 * a + b + 5);
		t += 1000;
	}
	tl = rig_timeline_conv(&g, &p, NULL, conv);
	for (size_t k = 0; tl && k < tl->threads[0].nitems; k++) {
		const struct an_tl_item *c = &tl->threads[0].items[k];

		/* a call is over at its end (an empty one holds what starts
		 * with it, as tl_check.py has it) */
		while (nend && ends[nend - 1] <= c->start_ns && !(ends[nend - 1] == c->start_ns && starts[nend - 1] == c->start_ns))
			nend--;
		/* a call inside the one around it: ends no later, deeper */
		if (nend && c->start_ns + c->dur_ns > ends[nend - 1])
			bad++;
		ends = xrealloc(ends, (nend + 1) * sizeof(*ends));
		starts = xrealloc(starts, (nend + 1) * sizeof(*starts));
		starts[nend] = c->start_ns;
		ends[nend++] = c->start_ns + c->dur_ns;
		calls++;
	}
	ok(tl && calls == 16000 && bad == 0, "calls starting on a tick another ends or starts on: %llu of %llu nest",
	   (unsigned long long)(calls - bad), (unsigned long long)calls);
	free(ends);
	free(starts);
	an_timeline_free(tl);
	an_profile_free(p);
	free(g.buf);
}

static int match_f2(struct sc_eng_arena *a, uint64_t func)
{
	(void)a;
	return func == F(2);
}

static void test_filters(void)
{
	struct rig g;
	struct an_profile *p;
	struct an_timeline *tl;

	/* min 100 ticks: f1 (300) kept, f2 (50) not */
	rig_start(&g, 0, 100, 0, 0);
	sc_eng_enter(g.t, F(1), 0, 1000);
	sc_eng_enter(g.t, F(2), 0, 1100);
	sc_eng_exit(g.t, F(2), 1150);
	sc_eng_exit(g.t, F(1), 1300);
	tl = rig_timeline(&g, &p, NULL);
	ok(tl && tl->threads[0].calls == 1 && tl->threads[0].filtered == 1 &&
	   !strcmp(an_tl_name(tl, tl->threads[0].items[0].func), "f1"), "min-time: the short call filtered, counted");
	an_timeline_free(tl);
	an_profile_free(p);
	free(g.buf);

	/* depth 1: only the outermost calls */
	rig_start(&g, 0, 0, 1, 0);
	sc_eng_enter(g.t, F(1), 0, 1000);
	sc_eng_enter(g.t, F(2), 0, 1100);
	sc_eng_enter(g.t, F(3), 0, 1110);
	sc_eng_exit(g.t, F(3), 1120);
	sc_eng_exit(g.t, F(2), 1150);
	sc_eng_exit(g.t, F(1), 1300);
	tl = rig_timeline(&g, &p, NULL);
	ok(tl && tl->threads[0].calls == 1 && tl->threads[0].filtered == 2, "depth 1: f1 only, 2 filtered");
	an_timeline_free(tl);
	an_profile_free(p);
	free(g.buf);

	/* only f2: f2 and what it calls */
	rig_start(&g, 0, 0, 0, 1);
	g.a.tl_match = match_f2;
	sc_eng_enter(g.t, F(1), 0, 1000);
	sc_eng_enter(g.t, F(2), 0, 1100);
	sc_eng_enter(g.t, F(3), 0, 1110);
	sc_eng_exit(g.t, F(3), 1120);
	sc_eng_exit(g.t, F(2), 1150);
	sc_eng_enter(g.t, F(3), 0, 1200);
	sc_eng_exit(g.t, F(3), 1210);
	sc_eng_exit(g.t, F(1), 1300);
	tl = rig_timeline(&g, &p, NULL);
	ok(tl && tl->threads[0].calls == 2 && tl->threads[0].filtered == 2 &&
	   !strcmp(an_tl_name(tl, tl->threads[0].items[0].func), "f2") &&
	   !strcmp(an_tl_name(tl, tl->threads[0].items[1].func), "f3"),
	   "only f2: f2 and the f3 it calls; f1 and the other f3 filtered");
	an_timeline_free(tl);
	an_profile_free(p);
	free(g.buf);
}

static void test_damage(void)
{
	struct an_profile *p = an_profile_new(&fake);
	struct an_timeline *tl = NULL;
	struct sc_rec_cct_node root = { .proc_id = 1, .tid = 9, .id = 0, .parent = UINT32_MAX };
	struct sc_rec_cct_node n1 = { .proc_id = 1, .tid = 9, .id = 1, .parent = 0, .func = F(1), .calls = 2 };
	struct {
		struct sc_rec_timeline h;
		uint8_t d[16];
	} r = { { .proc_id = 1, .tid = 9, .base_ns = 100, .nitems = 3 },
		/* a good call, one of node 7 (none), then more bytes */
		{ 0x28, 0x05, 0x04, 0x28, 0x05, 0x1c, 0x28, 0x05, 0x04 } };
	struct sc_record rec;
	char err[256];

	ok(an_timeline_build(p, NULL, &tl, err, sizeof(err)) == -ENOENT && strstr(err, "--timeline"),
	   "no timeline: -ENOENT, says to record with --timeline");
	rec = (struct sc_record){ SC_REC_CCT_NODE, sizeof(root), &root };
	an_profile_add(p, &rec);
	rec = (struct sc_record){ SC_REC_CCT_NODE, sizeof(n1), &n1 };
	an_profile_add(p, &rec);
	rec = (struct sc_record){ SC_REC_TIMELINE, sizeof(r.h) + 9, &r };
	an_profile_add(p, &rec);
	r.h.nitems = SC_TL_ALL;
	r.d[0] = 0x83;                       /* a varint cut by the record's end */
	rec = (struct sc_record){ SC_REC_TIMELINE, sizeof(r.h) + 1, &r };
	an_profile_add(p, &rec);
	ok(an_timeline_build(p, NULL, &tl, err, sizeof(err)) == 0 && tl->threads[0].calls == 1 &&
	   tl->damaged_items == 3, "a bad node id and a cut varint end their records: 1 call kept, %llu damaged",
	   tl ? (unsigned long long)tl->damaged_items : 0ull);
	an_timeline_free(tl);
	{
		const char *why = stream_differs(p, NULL, 0);

		if (!*why)
			why = stream_differs(p, NULL, 1);
		ok(!*why, "damaged records: the stream the same%s%s", *why ? ": " : "", why);
	}
	an_profile_free(p);
}

static void test_varint(void)
{
	uint8_t a[32];
	int good = 1;

	for (int k = 0; k < 64 && good; k++)
		for (uint64_t j = 0; j < 300 && good; j++) {
			uint64_t v = j < 130 ? j : (0x9e3779b97f4a7c15ull * j) >> k, w;
			uint8_t *e = sc_varint_put(a, v);
			const uint8_t *q = a, *q2 = a;

			good = !sc_varint_get(&q, e, &w) && w == v && q == e &&
			       (e - a == 1 || sc_varint_get(&q2, e - 1, &w) < 0);
		}
	ok(good, "varints read back; one cut short is refused");
	good = 1;
	for (int k = 0; k < 64 && good; k++)
		for (uint64_t j = 0; j < 300 && good; j++) {
			uint64_t v = j < 130 ? j : j < 200 ? 0x3f80 + j : (0x9e3779b97f4a7c15ull * j) >> k, w;
			uint8_t *e = sc_eng_tl_put(a, v), *e2 = sc_varint_put(a + 16, v);
			const uint8_t *q = a;

			good = !sc_varint_get(&q, e, &w) && w == v && q == e && e - a == e2 - (a + 16);
		}
	ok(good, "the probe's varint store writes the same bytes");
	good = sc_unzigzag(sc_zigzag(-5)) == -5 && sc_zigzag(-1) == 1 && sc_zigzag(1) == 2;
	ok(good, "zigzag");
}

/* the engine's copies into the chunk: counted, and copied by hand for a
 * write that fails (the engine then copies itself) */
static int writes, write_fails;

static int rig_write(struct sc_eng_arena *a, uint64_t off, const void *src, uint64_t len)
{
	writes++;
	if (write_fails)
		return -1;
	memcpy(a->base + off, src, len);
	return 0;
}

/* n calls of f1 > f2 from now, times as test_many's */
static uint64_t rig_calls(struct rig *g, int n, uint64_t now)
{
	for (int i = 0; i < n; i++) {
		sc_eng_enter(g->t, F(1), 0, now);
		sc_eng_enter(g->t, F(2), 0, now + 10 + 2 * (i % 7));
		sc_eng_exit(g->t, F(2), now + 30 + 2 * (i % 5));
		sc_eng_exit(g->t, F(1), now + 40);
		now += 50 + 2 * (i % 3);
	}
	return now;
}

/* every call of rig_calls(n) from 2000, exact, in order, nothing damaged */
static int rig_exact(const struct an_timeline *tl, int n)
{
	uint64_t now = 2000;

	if (!tl || tl->nthreads != 1 || tl->threads[0].calls != 2 * (uint64_t)n || tl->damaged_items)
		return 0;
	for (int i = 0; i < n; i++) {
		const struct an_tl_item *a = &tl->threads[0].items[2 * i], *b = a + 1;

		if (a->depth != 0 || b->depth != 1 || (a->start_ns + tl->t0_ns) * 2 != now || a->dur_ns * 2 != 40 ||
		    (b->start_ns + tl->t0_ns) * 2 != now + 10 + 2 * (i % 7) ||
		    (int64_t)b->dur_ns * 2 != 20 + 2 * (i % 5) - 2 * (i % 7))
			return 0;
		now += 50 + 2 * (i % 3);
	}
	return 1;
}

static void test_staging(void)
{
	struct rig g;
	struct an_profile *p;
	struct an_timeline *tl;
	struct sc_eng_more *m;
	struct sc_eng_tl_chunk *c;
	uint8_t *stage;
	uint64_t pending;

	/* items staged, then copied through a->write at each full buffer */
	rig_start(&g, 0, 0, 0, 0);
	g.a.write = rig_write;
	writes = write_fails = 0;
	rig_calls(&g, 100000, 2000);
	tl = rig_timeline(&g, &p, NULL);
	ok(rig_exact(tl, 100000) && writes >= 10,
	   "200,000 calls staged, copied by the arena's write (%d copies), exact", writes);
	an_timeline_free(tl);
	an_profile_free(p);
	free(g.buf);

	/* a write that fails: the engine copies */
	rig_start(&g, 0, 0, 0, 0);
	g.a.write = rig_write;
	writes = 0;
	write_fails = 1;
	rig_calls(&g, 100000, 2000);
	tl = rig_timeline(&g, &p, NULL);
	ok(rig_exact(tl, 100000) && writes > 0, "a failing write: the engine copies, exact (%d tries)", writes);
	an_timeline_free(tl);
	an_profile_free(p);
	free(g.buf);

	/* a thread that died in the middle of a copy: its items are read
	 * once, from the staging buffer or from the chunk */
	for (int when = 0; when < 3; when++) {
		rig_start(&g, 0, 0, 0, 0);
		rig_calls(&g, 20000, 2000);         /* some copied, some staged */
		m = sc_eng_more_of(g.t);
		c = (struct sc_eng_tl_chunk *)(g.t->base + m->tl_chunk_off);
		stage = g.t->base + c->stage_off;
		pending = (uint64_t)(g.t->tl_cur - stage);
		c->flush_to = c->len + pending;
		if (when >= 1)                      /* copied, not counted */
			memcpy((uint8_t *)(c + 1) + c->len, stage, pending);
		if (when >= 2)                      /* counted, tl_cur not moved back */
			c->len += pending;
		tl = rig_timeline(&g, &p, NULL);
		ok(pending > 0 && c->len < SC_ENG_TL_CHUNK && rig_exact(tl, 20000),
		   "killed in a copy of %llu staged bytes (%s): every call once",
		   (unsigned long long)pending,
		   when == 0 ? "before it" : when == 1 ? "copied, not counted" : "counted, staging not emptied");
		an_timeline_free(tl);
		an_profile_free(p);
		free(g.buf);
	}
}

int main(void)
{
	snprintf(path, sizeof(path), "/tmp/sc-test-timeline.%d.data", (int)getpid());
	test_varint();
	test_order();
	test_many();
	test_staging();
	test_units();
	test_ties();
	test_filters();
	test_long();
	test_damage();
	unlink(path);
	return tap_done();
}
