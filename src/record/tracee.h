/*
 * tracee — the ptrace half of attaching to a running process (SPEC section
 * 13): every thread of one process held under PTRACE_SEIZE, stopped and
 * resumed together, moved out of address ranges, its memory read and
 * written, and a shared library loaded into it with one function called.
 *
 * Robustness is the design rule: the recorder may be killed (SIGKILL) at
 * any moment, and the target must go on with every thread's registers and
 * stack intact.  Two things give that:
 *  - the kernel detaches every tracee of a dying tracer and lets stopped
 *    threads run on (no PTRACE_O_EXITKILL, no breakpoint left in the code);
 *  - sc_tracee_call() never borrows a thread with "set the registers to
 *    dlopen, return to address 0, wait for the fault, restore": it writes a
 *    self-contained machine-code blob (in the unused tail of the last page
 *    of an r-x segment) and its data (on the chosen thread's stack, below
 *    the red zone); the blob saves every register (GPRs, rflags, errno, and
 *    the x87/SSE/AVX/AVX-512 state with XSAVE), calls dlopen, dlsym and the
 *    function, writes the outcome to a status file with raw system calls,
 *    restores everything and returns to the interrupted instruction with
 *    `ret $N` (one instruction pops the return address and gives back the
 *    stack).  PTRACE_SETREGS (rip = blob, rsp = its frame) is the tracer's
 *    last action that matters: from then on the thread finishes the call
 *    whether the tracer lives or not.
 *
 * Threads stopped inside a system call: the call prefers a thread that is
 * not in one (and whose instruction pointer is outside libc and the
 * dynamic loader, so it holds neither malloc's lock nor the loader's),
 * then one blocked in a restartable call.  For the latter the tracer does
 * what the kernel would have done on the way back to user space with no
 * signal handler (as gdb does for inferior calls): -ERESTARTSYS,
 * -ERESTARTNOINTR and -ERESTARTNOHAND put the system call number back in
 * rax, -ERESTART_RESTARTBLOCK puts __NR_restart_syscall there, the return
 * address is the `syscall` instruction (rip - 2), and orig_rax = -1 stops
 * the kernel from restarting at the blob's address.  The blob restores rax
 * and returns to the `syscall`, which runs again with its own arguments.
 * (A signal handler run by the blob's thread during the call resets the
 * restart block: a restarted nanosleep then returns EINTR, which a handler
 * run at that moment could have caused anyway.)
 *
 * While seized, a thread that gets a signal waits in a signal-delivery
 * stop until the tracer lets it go: every function here passes such
 * signals on, and a driver that holds the tracee for a long time without
 * calling any of them calls sc_tracee_pump() now and then.
 *
 * What stays in the target after sc_tracee_call(): the library (dlopen'ed,
 * never closed) and whatever its function made.  The blob's bytes are put
 * back, from the file, once the thread has left them (the page stays a
 * private copy of the file's page, with the file's bytes; a blob a killed
 * tracer left behind goes too); the status file and its directory are
 * removed (by the blob itself).  On a timeout the blob stays (a thread may
 * still run it).  Threads the function starts are not seized by the call
 * (the next sc_tracee_stop() seizes them unless listed in `except`).
 *
 * Limits: a process with user shadow stacks (CET) is refused (the blob's
 * `ret` has no matching call); the status file needs a writable /tmp,
 * /dev/shm or /var/tmp in the target's root, and a seccomp filter that
 * forbids openat turns a finished call into a timeout; a thread caught
 * while running a signal handler on a small sigaltstack could overflow it
 * (its stack mapping is checked for 256 KiB, not the altstack's own size).
 *
 * Ownership: sc_tracee_seize() returns a tracee that sc_tracee_release()
 * detaches and frees (NULL accepted).  Not thread-safe: ptrace requests
 * must come from the thread that seized (the kernel's rule), so one
 * thread of the recorder owns a tracee for its whole life.  The recorder
 * must not reap the target's threads elsewhere (waitpid(-1, ...)).
 */
#ifndef SC_TRACEE_H
#define SC_TRACEE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct sc_tracee;                       /* every thread of one process, under PTRACE_SEIZE */
struct sc_range { uint64_t lo, hi; };   /* [lo, hi) */

/* Seize every thread of pid (re-scan /proc/PID/task until no new thread
 * appears); the threads keep running.  On failure, a one-line message in
 * err naming the cause and the fix: no such process; not permitted (the
 * kernel.yama.ptrace_scope value and how to change it / another user's
 * process / already traced by PID); statically linked (no dynamic loader:
 * the runtime cannot be loaded); a zombie.  Returns 0 or -errno. */
int sc_tracee_seize(pid_t pid, struct sc_tracee **out, char *err, size_t errlen);

