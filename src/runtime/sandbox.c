/*
 * sandbox — the program's prctl() and syscall() calls, watched for what
 * would break the runtime: a seccomp filter or strict mode about to close
 * (a last reserve of memory committed, then no system call of ours), and
 * the time-stamp counter turned off or on for the thread (PR_SET_TSC, and
 * strict mode on some kernels, found out by a SIGSEGV probe).
 */
#include "runtime/rt.h"

#include <errno.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stdarg.h>
#include <sys/prctl.h>
#include <ucontext.h>

#define SECCOMP_RESERVE (8ul << 20) /* committed before a sandbox closes */

/*
 * A program that enters seccomp (strict mode, or a filter that may forbid
 * mmap, fallocate, perf_event_open ...) would be killed by our next system
 * call.  These wrappers see it coming: the runtime commits a last reserve
 * of memory while it still may, then makes no system call again (new
 * threads, more memory and OS events are given up and the loss recorded
 * with its reason).  The program's call itself is passed on unchanged.
 */
static void sandbox_enter(void)
{
	if (rt.state != RT_ON || rt.sandboxed || !*rt_alive)
		return;
	/*
	 * The calling thread's own state, made now if it has made no call
	 * yet (its first call inside would need gettid, mmap and perf events:
	 * its events were lost), its larger state and its return stack for
	 * library calls (an mmap at its first one: strict mode killed the
	 * program there).
	 */
	if (tls.state == RT_NEW && !tls.busy) {
		uintptr_t sp = (uintptr_t)__builtin_frame_address(0);
		struct sc_eng_thread *t;

		tls.busy = sp;
		barrier();
		t = thread_start(sp);
		if (t)
			probe_done(t);
		else
			tls.busy = 0;
	}
	if (tls.state == RT_ON) {
		rt_ext();
		sc_rs_prepare();
	}
	sc_modules_prepare();
	commit_to(__atomic_load_n(&rt.hdr->arena.bump, __ATOMIC_RELAXED) + SECCOMP_RESERVE);
	__atomic_store_n(&rt.sandboxed, 1, __ATOMIC_RELEASE);
	why(SC_SHM_WHY_SECCOMP);
}

static long sys_result(long r)
{
	if (r < 0 && r > -4096) {
		errno = (int)-r;
		return -1;
	}
	return r;
}

/* ---- a thread without the time-stamp counter ---------------------------- */

/*
 * The kernel can turn rdtsc off for a thread (prctl PR_SET_TSC, and on some
 * kernels seccomp's strict mode): it then faults.  Such a thread's probes
 * never read the clock again: tls.t is NULL (every probe takes the cold
 * path, which counts the call at the previous reading, untimed) and the
 * exit trampoline skips its rdtsc.  The report says so (SC_SHM_WHY_NOTSC).
 */
int tsc_refused(void)
{
	int mode = 0;

	return !rt_sys2(SYS_prctl, PR_GET_TSC, &mode) && mode == PR_TSC_SIGSEGV;
}

void tsc_off(void)
{
	struct sc_eng_thread *t = tls.t;

	if (sc_rt_clk.off)
		return;
	if (t) {
		sc_eng_set_cost(t, 0, 0, 0, 0, 0);   /* no time, no cost to take out */
		tls.t_notsc = t;
	}
	barrier();
	sc_rt_clk.off = 1;
	barrier();
	tls.t = NULL;
	why(SC_SHM_WHY_NOTSC);
}

static void tsc_on(void)
{
	struct sc_eng_thread *t = tls.t_notsc;

	if (!sc_rt_clk.off)
		return;
	if (t)
		sc_eng_set_cost(t, rt.cost[0], rt.cost[1], rt.cost[2], rt.cost[3], rt.cost[4]);
	tls.t_notsc = NULL;
	tls.t = t;
	barrier();
	sc_rt_clk.off = 0;
}

/*
 * Strict seccomp leaves no system call to ask the kernel whether rdtsc
 * still works: one rdtsc is tried right after entering it, with a SIGSEGV
 * handler installed just before.  A fault there turns the clock off; any
 * other fault goes to the program's own handler.  Strict mode forbids
 * putting the program's disposition back, so the handler stays: for good
 * when the program had a handler of its own (every later fault is passed
 * to it), for one fault (SA_RESETHAND) when it had none (the default
 * action comes back by itself).
 */
void sc_rt_tsc_try(void);
__asm__(".text\n"
	".globl sc_rt_sigreturn\n"
	".hidden sc_rt_sigreturn\n"
	".type sc_rt_sigreturn, @function\n"
	"sc_rt_sigreturn:\n"
	"\tmov $15, %eax\n"              /* rt_sigreturn */
	"\tsyscall\n"
	".size sc_rt_sigreturn, .-sc_rt_sigreturn\n"
	".type sc_rt_tsc_try, @function\n"
	"sc_rt_tsc_try:\n"
	"\trdtsc\n"                      /* 2 bytes: a fault skips them */
	"\tret\n"
	".size sc_rt_tsc_try, .-sc_rt_tsc_try\n");

