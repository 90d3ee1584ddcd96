/*
 * patch — the runtime side of instrumentation without a rebuild (SPEC
 * section 10, docs/patching.md): applies the recorder's patch plans to the
 * objects loaded in this process, so that their functions' entries jump to
 * per-function stubs that call the same probes as -finstrument-functions'
 * hooks (probe.c's sc_rt_enter/sc_rt_exit).
 *
 * Three parts, one concern each:
 *   patch.c       which plan goes to which loaded object, where the stubs
 *                 go (within a rel32 jump of the object), writing the
 *                 5-byte jumps into the object's text;
 *   retstack.c    the per-thread stack of return addresses replaced by the
 *                 return trampoline (exit capture), the C halves of the
 *                 stubs, and the hooks that put the real return addresses
 *                 back before anything reads them (C++ unwinding,
 *                 backtrace());
 *   patch_x86_64.c  the machine code: the shared entry and return
 *                 trampolines (assembly) and the per-function stub bytes.
 *
 * Environment (see shm.h's list): STACKCLOCK_PATCH names the plan files,
 * STACKCLOCK_PATCH_EXE the main program they may apply to without a
 * build-id.  Nothing is patched when they are absent: a program built with
 * the hooks never gets them.
 *
 * Threads: sc_patch_start() runs once, from the runtime's constructor, while
 * the process is single-threaded (or, for a later attach, with the objects'
 * text not yet running: the jumps are written whole-word where they can
 * be).  sc_patch_loaded() runs after every dlopen(), under the loader's
 * lock of the caller (objects seen twice are patched once).
 */
#ifndef SC_RUNTIME_PATCH_H
#define SC_RUNTIME_PATCH_H

#include <stddef.h>
#include <stdint.h>

#define SC_PATCH_ENV       "STACKCLOCK_PATCH"      /* PLAN[:PLAN...] */
#define SC_PATCH_ENV_EXE   "STACKCLOCK_PATCH_EXE"  /* DEV,INO of the main program */
/* A program exec'd below the recorded one (a wrapper script's interpreter,
 * what it runs) and not planned by the recorder: the runtime asks the
 * recorder's binary, STACKCLOCK_PLANNER, run as "PLANNER __plan-exe EXE"
 * with STACKCLOCK_CACHE_DIR=STACKCLOCK_PLANNER_CACHE, for its plan. */
#define SC_PATCH_ENV_PLANNER "STACKCLOCK_PLANNER"
#define SC_PATCH_ENV_CACHE   "STACKCLOCK_PLANNER_CACHE"
#define SC_PATCH_PLAN_CMD    "__plan-exe"
/* --patch by name or all (STACKCLOCK_PATCH_NAMES: NAME[,NAME...] or
 * "all"): a library loaded later that matches and that no plan is for is
 * planned on request too, "PLANNER __plan-lib PATH" */
#define SC_PATCH_ENV_NAMES   "STACKCLOCK_PATCH_NAMES"
/* Never patched, by file name ("libc" matches "libc.so.6"): the loader,
 * the runtime, and the libraries the runtime calls on its probe paths
 * (patched, they would probe the runtime's own calls). */
#define SC_PATCH_NEVER_LOADER  "ld-linux-x86-64"
#define SC_PATCH_NEVER_RUNTIME "libstackclock"
#define SC_PATCH_NEVER_CALLED  "libc", "libpthread", "libdl", "libgcc_s"
#define SC_PATCH_PLAN_LIB_CMD "__plan-lib"
#define SC_PATCH_MAX_PLANS 64
#define SC_PATCH_PATH_MAX  4096

/* Patch every loaded object that one of the plans in the environment is
 * for.  Once per process image, before the program's code runs. */
void sc_patch_start(char **envp);

/* Objects loaded since the last call (dlopen): patch those a plan is for. */
void sc_patch_loaded(void);
/* Is ip in a region of stubs (the probes' code of patched functions)? */
int sc_patch_in_stubs(uint64_t ip);
/* Does the object have probes of its own: hooks compiled in, or patched
 * here by a plan? */
struct dl_phdr_info;
int sc_patch_obj_probed(const struct dl_phdr_info *info);
/* Is the file at path the library name ("libc" is libc.so.6)?  One of
 * those never patched (the loader, the runtime, what the runtime calls)? */
int sc_patch_lib_is(const char *path, const char *name);
int sc_patch_never(const char *path);
/* [lo, hi) holds stubs too (libcall.c's): for sc_patch_in_stubs(). */
void sc_patch_region_add(uint64_t lo, uint64_t hi);
/* attach.c: patch.c's writes into the program's code while attaching are
 * logged, to be put back at detach.  insn/insn_len: the instruction whose
 * bytes [at, at + n) change; dest: where it goes once changed. */
extern int sc_attach_logging;
void sc_attach_log(uint64_t at, int n, uint64_t insn, uint32_t insn_len, uint64_t dest);
/* the same for a GOT slot about to be written (libcall.c); ro: its page is
 * read-only (RELRO) */
void sc_attach_log_got(uint64_t slot, int ro);
/* dl_iterate_phdr(), or while attaching (attach.c) the list of objects
 * taken before the threads were stopped: one of them may hold the
 * loader's lock, which dl_iterate_phdr() takes. */
