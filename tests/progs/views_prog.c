/*
 * views_prog — a program of known call structure for the call-stack views
 * (tests/e2e/t500_views.sh).  With N units of work:
 *
 *   main -> work_a (6 calls) -> common -> spin       6N
 *        -> work_b (1 call)  -> common -> spin        N, plus 2N in work_b
 *        -> rec (DEPTH + 1 nested calls) -> spin     2N
 *
 * so of the 11N: work_a 6/11, work_b 3/11, rec 2/11; common's callers
 * work_a 6/7 and work_b 1/7.  Built with -DVARIANT, rec is replaced by
 * extra (same work): a second build for diff's new and vanished rows.
 *
 *   views_prog [UNIT_ITERATIONS [DEPTH]]
 */
#include <stdlib.h>

static long unit = 20000000;
static volatile unsigned long sink;

__attribute__((noinline)) void spin(long n)
{
	unsigned long h = sink;

	for (long i = 0; i < n; i++)
		h = h * 2654435761u + (unsigned long)i;
	sink = h;
}

__attribute__((noinline)) void common(long n)
{
	spin(n);
}

__attribute__((noinline)) void work_a(void)
{
	common(unit);
}

__attribute__((noinline)) void work_b(void)
{
	unsigned long h = sink;

	common(unit);
	for (long i = 0; i < 2 * unit; i++)
		h = h * 2654435761u + (unsigned long)i;
	sink = h;
}

#ifdef VARIANT
__attribute__((noinline)) void extra(long n)
{
	spin(n);
}
#else
__attribute__((noinline)) void rec(int depth)
{
	if (depth > 0)
		rec(depth - 1);
	else
		spin(2 * unit);
	sink += (unsigned long)depth;
}
#endif

int main(int argc, char **argv)
{
	int depth = argc > 2 ? atoi(argv[2]) : 5;

	if (argc > 1)
		unit = atol(argv[1]);
	for (int i = 0; i < 6; i++)
		work_a();
	work_b();
#ifdef VARIANT
	(void)depth;
	extra(2 * unit);
#else
	rec(depth);
#endif
	return 0;
}
