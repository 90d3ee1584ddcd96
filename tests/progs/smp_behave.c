/*
 * smp_behave — the target's own behaviour under the sampler must not
 * change: prints one line to stdout and one to stderr, spins in spin() for
 * MS milliseconds of CPU, then
 *   exit   exits with status CODE
 *   kill   kills itself with SIGKILL (the recording must survive it)
 *   sigint spins on until SIGINT arrives, prints "interrupted", exits CODE
 * Usage: smp_behave MS CODE exit|kill|sigint
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long sink;
static volatile sig_atomic_t interrupted;

static void on_int(int sig) { interrupted = 1; }

static long cpu_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

__attribute__((noinline)) void spin(long ms)
{
	long end = cpu_ms() + ms;

	while (cpu_ms() < end)
		for (int i = 0; i < 100000; i++)
			sink += (unsigned long)i ^ (sink >> 3);
}

int main(int argc, char **argv)
{
	long ms = argc > 1 ? atol(argv[1]) : 200;
	int code = argc > 2 ? atoi(argv[2]) : 0;
	const char *mode = argc > 3 ? argv[3] : "exit";

	signal(SIGINT, on_int);
	printf("out line\n");
	fflush(stdout);
	fprintf(stderr, "err line\n");
	spin(ms);
	if (!strcmp(mode, "kill"))
		kill(getpid(), SIGKILL);
	if (!strcmp(mode, "sigint")) {
		while (!interrupted)
			spin(10);
		printf("interrupted\n");
	}
	return code;
}
