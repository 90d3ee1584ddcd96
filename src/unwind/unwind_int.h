/* Internal structures of the unwind module (see unwind.h). */
#ifndef SC_UNWIND_INT_H
#define SC_UNWIND_INT_H

#include "unwind/unwind.h"

struct unw_seg {                  /* one PT_LOAD */
	uint64_t offset, filesz, vaddr, align;
};

struct unw_range {
	uint64_t lo, hi;
};

struct unw_table {
	uint64_t base;                /* vaddr of rows[0] */
	struct unw_row *rows;
	size_t nrows;
	struct unw_seg *segs;
	size_t nsegs, segs_alloc;
	struct unw_range *roots;      /* root functions, object vaddrs */
	size_t nroots, roots_alloc;
	uint8_t build_id[20];
	size_t build_id_len;
	unsigned unsupported;         /* rows with rules we cannot express */
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
};

/* Read the GNU build-id note of an ELF file (table.c).  Length or 0. */
size_t unw_read_build_id(const char *path, uint8_t *id, size_t max);

#endif
