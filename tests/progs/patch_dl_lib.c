/*
 * patch_dl_lib — a library patched at run time by `record --patch` (t703),
 * built without hooks twice: -DP=a (linked by patch_dl) and -DP=b
 * (dlopen'ed by it).  P##_work(n) calls P##_leaf n times.
 */
#define CAT2(a, b) a##b
#define CAT(a, b) CAT2(a, b)
#define NAME(x) CAT(P, x)

__attribute__((noinline)) int NAME(_leaf)(int x)
{
	return x * 7 + 1;
}

int NAME(_work)(int n)
{
	int s = 0;

	for (int i = 0; i < n; i++)
		s += NAME(_leaf)(i);
	return s;
}
