/*
 * unwind — DWARF call-frame-information unwinding of sampled user stacks,
 * for code built without frame pointers.
 *
 * A sample gives the user registers (ip, sp, bp, and the callee-saved rbx,
 * r12-r15) and a copy of the top of the user stack.  Walking it frame by
 * frame needs, for every pc, the rule that finds the caller's frame: where
 * the Canonical Frame Address is (rsp+N or rbp+N; rbx+N in glibc's
 * lazy-binding resolver, which realigns rsp), where the return address and
 * the saved callee-saved registers are.  Those
 * rules live in each ELF object's .eh_frame / .debug_frame as small programs;
 * interpreting them per sample would be slow, so each row is computed ONCE
 * (through elfutils: dwarf_cfi_addrframe and friends, the first time a pc
 * in its range is met) into a sorted array of compact rows, and a step is
 * a binary search.
 *
 * Objects:
 *  - unw_table: one ELF object's FDE index and the rows met so far, in
 *    that object's own virtual addresses, plus its PT_LOAD segments (to
 *    turn a mapping's file offset into virtual addresses) and the ranges of
 *    its "root" functions (_start, clone, clone3, the entry point).  Rows
 *    only grow; the object's file stays open while the table lives.
 *  - unw_cache: owns the tables, keyed by path + build-id; a table is opened
 *    on first use and shared by every process mapping the same file.  A file
 *    that cannot be read, has no CFI, or whose build-id no longer matches
 *    the mapping's is remembered as such (no retries).
 *  - unw_space: the executable mappings of one process image, sorted by
 *    address; unw_space_clone() copies it for a forked child.  Mappings point
 *    into the cache, which must outlive every space.
 *
 * unw_unwind() fills return addresses, leaf first, and says how it ended:
 *  - UNW_ROOT: the outermost frame was reached (CFI marks the return address
 *    undefined, as _start and the clone/clone3 child path do; or, in a root
 *    function, a zero return address or a step that cannot go further);
 *  - UNW_TRUNCATED: the next frame lies beyond the end of the copied stack
 *    (or beyond max frames) — the stack is deeper than what was captured;
 *  - neither: the walk stopped early (no mapping, no CFI and no plausible
 *    frame pointer, an unsupported rule).  The frames so far are still valid.
 * The callee-saved registers are carried up the walk as DWARF CFI says: a
 * frame's rule gives its caller's value (unchanged, saved at an address,
 * or undefined).  One whose value is not known (not sampled, undefined, a
 * rule we cannot express, a save slot outside the copy) is never guessed:
 * a CFA defined from it is treated as a pc without CFI, as is a CFA defined
 * from a register not tracked at all (rcx, rdx, rdi: a few instructions of
 * longjmp, setcontext and __builtin_eh_return).  A frame stepped through
 * the rbp chain (no CFI) leaves them all unknown.
 * Every frame after the first lies in a mapping of the space (executable
 * code): a return address read that lies in none (zero too, outside a root
 * function) means the walk went astray (a wrong row, a stale rbp); it is not
 * stored and the walk ends there (UNW_STOP_NO_MAP), so a failed unwind is a
 * short stack, never junk frames, and never counted as reaching the root.
 * Code without CFI (PLT stubs in old binaries, JIT code) is stepped through
 * the rbp chain only when rbp points into the copied stack and the return
 * address it yields lies in an executable mapping.  A sampled leaf without
 * CFI is first tried as frameless (return address at [sp]); that guess is
 * kept only if the walk from it reaches the root.  A saved-rbp slot below
 * sp counts as restored (epilogues carry no restore notes).
 *
 * Thread-safety: none; the recorder is single-threaded.
 */
#ifndef SC_UNWIND_H
#define SC_UNWIND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- per-object tables ------------------------------------------------ */

/* How the CFA is found. */
enum unw_cfa {
	UNW_CFA_NONE = 0,     /* no CFI here, or a rule we do not support */
	UNW_CFA_RSP,          /* rsp + off */
	UNW_CFA_RBP,          /* rbp + off */
	UNW_CFA_RSP_DEREF,    /* *(rsp + off)   (signal frames) */
	UNW_CFA_RBP_DEREF,    /* *(rbp + off)   (realigned stacks, DRAP) */
	UNW_CFA_PLT,          /* rsp + off + ((rip & 15) >= k ? 8 : 0), k in aux */
	UNW_CFA_REG,          /* regs[cfa_reg] + off (enum unw_reg) */
	UNW_CFA_REG_DEREF,    /* *(regs[cfa_reg] + off) */
};

/*
 * The callee-saved registers tracked besides rbp (which has its own rule
 * fields, as before them): what the CFA rules of glibc, libstdc++ and gcc
 * -O2 code name, rbx in ld.so's _dl_runtime_resolve_*, and r12-r15 for
 * realigned frames that pick them.
 */
enum unw_reg {
	UNW_REG_RBX = 0,
	UNW_REG_R12,
	UNW_REG_R13,
	UNW_REG_R14,
	UNW_REG_R15,
	UNW_NREGS
};

