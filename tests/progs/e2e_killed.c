/*
 * e2e_killed — calls work() exactly N times, then kills itself with
 * SIGKILL from inside a frame (no exit probes, no atexit, nothing flushed):
 * the recording must still hold every one of the N calls.
 */
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

static volatile unsigned long sink;

__attribute__((noinline)) void work(long i) { sink += (unsigned long)i; }

__attribute__((noinline)) void die_now(void) { kill(getpid(), SIGKILL); }

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 300000;

	for (long i = 0; i < n; i++)
		work(i);
	die_now();
	return 0;
}
