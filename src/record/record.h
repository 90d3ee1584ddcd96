/*
 * record — running a target and writing its profile to a data file.
 *
 * cmd/record.c parses the command line into struct record_opts and calls
 * one of the method drivers below; each driver owns the whole recording:
 * it starts (or attaches to) the target, collects, and writes the data file
 * through format/scdata.h.  Drivers print one-line errors with pr_err() and
 * return a non-zero status; they never exit().
 *
 * Launching is shared (launch.c): the child is forked and held before
 * exec so a driver can set up perf events or shared memory first; the
 * recorder becomes a child subreaper so it waits for every descendant
 * (forked children outliving the target included).
 */
#ifndef SC_RECORD_H
#define SC_RECORD_H

#include <stdbool.h>
#include <signal.h>
#include <stdint.h>
#include <sys/types.h>

struct record_opts {
	int method;               /* enum sc_method */
	unsigned frequency_hz;    /* -F, default 999 */
	const char *output;       /* -o, default "stackclock.data" */
	unsigned os_events;       /* --os-events mask (SC_OS_BIT), default all */
	bool kernel;              /* --kernel: kernel frames in samples */
	pid_t attach_pid;         /* -p, 0 if launching */
	double duration_s;        /* --duration, 0 = until target ends / ^C */
	const char *patch;        /* --patch LIST (instrument), or NULL */
	const char *libcalls;     /* --libcalls: "program" (default), "all", "none" */
	/* --timeline (SPEC section 12): keep every event in order */
	bool timeline;
	uint64_t tl_size;         /* bytes of coded events kept per process
	                             image (instrument) or in all (sample) */
	uint64_t tl_min_ns;       /* --min-time: calls at least this long */
	unsigned tl_depth;        /* --depth: calls at depth < N, 0 = all */
	char *tl_only;            /* --only: function names, comma-separated */
	char **argv;              /* target command, NULL-terminated */
	int argc;
};

/*
 * The exit status of `record` (SPEC section 4): the target's own
 * (record_exit_status), or for a failure of its own the status timeout(1)
 * gives: stackclock failed (a bad option, a data file it cannot write),
 * the program cannot run, the program is not found.
 */
#define RECORD_EXIT_FAILED      125
#define RECORD_EXIT_CANNOT_RUN  126
#define RECORD_EXIT_NOT_FOUND   127

/* Drivers: return record's exit status, as above; the data file is written
 * whatever the target's own status. */
#define RECORD_TL_SIZE_DEFAULT (256ull << 20)   /* --timeline without =SIZE */

int record_instrument(const struct record_opts *opts);

/* record -m instrument -p PID (attach.c, SPEC section 13) */
struct record_attach_times {
	uint64_t attach_ns, patch_ns, detach_ns, restore_ns;
	uint64_t held_ns, detach_held_ns;   /* the threads stopped, at PATCH and DETACH */
	uint64_t sites, got_slots, sites_restored, frames_restored;
	/* the frames open at the attach (attach_seed.h): threads and frames
	 * given to the runtime, threads whose walk stopped short of the root,
	 * threads that reached an event (so whose frames were opened) */
	uint64_t seed_threads, seed_frames, seed_partial, seed_used;
	/* the window recorded: from the threads let go with their code
	 * patched to the moment they are stopped to be put back (or the
	 * process's end), CLOCK_REALTIME and CLOCK_MONOTONIC ns */
	uint64_t window_real_ns, window_mono_ns, window_ns;
	int target_ended;
};
struct launch_stop;
/* The program of process pid into out (a one-line error said: -1). */
int record_attach_exe(pid_t pid, char *out, size_t len);
/* Load the runtime into process opts->attach_pid with the environment env
 * (its image files under prefix), patch, record until --duration, a stop
 * signal (stop->count) or the process's end, and put everything back.
 * 0, or -errno with the reason said. */
int record_attach_run(const struct record_opts *opts, const char *runtime, const char *prefix,
		      char **env, int has_hooks, volatile struct launch_stop *stop,
		      struct record_attach_times *times);
int record_sample(const struct record_opts *opts);

