/*
 * floor — the cheapest useful instrumentation runtime, for comparison only
 * (bench/instrument.sh): each hook stores {rdtsc, function} (16 bytes) into
 * a thread-local array, used as a ring so memory stays bounded.  It keeps no
 * stack, no statistics and writes nothing: any real recorder costs at least
 * this much per call.
 *
 *	cc -O2 -fPIC -shared -o floor.so bench/floor.c
 *	LD_PRELOAD=./floor.so ./prog
 *
 * With -DFLOOR_ORDERED the exit hook reads the clock after an lfence, as
 * stackclock's does (so that a function's last instructions are inside
 * its interval): the floor of a recorder whose times are in program order.
 */
#include <stdint.h>
#include <x86intrin.h>

#define FLOOR_EVENTS (1u << 16)          /* 1 MiB per thread */

struct floor_event {
	uint64_t tsc;
	void *fn;
};

static __thread struct floor_event floor_buf[FLOOR_EVENTS] __attribute__((tls_model("initial-exec")));
static __thread uint32_t floor_pos __attribute__((tls_model("initial-exec")));

static inline void floor_store(void *fn, int is_exit)
{
	struct floor_event *e = &floor_buf[floor_pos++ & (FLOOR_EVENTS - 1)];

#ifdef FLOOR_ORDERED
	if (is_exit)
		_mm_lfence();
#else
	(void)is_exit;
#endif
	e->tsc = __rdtsc();
	e->fn = fn;
	/* nothing reads the array: without this the compiler drops the stores */
	__asm__ volatile("" : : "r"(e) : "memory");
}

__attribute__((visibility("default"))) void __cyg_profile_func_enter(void *fn, void *site)
{
	(void)site;
	floor_store(fn, 0);
}

__attribute__((visibility("default"))) void __cyg_profile_func_exit(void *fn, void *site)
{
	(void)site;
	floor_store(fn, 1);
}
