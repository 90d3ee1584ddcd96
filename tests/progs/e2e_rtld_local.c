/* A C program (no unwinder of its own) that dlopen()s a C++ extension
 * RTLD_LOCAL and has it throw and catch n times (e2e_rtld_local_ext.cc). */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	void *h = dlopen(argc > 1 ? argv[1] : "./e2e_rtld_local_ext.so", RTLD_LOCAL | RTLD_NOW);
	int (*run)(int);

	if (!h) {
		fprintf(stderr, "%s\n", dlerror());
		return 1;
	}
	run = (int (*)(int))dlsym(h, "ext_run");
	printf("caught %d\n", run(argc > 2 ? atoi(argv[2]) : 100));
	return 0;
}
