/*
 * retstack — exit capture for patched functions (see patch.h): the C halves
 * of the stubs, and a per-thread stack of the return addresses they replace.
 *
 * Entry (sc_patch_enter, from the shared entry trampoline): the probe gets
 * the function, the caller's return address as call site, and the address
 * of the return address slot (CFA-8), from which probe.c learns the CFA
 * exactly as for a compiled-in hook; then the slot's content moves to this
 * thread's stack {slot, original, call site, function} and the slot gets
 * the return trampoline's address.  Exit (sc_patch_leave, from the return
 * trampoline): the entry for the slot just returned through is popped, the
 * exit probe runs, and the trampoline returns to the original address.
 *
 * Frames that never return normally leave entries behind: longjmp, an
 * exception, a signal handler left by siglongjmp.  An entry whose slot is
 * below (or at, without the trampoline's address in it) the slot of a new
 * entry, or below the slot of a return, belongs to a frame already gone and
 * is dropped; the engine closes such frames itself from their CFAs (SPEC
 * section 2), as it does for compiled-in hooks.  Only slots within
 * SC_ENG_CFA_NEAR of each other are compared: a signal handler on an
 * alternate stack, or another coroutine's stack, is not "below".
 *
 * Tail calls: a patched function jumping to another finds the trampoline's
 * address in its slot already.  The jump ends the caller's frame (its exit
 * probe runs then: its code is done) and the callee takes the frame's
 * place: the same return address and call site, so the engine sees a call
 * from the caller's caller.  A function jumping back to its own entry is
 * looping, not called again (what -finstrument-functions makes of tail
 * recursion): no probe.
 *
 * Readers of return addresses: the unwinder (C++ exceptions, forced unwinds
 * of thread cancellation) and backtrace() would stop at the trampoline.
 * Before they run, every live entry's original goes back into its slot; a
 * catch (__cxa_begin_catch) then drops the entries of the frames unwound,
 * with their exits, and puts the trampoline back into the others.
 *
 * Full stack (SC_RS_MAX deep): the frame is counted by its entry but its
 * return is left alone (its exit is then inferred by the engine) and the
 * loss is counted.  No vector register is used here (built for general
 * registers only).
 *
 * Library calls (libcall.c) use the same stack, with a return trampoline
 * of their own (sc_lc_return_asm; an entry's RS_LC bit says which one its
 * slot holds): their probes, sc_lc_enter and sc_lc_leave, are here too,
 * each one call doing the return stack's work and the fast path of the
 * probe, so that their trampolines need keep only the argument and the
 * return registers (patch_x86_64.c).
 */
#pragma GCC target("general-regs-only")

#include "runtime/rt.h"
#include "runtime/dynsym.h"
#include "runtime/libcall.h"

#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unwind.h>

#define HOOK __attribute__((visibility("default")))
#define barrier() __asm__ __volatile__("" ::: "memory")

#define SC_RS_MAX  (1u << 16)         /* frames per thread */

struct rs_entry {
	uint64_t *slot;                 /* where the return address lives */
	uint64_t orig;                  /* what it was */
	uint64_t site;                  /* the call site the probe was given */
	uint64_t fn;
};

/* rs_entry.orig: the original is back in the slot (a reader runs); the
 * frame returns through the library calls' trampoline (else the patched
 * functions'); the original itself */
#define RS_RESTORED (1ull << 63)
#define RS_LC       (1ull << 62)
#define RS_ORIG     (~(RS_RESTORED | RS_LC))

struct rs_stack {
	uint32_t n;                     /* entries in use */
	uint32_t reserved;
	uint64_t map_len;
	/* an unwinding (rs_land): where the unwinder was entered (the
	 * wrapper's return address slot), and the slot of the frame a landing
	 * pad is about to run in, while frames between the two are left */
	const uint64_t *floor, *land;
	struct rs_entry e[];
};

#define rs_tls (tls.rs)             /* beside the probes' own state */
static uint64_t rs_tramp;           /* the return trampoline's address */
static uint64_t rs_lc_tramp;        /* the library calls' */
static pthread_key_t rs_key;
static int rs_key_ok;

void sc_rt_unwind_note(int caught, uintptr_t sp);
void sc_patch_retstack_init(void);
static void rs_resolve(void);

/* pthread key destructor: the thread ends (its start routine has returned
 * or pthread_exit unwound it: no patched frame of it is live). */
static void rs_thread_end(void *arg)
{
	struct rs_stack *s = arg;

	if (s && s == rs_tls) {
		rs_tls = NULL;
		if (tls.x)
			tls.x->rs = NULL;
		rt_sys2(SYS_munmap, s, s->map_len);
	}
}

/* Once, from sc_patch_start (single-threaded). */
void sc_patch_retstack_init(void)
{
	static int done;

	if (done++)
		return;            /* (attach.c's entry did it, with the threads running) */
	rs_tramp = sc_patch_arch_return();
	rs_lc_tramp = sc_patch_arch_lc_return();
	/* the trampolines' unwind rule knows them by these bytes
	 * (patch_x86_64.c): a build that changed them must not run */
	for (int i = 0; i < 7; i++) {
		static const uint8_t head[7] = { 0x48, 0x8d, 0x64, 0x24, 0xf8, 0x50, 0x52 };

		if (((const uint8_t *)(uintptr_t)rs_tramp)[i] != head[i] ||
		    ((const uint8_t *)(uintptr_t)rs_lc_tramp)[i] != head[i])
			__builtin_trap();
	}
	rs_resolve();
	if (!rs_key_ok && !pthread_key_create(&rs_key, rs_thread_end))
		rs_key_ok = 1;
}

/* attach.c's detach: no thread's end runs rs_thread_end any more (its
 * return stack is unmapped by the caller). */
void sc_patch_retstack_fini(void)
{
	if (rs_key_ok)
		pthread_key_delete(rs_key);
	rs_key_ok = 0;
}

/* A frame whose return is left alone (its exit is then inferred by the
 * engine): counted in the image's header. */
