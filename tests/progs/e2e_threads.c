/*
 * e2e_threads — NTHREADS threads each calling work() CALLS times at once,
 * plus main's own calls: the report must count every call exactly.
 * Usage: e2e_threads NTHREADS CALLS
 */
#include <pthread.h>
#include <stdlib.h>

static volatile unsigned long sink;
static long calls;

__attribute__((noinline)) void work(long i)
{
	sink += (unsigned long)i;
}

__attribute__((noinline)) void *thread_main(void *arg)
{
	for (long i = 0; i < calls; i++)
		work(i);
	return arg;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 8;
	pthread_t t[64];

	calls = argc > 2 ? atol(argv[2]) : 200000;
	if (n > 64)
		n = 64;
	for (int i = 0; i < n; i++)
		pthread_create(&t[i], NULL, thread_main, NULL);
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	return 0;
}