static struct rt_ksigaction tsc_old_segv;
static volatile int tsc_faulted;

static void tsc_segv(int sig, siginfo_t *si, void *uc_)
{
	ucontext_t *uc = uc_;
	void *h = tsc_old_segv.handler;

	if (uc->uc_mcontext.gregs[REG_RIP] == (greg_t)(uintptr_t)sc_rt_tsc_try) {
		tsc_faulted = 1;
		uc->uc_mcontext.gregs[REG_RIP] += 2;
		return;
	}
	if (h == SIG_DFL || h == SIG_IGN)
		return;                 /* the fault again, now with the default action */
	if (tsc_old_segv.flags & SA_SIGINFO)
		((void (*)(int, siginfo_t *, void *))h)(sig, si, uc_);
	else
		((void (*)(int))h)(sig);
}

/* Before the call entering strict mode: 1 if the probe is armed. */
static int tsc_probe_arm(void)
{
	struct rt_ksigaction sa = { (void *)tsc_segv, SA_SIGINFO | SA_NODEFER | SA_RESTORER, sc_rt_sigreturn, 0 };
	uint64_t blocked = 0;

	if (sc_rt_clk.off || rt_sys4(SYS_rt_sigprocmask, SIG_BLOCK, 0, &blocked, 8) ||
	    rt_sys4(SYS_rt_sigaction, SIGSEGV, 0, &tsc_old_segv, 8))
		return 0;
	if (blocked & (1ull << (SIGSEGV - 1))) {
		tsc_off();               /* a fault would kill: no clock, safely */
		return 0;
	}
	if (tsc_old_segv.handler == SIG_DFL || tsc_old_segv.handler == SIG_IGN)
		sa.flags |= SA_RESETHAND;
	else {
		/* the program's handler is run by this one from now on: with
		 * its own stack (Rust's stack-overflow handler runs on the
		 * alternate one) and mask */
		sa.flags = (sa.flags & ~SA_NODEFER) | (tsc_old_segv.flags & (SA_ONSTACK | SA_NODEFER));
		sa.mask = tsc_old_segv.mask;
	}
	return !rt_sys4(SYS_rt_sigaction, SIGSEGV, &sa, 0, 8);
}

/* After it: entered (the handler stays, reset by its first use) or not. */
static void tsc_probe(int armed, int entered)
{
	if (!armed)
		return;
	if (!entered) {
		rt_sys4(SYS_rt_sigaction, SIGSEGV, &tsc_old_segv, 0, 8);
		return;
	}
	tsc_faulted = 0;
	barrier();
	sc_rt_tsc_try();
	barrier();
	if (tsc_faulted)
		tsc_off();
}

/*
 * The program's prctl and seccomp calls, through either wrapper: a sandbox
 * about to close, the TSC turned off or on.
 */
static long guarded_call(long nr, const long a[6])
{
	int strict = (nr == SYS_seccomp && a[0] == SECCOMP_SET_MODE_STRICT) ||
		     (nr == SYS_prctl && a[0] == PR_SET_SECCOMP && a[1] == SECCOMP_MODE_STRICT);
	int tsc_set = nr == SYS_prctl && a[0] == PR_SET_TSC, armed = 0;
	long r;

	if (nr == SYS_seccomp || (nr == SYS_prctl && a[0] == PR_SET_SECCOMP))
		sandbox_enter();
	if (rt.state == RT_ON && tsc_set && a[1] == PR_TSC_SIGSEGV)
		tsc_off();               /* before: a signal handler in between must not read it */
	if (rt.state == RT_ON && strict)
		armed = tsc_probe_arm();
	r = rt_sys6(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
	if (rt.state == RT_ON && tsc_set && (r ? a[1] == PR_TSC_SIGSEGV && !tsc_refused() : a[1] == PR_TSC_ENABLE))
		tsc_on();
	tsc_probe(armed, r == 0);
	return sys_result(r);
}

HOOK int prctl(int option, ...);
HOOK long syscall(long nr, ...);

int prctl(int option, ...)
{
	long a[6] = { option };
	va_list ap;
	int i;

	va_start(ap, option);
	for (i = 1; i < 5; i++)
		a[i] = (long)va_arg(ap, unsigned long);
	va_end(ap);
	return (int)guarded_call(SYS_prctl, a);
}

long syscall(long nr, ...)
{
	long a[6];
	va_list ap;
	int i;

	va_start(ap, nr);
	for (i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	return guarded_call(nr, a);
}
