/* e2e_lazy_lib — the library of e2e_lazy (t322): lib_gone is left out of
 * the build with -DGONE, as a library that lost a symbol. */
int lib_used(int x)
{
	return x + 1;
}

#ifndef GONE
int lib_gone(int x)
{
	return x - 1;
}
#endif
