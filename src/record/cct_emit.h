/*
 * cct_emit — write one engine thread (src/runtime/engine.h) as data-file
 * records: SC_REC_CCT_NODE for every node (root first, id 0), one
 * SC_REC_CALLSITE per (call site, callee), then SC_REC_THREAD_STATS.
 *
 * Used by the recorder on a target's shared memory (after the target has
 * ended or been killed) and by the unit tests on a heap arena.  The arena is
 * untrusted: every offset, index and count is checked against its size, and
 * a damaged structure ends the thread's records early (-EINVAL) instead of
 * being followed; never a crash.  Process-local pointers stored in the
 * arena are only subtracted from each other, never dereferenced.
 *
 * Times: the engine counts ticks; conv turns a duration of d ticks into
 * d * ns_per_tick nanoseconds, and a tick timestamp T into
 * ns0 + (T - tick0) * ns_per_tick (CLOCK_MONOTONIC).  Tests use
 * SC_TICK_CONV_IDENTITY (ticks are nanoseconds).
 *
 * Not thread-safe; the arena must not change while it is read.
 */
#ifndef SC_RECORD_CCT_EMIT_H
#define SC_RECORD_CCT_EMIT_H

#include <stdint.h>

struct sc_writer;

struct sc_tick_conv {
	uint64_t tick0;
	uint64_t ns0;
	double ns_per_tick;
};
#define SC_TICK_CONV_IDENTITY ((struct sc_tick_conv){ 0, 0, 1.0 })

/* What one thread added up to (ticks converted), for the session summary. */
struct sc_cct_totals {
	uint64_t calls;           /* entries recorded */
	uint64_t nodes;
	uint64_t callsites;
	uint64_t events;
	uint64_t lost_events;
	uint64_t repairs;
	uint64_t open_frames;
	uint64_t os_count[3];
	uint64_t os_lost;         /* OS-event records the kernel dropped */
	uint64_t first_ns, last_ns;
	uint64_t samples;         /* CPU-clock samples (SPEC 14), all */
	uint64_t probe_samples;   /* of those, in the probes' code */
	uint64_t repair_by[4];    /* repairs by SC_REPAIR_* cause, the first four */
	uint64_t tl_bytes;                  /* timeline kept (the runtime's coding) */
	uint64_t tl_dropped, tl_filtered;   /* and left out */
};

/*
 * Emit the thread whose struct sc_eng_thread is at thread_off in the arena
 * [arena, arena + arena_len).  Records carry proc_id and the thread's tid.
 * The nodes' sampled counts follow the nodes (SC_REC_CCT_SAMPLES); the
 * caller writes SC_REC_THREAD_MORE from tot, knowing how the image ended.
 * If tot is not NULL it is filled in.  Returns 0, -EINVAL if the thread's
 * state is damaged (records written so far stay), or the writer's -errno.
 */
int sc_cct_emit_thread(struct sc_writer *w, const void *arena, uint64_t arena_len,
		       uint64_t thread_off, uint32_t proc_id,
		       const struct sc_tick_conv *conv, struct sc_cct_totals *tot);
/* The same, the timeline's chunks read from fd (the arena's file, arena at
 * its offset 0) instead of the mapping when fd >= 0 and the read succeeds. */
int sc_cct_emit_thread_fd(struct sc_writer *w, const void *arena, uint64_t arena_len, int fd,
			  uint64_t thread_off, uint32_t proc_id,
			  const struct sc_tick_conv *conv, struct sc_cct_totals *tot);

/*
 * Offsets of the arena's threads, oldest first, into offs (at most max).
 * Returns how many there are (may exceed max), or -EINVAL on a damaged list.
 */
int sc_cct_threads(const void *arena, uint64_t arena_len, uint64_t *offs, int max);

#endif
