/*
 * Coroutines on stacks next to each other (t701): run_a and run_b each run
 * on a 256 KiB stack of one mapping and hand over to each other with
 * swapcontext 1000 times each, calling work() between.  Under run-time
 * patching the returns must never be routed to the other stack's frames
 * (before, a return of step_a went to step_b's caller and the program
 * looped forever); counts stay exact: run_a 1, run_b 1, step_a 1000,
 * step_b 1000, work 2001.  Prints "4497500 16".
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <ucontext.h>

static ucontext_t uc_main, uc_a, uc_b;
static long total;

__attribute__((noinline)) long work(long x) { return x * 3 + 1; }

__attribute__((noinline)) void step_a(int i) { total += work(i); swapcontext(&uc_a, &uc_b); }
__attribute__((noinline)) void step_b(int i) { total += work(i * 2); swapcontext(&uc_b, &uc_a); }

__attribute__((noinline)) void run_a(void) { for (int i = 0; i < 1000; i++) step_a(i); }
__attribute__((noinline)) void run_b(void) { for (int i = 0; i < 1000; i++) step_b(i); swapcontext(&uc_b, &uc_main); }

int main(void)
{
	size_t sz = 256 << 10;
	char *st = mmap(NULL, 2 * sz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

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
	swapcontext(&uc_main, &uc_a);
	printf("%ld %ld\n", total, work(5));
	return 0;
}
