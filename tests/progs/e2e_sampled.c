/*
 * Sampled shares in instrumentation (SPEC section 14), against the
 * program's own measure.  heavy() and light() spin on the thread's CPU
 * clock for 3 and 1 units (long calls: the probes' share of them is
 * nothing), tiny() is called a great many times (a call-dense part, where
 * samples land in the probes' code too).  Prints the CPU time each took,
 * measured by the program itself around its calls:
 *	heavy_ns light_ns tiny_ns total_ns
 * Usage: e2e_sampled UNIT_US ROUNDS [exit|kill]
 *   exit: the last round calls exit() from inside deep() (3 frames open),
 *   kill: it sends itself SIGKILL there.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static unsigned long cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (unsigned long)ts.tv_sec * 1000000000ul + (unsigned long)ts.tv_nsec;
}

static volatile unsigned long sink;

__attribute__((noinline)) void spin(unsigned long ns)
{
	unsigned long end = cpu_ns() + ns;

	while (cpu_ns() < end)
		sink++;
}

__attribute__((noinline)) void heavy(unsigned long unit) { spin(3 * unit); }
__attribute__((noinline)) void light(unsigned long unit) { spin(unit); }
__attribute__((noinline)) void tiny(void) { sink++; }

__attribute__((noinline)) void deep3(const char *how)
{
	fflush(stdout);
	if (how[0] == 'e')
		exit(0);
	kill(getpid(), SIGKILL);
}
__attribute__((noinline)) void deep2(const char *how) { deep3(how); sink++; }
__attribute__((noinline)) void deep(const char *how) { deep2(how); sink++; }

int main(int argc, char **argv)
{
	unsigned long unit = (argc > 1 ? strtoul(argv[1], NULL, 10) : 200) * 1000;
	int rounds = argc > 2 ? atoi(argv[2]) : 100;
	unsigned long h = 0, l = 0, t = 0, t0 = cpu_ns(), a;

	for (int r = 0; r < rounds; r++) {
		a = cpu_ns();
		heavy(unit);
		h += cpu_ns() - a;
		a = cpu_ns();
		light(unit);
		l += cpu_ns() - a;
		a = cpu_ns();
		for (int i = 0; i < 20000; i++)
			tiny();
		t += cpu_ns() - a;
	}
	printf("%lu %lu %lu %lu\n", h, l, t, cpu_ns() - t0);
	if (argc > 3)
		deep(argv[3]);
	return 0;
}
