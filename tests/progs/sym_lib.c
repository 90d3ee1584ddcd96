/*
 * sym_lib.c — a shared library for tests/unit/test_symbols.c, built twice:
 * linked into sym_prog (symlib_work) and, with -DSYM_DL, dlopen'ed by it
 * (symdl_work); SELF gives an address inside it.
 */
#include "sym_mark.h"

#ifdef SYM_DL
#define WORK symdl_work
#define SELF symdl_self
#define NAME "symdl_work"
#else
#define WORK symlib_work
#define SELF symlib_self
#define NAME "symlib_work"
#endif

/* An address inside this library for dladdr(): taking &WORK from a non-PIE
 * program would give the program's PLT entry instead. */
static int here(void)
{
	return 0;
}

void *SELF(void)
{
	return (void *)here;
}

SYM_NOINLINE int WORK(int x)
{
	SYM_MARK(NAME);
	return x * 7 + 1;
}
