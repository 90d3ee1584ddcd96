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

#include "runtime/calib.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <linux/perf_event.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <ucontext.h>
#include <x86intrin.h>

#define FD_BASE    1000       /* our descriptors start here when the limit allows */

__thread struct rt_tls tls __attribute__((tls_model("initial-exec")));
__thread struct sc_rt_clock sc_rt_clk __attribute__((tls_model("initial-exec"), visibility("hidden"), aligned(8)));


static const uint64_t rt_alive_const = 1;
const volatile uint64_t *rt_alive = &rt_alive_const;
static volatile uint64_t *rt_alive_page;

struct rt_state rt;
static pthread_once_t rt_once = PTHREAD_ONCE_INIT;

/* ---- descriptors -------------------------------------------------------- */

/*
 * fd, moved to rt.fd_base or above (close-on-exec), so that the program's
 * own open() calls get the numbers they would get without us and fds 0-2
 * (closed by some programs at start) are never ours.  Returns the new
 * descriptor, or -1 (fd closed) when there is no room up there: the
 * runtime then goes without rather than crowd the program.
 */
int fd_high(long fd)
{
	long hi;

	if (fd < 0)
		return -1;
	if (fd >= rt.fd_base)
		return (int)fd;
	hi = rt_sys3(SYS_fcntl, fd, F_DUPFD_CLOEXEC, rt.fd_base);
	rt_close((int)fd);
	if (hi < 0) {
		why(SC_SHM_WHY_FDCAP);
		return -1;
	}
	return (int)hi;
}

/*
 * A program may lower RLIMIT_NOFILE below the descriptors we take (to 3,
 * say: it opens nothing itself), and then fork or start threads, whose
 * image file and perf events need descriptors of their own.  For the time
 * of our opens, the soft limit (and the hard one, if the process may) goes
 * up to what fd_high() needs, then back: descriptors already open stay
 * valid under a lower limit.  Nothing of the program's runs in between but
 * its signal handlers.  Returns 1 if *old is to be restored.
 */
int fd_room_begin(struct rlimit *old)
{
	struct rlimit want;

	if (rt.sandboxed || rt_sys4(SYS_prlimit64, 0, RLIMIT_NOFILE, 0, old) ||
	    old->rlim_cur == RLIM_INFINITY || old->rlim_cur >= (rlim_t)rt.fd_base + 64)
		return 0;
	want.rlim_cur = (rlim_t)rt.fd_base + 64;
	want.rlim_max = old->rlim_max > want.rlim_cur ? old->rlim_max : want.rlim_cur;
	if (!rt_sys4(SYS_prlimit64, 0, RLIMIT_NOFILE, &want, 0))
		return 1;
	want.rlim_cur = want.rlim_max = old->rlim_max;     /* without CAP_SYS_RESOURCE */
	return want.rlim_cur > old->rlim_cur && !rt_sys4(SYS_prlimit64, 0, RLIMIT_NOFILE, &want, 0);
}

void fd_room_end(int raised, const struct rlimit *old)
{
	if (raised)
		rt_sys4(SYS_prlimit64, 0, RLIMIT_NOFILE, old, 0);
}

extern void *__libc_stack_end;

/*
 * The CFA of func, entered with call site `site` and a probe whose stack
 * pointer was sp.  The call site is the return address the call pushed, at
 * CFA - 8: found by a short scan up the stack the first time, then known as
 * an offset from sp (cached per thread, checked with one load each time).
 * The scan stops at the top of the main thread's stack; SC_ENG_NO_CFA if
 * the address is not found (the frame is then never closed by position).
 */
/*
 * A patched function's return address slot holds the return trampoline
 * once its entry stub has run: an entry applied later (a signal handler's,
 * queued while a probe ran) finds that there instead of the call site.
 */
static uint64_t rt_ret_tramp;

uint64_t rt_cfa_of(struct sc_eng_arena *a, uint64_t func, uint64_t site, uint64_t sp)
{
	typeof(tls.cfa_cache[0]) *e = &tls.cfa_cache[(func >> 4) % RT_CFA_CACHE];
	uint64_t limit = sp + (16u << 10), end = (uint64_t)__libc_stack_end, ret;
	const uint64_t *p;

	(void)a;
	if (e->fn == func && !e->k)
		return SC_ENG_NO_CFA;      /* not found before: do not scan again */
	if (e->fn == func) {
		ret = ((const uint64_t *)(sp + e->k))[-1];
		if (ret == site || (ret == rt_ret_tramp && ret))
			return sp + e->k;
	}
	if (end > sp && end < limit)
		limit = end;
	for (p = (const uint64_t *)sp; (uint64_t)(p + 1) <= limit; p++) {
		if (*p == site || (*p == rt_ret_tramp && rt_ret_tramp)) {
			e->fn = func;
			e->k = (uint64_t)(p + 1) - sp;
			return (uint64_t)(p + 1);
		}
	}
	e->fn = func;
	e->k = 0;
	return SC_ENG_NO_CFA;
}

