/*
 * e2e_dlreload — dlclose, then dlopen of another library that the loader
 * maps at the same address: argv[1] (built from e2e_dlreload_lib.c with
 * -DWHICH=a) is opened, a_entry() called 5 times, closed; argv[2] (-DWHICH=b)
 * is opened, b_entry() called 7 times.  Both libraries have the same code
 * layout, so lib_fn and the entries sit at the same addresses in both.
 * Prints "same base: 1" to stderr when the two were mapped at one address.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>

static void (*entry(void *h, const char *name))(void)
{
	return (void (*)(void))dlsym(h, name);
}

int main(int argc, char **argv)
{
	void *h;
	void (*f)(void);
	Dl_info a, b;

	if (argc < 3 || !(h = dlopen(argv[1], RTLD_NOW)) || !(f = entry(h, "a_entry")))
		return 2;
	for (int i = 0; i < 5; i++)
		f();
	dladdr((void *)f, &a);
	dlclose(h);
	if (!(h = dlopen(argv[2], RTLD_NOW)) || !(f = entry(h, "b_entry")))
		return 2;
	dladdr((void *)f, &b);
	for (int i = 0; i < 7; i++)
		f();
	fprintf(stderr, "same base: %d\n", a.dli_fbase == b.dli_fbase);
	return 0;
}
