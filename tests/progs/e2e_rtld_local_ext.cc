// A C++ extension a C host dlopen()s RTLD_LOCAL (e2e_rtld_local.c): its
// unwinder (libgcc_s) and libstdc++ are in its own scope only.
#include <stdexcept>

__attribute__((noinline)) static int depth(int n)
{
	if (n == 0)
		throw std::runtime_error("bottom");
	return depth(n - 1) + 1;
}

extern "C" int ext_run(int n)
{
	int caught = 0;

	for (int i = 0; i < n; i++) {
		try {
			depth(5);
		} catch (const std::exception &) {
			caught++;
		}
	}
	return caught;
}
