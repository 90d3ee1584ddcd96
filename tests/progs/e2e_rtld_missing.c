/* A C program without the unwinder's library that calls the runtime's
 * _Unwind_SetIP (the only definition loaded): the runtime has no real one
 * to pass it on to. */
#include <dlfcn.h>
#include <stdio.h>

int main(void)
{
	void (*f)(void *, unsigned long) = (void (*)(void *, unsigned long))dlsym(RTLD_DEFAULT, "_Unwind_SetIP");

	printf("%s\n", f ? "found" : "none");
	fflush(stdout);
	if (f)
		f(NULL, 0);
	return 0;
}
