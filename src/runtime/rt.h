/*
 * rt — the private contract between the files of the injected runtime
 * (libstackclock.so, LD_PRELOADed into a program built with
 * -finstrument-functions or patched at run time, see patch.h).  It defines
 * the hooks the compiler calls and feeds each thread's events to the
 * attribution engine (engine.h), whose state lives in a shared-memory file
 * the recorder reads afterwards (shm.h).
 *
 * Paranoia: this code runs inside someone else's process.  It never writes
 * to the target's stdout/stderr, never exits it, keeps its symbols hidden
 * (runtime.map exports the hooks and the wrappers only), never calls
 * a function the program could define (system calls are made directly, see
 * sys.h), keeps its descriptors far above the program's (close-on-exec,
 * never 0-2), and a probe that interrupts a probe (a signal handler) is
 * queued rather than corrupting state.  When the shared memory, the
 * kernel's perf events or a resource limit refuse us, the program runs as
 * it would without us and the loss, with its reason, is recorded.
 *
 * The files, one concern each (this header is their contract):
 *   probe.c      the hooks: their trampolines, the entry and exit probes'
 *                fast paths, the slow and cold paths (a thread's first
 *                event, a signal handler's events queued, a child made
 *                without fork's handlers), the CFA of a new frame
 *   process.c    set-up from the environment (constructor, destructor), a
 *                thread's start and end, where our descriptors go,
 *                calibration mode
 *   fork.c       fork(): the forking thread's stack kept, the child's new
 *                image started from it; vfork(): no probe of the child's
 *                changes its parent's state
 *   os_ring.c    a thread's OS events (context switches, system calls, page
 *                faults, samples): its perf ring opened, drained into the
 *                engine, closed
 *   image.c      this image's shared-memory file: created, mapped, backed
 *                as the arena grows, the spare made ahead for a fork child
 *   modules.c    the loaded objects' address ranges, the image's list of
 *                modules (an object listed when an address in it is first
 *                seen), the runtime's own span
 *   unload.c     dlclose(): the addresses of an object unmapped retired
 *   jumps.c      longjmp() and kin: the frames below a jump's target closed
 *   ctx.c        swapcontext(), setcontext(), makecontext(): each context a
 *                thread of execution of its own, followed across switches
 *   sandbox.c    prctl() and syscall(): seccomp about to close, the
 *                time-stamp counter turned off or on
 *   exec.c       the environment: our variables out of the program's, back
 *                into what it execs (exec family, posix_spawn, system,
 *                popen); the programs that cannot take the runtime noted
 * and, through their own headers: patch.c, retstack.c and patch_x86_64.c
 * patch programs built without hooks (patch.h); calib.c reads the probes'
 * cost from the calibration run (calib.h).
 *
 * Hot paths: the probes' fast paths call nothing but probe.c's own code and
 * the static inline functions here and in engine.h (no LTO: a call into
 * another file stays a call), so that the files cost the probes nothing.
 * Everything else declared here is a cold path, and hidden like the rest of
 * the runtime (runtime.map exports the hooks and wrappers only).
 *
 * State: `rt` is the process image's (set up once, reset in a fork child),
 * `tls` the thread's own (its probes, wrappers and handlers only; a signal
 * handler's probes queue their events, see probe.c).
 */
#ifndef SC_RUNTIME_RT_H
#define SC_RUNTIME_RT_H

/* Vectorised pairs of loads over the frame just pushed stall on store
 * forwarding; scalar code is faster here. */
#pragma GCC optimize("no-tree-slp-vectorize")

#include "runtime/patch.h"
#include "runtime/shm.h"
#include "runtime/sys.h"
#include "format/scdata.h"

#include <linux/perf_event.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>
#include <x86intrin.h>

/* Everything declared here is the runtime's own (direct calls, no GOT). */
#pragma GCC visibility push(hidden)

#define HOOK __attribute__((visibility("default")))
#define barrier() __asm__ __volatile__("" ::: "memory")
#define PAGE       4096ul

