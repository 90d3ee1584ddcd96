/*
 * sym_cxx.cc — the C++ program of tests/unit/test_symbols.c: namespaces,
 * templates, methods, operators, an anonymous namespace.  Each mark names
 * the exact demangled name its address must resolve to.
 */
#include <vector>

#include "sym_mark.h"

namespace outer {
namespace inner {

template <typename T>
struct Box {
	T v;
	__attribute__((noinline)) T get() const
	{
		SYM_MARK("outer::inner::Box<int>::get() const");
		return v;
	}
	__attribute__((noinline)) Box &operator+=(const Box &o)
	{
		SYM_MARK("outer::inner::Box<int>::operator+=(outer::inner::Box<int> const&)");
		v += o.v;
		return *this;
	}
};

template <typename T>
__attribute__((noinline)) T twice(T x)
{
	SYM_MARK("double outer::inner::twice<double>(double)");
	return x + x;
}

} // namespace inner
} // namespace outer

namespace {
__attribute__((noinline)) int hidden(std::vector<int> &v)
{
	SYM_MARK("(anonymous namespace)::hidden(std::vector<int, std::allocator<int> >&)");
	v.push_back(1);
	return (int)v.size();
}
} // namespace

int main()
{
	outer::inner::Box<int> a{2}, b{3};
	std::vector<int> v;
	a += b;
	double d = outer::inner::twice(1.5);
	sym_print_maps();
	return (a.get() + hidden(v) + (int)d) == 12345;
}
