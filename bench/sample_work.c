/*
 * sample_work — the CPU-bound workload of bench/sample.sh: a fixed amount
 * of work (so that any slowdown under a profiler shows), built -O2 without
 * frame pointers, spread over a few call paths: qsort with a comparison
 * callback (frames of libc between ours), a recursive fib, a hashing loop.
 * Prints its own CPU time (user + sys, getrusage) and wall time from the
 * first to the last line of main:  "cpu_ms=N wall_ms=N"
 * Usage: sample_work [ROUNDS]   (default 25: about 3 s here)
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

static volatile unsigned long sink;

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	return (x > y) - (x < y);
}

__attribute__((noinline)) void sort_work(int *v, int n, unsigned seed)
{
	for (int i = 0; i < n; i++) {
		seed = seed * 1103515245u + 12345u;
		v[i] = (int)(seed >> 1);
	}
	qsort(v, (size_t)n, sizeof(*v), cmp_int);
	sink += (unsigned long)v[n / 2];
}

__attribute__((noinline)) unsigned long fib(int n)
{
	return n < 2 ? (unsigned long)n : fib(n - 1) + fib(n - 2);
}

__attribute__((noinline)) void hash_work(unsigned long n)
{
	unsigned long h = 1469598103934665603UL;

	for (unsigned long i = 0; i < n; i++)
		h = (h ^ (i & 0xff)) * 1099511628211UL;
	sink += h;
}

static double ms_of(const struct timeval *t)
{
	return t->tv_sec * 1e3 + t->tv_usec / 1e3;
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 25;
	int n = 200000;
	int *v = malloc(n * sizeof(*v));
	struct timespec a, b;
	struct rusage ru;

	clock_gettime(CLOCK_MONOTONIC, &a);
	for (int r = 0; r < rounds; r++) {
		sort_work(v, n, (unsigned)r);
		sink += fib(27);
		hash_work(60000000UL);
	}
	clock_gettime(CLOCK_MONOTONIC, &b);
	getrusage(RUSAGE_SELF, &ru);
	printf("cpu_ms=%.1f wall_ms=%.1f\n", ms_of(&ru.ru_utime) + ms_of(&ru.ru_stime),
	       (b.tv_sec - a.tv_sec) * 1e3 + (b.tv_nsec - a.tv_nsec) / 1e6);
	free(v);
	return 0;
}