/* Where a register of the caller is found. */
enum unw_loc {
	UNW_LOC_SAME = 0,     /* unchanged (the callee-saved default) */
	UNW_LOC_CFA,          /* saved at CFA + off */
	UNW_LOC_RSP,          /* saved at rsp + off (this frame's rsp) */
	UNW_LOC_RBP,          /* saved at rbp + off (this frame's rbp) */
	UNW_LOC_UNDEF,        /* undefined: for the return address, the root */
};

/*
 * One row: the rules for pcs in [start, end). 28 bytes.
 * The rule of callee-saved register i (enum unw_reg) is the enum unw_loc
 * in bits [3i, 3i + 3) of reg_loc, at reg_off8[i] * 8 bytes: save slots
 * are 8-byte aligned and near the CFA (pushes) or rsp (signal frames, up
 * to rsp+128); a rule outside [-1024, 1016] is kept as UNW_LOC_UNDEF.
 */
struct unw_row {
	uint32_t start;       /* pc - table base */
	uint32_t end;
	int32_t  cfa_off;
	int16_t  ra_off;
	int16_t  rbp_off;
	uint8_t  cfa;         /* enum unw_cfa */
	uint8_t  ra;          /* enum unw_loc */
	uint8_t  rbp;         /* enum unw_loc */
	uint8_t  aux;         /* UNW_ROW_SIGNAL | PLT threshold << 4 */
	int8_t   reg_off8[UNW_NREGS];
	uint8_t  cfa_reg;     /* UNW_CFA_REG*: enum unw_reg */
	uint16_t reg_loc;     /* 0: every one unchanged */
};
#define UNW_ROW_SIGNAL 0x01   /* a signal frame: the caller's pc is exact */

static inline unsigned unw_row_reg_loc(const struct unw_row *r, unsigned i)
{
	return (r->reg_loc >> (3 * i)) & 7;
}

struct unw_table;

/*
 * Open the table of the ELF file at path (or of an in-memory image, for
 * the vdso, copied): index its FDEs.  Returns 0, or -errno (-ENOENT,
 * -ENOEXEC for a non-ELF file, -ENODATA when the object has no CFI).
 * Free with unw_table_free().
 */
int unw_table_build_file(const char *path, struct unw_table **out);
int unw_table_build_mem(const void *image, size_t size, struct unw_table **out);
void unw_table_free(struct unw_table *t);      /* accepts NULL */

/*
 * The row covering vaddr, or NULL (outside every FDE, or a rule we cannot
 * express).  Building a table only indexes its FDEs; a row is computed on
 * the first lookup in its range (microseconds: the FDE's program runs up
 * to vaddr), then found by binary search.
 */
const struct unw_row *unw_table_find(struct unw_table *t, uint64_t vaddr);
/*
 * The range [lo, hi) of the FDE holding vaddr: one function's code, for
 * naming functions that have no symbol.  False if no FDE holds vaddr.
 */
bool unw_table_fde_range(const struct unw_table *t, uint64_t vaddr,
			 uint64_t *lo, uint64_t *hi);
/* The i-th FDE's range [lo, hi), in address order; false if i >= nfdes. */
bool unw_table_fde(const struct unw_table *t, size_t i, uint64_t *lo,
		   uint64_t *hi);
/*
 * True when vaddr is the first byte of an FDE whose rule there is that of a
 * function just called (CFA = rsp+8, return address at CFA-8, nothing
 * saved), as read off the CIE's and the FDE's bytes when the table was
 * indexed, without computing a row (thousands of function starts are
 * checked at once when a binary is patched).  False means "not known this
 * way": ask unw_table_find().
 */
bool unw_table_fde_entry_clean(const struct unw_table *t, uint64_t vaddr);
/* Compute every row now (tests, statistics). */
void unw_table_build_all(struct unw_table *t);
size_t unw_table_nfdes(const struct unw_table *t);
size_t unw_table_nrows(const struct unw_table *t);     /* computed so far */
/* Bytes used by the index and the rows built so far. */
size_t unw_table_bytes(const struct unw_table *t);
/*
 * Virtual address of the byte at file offset off (through the PT_LOAD
 * segment holding it; an executable one first, where two share the page).
 * Returns false if no segment holds it.
 */
bool unw_table_off_to_vaddr(const struct unw_table *t, uint64_t off, uint64_t *vaddr);
/* True if vaddr lies in a root function (_start, clone, clone3, entry). */
bool unw_table_is_root(const struct unw_table *t, uint64_t vaddr);
/* The object's GNU build-id, if it has one (length, 0 if none). */
size_t unw_table_build_id(const struct unw_table *t, const uint8_t **id);

/* ---- cache of tables -------------------------------------------------- */

struct unw_cache;
struct unw_module;            /* one cache entry: a file (+ build-id) */

struct unw_cache *unw_cache_new(void);
void unw_cache_free(struct unw_cache *c);      /* accepts NULL */

/*
 * The entry for path (and build_id, if len > 0: a different build-id at the
 * same path is another entry).  Never NULL; the table is opened lazily by
 * unw_module_table().  "[vdso]" is read from the recorder's own vdso, the
 * same kernel image every process maps.
 */