static __attribute__((noinline, cold)) void rs_unhooked(void)
{
	struct sc_shm_header *h = sc_rt_shm_header();

	if (h)
		__atomic_fetch_add(&h->patch_unhooked, 1, __ATOMIC_RELAXED);
}
/*
 * A compiled-in hook's function whose return address is a trampoline: a
 * library function (or a patched one) ended in a jump to it, its own frame
 * gone.  The innermost frame at or above sp that returns through a
 * trampoline is taken off the return stack (and those below it, gone),
 * its slot given back its original: the function returns straight to the
 * caller's caller, as rs_enter() makes of a patched function's tail call.
 * 1 and that frame's function and call site, or 0 (nothing changed).
 */
int sc_rs_tail(uintptr_t sp, uint64_t *fn, uint64_t *site)
{
	struct rs_stack *s = rs_tls;

	for (uint32_t i = s ? s->n : 0; i-- > 0;) {
		struct rs_entry e = s->e[i];

		if ((uintptr_t)e.slot < sp || !rt_is_tramp(*e.slot))
			continue;
		*fn = e.fn;
		*site = e.site;
		*e.slot = e.orig & RS_ORIG;
		barrier();
		s->n = i;
		return 1;
	}
	return 0;
}

/* attach.c's frames open at the attach, onto a new stack */
static void rs_seed_push(uint64_t *slot, uint64_t orig, uint64_t site, uint64_t fn)
{
	struct rs_stack *s = rs_tls;

	if (s->n < SC_RS_MAX)
		s->e[s->n++] = (struct rs_entry){ slot, orig, site, fn };
}

