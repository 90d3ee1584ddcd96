/*
 * Accuracy of instrumented times (SPEC section 10, docs/accuracy.md): code
 * whose cost per call is known from the same source built without probes.
 *
 *   leaf()     a dependent chain of 27 multiplies, about 30-40 ns
 *   parent()   calls leaf() 8 times: its own work is a few ns
 *   caller()   calls the empty function empty() 8 times: a call-only loop
 *
 * Prints, measured from outside with the monotonic clock, the mean time
 * per call of leaf(), parent() and caller():
 *   "leaf NS parent NS caller NS"
 * Usage: e2e_accuracy [N]   (N parent and caller calls, default 1000000)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

volatile uint64_t sink;

__attribute__((noinline)) uint64_t leaf(uint64_t x)
{
	for (int i = 0; i < 27; i++)
		x = x * 0x9e3779b97f4a7c15ull + 1;
	return x;
}

__attribute__((noinline)) uint64_t parent(uint64_t x)
{
	for (int i = 0; i < 8; i++)
		x = leaf(x);
	return x;
}

__attribute__((noinline)) void empty(void)
{
	__asm__ volatile("");
}

__attribute__((noinline)) void caller(void)
{
	for (int i = 0; i < 8; i++)
		empty();
}

__attribute__((noinline)) void run_leaf(long n)
{
	uint64_t x = 1;

	for (long i = 0; i < n; i++)
		x = leaf(x);
	sink = x;
}

__attribute__((noinline)) void run_parent(long n)
{
	uint64_t x = 1;

	for (long i = 0; i < n; i++)
		x = parent(x);
	sink = x;
}

__attribute__((noinline)) void run_caller(long n)
{
	for (long i = 0; i < n; i++)
		caller();
}

static uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000000;
	uint64_t t0, t1, t2, t3;

	t0 = now_ns();
	run_leaf(n * 8);
	t1 = now_ns();
	run_parent(n);
	t2 = now_ns();
	run_caller(n);
	t3 = now_ns();
	printf("leaf %.2f parent %.2f caller %.2f\n", (double)(t1 - t0) / (double)(n * 8),
	       (double)(t2 - t1) / (double)n, (double)(t3 - t2) / (double)n);
	return 0;
}