struct unw_module *unw_cache_module(struct unw_cache *c, const char *path,
				    const uint8_t *build_id, size_t build_id_len);
/*
 * The entry for a mapped file that path no longer leads to (deleted or
 * replaced since it was mapped, or under another root): read through fd, an
 * open descriptor of that very file (from /proc/PID/map_files/ or
 * /proc/PID/root/), which the cache takes over.  Shared like the others by
 * path and the file's build-id; a file without one gets an entry of its own.
 */
struct unw_module *unw_cache_module_fd(struct unw_cache *c, const char *path,
				       int fd);
/* The module's table, opened on first call; NULL if it has none. */
struct unw_table *unw_module_table(struct unw_module *m);
const char *unw_module_path(const struct unw_module *m);
/*
 * The module's GNU build-id: the one it was created with, else read from
 * the file's notes once (without building the table).  Returns its length,
 * 0 if none; *id stays valid as long as the cache.
 */
size_t unw_module_build_id(struct unw_module *m, const uint8_t **id);

struct unw_cache_stats {
	unsigned modules;         /* entries */
	unsigned tables;          /* tables opened */
	size_t   fdes;            /* FDEs indexed */
	size_t   rows;            /* rows computed */
	size_t   bytes;           /* bytes of index and rows */
	uint64_t build_ns;        /* time spent opening tables, building rows */
};
void unw_cache_stats(const struct unw_cache *c, struct unw_cache_stats *st);

/* ---- address spaces --------------------------------------------------- */

struct unw_space;

struct unw_space *unw_space_new(void);
struct unw_space *unw_space_clone(const struct unw_space *s);
void unw_space_free(struct unw_space *s);      /* accepts NULL */

/*
 * Add an executable mapping [start, end) of module m (NULL for anonymous
 * code) at file offset pgoff; mappings it overlaps are removed (the kernel
 * replaced them).
 */
void unw_space_add(struct unw_space *s, uint64_t start, uint64_t end,
		   uint64_t pgoff, struct unw_module *m);
/* Number of mappings, and the i-th in address order (for the data file). */
size_t unw_space_count(const struct unw_space *s);
struct unw_mapping {
	uint64_t start, end, pgoff;
	struct unw_module *mod;       /* NULL for anonymous code */
};
void unw_space_get(const struct unw_space *s, size_t i, struct unw_mapping *out);

/* ---- unwinding -------------------------------------------------------- */

struct unw_regs {
	uint64_t ip, sp, bp;
	uint64_t regs[UNW_NREGS];     /* rbx, r12-r15 (enum unw_reg) */
	unsigned regs_known;          /* bit i: regs[i] holds the value; 0
					 when the sampler did not ask */
};

/* The copied user stack: bytes [sp, sp + size) of the sampled thread. */
struct unw_stack {
	const uint8_t *data;
	uint64_t start;           /* address of data[0], the sampled sp */
	size_t size;              /* bytes valid in data */
	bool full;                /* the copy was cut at its capacity: reads
				     beyond it mean the stack is deeper */
};

#define UNW_ROOT       (1u << 0)
#define UNW_TRUNCATED  (1u << 1)

/* Why a walk stopped, for statistics and debugging. */
enum unw_stop {
	UNW_STOP_ROOT = 0,
	UNW_STOP_TRUNCATED,       /* beyond the copied stack */
	UNW_STOP_MAX_FRAMES,      /* more frames than the caller's array */
	UNW_STOP_NO_MAP,          /* pc in no known mapping */
	UNW_STOP_NO_CFI,          /* no CFI and no plausible frame pointer */
	UNW_STOP_BAD_RULE,        /* CFI rule we do not support */
	UNW_STOP_BAD_READ,        /* a read below sp */
	UNW_STOP_SHORT_COPY,      /* a read past a copy that ended before
				     its capacity: the stack's end, or a
				     page the kernel could not read (never
				     touched: the copy stops at it) */
	UNW_STOP_NO_PROGRESS,     /* sp did not grow: corrupt or looping */
	UNW_STOP_NREASONS
};

struct unw_result {
	unsigned nframes;         /* ips filled */
	unsigned flags;           /* UNW_ROOT | UNW_TRUNCATED */
	enum unw_stop stop;
};

/*
 * Walk one sample.  ips[0] = regs->ip, then return addresses (callers must
 * resolve those at ip - 1).  max >= 1.  Builds module tables on demand.
 */
void unw_unwind(struct unw_space *s, const struct unw_regs *regs,
		const struct unw_stack *stack, uint64_t *ips, unsigned max,
		struct unw_result *res);

/*
 * The same, and where each return address was read: slots[i] (i >= 1) is
 * the stack address that held ips[i] (so frame i - 1's canonical frame
 * address is slots[i] + 8); slots[0] = 0.  For a live thread stopped by
 * ptrace (record/attach_seed.c: the frames open at an attach).
 */
void unw_unwind_slots(struct unw_space *s, const struct unw_regs *regs,
		      const struct unw_stack *stack, uint64_t *ips, uint64_t *slots,
		      unsigned max, struct unw_result *res);

const char *unw_stop_name(enum unw_stop stop);

#endif
