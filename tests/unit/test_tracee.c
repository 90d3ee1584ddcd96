/*
 * test_tracee — the pure parts of src/record/tracee.c, on made-up inputs
 * (the ptrace parts run in tests/e2e/t800_tracee.sh): the EPERM messages
 * for each cause, including the Yama scopes the suite cannot set on the
 * machine; the range search with unsorted and overlapping ranges; which
 * registers mean "a system call to restart"; wait statuses.
 * The file is included, as uftrace keeps unit tests beside static code.
 */
#include "record/tracee.c"

#include "tap.h"

static int has(const char *msg, const char *part)
{
	return strstr(msg, part) != NULL;
}

static void test_eperm(void)
{
	char m[512];
	eperm_message(10, 77, "gdb", 0, 0, 1, m, sizeof(m));
	tap_ok(has(m, "already traced by process 77 (gdb)") && has(m, "detach"), "traced: %s", m);
	eperm_message(10, 0, "", 1000, 1001, 0, m, sizeof(m));
	tap_ok(has(m, "another user (uid 1000, you are 1001)") && has(m, "run as that user or as root"),
	       "other user: %s", m);
	eperm_message(10, 0, "", 1000, 1000, 1, m, sizeof(m));
	tap_ok(has(m, "ptrace_scope is 1") && has(m, "sysctl kernel.yama.ptrace_scope=0"), "scope 1: %s", m);
	eperm_message(10, 0, "", 1000, 1000, 2, m, sizeof(m));
	tap_ok(has(m, "ptrace_scope is 2") && has(m, "run as root"), "scope 2: %s", m);
	eperm_message(10, 0, "", 0, 0, 3, m, sizeof(m));
	tap_ok(has(m, "ptrace_scope is 3") && has(m, "reboot"), "scope 3: %s", m);
	eperm_message(10, 0, "", 1000, 1000, -1, m, sizeof(m));
	tap_ok(has(m, "not permitted") && has(m, "run as root") && !strchr(m, '\n'), "other refusal: %s", m);
	char small[16];
	eperm_message(10, 77, "gdb", 0, 0, 1, small, sizeof(small));
	tap_ok(strlen(small) == sizeof(small) - 1, "a short buffer is cut, not overrun (%zu)", strlen(small));
}

static void test_ranges(void)
{
	struct sc_range r[] = { { 500, 510 }, { 100, 105 }, { 100, 300 }, { 120, 130 }, { 700, 701 } };
	size_t n = sizeof(r) / sizeof(r[0]);
	uint64_t maxhi[5];
	qsort(r, n, sizeof(r[0]), range_cmp);
	for (size_t i = 0; i < n; i++)
		maxhi[i] = i && maxhi[i - 1] > r[i].hi ? maxhi[i - 1] : r[i].hi;
	static const struct { uint64_t ip; bool in; } cases[] = {
		{ 99, false }, { 100, true }, { 104, true }, { 105, true },   /* inside [100, 300) */
		{ 135, true }, { 299, true }, { 300, false }, { 499, false }, { 500, true },
		{ 509, true }, { 510, false }, { 700, true }, { 701, false }, { 0, false },
		{ UINT64_MAX, false },
	};
	int bad = 0;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		if (in_ranges(r, maxhi, n, cases[i].ip) != cases[i].in) {
			bad++;
			printf("# ip %llu: %d\n", (unsigned long long)cases[i].ip, !cases[i].in);
		}
	tap_ok(bad == 0, "in_ranges: 15 addresses against 5 unsorted, overlapping ranges (%d wrong)", bad);

	/* 100,000 ranges: every start inside, every end outside */
	enum { N = 100000 };
	struct sc_range *big = malloc(N * sizeof(*big));
	uint64_t *mh = malloc(N * sizeof(*mh));
	for (size_t i = 0; i < N; i++)
		big[i] = (struct sc_range){ 0x400000 + ((i * 7919) % N) * 16, 0x400000 + ((i * 7919) % N) * 16 + 5 };
	qsort(big, N, sizeof(*big), range_cmp);
	for (size_t i = 0; i < N; i++)
		mh[i] = i && mh[i - 1] > big[i].hi ? mh[i - 1] : big[i].hi;
	bad = 0;
	for (size_t i = 0; i < N; i++)
		bad += !in_ranges(big, mh, N, 0x400000 + i * 16 + 4) + in_ranges(big, mh, N, 0x400000 + i * 16 + 5);
	tap_ok(bad == 0, "in_ranges: 100,000 ranges, 200,000 lookups (%d wrong)", bad);
	free(big);
	free(mh);
}

static void test_restart(void)
{
	struct user_regs_struct g = { 0 };
	g.orig_rax = 35;   /* nanosleep */
	g.rax = (uint64_t)-516;
	tap_ok(restart_pending(&g), "-ERESTART_RESTARTBLOCK in nanosleep: to restart");
	g.rax = (uint64_t)-512;
	tap_ok(restart_pending(&g), "-ERESTARTSYS: to restart");
	g.rax = (uint64_t)-4;
	tap_ok(!restart_pending(&g), "-EINTR: returned, nothing to restart");
	g.orig_rax = (uint64_t)-1;
	g.rax = (uint64_t)-512;
	tap_ok(!restart_pending(&g), "not in a system call (orig_rax -1): nothing to restart");
}

static void test_classify(void)
{
	int sig;
	tap_ok(classify(0x0000, &sig) == K_EXIT, "exit status 0: ended");
	tap_ok(classify(0x0009, &sig) == K_EXIT, "killed by SIGKILL: ended");
	tap_ok(classify((PTRACE_EVENT_STOP << 16) | (SIGTRAP << 8) | 0x7f, &sig) == K_EVENT,
	       "PTRACE_EVENT_STOP with SIGTRAP: the interrupt's stop");
	tap_ok(classify((PTRACE_EVENT_STOP << 16) | (SIGSTOP << 8) | 0x7f, &sig) == K_GROUP,
	       "PTRACE_EVENT_STOP with SIGSTOP: a group stop");
	tap_ok(classify((SIGUSR1 << 8) | 0x7f, &sig) == K_SIGNAL && sig == SIGUSR1,
	       "a plain stop with SIGUSR1: a signal to pass on");
}

int main(void)
{
	test_eperm();
	test_ranges();
	test_restart();
	test_classify();
	return tap_done();
}
