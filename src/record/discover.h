/*
 * discover — which functions of an ELF object can be patched at run time,
 * and how (SPEC section 10).  Runs in the recorder, out of the target; the
 * plan it gives is what the injected runtime applies, by arithmetic only
 * (reloc.h's rel_entry_place), before the object's code runs.
 *
 * Candidates are every function start the object reveals: its symbols
 * (.symtab, .dynsym, a separate debug file's by build-id, MiniDebugInfo;
 * through sym_file_functions) and the starts of its CFI ranges (.eh_frame
 * FDEs, which stripped binaries keep; through the unwinder's FDE index).
 * One scan of the executable sections with a real decoder (Zydis) finds
 * the direct call targets, the direct jump targets and the addresses the
 * code takes (RIP-relative LEA; absolute immediates in position-dependent
 * executables); the data finds the addresses stored as pointers
 * (R_X86_64_RELATIVE/IRELATIVE addends, R_X86_64_64/GLOB_DAT of defined
 * symbols, and aligned words of the initialized data such as .init_array),
 * and the headers the entry points (e_entry, DT_INIT, DT_FINI).
 *
 * A start is patched only if all of these hold, checked in this order (the
 * first that fails is the reason counted, enum patch_reason in reloc.h):
 *   it lies in an executable section (not_code), the object is not the
 *   dynamic loader (dynamic_loader), not in a PLT section (plt_stub), no
 *   name at it is a returns-twice function (returns_twice) or one that
 *   reads its own return address (reads_return_address), no name is a
 *   `.cold` part (jump_only); it is a symbol other than a `.part` clone,
 *   or a direct-call target, or an address taken (else jump_only when
 *   something jumps to it or a symbol names it, unreferenced when nothing
 *   does); the CFI row at the start says CFA = rsp+8 with the return
 *   address at CFA-8 and rbp unchanged (no_cfi, cfa_not_at_entry); its first
 *   instructions do not read the return address ([rsp] before any push,
 *   or the slot through rbp after push rbp; mov rbp,rsp)
 *   (reads_return_address); and rel_entry_build accepts its entry
 *   (too_short, leaves_function, branch_into_entry, undecodable,
 *   unrelocatable), where "branch into the entry" is any jump, call or
 *   address-taken target, or any other candidate start, strictly inside
 *   the bytes the jmp replaces.
 * A function refused as too_short whose direct rel32 call sites (and rel32
 * jumps to it) the scan finds is counted at those instead: reason
 * call_sites, its branches listed in the plan's calls[] for the runtime to
 * point at its stub.  Calls through pointers, rel8 jumps and branches inside
 * another function's replaced entry bytes are not redirected.
 *
 * Ownership: a plan owns its arrays and names; dsc_plan_free() releases it
 * and accepts NULL.  Addresses are the object's link-time vaddrs; each
 * accepted function's entry is relocated for a trampoline at its own
 * address (tramp == func), so rel_entry_place() needs only the load bias
 * and the trampoline's run-time address.  Not thread-safe (one plan is
 * built by one thread; a built plan is read-only).
 */
#ifndef SC_DISCOVER_H
#define SC_DISCOVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "record/reloc.h"

/* How a start was found, and what makes it a function entry. */
#define DSC_SYMBOL      (1u << 0)    /* a function symbol names it */
#define DSC_FDE         (1u << 1)    /* a CFI range starts there */
#define DSC_CALLED      (1u << 2)    /* target of a direct call */
#define DSC_ADDR_TAKEN  (1u << 3)    /* its address is taken (code or data) */
#define DSC_JUMPED      (1u << 4)    /* target of a direct jump (tail call,
					or a jump back to the entry) */

struct dsc_func {
	uint64_t addr;            /* first byte (before any endbr64) */
	uint64_t size;            /* the symbol's size, within its CFI range;
				     else the CFI range's */
	const char *name;         /* the best-ranked symbol at addr, or NULL */
	unsigned flags;           /* DSC_* */
	enum patch_reason reason; /* PATCH_OK: patch it with entry */
	struct rel_entry entry;   /* valid when reason == PATCH_OK */
	unsigned ncall_sites;     /* PATCH_CALL_SITES: its entries in calls[] */
};

/*
 * A direct branch (call, jmp or jcc with a rel32 as its last 4 bytes) to a
 * function too short to patch (PATCH_CALL_SITES), at a real instruction
 * boundary (decoded from the start of its CFI range) and outside the bytes
 * any entry jmp replaces.
 */
struct dsc_call {
	uint64_t site;            /* the branch's first byte */
	uint64_t target;          /* the function's first byte */
	uint8_t len;              /* the branch's length; its rel32 ends it */
};

struct dsc_stats {
	size_t insns;             /* instructions decoded by the scan */
	size_t calls, jumps, taken; /* candidate starts called, jumped to,
					 whose address is taken */
	uint64_t symbols_ns, cfi_ns, scan_ns, decide_ns, total_ns; /* elapsed */
	uint64_t cpu_ns;          /* CPU time of the process (all threads)
				     while the plan was built */
};

struct dsc_plan {
	struct dsc_func *funcs;   /* sorted by addr, one per start */
	size_t nfuncs;
	struct dsc_call *calls;   /* sorted by target, then site */
	size_t ncalls;
	unsigned count[PATCH_NREASONS];  /* functions per reason */
	uint8_t build_id[20];
	size_t build_id_len;
	struct dsc_stats stats;
};

/*
 * Build the plan of the x86-64 ELF object at path.  Returns 0, or -errno:
 * -ENOENT and the like when it cannot be read, -ENOEXEC when it is not an
 * ELF object, -EPROTONOSUPPORT when it is not x86-64.  A file without CFI
 * gives a plan whose functions are all refused (no_cfi).
 */
int dsc_plan_build(const char *path, struct dsc_plan **out);
void dsc_plan_free(struct dsc_plan *p);

/* The plan's entry for the start at addr, or NULL. */
const struct dsc_func *dsc_plan_find(const struct dsc_plan *p, uint64_t addr);

/*
 * Write p as a plan file (record/plan_file.h) at path, atomically (a
 * temporary file renamed over it).  Returns 0 or -errno.
 */
int dsc_plan_write(const struct dsc_plan *p, const char *path);

/*
 * The plan file of the ELF object at elf, from the cache when it holds one
 * for the object's build-id (for an object without one: its path, size
 * and modification time), else built now and stored there.  The cache is
 * $STACKCLOCK_CACHE_DIR, else $XDG_CACHE_HOME/stackclock, else
 * ~/.cache/stackclock; plans live in its plans/ folder.  On success *path
 * is the plan file (malloc'ed, the caller frees it) and *hit says whether
 * it was in the cache.  Returns 0 or -errno (dsc_plan_build's, or the
 * cache's when it cannot be written).
 */
int dsc_plan_cached(const char *elf, char **path, bool *hit);

/* The cache's root directory (malloc'ed): STACKCLOCK_CACHE_DIR, else
 * $XDG_CACHE_HOME/stackclock, else ~/.cache/stackclock; plans live in its
 * plans/ directory. */
char *dsc_cache_root(void);

#endif
