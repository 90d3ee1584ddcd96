/*
 * sym_int.h — internals shared by the files of src/symbols (not a public
 * contract: only symbols.c and the unit test include it).
 *
 *   intern.c    the string table every returned string lives in, and
 *               names demangled (rust_demangle.c: Rust's v0 names by
 *               libiberty)
 *   elfobj.c    one ELF object: segments, symbol table, DWARF lines and
 *               inline scopes, separate debug file lookup
 *   lazydw.c    compressed DWARF inflated only as far as lookups need
 *               (lazydw.h)
 *   kallsyms.c  kernel symbols from /proc/kallsyms
 *   shorten.c   sym_shorten()
 *   symbols.c   the session: mappings per process image, result cache
 *
 * Addresses inside an ELF object ("vaddr") are link-time virtual addresses,
 * as in the object's program headers and symbol table: runtime address minus
 * load bias.  An object is opened once per session however many processes
 * map it, and its results are independent of where it is loaded.
 */
#ifndef SC_SYM_INT_H
#define SC_SYM_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "symbols/symbols.h"

/* ---- interned strings ------------------------------------------------- */

struct sym_intern {
	const char **slots;       /* open addressing, NULL = empty */
	size_t cap, n;
	char *block;              /* current arena block */
	size_t block_used, block_size;
	char **blocks;            /* every block, for freeing */
	size_t nblocks, ablocks;
	struct demangled *dm;     /* raw name pointer -> demangled, interned */
	size_t dm_cap, dm_n;
};

/*
 * A Rust v0 name ("_R...", rust_demangle.c: libiberty's) malloc'd; NULL
 * when name is not one or is malformed.
 */
char *rust_v0_demangle(const char *name);

const char *intern_str(struct sym_intern *t, const char *s);
const char *intern_strn(struct sym_intern *t, const char *s, size_t len);
void intern_release(struct sym_intern *t);

/*
 * Demangle a C++ or Rust name ("_Z...", "_R...") into t; other names are interned as is.
 * Remembered by the address of name, which must stay valid and unchanged
 * for t's lifetime (names inside a mapped ELF file or DWARF section).
 */
const char *intern_demangled(struct sym_intern *t, const char *name);

/* ---- ELF objects ------------------------------------------------------ */

#define SYM_BUILD_ID_MAX 20
#define SYM_MAX_FRAMES   64    /* inline depth kept per address */

struct sym_obj;

/*
 * Open the object at path (want_bid_len == 0) or the separate debug file of
 * build-id want_bid under the debug root (path NULL).  Never NULL: a file
 * that cannot be used gives an object with obj_error() set.
 */
struct sym_obj *obj_open(const char *path, const char *debug_root,
			 struct sym_intern *strings);
struct sym_obj *obj_open_build_id(const uint8_t *bid, unsigned bid_len,
				  const char *debug_root,
				  struct sym_intern *strings);
/*
 * Open an ELF image held in memory (the vdso), copied: the caller's bytes
 * need not outlive the object.  A separate debug file is looked up by
 * build-id only.
 */
struct sym_obj *obj_open_memory(const void *image, size_t size,
				const char *debug_root,
				struct sym_intern *strings);
void obj_free(struct sym_obj *o);

/* NULL if usable, else why not ("No such file or directory", ...). */
const char *obj_error(const struct sym_obj *o);
/* The object's own build-id (length 0 if it has none). */
unsigned obj_build_id(const struct sym_obj *o, const uint8_t **bid);
bool obj_is_exec(const struct sym_obj *o);   /* ET_EXEC: never relocated */
/* Is vaddr inside one of the object's PT_LOAD segments? */
bool obj_covers(const struct sym_obj *o, uint64_t vaddr);

/*
 * Load bias of a mapping [start, ...) at file offset pgoff (from
 * /proc/PID/maps or PERF_RECORD_MMAP2).  When the object is a debug file
 * standing in for a lost original (its file offsets differ), the mapping is
 * taken to be the code segment's.
 */
uint64_t obj_bias_for_mapping(const struct sym_obj *o, uint64_t start,
			      uint64_t pgoff);
/* Load bias from a dladdr() base (dli_fbase: where the first PT_LOAD is). */
uint64_t obj_bias_for_base(const struct sym_obj *o, uint64_t base);

/*
 * Frames for vaddr, innermost first: inlined functions (inlined = true),
 * then the function holding them.  function/file are interned; module is
 * left for the caller to fill.  Returns the count (>= 1) or 0 when the
 * address is in no known function.
 */
int obj_lookup(struct sym_obj *o, uint64_t vaddr, struct sym_frame *out,
	       int max);

/*
 * Call cb for every function symbol of the ELF file at path, aliases
 * included: its .symtab and .dynsym and, when it has no .symtab, those of
 * its separate debug file (found as obj_open finds it) and of its
 * MiniDebugInfo.  Returns 0 or -errno (the file cannot be read as ELF).
 */
int obj_each_function(const char *path, const char *debug_root,
		      sym_function_cb cb, void *arg);
/*
 * Where the function holding vaddr starts, from the call-frame information
 * (the FDE whose range holds it): for code no symbol names.  False if no
 * FDE holds vaddr.
 */
bool obj_function_start(struct sym_obj *o, uint64_t vaddr, uint64_t *start);
/*
 * The object's first address (its lowest PT_LOAD, page-aligned): names and
 * addresses relative to the module are vaddr minus this.  0 for shared
 * objects and position-independent executables.
 */
uint64_t obj_module_base(const struct sym_obj *o);

/* Number of ELF files opened so far (all sessions), for tests. */
extern unsigned long sym_stat_files_opened;
/* Bytes of compressed DWARF inflated so far (all sessions), for tests. */
extern unsigned long long sym_stat_inflated;
/*
 * Read compressed DWARF lazily (lazydw.c); true unless a test turns it off
 * to compare with libdw inflating everything.  Read when an object opens.
 */
extern bool sym_lazy_dwarf;

/* ---- kernel ----------------------------------------------------------- */

#define SYM_KERNEL_START 0xffff800000000000ULL

struct sym_kallsyms;
/* Reads path (or /proc/kallsyms) on first use; NULL-safe free. */
struct sym_kallsyms *kallsyms_load(const char *path, struct sym_intern *t);
/* Function containing addr, or NULL (unreadable, or below every symbol). */
const char *kallsyms_lookup(struct sym_kallsyms *k, uint64_t addr);
bool kallsyms_usable(const struct sym_kallsyms *k);
void kallsyms_free(struct sym_kallsyms *k);

#endif
