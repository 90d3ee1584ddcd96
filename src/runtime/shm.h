/*
 * shm — the shared-memory file between the injected runtime and the
 * recorder (instrumentation method).
 *
 * Each process image (the first one, every forked child, every exec) that
 * runs an instrumented function creates its own file
 *
 *	$STACKCLOCK_SHM.<pid>.<n>        (a file on /dev/shm; <n> unique per
 *	                                  image, from the TSC, so that a
 *	                                  process re-exec'ing itself never
 *	                                  searches for a free name)
 *
 * in the recorder's directory (STACKCLOCK_SHM_DIR or /dev/shm, checked
 * before the run; a private one under $XDG_RUNTIME_DIR or /tmp when that
 * one is missing, read-only or full: record/instrument.c, shm_dir), or,
 * when the file cannot be made, an empty mark $STACKCLOCK_SHM.<pid>.E<errno>
 * (image.c: the recorder says the image is missing and why),
 * maps it shared, and keeps its whole profile there: this header, then an
 * engine arena (src/runtime/engine.h) holding every thread's calling-context
 * tree.  The recorder reads the files after the target has ended (or been
 * killed: nothing needs flushing, the kernel keeps the pages) and removes
 * them.  The file grows as the arena does, in bounded steps committed with
 * fallocate before first use (a full tmpfs makes the runtime drop events,
 * counted, instead of taking SIGBUS); the mapping reserves address space
 * for at most SC_SHM_ARENA_SIZE, less under a file-size or address-space
 * limit (arena.size then says how much), and the file never passes
 * RLIMIT_FSIZE (no SIGXFSZ for the target).  Why events were lost is in
 * lost_why.
 *
 * The header is the arena's first bytes (struct sc_eng_arena_hdr must come
 * first: it is node index 0).  Everything the recorder follows is an offset
 * inside the file; the recorder validates every one of them.
 *
 * Unloaded objects: when dlclose() really unmaps an object, every CCT node
 * and call-site entry whose address lies in it gets the tag g << 48 (g the
 * unload generation, 1..SC_SHM_MAX_UNLOADS; user addresses are below 2^47),
 * and so does the module's base as the recorder emits it.  Another object
 * loaded at the same place then gets nodes of its own, and each address
 * resolves in the object that held it.
 *
 * Environment the recorder passes to the runtime:
 *	STACKCLOCK_SHM     path prefix of the files (absent: the runtime stays
 *	                   inert, e.g. a child that unset it)
 *	STACKCLOCK_OS      --os-events mask (SC_OS_BIT bits), decimal
 *	STACKCLOCK_CLOCK0  "TSC,NS": a (tsc, CLOCK_MONOTONIC) pair the recorder
 *	                   took before the launch (converts OS-record times)
 *	STACKCLOCK_TP      "ENTER_ID,EXIT_ID": tracepoint ids of
 *	                   raw_syscalls:sys_enter and sys_exit (absent: no
 *	                   syscall events)
 *	STACKCLOCK_COST    "EE,EX,XE,XX,EXW": the probes' cost in ticks per
 *	                   interval, by the kinds of its two events, and in a
 *	                   function that computes (calib.h); absent: nothing
 *	                   is taken out
 *	STACKCLOCK_SAMPLE_HZ  rate of each thread's CPU-clock samples for the
 *	                   sampled shares (SPEC section 14); absent or 0: none
 *	STACKCLOCK_TIMELINE "SIZE,MIN_NS,DEPTH": keep a timeline (SPEC section
 *	                   12; engine.h, sc_eng_tl_start) of at most SIZE bytes
 *	                   per image, calls of MIN_NS or more, less than DEPTH
 *	                   deep (0: no filter); absent: none
 *	STACKCLOCK_TL_ONLY "ADDR,ADDR...": the timeline keeps only calls of these
 *	                   functions (hex, addresses in the main program's
 *	                   file, its load bias added) and what they call
 *	STACKCLOCK_PATCH   "PLAN[:PLAN...]": patch plan files (record/plan_file.h)
 *	                   for a program built without hooks; each applies to
 *	                   the loaded object with its build-id (runtime/patch.h)
 *	STACKCLOCK_PATCH_EXE "DEV,INO" of the main program: a plan without a
 *	                   build-id applies to it only if /proc/self/exe is that
 *	STACKCLOCK_PRELOAD0 the user's own LD_PRELOAD (the end of ours), present
 *	                   only if there was one
 * The runtime takes these (and the others of this list: patch.h, libcall.h)
 * out of the program's environment at start and gives them back to the
 * programs it execs (runtime/exec.c): the program sees its environment as
 * it was given.
 *
 * Memory of threads that ended goes back to the arena (engine.h,
 * sc_eng_thread_retire), for threads to come.
 */
