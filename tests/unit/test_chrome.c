/*
 * Unit tests of the Chrome trace export (src/output/chrome.c) on timelines
 * built from hand-made records (SC_REC_TIMELINE items coded as scdata.h
 * says):
 *  - instrumentation: two threads; calls nested, an open call, a library
 *    call, a system call inside a call, a context switch that crosses its
 *    call's end (put on a second track of the thread), an instrumented
 *    sample: every event's exact line, times to the nanosecond;
 *  - sampling: instant events on the thread's track, the stackFrames
 *    dictionary (frames shared between stacks) and the top-level samples;
 *  - hostile names (quotes, backslashes, control bytes, invalid UTF-8) stay
 *    valid JSON (json_check.h);
 *  - a recording without a timeline: -ENODATA and a message naming
 *    --timeline.
 */
#include "analysis/analysis.h"
#include "format/varint.h"
#include "output/export.h"
#include "json_check.h"
#include "tap.h"
#include "util/util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* ---- a fake resolver: function i at 0x1000 * (i + 1) -------------------- */

static const char *names[] = {
	"main",
	"work",
	"leaf",
	"memcpy",
	"odd\"name\\with\nnewline\x01" "ctl\xff\xfe bad \xc3\xa9t\xc3\xa9",
};
#define NNAMES (int)(sizeof(names) / sizeof(names[0]))

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
		.module = i == 3 ? "/lib/x86_64-linux-gnu/libc.so.6" : "/opt/app/bin/app",
		.file = "/src/app.c", .line = 1, .module_offset = a };
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

static void add_head(struct an_profile *p, enum sc_method m)
{
	struct {
		struct sc_rec_session s;
		char argv[8];
	} s = { { .method = m, .frequency_hz = m == SC_METHOD_SAMPLE ? 999 : 0,
		  .os_requested = SC_OS_ALL, .argc = 1, .target_pid = 4242 }, "./app" };
	struct sc_rec_session_end e = { .duration_ns = 1000000, .os_observed = SC_OS_ALL };
	struct {
		struct sc_rec_process pr;
		char exe[24];
	} pr = { { .proc_id = 1, .pid = 4242, .parent_proc_id = UINT32_MAX }, "/opt/app/bin/app" };
	struct {
		struct sc_rec_thread t;
		char name[16];
	} th = { { .proc_id = 1, .tid = 4242 }, "app" };

	add_rec(p, SC_REC_SESSION, &s, sizeof(s));
	add_rec(p, SC_REC_SESSION_END, &e, sizeof(e));
	add_rec(p, SC_REC_PROCESS, &pr, sizeof(pr));
	add_rec(p, SC_REC_THREAD, &th, sizeof(th));
	th.t.tid = 4243;
	memcpy(th.name, "w\"k\xff", 5);
	add_rec(p, SC_REC_THREAD, &th, sizeof(th));
}

/* ---- timeline items, coded --------------------------------------------- */

struct coder {
	struct sc_rec_timeline h;
	uint8_t data[512];
	uint8_t *q;
	uint64_t t;               /* previous item's time */
};

static void coder_start(struct coder *c, uint32_t tid, uint64_t base)
{
	memset(c, 0, sizeof(*c));
	c->h.proc_id = 1;
	c->h.tid = tid;
	c->h.base_ns = base;
	c->q = c->data;
	c->t = base;
}

static void item_head(struct coder *c, uint64_t t, unsigned kind)
{
	c->q = sc_varint_put(c->q, sc_zigzag((int64_t)(t - c->t)) << 2 | kind);
	c->t = t;
	c->h.nitems++;
}

static void tl_call(struct coder *c, uint64_t start, uint64_t dur, uint32_t node, unsigned flags)
{
	item_head(c, start + dur, SC_TL_CALL);
	c->q = sc_varint_put(c->q, dur);
	c->q = sc_varint_put(c->q, (uint64_t)node << 2 | flags);
}

static void tl_os(struct coder *c, uint64_t start, uint64_t dur, unsigned cat, int sysno)
{
	item_head(c, start, SC_TL_OS);
	c->q = sc_varint_put(c->q, dur);
	c->q = sc_varint_put(c->q, cat | (uint64_t)(sysno + 1) << 2);
}

static void tl_sample(struct coder *c, uint64_t t, uint64_t stack)
{
	item_head(c, t, SC_TL_SAMPLE);
	c->q = sc_varint_put(c->q, stack);
}

