/*
 * A deep calling-context tree for export tests (t510): rec recurses N
 * levels and calls leaf at each, so the tree has 2N nodes whose stacks
 * hold N^2 frames in all (N 4000: 16 million).  An exporter that holds
 * every stack at once needs memory in proportion to that sum; one that
 * writes a stack at a time, to the deepest one.
 *
 *	exp_deep [N]
 */
#include <stdlib.h>

static volatile int sink;

__attribute__((noinline)) void leaf(int d)
{
	sink = d;
}

__attribute__((noinline)) void rec(int d)
{
	leaf(d);
	if (d > 0)
		rec(d - 1);
	sink++;
}

int main(int argc, char **argv)
{
	rec(argc > 1 ? atoi(argv[1]) : 4000);
	return 0;
}
