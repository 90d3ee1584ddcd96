/*
 * rep_sample — CPU work for the sampling report tests, built -O2 without
 * frame pointers: main -> outer -> {hot (inlined helper inside), cold}, 3:1
 * of the work in hot: 3n steps of one xor loop against n (whatever the load).
 * Not tail calls (a value is used after each): every frame is on the stack.
 * Usage: rep_sample MILLISECONDS (of its own CPU time; default 600)
 */
#include <stdlib.h>
#include <time.h>

static volatile unsigned long sink;

static inline __attribute__((always_inline)) unsigned long mix(unsigned long n)
{
	unsigned long s = 0;

	for (unsigned long i = 0; i < n; i++)
		s += i ^ (sink >> 3);
	return s;
}

__attribute__((noinline)) unsigned long hot(unsigned long n)
{
	unsigned long s = mix(3 * n);

	sink += s;
	return s & 1;
}

__attribute__((noinline)) unsigned long cold(unsigned long n)
{
	unsigned long s = 0;

	for (unsigned long i = 0; i < n; i++)
		s += i ^ (sink >> 5);
	sink += s;
	return s & 1;
}

__attribute__((noinline)) unsigned long outer(unsigned long n)
{
	unsigned long r = hot(n);

	r += cold(n);
	return r + 1;
}

int main(int argc, char **argv)
{
	long ms = argc > 1 ? atol(argv[1]) : 600;
	struct timespec a, b;
	unsigned long r = 0;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &a);
	do {
		r += outer(20000);
		clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &b);
	} while ((b.tv_sec - a.tv_sec) * 1000 + (b.tv_nsec - a.tv_nsec) / 1000000 < ms);
	return (int)(r & 0);
}