static void coder_add(struct an_profile *p, struct coder *c)
{
	size_t len = (size_t)(c->q - c->data);
	uint8_t *rec = xmalloc(sizeof(c->h) + len);

	memcpy(rec, &c->h, sizeof(c->h));
	memcpy(rec + sizeof(c->h), c->data, len);
	add_rec(p, SC_REC_TIMELINE, rec, sizeof(c->h) + len);
	free(rec);
}

/*
 * Thread 4242: main (node 1) [0, 10us) open; work (2) [1, 5us) with a read
 * [2, 2.5us) in it and a switch [4.5, 5.5us) across its end; memcpy (3, a
 * library call) [7, 7.5us); a sample at 8us on leaf (4, under work... here
 * under main).  Thread 4243: the odd name (5) [20, 20.001us).
 */
static struct an_profile *instr_profile(void)
{
	struct an_profile *p = an_profile_new(&fake);
	static const struct { uint32_t id, parent; int fn; } nodes[] = {
		{ 1, 0, 0 }, { 2, 1, 1 }, { 3, 1, 3 }, { 4, 1, 2 },
	};
	struct {
		struct sc_rec_libcall l;
		char name[8];
	} lc = { { .proc_id = 1, .addr = F(3) }, "memcpy" };
	const uint64_t base = 5000000000ULL;
	struct coder c;

	add_head(p, SC_METHOD_INSTRUMENT);
	add_rec(p, SC_REC_LIBCALL, &lc, sizeof(lc));
	for (uint32_t tid = 4242; tid <= 4243; tid++) {
		struct sc_rec_cct_node root = { .proc_id = 1, .tid = tid, .parent = UINT32_MAX };

		add_rec(p, SC_REC_CCT_NODE, &root, sizeof(root));
	}
	for (size_t i = 0; i < ARRAY_SIZE(nodes); i++) {
		struct sc_rec_cct_node n = { .proc_id = 1, .tid = 4242, .id = nodes[i].id,
					     .parent = nodes[i].parent, .func = F(nodes[i].fn),
					     .calls = 1 };

		add_rec(p, SC_REC_CCT_NODE, &n, sizeof(n));
	}
	add_rec(p, SC_REC_CCT_NODE, &(struct sc_rec_cct_node){ .proc_id = 1, .tid = 4243, .id = 1,
		.parent = 0, .func = F(4), .calls = 1 }, sizeof(struct sc_rec_cct_node));

	coder_start(&c, 4242, base);
	tl_os(&c, base + 2000, 500, SC_OS_SYSCALL, 0);          /* read */
	tl_os(&c, base + 4500, 1000, SC_OS_SWITCH, -1);
	tl_call(&c, base + 1000, 4000, 2, 0);                    /* work */
	coder_add(p, &c);
	coder_start(&c, 4242, base + 5000);                       /* a second record */
	tl_call(&c, base + 7000, 500, 3, 0);                     /* memcpy */
	tl_sample(&c, base + 8000, 4);
	tl_call(&c, base, 10000, 1, SC_TL_F_OPEN);               /* main */
	coder_add(p, &c);
	coder_start(&c, 4243, base + 20000);
	tl_call(&c, base + 20000, 1, 1, SC_TL_F_REPAIRED);
	tl_os(&c, base + 21000, 7, SC_OS_FAULT, -1);
	tl_os(&c, base + 22000, 8, SC_OS_SYSCALL, 100000);       /* no name known */
	coder_add(p, &c);
	return p;
}

/* Sampling: stacks main>work>leaf, main>work, main>leaf at 1, 2, 3 ms. */
static struct an_profile *sample_profile(void)
{
	struct an_profile *p = an_profile_new(&fake);
	static const int stacks[][4] = { { 2, 1, 0, -1 }, { 1, 0, -1, -1 }, { 2, 0, -1, -1 } };
	const uint64_t base = 7000000000ULL;
	struct coder c;

	add_head(p, SC_METHOD_SAMPLE);
	for (int s = 0; s < 3; s++) {
		struct {
			struct sc_rec_stack h;
			uint64_t ip[4];
		} st = { { (uint32_t)s + 1, 0, SC_STACK_ROOT }, { 0 } };
		struct sc_rec_samples sm = { 1, 4242, (uint32_t)s + 1, 0, 1 };

		for (int k = 0; k < 4 && stacks[s][k] >= 0; k++)
			st.ip[st.h.nframes++] = F(stacks[s][k]) + (k ? 0x11 : 0x10);
		add_rec(p, SC_REC_STACK, &st, sizeof(st.h) + st.h.nframes * sizeof(uint64_t));
		add_rec(p, SC_REC_SAMPLES, &sm, sizeof(sm));
	}
	coder_start(&c, 4242, base);
	for (int s = 0; s < 3; s++)
		tl_sample(&c, base + 1000000 * (uint64_t)(s + 1), (uint64_t)s + 1);
	coder_add(p, &c);
	return p;
}

