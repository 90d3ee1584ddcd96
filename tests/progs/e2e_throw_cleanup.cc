/*
 * e2e_throw_cleanup N: N exceptions rethrown by leaf() (a library call,
 * std::rethrow_exception) through two frames whose cleanups run a
 * destructor (mid, mid2), caught by top().  Built with clang++
 * -finstrument-functions, whose unwound frames call no exit hook: leaf,
 * mid and mid2 are closed by repairs, 3 per throw, all the exception's
 * (the destructor's events after a cleanup's landing do not end it: the
 * unwinding goes on at _Unwind_Resume).
 */
#include <cstdio>
#include <cstdlib>
#include <exception>

static volatile int sink;
static std::exception_ptr saved;

struct Guard {
	__attribute__((noinline)) ~Guard() { sink = sink + 1; }
};

__attribute__((noinline)) void leaf(int i) { std::rethrow_exception(saved); }
__attribute__((noinline)) void mid(int i) { Guard g; leaf(i); }
__attribute__((noinline)) void mid2(int i) { Guard g; mid(i); }

__attribute__((noinline)) int top(int i)
{
	try {
		mid2(i);
	} catch (int) {
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 1000, c = 0;

	saved = std::make_exception_ptr(7);
	for (int i = 0; i < n; i++)
		c += top(i);
	printf("%d caught, %d cleanups\n", c, sink);
	return 0;
}