/*
 * patchenv.c: the environment that has the runtime patch the program at
 * prog (named name on the command line) when it was built without hooks
 * (with_exe), and the libraries named by patch (--patch LIST, may be
 * NULL): *env_plan and *env_exe ("NAME=value", malloc'ed; NULL when there
 * is nothing to patch), and *env_names, the names and "all" of LIST for
 * libraries loaded later (runtime/patch.h), or NULL.  Returns 0, or -1 after a one-line error (a
 * static, setuid or non-x86-64 program, a library not found, a plan that
 * cannot be built).
 */
int record_patch_env(const char *prog, const char *name, bool with_exe, const char *patch,
		     char **env_plan, char **env_exe, char **env_names);

/*
 * The plan of a program exec'd under the recorded one, for the runtime
 * that asks (runtime/patch.h, SC_PATCH_PLAN_CMD): its path on stdout and
 * 0, or 1 and nothing when the program has hooks compiled in, cannot be
 * patched or cannot be planned.
 */
int record_plan_exe(const char *exe);

/* The same for a shared library loaded later that --patch names (or all):
 * 0 and its plan's path, or 1 (never patched, not x86-64 ELF, no plan). */
int record_plan_lib(const char *lib);

/* Where execvp would find prog: 0 and its path in out, or -errno. */
int record_find_program(const char *prog, char *out, size_t outlen);

/* Why the program at path cannot take the runtime (enum sc_exec_why of
 * format/execcheck.h; 0: it can), a script judged by its interpreter. */
int record_exec_why(const char *path);

/* Does the ELF file reference or define __cyg_profile_func_enter?  1 yes,
 * 0 no, -1 not an ELF file we can read (a script). */
int record_elf_has_hooks(const char *path);
/* The same for a reference only (its functions call the hooks; libc's
 * definition of them does not count). */
int record_elf_calls_hooks(const char *path);

/* ---- launch.c -------------------------------------------------------- */

struct launch {
	pid_t pid;                /* the forked child */
	int go_fd;                /* write end: releases the child to exec */
	int err_fd;               /* read end: exec's errno, or EOF on success */
};

/*
 * Fork a child that waits, then execvp(argv[0]) with the extra environment
 * assignments in env_extra ("NAME=value", NULL-terminated; may be NULL).
 * Makes the caller a child subreaper.  Returns 0 or -errno.
 */
int launch_prepare(struct launch *l, char **argv, char *const *env_extra);
/*
 * Release the child.  Returns 0 once it has exec'd, or -errno if exec
 * failed (then the child has exited and been reaped); prints nothing.
 */
int launch_go(struct launch *l);
/*
 * Give up on a prepared child instead of releasing it: it exits without
 * running the program, and is reaped.  For a set-up that failed after
 * launch_prepare().
 */
void launch_abort(struct launch *l);
/*
 * What the recorder's SIGINT/SIGTERM handler leaves for launch_wait_all():
 * how many such signals came, the last one, and whether it was sent to the
 * recorder alone (kill, SI_USER) rather than to its whole process group by
 * the terminal (Ctrl-C).
 */
struct launch_stop {
	volatile sig_atomic_t count;
	volatile sig_atomic_t sig;
	volatile sig_atomic_t to_us_only;
};
/*
 * Wait for the child and every descendant to end.  *status gets the wait
 * status of the first child.
 *
 * A first signal (stop->count 1) is forwarded to the target and to its
 * process group when the terminal did not already deliver it there; from
 * then on only processes still in the target's process group (or the
 * recorder's) are waited for: a daemon that left it keeps running and is no
 * longer waited for (*left counts such processes).  A second signal stops
 * the wait at once.  Returns 0 or -errno.
 */
int launch_wait_all(struct launch *l, int *status, struct launch_stop *stop, int *left);

/*
 * Explain a failed exec in one line ("no such program: ./x").  Returns
 * record's exit status for it: RECORD_EXIT_NOT_FOUND for ENOENT,
 * RECORD_EXIT_CANNOT_RUN otherwise.
 */
int launch_report_exec_error(const char *prog, int err);

/*
 * record's exit status for the target's wait status: its exit code, or
 * 128 + the signal that ended it; 0 when there is none (-1: attached, or
 * not reaped).
 */
int record_exit_status(int wait_status);

#endif
