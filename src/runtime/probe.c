/*
 * probe — the hooks: the functions -finstrument-functions' code calls
 * (__cyg_profile_func_enter/exit) and the probes patched functions' stubs
 * call (sc_rt_enter/sc_rt_exit), which feed each thread's events to the
 * attribution engine (engine.h).  The runtime's other files and the
 * contract between them: rt.h.
 *
 * Hot path, per event: one initial-exec TLS load, one load of the "same
 * process" word, rdtsc, one compare of the thread's perf ring head with the
 * last one seen (the kernel logs the thread's context switches, system calls
 * and page faults there), then the engine's few loads and stores.  No locks,
 * no allocation, no system call.  Everything else is a rare path: a
 * thread's first event (state, perf events), a new calling context or call
 * site (the module holding it), more memory (fallocate), OS records to
 * read, fork.
 */
#include "runtime/rt.h"

#include <signal.h>

__thread struct rt_tls tls __attribute__((tls_model("initial-exec")));
__thread struct sc_rt_clock sc_rt_clk __attribute__((tls_model("initial-exec"), visibility("hidden"), aligned(8)));

extern void *__libc_stack_end;

/*
 * A patched function's return address slot holds the return trampoline
 * once its entry stub has run: an entry applied later (a signal handler's,
 * queued while a probe ran) finds that there instead of the call site.
 */
uint64_t rt_ret_tramp, rt_lc_tramp;

/*
 * The CFA of a function entered with call site `site` and a probe whose stack
 * pointer was sp.  The call site is the return address the call pushed, at
 * CFA - 8: found by a short scan up the stack the first time, then known as
 * an offset from sp (cached per thread, checked with one load each time).
 * The offset is kept per call of the probe (its return address): the frame
 * around a hook's call has one size, whichever function, inlined or not,
 * the hook is for; kept per function, it was rescanned in each host of an
 * inlined function, and a scan can stop early at a dead copy of the call
 * site in the frame's padding (Lua's singlevaraux, recursing from one
 * call site: its frame closed by the next inlined callee's position, two
 * repairs a run).
 * The scan stops at the top of the main thread's stack; SC_ENG_NO_CFA if
 * the address is not found (the frame is then never closed by position).
 */
static inline uint64_t rt_cfa_slot(uint64_t pc)
{
	return pc * 0x9e3779b97f4a7c15ull >> 52 & (RT_CFA_CACHE - 1);
}

/* The scan itself, with no cache: the slot above sp that holds site, plus
 * 8; SC_ENG_NO_CFA if none within 16 KiB (or below the main thread's top). */
static uint64_t rt_cfa_scan(uint64_t site, uint64_t sp)
{
	uint64_t limit = sp + (16u << 10), end = (uint64_t)__libc_stack_end;
	const uint64_t *p;

	if (end > sp && end < limit)
		limit = end;
	for (p = (const uint64_t *)sp; (uint64_t)(p + 1) <= limit; p++) {
		/* the trampoline only in the slot a stub's probe points at: a
		 * compiled-in hook's scan passes dead stack where a returned
		 * library call or patched function left one (seen: after_work's
		 * frame placed below a dead clock_gettime slot, then closed by
		 * the next call's position) */
		if (*p == site || (rt_is_tramp(*p) && p == (const uint64_t *)sp))
			return (uint64_t)(p + 1);
	}
	return SC_ENG_NO_CFA;
}

uint64_t rt_cfa_of(struct sc_eng_arena *a, uint64_t site, uint64_t sp)
{
	struct rt_tls_ext *x = rt_ext();
	/* keyed by the probe's own call (its return address, sp[-1]): the
	 * frame's size there is fixed, whichever function is entered */
	uint64_t pc = ((const uint64_t *)sp)[-1];
	typeof(x->cfa_cache[0]) none = { 0, 0 }, *e = x ? &x->cfa_cache[rt_cfa_slot(pc)] : &none;
	uint64_t ret;

	(void)a;
	if (e->pc == pc && !e->k)
		return SC_ENG_NO_CFA;      /* not found before: do not scan again */
	if (e->pc == pc) {
		ret = ((const uint64_t *)(sp + e->k))[-1];
		if (ret == site || (rt_is_tramp(ret) && e->k == 8))
			return sp + e->k;
	}
	ret = rt_cfa_scan(site, sp);
	e->pc = pc;
	e->k = ret == SC_ENG_NO_CFA ? 0 : ret - sp;
	return ret;
}

/* ---- the hooks --------------------------------------------------------- */

