/*
 * smp_lazybind — samples inside glibc's lazy-binding resolver.
 * Built twice from this file, both -O2 without frame pointers:
 *   -DSMP_LIB -shared -fPIC -Wl,-z,lazy -o libsmplazy.so
 *       the library: 2000 global functions f1000..f2999 and run_all(),
 *       which calls each once.  They are global (interposable), so those
 *       calls go through the library's PLT and, bound lazily, the first
 *       one of each goes through _dl_runtime_resolve_* -> _dl_fixup ->
 *       _dl_lookup_symbol_x.
 *   -o smp_lazybind -ldl
 *       the program: main -> load_and_run -> (dlopen'ed, RTLD_LAZY)
 *       run_all, with a fresh dlopen each round (dlclose unloads the
 *       library, so every round resolves all 2000 again).
 * Run WITHOUT LD_BIND_NOW, else nothing is resolved lazily.
 * Usage: smp_lazybind PATH/libsmplazy.so [MILLISECONDS]   (default 1000)
 * Prints "rounds=N" at the end.
 */
#ifdef SMP_LIB
#define F1(n) __attribute__((noinline)) int f##n(int x) { return x * (n) + 1; }
#define F10(n) F1(n##0) F1(n##1) F1(n##2) F1(n##3) F1(n##4) \
	       F1(n##5) F1(n##6) F1(n##7) F1(n##8) F1(n##9)
#define F100(n) F10(n##0) F10(n##1) F10(n##2) F10(n##3) F10(n##4) \
		F10(n##5) F10(n##6) F10(n##7) F10(n##8) F10(n##9)
#define F1000(n) F100(n##0) F100(n##1) F100(n##2) F100(n##3) F100(n##4) \
		 F100(n##5) F100(n##6) F100(n##7) F100(n##8) F100(n##9)
F1000(1)
F1000(2)

#define C1(n) s = f##n(s);
#define C10(n) C1(n##0) C1(n##1) C1(n##2) C1(n##3) C1(n##4) \
	       C1(n##5) C1(n##6) C1(n##7) C1(n##8) C1(n##9)
#define C100(n) C10(n##0) C10(n##1) C10(n##2) C10(n##3) C10(n##4) \
		C10(n##5) C10(n##6) C10(n##7) C10(n##8) C10(n##9)
#define C1000(n) C100(n##0) C100(n##1) C100(n##2) C100(n##3) C100(n##4) \
		 C100(n##5) C100(n##6) C100(n##7) C100(n##8) C100(n##9)

__attribute__((noinline)) int run_all(int s)
{
	C1000(1)
	C1000(2)
	return s;
}
#else
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile int sink;

__attribute__((noinline)) static int load_and_run(const char *path)
{
	void *h = dlopen(path, RTLD_LAZY | RTLD_LOCAL);
	int (*run)(int);

	if (!h) {
		fprintf(stderr, "smp_lazybind: %s\n", dlerror());
		exit(1);
	}
	*(void **)&run = dlsym(h, "run_all");
	if (!run) {
		fprintf(stderr, "smp_lazybind: %s\n", dlerror());
		exit(1);
	}
	sink += run(sink);
	dlclose(h);
	return sink;
}

static double now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

int main(int argc, char **argv)
{
	double ms = argc > 2 ? atof(argv[2]) : 1000, t0 = now_ms();
	long rounds = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: smp_lazybind LIB [MILLISECONDS]\n");
		return 2;
	}
	while (now_ms() - t0 < ms) {
		load_and_run(argv[1]);
		rounds++;
	}
	printf("rounds=%ld\n", rounds);
	return 0;
}
#endif