enum { EV_SWITCH, EV_SYS_ENTER, EV_SYS_EXIT, EV_FAULT, EV_SAMPLE, NEV };

/* A thread's perf events and the reading state of their common ring. */
struct rt_ring {
	struct perf_event_mmap_page *pg;
	uint8_t *data;
	uint64_t mask;                 /* data size - 1 */
	size_t map_len;
	uint64_t id[NEV];              /* sample ids, 0 if not opened */
	int in_sys, out, depth;        /* measuring OS time (exact mode) */
	uint64_t since;                /* ns when depth went 0 -> 1 */
	/* the timeline's OS items: when the open ones began */
	uint64_t tl_sys_ns, tl_out_ns;
	int64_t tl_sysno;
};

/* An event that arrived while a probe of the same thread was running (a
 * signal handler's), kept for that probe to apply when it is done.  An
 * entry's position is taken when it is queued: by the time it is applied
 * the handler has returned and its stack is reused. */
struct rt_pending {
	uint64_t fn, site, tsc;
	uint64_t sp;                   /* the probe's stack pointer; 0 for an exit */
	uint64_t cfa;                  /* the entry's CFA (SC_ENG_NO_CFA: unknown) */
	uint64_t pc;                   /* where its probe was called from */
};
#define RT_PENDING 64
#define RT_ENDING 256
#define RT_CFA_CACHE 4096

/* The forking thread's stack at a fork(): {function, call site} of each
 * open frame, outermost first, in private memory the child inherits. */
struct rt_snap {
	uint64_t n, map_len;
	uint64_t fs[][4];              /* function, call site, CFA, pc */
};

struct rt_tls {
	struct sc_eng_thread *t;       /* the thread's engine state, or NULL */
	struct sc_eng_thread *t_notsc; /* the same while the TSC is off (tls.t NULL) */
	uintptr_t busy;                /* stack pointer of the probe running, 0 */
	const volatile uint64_t *ring_head;
	uint64_t ring_seen;
	struct rs_stack *rs;           /* retstack.c's return stack, or NULL */
	uint32_t npending;             /* events in pending[] (slots taken: a
	                                  handler's probe may interrupt another
	                                  handler's queueing) */
	int state;                     /* RT_* */
	uint64_t pending_lost;
	uintptr_t sp_first;            /* stack pointer of the thread's first probe */
	struct rt_snap *snap;          /* set between fork's prepare and parent/child */
	int spare;                     /* 1 + the descriptor of the spare image file
	                                  this thread's fork took, 0 if none */
	int exit_round;                /* thread-exit destructor rounds seen */
	int unwind;                    /* RT_UNWIND_*: an exception in flight */
	uintptr_t catch_sp;            /* where it was caught (RT_UNWIND_CAUGHT) */
	struct rt_tls_ext *x;          /* the rest (rt_ext()), or NULL */
};

/*
 * What a thread keeps that is too big for the static TLS block: a runtime
 * loaded by dlopen() (attaching to a running process, SPEC section 13) may
 * only use glibc's small surplus of it (about 1.5 KB, shared with every
 * library loaded so), so struct rt_tls stays small and this is mapped at
 * the thread's first need, with raw system calls (vector registers and
 * libc untouched), and unmapped when the thread is reaped.
 */
