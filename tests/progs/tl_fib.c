/* fib(argv[1]) called argv[2] times: 2 * fib(n + 1) - 1 calls of fib
 * each, no library call but the printf at the end (t322). */
#include <stdio.h>
#include <stdlib.h>

int fib(int n)
{
	return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 20, k = argc > 2 ? atoi(argv[2]) : 1, s = 0;

	for (int i = 0; i < k; i++)
		s += fib(n);
	printf("%d\n", s);
	return 0;
}