/* ---- threads and processes -------------------------------------------- */

static void thread_name(struct sc_eng_thread *t)
{
	char name[17] = { 0 };

	if (!rt.sandboxed && !rt_sys2(SYS_prctl, PR_GET_NAME, name))
		memcpy(t->name, name, sizeof(t->name));
}


/*
 * pthread key destructor: the thread is ending.  The first round closes its
 * OS events; the key is then set again so that we run in every round of
 * destructors.  After the last one the thread may still run the program's
 * code (glibc frees the keys' memory and its own with the program's free()),
 * so it keeps recording; it is put on the list of ending threads, and the
 * next thread to start gives the memory of those that are gone back to the
 * arena (rt_reap).
 */
static void rt_thread_exit(void *arg)
{
	struct sc_eng_thread *t = arg;
	unsigned i;

	if (rt.sandboxed || !*rt_alive)
		return;                    /* no system calls; or a fork child's copy of
					      its parent's thread, not ours to touch */
	tls.busy = stack_pointer();    /* a signal's probes wait meanwhile */
	barrier();
	if (!tls.exit_round++) {
		os_close(t);
		thread_name(t);
	}
	if (tls.exit_round < PTHREAD_DESTRUCTOR_ITERATIONS) {
		pthread_setspecific(rt.key, t);
	} else if (tls.t == t) {
		for (i = 0; i < RT_ENDING; i++) {
			struct sc_eng_thread *none = NULL;

			if (__atomic_compare_exchange_n(&rt.ending[i].t, &none, t, 0,
							__ATOMIC_ACQ_REL, __ATOMIC_RELAXED)) {
				__atomic_store_n(&rt.ending[i].tid, (uint64_t)t->tid + 1, __ATOMIC_RELEASE);
				break;
			}
		}
	}
	barrier();
	tls.busy = 0;
}

/*
 * Retire the ending threads that are gone: the kernel no longer knows their
 * thread id in this process (a thread's id is not handed out again while
 * it runs).  Called as a thread starts; the memory goes to that thread.
 */
