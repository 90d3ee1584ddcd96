/*
 * ctx — user-level context switches (swapcontext, setcontext): coroutines
 * and green threads that run on stacks of their own.
 *
 * The engine keeps one stack of open calls per thread of execution, and
 * a context switch moves the thread to another stack, whose frames were
 * suspended and are resumed as they were, perhaps on another thread.  So
 * each context is a thread of execution of its own here: its own engine
 * thread (its own calling-context tree, named by the thread that first ran
 * it) and its own return stack (retstack.c, the patched functions' and
 * library calls' return addresses).  A switch suspends the running
 * context's engine thread (the interval up to the switch is its top's)
 * and resumes the target's: the time it spent suspended is left out of
 * its open frames (sc_eng_resume), its frames' exits come when it runs
 * again, on whatever thread that is, and a context suspended at the end
 * has its frames open, as any frame open at the end.  A fresh context
 * (made by makecontext, never run) starts with an empty stack: its
 * function is a root of its tree, as a thread's start function is.
 *
 * A context is found from the ucontext_t switched to:
 *  - by the stack it describes (uc_stack, which makecontext reads and
 *    swapcontext keeps), when its saved stack pointer is inside it: every
 *    context saved on a coroutine's stack, and a fresh one;
 *  - else by the ucontext_t's address, when that is where a context was
 *    last saved by a switch seen here (a thread's own stack, whose extent
 *    no ucontext_t gives);
 *  - else by a scan of the known stacks for its stack pointer (a context
 *    saved by getcontext, which cannot be wrapped: it returns twice).
 * A target found nowhere is switched to as before this file existed: the
 * engine thread stays, frames left behind are closed by the position rule
 * (SPEC section 2), every return address goes back (retstack.c).
 *
 * A made context's function that returns goes to its uc_link through the
 * C library's own switch, which no wrapper sees: makecontext is wrapped to
 * make it return to a landing context of ours first, on the end of its
 * stack, which follows the switch to the link (a context whose link is
 * NULL ends the thread's process, as without us).
 *
 * Signals are blocked across a followed switch (see ctx_block), except at
 * the first switch to a context made where no wrapper saw (or with more
 * than CTX_ARGS arguments): a handler run inside the C library's switch
 * there goes to the target's engine thread.
 *
 * Not followed: switches in a process attached to (SPEC section 13: its
 * frames' return addresses must all be back at the detach, and only each
 * thread's running return stack is put back then); the thread's end while
 * it runs a context other than its own (the context's engine thread is
 * never retired).
 */
#include "runtime/rt.h"

#include <dlfcn.h>
#include <signal.h>
#include <stdarg.h>
#include <sys/mman.h>
#include <ucontext.h>

struct rt_ctx {
	uint64_t lo, hi;               /* its stack (uc_stack), 0 0 for a thread's own */
	const void *saved_at;          /* the ucontext_t it was last saved in by a switch */
	struct sc_eng_thread *t;       /* its engine thread, NULL until it first runs */
	struct rs_stack *rs;           /* its return stack (NULL: none yet) */
	uint64_t susp;                 /* clock reading when it was suspended */
	int running;
	int pid;                       /* the process it was made in */
	/* a made context's uc_link, and where its function returns instead:
	 * a context on the end of its own stack that switches to the link */
	const ucontext_t *link;
	ucontext_t landing;
	/* a made context starts at ctx_start_asm, which calls func */
	void (*func)(void);
	uint64_t start_mask;           /* the signal mask it starts with */
	int start_blocked;             /* 1: it starts with every signal blocked
					  and ctx_started() sets start_mask */
	int ran;                       /* it has been switched to */
};

#define CTX_MAX   (1u << 15)            /* contexts */
#define CTX_ARGS  14                    /* makecontext arguments passed on */
#define CTX_LAND_ROOM 512               /* bytes at the end of a stack left to
					   its context's first frame */
#define CTX_SLOTS (1u << 17)            /* hash slots: key -> context */

