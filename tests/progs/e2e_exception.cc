// e2e_exception — a C++ exception thrown three frames below its catch:
// the frames it unwinds never see their exit probe.
#include <stdexcept>

namespace demo {
template <typename T> struct Box {
	T v;
	__attribute__((noinline)) T get() const { return v; }
};
}

static volatile int sink;

__attribute__((noinline)) void thrower(int i)
{
	if (i % 2)
		throw std::runtime_error("odd");
	sink += i;
}

__attribute__((noinline)) void middle(int i) { thrower(i); sink++; }

__attribute__((noinline)) void catcher(int i)
{
	try {
		middle(i);
	} catch (const std::exception &) {
		sink--;
	}
}

int main()
{
	demo::Box<int> b{3};
	for (int i = 0; i < 20; i++)
		catcher(i + b.get());
	return 0;
}
