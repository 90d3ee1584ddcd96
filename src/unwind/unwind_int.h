/*
 * unwind_int.h — the structures behind the opaque types of unwind.h, shared
 * by table.c (unw_table: building and searching one object's rows), cache.c
 * (unw_cache/unw_module: one entry per file + build-id) and unwind.c (the
 * walk).  Not a public contract: only src/unwind and its unit test include it.
 *
 * Invariants:
 *  - unw_table addresses are the object's own link-time vaddrs; a row's
 *    start/end are relative to table->base and fit in 32 bits.
 *  - fdes are sorted by lo and disjoint; rows are sorted, disjoint and only
 *    grow (a lookup may insert one), so a struct unw_row pointer is valid
 *    only until the next lookup in the same table (the array may move).
 *  - module->tried set means the table was built once: table NULL then means
 *    "no usable CFI" for good (no retry), unless a new fd source resets it.
 *
 * Ownership: a unw_table owns its arrays, its Elf/Dwarf handles, its fd
 * (-1 for an in-memory image) and the private image copy; unw_table_free()
 * releases all of it and accepts NULL.  A unw_cache owns every unw_module in
 * its hash chains; a module owns its table, path, source string and fd (when
 * source is set); unw_cache_free() releases them all.
 *
 * Thread-safety: none, as for unwind.h (the recorder is single-threaded).
 */
#ifndef SC_UNWIND_INT_H
#define SC_UNWIND_INT_H

#include "unwind/unwind.h"

#include <elfutils/libdw.h>
#include <libelf.h>

struct unw_seg {                  /* one PT_LOAD */
	uint64_t offset, filesz, vaddr, align;
	bool exec;                    /* PF_X */
};

struct unw_range {
	uint64_t lo, hi;
};

/* One FDE: the pc range of one function's CFI program. */
struct unw_fde {
	uint64_t lo, hi;
	bool debug_frame;             /* from .debug_frame, else .eh_frame */
	bool entry_std;               /* the rule at lo is "just called",
					 known from the CIE's and FDE's bytes */
};

struct unw_table {
	uint64_t base;                /* lowest FDE address; row starts are
					 relative to it */
	struct unw_fde *fdes;         /* sorted by lo, disjoint */
	size_t nfdes, fdes_alloc;
	struct unw_row *rows;         /* rows met so far: sorted, disjoint */
	size_t nrows, rows_alloc;
	struct unw_seg *segs;
	size_t nsegs, segs_alloc;
	struct unw_range *roots;      /* root functions, object vaddrs */
	size_t nroots, roots_alloc;
	uint8_t build_id[20];
	size_t build_id_len;
	unsigned unsupported;         /* rows with rules we cannot express */
	uint64_t build_ns;            /* time spent computing rows */

	/* Kept open to build rows on demand. */
	int fd;                       /* -1 for an in-memory image */
	char *image;                  /* the in-memory image's private copy */
	Elf *elf;
	Dwarf_CFI *eh_cfi;            /* .eh_frame, from dwarf_getcfi_elf */
	Dwarf *dwarf;                 /* for .debug_frame, opened if present */
	Dwarf_CFI *debug_cfi;
};

struct unw_module {
	struct unw_module *next;      /* hash chain */
	struct unw_cache *cache;
	char *path;
	uint8_t build_id[20];
	size_t build_id_len;
	struct unw_table *table;
	bool tried;                   /* build attempted (table may be NULL) */
	bool id_tried;                /* build-id looked up in the file */
	int fd;                       /* the mapped file, when path no longer
					 leads to it (valid if source set) */
	char *source;                 /* "/proc/self/fd/N": read from there */
	bool private;                 /* fd entry without build-id: found by
					 no path lookup */
};

/* Read the GNU build-id note of an ELF file (table.c).  Length or 0. */
size_t unw_read_build_id(const char *path, uint8_t *id, size_t max);

#endif