static __attribute__((noinline, cold)) struct rs_stack *rs_new(void)
{
	uint64_t len = sizeof(struct rs_stack) + (uint64_t)SC_RS_MAX * sizeof(struct rs_entry);
	long m = rt_sys6(SYS_mmap, 0, (long)len, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	struct rs_stack *s;

	if (rt_mmap_failed(m))
		return NULL;
	s = (struct rs_stack *)m;
	s->map_len = len;
	rs_tls = s;
	if (rt_ext())
		tls.x->rs = s;
	if (rs_key_ok)
		pthread_setspecific(rs_key, s);
	if (rt.attached)
		sc_attach_seed_rs(rs_seed_push);
	return s;
}

int sc_rs_prepare(void)
{
	return rs_tls || rs_new() ? 0 : -1;
}

/* No return stack yet where one is needed (a return through the
 * trampoline, a reader of return addresses): attached, the frames open at
 * the attach may be this thread's, returning through the trampoline
 * before its first event; their stack then (vector registers are the
 * caller's: what runs here is not all ours). */
static __attribute__((noinline, cold)) struct rs_stack *rs_seeded(void)
{
	if (!rt.attached || rs_tls)
		return NULL;
	return (struct rs_stack *)(uintptr_t)sc_rt_vsafe((const void *)rs_new, 0, 0, 0, 0);
}

static inline int rs_near(const uint64_t *hi, const uint64_t *lo)
{
	return (uint64_t)((uintptr_t)hi - (uintptr_t)lo) < SC_ENG_CFA_NEAR;
}

/* Drop the entries of frames gone below slot; keep=1 keeps a live entry
 * at slot itself (its frame tail-called the one entering). */
static inline uint32_t rs_trim(struct rs_stack *s, uint32_t n, const uint64_t *slot, int keep_equal)
{
	while (n) {
		const struct rs_entry *e = &s->e[n - 1];

		if (e->slot > slot || !rs_near(slot, e->slot) || (e->slot == slot && keep_equal))
			break;
		n--;
	}
	return n;
}

static inline int rs_is_tramp(uint64_t x)
{
	return x == rs_tramp || x == rs_lc_tramp;
}

/* The trampoline entry e's frame returns through. */
static inline uint64_t rs_tramp_of(const struct rs_entry *e)
{
	return e->orig & RS_LC ? rs_lc_tramp : rs_tramp;
}

/*
 * Exceptions in any language (_Unwind_SetIP, below, records the landing):
 * the entries between the unwinder's entry (floor) and the landing frame
 * are frames gone, to be closed as exits, innermost first, as a catch in
 * C++ (__cxa_begin_catch) closes them, at the first event that can follow
 * the landing: an entry or a return that misses the fast paths (the
 * engine's top frame is one of those gone), a compiled-in hook's slow path
 * (probe.c), _Unwind_Resume, a catch.  Not while a frame below floor (the
 * personality routine that recorded the landing) is on top.
 *
 * The next such frame taken off (1, its function and call site), or 0:
 * none left (the landing done) or not now.
 */
int sc_rs_land_next(uint64_t *fn, uint64_t *site)
{
	struct rs_stack *s = rs_tls;
	const struct rs_entry *e;

	if (!s || !s->land)
		return 0;
	e = s->n ? &s->e[s->n - 1] : NULL;
	if (!e || e->slot >= s->land || !rs_near(s->land, e->slot)) {
		s->land = s->floor = NULL;
		return 0;
	}
	if (e->slot < s->floor && rs_near(s->floor, e->slot))
		return 0;                  /* the unwinder's frames: later */
	*fn = e->fn;
	*site = e->site;
	barrier();
	s->n--;
	return 1;
}

/* The same, each frame's exit by a probe of its own (no probe running;
 * general registers only: through sc_rt_vsafe()), whose slow path must
 * not take the next frame before this one's exit: the landing is hidden
 * from it meanwhile. */
static __attribute__((noinline, cold)) void rs_land(void)
{
	uintptr_t sp = (uintptr_t)__builtin_frame_address(0) + 16;
	struct rs_stack *s = rs_tls;
	uint64_t fn, site;

	while (sc_rs_land_next(&fn, &site)) {
		const uint64_t *land = s->land, *floor = s->floor;

		s->land = NULL;
		sc_rt_vsafe((const void *)sc_rt_exit, fn, site, sp, 0);
		s->land = land;
		s->floor = floor;
	}
}

/*
 * The entry of fn whose return address is at slot, returning through the
 * trampoline of kind (RS_LC or 0): {fn, call site}, fn's bit 63 set when
 * the return is left alone (SC_PATCH_NO_RETURN), {0, 0} for a jump back to
 * its own entry.  Called from code that keeps no vector register (both
 * entries, patch_x86_64.c), so the probes go through sc_rt_vsafe().
 */
static inline __attribute__((always_inline)) struct sc_patch_pair rs_enter(uint64_t fn, uint64_t *slot,
									   uint64_t kind)
{
	uint64_t ret = *slot, site = ret;
	struct rs_stack *s = rs_tls;
	uint32_t n;

	if (unlikely(!s)) {
		/* (vector registers unsaved: pthread_setspecific is the C
		 * library's) */
		s = (struct rs_stack *)(uintptr_t)sc_rt_vsafe((const void *)rs_new, 0, 0, 0, 0);
		if (!s) {
			rs_unhooked();
			return (struct sc_patch_pair){ fn | SC_PATCH_NO_RETURN, site };
		}
	}
	if (unlikely(s->land)) {
		/* an entry at or above floor: the unwinder's frames are gone,
		 * the landing happened */
		if (slot >= s->floor)
			s->floor = NULL;
		rs_land();
	}
	n = rs_trim(s, s->n, slot, rs_is_tramp(ret));
	if (unlikely(rs_is_tramp(ret)) && n && s->e[n - 1].slot == slot) {
		uint64_t top_fn = s->e[n - 1].fn, top_site = s->e[n - 1].site;
		uint64_t top_orig = s->e[n - 1].orig & RS_ORIG;

		if (top_fn == fn) {
			/* a jump back to its own entry: a loop inside the call
			 * (as a compiler makes of tail recursion), not a call */
			s->n = n;
			return (struct sc_patch_pair){ 0, 0 };
		}
		/* a tail call: the caller's frame ends here, and the callee
		 * takes its place (its return address, its call site); read
		 * before the entry is given up: a signal handler may reuse it */
		barrier();
		s->n = --n;
		sc_rt_vsafe((const void *)sc_rt_exit, top_fn, top_site, (uintptr_t)slot, 0);
		site = top_site;
		ret = top_orig;
		*slot = ret;                /* for the probe, as at any entry */
	}
	if (unlikely(n >= SC_RS_MAX)) {
		s->n = n;
		rs_unhooked();
		return (struct sc_patch_pair){ fn | SC_PATCH_NO_RETURN, site };
	}
	if (unlikely(rs_is_tramp(ret)) && n) {
		/* the trampoline in a slot whose entry is gone (a frame left
		 * unhooked below it): nested in the frame on top */
		site = s->e[n - 1].site;
		*slot = site;
	}
	s->e[n] = (struct rs_entry){ slot, ret | kind, site, fn };
	barrier();
	s->n = n + 1;                   /* a signal handler's frames go above */
	barrier();
	/* a handler that ran between the two stores above pushed and popped
	 * at n itself: the entry is ours again only now */
	if (unlikely(s->e[n].slot != slot || s->e[n].fn != fn || s->e[n].orig != (ret | kind)))
		s->e[n] = (struct rs_entry){ slot, ret | kind, site, fn };
	return (struct sc_patch_pair){ fn, site };
}

static __attribute__((noinline, cold, noreturn)) void rs_lost(void)
{
	static const char msg[] = "stackclock: a patched function returned through a frame the runtime "
				  "lost track of; aborting (record this program with -m sample)\n";

	rt_sys3(SYS_write, 2, msg, sizeof(msg) - 1);
	rt_sys3(SYS_tgkill, rt_getpid(), rt_gettid(), SIGABRT);
	for (;;)
		rt_sys1(SYS_exit_group, 134);
}

static inline __attribute__((always_inline)) struct sc_patch_pair rs_leave(uint64_t cfa)
{
	uint64_t *slot = (uint64_t *)cfa - 1, fn, orig;
	struct rs_stack *s = rs_tls;
	const struct rs_entry *e;
	uint32_t n;

	if (unlikely(!s) && !(s = rs_seeded()))
		rs_lost();
	if (unlikely(!s->n))
		rs_lost();
	n = s->n;
	e = &s->e[n - 1];
	if (likely(e->slot == slot)) {
		/* the common case: this slot's entry on top */
		fn = e->fn;
		orig = e->orig & RS_ORIG;
		barrier();
		s->n = n - 1;
		return (struct sc_patch_pair){ fn, orig };
	}
	if (unlikely(s->land)) {
		rs_land();
		n = s->n;
	}
	n = rs_trim(s, n, slot, 1);
	/* entries above this slot that are not its own are frames gone in a
	 * way no wrapper saw (a handler on another stack left by siglongjmp,
	 * a context switched by hand): never return to theirs */
	while (n && s->e[n - 1].slot != slot)
		n--;
	if (unlikely(!n))
		rs_lost();
	e = &s->e[n - 1];
	fn = e->fn;
	orig = e->orig & RS_ORIG;
	barrier();                      /* read before a handler may reuse it */
	s->n = n - 1;
	return (struct sc_patch_pair){ fn, orig };
}

/* ---- the probes of the stubs ------------------------------------------ */

/*
 * The probes of a patched function (sc_patch_entry_asm, sc_patch_return_asm)
 * and of a library call (libcall.c; sc_lc_entry_asm, sc_lc_return_asm), all
 * in patch_x86_64.c, which keep general registers only (a patched
 * function's trampolines all the caller-saved ones, a library call's the
 * argument and the return registers): the fast paths of probe.c's
 * sc_rt_enter and sc_rt_exit_at, in code that uses no vector register,
 * with the return stack's entry and exit in the same call.  Anything else
 * (a thread's first event, a signal handler's events queued, the kernel's
 * records to read, a new calling context or call site, the clock off, a
 * tail call) goes to probe.c's own probes through sc_rt_vsafe(), which
 * keeps xmm0-15, before anything is changed.  kind: RS_LC for a library
 * call, 0 for a patched function (the trampoline its return goes through).
 */
static inline uint64_t rs_tramp_kind(uint64_t kind)
{
	return kind ? rs_lc_tramp : rs_tramp;
}

/* After the entry probe: the return through the trampoline (1), or left
 * alone (0: the return stack is full, or a jump back to the entry). */
static inline uint64_t lc_redirect(uint64_t fn, uint64_t *slot, uint64_t kind)
{
	if (unlikely(!fn || (fn & SC_PATCH_NO_RETURN)))
		return 0;
	*slot = rs_tramp_kind(kind);
	return 1;
}

/* The entry's probe by probe.c (sc_rt_enter, or sc_rt_enter_busy once
 * tls.busy is set), or the events a signal handler queued meanwhile. */
static __attribute__((noinline, cold)) uint64_t lc_enter_slow(const void *probe, uint64_t fn, uint64_t site,
							      uint64_t *slot, uint64_t kind)
{
	sc_rt_vsafe(probe, fn & ~SC_PATCH_NO_RETURN, site, (uintptr_t)slot, 0);
	return lc_redirect(fn, slot, kind);
}

static __attribute__((noinline, cold)) uint64_t lc_enter_replay(struct sc_eng_thread *t, uint64_t fn,
								uint64_t *slot, uint64_t kind)
{
	sc_rt_vsafe((const void *)probe_replay_done, (uint64_t)(uintptr_t)t, 0, 0, 0);
	return lc_redirect(fn, slot, kind);
}

/* The fast path found no node with tls.busy set and events queued: the
 * return stack's entry, then the rest of the probe by probe.c. */
static __attribute__((noinline, cold)) uint64_t lc_enter_slow_push(uint64_t fn, uint64_t *slot, uint64_t kind)
{
	struct sc_patch_pair p = rs_enter(fn, slot, kind);

	if (!p.a) {
		/* (not reached: rs_enter's loop case needs a trampoline in
		 * the slot, which the fast path has ruled out) */
		sc_rt_vsafe((const void *)probe_replay_done, (uint64_t)(uintptr_t)tls.t, 0, 0, 0);
		return 0;
	}
	return lc_enter_slow((const void *)sc_rt_enter_busy, p.a, p.b, slot, kind);
}

/* After the entry's probe: the return stack's entry where there is no
 * stack yet (the thread's first) or it is full (the return left alone). */
static __attribute__((noinline, cold)) uint64_t lc_enter_push_slow(struct sc_eng_thread *t, uint64_t fn,
								   uint64_t *slot, uint64_t kind)
{
	struct sc_patch_pair p = rs_enter(fn, slot, kind);

	if (unlikely(probe_release()))
		sc_rt_vsafe((const void *)probe_replay_done, (uint64_t)(uintptr_t)t, 0, 0, 0);
	return lc_redirect(p.a, slot, kind);
}

/* Everything but the common case: no return stack yet, a trampoline in
 * the slot (a tail call from a patched function, a jump back to a patched
 * function's own entry, a frame left unhooked below), the stack full. */
static __attribute__((noinline, cold)) uint64_t lc_enter_cold(uint64_t fn, uint64_t *slot, uint64_t kind)
{
	struct sc_patch_pair p = rs_enter(fn, slot, kind);

	if (!p.a)
		return 0;
	return lc_enter_slow((const void *)sc_rt_enter, p.a, p.b, slot, kind);
}

/*
 * The entry: sc_rt_enter's fast path, then the return stack's entry
 * (rs_enter's common case: its stores after the clock read, beside the
 * function's first instructions, as the probe's own stores are); 1 if the
 * return now goes through the trampoline.  The rare cases are tail calls,
 * decided before anything is changed, so that the common one needs no
 * stack frame.
 */
static inline __attribute__((always_inline)) uint64_t rs_probe_enter(uint64_t fn, uint64_t *slot, uint64_t kind)
{
	uint64_t ret = *slot, cfa;
	struct rs_stack *s;
	struct sc_eng_thread *t = tls.t;
	struct sc_eng_node *node;
	struct sc_eng_cs *cs;
	uint32_t n;

	if (unlikely(rs_is_tramp(ret)))
		return lc_enter_cold(fn, slot, kind);
	sc_rt_clk.fence = 1;               /* a leaf's exit, unless a call comes */
	if (unlikely(!t || tls.busy || !*rt_alive || *tls.ring_head != tls.ring_seen))
		return lc_enter_cold(fn, slot, kind);
	tls.busy = (uintptr_t)slot;
	barrier();
	node = sc_eng_enter_find(t, fn, ret, (uintptr_t)slot, &cs, &cfa);
	if (unlikely(!node)) {
		if (likely(!probe_release()))
			return lc_enter_cold(fn, slot, kind);   /* nothing changed: all again, slowly */
		/* a signal handler's events are queued: the slow probe
		 * applies them after this entry (the thread busy again, if
		 * probe_release() freed it: a handler that runs before that
		 * applies them itself) */
		tls.busy = (uintptr_t)slot;
		barrier();
		return lc_enter_slow_push(fn, slot, kind);
	}
	sc_eng_enter_commit(t, node, cs, __builtin_ia32_rdtsc(), cfa, slot[-1]);
	/* the return stack's entry (fn and the stack read again: fewer
	 * registers held across the probe, no stack frame before the clock) */
	fn = node->func;
	s = rs_tls;
	if (unlikely(!s))
		return lc_enter_push_slow(t, fn, slot, kind);
	n = rs_trim(s, s->n, slot, 0);
	if (unlikely(n >= SC_RS_MAX))
		return lc_enter_push_slow(t, fn, slot, kind);
	s->e[n] = (struct rs_entry){ slot, ret | kind, ret, fn };
	barrier();
	s->n = n + 1;                   /* a signal handler's frames go above */
	barrier();
	/* a handler that ran between the two stores above pushed and popped
	 * at n itself: the entry is ours again only now */
	if (unlikely(s->e[n].slot != slot || s->e[n].fn != fn || s->e[n].orig != (ret | kind)))
		s->e[n] = (struct rs_entry){ slot, ret | kind, ret, fn };
	if (unlikely(probe_release()))
		return lc_enter_replay(t, fn, slot, kind);
	*slot = rs_tramp_kind(kind);
	return 1;
}

/* A library call's entry: its stub (the row's function) and the slot. */
uint64_t sc_lc_enter(const uint64_t *stub, uint64_t *slot)
{
	return rs_probe_enter(stub[SC_LC_STUB_FN / 8], slot, RS_LC);
}

/* A patched function's entry: its trampoline (the stub's function is
 * before it) and the slot. */
uint64_t sc_patch_enter(uint64_t tramp, uint64_t *slot)
{
	return rs_probe_enter(*(const uint64_t *)(tramp - SC_PATCH_STUB_LEN + SC_PATCH_STUB_FN), slot, 0);
}

/* The exit's probe by probe.c, its clock read. */
static __attribute__((noinline, cold)) void lc_leave_slow(uint64_t fn, uint64_t *slot, uint64_t now)
{
	sc_rt_vsafe((const void *)sc_rt_exit_at, fn, 0, (uintptr_t)slot, now);
}

/*
 * The exit (a patched function's or a library call's: the return stack's
 * entry says which), its clock read at `now` by the trampoline (after an
 * lfence if sc_rt_clk.fence said so; 0 with the clock off), clk the word
 * of sc_rt_clk it read: the return stack's entry popped, its original
 * return address at CFA-8, then sc_rt_exit_at's fast path.
 */
void sc_lc_leave(uint64_t cfa, uint64_t now, uint64_t clk)
{
	struct sc_patch_pair p = rs_leave(cfa);
	uint64_t *slot = (uint64_t *)cfa - 1;
	struct sc_eng_thread *t = tls.t;
	uint32_t fenced = (uint32_t)clk;
	struct sc_eng_node *m;

	*slot = p.b;
	if (unlikely(!t || (clk >> 32) || tls.busy || !*rt_alive || *tls.ring_head != tls.ring_seen ||
		     t->top->node->func != p.a)) {
		lc_leave_slow(p.a, slot, now);
		return;
	}
	sc_rt_clk.fence = 1;
	tls.busy = (uintptr_t)slot;
	barrier();
	m = t->top->node;
	if (fenced && t->prev_exit)
		rt_tail_learn(t, m, now);
	sc_eng_pop(t, sc_eng_now(t, now, 1));
	m = t->top->node;
	sc_rt_clk.fence = (m->flags & SC_ENG_NODE_TAIL) || !(m->calls & RT_TAIL_CHECK);
	if (unlikely(probe_release()))
		sc_rt_vsafe((const void *)probe_replay_done, (uint64_t)(uintptr_t)t, 0, 0, 0);
}

/* ---- readers of return addresses --------------------------------------- */

/* The CFA of the hook calling this (built with frame pointers): every
 * entry below it is a frame gone, its own return address slot included. */
#define rs_hook_cfa() ((uintptr_t)__builtin_frame_address(0) + 16)

/*
 * Put the originals back into the slots of the live frames: those at or
 * above slot (the hook's own return address slot, which holds the
 * trampoline when a patched function tail-called the hook), topmost entry
 * first so that a slot shared by a tail call ends with its first frame's
 * original.  Each entry restored is marked for rs_reinstall().
 */
static void rs_restore(uintptr_t slot)
{
	struct rs_stack *s = rs_tls;
	uint32_t n, i;

	if (!s && !(s = rs_seeded()))
		return;
	n = rs_trim(s, s->n, (const uint64_t *)slot, 1);
	s->n = n;
	for (i = n; i > 0; i--) {
		struct rs_entry *e = &s->e[i - 1];

		if (!(e->orig & RS_RESTORED) && *e->slot == rs_tramp_of(e)) {
			*e->slot = e->orig & RS_ORIG;
			e->orig |= RS_RESTORED;
		}
	}
}

/* The trampoline back into the slots restored (a reader is done, or a
 * catch resumes the frames above it). */
static void rs_reinstall(void)
{
	struct rs_stack *s = rs_tls;

	for (uint32_t i = 0; s && i < s->n; i++) {
		/* (not a frame a landing left: its slot is stack reused) */
		if (s->land && s->e[i].slot < s->land && rs_near(s->land, s->e[i].slot))
			continue;
		if (s->e[i].orig & RS_RESTORED) {
			s->e[i].orig &= ~RS_RESTORED;
			*s->e[i].slot = rs_tramp_of(&s->e[i]);
		}
	}
}

/* The wrapped functions, resolved when patching starts (not first inside
 * a throw, where the loader's lookup may meet a failing allocator), else
 * on first use (a program with hooks built in). */
static struct {
	_Unwind_Reason_Code (*raise)(struct _Unwind_Exception *);
	_Unwind_Reason_Code (*rethrow)(struct _Unwind_Exception *);
	_Unwind_Reason_Code (*forced)(struct _Unwind_Exception *, _Unwind_Stop_Fn, void *);
	_Unwind_Reason_Code (*trace)(_Unwind_Trace_Fn, void *);
	int (*backtrace)(void **, int);
	void *(*begin_catch)(void *);
	int (*swapcontext)(ucontext_t *, const ucontext_t *);
	int (*setcontext)(const ucontext_t *);
	void (*set_ip)(struct _Unwind_Context *, _Unwind_Ptr);
	void (*thread_exit)(void *);
	int (*find_object)(void *, struct dl_find_object *);
	void (*resume)(struct _Unwind_Exception *);
	_Unwind_Ptr (*get_ip)(struct _Unwind_Context *);   /* looked up, not
				    imported: the runtime loads into programs
				    without the unwinder's library */
	_Unwind_Word (*get_cfa)(struct _Unwind_Context *);
} rs_real;

/* What dlsym() finds for a name some other loaded object defines, else
 * NULL without asking (looked up again at first use): a failed dlsym()
 * calls malloc() for its error, the program's own if it defines one (a C
 * program has no unwinder library loaded: 9 mallocs were counted). */
static void *rs_sym(void *handle, const char *name)
{
	void *f;

	if (!rt_defined_elsewhere(name))
		return NULL;
	f = dlsym(handle, name);
	/* defined, but in no scope dlsym() searches from here: a library
	 * only an object dlopen()ed RTLD_LOCAL loaded (a C program's C++
	 * extension brings libgcc_s and libstdc++ in its own scope); the
	 * one it binds to is the first definition in load order.  (Before,
	 * NULL: the wrapper called address 0, SIGSEGV at the first throw.) */
	return f ? f : rt_defined_addr(name);
}

/* The next definition: the one after this runtime, preloaded; loaded into
 * a running process (attach.c), this runtime comes last, and the real
 * ones are the first. */
static void *rs_next(void)
{
	return rt.attached ? RTLD_DEFAULT : RTLD_NEXT;
}

static void rs_resolve(void)
{
	rs_real.raise = (_Unwind_Reason_Code (*)(struct _Unwind_Exception *))
		rs_sym(rs_next(), "_Unwind_RaiseException");
	rs_real.rethrow = (_Unwind_Reason_Code (*)(struct _Unwind_Exception *))
		rs_sym(rs_next(), "_Unwind_Resume_or_Rethrow");
	rs_real.forced = (_Unwind_Reason_Code (*)(struct _Unwind_Exception *, _Unwind_Stop_Fn, void *))
		rs_sym(rs_next(), "_Unwind_ForcedUnwind");
	rs_real.trace = (_Unwind_Reason_Code (*)(_Unwind_Trace_Fn, void *))
		rs_sym(rs_next(), "_Unwind_Backtrace");
	rs_real.backtrace = (int (*)(void **, int))rs_sym(rs_next(), "backtrace");
	rs_real.begin_catch = (void *(*)(void *))rs_sym(rs_next(), "__cxa_begin_catch");
	rs_real.swapcontext = (int (*)(ucontext_t *, const ucontext_t *))rs_sym(rs_next(), "swapcontext");
	rs_real.setcontext = (int (*)(const ucontext_t *))rs_sym(rs_next(), "setcontext");
	rs_real.set_ip = (void (*)(struct _Unwind_Context *, _Unwind_Ptr))rs_sym(rs_next(), "_Unwind_SetIP");
	rs_real.thread_exit = (void (*)(void *))rs_sym(rs_next(), "pthread_exit");
	rs_real.find_object = (int (*)(void *, struct dl_find_object *))rs_sym(rs_next(), "_dl_find_object");
	rs_real.resume = (void (*)(struct _Unwind_Exception *))rs_sym(rs_next(), "_Unwind_Resume");
	rs_real.get_ip = (_Unwind_Ptr (*)(struct _Unwind_Context *))rs_sym(RTLD_DEFAULT, "_Unwind_GetIP");
	rs_real.get_cfa = (_Unwind_Word (*)(struct _Unwind_Context *))rs_sym(RTLD_DEFAULT, "_Unwind_GetCFA");
}

/* A wrapper whose real function no loaded object defines (the program
 * called this runtime's definition only): as the loader would at that
 * call, one line and exit 127 ("symbol lookup error"), never a jump to
 * address 0. */
static __attribute__((noinline, cold, noreturn)) void rs_missing(const char *name)
{
	static const char a[] = "stackclock: symbol lookup error: no loaded object defines ";

	rt_sys3(SYS_write, 2, a, sizeof(a) - 1);
	rt_sys3(SYS_write, 2, name, rt_strlen(name));
	rt_sys3(SYS_write, 2, "\n", 1);
	for (;;)
		rt_sys1(SYS_exit_group, 127);
}

/* The real function f (its name n), resolved if not yet, never NULL. */
#define RS_REAL(f, n) ({ \
	if (!rs_real.f) \
		rs_resolve(); \
	if (!rs_real.f) \
		rs_missing(n); \
	rs_real.f; \
})

