/*
 * The timeline's test program (t320): calls of known order and duration
 * in three threads, and a system call of known place.
 *
 *   e2e_timeline N      each of threads A and B runs N steps, then main
 *                       runs N steps; step i of a thread spins for
 *                       ms(i) = 1 + (i + t) % 3 milliseconds of wall time,
 *                       half of it inside inner(); every step but the
 *                       first is followed by nap(), a 300 us usleep()
 *   e2e_timeline N kill as above, then SIGKILL to itself inside final()
 *
 * Prints at the end, per call of step() and inner(), one line "TID NAME
 * START END" (CLOCK_MONOTONIC ns, read right after entry and right before
 * return), the program's own measure of where each call began and how
 * long it ran.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static int nsteps;

static unsigned long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

/* the clock without probes: an inlined function (the patched build
 * patches every function, not code inlined into another) calling
 * clock_gettime through a pointer dlsym() gave (library calls through the
 * GOT are rows, calls through such a pointer are not) */
static int (*raw_clock)(clockid_t, struct timespec *);

static inline __attribute__((always_inline, no_instrument_function)) unsigned long long raw_ns(void)
{
	struct timespec ts;

	raw_clock(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

/* spins on raw_ns(), with a now_ns() call every 64th turn: about 30,000
 * short calls in a run instead of 440,000, so that the checks' JSON stays
 * small (the rounding of calls sharing a tick is test_timeline's) */
static void spin(unsigned long long ns)
{
	unsigned long long end = now_ns() + ns;
	unsigned i = 0;

	while ((++i & 63) ? raw_ns() < end : now_ns() < end)
		;
}

/* the calls' stamps, printed at the end (nothing else runs inside them) */
#define MAXN 64
static struct stamp {
	long tid;
	const char *name;
	unsigned long long a, b;
} stamps[3][2 * MAXN];
static int nstamps[3];
static __thread int thread_no;

static void note(const char *name, unsigned long long a, unsigned long long b)
{
	struct stamp *s = &stamps[thread_no][nstamps[thread_no]++];

	s->tid = (long)syscall(SYS_gettid);
	s->name = name;
	s->a = a;
	s->b = b;
}

__attribute__((noinline)) void inner(unsigned long long ns)
{
	unsigned long long a = now_ns(), b;

	spin(ns);
	b = now_ns();
	note("inner", a, b);
}

__attribute__((noinline)) void nap(void)
{
	usleep(300);
}

__attribute__((noinline)) void step(int i, int t)
{
	unsigned long long a = now_ns(), ms = 1 + (unsigned long long)((i + t) % 3), b;

	spin(ms * 500000);
	inner(ms * 500000);
	b = now_ns();
	note("step", a, b);
}

__attribute__((noinline)) void final(void)
{
	raise(SIGKILL);
}

static void *run(void *arg)
{
	int t = (int)(long)arg;

	thread_no = t;
	for (int i = 0; i < nsteps; i++) {
		step(i, t);
		if (i)
			nap();
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t a, b;

	raw_clock = (int (*)(clockid_t, struct timespec *))dlsym(RTLD_DEFAULT, "clock_gettime");
	if (!raw_clock)
		return 2;
	nsteps = argc > 1 ? atoi(argv[1]) : 6;
	if (nsteps < 1 || nsteps > MAXN)
		return 2;
	setvbuf(stdout, NULL, _IONBF, 0);
	if (pthread_create(&a, NULL, run, (void *)1L) || pthread_join(a, NULL) ||
	    pthread_create(&b, NULL, run, (void *)2L) || pthread_join(b, NULL))
		return 1;
	run((void *)0L);
	for (int t = 0; t < 3; t++)
		for (int k = 0; k < nstamps[t]; k++)
			printf("%ld %s %llu %llu\n", stamps[t][k].tid, stamps[t][k].name, stamps[t][k].a,
			       stamps[t][k].b);
	if (argc > 2 && !strcmp(argv[2], "kill"))
		final();
	return 0;
}