#ifndef SC_RUNTIME_SHM_H
#define SC_RUNTIME_SHM_H

#include <stdint.h>

#include "runtime/engine.h"

#define SC_SHM_MAGIC        0x314d485354534353ull    /* "SCSTSHM1" */
#define SC_SHM_VERSION      8                        /* 8: processes not recorded (unrec[]) */
#define SC_SHM_ARENA_SIZE   (64ull << 30)            /* most address space reserved */
#define SC_SHM_COMMIT_STEP  (64ull << 10)           /* least growth of the file */
#define SC_SHM_MAX_MODULES  1024
#define SC_SHM_MAX_UNLOADS  32767                    /* 15 bits of tag */
#define SC_SHM_UNLOAD_SHIFT 48
#define SC_SHM_PATH_MAX     4096
#define SC_SHM_MAX_PATCHED  64                       /* objects patched per image */
#define SC_SHM_MAX_LIBCALL_TABS 256                  /* objects with library calls hooked */
#define SC_SHM_MAX_UNREC    32                       /* programs exec'd unrecorded, per image */

#define SC_SHM_ENV_PREFIX   "STACKCLOCK_SHM"
#define SC_SHM_ENV_OS       "STACKCLOCK_OS"
#define SC_SHM_ENV_TP       "STACKCLOCK_TP"
#define SC_SHM_ENV_CLOCK0   "STACKCLOCK_CLOCK0"
#define SC_SHM_ENV_COST     "STACKCLOCK_COST"
#define SC_SHM_ENV_SAMPLE_HZ "STACKCLOCK_SAMPLE_HZ"
#define SC_SHM_ENV_TIMELINE "STACKCLOCK_TIMELINE"
#define SC_SHM_ENV_TL_ONLY  "STACKCLOCK_TL_ONLY"
#define SC_SHM_TL_ONLY_MAX  64                       /* --only functions */

/* sc_shm_header.flags */
#define SC_SHM_FORKED       (1u << 0)   /* image made by fork (see parent) */
#define SC_SHM_ENDED        (1u << 1)   /* the runtime saw the image end */
#define SC_SHM_DETACHED     (1u << 2)   /* ... or the recorder detach (attach.c):
					   the image goes on */

/* sc_shm_header.samp_state: the threads' CPU-clock sampling (SPEC 14) */
#define SC_SHM_SAMP_OPENED  (1u << 0)   /* some thread is sampled */
#define SC_SHM_SAMP_FAILED  (1u << 1)   /* some thread could not be */

/* sc_shm_header.lost_why: what kept the runtime from recording everything */
#define SC_SHM_WHY_FSIZE    (1u << 0)   /* the file-size limit (ulimit -f) was reached */
#define SC_SHM_WHY_AS       (1u << 1)   /* the address-space limit (ulimit -v) made the arena small */
#define SC_SHM_WHY_SPACE    (1u << 2)   /* the shared-memory file system is full */
#define SC_SHM_WHY_SECCOMP  (1u << 3)   /* the program entered seccomp: no more system calls of ours */
#define SC_SHM_WHY_FDCAP    (1u << 4)   /* the runtime's descriptor cap left threads without OS events */
#define SC_SHM_WHY_STACK    (1u << 5)   /* a stack deeper than the engine keeps */
#define SC_SHM_WHY_NOTSC    (1u << 6)   /* the kernel turned the time-stamp counter off for a
                                           thread (PR_SET_TSC, seccomp): its calls are counted
                                           without times from then on */
#define SC_SHM_WHY_CHILD    (1u << 7)   /* a child made by fork could not open its own image
                                           (descriptors or memory refused): not recorded */

