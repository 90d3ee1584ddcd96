/*
 * A program attached to (t330) that leaves patched frames by longjmp: each
 * round, fail() longjmps from three frames deep (mid > op > fail) back to
 * main's setjmp for one i in four.  SIGTERM ends it: "ok ROUNDS JUMPS",
 * status 0 when every round made its 250 jumps.
 */
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>
static jmp_buf env;
static volatile sig_atomic_t done;
static volatile unsigned long sink;
__attribute__((noinline)) void fail(int i) { sink += i; longjmp(env, 1); }
__attribute__((noinline)) void op(int i) { if (i % 4 == 0) fail(i); sink += i; }
__attribute__((noinline)) void mid(int i) { op(i); sink++; }
static void on_term(int s) { (void)s; done = 1; }
int main(void)
{
	unsigned long jumps = 0, rounds = 0;
	signal(SIGTERM, on_term);
	while (!done) {
		for (volatile int i = 0; i < 1000; i++) {
			if (setjmp(env)) { jumps++; continue; }
			mid(i);
		}
		rounds++;
		usleep(100);
	}
	printf("ok %lu %lu\n", rounds, jumps);
	return jumps == rounds * 250 ? 0 : 1;
}