static char *export(struct an_profile *p, int *ret, char *err, size_t errlen)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct exp_options o = { 0 };

	*ret = exp_chrome.write(f, p, &o, err, errlen);
	fclose(f);
	return buf;
}

static void has_line(const char *out, const char *line, const char *what)
{
	char *pat = xasprintf("\n%s,\n", line), *pat_last = xasprintf("\n%s\n", line);
	bool found = strstr(out, pat) || strstr(out, pat_last);

	if (!ok(found, "%s", what))
		tap_diag("missing line: %s", line);
	free(pat);
	free(pat_last);
}

static int count(const char *s, const char *pat)
{
	int n = 0;

	for (const char *q = s; (q = strstr(q, pat)); q++)
		n++;
	return n;
}

static void test_instr(void)
{
	struct an_profile *p = instr_profile();
	char err[256] = "";
	int ret;
	char *out = export(p, &ret, err, sizeof(err));

	is_u64(ret, 0, "instrumentation: exported (%s)", err);
	ok(json_valid(out), "instrumentation: valid JSON (hostile names escaped)");
	ok(!strncmp(out, "{\"otherData\":{\"generator\":\"stackclock\",\"method\":\"instrumentation\"", 64),
	   "otherData first: generator and method");
	has_line(out, "{\"ph\":\"M\",\"ts\":0,\"pid\":4242,\"tid\":4242,\"name\":\"process_name\",\"args\":{\"name\":\"app\"}}",
		 "process name: the executable's file name");
	has_line(out, "{\"ph\":\"M\",\"ts\":0,\"pid\":4242,\"tid\":4242,\"name\":\"thread_name\",\"args\":{\"name\":\"app\"}}",
		 "thread name of the main thread");
	has_line(out, "{\"ph\":\"M\",\"ts\":0,\"pid\":4242,\"tid\":4243,\"name\":\"thread_name\",\"args\":{\"name\":\"w\\\"k\\ufffd\"}}",
		 "thread name escaped, invalid UTF-8 as U+FFFD");
	has_line(out, "{\"ph\":\"X\",\"ts\":0.000,\"dur\":10.000,\"pid\":4242,\"tid\":4242,\"name\":\"main\",\"cat\":\"call\",\"args\":{\"module\":\"app\",\"open\":true}}",
		 "open call main at 0, 10 us, flagged open");
	has_line(out, "{\"ph\":\"X\",\"ts\":1.000,\"dur\":4.000,\"pid\":4242,\"tid\":4242,\"name\":\"work\",\"cat\":\"call\",\"args\":{\"module\":\"app\"}}",
		 "work at 1 us for 4 us");
	has_line(out, "{\"ph\":\"X\",\"ts\":2.000,\"dur\":0.500,\"pid\":4242,\"tid\":4242,\"name\":\"syscall read\",\"cat\":\"os\",\"args\":{\"sysno\":0}}",
		 "system call read inside work, on the thread's track");
	has_line(out, "{\"ph\":\"M\",\"ts\":0,\"pid\":4242,\"tid\":100004242,\"name\":\"thread_name\",\"args\":{\"name\":\"app (track 2)\"}}",
		 "second track of the thread named");
	has_line(out, "{\"ph\":\"X\",\"ts\":4.500,\"dur\":1.000,\"pid\":4242,\"tid\":100004242,\"name\":\"switch\",\"cat\":\"os\"}",
		 "the switch across work's end on the second track");
	has_line(out, "{\"ph\":\"X\",\"ts\":7.000,\"dur\":0.500,\"pid\":4242,\"tid\":4242,\"name\":\"memcpy\",\"cat\":\"libcall\",\"args\":{\"module\":\"libc.so.6\"}}",
		 "library call: cat libcall, its module");
	has_line(out, "{\"ph\":\"i\",\"ts\":8.000,\"pid\":4242,\"tid\":4242,\"s\":\"t\",\"name\":\"leaf\",\"cat\":\"sample\",\"sf\":2}",
		 "instrumented sample: an instant event on the thread's track, its stack frame");
	ok(strstr(out, "\"stackFrames\":{\"1\":{\"name\":\"main\",\"category\":\"app\"},\n\"2\":{\"name\":\"leaf\",\"category\":\"app\",\"parent\":1}}") != NULL,
	   "stackFrames: leaf under main");
	ok(!strstr(out, "\"samples\""), "instrumentation: no top-level samples (speedscope would drop the calls)");
	has_line(out, "{\"ph\":\"X\",\"ts\":20.000,\"dur\":0.001,\"pid\":4242,\"tid\":4243,\"name\":\"odd\\\"name\\\\with\\nnewline\\u0001ctl\\ufffd\\ufffd bad \xc3\xa9t\xc3\xa9\",\"cat\":\"call\",\"args\":{\"module\":\"app\",\"repaired\":true}}",
		 "odd name escaped; a repaired call flagged; ns precision");
	has_line(out, "{\"ph\":\"X\",\"ts\":21.000,\"dur\":0.007,\"pid\":4242,\"tid\":4243,\"name\":\"fault\",\"cat\":\"os\"}",
		 "page fault");
	has_line(out, "{\"ph\":\"X\",\"ts\":22.000,\"dur\":0.008,\"pid\":4242,\"tid\":4243,\"name\":\"syscall 100000\",\"cat\":\"os\",\"args\":{\"sysno\":100000}}",
		 "a system call without a known name: its number");
	is_u64(count(out, "\"ph\":\"X\""), 8, "8 complete events: 4 calls, 4 OS events");
	is_u64(count(out, "\"process_name\""), 1, "one process name");
	free(out);
	an_profile_free(p);
}

