/*
 * e2e_notsc — a program that turns its time-stamp counter off (rdtsc then
 * faults on kernels that honour it; a profiler must not make it fault):
 *
 *   prctl    prctl(PR_SET_TSC, PR_TSC_SIGSEGV) through libc
 *   syscall  the same through syscall(SYS_prctl, ...)
 *   enable   prctl off, then PR_TSC_ENABLE again before on_again()
 *   strict   seccomp strict mode, then a SIGSEGV of its own, caught by
 *            its own handler (installed before), which leaves with SYS_exit
 *
 * timed() 100 times before (each spins ~20 us), untimed() 100000 times
 * after, each calling leaf(); a thread made after runs worker() 1000 times
 * (it inherits the setting); on_again() 10 times after re-enabling.
 * Prints "done" (or "caught" in strict mode) and exits 0.
 */
#define _GNU_SOURCE
#include <linux/seccomp.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long sink;

static void spin_us(long us)
{
	struct timespec a, b;

	clock_gettime(CLOCK_MONOTONIC, &a);
	do
		clock_gettime(CLOCK_MONOTONIC, &b);
	while ((b.tv_sec - a.tv_sec) * 1000000 + (b.tv_nsec - a.tv_nsec) / 1000 < us);
}

__attribute__((noinline)) void leaf(void) { sink++; }
__attribute__((noinline)) void timed(void) { leaf(); spin_us(20); }
__attribute__((noinline)) void untimed(void) { leaf(); }
__attribute__((noinline)) void on_again(void) { leaf(); spin_us(1000); }
__attribute__((noinline)) void *worker(void *arg)
{
	for (int i = 0; i < 1000; i++)
		leaf();
	return arg;
}

static void on_segv(int sig)
{
	(void)sig;
	if (write(1, "caught\n", 7) != 7)
		syscall(SYS_exit, 4);
	syscall(SYS_exit, 0);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "prctl";
	pthread_t th;

	for (int i = 0; i < 100; i++)
		timed();
	if (!strcmp(mode, "strict")) {
		signal(SIGSEGV, on_segv);
		if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_STRICT))
			return 2;
		for (int i = 0; i < 100000; i++)
			untimed();
		*(volatile int *)(uintptr_t)argc = 0;   /* the program's own fault */
		syscall(SYS_exit, 5);
	}
	if (!strcmp(mode, "syscall") ? syscall(SYS_prctl, PR_SET_TSC, PR_TSC_SIGSEGV, 0, 0, 0)
				     : prctl(PR_SET_TSC, PR_TSC_SIGSEGV, 0, 0, 0))
		return 2;
	for (int i = 0; i < 100000; i++)
		untimed();
	if (pthread_create(&th, NULL, worker, NULL) || pthread_join(th, NULL))
		return 3;
	if (!strcmp(mode, "enable")) {
		if (prctl(PR_SET_TSC, PR_TSC_ENABLE, 0, 0, 0))
			return 2;
		for (int i = 0; i < 10; i++)
			on_again();
	}
	if (write(1, "done\n", 5) != 5)
		return 3;
	return 0;
}