struct dl_phdr_info;
int sc_phdr_each(int (*cb)(struct dl_phdr_info *, size_t, void *), void *arg);
/* The regions of stubs (attach.c: where no thread may be at detach);
 * sc_patch_forget(): nothing is patched any more (attach.c restored the
 * code and releases the regions). */
int sc_patch_nregions(void);
void sc_patch_region(int i, uint64_t *lo, uint64_t *hi);
void sc_patch_forget(void);
/* retstack.c: every live entry of a thread's return stack s back in its
 * slot, the stack emptied (the thread stopped, outside the probes);
 * the count of return addresses put back. */
struct rs_stack;
uint64_t sc_patch_unhook_stack(struct rs_stack *s);
/* retstack.c: the bytes mapped for s; the return stacks' thread-exit key
 * deleted (detach) */
uint64_t sc_patch_stack_len(const struct rs_stack *s);
void sc_patch_retstack_fini(void);
/* retstack.c's wrappers of the readers of return addresses (the unwinder,
 * backtrace) and of context switches, by the names they wrap and by
 * addresses that are never preempted: attach.c points the GOT slots of a
 * running process at them.  Ends with { NULL, NULL }. */
struct sc_patch_wrap {
	const char *name;
	const void *fn;
};
extern const struct sc_patch_wrap sc_patch_wraps[];
/* _Unwind_Resume's wrapper (patch_x86_64.c, by a name never preempted)
 * and its C half (retstack.c): the live frames' originals back from the
 * cleanup's return address slot up; the real _Unwind_Resume. */
extern char sc_rs_w_resume[];
struct _Unwind_Exception;
void *sc_rs_resume(uint64_t *slot, const struct _Unwind_Exception *exc);
/* Is pc in the runtime's own code (modules.c)? */
int sc_rt_in_self(uint64_t pc);

/* ---- between the parts (not for other callers) ---- */

/* image.c: the current image's shared-memory header (NULL when the runtime
 * is off), where each object patched is listed with its counts per reason
 * (the plan's refusals plus those made here, e.g. out_of_reach). */
struct sc_shm_header;
struct sc_shm_header *sc_rt_shm_header(void);
/* image.c: len bytes of that image's arena (libcall.c's tables): their
 * offset from the header, or 0. */
uint64_t sc_rt_alloc(uint64_t len);

/* Arch: bytes of a per-function stub before its trampoline, where the
 * function's address is kept, and where the site's jump lands, relative to
 * the stub's start (patch_x86_64.c). */
#define SC_PATCH_STUB_FN    0      /* uint64_t: the function's address */
#define SC_PATCH_STUB_CODE  8      /* the jump at the site lands here */
#define SC_PATCH_STUB_LEN   35     /* fn + its code: the trampoline
				      follows */

/* Write a stub at stub (run-time address == stub) whose call goes through
 * the pointer at slot to the shared entry; fn is the function. */
void sc_patch_arch_stub(uint8_t *stub, uint64_t fn, const uint64_t *slot);
/* The shared entry (the pointer the slot holds) and return trampoline. */
uint64_t sc_patch_arch_entry(void);
uint64_t sc_patch_arch_return(void);

/* retstack: the C halves of the trampolines.  rs_enter()'s value: {fn,
 * call site}; fn's bit 63 set: leave the return address alone; fn 0: no
 * probe either (a jump back to the function's own entry). */
struct sc_patch_pair {
	uint64_t a, b;                 /* returned in rax, rdx */
};
/* A patched function's probe, from sc_patch_entry_asm: 1 if the return
 * now goes through the trampoline (its exit: sc_lc_leave, below). */
uint64_t sc_patch_enter(uint64_t tramp, uint64_t *slot);
#define SC_PATCH_NO_RETURN  (1ull << 63)

/* Library calls (libcall.c): a stub of SC_LC_STUB_SIZE bytes per slot,
 * the slot pointing at its code; the shared entry and return trampoline. */
#define SC_LC_STUB_FN      0       /* uint64_t: the row's function */
#define SC_LC_STUB_TARGET  8       /* uint64_t: the slot's own target */
#define SC_LC_STUB_CODE    16
#define SC_LC_STUB_SIZE    32
void sc_patch_arch_lc_stub(uint8_t *stub, uint64_t fn, uint64_t target, const uint64_t *slot);
uint64_t sc_patch_arch_lc_entry(void);
uint64_t sc_patch_arch_lc_return(void);
/* f(a, b, c, d) with the vector registers kept (for code built for general
 * registers only, calling code that may use them); its value. */
uint64_t sc_rt_vsafe(const void *f, uint64_t a, uint64_t b, uint64_t c, uint64_t d);
/* The library-call probes (retstack.c), from sc_lc_entry_asm (1: the
 * return now goes through the trampoline) and sc_lc_return_asm (the clock
 * read at now; sc_patch_return_asm's too). */
uint64_t sc_lc_enter(const uint64_t *stub, uint64_t *slot);
void sc_lc_leave(uint64_t cfa, uint64_t now, uint64_t clk);

#endif
