/*
 * An instrumented function entered by a library function's tail call
 * (t319): its return address is the library call's return trampoline.
 *
 *   e2e_libtail N     N calls of lib_then(cb, i); prints the sum of i
 */
#include <stdio.h>
#include <stdlib.h>

void lib_then(void (*f)(int), int x);

static volatile long sum;

__attribute__((noinline)) void cb(int x)
{
	sum += x;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 1;

	for (int i = 0; i < n; i++)
		lib_then(cb, i);
	printf("%ld\n", sum);
	return 0;
}
