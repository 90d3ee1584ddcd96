/*
 * sym_prog.c — the C program of tests/unit/test_symbols.c.  Built as PIE and
 * as non-PIE at -O2, linked with sym_lib.so and dlopen'ing argv[1].  Prints
 * its executable mappings ("map"), dladdr bases ("base"), marks (see
 * sym_mark.h), the lines where an always_inline function is called
 * ("inline") and where it calls another ("inline2", holding mark sym_deep),
 * and a return address with the line of its call ("ret", "retaddr").
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>

#include "sym_mark.h"

int symlib_work(int x);
void *symlib_self(void);

static void *ret_addr;

static inline __attribute__((always_inline)) int sym_deep(int x)
{
	x = x * 3 + 1;
	SYM_MARK("sym_deep");
	return x;
}

static inline __attribute__((always_inline)) int sym_inlined(int x)
{
	printf("inline2 %d\n", __LINE__); x = sym_deep(x) + 2;
	return x;
}

SYM_LINE(sym_leaf) SYM_NOINLINE int sym_leaf(int x) {
	ret_addr = __builtin_return_address(0);
	SYM_MARK("sym_leaf");
	return x + 1;
}

SYM_LINE(sym_outer) SYM_NOINLINE int sym_outer(int x) {
	int r;
	printf("inline %d\n", __LINE__); r = sym_inlined(x);
	printf("ret %d\n", __LINE__); r += sym_leaf(r);
	printf("retaddr %p\n", ret_addr);
	return r;
}

/* GCC moves the unlikely branch into "sym_split.cold"; its addresses must
 * still be named sym_split. */
__attribute__((cold, noinline)) static void sym_cold_helper(void)
{
	printf("cold\n");
}

SYM_NOINLINE int sym_split(int x)
{
	if (__builtin_expect(x == 4, 0)) {
		sym_cold_helper();
		SYM_MARK("sym_split");
	}
	return x * 2;
}

static void print_base(const char *tag, void *fn)
{
	Dl_info info;
	if (dladdr(fn, &info))
		printf("base %s|%p\n", tag, info.dli_fbase);
}

int main(int argc, char **argv)
{
	int r = sym_outer(argc);

	r += symlib_work(r);
	r += sym_split(4);
	if (argc > 1) {
		void *h = dlopen(argv[1], RTLD_NOW);
		int (*fn)(int) = h ? (int (*)(int))dlsym(h, "symdl_work") : NULL;
		void *(*self)(void) = h ? (void *(*)(void))dlsym(h, "symdl_self") : NULL;
		if (!fn || !self) {
			fprintf(stderr, "dlopen %s: %s\n", argv[1], dlerror());
			return 1;
		}
		r += fn(r);
		print_base("dl", self());
	}
	SYM_FN(sym_leaf);
	SYM_FN(sym_outer);
	print_base("exe", (void *)sym_leaf);
	print_base("lib", symlib_self());
	sym_print_maps();
	return r == 12345 ? 1 : 0;
}
