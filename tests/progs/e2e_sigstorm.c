/*
 * A storm of asynchronous signals (issue 30): SIGPROF and SIGALRM every
 * 100 us each (ITIMER_PROF and ITIMER_REAL), whose handlers call
 * instrumented functions, while main makes instrumented calls and library
 * calls (clock_gettime, from the vDSO).  A signal lands anywhere: in the
 * program's code, in a library call, in the probes and their trampolines,
 * in the other handler (they do not block each other).  Nothing jumps, so
 * a profile must show no repair, every call counted, and each handler's
 * callees under that handler.
 *
 *   e2e_sigstorm N    N calls of outer(); prints
 *                     "outer O inner I leaf L clock C prof P alrm A hwork W hleaf H"
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/time.h>
#include <time.h>

/* main's counters are only written by main's code; the handlers' by the
 * handlers, which may interrupt each other: atomic adds */
static volatile unsigned long n_outer, n_inner, n_leaf, n_clock;
static unsigned long n_prof, n_alrm, n_hwork, n_hleaf;

#define COUNT(x) __atomic_fetch_add(&(x), 1, __ATOMIC_RELAXED)

__attribute__((noinline)) void h_leaf(void)
{
	COUNT(n_hleaf);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void h_work(int k)
{
	COUNT(n_hwork);
	for (int i = 0; i < k; i++)
		h_leaf();
}

__attribute__((noinline)) void on_prof(int sig)
{
	(void)sig;
	COUNT(n_prof);
	h_work(2);
}

__attribute__((noinline)) void on_alrm(int sig)
{
	(void)sig;
	COUNT(n_alrm);
	h_work(1);
	h_leaf();
}

__attribute__((noinline)) long leaf(long x)
{
	n_leaf++;
	return x * 3 + 1;
}

__attribute__((noinline)) long inner(long i)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	n_clock++;
	n_inner++;
	return leaf(i) + (ts.tv_nsec & 1);
}

__attribute__((noinline)) long outer(long i)
{
	long s = 0;

	n_outer++;
	for (int j = 0; j < 4; j++)
		s += inner(i + j);
	return s;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 100000, sum = 0;
	struct itimerval on = { { 0, 100 }, { 0, 100 } }, off = { { 0, 0 }, { 0, 0 } };
	struct sigaction sa = { 0 };

	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	sa.sa_handler = on_prof;
	sigaction(SIGPROF, &sa, NULL);
	sa.sa_handler = on_alrm;
	sigaction(SIGALRM, &sa, NULL);
	setitimer(ITIMER_PROF, &on, NULL);
	setitimer(ITIMER_REAL, &on, NULL);
	for (long i = 0; i < n; i++)
		sum += outer(i);
	setitimer(ITIMER_PROF, &off, NULL);
	setitimer(ITIMER_REAL, &off, NULL);
	printf("outer %lu inner %lu leaf %lu clock %lu prof %lu alrm %lu hwork %lu hleaf %lu\n", n_outer, n_inner,
	       n_leaf, n_clock, n_prof, n_alrm, n_hwork, n_hleaf);
	return sum == 42;
}
