/*
 * Calls of known durations in a known order, in three threads (t511, the
 * timeline's Chrome trace export).  work(k) spins for k units of wall time
 * (a unit is SCALE ms, argv[1], default 1); outer(k) calls work(k) twice;
 * nap(k) sleeps k units (a system call and a context switch inside it).
 *
 *	main:  main > work(2)                 (while the threads run)
 *	tl-a:  thread_a > work(3), outer(2) > work(2) work(2), nap(5), work(1)
 *	tl-b:  thread_b > work(1), work(4), outer(1) > work(1) work(1)
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

static long unit_ns = 1000000;

__attribute__((no_instrument_function)) static long long now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000000000LL + t.tv_nsec;
}

__attribute__((noinline)) void work(int k)
{
	long long end = now_ns() + k * unit_ns;
	volatile unsigned spins = 0;

	while (now_ns() < end)
		spins++;
}

__attribute__((noinline)) void outer(int k)
{
	work(k);
	work(k);
}

__attribute__((noinline)) void nap(int k)
{
	struct timespec t = { k * unit_ns / 1000000000, k * unit_ns % 1000000000 };

	while (nanosleep(&t, &t))
		;
}

__attribute__((noinline)) void *thread_a(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "tl-a");
	work(3);
	outer(2);
	nap(5);
	work(1);
	return NULL;
}

__attribute__((noinline)) void *thread_b(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "tl-b");
	work(1);
	work(4);
	outer(1);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t a, b;

	if (argc > 1)
		unit_ns = atol(argv[1]) * 1000000L;
	pthread_create(&a, NULL, thread_a, NULL);
	pthread_create(&b, NULL, thread_b, NULL);
	work(2);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	return 0;
}
