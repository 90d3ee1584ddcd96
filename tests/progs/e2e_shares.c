/*
 * e2e_shares — known CPU shares for the sampling accuracy test, built -O2
 * without frame pointers: main -> middle -> {part_a 50%, part_b 30%,
 * part_c 20%} of the same loop, interleaved in small slices so that any
 * drift of the machine's speed hits all three alike.
 * The work is bounded by the process's CPU time, not wall time, so the
 * number of samples does not depend on how busy the machine is.
 * A store after the last call keeps the compiler from turning it into a
 * tail call (which would, rightly, take middle off the stack).
 * Usage: e2e_shares MILLISECONDS (CPU time, default 2000)
 */
#include <stdlib.h>
#include <time.h>

static volatile unsigned long sink;

#define WORK(n) do { for (unsigned long i_ = 0; i_ < (n); i_++) sink += i_ ^ (sink >> 3); } while (0)

__attribute__((noinline)) void part_a(unsigned long n) { WORK(5 * n); }
__attribute__((noinline)) void part_b(unsigned long n) { WORK(3 * n); }
__attribute__((noinline)) void part_c(unsigned long n) { WORK(2 * n); }

__attribute__((noinline)) void middle(unsigned long n)
{
	part_a(n);
	part_b(n);
	part_c(n);
	sink++;
}

int main(int argc, char **argv)
{
	long ms = argc > 1 ? atol(argv[1]) : 2000;
	struct timespec a, b;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &a);
	do {
		middle(20000);
		clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &b);
	} while ((b.tv_sec - a.tv_sec) * 1000 + (b.tv_nsec - a.tv_nsec) / 1000000 < ms);
	return 0;
}
