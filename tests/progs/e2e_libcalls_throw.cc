// e2e_libcalls_throw — a C++ exception passing through a library frame
// (SPEC section 11): qsort's comparator throws after a few comparisons,
// main catches; ROUNDS times, then one qsort that completes; each round
// also calls operator new and delete, libstdc++'s by mangled names.  Prints
// "caught C compares K".
#include <cstdio>
#include <cstdlib>

static volatile int compares, throw_at;
static int *volatile kept;

__attribute__((noinline)) static int cmp(const void *a, const void *b)
{
	int x = *static_cast<const int *>(a), y = *static_cast<const int *>(b);

	if (++compares == throw_at)
		throw x;
	return (x > y) - (x < y);
}

__attribute__((noinline)) static void sort_some(int *v, int n)
{
	qsort(v, static_cast<size_t>(n), sizeof(*v), cmp);
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 100, caught = 0, v[32];

	for (int r = 0; r < rounds; r++) {
		for (int i = 0; i < 32; i++)
			v[i] = (i * 7 + r) % 32;
		kept = new int(r);          // a call into libstdc++ by a mangled name
		delete kept;
		compares = 0;
		throw_at = 5 + r % 7;
		try {
			sort_some(v, 32);
		} catch (int) {
			caught++;
		}
	}
	compares = 0;
	throw_at = -1;
	sort_some(v, 32);
	std::printf("caught %d compares %d\n", caught, compares);
	return 0;
}