/* The unwinder is entered from slot (its caller's return address slot):
 * the floor of the landings it may make (sc_rs_land_next); a landing of
 * the one before still open is done first. */
static void rs_unwinder_entered(uintptr_t slot)
{
	struct rs_stack *s = rs_tls;

	if (s) {
		rs_land();
		s->floor = (const uint64_t *)slot;
		s->land = NULL;
	}
}

/* call, a reader of return addresses, with the live frames' originals in
 * their slots, then the trampolines back; its value.  A macro: the hook
 * CFA must be the wrapper's own frame's. */
#define RS_WITH_ORIGINALS(call) ({ \
	rs_restore(rs_hook_cfa() - 8); \
	__typeof__(call) rs_r_ = (call); \
	if (rs_tls) \
		rs_tls->floor = NULL;   /* an unwinder that returned: no landing */ \
	rs_reinstall(); \
	rs_r_; \
})

HOOK _Unwind_Reason_Code _Unwind_RaiseException(struct _Unwind_Exception *exc);
HOOK _Unwind_Reason_Code _Unwind_Resume_or_Rethrow(struct _Unwind_Exception *exc);
HOOK _Unwind_Reason_Code _Unwind_ForcedUnwind(struct _Unwind_Exception *exc, _Unwind_Stop_Fn stop,
					     void *arg);
