/*
 * rep_first — a hot spot behind layers of wrappers, for the report's first
 * screen: main -> run -> wrap_outer -> wrap_inner -> {the hot function,
 * with a name longer than a terminal line, 3/4 of the work; cold, 1/4}.
 * The wrappers do no work of their own.  Usage: rep_first MILLISECONDS
 */
#include <stdlib.h>
#include <time.h>

static volatile unsigned long sink;

__attribute__((noinline)) unsigned long
checksum_every_block_of_the_input_buffer_with_a_name_longer_than_a_terminal_line(unsigned long n)
{
	unsigned long s = 0;

	for (unsigned long i = 0; i < 3 * n; i++)
		s += i ^ (sink >> 3);
	return s;
}

__attribute__((noinline)) unsigned long cold(unsigned long n)
{
	unsigned long s = 0;

	for (unsigned long i = 0; i < n; i++)
		s += i * (sink | 1);
	return s;
}

__attribute__((noinline)) unsigned long wrap_inner(unsigned long n)
{
	unsigned long s = checksum_every_block_of_the_input_buffer_with_a_name_longer_than_a_terminal_line(n);

	return s + cold(n);
}

__attribute__((noinline)) unsigned long wrap_outer(unsigned long n)
{
	return wrap_inner(n) + 1;
}

__attribute__((noinline)) unsigned long run(long ms)
{
	struct timespec a, b;
	unsigned long r = 0;

	clock_gettime(CLOCK_MONOTONIC, &a);
	do {
		r += wrap_outer(20000);
		clock_gettime(CLOCK_MONOTONIC, &b);
	} while ((b.tv_sec - a.tv_sec) * 1000 + (b.tv_nsec - a.tv_nsec) / 1000000 < ms);
	return r;
}

int main(int argc, char **argv)
{
	sink = run(argc > 1 ? atol(argv[1]) : 300);
	return 0;
}
