/* The library two plugins share (e2e_dlshared.c): dlopen()ed RTLD_LOCAL
 * one after the other, the second finds it loaded by the first. */
int dep_fn(int x)
{
	return x * 3 + 1;
}