#define RT_XSAVE_MAX 4096
struct rt_ctx;
struct rt_tls_ext {
	uint8_t xarea[RT_XSAVE_MAX] __attribute__((aligned(64)));  /* modules.c's XSAVE */
	struct { uint64_t pc, k; } cfa_cache[RT_CFA_CACHE];   /* CFA - sp per probe call (probe.c) */
	struct rt_pending pending[RT_PENDING];
	struct rt_ring ring;
	char spare_name[128];          /* the spare image file fork took: its name */
	uint64_t spare_id[2];          /* its st_dev, st_ino */
	struct sc_eng_thread *t;       /* the thread's engine state, once it has one */
	struct rs_stack *rs;           /* retstack.c's stack, once it has one */
	struct rt_ctx *ctx_cur;        /* ctx.c: the context the thread runs, NULL:
	                                  its own, not switched away from yet (not
	                                  in static TLS: each attach's copy keeps
	                                  its static TLS, 14 attaches fit in 120
	                                  bytes a copy) */
	uint32_t reg;                  /* 1 + its index in rt_exts[], 0 if not there */
	size_t map_len;
	struct {                       /* the thread's state while a vfork child runs (fork.c) */
		struct sc_eng_thread *t, *t_notsc;
		int state;
	} vfork;
};
/* Every thread's rt_tls_ext (NULL: free), for attach.c's detach, which
 * restores the return addresses of every thread. */
#define RT_EXT_MAX 8192
extern struct rt_tls_ext *rt_exts[RT_EXT_MAX];
#define RT_TLS_STATIC_MAX 256          /* what the static block may take of us */
enum { RT_NEW, RT_ON, RT_OFF, RT_SELF, RT_VFORK };   /* RT_SELF: the runtime itself runs;
                                                     RT_VFORK: a vfork child runs (fork.c) */
enum { RT_UNWIND_THROWN = 1, RT_UNWIND_CAUGHT = 2 };

extern __thread struct rt_tls tls __attribute__((tls_model("initial-exec")));
/*
 * Read by the exit trampoline as one 8-byte word: fence, the next exit
 * orders its clock read (an lfence first; see the hooks); off, the kernel
 * turned this thread's time-stamp counter off (PR_SET_TSC, or seccomp's
 * strict mode on some kernels), where rdtsc would fault: calls are then
 * counted without times (tls.t is NULL, every probe takes the cold path).
 */
struct sc_rt_clock {
	uint32_t fence, off;
};
extern __thread struct sc_rt_clock sc_rt_clk __attribute__((tls_model("initial-exec"), aligned(8)));

/* The thread's struct rt_tls_ext, mapped now if it has none; NULL when
 * there is no memory (the callers go without: no cache, no queue). */
struct rt_tls_ext *rt_ext_map(void);
static inline struct rt_tls_ext *rt_ext(void)
{
	return tls.x ? tls.x : rt_ext_map();
}
/* Unmap x (a thread reaped, or a fork child's copy of another thread's) */
void rt_ext_unmap(struct rt_tls_ext *x);

/* The thread's engine state, whether its TSC is on (tls.t) or off. */
static inline struct sc_eng_thread *rt_thread(void)
{
	return tls.t ? tls.t : tls.t_notsc;
}

/* The TSC, or 0 where it is off (the engine counts a reading below the
 * previous one as equal: no time passes). */
static inline uint64_t rt_clock(void)
{
	return sc_rt_clk.off ? 0 : __rdtsc();
}

/*
 * Nonzero in the process that set the runtime up, zero in a child made by
 * fork or clone without CLONE_VM: it points into a MADV_WIPEONFORK page
 * once the runtime is on (before that, and on kernels without the advice,
 * at a constant).
 */
extern const volatile uint64_t *rt_alive;

