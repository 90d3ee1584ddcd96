/*
 * jumps — longjmp() and its kin, watched: a jump up the stack closes the
 * frames below its target at once, and frees a probe that a signal
 * handler left by a jump.
 */
#include "runtime/rt.h"

#include <dlfcn.h>

/*
 * The program's jumps pass through these wrappers.  A jump up the stack is
 * an event at which the stack is known to have unwound past the frames
 * below its target (SPEC section 2): they are closed now, by the repair
 * rule, rather than at the next probe (which would charge the time until
 * then, a handler's return to its loop say, to a frame already gone).
 *
 * A signal handler that interrupted a probe and leaves by longjmp never
 * returns to it: the probe stays busy, and every event after it would be
 * queued as a handler's (until one comes from above the abandoned probe's
 * stack pointer, which a program whose handler fires before its next call
 * at that depth never makes: the queue overflowed, and nothing more was
 * recorded).  A jump to a stack pointer above the busy probe's, on the same
 * stack, leaves it for good: what its handler queued is applied now and
 * the thread is free.  A jump elsewhere (within the handler, or to another
 * stack, as a user-level scheduler's) leaves the probe to be resumed.
 */
#define RT_JB_RSP 6                    /* glibc x86-64 __jmp_buf: rsp, mangled */

static uint64_t jmpbuf_sp(const void *env)
{
	uint64_t v = ((const uint64_t *)env)[RT_JB_RSP], guard;

	__asm__("mov %%fs:0x30, %0" : "=r"(guard));   /* glibc's pointer guard */
	v = (v >> 0x11) | (v << (64 - 0x11));
	return v ^ guard;
}

static void jump_seen(const void *env)
{
	struct sc_eng_thread *t = rt_thread();
	uintptr_t busy = tls.busy, here = stack_pointer();
	uint64_t to, now;

	if (!t || tls.state != RT_ON || !*rt_alive)
		return;
	to = jmpbuf_sp(env);
	if (busy) {
		if (to <= busy || to - busy >= SC_ENG_CFA_NEAR)
			return;
		probe_replay(t);       /* the abandoned probe's handler's events */
	} else if (to <= here || to - here >= SC_ENG_CFA_NEAR) {
		return;
	}
	tls.busy = here;
	barrier();
	now = rt_clock();
	if (unlikely(sc_rt_clk.off)) {
		now = t->last_raw;
		ring_discard();
	} else if (*tls.ring_head != tls.ring_seen) {
		rt_os_drain(t, now);
	}
	t->cost_skip = 1;              /* no probe ran in this interval */
	{
		uint32_t cause = sc_eng_more_of(t)->repair_cause;

		/* leaving a probe a signal interrupted: out of its handler */
		sc_eng_more_of(t)->repair_cause = busy ? SC_ENG_REPAIR_SIGNAL : SC_ENG_REPAIR_LONGJMP;
		sc_eng_cfa_repair(t, 0, 0, to, sc_eng_now(t, now, 1));
		sc_eng_more_of(t)->repair_cause = cause;
	}
	probe_done(t);
}

typedef void (*rt_jump_fn)(void *, int);
static rt_jump_fn rt_jump_real[4];
static const char *const rt_jump_name[4] = { "longjmp", "_longjmp", "siglongjmp", "__longjmp_chk" };

static __attribute__((noreturn)) void jump_on(int which, void *env, int val)
{
	rt_jump_fn f = __atomic_load_n(&rt_jump_real[which], __ATOMIC_RELAXED);

	jump_seen(env);
	if (!f) {                      /* before the constructor: rare */
		f = (rt_jump_fn)dlsym(RTLD_NEXT, rt_jump_name[which]);
		if (!f)
			rt_sys1(SYS_exit_group, 127);
	}
	f(env, val);
	__builtin_unreachable();
}

/* The C library's: always in the global scope, where dlsym() finds them
 * (unlike the unwinder's, retstack.c's rs_sym); jump_on() never calls NULL. */
void jumps_resolve(void)
{
	for (int i = 0; i < 4; i++)
		__atomic_store_n(&rt_jump_real[i], (rt_jump_fn)dlsym(RTLD_NEXT, rt_jump_name[i]),
				 __ATOMIC_RELAXED);
}

HOOK __attribute__((noreturn)) void longjmp(void *env, int val);
HOOK __attribute__((noreturn)) void _longjmp(void *env, int val);
HOOK __attribute__((noreturn)) void siglongjmp(void *env, int val);
HOOK __attribute__((noreturn)) void __longjmp_chk(void *env, int val);
void longjmp(void *env, int val) { jump_on(0, env, val); }
void _longjmp(void *env, int val) { jump_on(1, env, val); }
void siglongjmp(void *env, int val) { jump_on(2, env, val); }
void __longjmp_chk(void *env, int val) { jump_on(3, env, val); }

/* The same by names never preempted: loaded into a running process, the
 * runtime comes after libc, and attach.c points the program's GOT slots
 * for the four at these (retstack.c's sc_patch_wraps). */
void sc_w_longjmp(void *env, int val) { jump_on(0, env, val); }
void sc_w__longjmp(void *env, int val) { jump_on(1, env, val); }
void sc_w_siglongjmp(void *env, int val) { jump_on(2, env, val); }
void sc_w___longjmp_chk(void *env, int val) { jump_on(3, env, val); }