HOOK _Unwind_Reason_Code _Unwind_Backtrace(_Unwind_Trace_Fn fn, void *arg);
HOOK void *__cxa_begin_catch(void *exc);
HOOK void _Unwind_SetIP(struct _Unwind_Context *ctx, _Unwind_Ptr ip);
HOOK void pthread_exit(void *ret) __attribute__((noreturn));
HOOK int _dl_find_object(void *pc, struct dl_find_object *res);
HOOK int backtrace(void **buf, int size);
HOOK int swapcontext(ucontext_t *oucp, const ucontext_t *ucp);
HOOK int setcontext(const ucontext_t *ucp);

/* The unwinder walks the stack from here: originals first.  It returns
 * only when nothing catches (then the trampolines go back). */
_Unwind_Reason_Code _Unwind_RaiseException(struct _Unwind_Exception *exc)
{
	rs_unwinder_entered(rs_hook_cfa() - 8);
	sc_rt_unwind_note(0, 0);
	return RS_WITH_ORIGINALS(RS_REAL(raise, "_Unwind_RaiseException")(exc));
}

_Unwind_Reason_Code _Unwind_Resume_or_Rethrow(struct _Unwind_Exception *exc)
{
	rs_unwinder_entered(rs_hook_cfa() - 8);
	sc_rt_unwind_note(0, 0);
	return RS_WITH_ORIGINALS(RS_REAL(rethrow, "_Unwind_Resume_or_Rethrow")(exc));
}

