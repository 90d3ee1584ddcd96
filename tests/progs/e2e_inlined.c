/*
 * e2e_inlined — 160 functions inlined into one host (what -O2 makes of a
 * big interpreter loop such as sqlite3VdbeExec): with
 * -finstrument-functions, each inlined body keeps its hooks, and all of
 * them pass the host's return address as their call site.  Each inlined
 * function calls leaf() (a real call) and, every other one, another
 * inlined function.  host() runs them all N times.
 *
 *   e2e_inlined [N]     N rounds (default 1000); prints the sum
 */
#include <stdio.h>
#include <stdlib.h>

static volatile unsigned long sink;

__attribute__((noinline)) void leaf(unsigned long x) { sink += x; }

__attribute__((always_inline)) static inline void inner(unsigned long x) { leaf(x ^ 1); }

#define F(i) __attribute__((always_inline)) static inline void in##i(unsigned long x) \
	{ leaf(x + i); if (i & 1) inner(x); }
#define F10(d) F(d##0) F(d##1) F(d##2) F(d##3) F(d##4) F(d##5) F(d##6) F(d##7) F(d##8) F(d##9)
F10(1) F10(2) F10(3) F10(4) F10(5) F10(6) F10(7) F10(8) F10(9) F10(10) F10(11) F10(12) F10(13) F10(14) F10(15) F10(16)

#define C(i) in##i(r);
#define C10(d) C(d##0) C(d##1) C(d##2) C(d##3) C(d##4) C(d##5) C(d##6) C(d##7) C(d##8) C(d##9)

__attribute__((noinline)) void host(unsigned long r)
{
	C10(1) C10(2) C10(3) C10(4) C10(5) C10(6) C10(7) C10(8)
	C10(9) C10(10) C10(11) C10(12) C10(13) C10(14) C10(15) C10(16)
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000;

	for (long r = 0; r < n; r++)
		host((unsigned long)r);
	printf("%lu\n", sink);
	return 0;
}
