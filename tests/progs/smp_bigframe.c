/*
 * smp_bigframe — a thread whose hot function has a frame with pages it
 * never touches (as sort's comparison function reserves 8.5 KiB for keys it
 * rarely copies): 16 KiB of locals written only at their two ends.  The
 * kernel's copy of a sampled stack stops at the first page that is not
 * present, below the return address; the recorder must get the rest.
 * Built -O2 -fno-stack-clash-protection (probes would touch every page).
 * The thread runs for MILLISECONDS of its own CPU time (default 1000);
 * main waits in pthread_join.
 * Usage: smp_bigframe [MILLISECONDS]
 */
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

static volatile unsigned long sink;

__attribute__((noinline)) static void big_frame(unsigned long n)
{
	volatile char keys[16384];

	keys[0] = (char)n;
	keys[sizeof(keys) - 1] = (char)n;
	for (unsigned long i = 0; i < n; i++)
		sink += i ^ (sink >> 3);
	sink += keys[0] + keys[sizeof(keys) - 1];
}

__attribute__((noinline)) static void *worker(void *arg)
{
	long ms = *(long *)arg;
	struct timespec a, b;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
	do {
		big_frame(20000);
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
	} while ((b.tv_sec - a.tv_sec) * 1000 + (b.tv_nsec - a.tv_nsec) / 1000000 < ms);
	sink++;
	return NULL;
}

int main(int argc, char **argv)
{
	long ms = argc > 1 ? atol(argv[1]) : 1000;
	pthread_t t;

	if (pthread_create(&t, NULL, worker, &ms))
		return 1;
	pthread_join(t, NULL);
	return 0;
}
