/*
 * Exact counts for an attach (t332): on each SIGUSR1 the main thread calls
 * burst() 1000 times, each burst() calling leaf() twice, then appends
 * "done N" (N bursts of 1000 so far) to the file argv[1], which gets
 * "pid P" first: the pid the program sees itself as (1 as the first
 * process of a pid namespace).  SIGTERM ends it with status 0.  SIGUSR2
 * is blocked and raised at the start, never taken: pending for good in
 * the thread's own set (an attach must not wait for it).  With argv[2],
 * the first SIGUSR1 also loads that library (dlopen) and calls its
 * dl_work() once, before the burst ("dlopen failed" on stderr if not).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

static volatile unsigned long sink;

__attribute__((noinline)) void leaf(unsigned long x)
{
	sink += x * 7 + (sink >> 3);
}

__attribute__((noinline)) void burst(unsigned long i)
{
	leaf(i);
	leaf(i + 1);
}

int main(int argc, char **argv)
{
	sigset_t set;
	FILE *f;
	int sig, n = 0;

	if (argc < 2 || !(f = fopen(argv[1], "w")))
		return 2;
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGUSR2);
	sigprocmask(SIG_BLOCK, &set, NULL);
	raise(SIGUSR2);
	sigdelset(&set, SIGUSR2);
	fprintf(f, "pid %d\n", (int)getpid());
	fflush(f);
	while (!sigwait(&set, &sig) && sig == SIGUSR1) {
		if (argc > 2 && n == 0) {
			void *h = dlopen(argv[2], RTLD_NOW);
			void (*work)(void) = h ? (void (*)(void))dlsym(h, "dl_work") : NULL;

			if (work)
				work();
			else
				fputs("dlopen failed\n", stderr);
		}
		for (unsigned long i = 0; i < 1000; i++)
			burst(i);
		fprintf(f, "done %d\n", ++n);
		fflush(f);
	}
	fclose(f);
	return 0;
}