_Unwind_Reason_Code _Unwind_ForcedUnwind(struct _Unwind_Exception *exc, _Unwind_Stop_Fn stop, void *arg)
{
	rs_unwinder_entered(rs_hook_cfa() - 8);
	return RS_WITH_ORIGINALS(RS_REAL(forced, "_Unwind_ForcedUnwind")(exc, stop, arg));
}

struct rs_trace {
	_Unwind_Trace_Fn fn;
	void *arg;
	int started;
};

static _Unwind_Reason_Code rs_trace_frame(struct _Unwind_Context *ctx, void *arg)
{
	struct rs_trace *t = arg;

	if (!t->started && rs_real.get_ip && sc_rt_in_self(rs_real.get_ip(ctx)))
		return _URC_NO_REASON;
	t->started = 1;
	return t->fn(ctx, t->arg);
}

_Unwind_Reason_Code _Unwind_Backtrace(_Unwind_Trace_Fn fn, void *arg)
{
	struct rs_trace t = { fn, arg, 0 };

	return RS_WITH_ORIGINALS(RS_REAL(trace, "_Unwind_Backtrace")(rs_trace_frame, &t));
}

int backtrace(void **buf, int size)
{
	void *tmp[257], **dst = size > 0 && size < 256 ? tmp : buf;
	int n, skip = 0;

	if (size <= 0)
		return RS_REAL(backtrace, "backtrace")(buf, size);
	n = RS_WITH_ORIGINALS(RS_REAL(backtrace, "backtrace")(dst, dst == tmp ? size + 1 : size));
	while (skip < n && sc_rt_in_self((uint64_t)(uintptr_t)dst[skip]))
		skip++;
	n -= skip;
	if (n > size)
		n = size;
	for (int i = 0; i < n; i++)
		buf[i] = dst[skip + i];
	return n;
}

