/*
 * A counting oracle for run-time patching (t705): -finstrument-functions
 * hooks that only count entries per function, linked into a program built
 * with hooks.  At exit, if STACKCLOCK_TEST_COUNTS names a file, it gets one
 * line per function of the main program: "OFFSET COUNT", OFFSET the
 * function's address less the program's load address (its symbol value in
 * a position-independent executable).  Single-threaded programs only.
 */
#define _GNU_SOURCE
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define NO_HOOK __attribute__((no_instrument_function))
#define SLOTS (1u << 16)

static struct { uintptr_t fn; uint64_t n; } tab[SLOTS];
static unsigned used;

NO_HOOK void __cyg_profile_func_enter(void *fn, void *site)
{
	uintptr_t f = (uintptr_t)fn;
	unsigned i = (unsigned)((f * 0x9e3779b97f4a7c15ull) >> 48) & (SLOTS - 1);

	(void)site;
	while (tab[i].fn && tab[i].fn != f)
		i = (i + 1) & (SLOTS - 1);
	if (!tab[i].fn) {
		if (used + 1 >= SLOTS)
			abort();
		tab[i].fn = f;
		used++;
	}
	tab[i].n++;
}

NO_HOOK void __cyg_profile_func_exit(void *fn, void *site)
{
	(void)fn;
	(void)site;
}

static NO_HOOK int main_base(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	*(uintptr_t *)arg = info->dlpi_addr;
	return 1;                   /* the first object is the program */
}

static NO_HOOK __attribute__((destructor)) void dump_counts(void)
{
	const char *path = getenv("STACKCLOCK_TEST_COUNTS");
	uintptr_t base = 0;
	FILE *f;

	if (!path || !(f = fopen(path, "w")))
		return;
	dl_iterate_phdr(main_base, &base);
	for (unsigned i = 0; i < SLOTS; i++)
		if (tab[i].fn)
			fprintf(f, "%#lx %lu\n", (unsigned long)(tab[i].fn - base), (unsigned long)tab[i].n);
	fclose(f);
}
