/*
 * dynsym — a loaded object's dynamic section and symbols, read in memory
 * (no file, no libelf, no call the program could define): what libcall.c
 * hooks (relocations, a name's definition), what patch.c asks (are the
 * hooks compiled in: an import of __cyg_profile_func_enter), and what
 * retstack.c must not look up with dlsym() (a failed lookup calls
 * malloc(), which may be the program's own, counted).
 */
#ifndef SC_RUNTIME_DYNSYM_H
#define SC_RUNTIME_DYNSYM_H

#include <link.h>
#include <stdint.h>

struct rt_dyn {
	const ElfW(Sym) *symtab;
	const char *strtab;
	uint64_t strsz;
	const ElfW(Rela) *jmprel, *rela;   /* NULL without a symbol table */
	uint64_t jmprel_sz, rela_sz;
	const uint16_t *versym;
	const ElfW(Verneed) *verneed;      /* the versions it needs, or NULL */
	const ElfW(Verdef) *verdef;        /* the versions it defines, or NULL */
	uint64_t verneednum, verdefnum;
	const uint32_t *gnu_hash;
	uint64_t nsyms;                    /* symbols the hash tables count */
	uint64_t base;                     /* load bias */
	const ElfW(Dyn) *dyn;              /* its dynamic section (DT_NEEDED) */
	uint64_t soname;                   /* DT_SONAME's string, or ~0 */
};

void rt_dyn_read(const struct dl_phdr_info *info, struct rt_dyn *d);
/* The index of the object's exported definition of function name (its
 * default version) in its GNU hash table, or 0: rt_dyn_lookup_ver with no
 * version asked for. */
uint32_t rt_dyn_lookup(const struct rt_dyn *d, const char *name);
/* The version an import (symbol index i) asks for ("GLIBC_2.2.5"), or
 * NULL if none. */
const char *rt_dyn_import_version(const struct rt_dyn *d, uint32_t i);
/* The object's exported definition of function name that a reference
 * asking for version ver (NULL: none) binds to, as the loader matches
 * them (a hidden, older version only when asked for by name): its index,
 * or 0. */
uint32_t rt_dyn_lookup_ver(const struct rt_dyn *d, const char *name, const char *ver);
/* Does the object import name (an undefined dynamic symbol)? */
int rt_dyn_imports(const struct rt_dyn *d, const char *name);
/* Does a loaded object other than this runtime define name? */
int rt_defined_elsewhere(const char *name);
/* The address of name's definition (a function, its default version; an
 * IFUNC resolved) in the first loaded object, in load order, that defines
 * it, not this runtime nor the vDSO; NULL if none does.  What dlsym()
 * cannot find when the definer is in no scope the runtime's lookup sees
 * (a library only a dlopen(RTLD_LOCAL)ed object loaded). */
void *rt_defined_addr(const char *name);
/* The i-th DT_NEEDED name of the object (i from 0), or NULL past the
 * last. */
const char *rt_dyn_needed(const struct rt_dyn *d, int i);
/* Is the object (named path by the loader) the one DT_NEEDED name
 * `needed` loads: its soname, its path, or its file name? */
int rt_dyn_is_needed(const struct rt_dyn *d, const char *path, const char *needed);

#endif