static void test_sample(void)
{
	struct an_profile *p = sample_profile();
	char err[256] = "";
	int ret;
	char *out = export(p, &ret, err, sizeof(err));

	is_u64(ret, 0, "sampling: exported (%s)", err);
	ok(json_valid(out), "sampling: valid JSON");
	has_line(out, "{\"ph\":\"i\",\"ts\":0.000,\"pid\":4242,\"tid\":4242,\"s\":\"t\",\"name\":\"leaf\",\"cat\":\"sample\",\"sf\":3}",
		 "first sample: leaf, frame main>work>leaf");
	has_line(out, "{\"ph\":\"i\",\"ts\":1000.000,\"pid\":4242,\"tid\":4242,\"s\":\"t\",\"name\":\"work\",\"cat\":\"sample\",\"sf\":2}",
		 "second sample 1 ms later: work, frame main>work (shared)");
	has_line(out, "{\"ph\":\"i\",\"ts\":2000.000,\"pid\":4242,\"tid\":4242,\"s\":\"t\",\"name\":\"leaf\",\"cat\":\"sample\",\"sf\":4}",
		 "third sample: leaf directly under main, a frame of its own");
	ok(strstr(out, "\"stackFrames\":{\"1\":{\"name\":\"main\",\"category\":\"app\"},\n"
		       "\"2\":{\"name\":\"work\",\"category\":\"app\",\"parent\":1},\n"
		       "\"3\":{\"name\":\"leaf\",\"category\":\"app\",\"parent\":2},\n"
		       "\"4\":{\"name\":\"leaf\",\"category\":\"app\",\"parent\":1}}") != NULL,
	   "stackFrames: 4 frames, shared prefixes once");
	ok(strstr(out, "\"samples\":[\n{\"pid\":4242,\"tid\":4242,\"ts\":0.000,\"sf\":3,\"weight\":1,\"name\":\"cpu-clock\"},\n"
		       "{\"pid\":4242,\"tid\":4242,\"ts\":1000.000,\"sf\":2,\"weight\":1,\"name\":\"cpu-clock\"},\n"
		       "{\"pid\":4242,\"tid\":4242,\"ts\":2000.000,\"sf\":4,\"weight\":1,\"name\":\"cpu-clock\"}]}") != NULL,
	   "top-level samples, in time order, with their frames");
	free(out);
	an_profile_free(p);
}

static void test_no_timeline(void)
{
	struct an_profile *p = an_profile_new(&fake);
	char err[256] = "";
	int ret;
	char *out;

	add_head(p, SC_METHOD_INSTRUMENT);
	out = export(p, &ret, err, sizeof(err));
	is_u64(-ret, ENODATA, "no timeline: -ENODATA");
	ok(strstr(err, "--timeline") != NULL, "... the message says to record with --timeline (%s)", err);
	ok(!out || !*out, "... nothing written");
	free(out);
	an_profile_free(p);
}

int main(void)
{
	test_instr();
	test_sample();
	test_no_timeline();
	return tap_done();
}