/*
 * The hooks.  The common case is inline and free of calls (so the compiler
 * gives the hooks no stack frame); everything else is in probe_slow().
 *
 * Signal handlers: while a probe runs, tls.busy holds its stack pointer.  A
 * probe of a signal handler that interrupted it must not touch the engine;
 * it queues its event, with an entry's position (CFA) read from the
 * handler's stack while it is live, and the interrupted probe applies the
 * queue before it returns (before, the position was looked for when the
 * queue was applied, in stack the handler had left: a storm of 10,000
 * signals a second gave 20 to 2,900 repairs a run, handlers' callees
 * placed under the code they interrupted).  A handler may also never return to the interrupted probe
 * (siglongjmp): the next probe then runs with a stack pointer above the
 * abandoned one's, takes over, and applies the queue.  The engine's state
 * is consistent at every instruction boundary but the stores that update a
 * frame, so an abandoned probe costs at most one call's statistics.
 */
/* What every event applies first: the kernel's records, and the frames an
 * exception left; the time the event is taken at (the clock's, or with
 * the clock off the last one). */
static uint64_t probe_before(struct sc_eng_thread *t, uint64_t fn, uint64_t now, int is_exit)
{
	if (unlikely(sc_rt_clk.off)) {
		/* no clock: nothing is timed, OS records included */
		now = t->last_raw;
		if (*tls.ring_head != tls.ring_seen)
			ring_discard();
	}
	if (*tls.ring_head != tls.ring_seen)
		rt_os_drain(t, now);
	if (unlikely(tls.rs != NULL) && (!is_exit || t->top->node->func != fn)) {
		uint64_t gone, from;

		/* the frames an exception left, from its landing (retstack.c);
		 * not before the exit of the engine's top frame: that is the
		 * personality routine's, which recorded the landing and returns
		 * before it (the next event takes them) */
		while (sc_rs_land_next(&gone, &from))
			sc_eng_exit(t, gone, now);
	}
	return now;
}

/*
 * A function a library call (or a patched function) jumped to: its return
 * address is the trampoline; the caller's frame ends here and the function
 * takes its place, with its call site (as a patched function's tail call
 * does, retstack.c).  1 and that frame's function and the call site to
 * use, 0 if site stands.
 */
static inline int probe_tail(uint64_t *site, uintptr_t sp, uint64_t *caller)
{
	uint64_t from;

	if (likely(!rt_is_tramp(*site)) || !sc_rs_tail(sp, caller, &from))
		return 0;
	*site = from;
	return 1;
}

/* One event: an entry whose probe ran at stack pointer sp, or (sp 0) an exit. */
static void probe_apply(struct sc_eng_thread *t, uint64_t fn, uint64_t site, uint64_t now, uintptr_t sp)
{
	uint64_t caller;

	now = probe_before(t, fn, now, !sp);
	if (!sp) {
		sc_eng_exit(t, fn, now);
		return;
	}
	if (unlikely(probe_tail(&site, sp, &caller)))
		sc_eng_exit(t, caller, now);
	sc_eng_enter_sp(t, fn, site, now, sp, ((const uint64_t *)sp)[-1]);
}

/*
 * Apply the events queued by signal handlers (with tls.busy set), in the
 * order their probes began.  A slot whose function is 0 was taken by a
 * probe that never filled it (its handler left by a jump): lost.
 */