struct sc_shm_module {
	uint64_t base;             /* dladdr()'s dli_fbase of the object */
	uint64_t path_off;         /* NUL-terminated path in the arena */
	uint32_t path_len;
	uint32_t valid;            /* set last (release) */
	uint64_t unloaded;         /* 0, or the unload generation g of the
	                              object: its addresses are tagged g << 48 */
};

/* An object this image patched at run time (runtime/patch.h): functions
 * patched, and left alone per enum patch_reason (record/reloc.h). */
struct sc_shm_patched {
	uint8_t build_id[20];
	uint32_t build_id_len;
	uint64_t base;             /* load bias */
	uint32_t patched;
	uint32_t unpatched[32];
	uint32_t valid;            /* set last (release) */
	uint64_t patch_ns;         /* time the patching took (monotonic) */
};

/* The library calls one object's hooks make rows of (runtime/libcall.h):
 * the row's function address and the name called (the IFUNC's, not its
 * variant's; the weak alias called, not the strong one beside it), NUL-
 * terminated at byte `name` of the table; len is the table's size. */
struct sc_shm_libcalls {
	uint32_t n;
	uint32_t len;
	struct {
		uint64_t fn;
		uint32_t name;
		uint32_t name_len;
	} e[];
};

/* A program this image (or a vfork child on its memory, or a child it
 * spawned) exec'd without the runtime, and why (format/execcheck.h);
 * runtime/exec.c.  valid is set last, and cleared if the exec failed. */
struct sc_shm_unrec {
	uint32_t pid;
	uint32_t why;              /* enum sc_exec_why */
	uint32_t valid;
	uint32_t pad;
	char path[240];
};

struct sc_shm_header {
	struct sc_eng_arena_hdr arena;   /* first: node index 0 */
	uint64_t magic;                  /* SC_SHM_MAGIC */
	uint32_t version;
	uint32_t flags;                  /* SC_SHM_* */
	uint32_t pid, ppid;
	uint64_t start_tsc, end_tsc;     /* image start; end if seen, else 0 */
	uint64_t start_ns;               /* CLOCK_MONOTONIC at start */
	uint32_t os_requested;           /* SC_OS_BIT mask asked for */
	uint32_t os_opened;              /* categories some thread observed */
	uint32_t os_failed;              /* categories some thread could not open */
	uint32_t nmodules;               /* slots handed out (may exceed max) */
	uint64_t modules_lost;
	uint32_t lost_why;               /* SC_SHM_WHY_* */
	uint32_t unloads;                /* objects dlclose'd so far (generations) */
	uint32_t samp_state;             /* SC_SHM_SAMP_*: sampled shares */
	uint32_t fd_base;                /* lowest descriptor the runtime uses */
	char parent_file[256];           /* fork parent's file name, "" if none */
	char exe[SC_SHM_PATH_MAX];       /* readlink /proc/self/exe */
	struct sc_shm_module modules[SC_SHM_MAX_MODULES];
	/* run-time patching (SPEC section 10); a forked image lists only
	 * what it patched itself */
	uint32_t npatched;               /* slots handed out (may exceed max) */
	uint32_t patch_unhooked;         /* frames whose return was not hooked
	                                    (a full stack of return addresses) */
	struct sc_shm_patched patched[SC_SHM_MAX_PATCHED];
	/* library calls (SPEC section 11): tables of struct sc_shm_libcalls */
	uint32_t nlibcall_tabs;          /* slots handed out (may exceed max) */
	uint32_t libcall_tabs_lost;
	uint64_t libcall_tab[SC_SHM_MAX_LIBCALL_TABS];   /* offsets; 0 until set */
	/* the timeline (SPEC section 12): bytes its chunks may still take */
	uint64_t tl_left;
	uint64_t tl_size;                /* what it started with, 0: no timeline */
	/* programs exec'd that could not be recorded (runtime/exec.c) */
	uint32_t nunrec;                 /* slots handed out (may exceed max) */
	uint32_t unrec_lost;
	struct sc_shm_unrec unrec[SC_SHM_MAX_UNREC];
};

/* The arena's first allocation starts after the header. */
#define SC_SHM_HEADER_SIZE \
	((sizeof(struct sc_shm_header) + 4095) & ~(uint64_t)4095)
/* The least room an image needs: its header and a first step. */
#define SC_SHM_MIN_SIZE     (SC_SHM_HEADER_SIZE + SC_SHM_COMMIT_STEP)

#endif
