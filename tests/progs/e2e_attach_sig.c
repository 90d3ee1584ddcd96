/*
 * A thread interrupted by a signal inside the first bytes of a function
 * that an attach will patch (t330): worker() calls tiny() in a loop and
 * checks each answer; SIGUSR1 is sent to it until its handler finds the
 * interrupted instruction inside tiny()'s first 8 bytes (past the first),
 * which the entry jump replaces.  The handler then stays there for
 * argv[1] ms (printing "held" when it starts) before it returns to that
 * instruction.  Patched meanwhile, it would return into the middle of the
 * jump.  SIGTERM ends it: "ok N" when every answer was right.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

static volatile sig_atomic_t done, held;
static volatile int failed;
static volatile unsigned long calls;
static long hold_ms;

__attribute__((noinline)) unsigned long tiny(unsigned long x)
{
	return x * 3 + (x >> 7);
}

static void on_usr1(int sig, siginfo_t *si, void *ucv)
{
	ucontext_t *uc = ucv;
	unsigned long ip = (unsigned long)uc->uc_mcontext.gregs[REG_RIP];
	unsigned long f = (unsigned long)(void *)tiny;

	(void)sig;
	(void)si;
	if (held || ip <= f || ip >= f + 8)
		return;
	held = 1;
	write(1, "held\n", 5);
	struct timespec ts = { hold_ms / 1000, (hold_ms % 1000) * 1000000 };
	nanosleep(&ts, NULL);
}

static void *worker(void *arg)
{
	unsigned long x = 1;

	while (!done) {
		unsigned long want = x * 3 + (x >> 7), got = tiny(x);

		if (got != want)
			failed = 1;
		x = got | 1;
		calls++;
	}
	return arg;
}

static void on_term(int sig)
{
	(void)sig;
	done = 1;
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_sigaction = on_usr1, .sa_flags = SA_SIGINFO | SA_RESTART };
	pthread_t w;

	hold_ms = argc > 1 ? atol(argv[1]) : 500;
	setvbuf(stdout, NULL, _IONBF, 0);
	sigaction(SIGUSR1, &sa, NULL);
	signal(SIGTERM, on_term);
	pthread_create(&w, NULL, worker, NULL);
	while (!held && !done) {
		struct timespec ts = { 0, 50000 };

		pthread_kill(w, SIGUSR1);
		nanosleep(&ts, NULL);
	}
	while (!done)
		pause();
	pthread_join(w, NULL);
	if (failed) {
		puts("FAILED");
		return 1;
	}
	printf("ok %lu\n", calls);
	return 0;
}