__attribute__((noinline, cold)) void probe_replay(struct sc_eng_thread *t)
{
	uint32_t i = 0, n;

	for (;;) {
		n = __atomic_load_n(&tls.npending, __ATOMIC_RELAXED);
		for (; i < n && i < RT_PENDING; i++) {
			struct rt_pending *e = &tls.x->pending[i];
			uint64_t now, fn = __atomic_load_n(&e->fn, __ATOMIC_RELAXED);

			if (!fn) {
				t->lost_nested++;
				continue;
			}
			now = probe_before(t, fn, e->tsc, !e->sp);
			if (!e->sp)
				sc_eng_exit(t, fn, now);
			else
				sc_eng_enter_at(t, fn, e->site, sc_eng_now(t, now, 0), 0, e->cfa, e->pc);
			e->fn = 0;
		}
		if (__atomic_compare_exchange_n(&tls.npending, &n, 0, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
			break;
	}
	t->lost_nested += __atomic_exchange_n(&tls.pending_lost, 0, __ATOMIC_RELAXED);
}

/*
 * Queue the event of a probe that interrupted another of its thread (a
 * signal handler's): a slot taken first (a handler interrupting this one
 * takes the next), then filled, its function last.  An entry's position
 * and a tail call's end are taken now, while its stack is live.
 */
static void probe_queue(uint64_t fn, uint64_t site, uint64_t now, int is_exit, uintptr_t sp)
{
	uint32_t n = __atomic_fetch_add(&tls.npending, 1, __ATOMIC_RELAXED);
	struct rt_pending *e;
	uint64_t caller;

	if (n >= RT_PENDING || !tls.x) {
		__atomic_fetch_add(&tls.pending_lost, 1, __ATOMIC_RELAXED);
		return;
	}
	e = &tls.x->pending[n];
	if (!is_exit && unlikely(probe_tail(&site, sp, &caller))) {
		/* the frame the jump ends: its exit first, in this slot */
		e->site = 0;
		e->tsc = now;
		e->sp = 0;
		barrier();
		__atomic_store_n(&e->fn, caller, __ATOMIC_RELAXED);
		probe_queue(fn, site, now, 0, sp);
		return;
	}
	e->site = site;
	e->tsc = now;
	e->sp = is_exit ? 0 : sp;
	e->cfa = is_exit ? 0 : rt_cfa_scan(site, sp);
	e->pc = is_exit ? 0 : ((const uint64_t *)sp)[-1];
	barrier();
	__atomic_store_n(&e->fn, fn, __ATOMIC_RELAXED);
}

__attribute__((noinline, cold)) void probe_replay_done(struct sc_eng_thread *t)
{
	do {
		if (!tls.busy) {
			/* (a handler that runs before this store applies its own
			 * events, and those queued, itself) */
			tls.busy = stack_pointer();
			barrier();
		}
		probe_replay(t);
	} while (probe_release());
}

/*
 * The time a slow path took (a new calling context, the kernel's records
 * read, a table grown) is the runtime's, not the program's: measured here,
 * where it is paid, and added to the probe cost of the interval it falls
 * in (the one after this event), less what the fast path would have spent
 * after its clock read (half an entry's cost, near enough).
 */
static inline void slow_cost(struct sc_eng_thread *t, uint64_t now)
{
	uint64_t end = __rdtsc(), fast = t->cost[0][0] / 2;

	if (end > now + fast)
		t->acc += end - now - fast;
}

static __attribute__((noinline)) void probe_slow(struct sc_eng_thread *t, uint64_t fn, uint64_t site,
						 uint64_t now, uintptr_t sp)
{
	probe_apply(t, fn, site, now, sp);
	if (unlikely(tls.unwind == RT_UNWIND_CAUGHT) &&
	    (t->top == t->stack || t->top->cfa == SC_ENG_NO_CFA || t->top->cfa > tls.catch_sp)) {
		/* the frames an exception unwound are closed by now */
		tls.unwind = 0;
		sc_eng_more_of(t)->repair_cause = SC_ENG_REPAIR_OTHER;
	}
	if (likely(!sc_rt_clk.off))
		slow_cost(t, now);
	probe_done(t);
}

static int on_alt_stack(void)
{
	stack_t ss;

	return !rt_sys2(SYS_sigaltstack, 0, &ss) && (ss.ss_flags & SS_ONSTACK);
}

/*
 * A probe with no engine state (first event, off), inside a probe, or the
 * first one of a process made without fork's handlers.  sp is the hook's
 * stack pointer: compared with the running probe's, it tells a signal
 * handler (below it) from code a longjmp took back above it.
 */
static __attribute__((noinline, cold)) void probe_cold(uint64_t fn, uint64_t site, int is_exit,
						       uintptr_t sp)
{
	uint64_t now;
	struct sc_eng_thread *t;

	/* a thread's first event: made by a thread whose TSC was off, it
	 * inherited the setting, and a read here would fault (thread_start
	 * makes it untimed) */
	if (unlikely(tls.state == RT_NEW && !rt_thread()) && !sc_rt_clk.off && rt.state == RT_ON &&
	    !rt.sandboxed && tsc_refused())
		sc_rt_clk.off = 1;
	now = rt_clock();

	if (!*rt_alive && rt.state == RT_ON) {
		child_start(sp);
		t = rt_thread();
		if (t && tls.state == RT_ON && !tls.busy) {
			tls.busy = sp;
			barrier();
			probe_slow(t, fn, site, rt_clock(), is_exit ? 0 : sp);
			return;
		}
	}
	t = tls.t;
	if (unlikely(sc_rt_clk.off))
		t = tls.t_notsc;
	if (tls.busy) {
		if (!t || sp < tls.busy || on_alt_stack()) {
			/* a signal handler inside a probe: queue the event */
			probe_queue(fn, site, now, is_exit, sp);
			return;
		}
		/* the probe that was running was left by a longjmp: take over */
		tls.busy = sp;
		barrier();
		if (tls.npending)
			probe_replay(t);
		probe_slow(t, fn, site, now, is_exit ? 0 : sp);
		return;
	}
	if (t && sc_rt_clk.off && tls.state == RT_ON) {
		/* the TSC is off: every event comes here, counted untimed */
		tls.busy = sp;
		barrier();
		probe_slow(t, fn, site, now, is_exit ? 0 : sp);
		return;
	}
	if (t || tls.state != RT_NEW) {
		if (rt.state == RT_ON && tls.state == RT_OFF && rt.hdr)
			__atomic_fetch_add(&rt.hdr->arena.lost, 1, __ATOMIC_RELAXED);
		return;
	}
	tls.busy = sp;
	barrier();
	t = thread_start(sp);
	if (!t) {
		tls.busy = 0;
		return;
	}
	probe_slow(t, fn, site, rt_clock(), is_exit ? 0 : sp);
}

/*
 * The hooks are two-instruction trampolines: they pass the instrumented
 * function's stack pointer at its call of the hook (just above the return
 * address the call pushed) to the C probes.  Unlike a stack pointer read in
 * C, it does not depend on what the compiler makes the probe save on the
 * stack, and it costs no frame.
 */
__asm__(".text\n"
	".globl __cyg_profile_func_enter\n"
	".type __cyg_profile_func_enter, @function\n"
	"__cyg_profile_func_enter:\n"
	".globl sc_hook_enter\n"           /* the same, never preempted: for attach.c, */
	".hidden sc_hook_enter\n"          /* loaded after libc's no-op hooks */
	"sc_hook_enter:\n"
	"\tendbr64\n"
	"\tlea 8(%rsp), %rdx\n"
	"\tjmp sc_rt_enter\n"
	".size __cyg_profile_func_enter, .-__cyg_profile_func_enter\n"
	".globl __cyg_profile_func_exit\n"
	".type __cyg_profile_func_exit, @function\n"
	"__cyg_profile_func_exit:\n"
	".globl sc_hook_exit\n"
	".hidden sc_hook_exit\n"
	"sc_hook_exit:\n"
	"\tendbr64\n"
	"\tmovq sc_rt_clk@gottpoff(%rip), %rax\n"
	"\tmovq %fs:(%rax), %rcx\n"         /* fence | off << 32 */
	"\ttest %rcx, %rcx\n"
	"\tje 1f\n"
	"\tcmp $1, %rcx\n"
	"\tjne 2f\n"                        /* the TSC is off */
	"\tlfence\n"
	"1:\n"
	"\trdtsc\n"
	"\tshl $32, %rdx\n"
	"\tor %rdx, %rax\n"
	"\tmov %rax, %rcx\n"
	"\tlea 8(%rsp), %rdx\n"
	"\tjmp sc_rt_exit_at\n"
	"2:\n"
	"\txor %ecx, %ecx\n"
	"\tlea 8(%rsp), %rdx\n"
	"\tjmp sc_rt_exit_at\n"
	".size __cyg_profile_func_exit, .-__cyg_profile_func_exit\n");

/*
 * Reading the clock so that a function's own work is inside its interval
 * and the probes' work is not (measured: docs/accuracy.md).  rdtsc is not
 * ordered with the instructions around it, and a function's first
 * instructions would run in parallel with the end of its entry probe:
 *  - an exit reads the clock first thing, in its trampoline, after an
 *    lfence that waits for the function's last instructions to finish
 *    (without it, the end of a 40 ns multiply chain was charged to the
 *    caller: the leaf showed 22-26 ns);
 *  - an entry reads it last, after the probe's lookups, and ends with an
 *    lfence, so that the function starts once the probe is done.
 * The probes' cost then adds to an interval instead of overlapping with
 * the program's work, which is what makes it removable (SPEC section 10).
 */

/*
 * A caller's exit (its last callee has returned) orders its clock read only
 * if its work since then is long: a node's flag, learned at its ordered
 * exits, which are all of them until a short tail is seen and then one call
 * in RT_TAIL_CHECK + 1, so that a tail that grows is seen again.  Long: over
 * the exit-to-exit probe cost by RT_TAIL_TICKS (about 10 ns).  An unordered read
 * can come early by the work not yet done, at most what the processor has
 * in flight, so a short tail loses a few ns at most to the caller (bench:
 * docs/accuracy.md); the fence it saves is a third of the probes' cost in
 * call-dense code.
 */
/* hidden: reached only from the trampolines (a direct jump, no PLT) */
__attribute__((used, visibility("hidden"))) void sc_rt_enter(void *fn, void *site, uintptr_t sp);
__attribute__((used, visibility("hidden"))) void sc_rt_exit_at(void *fn, void *site, uintptr_t sp, uint64_t now);
__attribute__((used, visibility("hidden"))) void sc_rt_exit(void *fn, void *site, uintptr_t sp);

void sc_rt_enter(void *fn, void *site, uintptr_t sp)
{
	struct sc_eng_thread *t = tls.t;
	uint64_t now, cfa;

	sc_rt_clk.fence = 1;               /* a leaf's exit, unless a call comes */
	if (unlikely(!t || tls.busy || !*rt_alive)) {
		probe_cold((uint64_t)fn, (uint64_t)site, 0, sp);
		return;
	}
	tls.busy = sp;
	barrier();
	if (likely(*tls.ring_head == tls.ring_seen)) {
		struct sc_eng_cs *cs;
		struct sc_eng_node *n = sc_eng_enter_find(t, (uint64_t)fn, (uint64_t)site, sp, &cs, &cfa);

		if (likely(n != NULL)) {
			sc_eng_enter_commit(t, n, cs, __rdtsc(), cfa, ((const uint64_t *)tls.busy)[-1]);
			probe_done(t);
			return;
		}
	}
	now = __rdtsc();
	/* sp again from tls.busy: one register less to keep on the way */
	probe_slow(t, (uint64_t)fn, (uint64_t)site, now, tls.busy);
}

/* The rest of an entry whose fast path found no node (tls.busy set):
 * retstack.c's library-call probe, through sc_rt_vsafe(). */
void sc_rt_enter_busy(void *fn, void *site, uintptr_t sp)
{
	(void)sp;
	probe_slow(tls.t, (uint64_t)fn, (uint64_t)site, __rdtsc(), tls.busy);
}

/* An exit whose clock was read (after an lfence) at `now`. */
void sc_rt_exit_at(void *fn, void *site, uintptr_t sp, uint64_t now)
{
	struct sc_eng_thread *t = tls.t;
	uint32_t fenced = sc_rt_clk.fence;
	struct sc_eng_node *m;

	(void)site;
	sc_rt_clk.fence = 1;
	if (unlikely(!t || tls.busy || !*rt_alive)) {
		probe_cold((uint64_t)fn, (uint64_t)site, 1, sp);
		return;
	}
	tls.busy = sp;
	barrier();
	m = t->top->node;
	if (fenced && t->prev_exit && m->func == (uint64_t)fn)
		rt_tail_learn(t, m, now);
	if (unlikely(*tls.ring_head != tls.ring_seen) ||
	    unlikely(!sc_eng_exit_fast(t, (uint64_t)fn, now))) {
		probe_slow(t, (uint64_t)fn, 0, now, 0);
		return;
	}
	m = t->top->node;
	sc_rt_clk.fence = (m->flags & SC_ENG_NODE_TAIL) || !(m->calls & RT_TAIL_CHECK);
	probe_done(t);
}

/* An exit from C (other trampolines): the clock read here. */
void sc_rt_exit(void *fn, void *site, uintptr_t sp)
{
	if (unlikely(sc_rt_clk.off)) {
		sc_rt_exit_at(fn, site, sp, 0);    /* the cold path, untimed */
		return;
	}
	if (sc_rt_clk.fence)
		_mm_lfence();
	sc_rt_exit_at(fn, site, sp, __rdtsc());
}

/*
 * An exception is thrown (retstack.c's _Unwind_RaiseException and
 * _Unwind_Resume_or_Rethrow), and caught (__cxa_begin_catch): the frames
 * it unwinds without their exits (compiled-in hooks have no exit on the
 * unwinding path) are repaired at the thread's next events, counted as
 * the exception's until no frame below the catch (sp, the catching
 * frame's stack pointer) is left, not merely until the next slow path (one
 * that only drained the ring, a sample or an OS record, may come before
 * the entry that closes them).
 */
void sc_rt_unwind_note(int caught, uintptr_t sp)
{
	struct sc_eng_thread *t = tls.t;

	if (!t || tls.state != RT_ON)
		return;
	if (!caught) {
		sc_eng_more_of(t)->repair_cause = SC_ENG_REPAIR_EXCEPTION;
		tls.unwind = RT_UNWIND_THROWN;
	} else if (tls.unwind) {
		tls.unwind = RT_UNWIND_CAUGHT;
		tls.catch_sp = sp;
	}
}
