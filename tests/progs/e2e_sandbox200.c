/*
 * e2e_sandbox200 — 200 distinct functions called inside seccomp's strict
 * mode: the runtime must make no system call once the sandbox is closed
 * (strict mode kills the process at any call but read, write, exit and
 * sigreturn), and record from the memory it reserved before.
 *
 *   e2e_sandbox200 strict [LEVEL]
 *
 * main calls f00..f199 once each; a function called at level l > 0 calls
 * all 200 again at level l - 1, so each function is called
 * 1 + 200 + ... + 200^LEVEL times, from 200^(LEVEL+1) calling contexts
 * (LEVEL 1: 40,200 contexts, more than a small reserve holds when the
 * call-site table grows too; LEVEL 2: 8,040,200, more than any reserve:
 * what does not fit is given up and counted).  Without "strict" the same
 * calls run outside a sandbox.  Prints "ok" with write(2) and leaves by
 * SYS_exit (strict mode allows no exit_group); exits 0.
 */
#define _GNU_SOURCE
#include <linux/seccomp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

typedef void fn_t(int);
static volatile unsigned long sink;
extern fn_t *const table[200];

#define F(n) __attribute__((noinline)) void f##n(int l) \
	{ sink++; if (l > 0) for (int j = 0; j < 200; j++) table[j](l - 1); }
#define F10(x) F(x##0) F(x##1) F(x##2) F(x##3) F(x##4) F(x##5) F(x##6) F(x##7) F(x##8) F(x##9)
F10(0) F10(1) F10(2) F10(3) F10(4) F10(5) F10(6) F10(7) F10(8) F10(9)
F10(10) F10(11) F10(12) F10(13) F10(14) F10(15) F10(16) F10(17) F10(18) F10(19)

#define P(n) f##n,
#define P10(x) P(x##0) P(x##1) P(x##2) P(x##3) P(x##4) P(x##5) P(x##6) P(x##7) P(x##8) P(x##9)
fn_t *const table[200] = {
	P10(0) P10(1) P10(2) P10(3) P10(4) P10(5) P10(6) P10(7) P10(8) P10(9)
	P10(10) P10(11) P10(12) P10(13) P10(14) P10(15) P10(16) P10(17) P10(18) P10(19)
};

int main(int argc, char **argv)
{
	int strict = argc > 1 && !strcmp(argv[1], "strict");
	int level = argc > 2 ? atoi(argv[2]) : 0;

	if (strict && prctl(PR_SET_SECCOMP, SECCOMP_MODE_STRICT))
		return 2;
	for (int j = 0; j < 200; j++)
		table[j](level);
	if (write(1, "ok\n", 3) != 3)
		return 3;
	if (strict)
		syscall(SYS_exit, 0);
	return 0;
}
