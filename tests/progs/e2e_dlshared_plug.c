/* A plugin of e2e_dlshared.c (built twice, -DNAME=plug_a / plug_b),
 * linked with libdep.so (e2e_dlshared_dep.c). */
int dep_fn(int x);

int NAME(int n)
{
	int s = 0;

	for (int i = 0; i < n; i++)
		s += dep_fn(i);
	return s;
}