/* The process image's state. */
struct rt_state {
	int state;                     /* RT_NEW until init, then RT_ON / RT_OFF */
	int pid;                       /* the process the state belongs to */
	int fd;                        /* our file, see shm_fd() */
	int dirfd;                     /* its directory (reachable after chroot) */
	dev_t dev, dir_dev;
	ino_t ino, dir_ino;
	struct sc_shm_header *hdr;
	struct sc_eng_arena arena;
	uint64_t cap;                  /* bytes of the mapping (limits applied) */
	uint64_t fsize_max;            /* RLIMIT_FSIZE, or UINT64_MAX */
	uint64_t committed;            /* the file is backed up to here */
	char name[256];                /* our file's name in dirfd */
	int spare_fd;                  /* an image file made ahead for a child, or -1 */
	char spare_name[128];
	uint64_t spare_id[2];          /* its st_dev, st_ino (the program may close it) */
	char stem[256];                /* basename of $STACKCLOCK_SHM */
	char dir[400];                 /* dirname of $STACKCLOCK_SHM */
	uint32_t os_mask;
	uint32_t sample_hz;            /* sampled shares' rate (STACKCLOCK_SAMPLE_HZ), 0 none */
	uint64_t self_lo, self_hi;     /* this runtime's code */
	uint32_t why;                  /* SC_SHM_WHY_* found before the header existed */
	uint64_t tp_enter, tp_exit;
	uint64_t clock0_tsc, clock0_ns;  /* a (tsc, monotonic) pair from early on */
	double ticks_per_ns;           /* measured from clock0 to rate_tsc, 0 unknown */
	uint64_t rate_tsc;
	long rings_big;                /* threads given a RING_PAGES_BIG ring */
	long fds_held, fds_budget;       /* perf fds open; at most a quarter of
	                                    RLIMIT_NOFILE, the rest is the program's */
	int fd_base;                   /* lowest descriptor number we take */
	int sandboxed;                 /* the program entered seccomp */
	pthread_key_t key;
	int rebuilding;
	uint32_t cost[5];              /* probe cost per interval (STACKCLOCK_COST) */
	/* the timeline (STACKCLOCK_TIMELINE, STACKCLOCK_TL_ONLY) */
	uint64_t tl_size, tl_min_ns;
	uint32_t tl_depth, tl_nonly;
	uint64_t tl_only[SC_SHM_TL_ONLY_MAX];   /* run-time addresses */
	int attached;                  /* loaded into a running process (attach.c) */
	/* threads past their last destructor round, retired once gone */
	struct { struct sc_eng_thread *t; uint64_t tid; struct rt_tls_ext *x; } ending[RT_ENDING];
};
extern struct rt_state rt;

/* Why events are lost (SC_SHM_WHY_*): in the header, or kept until it exists. */
static inline void why(uint32_t bits)
{
	if (rt.hdr)
		__atomic_fetch_or(&rt.hdr->lost_why, bits, __ATOMIC_RELAXED);
	else
		rt.why |= bits;
}

