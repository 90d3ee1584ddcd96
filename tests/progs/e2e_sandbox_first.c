/*
 * e2e_sandbox_first — a program whose first call the runtime sees comes
 * after it entered seccomp's strict mode: main is not instrumented and
 * makes no call before prctl(), then calls f00..f199 once each, directly,
 * and write()s "ok".  The runtime must have made the thread's state, its
 * library-call return stack and the module table before the sandbox
 * closed (each needs a system call later: strict mode kills the process,
 * status 137, before it prints "ok").  Leaves by SYS_exit; exits 0.
 */
#define _GNU_SOURCE
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

static volatile unsigned long sink;

#define F(n) __attribute__((noinline)) void f##n(void) { sink += 1##n; }
#define F10(x) F(x##0) F(x##1) F(x##2) F(x##3) F(x##4) F(x##5) F(x##6) F(x##7) F(x##8) F(x##9)
F10(0) F10(1) F10(2) F10(3) F10(4) F10(5) F10(6) F10(7) F10(8) F10(9)
F10(10) F10(11) F10(12) F10(13) F10(14) F10(15) F10(16) F10(17) F10(18) F10(19)

#define C(n) f##n();
#define C10(x) C(x##0) C(x##1) C(x##2) C(x##3) C(x##4) C(x##5) C(x##6) C(x##7) C(x##8) C(x##9)

__attribute__((no_instrument_function)) int main(void)
{
	if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_STRICT))
		return 2;
	C10(0) C10(1) C10(2) C10(3) C10(4) C10(5) C10(6) C10(7) C10(8) C10(9)
	C10(10) C10(11) C10(12) C10(13) C10(14) C10(15) C10(16) C10(17) C10(18) C10(19)
	if (write(1, "ok\n", 3) != 3)
		return 3;
	syscall(SYS_exit, 0);
	return 0;
}