/* Stop every thread (PTRACE_INTERRUPT), seizing threads created since, and
 * wait until all are in a ptrace stop.  Threads listed in `except` (tids)
 * are left running (the runtime's own thread).  Signals that arrive while
 * stopping are delivered before the thread stops.  0 or -errno (a thread
 * that ended meanwhile is dropped, not an error). */
int sc_tracee_stop(struct sc_tracee *t, const pid_t *except, int nexcept);
/* Every stopped thread goes on (a group-stopped one stays in its job-control
 * stop).  0 or -errno. */
int sc_tracee_resume(struct sc_tracee *t);
/* Stop what runs, PTRACE_DETACH every thread (each goes on running, with
 * any signal held for it), free.  Accepts NULL. */
void sc_tracee_release(struct sc_tracee *t);
/* Pass on the signals that stopped running threads (signal-delivery stops),
 * without blocking; drops threads that ended.  Returns how many it passed. */
int sc_tracee_pump(struct sc_tracee *t);

/* A target in a pid namespace of its own sees other numbers for its
 * threads than the recorder does (the NSpid: line of /proc/PID/task/TID/
 * status: the recorder's first, the target's own last).  The target's
 * number for the recorder's tid, and the recorder's for the target's
 * (inner); either number itself when there is no namespace or the thread
 * is gone. */
pid_t sc_tracee_inner_tid(const struct sc_tracee *t, pid_t tid);
pid_t sc_tracee_outer_tid(const struct sc_tracee *t, pid_t inner);

int sc_tracee_nthreads(const struct sc_tracee *t);   /* threads held (ended ones dropped) */
pid_t sc_tracee_tid(const struct sc_tracee *t, int i);
pid_t sc_tracee_pid(const struct sc_tracee *t);
/* The registers the unwinder needs of thread i, which must be stopped: ip,
 * sp, bp, and in saved[5] (if not NULL) rbx, r12, r13, r14, r15, which
 * some CFA rules are defined from.  0, or -ESRCH (not stopped, or gone) or
 * -errno. */
int sc_tracee_regs(struct sc_tracee *t, int i, uint64_t *ip, uint64_t *sp, uint64_t *bp,
		   uint64_t *saved);

/* With all stopped: any thread whose instruction pointer is inside one of
 * the n ranges (sorted or not; sorted here, then binary search) is moved
 * out: by rounds of resume-all / sleep ~1 ms / stop-all (up to `rounds`),
 * then each thread still inside by itself, by up to 1000 nudges (resumed
 * and interrupted 10-200 us later), and only then by single steps (up to
 * 2 s): a killed tracer leaves a stepped thread's trap flag set (it would
 * die of SIGTRAP), from the step until the threads are resumed, so steps
 * are for a thread no nudge moves (a hot loop: interrupts land after its
 * slow instructions).  A signal that arrives meanwhile ends the steps and
 * is delivered at the resumption.  A thread blocked in a system call inside
 * a range stays.  Threads that were running on entry are left alone;
 * every other thread is stopped on return.  Returns the number of threads still inside (0 = success), or
 * -errno. */
int sc_tracee_step_out(struct sc_tracee *t, const struct sc_range *r, size_t n, int rounds);

/* Read/write the target's memory through /proc/PID/mem (writes reach
 * read-only text, as a private copy of the page: that is how the driver
 * writes the patched jumps with every thread stopped).  0 or -errno
 * (-EIO for an address not mapped). */
int sc_tracee_read(struct sc_tracee *t, uint64_t addr, void *buf, size_t len);
int sc_tracee_write(struct sc_tracee *t, uint64_t addr, const void *buf, size_t len);

/* Load the shared library `lib` into the process (dlopen(lib, RTLD_NOW) as
 * found in the target's libc.so.6: glibc >= 2.34), look up `sym` with dlsym
 * and call `int sym(const char *arg)` in one thread (see above for which),
 * while the other threads keep running (so a lock they hold, e.g. malloc's,
 * is released).  The threads may be stopped or running on entry; they all
 * run on return.  Waits up to timeout_ms for the call to finish; *ret gets
 * its value.  `lib` is opened by the target, so a relative path is
 * relative to the target's working directory: pass an absolute one.
 * err: one line (dlopen's own dlerror() text when dlopen fails, "no dlopen
 * in the target's libc", a timeout, ...).  0, or -errno (-ETIMEDOUT: the
 * call did not finish in time and may still finish; -ENOENT: dlopen or
 * dlsym failed). */
int sc_tracee_call(struct sc_tracee *t, const char *lib, const char *sym, const char *arg,
		   int timeout_ms, int *ret, char *err, size_t errlen);
/* The same in thread `tid` (0: choose as sc_tracee_call does). */
int sc_tracee_call_in(struct sc_tracee *t, pid_t tid, const char *lib, const char *sym,
		      const char *arg, int timeout_ms, int *ret, char *err, size_t errlen);

#endif
