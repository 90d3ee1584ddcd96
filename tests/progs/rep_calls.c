/*
 * rep_calls — known call counts for the report tests (instrumentation):
 * main -> driver -> {work x WORK_CALLS, nest -> work x 3}, rec(REC_DEPTH)
 * recursing REC_DEPTH times, and a C++-free long function name.  Usage:
 * rep_calls [recurse] (no argument: no recursion, every call site called
 * from one place only).
 */
#include <stdio.h>
#include <string.h>

#define WORK_CALLS 1000
#define REC_DEPTH 10

static volatile unsigned long sink;

__attribute__((noinline)) void work(unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		sink += i;
}

__attribute__((noinline)) void nest(void)
{
	work(100);
	work(100);
	work(100);
}

__attribute__((noinline)) unsigned long rec(unsigned depth)
{
	sink++;
	return depth ? rec(depth - 1) + 1 : 0;
}

__attribute__((noinline)) void a_function_with_a_rather_long_name_to_shorten_in_tables(void)
{
	work(10);
}

__attribute__((noinline)) void driver(int recurse)
{
	for (int i = 0; i < WORK_CALLS; i++)
		work(200);
	nest();
	a_function_with_a_rather_long_name_to_shorten_in_tables();
	if (recurse)
		printf("%lu\n", rec(REC_DEPTH));
}

int main(int argc, char **argv)
{
	driver(argc > 1 && !strcmp(argv[1], "recurse"));
	return 0;
}
