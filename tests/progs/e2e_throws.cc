/*
 * e2e_throws — N exceptions thrown through frames that clang's
 * -finstrument-functions gives no exit probe on unwinding: catcher() calls
 * middle() -> thrower(), which throws; catcher catches and calls
 * handled(), which spins a little (20000 loop turns).  Then after_work()
 * spins for about 20 ms.  The skipped frames (thrower, middle) must be
 * closed by the next entry (handled's), not hold the handler's time.
 */
#include <cstdlib>
#include <ctime>

static volatile unsigned long sink;

__attribute__((noinline)) void thrower(int i) { sink += i; throw i; }
__attribute__((noinline)) void middle(int i) { thrower(i + 1); sink++; }
__attribute__((noinline)) void handled()
{
	for (int i = 0; i < 20000; i++)
		sink += i;
}

__attribute__((noinline)) void catcher(int i)
{
	try {
		middle(i);
	} catch (int) {
		handled();
	}
}

__attribute__((noinline)) void after_work()
{
	timespec a, b;

	clock_gettime(CLOCK_MONOTONIC, &a);
	do {
		for (int i = 0; i < 10000; i++)
			sink += i;
		clock_gettime(CLOCK_MONOTONIC, &b);
	} while ((b.tv_sec - a.tv_sec) * 1000000000L + (b.tv_nsec - a.tv_nsec) < 20000000L);
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? std::atoi(argv[1]) : 1000;

	for (int i = 0; i < n; i++)
		catcher(i);
	after_work();
	return 0;
}
