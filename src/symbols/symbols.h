/*
 * symbols — turning recorded addresses into functions, modules and lines.
 *
 * A sym_session knows the mappings of every process image of a recording
 * (fed from SC_REC_MODULE records) and opens each ELF object once, through
 * elfutils (libelf for the symbol tables, libdw for DWARF lines and inline
 * scopes), preferring a separate debug file found by build-id under
 * /usr/lib/debug/.build-id when one is installed.  Compressed DWARF (as in
 * Debian's debug packages) is inflated only as far as the compile units of
 * the addresses looked up need.  C++ names are demangled.
 * Kernel addresses resolve through /proc/kallsyms to module "[kernel]".
 * "[vdso]" mappings are no file: they are read from this process's own
 * vdso (the same kernel image every process maps) when the recorded
 * build-id matches it or none was recorded; otherwise, like a replaced
 * file, from a debug file of the recorded build-id, or left unnamed.
 *
 * Ownership: every string returned is owned by the session, interned (the
 * same function of the same module always yields the same pointer, so
 * callers may hash pointers), and valid until sym_session_free().
 * Resolution results are cached per address.  Not thread-safe.
 *
 * Environment: STACKCLOCK_DEBUG_ROOT replaces /usr/lib/debug as the root of
 * separate debug files (read by sym_session_new); STACKCLOCK_KALLSYMS
 * replaces /proc/kallsyms (for tests); STACKCLOCK_VDSO_DIR replaces
 * /lib/modules/RELEASE/vdso as the place of the kernel's unstripped vdso.
 * DEBUGINFOD_URLS (and libdebuginfod's other variables) enable a debuginfod
 * server as the last place to find a debug file.
 *
 * Code no symbol names is named "FILE+0xOFFSET" (docs/values.md, "Code without symbols"): the
 * start of the CFI range holding the address, relative to the module's
 * first segment, so the same function has the same name in every run.
 * An unreadable or damaged file never fails a lookup: its addresses get
 * "FILE+0xOFFSET" names of their offset in the file, and one warning.
 * Addresses in no known module keep "0x<addr>".
 */
#ifndef SC_SYMBOLS_H
#define SC_SYMBOLS_H

#include <stdbool.h>
#include <stdint.h>

#include "format/scdata.h"

struct sym_session;

struct sym_frame {
	const char *function;     /* demangled; "0x<addr>" when unknown */
	const char *system_name;  /* as the symbol table spells it (mangled),
				     or NULL when there is none */
	const char *module;       /* path of the object; "[unknown]" */
	const char *file;         /* source file, or NULL if no line info */
	unsigned    line;         /* 0 if unknown */
	bool        inlined;      /* an inlined frame inside the next one */
	bool        unnamed;      /* no symbol: named "FILE+0xOFFSET" of the
				     start of its CFI range (docs/values.md, "Code without symbols") */
	uint64_t    module_offset;/* the address relative to its module's
				     first segment (the absolute address when
				     it lies in no known module) */
};

struct sym_session *sym_session_new(void);
void sym_session_free(struct sym_session *s);   /* accepts NULL */

/* Register one mapping (a SC_REC_MODULE record and its path). */
void sym_add_module(struct sym_session *s, const struct sc_rec_module *m,
		    const char *path);

/*
 * Resolve addr of process image proc_id.  If is_return is set, addr is a
 * return address and the call instruction before it is looked up (for
 * callers' frames and call sites).  Fills up to max frames, innermost first:
 * inlined frames, then the function that holds them; returns how many
 * (at least 1 when max >= 1).  With more frames than max, the innermost max
 * are given.  An inlined frame's file/line is the location inside it; the
 * next frame's is the line of that inline call (as addr2line -i shows).
 */
int sym_resolve(struct sym_session *s, uint32_t proc_id, uint64_t addr,
		bool is_return, struct sym_frame *out, int max);

/*
 * The GNU build-id of the ELF file at path into out (at most 20 bytes):
 * its length, 0 if the file has none or cannot be read.
 */
unsigned sym_file_build_id(const char *path, uint8_t *out);

/*
 * A short line saying what to install to get names for the functions of
 * module (a path, or "[vdso]"): the Debian package's debug symbols when dpkg
 * knows the file's package, else how to keep them.  (A debuginfod server,
 * DEBUGINFOD_URLS, is the other way for every module.)  Malloc'ed; the
 * caller frees it.  Reads dpkg's file lists (STACKCLOCK_DPKG_INFO replaces
 * /var/lib/dpkg/info): call it for the few modules that need it.
 */
char *sym_debug_hint(const char *module);

/* name as the reports show it (a C++ name demangled), malloc'ed: for names
 * that come from elsewhere than a symbol table (a library call's, SPEC
 * section 11). */
char *sym_demangle(const char *name);

/*
 * Every function symbol (STT_FUNC, STT_GNU_IFUNC) defined in the ELF file
 * at path, aliases and local symbols included, with its link-time address
 * and size: from the file's .symtab and .dynsym, and when it has no .symtab
 * from its separate debug file (by build-id under the debug root, as
 * reports find it; STACKCLOCK_DEBUG_ROOT applies) and its MiniDebugInfo.
 * An address may be reported several times (aliases, or the same symbol
 * in two tables).  name is valid during the call only.  Returns 0, or
 * -errno when the file cannot be opened as ELF.  For the patcher's
 * function discovery (src/record/discover.h).
 */
typedef void (*sym_function_cb)(void *arg, const char *name, uint64_t addr,
				uint64_t size);
int sym_file_functions(const char *path, sym_function_cb cb, void *arg);

/*
 * Shorten a long C++ name for a narrow table; writes at most width bytes,
 * the NUL included (so at most width - 1 characters).  Names that fit are
 * copied unchanged.
 */
void sym_shorten(const char *name, char *buf, unsigned width);

#endif
