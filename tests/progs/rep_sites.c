/*
 * rep_sites — instrumented functions called from code that is not
 * instrumented: a qsort comparator (libc), a thread function (libc's
 * start_thread) and a callback of rep_sites_lib.c (a library of ours
 * with line information).  Call counts: visit() exactly VISITS times,
 * worker() once.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define VISITS 25

void lib_each(void (*fn)(int), int n);

static volatile long sink;

__attribute__((noinline)) int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

__attribute__((noinline)) void visit(int i)
{
	sink += i;
}

__attribute__((noinline)) void *worker(void *arg)
{
	sink += (long)arg;
	return NULL;
}

int main(void)
{
	int v[100];
	pthread_t t;

	for (int i = 0; i < 100; i++)
		v[i] = (i * 37) % 100;
	qsort(v, 100, sizeof(v[0]), cmp_int);
	lib_each(visit, VISITS);
	if (pthread_create(&t, NULL, worker, (void *)1L) || pthread_join(t, NULL))
		return 1;
	printf("%d %d\n", v[0], v[99]);
	return 0;
}
