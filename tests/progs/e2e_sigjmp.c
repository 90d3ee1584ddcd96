/*
 * siglongjmp out of an asynchronous signal handler: a one-shot 5 us
 * SIGALRM timer, re-armed each iteration, lands anywhere (inside the
 * probes too); its handler calls one function, then siglongjmps out of a
 * 20-deep recursion.  The program counts its own calls: the profile must
 * give the same numbers.
 *
 *   e2e_sigjmp N [deep]   N iterations; prints "rec R handler H tick T
 *                         spin S"; the timer is armed in main before the
 *                         recursion, or with "deep" at its bottom
 */
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/time.h>

static sigjmp_buf env;
static volatile unsigned long n_rec, n_handler, n_tick, n_spin;

__attribute__((noinline)) void tick(void)
{
	n_tick++;
	__asm__ volatile("" ::: "memory");
}

static void on_alarm(int sig)
{
	(void)sig;
	n_handler++;
	tick();
	siglongjmp(env, 1);
}

__attribute__((noinline)) void spin(void)
{
	n_spin++;
	__asm__ volatile("" ::: "memory");
}

static struct itimerval it = { { 0, 0 }, { 0, 5 } };
static int arm_deep;

/* Recurse 20 deep, then call spin() until the timer fires. */
__attribute__((noinline)) void rec(int depth)
{
	n_rec++;
	if (depth < 20) {
		rec(depth + 1);
		return;
	}
	if (arm_deep)
		setitimer(ITIMER_REAL, &it, NULL);
	for (;;)
		spin();
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 20000;

	arm_deep = argc > 2;
	struct sigaction sa;

	sa.sa_handler = on_alarm;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = 0;
	sigaction(SIGALRM, &sa, NULL);
	for (long i = 0; i < n; i++) {
		if (sigsetjmp(env, 1))
			continue;
		if (!arm_deep)
			setitimer(ITIMER_REAL, &it, NULL);
		rec(1);
	}
	printf("rec %lu handler %lu tick %lu spin %lu\n", n_rec, n_handler, n_tick, n_spin);
	return 0;
}
