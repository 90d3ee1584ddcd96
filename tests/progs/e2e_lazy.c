/* e2e_lazy — a program that links lib_gone but calls it only when asked
 * (t322): with lazy binding it runs even after the library lost it. */
#include <stdio.h>
#include <string.h>

int lib_used(int x);
int lib_gone(int x);

__attribute__((noinline)) int work(int i)
{
	return lib_used(i);
}

int main(int argc, char **argv)
{
	int sum = 0;

	for (int i = 0; i < 100; i++)
		sum += work(i);
	if (argc > 1 && !strcmp(argv[1], "gone"))
		sum += lib_gone(1);
	printf("sum %d\n", sum);
	return 0;
}