/*
 * A C++ handler was found (its frame called this): the unwinding is over,
 * every frame whose return address slot is below sp is gone (their exits
 * now, innermost first, as -finstrument-functions' cleanups would have run
 * them during the unwinding: a landing at sp, the lowest a pending one
 * could be), the ones above get the trampoline back.  (An exit of a frame
 * the throw's repairs closed already, a library call's under a frame whose
 * cleanup ran its hook, is still counted as the exception's.)
 */
void *__cxa_begin_catch(void *exc)
{
	uintptr_t sp = rs_hook_cfa();
	struct rs_stack *s = rs_tls;

	if (s) {
		if ((uintptr_t)s->land < sp)
			s->land = (const uint64_t *)sp;
		s->floor = NULL;
		rs_land();
		rs_reinstall();
	}
	sc_rt_unwind_note(1, sp);
	return RS_REAL(begin_catch, "__cxa_begin_catch")(exc);
}

/*
 * A personality routine sets where the unwinder resumes: a landing pad, a
 * catch or a cleanup, in any language (the only place a Rust catch_unwind,
 * which calls no __cxa_begin_catch, can be seen).  The frames between the
 * unwinder's entry and the landing frame are gone once it runs; their
 * exits wait for the personality routine to return (sc_rs_land_next).  The
 * unwinder installs the landing frame next without reading another return
 * address, so its slot and those above it get the trampolines back now;
 * after a cleanup, _Unwind_Resume (sc_rs_resume) takes them out again
 * before it unwinds further.  Only within an unwinding this runtime saw
 * begin (floor set).
 */
void _Unwind_SetIP(struct _Unwind_Context *ctx, _Unwind_Ptr ip)
{
	struct rs_stack *s = rs_tls;
	const uint64_t *land;

	RS_REAL(set_ip, "_Unwind_SetIP")(ctx, ip);
	if (!s || !s->floor || !rs_real.get_cfa)
		return;
	/* the context is still its callee's: the landing frame's stack
	 * pointer at the call, above every slot of a frame gone */
	land = (const uint64_t *)(uintptr_t)rs_real.get_cfa(ctx);
	if (land <= s->floor || !rs_near(land, s->floor)) {
		s->floor = NULL;           /* not the unwinding it was for */
		return;
	}
	for (uint32_t i = s->n; i > 0; i--) {
		struct rs_entry *e = &s->e[i - 1];

		if (e->slot < land && rs_near(land, e->slot)) {
			if (!(e->slot < s->floor && rs_near(s->floor, e->slot))) {
				s->land = land;    /* a frame to close */
				/* its slot is the landing pad's stack now:
				 * nothing is ever written back there */
				e->orig &= ~RS_RESTORED;
			}
			continue;
		}
		if (e->orig & RS_RESTORED) {
			e->orig &= ~RS_RESTORED;
			*e->slot = rs_tramp_of(e);
		}
	}
	if (!s->land)
		s->floor = NULL;           /* nothing to close: done */
	sc_rt_unwind_note(1, (uintptr_t)land);
}

/*
 * pthread_exit unwinds the thread (a forced unwind, so that the cleanup
 * handlers of a -fexceptions build run as its landing pads) from inside
 * the C library, which calls the unwinder it loaded itself: no wrapper of
 * _Unwind_ForcedUnwind sees it.  So the originals go back first, as at a
 * throw; a cleanup's _Unwind_Resume takes them out again if a landing put
 * the trampolines back.  (Before: the unwinder stopped at the first
 * trampoline, the handlers below it were skipped, and a hooks build could
 * die of SIGSEGV.)
 */
void pthread_exit(void *ret)
{
	uint64_t *slot = (uint64_t *)(rs_hook_cfa() - 8);

	if (!rs_real.thread_exit)
		rs_resolve();
	/* still the library call's row (it never returns: open at the
	 * thread's end), as through its GOT slot, which is now this */
	if (sc_libcall_mode != SC_LIBCALL_NONE && rs_real.thread_exit)
		sc_rt_enter((void *)rs_real.thread_exit, (void *)*slot, (uintptr_t)slot);
	rs_unwinder_entered((uintptr_t)slot);
	rs_restore((uintptr_t)slot);
	RS_REAL(thread_exit, "pthread_exit")(ret);
	for (;;)
		rt_sys1(SYS_exit, 0);       /* (not reached) */
}

/*
 * An unwinder no wrapper saw enter (the C library's thread cancellation
 * loads its own and calls it directly) meets a return trampoline: it asks
 * for the tables at the trampoline's address less one (libgcc, through
 * this function of the dynamic linker).  The originals go back into every
 * live frame's slot first; the trampoline's own rule (patch_x86_64.c)
 * then reads the original at CFA-8, and the frames above return without
 * the trampoline from then on (their exits inferred).  Before, the
 * unwinding stopped there: cancellation skipped the cleanup handlers.
 */
int _dl_find_object(void *pc, struct dl_find_object *res)
{
	uint64_t x = (uint64_t)(uintptr_t)pc;

	if (rs_tls && (x + 1 == rs_tramp || x + 1 == rs_lc_tramp || rs_is_tramp(x)))
		rs_restore(rs_hook_cfa() - 8);
	if (!rs_real.find_object)
		rs_resolve();
	if (!rs_real.find_object)
		return -1;                      /* (a C library without it) */
	return rs_real.find_object(pc, res);
}

