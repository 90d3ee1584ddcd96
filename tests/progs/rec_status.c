/*
 * rec_status — ends the way it is told, after some work in work(), for
 * the exit status of `stackclock record` (tests/e2e/t120_record_status.sh):
 *   exit CODE   returns CODE from main
 *   segv        dies of SIGSEGV (a write through a null pointer)
 *   abort       calls abort()
 *   sleep MS    sleeps MS milliseconds, then returns 0
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

static volatile unsigned long sink;

__attribute__((noinline)) void work(void)
{
	for (int i = 0; i < 200000; i++)
		sink += (unsigned long)i ^ (sink >> 3);
}

int main(int argc, char **argv)
{
	const char *how = argc > 1 ? argv[1] : "exit";

	for (int i = 0; i < 20; i++)
		work();
	if (!strcmp(how, "segv"))
		*(volatile int *)(sink * 0) = 1;
	if (!strcmp(how, "abort"))
		abort();
	if (!strcmp(how, "sleep")) {
		long ms = argc > 2 ? atol(argv[2]) : 0;
		struct timespec ts = { ms / 1000, ms % 1000 * 1000000 };

		nanosleep(&ts, NULL);
		return 0;
	}
	return argc > 2 ? atoi(argv[2]) : 0;
}
