/* bench/libcall_alt.c — library calls and function probes alternating in one
 * process: 25 rounds of 500,000 labs(), 500,000 my_abs() and 500,000 inline
 * computations; prints the minimum thread CPU per call (ns) of each block
 * over the inline one.  Build with hooks (-finstrument-functions
 * -finstrument-functions-exclude-function-list=main,tcpu) and without
 * (patched), run under `stackclock record -m instrument -F 0`. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
static volatile long sink;
__attribute__((noinline)) long my_abs(long x) { return x < 0 ? -x : x; }
__attribute__((noinline, no_instrument_function)) long plain_abs(long x) { __asm__ volatile(""); return x < 0 ? -x : x; }
static double tcpu(void) { struct timespec ts; clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts); return ts.tv_sec * 1e9 + ts.tv_nsec; }
int main(int argc, char **argv)
{
	long n = 500000; int rounds = argc > 1 ? atoi(argv[1]) : 25;
	double mA = 1e30, mB = 1e30, mC = 1e30;
	for (int r = 0; r < rounds; r++) {
		double t0 = tcpu();
		for (long i = 0; i < n; i++) sink += labs(i - n / 2);
		double t1 = tcpu();
		for (long i = 0; i < n; i++) sink += my_abs(i - n / 2);
		double t2 = tcpu();
		for (long i = 0; i < n; i++) { long x = i - n / 2; __asm__ volatile("" : "+r"(x)); sink += x < 0 ? -x : x; }
		double t3 = tcpu();
		if (t1 - t0 < mA) mA = t1 - t0;
		if (t2 - t1 < mB) mB = t2 - t1;
		if (t3 - t2 < mC) mC = t3 - t2;
	}
	printf("lib %.1f fn %.1f base %.1f\n", (mA - mC) / n, (mB - mC) / n, mC / n);
	return 0;
}