static void rt_reap(void)
{
	unsigned i;

	for (i = 0; i < RT_ENDING; i++) {
		struct sc_eng_thread *t = __atomic_load_n(&rt.ending[i].t, __ATOMIC_ACQUIRE);
		uint64_t tid = __atomic_load_n(&rt.ending[i].tid, __ATOMIC_ACQUIRE);

		if (!t || !tid || rt_sys3(SYS_tgkill, rt.pid, (long)tid - 1, 0) != -ESRCH)
			continue;
		/* whoever empties the slot retires the thread */
		if (!__atomic_compare_exchange_n(&rt.ending[i].t, &t, NULL, 0,
						 __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
			continue;
		__atomic_store_n(&rt.ending[i].tid, 0, __ATOMIC_RELEASE);
		sc_eng_thread_retire(t);
	}
}

/* The "same process" word: a fresh MADV_WIPEONFORK page holding 1. */
void alive_arm(void)
{
	long p;

	if (!rt_alive_page) {
		p = rt_sys6(SYS_mmap, 0, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (rt_mmap_failed(p))
			return;
		if (rt_sys3(SYS_madvise, p, PAGE, MADV_WIPEONFORK)) {
			rt_sys2(SYS_munmap, p, PAGE);
			return;
		}
		rt_alive_page = (volatile uint64_t *)p;
	}
	*rt_alive_page = 1;
	__atomic_store_n(&rt_alive, rt_alive_page, __ATOMIC_RELEASE);
}


/*
 * The environment before libc has set __environ: a program's
 * .preinit_array functions run first (a malloc of its own installed from
 * there, instrumented), and their probes start the runtime.  Our variables
 * only, from /proc/self/environ, into static memory.
 */
static char **early_environ(void)
{
	static char buf[16384];
	static char *vars[32];
	long fd = rt_sys4(SYS_openat, AT_FDCWD, "/proc/self/environ", O_RDONLY | O_CLOEXEC, 0), n, got = 0;
	size_t nv = 0;
	char *p;

	if (fd < 0)
		return NULL;
	while (got < (long)sizeof(buf) - 1 && (n = rt_sys3(SYS_read, fd, buf + got, sizeof(buf) - 1 - (size_t)got)) > 0)
		got += n;
	rt_close((int)fd);
	buf[got] = 0;
	for (p = buf; p < buf + got && nv < sizeof(vars) / sizeof(vars[0]) - 1; p += rt_strlen(p) + 1)
		if (!memcmp(p, "STACKCLOCK", 10))
			vars[nv++] = p;
	vars[nv] = NULL;
	return vars;
}

static void rt_process_init(void)
{
	char **envp = __environ ? __environ : early_environ();
	const char *prefix = rt_getenv(envp, SC_SHM_ENV_PREFIX), *s, *slash = NULL, *end;
	struct rlimit lim;
	size_t len;

	rt.state = RT_OFF;
	rt.fd = rt.dirfd = rt.spare_fd = -1;
	if (!prefix || !*prefix || (len = rt_strlen(prefix)) >= sizeof(rt.dir))
		return;
	for (s = prefix; *s; s++)
		if (*s == '/')
			slash = s;
	if (!slash || rt_strlen(slash + 1) >= sizeof(rt.stem) - 64)
		return;
	rt_stpcpy(rt.dir, prefix, (size_t)(slash - prefix) + 1 + (slash == prefix));
	rt_stpcpy(rt.stem, slash + 1, sizeof(rt.stem));
	s = rt_getenv(envp, SC_SHM_ENV_OS);
	rt.os_mask = s ? (uint32_t)rt_atou(s, NULL) & SC_OS_ALL : SC_OS_ALL;
	s = rt_getenv(envp, SC_SHM_ENV_SAMPLE_HZ);
	rt.sample_hz = s ? (uint32_t)rt_atou(s, NULL) : 0;
	if (rt.sample_hz > 100000)
		rt.sample_hz = 100000;
	s = rt_getenv(envp, SC_SHM_ENV_CLOCK0);
	if (s) {
		rt.clock0_tsc = rt_atou(s, &end);
		rt.clock0_ns = *end == ',' ? rt_atou(end + 1, NULL) : 0;
	}
	if (!rt.clock0_ns) {
		rt.clock0_tsc = rt_clock();
		rt.clock0_ns = mono_ns();
	}
	s = rt_getenv(envp, SC_SHM_ENV_TP);
	if (s) {
		rt.tp_enter = rt_atou(s, &end);
		rt.tp_exit = *end == ',' ? rt_atou(end + 1, NULL) : 0;
	}
	s = rt_getenv(envp, SC_SHM_ENV_COST);
	for (int i = 0; s && i < 5; i++) {
		uint64_t v = rt_atou(s, &end);

		rt.cost[i] = v < (1u << 20) ? (uint32_t)v : 0;   /* a millisecond is no probe */
		s = *end == ',' ? end + 1 : NULL;
	}
	/* descriptors: a quarter of RLIMIT_NOFILE at most, from the top quarter
	 * (or from FD_BASE when the limit is high) */
	if (!rt_sys4(SYS_prlimit64, 0, RLIMIT_NOFILE, 0, &lim) && lim.rlim_cur != RLIM_INFINITY) {
		rt.fds_budget = (long)(lim.rlim_cur / 4);
		rt.fd_base = lim.rlim_cur >= 2 * FD_BASE ? FD_BASE : (int)(lim.rlim_cur - lim.rlim_cur / 4);
	} else {
		rt.fds_budget = 1 << 16;
		rt.fd_base = FD_BASE;
	}
	if (rt.fd_base < 3)
		rt.fd_base = 3;
	if (image_open(NULL))
		return;
	if (pthread_key_create(&rt.key, rt_thread_exit))
		return;
	alive_arm();
	rt.state = RT_ON;
	spare_make();
}

/*
 * Set up before main (the first probe may come later, or never): libc's
 * calls made from here (pthread_atfork may allocate, and a program may
 * define malloc itself, instrumented) find this thread "off" and are not
 * counted as the program's.
 */
/*
 * Calibration mode (calib.h): record the calibration program's thread on a
 * private engine thread; at exit, write the costs to descriptor cal.fd.
 */
static struct {
	int fd;
	long map;
	size_t len;
	struct sc_eng_arena arena;
	struct sc_eng_thread *t;
} cal = { .fd = -1 };

static void rt_calib_begin(int fd)
{
	cal.len = 4u << 20;
	cal.map = rt_sys6(SYS_mmap, 0, (long)cal.len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (rt_mmap_failed(cal.map))
		return;
	sc_eng_arena_init(&cal.arena, (void *)cal.map, cal.len);
	cal.arena.cfa_of = rt_cfa_of;
	cal.t = sc_eng_thread_new(&cal.arena, (uint32_t)rt_gettid(), __rdtsc());
	if (!cal.t)
		return;
	sc_eng_set_cost(cal.t, 1, 1, 1, 1, 1);
	cal.fd = fd;
	alive_arm();
	tls.ring_head = &tls.ring_seen;
	tls.t = cal.t;
	tls.state = RT_ON;
}

static void rt_calib_end(void)
{
	const unsigned long long *plain;
	struct rt_calib c;
	char line[160], *q = line;

	tls.t = NULL;
	tls.state = RT_OFF;
	plain = (const unsigned long long *)dlsym(RTLD_DEFAULT, RT_CALIB_PLAIN);
	if (cal.fd < 0 || !plain || rt_calib_from_tree(cal.t, plain, &c))
		return;
	q = rt_utoa(q, c.cost[0][0], 24);
	*q++ = ' ';
	q = rt_utoa(q, c.cost[0][1], 24);
	*q++ = ' ';
	q = rt_utoa(q, c.cost[1][0], 24);
	*q++ = ' ';
	q = rt_utoa(q, c.cost[1][1], 24);
	*q++ = ' ';
	q = rt_utoa(q, c.ex_work, 24);
	*q++ = ' ';
	q = rt_utoa(q, c.batches, 24);
	*q++ = '\n';
	rt_sys3(SYS_write, cal.fd, line, q - line);
}

static __attribute__((constructor)) void rt_ctor(void)
{
	int saved = tls.state;
	const char *calfd = rt_getenv(__environ, RT_CALIB_ENV);

	if (calfd) {
		rt_calib_begin((int)rt_atou(calfd, NULL));
		sc_patch_start(__environ);     /* stackclock-calib-patch */
		return;
	}
	tls.state = RT_SELF;
	jumps_resolve();
	rt_ret_tramp = sc_patch_arch_return();
	if (tsc_refused())
		sc_rt_clk.off = 1;     /* until thread_start has the engine thread */
	pthread_once(&rt_once, rt_process_init);
	if (rt.state == RT_ON)
		pthread_atfork(rt_atfork_prepare, rt_atfork_parent, rt_atfork_child);
	if (rt.state == RT_ON)
		sc_patch_start(__environ);     /* a program built without hooks */
	tls.state = saved;
}

/* A thread's first event: its engine state, its OS-event ring. */
static struct sc_eng_thread *thread_start(uintptr_t sp)
{
	struct sc_eng_thread *t;
	struct rlimit lim;
	int room;

	tls.state = RT_SELF;           /* our own calls into libc are not the program's */
	barrier();
	pthread_once(&rt_once, rt_process_init);
	tls.state = RT_OFF;            /* until the thread is on: its events are lost */
	if (rt.state != RT_ON)
		return NULL;
	/* in a sandbox: gettid, perf events, no more system calls */
	if (!rt.sandboxed)
		rt_reap();
	if (!rt.sandboxed && tsc_refused())
		sc_rt_clk.off = 1;     /* inherited from the thread that made this one */
	t = rt.sandboxed ? NULL : sc_eng_thread_new(&rt.arena, (uint32_t)rt_gettid(), rt_clock());
	if (t)
		sc_eng_set_cost(t, rt.cost[0], rt.cost[1], rt.cost[2], rt.cost[3], rt.cost[4]);
	if (!t) {
		__atomic_fetch_add(&rt.hdr->arena.lost, 1, __ATOMIC_RELAXED);
		return NULL;
	}
	tls.state = RT_SELF;
	thread_name(t);
	room = fd_room_begin(&lim);
	os_open(t);
	fd_room_end(room, &lim);
	pthread_setspecific(rt.key, t);
	tls.t = t;
	tls.sp_first = sp;
	tls.state = RT_ON;
	if (sc_rt_clk.off) {
		sc_rt_clk.off = 0;
		tsc_off();
	}
	return t;
}

/* The image ends (exit, or return from main): note when. */
static __attribute__((destructor)) void rt_fini(void)
{
	if (cal.t) {
		rt_calib_end();
		return;
	}
	if (rt.state != RT_ON || !*rt_alive)
		return;
	rt.hdr->end_tsc = rt_clock();
	__atomic_fetch_or(&rt.hdr->flags, SC_SHM_ENDED, __ATOMIC_RELEASE);
	if (tls.t)
		thread_name(tls.t);
}

/* ---- the hooks --------------------------------------------------------- */

/*
 * The hooks.  The common case is inline and free of calls (so the compiler
 * gives the hooks no stack frame); everything else is in probe_slow().
 *
 * Signal handlers: while a probe runs, tls.busy holds its stack pointer.  A
 * probe of a signal handler that interrupted it must not touch the engine;
 * it queues its event, and the interrupted probe applies the queue before it
 * returns.  A handler may also never return to the interrupted probe
 * (siglongjmp): the next probe then runs with a stack pointer above the
 * abandoned one's, takes over, and applies the queue.  The engine's state
 * is consistent at every instruction boundary but the stores that update a
 * frame, so an abandoned probe costs at most one call's statistics.
 */
/* One event: an entry whose probe ran at stack pointer sp, or (sp 0) an exit. */
static void probe_apply(struct sc_eng_thread *t, uint64_t fn, uint64_t site, uint64_t now, uintptr_t sp)
{
	if (unlikely(sc_rt_clk.off)) {
		/* no clock: nothing is timed, OS records included */
		now = t->last_raw;
		if (*tls.ring_head != tls.ring_seen)
			ring_discard();
	}
	if (*tls.ring_head != tls.ring_seen)
		rt_os_drain(t, now);
	if (!sp)
		sc_eng_exit(t, fn, now);
	else
		sc_eng_enter_sp(t, fn, site, now, sp, ((const uint64_t *)sp)[-1]);
}

/* Apply the events queued by signal handlers (with tls.busy set). */
__attribute__((noinline, cold)) void probe_replay(struct sc_eng_thread *t)
{
	uint32_t i = 0, n;

	for (;;) {
		n = __atomic_load_n(&tls.npending, __ATOMIC_RELAXED);
		for (; i < n && i < RT_PENDING; i++) {
			const struct rt_pending *e = &tls.pending[i];
			probe_apply(t, e->fn, e->site, e->tsc, e->sp);
		}
		if (__atomic_compare_exchange_n(&tls.npending, &n, 0, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
			break;
	}
	t->lost_nested += tls.pending_lost;
	tls.pending_lost = 0;
}

__attribute__((noinline, cold)) void probe_replay_done(struct sc_eng_thread *t)
{
	probe_replay(t);
	barrier();
	tls.busy = 0;
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
	if (unlikely(tls.unwind == RT_UNWIND_CAUGHT)) {
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
	uint64_t now = rt_clock();
	struct sc_eng_thread *t;

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
		uint32_t n = tls.npending;

		if (!t || sp < tls.busy || on_alt_stack()) {
			/* a signal handler inside a probe: queue the event */
			if (n >= RT_PENDING) {
				tls.pending_lost++;
				return;
			}
			tls.pending[n] = (struct rt_pending){ fn, site, now, is_exit ? 0 : sp };
			barrier();
			tls.npending = n + 1;
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
	"\tendbr64\n"
	"\tlea 8(%rsp), %rdx\n"
	"\tjmp sc_rt_enter\n"
	".size __cyg_profile_func_enter, .-__cyg_profile_func_enter\n"
	".globl __cyg_profile_func_exit\n"
	".type __cyg_profile_func_exit, @function\n"
	"__cyg_profile_func_exit:\n"
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
#define RT_TAIL_CHECK 63
#define RT_TAIL_TICKS 32

static inline void rt_tail_learn(struct sc_eng_thread *t, struct sc_eng_node *m, uint64_t now)
{
	uint64_t tail = now > t->last_raw ? now - t->last_raw : 0;

	if (tail > (uint64_t)t->cost[1][1] + RT_TAIL_TICKS)
		m->flags |= SC_ENG_NODE_TAIL;
	else
		m->flags &= ~SC_ENG_NODE_TAIL;
}

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
 * the exception's until the first slow path after the catch.
 */
void sc_rt_unwind_note(int caught)
{
	struct sc_eng_thread *t = tls.t;

	if (!t || tls.state != RT_ON)
		return;
	if (!caught) {
		sc_eng_more_of(t)->repair_cause = SC_ENG_REPAIR_EXCEPTION;
		tls.unwind = RT_UNWIND_THROWN;
	} else if (tls.unwind) {
		tls.unwind = RT_UNWIND_CAUGHT;
	}
}