/* key: a stack's end (hi << 1 | 1) or a ucontext_t's address (addr << 1) */
struct ctx_slot {
	uint64_t key;
	struct rt_ctx *c;
};

static struct {
	int lock;
	int pid;                       /* the process the tables are of */
	uint32_t n;                    /* contexts made */
	struct rt_ctx *ctx;            /* [CTX_MAX] */
	struct ctx_slot *slot;         /* [CTX_SLOTS] */
} ctxs;

/* the context this thread runs, NULL: its own, not switched away from yet */
static inline struct rt_ctx *ctx_cur_get(void)
{
	return tls.x ? tls.x->ctx_cur : NULL;
}

static int ctx_lock(void)
{
	for (int i = 0; i < 1000000; i++) {
		if (!__atomic_exchange_n(&ctxs.lock, 1, __ATOMIC_ACQUIRE))
			return 0;
		__builtin_ia32_pause();
	}
	return -1;                     /* (a switch between threads that never ends) */
}

static void ctx_unlock(void)
{
	__atomic_store_n(&ctxs.lock, 0, __ATOMIC_RELEASE);
}

/* The tables, mapped at the first switch (under the lock); 0 or -1. */
static int ctx_map(void)
{
	long m;

	/* a fork child's copy: its parent's contexts, whose engine threads
	 * are in the parent's image, are not its own (new, empty tables) */
	if (ctxs.slot && ctxs.pid == rt.pid)
		return 0;
	ctxs.n = 0;
	ctxs.pid = rt.pid;
	m = rt_sys6(SYS_mmap, 0, (long)(CTX_MAX * sizeof(struct rt_ctx) + CTX_SLOTS * sizeof(struct ctx_slot)),
		    PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (rt_mmap_failed(m))
		return -1;
	ctxs.ctx = (struct rt_ctx *)m;
	ctxs.slot = (struct ctx_slot *)(ctxs.ctx + CTX_MAX);
	return 0;
}

static struct ctx_slot *ctx_slot(uint64_t key)
{
	uint64_t h = key * 0x9e3779b97f4a7c15ull >> 47;

	for (uint32_t i = 0; i < 64; i++) {
		struct ctx_slot *s = &ctxs.slot[(h + i) & (CTX_SLOTS - 1)];

		if (s->key == key || !s->key)
			return s;
	}
	return NULL;                   /* full near its home: not kept */
}

/* The context key names now, or NULL. */
static struct rt_ctx *ctx_find(uint64_t key)
{
	struct ctx_slot *s = ctx_slot(key);

	if (!s || s->key != key)
		return NULL;
	/* an address key is the context's only while it was last saved there */
	if (!(key & 1) && s->c->saved_at != (const void *)(uintptr_t)(key >> 1))
		return NULL;
	return s->c;
}

static struct rt_ctx *ctx_new(uint64_t lo, uint64_t hi)
{
	struct rt_ctx *c;

	if (ctxs.n >= CTX_MAX)
		return NULL;
	c = &ctxs.ctx[ctxs.n++];
	c->lo = lo;
	c->hi = hi;
	c->pid = rt.pid;
	return c;
}

static void ctx_put(uint64_t key, struct rt_ctx *c)
{
	struct ctx_slot *s = ctx_slot(key);

	if (s) {
		s->c = c;
		s->key = key;
	}
}

/* The context `to` resumes (made if it is a fresh one), or NULL. */
static struct rt_ctx *ctx_target(const ucontext_t *to)
{
	uint64_t sp = (uint64_t)to->uc_mcontext.gregs[REG_RSP];
	uint64_t lo = (uint64_t)(uintptr_t)to->uc_stack.ss_sp, hi = lo + to->uc_stack.ss_size;
	struct rt_ctx *c;

	if (to->uc_stack.ss_size && sp >= lo && sp <= hi && hi > lo) {
		c = ctx_find(hi << 1 | 1);
		if (!c && (c = ctx_new(lo, hi)))
			ctx_put(hi << 1 | 1, c);
		return c;
	}
	if ((c = ctx_find((uint64_t)(uintptr_t)to << 1)))
		return c;
	for (uint32_t i = 0; i < ctxs.n; i++)
		if (ctxs.ctx[i].hi && sp >= ctxs.ctx[i].lo && sp <= ctxs.ctx[i].hi)
			return &ctxs.ctx[i];
	return NULL;
}

/*
 * Signals around a switch.  The C library sets the target's signal mask
 * (a system call, where pending signals are delivered) before it moves to
 * the target's stack: a handler run there would be on the old stack with
 * the target's engine thread and return stack (its frames dropped the
 * target's entries, whose returns then found none: the program aborted).
 * So a followed switch blocks every signal first, and the context switched
 * away from is saved so (the C library saves the mask in its ucontext_t):
 * the switch to it arrives with signals blocked, and its own swapcontext
 * wrapper sets its mask back once on its stack (sc_ctx_unblock).  A made
 * context starts at ctx_start_asm, which does the same before calling its
 * function (the first switch to it puts a blocking mask in its ucontext_t
 * and keeps its own).
 */
static uint64_t ctx_block(void)
{
	uint64_t all = ~0ull, old = 0;

	rt_sys4(SYS_rt_sigprocmask, SIG_SETMASK, &all, &old, 8);
	return old;
}

void sc_ctx_unblock(uint64_t mask)
{
	rt_sys4(SYS_rt_sigprocmask, SIG_SETMASK, &mask, 0, 8);
}

/*
 * A switch from the running context (saved in `from`, NULL for setcontext)
 * to `to`, about to be made by the C library: the engine threads and the
 * return stacks swapped, every signal blocked (*mask: the mask to set back
 * when the caller's context runs again).  1 if done; 0 if `to` is not
 * known (or is the running context, or the thread is not recorded):
 * nothing changed.
 */
int sc_ctx_switch(const ucontext_t *from, const ucontext_t *to, uint64_t *mask)
{
	struct sc_eng_thread *t = tls.t, *nt;
	struct rt_ctx *cur, *c;
	uint64_t now, old;

	/* (attached, the switches go as before: a suspended context's return
	 * addresses must all be back when the runtime detaches, and only the
	 * threads' own return stacks are put back then) */
	if (!t || tls.busy || tls.state != RT_ON || sc_rt_clk.off || !*rt_alive || !to || rt.attached ||
	    !rt_ext())                 /* (where the running context is kept) */
		return 0;
	old = ctx_block();
	tls.busy = stack_pointer();    /* (a signal handler's probes would wait) */
	barrier();
	if (ctx_lock()) {
		probe_done(t);
		sc_ctx_unblock(old);
		return 0;
	}
	c = ctx_map() ? NULL : ctx_target(to);
	cur = ctx_cur_get();
	cur = cur && cur->pid == rt.pid ? cur : NULL;
	if (c && !cur && (cur = ctx_new(0, 0))) {
		/* the thread's own context, first switched away from */
		cur->t = t;
		cur->rs = tls.rs;
		cur->running = 1;
		tls.x->ctx_cur = cur;
	}
	if (!c || !cur || c == cur || c->running || (c->t && c->t == t)) {
		ctx_unlock();
		probe_done(t);
		sc_ctx_unblock(old);
		return 0;
	}
	now = __rdtsc();
	nt = c->t;
	if (!nt) {
		nt = sc_eng_thread_new(&rt.arena, (uint32_t)rt_gettid(), now);
		if (!nt) {
			/* (a full arena: switched as if unknown) */
			__atomic_fetch_add(&rt.hdr->arena.lost, 1, __ATOMIC_RELAXED);
			ctx_unlock();
			probe_done(t);
			sc_ctx_unblock(old);
			return 0;
		}
		rt_thread_setup(nt);
		__builtin_memcpy(nt->name, t->name, sizeof(nt->name));
		c->t = nt;
	}
	if (from) {
		cur->saved_at = from;
		ctx_put((uint64_t)(uintptr_t)from << 1, cur);
	}
	/* what happened on the running context is its own: the kernel's
	 * records, a handler's events; then the interval up to the switch */
	if (*tls.ring_head != tls.ring_seen)
		rt_os_drain(t, now);
	if (tls.npending)
		probe_replay(t);
	cur->susp = sc_eng_suspend(t, now);
	cur->running = 0;
	if (c->susp)
		sc_eng_resume(nt, c->susp, now);
	cur->rs = sc_rs_swap(c->rs);
	if (!c->ran && c->func) {
		/* a made context's start: blocked until ctx_started() */
		uint64_t *m = (uint64_t *)(uintptr_t)&to->uc_sigmask;

		c->start_mask = *m;
		c->start_blocked = 1;
		*m = ~0ull;
	}
	c->ran = 1;
	c->running = 1;
	tls.x->ctx_cur = c;
	tls.t = nt;
	ctx_unlock();
	probe_done(nt);
	*mask = old;
	return 1;
}

/* ---- makecontext ------------------------------------------------------- */

/* The C library's, looked up (the runtime imports no function a program
 * could define) */
static void (*ctx_real_make)(ucontext_t *, void (*)(void), int, ...);
static int (*ctx_real_get)(ucontext_t *);
/* retstack.c's setcontext, by a name never preempted */
extern int rs_w_setcontext(const ucontext_t *ucp);

/* The landing of context idx: its function has returned, on its stack.
 * (Never returns: setcontext to the link.) */
static void ctx_landing(unsigned idx)
{
	const ucontext_t *link = ctxs.ctx[idx].link;

	rs_w_setcontext(link);         /* the wrapper (retstack.c): followed */
	rt_sys1(SYS_exit_group, 127);  /* (not reached: a link that fails) */
}

/* The landing's registers and mask, before makecontext sets where it runs
 * (it never resumes here) */
static __attribute__((noinline)) int ctx_get(ucontext_t *u)
{
	return ctx_real_get ? ctx_real_get(u) : -1;
}

/*
 * ucp is being made (its stack fresh, its function to be called): a fresh
 * context of that stack, and a landing for its function's return when it
 * has a link; that landing, or NULL.  A context that ran there before and
 * ended with no frame open lends the new one its engine thread (one tree
 * for the calls made on that stack, not one per context made: a program
 * making contexts by the million would fill the image); one that left
 * frames open keeps them, and the new one gets an engine thread of its
 * own.
 */
static struct rt_ctx *ctx_made(ucontext_t *ucp, void (*func)(void))
{
	uint64_t lo = (uint64_t)(uintptr_t)ucp->uc_stack.ss_sp, hi = lo + ucp->uc_stack.ss_size;
	struct rt_ctx *c;

	if (!ucp->uc_stack.ss_size || hi <= lo || ctx_lock())
		return NULL;
	if (ctx_map()) {
		ctx_unlock();
		return NULL;
	}
	c = ctx_find(hi << 1 | 1);
	if (c && c->running) {
		ctx_unlock();              /* (the stack that runs: left alone) */
		return NULL;
	}
	if (!c && (c = ctx_new(lo, hi)))
		ctx_put(hi << 1 | 1, c);
	if (c) {
		c->lo = lo;
		if (c->t && c->t->top != c->t->stack) {
			/* the context that ran there left frames open: kept so,
			 * and the new one is a thread of execution of its own */
			c->t = NULL;
			c->rs = NULL;
			c->susp = 0;
		}
		c->saved_at = NULL;
		c->func = func;
		c->ran = 0;
		c->start_blocked = 0;
		c->running = 0;
		c->link = ucp->uc_link;
		if (c->link && ucp->uc_stack.ss_size > 4 * CTX_LAND_ROOM && ctx_real_make &&
		    !ctx_get(&c->landing)) {
			c->landing.uc_stack.ss_sp = ucp->uc_stack.ss_sp;
			c->landing.uc_stack.ss_size = ucp->uc_stack.ss_size - CTX_LAND_ROOM;
			c->landing.uc_link = NULL;
			ctx_real_make(&c->landing, (void (*)(void))ctx_landing, 1, (unsigned)(c - ctxs.ctx));
		} else {
			c->link = NULL;    /* (no landing: the C library's own switch) */
		}
	}
	ctx_unlock();
	return c;
}

/* A made context starts here (its function's arguments in their places),
 * on its stack: its signal mask set, then its function. */
void ctx_start_asm(void);
__asm__(".text\n"
	".type ctx_start_asm, @function\n"
	"ctx_start_asm:\n"
	"\tendbr64\n"
	"\tpush %rdi\n"
	"\tpush %rsi\n"
	"\tpush %rdx\n"
	"\tpush %rcx\n"
	"\tpush %r8\n"
	"\tpush %r9\n"
	"\tsub $8, %rsp\n"
	"\tmov %rsp, %rdi\n"
	"\tcall ctx_started\n"
	"\tadd $8, %rsp\n"
	"\tpop %r9\n"
	"\tpop %r8\n"
	"\tpop %rcx\n"
	"\tpop %rdx\n"
	"\tpop %rsi\n"
	"\tpop %rdi\n"
	"\tjmp *%rax\n"
	".size ctx_start_asm, .-ctx_start_asm\n");

/* The context whose stack holds sp: its mask set if its first switch
 * blocked it; its function. */
__attribute__((used)) void *ctx_started(uint64_t sp);
__attribute__((used)) void *ctx_started(uint64_t sp)
{
	struct rt_ctx *c = ctx_cur_get();
	void (*func)(void) = NULL;
	uint64_t mask = 0;
	int unblock = 0;

	/* (without the lock if it cannot be had: contexts are only added) */
	int locked = ctx_lock() == 0;

	if (!c || c->pid != rt.pid || sp < c->lo || sp > c->hi) {
		c = NULL;
		for (uint32_t i = __atomic_load_n(&ctxs.n, __ATOMIC_ACQUIRE); i-- > 0;)
			if (ctxs.ctx[i].hi && sp >= ctxs.ctx[i].lo && sp <= ctxs.ctx[i].hi) {
				c = &ctxs.ctx[i];
				break;
			}
	}
	if (c) {
		func = c->func;
		unblock = c->start_blocked;
		mask = c->start_mask;
		c->start_blocked = 0;
	}
	if (locked)
		ctx_unlock();
	if (!func)
		rt_sys1(SYS_exit_group, 127);  /* (not reached: every made context is known) */
	if (unblock)
		sc_ctx_unblock(mask);
	return (void *)func;
}

HOOK void makecontext(ucontext_t *ucp, void (*func)(void), int argc, ...);
void makecontext(ucontext_t *ucp, void (*func)(void), int argc, ...)
{
	uint64_t a[CTX_ARGS] = { 0 };
	ucontext_t *link = ucp->uc_link;
	struct rt_ctx *c;
	va_list ap;

	/* the C library's: always in the global scope, where dlsym() finds
	 * them (unlike the unwinder's, retstack.c's rs_sym) */
	if (!ctx_real_make)
		ctx_real_make = (void (*)(ucontext_t *, void (*)(void), int, ...))dlsym(
			rt.attached ? RTLD_DEFAULT : RTLD_NEXT, "makecontext");
	if (!ctx_real_get)
		ctx_real_get = (int (*)(ucontext_t *))dlsym(rt.attached ? RTLD_DEFAULT : RTLD_NEXT, "getcontext");
	if (!ctx_real_make)
		return;
	va_start(ap, argc);
	for (int i = 0; i < argc && i < CTX_ARGS; i++)
		a[i] = va_arg(ap, uint64_t);
	va_end(ap);
	c = rt.state == RT_ON && !rt.attached && argc <= CTX_ARGS ? ctx_made(ucp, func) : NULL;
	if (c && c->link)
		ucp->uc_link = &c->landing;
	ctx_real_make(ucp, c ? ctx_start_asm : func, argc, a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8],
		      a[9], a[10], a[11], a[12], a[13]);
	ucp->uc_link = link;
}
