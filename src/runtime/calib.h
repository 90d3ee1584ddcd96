/*
 * calib — what the probes cost, measured on the machine that will run them
 * (SPEC section 10).
 *
 * `stackclock record -m instrument` runs the runtime once in calibration
 * mode before the target: preloaded into /bin/true with
 * STACKCLOCK_CALIBRATE=FD, its constructor calls functions instrumented by
 * hand (the calls -finstrument-functions makes, through the exported hooks,
 * as a program's calls go) on an engine thread of its own, and writes one
 * line to descriptor FD:
 *
 *	"EE EX XE XX BATCHES\n"     ticks per interval between two events of
 *	                            the kinds named (E enter, X exit); BATCHES
 *	                            measured
 *
 * The recorder hands those to the target (STACKCLOCK_COST, shm.h) and
 * stores them in the data file; the engine takes them out of every
 * interval (engine.h, sc_eng_now).
 *
 * Each value is the median over batches of a batch's mean interval: the
 * empty leaf's one interval (EX); a function calling it once (EE + XX, split
 * evenly: both are charged to the caller); one calling it twice (the
 * difference is XE).
 */
#ifndef SC_RUNTIME_CALIB_H
#define SC_RUNTIME_CALIB_H

#include <stdint.h>

#include "runtime/engine.h"

#define RT_CALIB_ENV      "STACKCLOCK_CALIBRATE"
#define RT_CALIB_BATCHES  41
#define RT_CALIB_PER      200         /* calls of each function per batch */

struct rt_calib {
	uint64_t cost[2][2];              /* ticks, [first event exit?][second exit?] */
	unsigned batches;
};

/*
 * Measure with t, the calling thread's engine state, which the hooks now
 * deliver this thread's events to (fresh: no other node), its cost set to
 * one tick per interval so that the probes run the code they run when
 * taking a cost out.  0, or
 * -1 if the nodes were not where they should be.
 */
int rt_calib_measure(struct sc_eng_thread *t, struct rt_calib *out);

#endif
