/*
 * patch_dl — libraries patched at run time (t703): a_work() of the
 * library it is linked with (patch_dl_lib.c, -DP=a), b_work() of one it
 * dlopens (-DP=b, path in argv[2]), each called argv[1] times with 10;
 * with a third argument, the library is then closed, opened again and
 * b_work called argv[1] times more.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

int a_work(int n);

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 10;
	void *h = argc > 2 ? dlopen(argv[2], RTLD_NOW) : NULL;
	int (*b_work)(int) = h ? (int (*)(int))dlsym(h, "b_work") : NULL;
	long s = 0;

	if (!b_work) {
		fprintf(stderr, "patch_dl: cannot load b_work from %s\n", argc > 2 ? argv[2] : "(none)");
		return 1;
	}
	for (int i = 0; i < n; i++)
		s += a_work(10) + b_work(10);
	if (argc > 3) {
		dlclose(h);
		h = dlopen(argv[2], RTLD_NOW);
		b_work = h ? (int (*)(int))dlsym(h, "b_work") : NULL;
		for (int i = 0; b_work && i < n; i++)
			s += b_work(10);
	}
	printf("%ld\n", s);
	return 0;
}
