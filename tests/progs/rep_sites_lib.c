/*
 * rep_sites_lib — a library built WITHOUT -finstrument-functions that calls
 * back into instrumented code, as qsort and start_thread do: the call sites
 * of the callbacks lie in a module the runtime sees no function of.
 */
void lib_each(void (*fn)(int), int n)
{
	for (int i = 0; i < n; i++)
		fn(i);                  /* the call site line the report must name */
}
