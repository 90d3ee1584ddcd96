/*
 * stackclock-calib — the program the probes' cost is measured on (see
 * src/runtime/calib.h).  Built with -finstrument-functions like a target,
 * its functions live in an executable of their own, as a target's do, and
 * call the hooks through its PLT.  `record -m instrument` runs it with the
 * runtime in calibration mode, which reads the tree below.
 *
 * Shape (the runtime relies on it): main, not instrumented, calls the
 * batches batch_0 .. batch_40 in order; each calls leaf() RT_CALIB_PER
 * times, then one() (which calls leaf() once), then two() (twice), then
 * work() (a leaf with RT_CALIB_WORK dependent multiplies), so the root's
 * children are the batches and each batch's children, by creation, are
 * leaf, one, two, work.  Each batch also times the same work without
 * probes (work_plain(), not instrumented, called as often) and leaves the
 * mean ticks per call in stackclock_calib_plain[batch], which the runtime
 * reads (dlsym: the program exports it).
 *
 * Built with -DRT_CALIB_PATCHED and without hooks, it is
 * stackclock-calib-patch, patched at run time like a target: then main,
 * the crt's constructors and calib_plain are nodes too (calib.c finds the
 * batches under main; calib_plain is a batch's last child).
 */
#include <x86intrin.h>

#include "runtime/calib.h"

volatile unsigned long calib_sink;
unsigned long long stackclock_calib_plain[RT_CALIB_BATCHES];

__attribute__((noinline)) void calib_leaf(void)
{
#ifdef RT_CALIB_PATCHED
	__asm__ volatile(".byte 0x0f, 0x1f, 0x44, 0x00, 0x00");   /* room for the jump */
#else
	__asm__ volatile("");
#endif
}

__attribute__((noinline)) void calib_one(void)
{
	calib_leaf();
	__asm__ volatile("");
}

__attribute__((noinline)) void calib_two(void)
{
	calib_leaf();
	calib_leaf();
	__asm__ volatile("");
}

/* a dependent chain, long enough to hide the probes' work that can run
 * beside it (calib.h) */
#define WORK(x) \
	for (int k = 0; k < RT_CALIB_WORK; k++) \
		x = x * 0x2545f4914f6cdd1dull + 0x9e37u

__attribute__((noinline)) unsigned long calib_work(unsigned long x)
{
	WORK(x);
	return x;
}

#ifdef RT_CALIB_PATCHED
/* built without hooks, patched at run time: every function with a symbol
 * is patched, so the plain work is inlined into its timing loop */
static inline __attribute__((always_inline)) unsigned long calib_work_plain(unsigned long x)
#else
__attribute__((noinline, no_instrument_function)) unsigned long calib_work_plain(unsigned long x)
#endif
{
	WORK(x);
	return x;
}

/* mean ticks per call of the work without probes, clock reads ordered */
__attribute__((noinline, no_instrument_function)) unsigned long long calib_plain(void)
{
	unsigned long x = calib_sink;
	unsigned long long t0, t1;

	_mm_lfence();
	t0 = __rdtsc();
	_mm_lfence();
	for (int i = 0; i < RT_CALIB_PER; i++)
		x = calib_work_plain(x);
	_mm_lfence();
	t1 = __rdtsc();
	calib_sink = x;
	return (t1 - t0) / RT_CALIB_PER;
}

#define BATCH(n) \
	__attribute__((noinline)) void calib_batch_##n(void) \
	{ \
		unsigned long x = calib_sink; \
		for (int i = 0; i < RT_CALIB_PER; i++) \
			calib_leaf(); \
		for (int i = 0; i < RT_CALIB_PER; i++) \
			calib_one(); \
		for (int i = 0; i < RT_CALIB_PER; i++) \
			calib_two(); \
		for (int i = 0; i < RT_CALIB_PER; i++) \
			x = calib_work(x); \
		calib_sink = x; \
		stackclock_calib_plain[n + 0] = calib_plain(); \
	}
#define BATCH10(n) BATCH(n##0) BATCH(n##1) BATCH(n##2) BATCH(n##3) BATCH(n##4) \
	BATCH(n##5) BATCH(n##6) BATCH(n##7) BATCH(n##8) BATCH(n##9)
BATCH10()
BATCH10(1)
BATCH10(2)
BATCH10(3)
BATCH(40)

_Static_assert(RT_CALIB_BATCHES == 41, "one calib_batch_N per batch");

__attribute__((no_instrument_function)) int main(void)
{
	static void (*const batches[])(void) = {
#define B(n) calib_batch_##n,
#define B10(n) B(n##0) B(n##1) B(n##2) B(n##3) B(n##4) B(n##5) B(n##6) B(n##7) B(n##8) B(n##9)
		B10() B10(1) B10(2) B10(3) B(40)
	};

	for (unsigned i = 0; i < sizeof(batches) / sizeof(batches[0]); i++)
		batches[i]();
	return 0;
}
