/* Two plugins dlopen()ed RTLD_LOCAL one after the other, both linked with
 * the same libdep.so (e2e_dlshared_dep.c): plug_a calls dep_fn() argv[1]
 * times, plug_b argv[2] times, each through its own lazily bound slot. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

static int run(const char *path, const char *fn, int n)
{
	void *h = dlopen(path, RTLD_LOCAL | RTLD_LAZY);
	int (*f)(int);

	if (!h) {
		fprintf(stderr, "%s\n", dlerror());
		exit(1);
	}
	f = (int (*)(int))dlsym(h, fn);
	return f(n);
}

int main(int argc, char **argv)
{
	const char *dir = argc > 3 ? argv[3] : ".";
	char a[4096], b[4096];
	int s;

	snprintf(a, sizeof(a), "%s/libplug_a.so", dir);
	snprintf(b, sizeof(b), "%s/libplug_b.so", dir);
	s = run(a, "plug_a", atoi(argv[1]));
	s += run(b, "plug_b", atoi(argv[2]));
	printf("sum %d\n", s);
	return 0;
}
