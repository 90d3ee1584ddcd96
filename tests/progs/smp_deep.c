/*
 * smp_deep — deep recursion for the sampling unwinder, built -O2 without
 * frame pointers: main -> descend(DEPTH) -> descend(DEPTH-1) -> ... ->
 * descend(0) -> burn(), so every sample taken in burn() has DEPTH + 1
 * frames of descend() between burn() and main().  The recursion is real
 * (noinline, a result combined after the call, so no sibling call turns
 * it into a loop) and each frame holds a small array, so 150 levels take
 * a few KiB of stack: enough to be cut by a small stack copy
 * (STACKCLOCK_STACK_SIZE) and to fit in the default one.
 * Usage: smp_deep [DEPTH [MILLISECONDS]]   (defaults 150, 1000)
 */
#include <stdlib.h>
#include <time.h>

static volatile unsigned long sink;

__attribute__((noinline)) unsigned long burn(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		sink += i ^ (sink >> 3);
	return sink;
}

__attribute__((noinline)) unsigned long descend(int depth, unsigned long n)
{
	volatile unsigned long pad[4] = { (unsigned long)depth, n, 0, 0 };

	if (depth <= 0)
		pad[2] = burn(n);
	else
		pad[2] = descend(depth - 1, n);
	return pad[2] + pad[0];
}

static long elapsed_ms(const struct timespec *a)
{
	struct timespec b;

	clock_gettime(CLOCK_MONOTONIC, &b);
	return (b.tv_sec - a->tv_sec) * 1000 + (b.tv_nsec - a->tv_nsec) / 1000000;
}

int main(int argc, char **argv)
{
	int depth = argc > 1 ? atoi(argv[1]) : 150;
	long ms = argc > 2 ? atol(argv[2]) : 1000;
	struct timespec start;

	clock_gettime(CLOCK_MONOTONIC, &start);
	do
		descend(depth, 2000000);
	while (elapsed_ms(&start) < ms);
	return 0;
}
