/*
 * calib — what the probes cost, measured on the machine that will run them
 * (SPEC section 10).
 *
 * `stackclock record -m instrument` first runs the calibration program,
 * stackclock-calib (calib/prog.c: built with -finstrument-functions like a
 * target, installed next to the runtime), with the runtime preloaded in
 * calibration mode: STACKCLOCK_CALIBRATE=FD.  The runtime then records the
 * program's one thread on an engine thread of its own, taking one tick out
 * of every interval (so that the probes run the code they run when they
 * take a cost out), and at exit writes one line to descriptor FD:
 *
 *	"EE EX XE XX EXW BATCHES\n" ticks per interval between two events of
 *	                            the kinds named (E enter, X exit); EXW:
 *	                            between the enter and the exit of a
 *	                            function with work; BATCHES measured
 *
 * The recorder hands those to the target (STACKCLOCK_COST, shm.h) and
 * stores them in the data file; the engine takes them out of every
 * interval (engine.h, sc_eng_now).
 *
 * Each value is the median over batches of a batch's mean interval: the
 * empty leaf's one interval (EX); a function calling it once (EE + XX, split
 * evenly: both are charged to the caller); one calling it twice (the
 * difference is XE).
 *
 * EXW: part of the probes' work runs beside the function's own (the exit
 * probe's call and jumps before its ordered clock read, and the end of the
 * entry probe after its read are independent of the function's
 * instructions), so a function that computes for longer than that part
 * shows less of the probes' cost than an empty one.  EXW is that cost: a
 * leaf doing RT_CALIB_WORK dependent multiplies, less the same work timed
 * without probes in the same batch.  The engine takes EX out of a function
 * interval no longer than EX, EXW out of one longer than 2 EX - EXW, and
 * in between an amount falling from EX to EXW as the interval grows.
 */
#ifndef SC_RUNTIME_CALIB_H
#define SC_RUNTIME_CALIB_H

#include <stdint.h>

#include "runtime/engine.h"

#define RT_CALIB_ENV      "STACKCLOCK_CALIBRATE"
#define RT_CALIB_PROG     "stackclock-calib"
#define RT_CALIB_PROG_PATCH "stackclock-calib-patch"  /* built without hooks: patched */
#define RT_CALIB_BATCHES  41
#define RT_CALIB_PER      200         /* calls of each function per batch */
#define RT_CALIB_WORK     48          /* multiplies of the work leaf */
#define RT_CALIB_PLAIN    "stackclock_calib_plain"   /* the program's ticks per plain work */

struct rt_calib {
	uint64_t cost[2][2];              /* ticks, [first event exit?][second exit?] */
	uint64_t ex_work;                 /* EXW, ticks */
	unsigned batches;
};

/*
 * The costs from t, the engine thread that recorded the calibration
 * program (calib/prog.c: the root's children are its batches), and
 * plain[RT_CALIB_BATCHES], the program's ticks per call of the work
 * without probes, by batch.  0, or -1 if the tree does not have the
 * program's shape.
 */
int rt_calib_from_tree(struct sc_eng_thread *t, const unsigned long long *plain, struct rt_calib *out);

#endif
