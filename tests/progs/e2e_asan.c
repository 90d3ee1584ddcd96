/*
 * e2e_asan — a program built with -fsanitize=address (as C developers run
 * every day): mid() 100 times, each calling leaf() 100 times; leaf
 * allocates, writes and frees (through ASan's allocator).  Prints the sum
 * ("sum 495000") and exits 0.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static volatile int seed;

__attribute__((noinline)) int leaf(int i)
{
	char *volatile p = malloc(16);
	int r;

	memset(p, i, 16);
	r = p[3] + seed;
	free(p);
	return r;
}

__attribute__((noinline)) int mid(int n)
{
	int s = 0;

	for (int i = 0; i < n; i++)
		s += leaf(i);
	return s;
}

int main(void)
{
	int s = 0;

	for (int k = 0; k < 100; k++)
		s += mid(100 + seed);
	printf("sum %d\n", s);
	return 0;
}
