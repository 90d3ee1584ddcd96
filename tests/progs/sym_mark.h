/*
 * sym_mark.h — for the symbolization tests' programs (sym_*.c, sym_*.cc).
 *
 * SYM_MARK(name) prints "mark <name> <pc> <line>": pc is the address of an
 * instruction on the macro's own line (a local label, x86-64), so the test
 * knows which function, file and line that address must resolve to.
 * sym_print_maps() prints the executable mappings of the process.
 * SYM_FN(fn) prints "fn <name> <address> <line>" for a function whose
 * definition starts on the line where SYM_LINE(fn) stands.
 */
#ifndef SYM_MARK_H
#define SYM_MARK_H

#include <stdio.h>

#define SYM_MARK(name) do {                                              \
	void *pc_;                                                       \
	__asm__ volatile("1: lea 1b(%%rip), %0" : "=r"(pc_));            \
	printf("mark %s|%p|%d\n", name, pc_, __LINE__);                  \
} while (0)

/* Print the executable file mappings: "map <start> <end> <pgoff> <path>". */
static inline void sym_print_maps(void)
{
	char line[4096], perms[8], path[4096];
	unsigned long start, end, off;
	FILE *maps = fopen("/proc/self/maps", "r");

	while (maps && fgets(line, sizeof(line), maps)) {
		if (sscanf(line, "%lx-%lx %7s %lx %*s %*s %4095s", &start, &end,
			   perms, &off, path) == 5 && perms[2] == 'x' &&
		    path[0] == '/')
			printf("map %lx %lx %lx %s\n", start, end, off, path);
	}
	if (maps)
		fclose(maps);
}

/* Kept out of line and uncloned, so names and return addresses are exact. */
#ifdef __clang__
#define SYM_NOINLINE __attribute__((noinline))
#else
#define SYM_NOINLINE __attribute__((noipa))
#endif

#define SYM_LINE(fn) static const int fn##_line_ = __LINE__;
#define SYM_FN(fn) printf("fn %s|%p|%d\n", #fn, (void *)fn, fn##_line_)

#endif
