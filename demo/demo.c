/*
 * demo — a small program to try stackclock on: a CPU-bound function, one
 * that sleeps (Elapsed time but almost no Application time), one that
 * writes and fsyncs a file, and two worker threads.
 *
 *   cc -O2 -g -finstrument-functions -pthread demo/demo.c -o build/demo
 *   build/stackclock record -m instrument -- build/demo
 *   build/stackclock report
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long sink;

__attribute__((noinline)) static unsigned long mix(unsigned long x)
{
	return x * 2654435761u ^ (x >> 7);
}

__attribute__((noinline)) static void compute(int rounds)
{
	unsigned long h = 1;

	for (int i = 0; i < rounds; i++)
		h = mix(h + (unsigned long)i);
	sink = h;
}

__attribute__((noinline)) static void nap(int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	nanosleep(&ts, NULL);
}

__attribute__((noinline)) static void save(const char *path)
{
	char buf[4096] = { 0 };
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	if (fd < 0)
		return;
	for (int i = 0; i < 64; i++)
		if (write(fd, buf, sizeof(buf)) < 0)
			break;
	fsync(fd);
	close(fd);
	unlink(path);
}

static void *worker(void *arg)
{
	compute((int)(long)arg);
	return NULL;
}

int main(void)
{
	pthread_t t[2];
	char path[] = "/tmp/stackclock-demo-XXXXXX";
	int fd = mkstemp(path);

	if (fd >= 0)
		close(fd);
	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, worker, (void *)200000L);
	compute(400000);
	nap(100);
	save(path);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	printf("demo done\n");
	return 0;
}
