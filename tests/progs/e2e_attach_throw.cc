// A C++ program attached to (t330): exceptions thrown through functions
// patched while it runs, caught two frames up; SIGTERM ends it, printing
// "ok ROUNDS SUM" when every round's sum is what it must be.
#include <csignal>
#include <cstdio>
#include <stdexcept>
#include <unistd.h>

static volatile sig_atomic_t done;

__attribute__((noinline)) int thrower(int i)
{
	if (i % 3 == 0)
		throw std::runtime_error("multiple of 3");
	return i;
}

__attribute__((noinline)) int middle(int i)
{
	return thrower(i) + 1;
}

__attribute__((noinline)) long outer(int n)
{
	long s = 0;

	for (int i = 0; i < n; i++) {
		try {
			s += middle(i);
		} catch (const std::exception &) {
			s -= 1;
		}
	}
	return s;
}

int main()
{
	long want = 0, rounds = 0;
	bool good = true;

	for (int i = 0; i < 1000; i++)
		want += i % 3 == 0 ? -1 : i + 1;
	signal(SIGTERM, [](int) { done = 1; });
	while (!done) {
		good = good && outer(1000) == want;
		rounds++;
		usleep(100);
	}
	if (!good) {
		puts("FAILED");
		return 1;
	}
	printf("ok %ld\n", rounds);
	return 0;
}
