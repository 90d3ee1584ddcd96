/*
 * lazydw.h — a libdw Dwarf over an ELF file's compressed debug sections
 * that inflates only the parts lookups need (internal to src/symbols; see
 * lazydw.c for how and why).
 *
 * Contract: lazydw_open(e) returns NULL when it has nothing to gain (the
 * DWARF is not zlib-compressed) or cannot do it; the caller then uses
 * dwarf_begin_elf(e).  Otherwise the Dwarf it gives is libdw's own, over an
 * image whose parts must be made ready before libdw is asked about them:
 * lazydw_need_cu() before anything inside one CU, or lazydw_need_all() once
 * for everything.  e must outlive the lazydw (the compressed bytes are read
 * from its mapping).  lazydw_free() ends the Dwarf.  Not thread-safe.
 */
#ifndef SC_LAZYDW_H
#define SC_LAZYDW_H

#include <libelf.h>
#include <elfutils/libdw.h>

#include "symbols/sym_int.h"

struct sym_arange {
	uint64_t lo, hi;
	size_t unit;               /* index into the units array */
};

struct lazydw;

struct lazydw *lazydw_open(Elf *e);
void lazydw_free(struct lazydw *l);        /* accepts NULL */
Dwarf *lazydw_dwarf(struct lazydw *l);

/*
 * Address ranges from .debug_aranges, sorted by lo (larger first at equal
 * lo), and the .debug_info offsets of their units, sorted.  Returns the
 * number of ranges: 0 when the file has no usable .debug_aranges, in which
 * case the caller makes everything ready and walks the CUs itself.
 */
size_t lazydw_aranges(struct lazydw *l, const struct sym_arange **v,
		      const uint64_t **units, size_t *nunits);

/*
 * Make the compile unit at .debug_info offset cu_off ready (its DIEs, their
 * abbreviations, strings and ranges, its line program, and what libdw reads
 * on its way there) and give its root DIE.  0 or -1 (not a compile unit,
 * damaged, or data that does not inflate).
 */
int lazydw_need_cu(struct lazydw *l, uint64_t cu_off, Dwarf_Die *cudie);
/* Everything ready; false if some of it does not inflate. */
bool lazydw_need_all(struct lazydw *l);

#endif