static inline uint64_t mono_ns(void)
{
	struct timespec ts = { 0, 0 };

	rt_sys2(SYS_clock_gettime, CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static inline uintptr_t stack_pointer(void)
{
	uintptr_t sp;

	__asm__ volatile("mov %%rsp, %0" : "=r"(sp));
	return sp;
}

static inline int rt_memeq(const void *a, const void *b, size_t n)
{
	const uint8_t *x = a, *y = b;

	while (n--)
		if (*x++ != *y++)
			return 0;
	return 1;
}

/* ---- probe.c ---- */

/* Apply the events a signal handler's probes queued (tls.busy set). */
__attribute__((cold)) void probe_replay(struct sc_eng_thread *t);
/* The same until none is left, then the thread freed (tls.busy set, or 0
 * after probe_release() said events were left). */
__attribute__((cold)) void probe_replay_done(struct sc_eng_thread *t);
/* The engine's callback: the CFA of a frame entered at sp (SC_ENG_NO_CFA). */
uint64_t rt_cfa_of(struct sc_eng_arena *a, uint64_t site, uint64_t sp);
extern uint64_t rt_ret_tramp;   /* patched functions' return trampoline, or 0 */
extern uint64_t rt_lc_tramp;    /* library calls' return trampoline, or 0 */

static inline int rt_is_tramp(uint64_t x)
{
	return x && (x == rt_ret_tramp || x == rt_lc_tramp);
}

/* retstack.c: a hook's function entered by a tail call from a frame that
 * returns through a trampoline (at or above sp): that frame taken off,
 * its function and call site given; 0: none. */
int sc_rs_tail(uintptr_t sp, uint64_t *fn, uint64_t *site);

/* retstack.c: the next frame an exception left, known from where it landed
 * (_Unwind_SetIP), taken off the return stack: 1 and its function and call
 * site, 0 if none is left or none can be taken yet. */
int sc_rs_land_next(uint64_t *fn, uint64_t *site);

/* The probes' entry points (trampolines, retstack.c's library-call
 * probes); sc_rt_enter_busy: an entry whose fast path failed with
 * tls.busy set, its clock not read yet. */
void sc_rt_enter(void *fn, void *site, uintptr_t sp);
void sc_rt_enter_busy(void *fn, void *site, uintptr_t sp);
void sc_rt_exit_at(void *fn, void *site, uintptr_t sp, uint64_t now);
void sc_rt_exit(void *fn, void *site, uintptr_t sp);

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

/*
 * The end of a probe: the thread is free again (tls.busy 0) unless signal
 * handlers queued events meanwhile, 1 then (probe_replay_done() applies
 * them).  A handler whose probe saw the thread busy just before it was
 * freed queued its events too: they are looked for again after, or they
 * would wait for the next probe and be applied after its event.
 */
static inline int probe_release(void)
{
	barrier();
	if (likely(!tls.npending)) {
		barrier();
		tls.busy = 0;
		barrier();
		if (likely(!tls.npending))
			return 0;
	}
	return 1;
}

/* Finish a probe: queued events first, then the thread is free again. */
static inline void probe_done(struct sc_eng_thread *t)
{
	if (unlikely(probe_release()))
		probe_replay_done(t);      /* a tail call: the hooks need no frame */
}

/* ---- process.c ---- */

/* A thread's first event: its engine state and OS-event ring; NULL if none. */
struct sc_eng_thread *thread_start(uintptr_t sp);
/* A new engine thread's probe costs and timeline (process.c). */
void rt_thread_setup(struct sc_eng_thread *t);
/* The "same process" word (rt_alive): armed in a new process image. */
void alive_arm(void);
/* Descriptors: fd moved up to rt.fd_base (or closed: -1); the program's
 * RLIMIT_NOFILE raised around our opens (fd_room_begin returns whether
 * fd_room_end must restore *old). */
int fd_high(long fd);
struct rlimit;
int fd_room_begin(struct rlimit *old);
void fd_room_end(int raised, const struct rlimit *old);

/* ---- exec.c ---- */

/* Our variables out of envp (the program's environ), kept for the
 * programs it execs; a user's LD_PRELOAD back as it was. */
void sc_exec_start(char **envp);
void sc_exec_atfork_child(void);

/* ---- fork.c ---- */

void rt_atfork_prepare(void);
void rt_atfork_parent(void);
void rt_atfork_child(void);
/* The first moment in a new process (fork's handler, or a probe that finds
 * rt_alive zero): the child's own image, the forking thread's stack. */
void child_start(uintptr_t sp);
/* Around the vfork system call of the runtime's vfork(): the thread's
 * probes off (the child runs on its memory), then on again in the parent. */
void sc_rt_vfork_pre(void);
void sc_rt_vfork_post(void);

/* ---- signals, without libc (sandbox.c, attach.c) ---- */

#ifndef SA_RESTORER
#define SA_RESTORER 0x04000000   /* the kernel's; glibc's headers keep it to themselves */
#endif
/* The kernel's struct for rt_sigaction (8-byte mask), and a restorer. */
struct rt_ksigaction {
	void *handler;
	unsigned long flags;
	void (*restorer)(void);
	uint64_t mask;
};
void sc_rt_sigreturn(void);

/* ---- attach.c ---- */

/* A fork child of a process attached to: the code put back as it was (the
 * recorder follows the parent only), the probes off. */
void sc_attach_child(void);
/* The frames open at the attach (attach.c, runtime/attach.h): opened in the
 * engine at the thread's first event, and pushed on its new return stack
 * (push called for each, outermost first). */
void sc_attach_seed_engine(struct sc_eng_thread *t, uint64_t now);
void sc_attach_seed_rs(void (*push)(uint64_t *slot, uint64_t orig, uint64_t site, uint64_t fn));
/* process.c: the runtime set up from envp in a running process */
int rt_attach_init(char **envp);

/* ---- os_ring.c ---- */

/* Forget what is in the ring now: our own system calls made it. */
static inline void ring_discard(void)
{
	struct rt_ring *r = tls.x ? &tls.x->ring : NULL;
	uint64_t head;

	if (!r || !r->pg)
		return;
	head = __atomic_load_n(&r->pg->data_head, __ATOMIC_ACQUIRE);
	__atomic_store_n(&r->pg->data_tail, head, __ATOMIC_RELEASE);
	tls.ring_seen = head;
}

/* The ring's head moved: its records charged to the interval ending at now. */
__attribute__((cold)) void rt_os_drain(struct sc_eng_thread *t, uint64_t now);
void os_open(struct sc_eng_thread *t);
void os_close(struct sc_eng_thread *t);
/* The perf descriptors in t->user closed if they are still ours. */
void close_events(struct sc_eng_thread *t);

/* ---- image.c ---- */

/* A new image file, mapped, its header written (parent: a fork parent's
 * header, or NULL); 0 or -1. */
int image_open(const struct sc_shm_header *parent);
/* The file backed up to end; 0, or -1 with the reason in lost_why. */
int commit_to(uint64_t end);
void spare_make(void);
void spare_drop(void);

/* ---- modules.c ---- */

struct dl_phdr_info;
/* The span of an object's PT_LOAD segments, as link-time addresses. */
void load_span(const struct dl_phdr_info *info, uint64_t *lo, uint64_t *hi);
void module_add(uint64_t base, const char *path);
/* The engine's callback: the module holding addr listed in the image. */
void rt_newaddr(struct sc_eng_arena *a, uint64_t addr);
extern int rt_mods_stale;       /* set by dlclose(): the table is made again */

/* ---- jumps.c ---- */

/* The C library's jump functions, looked up once by the constructor. */
void jumps_resolve(void);
/* the jumps' wrappers by names never preempted (attach.c's GOT slots) */
__attribute__((noreturn)) void sc_w_longjmp(void *env, int val);
__attribute__((noreturn)) void sc_w__longjmp(void *env, int val);
__attribute__((noreturn)) void sc_w_siglongjmp(void *env, int val);
__attribute__((noreturn)) void sc_w___longjmp_chk(void *env, int val);
/* fork.c's vfork, by a name that is never preempted (attach.c points
 * GOT slots at it while attached) */
extern char sc_w_vfork[];

/* ---- ctx.c ---- */

/* A user-level context switch about to be made (swapcontext: from, to;
 * setcontext: NULL, to): 1 if followed (the engine thread and return
 * stack of `to` are the thread's now, every signal blocked: *mask is the
 * mask sc_ctx_unblock() sets back when the caller's context runs again),
 * 0 if nothing was changed. */
struct ucontext_t;
int sc_ctx_switch(const struct ucontext_t *from, const struct ucontext_t *to, uint64_t *mask);
void sc_ctx_unblock(uint64_t mask);
/* retstack.c: the thread's return stack made now if it has none (a
 * sandbox about to close: no mmap later); 0, or -1 without memory. */
int sc_rs_prepare(void);
/* modules.c: the module table made now if there is none (a sandbox about
 * to close: in it, the table made before serves, never remade). */
void sc_modules_prepare(void);
/* retstack.c: the thread's return stack is s (NULL: none yet); the one it had. */
struct rs_stack *sc_rs_swap(struct rs_stack *s);

/* ---- sandbox.c ---- */

int tsc_refused(void);          /* the thread's rdtsc faults (PR_TSC_SIGSEGV) */
void tsc_off(void);             /* the thread's probes go untimed */

#pragma GCC visibility pop

#endif
