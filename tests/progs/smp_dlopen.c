/*
 * smp_dlopen — unwinding through a library mapped while sampling runs.
 * Built twice from this file, both -O2 without frame pointers:
 *   -DSMP_LIB -shared -fPIC -o libsmp.so   the library: lib_spin() -> lib_inner()
 *   -o smp_dlopen -ldl                     the program: main -> call_lib ->
 *                                          (dlopen'ed) lib_spin -> lib_inner
 * so samples must be unwound through a module known only from the MMAP2
 * record made by dlopen, at a PIE load bias.
 * Usage: smp_dlopen PATH/libsmp.so [MILLISECONDS]   (default 800)
 */
#ifdef SMP_LIB
static volatile unsigned long lib_sink;

__attribute__((noinline)) unsigned long lib_inner(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		lib_sink += i ^ (lib_sink >> 7);
	return lib_sink;
}

__attribute__((noinline)) unsigned long lib_spin(unsigned long n)
{
	unsigned long r = lib_inner(n);
	return r + lib_sink;
}
#else
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

typedef unsigned long (*spin_fn)(unsigned long);
static volatile unsigned long sink;

__attribute__((noinline)) unsigned long call_lib(spin_fn fn, unsigned long n)
{
	unsigned long r = fn(n);
	sink += r;
	return r + sink;
}

int main(int argc, char **argv)
{
	long ms = argc > 2 ? atol(argv[2]) : 800;
	struct timespec a, b;
	void *h;
	spin_fn fn;

	if (argc < 2 || !(h = dlopen(argv[1], RTLD_NOW))) {
		fprintf(stderr, "smp_dlopen: %s\n", argc < 2 ? "usage: smp_dlopen LIB [MS]" : dlerror());
		return 2;
	}
	fn = (spin_fn)(unsigned long)dlsym(h, "lib_spin");
	if (!fn)
		return 2;
	clock_gettime(CLOCK_MONOTONIC, &a);
	do {
		call_lib(fn, 200000);
		clock_gettime(CLOCK_MONOTONIC, &b);
	} while ((b.tv_sec - a.tv_sec) * 1000 + (b.tv_nsec - a.tv_nsec) / 1000000 < ms);
	return 0;
}
#endif