/*
 * _Unwind_Resume (patch_x86_64.c: it jumps to the real one, which finds
 * its caller, the cleanup's frame, from its own return address): the
 * landing's frames closed, the originals back into the live frames' slots
 * at or above slot, the cleanup's own return address slot, as at the
 * throw; the real function.  A throw's unwinding goes on (its repairs are
 * the exception's again: the cleanup's first events may have ended the
 * throw's state, its frames below the landing closed) unless the
 * unwinding is forced: the unwinder keeps a forced unwind's stop function
 * in the exception (private_1; 0 for a throw), which tells it even when
 * the C library's cancellation entered the unwinder where no wrapper saw.
 */
void *sc_rs_resume(uint64_t *slot, const struct _Unwind_Exception *exc)
{
	if (!exc->private_1)
		sc_rt_unwind_note(0, 0);
	rs_land();                      /* before the originals go back */
	rs_restore((uintptr_t)slot);
	rs_unwinder_entered((uintptr_t)slot);
	return (void *)RS_REAL(resume, "_Unwind_Resume");   /* its caller imports it */
}

/*
 * Coroutines (swapcontext, setcontext): the thread moves to another stack,
 * and the frames left on this one return only when it comes back, perhaps
 * after frames of the other stack have returned through the same stack of
 * return addresses.  So every live frame gets its original return address
 * back and leaves the stack of return addresses: its return is then left
 * alone (counted as unhooked, its exit inferred by the engine), and no
 * return can ever be routed to another stack's frame.  Their calls stay
 * counted exactly; their exits are not timed.
 */
static void rs_unhook_all(void)
{
	struct rs_stack *s = rs_tls;

	if (!s && !(s = rs_seeded()))
		return;
	while (s->n) {
		struct rs_entry *e = &s->e[s->n - 1];

		/* (a slot that holds anything else is no longer this frame's) */
		if (*e->slot == rs_tramp_of(e))
			*e->slot = e->orig & RS_ORIG;
		barrier();
		s->n--;
		rs_unhooked();
	}
}

uint64_t sc_patch_stack_len(const struct rs_stack *s)
{
	return s->map_len;
}

uint64_t sc_patch_unhook_stack(struct rs_stack *s)
{
	uint64_t put = 0;

	while (s && s->n) {
		struct rs_entry *e = &s->e[s->n - 1];

		if (*e->slot == rs_tramp_of(e)) {
			*e->slot = e->orig & RS_ORIG;
			put++;
		}
		barrier();
		s->n--;
	}
	return put;
}

/* A context's own return stack (ctx.c follows the switches), or, for a
 * switch not followed, every return address back. */
struct rs_stack *sc_rs_swap(struct rs_stack *s)
{
	struct rs_stack *old = rs_tls;

	rs_tls = s;
	if (tls.x)
		tls.x->rs = s;
	return old;
}

int swapcontext(ucontext_t *oucp, const ucontext_t *ucp)
{
	uint64_t mask;
	int r;

	if (!sc_ctx_switch(oucp, ucp, &mask)) {
		rs_unhook_all();
		return RS_REAL(swapcontext, "swapcontext")(oucp, ucp);
	}
	r = RS_REAL(swapcontext, "swapcontext")(oucp, ucp);
	/* this context runs again (on its stack, maybe on another thread):
	 * its signals, blocked for the switch, as they were */
	sc_ctx_unblock(mask);
	return r;
}

int setcontext(const ucontext_t *ucp)
{
	uint64_t mask;
	int r, followed = sc_ctx_switch(NULL, ucp, &mask);

	if (!followed)
		rs_unhook_all();
	r = RS_REAL(setcontext, "setcontext")(ucp);
	if (followed)
		sc_ctx_unblock(mask);      /* (only if it failed) */
	return r;
}

/*
 * Loaded into a running process (attach.c), this runtime comes after the
 * objects that call these: their GOT slots are pointed here instead, by
 * names that cannot be preempted.  Without it an exception thrown through
 * a patched frame meets the return trampoline's address and the unwinder
 * gives up (the program dies).
 */
#define RS_ALIAS(name, real) \
	extern __typeof__(real) name __attribute__((alias(#real), copy(real), visibility("hidden")))
RS_ALIAS(rs_w_raise, _Unwind_RaiseException);
RS_ALIAS(rs_w_rethrow, _Unwind_Resume_or_Rethrow);
RS_ALIAS(rs_w_forced, _Unwind_ForcedUnwind);
RS_ALIAS(rs_w_trace, _Unwind_Backtrace);
RS_ALIAS(rs_w_backtrace, backtrace);
RS_ALIAS(rs_w_begin_catch, __cxa_begin_catch);
RS_ALIAS(rs_w_set_ip, _Unwind_SetIP);
RS_ALIAS(rs_w_thread_exit, pthread_exit);
RS_ALIAS(rs_w_find_object, _dl_find_object);
RS_ALIAS(rs_w_swapcontext, swapcontext);
RS_ALIAS(rs_w_setcontext, setcontext);

const struct sc_patch_wrap sc_patch_wraps[] = {
	{ "_Unwind_RaiseException", (const void *)rs_w_raise },
	{ "_Unwind_Resume_or_Rethrow", (const void *)rs_w_rethrow },
	{ "_Unwind_ForcedUnwind", (const void *)rs_w_forced },
	{ "_Unwind_Backtrace", (const void *)rs_w_trace },
	{ "backtrace", (const void *)rs_w_backtrace },
	{ "__cxa_begin_catch", (const void *)rs_w_begin_catch },
	{ "_Unwind_SetIP", (const void *)rs_w_set_ip },
	{ "pthread_exit", (const void *)rs_w_thread_exit },
	{ "_dl_find_object", (const void *)rs_w_find_object },
	{ "_Unwind_Resume", (const void *)sc_rs_w_resume },
	{ "swapcontext", (const void *)rs_w_swapcontext },
	{ "setcontext", (const void *)rs_w_setcontext },
	/* (not readers of return addresses: a jump's frames closed as such) */
	{ "longjmp", (const void *)sc_w_longjmp },
	{ "_longjmp", (const void *)sc_w__longjmp },
	{ "siglongjmp", (const void *)sc_w_siglongjmp },
	{ "__longjmp_chk", (const void *)sc_w___longjmp_chk },
	/* (a vfork child's probes off: fork.c) */
	{ "vfork", (const void *)sc_w_vfork },
	{ "__vfork", (const void *)sc_w_vfork },
	{ NULL, NULL },
};
