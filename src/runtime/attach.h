/*
 * attach — instrumentation of a process already running (SPEC section 13):
 * the contract between the recorder (record/attach.c, which loads the
 * runtime into the process with ptrace: record/tracee.h) and the runtime
 * loaded so (runtime/attach.c).
 *
 * The runtime is loaded by dlopen() and its entry sc_rt_attach(CONFIG) is
 * called in one thread of the target.  CONFIG is the path of a file of
 * "NAME=VALUE" strings, each ended by a NUL: the environment a launched
 * program would have had (shm.h, patch.h), plus SC_ATTACH_ENV_CTL, the path
 * of a control file (struct sc_attach_ctl) both map.  The entry sets the
 * runtime up and starts its own thread, the watchdog, then returns 0 (or
 * -errno, with ctl->msg saying why).  From then on the two talk through
 * the control file:
 *
 *   recorder                              watchdog (in the target)
 *   stops every thread but the watchdog,
 *   moves them out of the entries to patch
 *   cmd = PATCH                    ->     applies the plans (patch.c), hooks
 *                                         a hooks build's GOT slots,
 *                                         state = PATCHED
 *   resumes the threads, lets them go (no ptrace while recording)
 *   ... --duration, Ctrl-C, or the target's end ...
 *   stops every thread but the watchdog,
 *   moves them out of ranges[] (stubs,
 *   the runtime's code)
 *   cmd = DETACH                   ->     every patched byte and GOT slot
 *                                         back, every return address the
 *                                         runtime replaced back in its slot,
 *                                         the threads' perf events closed,
 *                                         the runtime off; state = DETACHED,
 *                                         and the watchdog ends
 *   resumes the threads, releases them, writes the data file from the image
 *
 * The recorder gone (killed at any point: it holds an open file
 * description lock, F_OFD_SETLK, on the control file for its whole life,
 * and the watchdog tests for it every 10 ms; no pid is used, so the target
 * may be in a pid namespace the recorder's pid is not seen in): the watchdog restores the code with the threads running (a trap
 * first, the rest, then the first byte, as the kernel writes live text),
 * turns the probes off, leaves the trampolines in place (returns in flight
 * go through them), removes the image file nobody will read, and ends.
 */
#ifndef SC_RUNTIME_ATTACH_H
#define SC_RUNTIME_ATTACH_H

#include <stdint.h>

#define SC_ATTACH_ENTRY    "sc_rt_attach"
#define SC_ATTACH_ENV_CTL  "STACKCLOCK_ATTACH_CTL"   /* the control file's path */
#define SC_ATTACH_ENV_SEED "STACKCLOCK_ATTACH_SEED"  /* the frames open at PATCH */
#define SC_ATTACH_MAGIC    0x68747461u               /* "atth" */
#define SC_ATTACH_VERSION  3
#define SC_ATTACH_RANGES   64

enum sc_attach_cmd {
	SC_ATT_CMD_NONE,
	SC_ATT_CMD_PATCH,
	SC_ATT_CMD_DETACH,
};

enum sc_attach_state {
	SC_ATT_NONE,
	SC_ATT_LOADED,       /* set up, watchdog running, nothing patched */
	SC_ATT_PATCHED,
	SC_ATT_DETACHED,     /* all restored; the watchdog has ended */
	SC_ATT_ABANDONED,    /* the recorder went away: restored on our own */
	SC_ATT_FAILED,       /* msg says why */
};

struct sc_attach_ctl {
	uint32_t magic, version;
	uint32_t cmd;                  /* enum sc_attach_cmd, the recorder's */
	uint32_t state;                /* enum sc_attach_state, the runtime's */
	uint32_t watchdog_tid;
	uint32_t hooks;                /* 1: the program's own hooks (GOT) */
	/* what the runtime did, for the recorder's summary */
	uint64_t setup_ns, patch_ns, restore_ns;
	uint64_t sites;                /* code sites written (entries, calls) */
	uint64_t sites_restored;
	uint64_t got_slots;            /* hooks build: GOT slots redirected */
	uint64_t frames_restored;      /* return addresses put back */
	uint64_t threads_seen;         /* threads with probes' state */
	uint64_t seed_threads, seed_frames;   /* open frames taken from the seed file */
	uint64_t seed_redirected;      /* of them, return addresses redirected */
	uint64_t seed_used;            /* threads that reached an event (set at DETACH) */
	/* where no thread may be stopped at DETACH: the stubs' regions and
	 * the runtime's own code (read once the state is PATCHED) */
	uint32_t nranges, pad;
	struct { uint64_t lo, hi; } ranges[SC_ATTACH_RANGES];
	char msg[256];
};

/*
 * The frames open at the attach (SPEC section 13: "their frames are open at
 * the start").  With every thread stopped for PATCH, the recorder unwinds
 * each one (CFI, from its registers and its stack) and writes, in the file
 * SC_ATTACH_ENV_SEED names, the instrumented frames it finds, outermost
 * first: the function, its call site (the return address into its caller),
 * its canonical frame address, and for a patched function the return
 * address's slot (CFA - 8), which the watchdog points at the return
 * trampoline once the plans are applied, so that its return is seen.  A
 * thread's frames are opened by the engine at the thread's first event
 * (counted from there, as frames open at the end close at the last one;
 * not new calls), its redirected returns pushed on its return stack first.
 * A thread with no event while attached leaves them unused: the detach
 * puts their slots back.
 *
 *   struct sc_attach_seed_hdr
 *   struct sc_attach_seed_thread[nthreads]
 *   struct sc_attach_seed_frame[nframes]     each thread's, outermost first
 */
#define SC_ATTACH_SEED_MAGIC 0x64656573u             /* "seed" */
#define SC_ATTACH_SEED_MAX   (1u << 20)              /* frames, all threads */

struct sc_attach_seed_hdr {
	uint32_t magic, nthreads;
	uint64_t nframes;
};

struct sc_attach_seed_thread {
	uint32_t tid, nframes;
	uint64_t first;                /* index of its outermost frame */
};

struct sc_attach_seed_frame {
	uint64_t fn, site, cfa;
	uint64_t slot;                 /* patched: the return address's slot; 0:
					  a hooks build's frame (its own exit hook) */
};

#endif
