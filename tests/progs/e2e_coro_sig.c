/*
 * Coroutines under a signal storm (t327): patch_coro.c's two coroutines,
 * on neighbouring stacks of one mapping, switch to each other directly N
 * times each (default 20000) while a 100 us SIGALRM timer runs a handler
 * that calls h_work().  A signal is delivered in the C library's switch
 * too, at its system call, before the stack changes.  Calls: run_a 1,
 * run_b 1, step_a N, step_b N, work 2N; on_alrm and h_work as printed.
 * run_a returns to its uc_link (main); run_b stays suspended.
 * Prints "TOTAL h HANDLERS".
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/time.h>
#include <ucontext.h>

static ucontext_t uc_main, uc_a, uc_b;
static long total;
static int iters;
static unsigned long n_h;

__attribute__((noinline)) void h_work(void)
{
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void on_alrm(int sig)
{
	(void)sig;
	n_h++;
	h_work();
}

__attribute__((noinline)) long work(long x) { return x * 3 + 1; }
__attribute__((noinline)) void step_a(int i) { total += work(i); swapcontext(&uc_a, &uc_b); }
__attribute__((noinline)) void step_b(int i) { total += work(i * 2); swapcontext(&uc_b, &uc_a); }
__attribute__((noinline)) void run_a(void) { for (int i = 0; i < iters; i++) step_a(i); }
__attribute__((noinline)) void run_b(void) { for (int i = 0; i < iters; i++) step_b(i); swapcontext(&uc_b, &uc_main); }

int main(int argc, char **argv)
{
	size_t sz = 256 << 10;
	char *st = mmap(NULL, 2 * sz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct sigaction sa = { 0 };
	struct itimerval on = { { 0, 100 }, { 0, 100 } }, off = { { 0, 0 }, { 0, 0 } };

	iters = argc > 1 ? atoi(argv[1]) : 20000;
	getcontext(&uc_a);
	uc_a.uc_stack.ss_sp = st;
	uc_a.uc_stack.ss_size = sz;
	uc_a.uc_link = &uc_main;
	makecontext(&uc_a, run_a, 0);
	getcontext(&uc_b);
	uc_b.uc_stack.ss_sp = st + sz;
	uc_b.uc_stack.ss_size = sz;
	uc_b.uc_link = &uc_main;
	makecontext(&uc_b, run_b, 0);
	sa.sa_handler = on_alrm;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, NULL);
	setitimer(ITIMER_REAL, &on, NULL);
	swapcontext(&uc_main, &uc_a);
	setitimer(ITIMER_REAL, &off, NULL);
	printf("%ld h %lu\n", total, n_h);
	return 0;
}
