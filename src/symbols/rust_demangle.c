/*
 * rust_demangle — Rust's v0 names ("_R...", RFC 2603: rustc's std, core
 * and alloc) by libiberty's demangler, as binutils' c++filt shows them.
 *
 * A file of its own: libiberty's headers define names of their own
 * (ARRAY_SIZE, xmalloc's family) that util.h defines too.
 */
#include <libiberty/demangle.h>

#include "symbols/sym_int.h"

/* As rustc-demangle's alternate form and perf print it: the crates'
 * hashes left out (no DMGL_VERBOSE).  Bounded on hostile input: the
 * demangler caps its recursion and gives NULL for what it cannot read. */
char *rust_v0_demangle(const char *name)
{
	return rust_demangle(name, DMGL_PARAMS | DMGL_ANSI);
}
