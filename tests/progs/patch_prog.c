/*
 * patch_prog — a program for tests/e2e/t700_patch_plan.sh: functions
 * reached only through their address (a qsort comparator, a table of
 * handlers), which discovery must see as addresses taken, in a
 * position-independent build (lea sym(%rip), relocations) and in a
 * position-dependent one (absolute immediates, pointers in data).
 */
#include <stdio.h>
#include <stdlib.h>

static __attribute__((noinline)) int cmp_ints(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

static __attribute__((noinline)) int handler_double(int x) { return printf("%d\n", 2 * x); }
static __attribute__((noinline)) int handler_square(int x) { return printf("%d\n", x * x); }

static int (*const handlers[])(int) = { handler_double, handler_square };

int main(int argc, char **argv)
{
	int v[] = { 5, 3, 9, 1 };

	qsort(v, 4, sizeof(v[0]), cmp_ints);
	for (int i = 0; i < 4; i++)
		handlers[(argc + i) & 1](v[i]);
	return argv[0][0] == 0;
}
