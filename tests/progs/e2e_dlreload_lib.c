/* e2e_dlreload_lib — built twice, -DWHICH=a and -DWHICH=b: same layout,
 * other names (see e2e_dlreload.c). */
#define CAT2(x, y) x##y
#define CAT(x, y) CAT2(x, y)

static volatile unsigned long sink;

__attribute__((noinline)) void CAT(lib_fn_, WHICH)(void) { sink++; }
__attribute__((noinline)) void CAT(WHICH, _entry)(void) { CAT(lib_fn_, WHICH)(); }
