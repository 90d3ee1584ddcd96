/*
 * stackclock-calib — the program the probes' cost is measured on (see
 * src/runtime/calib.h).  Built with -finstrument-functions like a target,
 * its functions live in an executable of their own, as a target's do, and
 * call the hooks through its PLT.  `record -m instrument` runs it with the
 * runtime in calibration mode, which reads the tree below.
 *
 * Shape (the runtime relies on it): main, not instrumented, calls the
 * batches batch_0 .. batch_40 in order; each calls leaf() RT_CALIB_PER
 * times, then one() (which calls leaf() once), then two() (twice), so the
 * root's children are the batches and each batch's children, by creation,
 * are leaf, one, two.
 */
#include "runtime/calib.h"

__attribute__((noinline)) void calib_leaf(void)
{
	__asm__ volatile("");
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

#define BATCH(n) \
	__attribute__((noinline)) void calib_batch_##n(void) \
	{ \
		for (int i = 0; i < RT_CALIB_PER; i++) \
			calib_leaf(); \
		for (int i = 0; i < RT_CALIB_PER; i++) \
			calib_one(); \
		for (int i = 0; i < RT_CALIB_PER; i++) \
			calib_two(); \
	}
#define BATCH10(n) BATCH(n##0) BATCH(n##1) BATCH(n##2) BATCH(n##3) BATCH(n##4) \
	BATCH(n##5) BATCH(n##6) BATCH(n##7) BATCH(n##8) BATCH(n##9)
BATCH10()
BATCH10(1)
BATCH10(2)
BATCH10(3)
BATCH(40)

_Static_assert(RT_CALIB_BATCHES == 41, "one calib_batch_N per batch");

int main(void)
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
