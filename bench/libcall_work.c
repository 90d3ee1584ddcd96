/* bench/libcall_work.c — library calls in a loop, for bench/libcalls.sh.
 *
 *   libcall_work lib N    N calls of getppid() (a library call: its own
 *                         work is a system call the vDSO does not serve)
 *                         ... and N calls of labs()
 *   libcall_work fn N     N calls of an instrumented function of the
 *                         program of about the same work (labs's)
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static volatile long sink;

__attribute__((noinline)) long my_abs(long x)
{
	return x < 0 ? -x : x;
}

int main(int argc, char **argv)
{
	long n = argc > 2 ? atol(argv[2]) : 1000000;

	if (argc > 1 && !strcmp(argv[1], "fn")) {
		for (long i = 0; i < n; i++)
			sink += my_abs(i - n / 2);
	} else {
		for (long i = 0; i < n; i++)
			sink += labs(i - n / 2);
	}
	return 0;
}
