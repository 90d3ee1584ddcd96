/*
 * Generators whose function returns (t327): drive() makes a context on one
 * of two stacks, in turn, with main's context as its uc_link, and resumes
 * it 6 times: gen() yields 5 values (yield_val: one work() each, then a
 * switch back), then returns, and the C library switches to the link.
 * 100 generators, so each stack is made again 50 times.  Calls: main 1,
 * drive 100, gen 100, yield_val 500, work 500; every one returns.  Prints
 * 3500.
 */
#include <stdio.h>
#include <ucontext.h>

static ucontext_t main_uc, co_uc;
static char stack[2][64 << 10];
static long total;

__attribute__((noinline)) long work(long x)
{
	return x * 3 + 1;
}

__attribute__((noinline)) void yield_val(long v)
{
	total += work(v);
	swapcontext(&co_uc, &main_uc);
}

__attribute__((noinline)) void gen(int n)
{
	for (int i = 0; i < n; i++)
		yield_val(i);
}

__attribute__((noinline)) void drive(int k)
{
	getcontext(&co_uc);
	co_uc.uc_stack.ss_sp = stack[k & 1];
	co_uc.uc_stack.ss_size = sizeof(stack[0]);
	co_uc.uc_link = &main_uc;
	makecontext(&co_uc, (void (*)(void))gen, 1, 5);
	for (int i = 0; i < 6; i++)
		swapcontext(&main_uc, &co_uc);
}

int main(void)
{
	for (int k = 0; k < 100; k++)
		drive(k);
	printf("%ld\n", total);
	return 0;
}
