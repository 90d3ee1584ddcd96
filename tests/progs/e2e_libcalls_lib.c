/* e2e_libcalls_lib — built twice for e2e_libcalls.c: with the hooks
 * (-DHOOKED: lib_work, dlopen'ed, calls strlen 3 times) and without
 * (plain_work, linked, calls strlen 5 times: a call between libraries). */
#include <string.h>

static volatile unsigned long sink;
static char text[] = "library";

#ifdef HOOKED
void lib_work(void)
{
	for (int i = 0; i < 3; i++)
		sink += strlen(text + (sink & 1));
}
#else
void plain_work(void)
{
	for (int i = 0; i < 5; i++)
		sink += strlen(text + (sink & 1));
}
#endif
