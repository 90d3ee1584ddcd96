/*
 * e2e_jumps — an interpreter-style error loop: N times, step() -> op() ->
 * fail(), which longjmps back to main's setjmp; the exits of fail, op and
 * step never come.  Then after_work() spins for a while (about 20 ms).
 * Every frame the jump skipped must be closed by the next entry (its stack
 * position is at or above theirs): 3 repairs per jump, none of them
 * holding after_work's time, and the shadow stack never grows with N.
 */
#include <setjmp.h>
#include <stdlib.h>
#include <time.h>

static jmp_buf env;
static volatile unsigned long sink;

__attribute__((noinline)) void fail(int i) { sink += (unsigned long)i; longjmp(env, 1); }
__attribute__((noinline)) void op(int i) { fail(i + 1); sink++; }
__attribute__((noinline)) void step(int i) { op(i); sink++; }

__attribute__((noinline)) void after_work(void)
{
	struct timespec a, b;

	clock_gettime(CLOCK_MONOTONIC, &a);
	do {
		for (int i = 0; i < 10000; i++)
			sink += (unsigned long)i;
		clock_gettime(CLOCK_MONOTONIC, &b);
	} while ((b.tv_sec - a.tv_sec) * 1000000000L + (b.tv_nsec - a.tv_nsec) < 20000000L);
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 1000;
	volatile int i;

	for (i = 0; i < n; i++)
		if (!setjmp(env))
			step(i);
	after_work();
	return 0;
}
