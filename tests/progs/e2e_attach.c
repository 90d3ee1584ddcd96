/*
 * A program that runs for a while and is attached to (t330): NTHREADS
 * threads in a steady loop, each iteration one call of step(), which calls
 * tick() twice; every iteration checks its own arithmetic.  Counters of
 * iterations, one per thread, live in a file mapped shared (argv[1]) so the
 * test reads them while the program runs.  A spawner makes a short-lived
 * thread every 50 ms (threads born while attached).  One more thread calls
 * a tiny function in a tight loop: its first bytes are where that thread
 * is stopped most of the time, so the attach has to move it out of them
 * (counted apart, at counts[6]).  A sampler notes
 * every 2 ms the time (CLOCK_REALTIME ns) and the sum of the counters, from
 * offset 128 of the file (their number at offset 64), so that the test can
 * tell the iterations within any window.  SIGTERM ends it: it prints
 * "ok ITERATIONS" when every check passed, else "FAILED".
 */
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define NTHREADS 3
#define FILE_SIZE (1u << 20)
#define NSAMPLES ((FILE_SIZE - 128) / 16)

static volatile sig_atomic_t done;
static volatile unsigned long *counts;   /* NTHREADS + 1 (the spawned threads') */
static volatile int failed;

__attribute__((noinline)) unsigned long tick(unsigned long x)
{
	for (int i = 0; i < 20; i++)
		x = x * 6364136223846793005ul + 1442695040888963407ul;
	return x;
}

__attribute__((noinline)) unsigned long step(unsigned long x)
{
	unsigned long a = tick(x), b = tick(x + 1);

	/* the same arithmetic inline: the call gave the right answer */
	unsigned long c = x;
	for (int i = 0; i < 20; i++)
		c = c * 6364136223846793005ul + 1442695040888963407ul;
	if (a != c)
		failed = 1;
	return a ^ b;
}

static void *run(void *arg)
{
	long k = (long)arg;
	unsigned long x = (unsigned long)k;

	while (!done) {
		x = step(x);
		counts[k]++;
		if ((counts[k] & 0x3fff) == 0)
			usleep(50);
	}
	return (void *)x;
}

__attribute__((noinline)) unsigned long tiny(unsigned long x)
{
	return x * 3 + (x >> 7);
}

static void *tight(void *arg)
{
	unsigned long x = 1;

	while (!done) {
		x = tiny(x);
		counts[6]++;
	}
	return (void *)x + (long)arg;
}

static void *short_lived(void *arg)
{
	unsigned long x = 7;

	for (int i = 0; i < 1000; i++) {
		x = step(x);
		counts[NTHREADS]++;
	}
	return arg;
}

static void *sampler(void *arg)
{
	volatile unsigned long *n = counts + 8, *v = counts + 16;

	while (!done && *n < NSAMPLES) {
		struct timespec ts = { 0, 2000000 }, now;
		unsigned long sum = 0;

		clock_gettime(CLOCK_REALTIME, &now);
		for (int i = 0; i <= NTHREADS; i++)
			sum += counts[i];
		v[2 * *n] = (unsigned long)now.tv_sec * 1000000000ul + (unsigned long)now.tv_nsec;
		v[2 * *n + 1] = sum;
		__atomic_store_n(n, *n + 1, __ATOMIC_RELEASE);
		nanosleep(&ts, NULL);
	}
	return arg;
}

static void on_term(int sig)
{
	(void)sig;
	done = 1;
}

int main(int argc, char **argv)
{
	pthread_t t[NTHREADS], smp, tt;
	unsigned long total = 0;
	int fd;

	if (argc < 2)
		return 2;
	fd = open(argv[1], O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || ftruncate(fd, FILE_SIZE))
		return 2;
	counts = mmap(NULL, FILE_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (counts == MAP_FAILED)
		return 2;
	signal(SIGTERM, on_term);
	for (long i = 0; i < NTHREADS; i++)
		pthread_create(&t[i], NULL, run, (void *)i);
	pthread_create(&smp, NULL, sampler, NULL);
	pthread_create(&tt, NULL, tight, NULL);
	while (!done) {
		struct timespec ts = { 0, 50000000 };
		pthread_t s;

		nanosleep(&ts, NULL);
		if (!done && !pthread_create(&s, NULL, short_lived, NULL))
			pthread_join(s, NULL);
	}
	for (int i = 0; i < NTHREADS; i++)
		pthread_join(t[i], NULL);
	pthread_join(smp, NULL);
	pthread_join(tt, NULL);
	for (int i = 0; i <= NTHREADS; i++)
		total += counts[i];
	if (failed) {
		puts("FAILED");
		return 1;
	}
	printf("ok %lu\n", total);
	return 0;
}
