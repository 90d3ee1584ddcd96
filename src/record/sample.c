/*
 * sample — the sampling method's driver: `stackclock record [-F HZ] -- PROG`
 * and `stackclock record -p PID [--duration S]`.
 *
 * The recorder sets perf events on the target (sample_perf.c), then drains
 * their rings while the target runs, unwinding each sample as it arrives
 * (sample_model.c) — on a machine with a spare core this costs the target
 * nothing but the kernel's sampling itself, keeps only deduplicated stacks,
 * and leaves nothing to post-process at the end.  The data file is
 * rewritten every few seconds (so a recorder killed by SIGKILL leaves the
 * last checkpoint) and at the end.
 *
 * Launch: the child is held before exec while the events are opened on its
 * pid with enable_on_exec, so sampling starts at the first instruction of
 * the program.  The recorder then waits for every descendant (it is their
 * subreaper).  Ctrl-C reaches the target through the terminal; a SIGINT,
 * SIGTERM or SIGHUP sent to the recorder alone is forwarded to the target.
 *
 * Attach: events on every thread of the process (inherit, so threads and
 * children made later follow), its existing mappings from /proc/PID/maps;
 * stops at --duration, SIGINT/SIGTERM, or when the process ends.  The
 * target is never signalled.
 *
 * STACKCLOCK_STACK_SIZE (bytes) overrides the user-stack copy per sample
 * (default 32 KiB), for tests of truncation and for measurements.
 */
#include "record/sample_int.h"
#include "format/execcheck.h"
#include "format/scdata.h"
#include "unwind/unwind.h"
#include "util/util.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define POLL_MS          50
#define CHECKPOINT_NS    2000000000ULL
/* Records older than this are surely committed to their ring (see
 * sample_perf.c); newer ones wait for the next round. */
#define SETTLE_NS        2000000ULL
#define MAX_POLL_FDS     64

struct sampler {
	const struct record_opts *o;
	struct smp_perf perf;
	struct smp_model *model;
	struct smp_session_info si;
	int sigfd;
	sigset_t oldmask;
	uint64_t t0;
	uint64_t last_write;
	char **cmdline;           /* attach: the target's argv (owned) */
};

static unsigned stack_size_from_env(void)
{
	const char *s = getenv("STACKCLOCK_STACK_SIZE");
	char *end;
	unsigned long v;

	if (!s || !*s)
		return SMP_STACK_DEFAULT;
	v = strtoul(s, &end, 0);
	if (*end || v < 256 || v > SMP_STACK_MAX) {
		pr_warn("ignoring STACKCLOCK_STACK_SIZE=%s (expected 256..%u bytes)", s, SMP_STACK_MAX);
		return SMP_STACK_DEFAULT;
	}
	return (unsigned)(v & ~7UL);
}

static uint64_t realtime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* SIGINT & co. arrive on a signalfd polled with the rings; reports its own failure. */
static int block_signals(struct sampler *s)
{
	sigset_t set;
	int e = 0;

	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGCHLD);
	if (sigprocmask(SIG_BLOCK, &set, &s->oldmask) < 0) {
		e = -errno;
	} else {
		s->sigfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
		if (s->sigfd < 0) {
			e = -errno;
			sigprocmask(SIG_SETMASK, &s->oldmask, NULL);
		}
	}
	if (e)
		pr_err("cannot set up signal handling (signalfd): %s; raise 'ulimit -n' or free memory, then retry",
		       strerror(-e));
	return e;
}

static void unblock_signals(struct sampler *s)
{
	if (s->sigfd >= 0) {
		close(s->sigfd);
		s->sigfd = -1;
		sigprocmask(SIG_SETMASK, &s->oldmask, NULL);
	}
}

/* Poll the rings and the extra fds; returns the revents of extra[i]. */
static void wait_round(struct sampler *s, struct pollfd *extra, int nextra, int timeout_ms)
{
	struct pollfd pfd[MAX_POLL_FDS];
	int fds[MAX_POLL_FDS];
	int n = smp_perf_pollfds(&s->perf, fds, MAX_POLL_FDS - nextra);

	for (int i = 0; i < n; i++)
		pfd[i] = (struct pollfd){ .fd = fds[i], .events = POLLIN };
	for (int i = 0; i < nextra; i++)
		pfd[n + i] = (struct pollfd){ .fd = extra[i].fd, .events = POLLIN };
	if (poll(pfd, (nfds_t)(n + nextra), timeout_ms) < 0 && errno != EINTR)
		return;
	for (int i = 0; i < nextra; i++)
		extra[i].revents = pfd[n + i].revents;
}

static void drain(struct sampler *s, bool all)
{
	uint64_t limit = all ? UINT64_MAX : now_ns() - SETTLE_NS;

	smp_perf_drain(&s->perf, limit, smp_model_record, s->model);
}

static int write_file(struct sampler *s)
{
	int ret = smp_model_write(s->model, s->o->output, &s->si);

	s->last_write = now_ns();
	if (ret)
		pr_err("cannot write the data file '%s': %s (check free space and permissions, or choose another with -o FILE)",
		       s->o->output, outfile_strerror(ret));
	return ret;
}

static void checkpoint(struct sampler *s)
{
	uint64_t now = now_ns();

	if (now - s->last_write >= CHECKPOINT_NS && smp_model_dirty(s->model)) {
		s->si.duration_ns = now - s->t0;
		write_file(s);
	}
}

static bool duration_over(const struct sampler *s)
{
	return s->o->duration_s > 0 &&
	       (double)(now_ns() - s->t0) >= s->o->duration_s * 1e9;
}

static int poll_timeout(const struct sampler *s)
{
	if (s->o->duration_s > 0) {
		double left_ms = s->o->duration_s * 1e3 - (double)(now_ns() - s->t0) / 1e6;
		if (left_ms < POLL_MS)
			return left_ms > 0 ? (int)left_ms + 1 : 0;
	}
	return POLL_MS;
}

/*
 * Few samples for the time the recording took: the program mostly waited
 * (sleep, I/O, locks, a busy CPU), which sampling does not see.  Said once,
 * for a recording of at least SPARSE_MIN_S seconds (a shorter one is
 * mostly start-up) with under a tenth of the samples a program on a CPU
 * all along would give.  Without --kernel only user mode is sampled: a
 * launched program that spent much of the time in the kernel (writing a
 * file, faulting pages in) was busy, not waiting, and the note says that
 * instead (its processes' system time, from their rusage: we reaped them).
 */
#define SPARSE_MIN_S 0.5

static void note_off_cpu(const struct sampler *s, uint64_t samples)
{
	double secs = (double)s->si.duration_ns / 1e9;
	double expected = secs * s->o->frequency_hz;
	struct rusage ru;

	if (secs < SPARSE_MIN_S || (double)samples >= expected / 10)
		return;
	if (!s->o->attach_pid && !getrusage(RUSAGE_CHILDREN, &ru)) {
		double user = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6;

		/* busy in user mode, yet not sampled: a process's events end
		 * at an exec that changes its credentials (the set-ID check
		 * before the launch covers the program itself, not what it runs) */
		if (user >= SPARSE_MIN_S / 2 && (double)samples < user * s->o->frequency_hz / 10) {
			fprintf(stderr, "stackclock: note: %llu samples in %.2f s at %u Hz, though the processes ran "
				"%.2f s in user mode: the kernel ends a process's perf events at an exec that "
				"changes its credentials (a set-user-ID or set-group-ID program it ran, which "
				"sampling cannot follow)\n",
				(unsigned long long)samples, secs, s->o->frequency_hz, user);
			return;
		}
	}
	if (!s->o->kernel && !s->o->attach_pid && !getrusage(RUSAGE_CHILDREN, &ru)) {
		double sys = (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;

		if (sys >= secs / 10) {
			fprintf(stderr, "stackclock: note: %llu samples in %.2f s at %u Hz, in user mode; "
				"the program also ran %.2f s in the kernel (system calls, page faults), "
				"which sampling leaves out without --kernel\n",
				(unsigned long long)samples, secs, s->o->frequency_hz, sys);
			return;
		}
	}
	fprintf(stderr, "stackclock: note: %llu samples in %.2f s at %u Hz: the program was on a CPU%s "
		"about %.0f%% of the time; sampling counts time on a CPU (cpu-clock), not time spent "
		"waiting (sleep, I/O, locks, a busy CPU): for that, record with -m instrument\n",
		(unsigned long long)samples, secs, s->o->frequency_hz, s->o->kernel ? "" : " in user mode",
		100.0 * (double)samples / expected);
}

static void print_summary(struct sampler *s)
{
	struct smp_stats st;
	struct stat sb;

	smp_model_stats(s->model, &st);
	fprintf(stderr, "stackclock: %llu samples, %.1f%% of stacks reach the root",
		(unsigned long long)st.samples,
		st.samples ? 100.0 * (double)st.root / (double)st.samples : 0.0);
	if (st.truncated)
		fprintf(stderr, ", %llu truncated", (unsigned long long)st.truncated);
	if (st.lost)
		fprintf(stderr, ", %llu LOST", (unsigned long long)st.lost);
	if (!stat(s->o->output, &sb))
		fprintf(stderr, "; %s (%lld KB)\n", s->o->output, (long long)(sb.st_size + 1023) / 1024);
	else
		fprintf(stderr, "; %s\n", s->o->output);
	if (s->o->timeline) {
		fprintf(stderr, "stackclock: timeline: %llu samples in order (%.1f bytes each)",
			(unsigned long long)st.tl_items,
			st.tl_items ? (double)st.tl_bytes / (double)st.tl_items : 0.0);
		if (st.tl_dropped)
			fprintf(stderr, ", %llu DROPPED: the --timeline size was reached "
				"(raise it with --timeline=SIZE)", (unsigned long long)st.tl_dropped);
		fputc('\n', stderr);
	}
	note_off_cpu(s, st.samples);
	if (getenv("STACKCLOCK_DEBUG")) {
		for (unsigned i = 0; i < UNW_STOP_NREASONS; i++)
			if (st.stops[i])
				pr_debug("unwind stop %-16s %llu", unw_stop_name(i),
					 (unsigned long long)st.stops[i]);
		if (st.stack_fault_ins)
			pr_debug("%llu stack copies stopped at a page not present: read in",
				 (unsigned long long)st.stack_fault_ins);
		pr_debug("%llu distinct stacks, %llu processes, %llu threads, unwinding %.1f ms",
			 (unsigned long long)st.stacks, (unsigned long long)st.processes,
			 (unsigned long long)st.threads, (double)st.unwind_ns / 1e6);
		{
			struct rusage ru;
			getrusage(RUSAGE_SELF, &ru);
			pr_debug("recorder cpu: %.1f ms user, %.1f ms sys",
				 ru.ru_utime.tv_sec * 1e3 + ru.ru_utime.tv_usec / 1e3,
				 ru.ru_stime.tv_sec * 1e3 + ru.ru_stime.tv_usec / 1e3);
		}
		pr_debug("%llu CFI tables: %llu FDEs, %llu rows met, %llu KB, in %.1f ms",
			 (unsigned long long)st.tables, (unsigned long long)st.table_fdes,
			 (unsigned long long)st.table_rows,
			 (unsigned long long)st.table_bytes / 1024, (double)st.table_ns / 1e6);
	}
}

static void report_status(int status)
{
	if (status == -1)
		return;
	if (WIFEXITED(status) && WEXITSTATUS(status))
		pr_warn("the program exited with status %d", WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		pr_warn("the program was killed by signal %d (%s)", WTERMSIG(status),
			strsignal(WTERMSIG(status)));
}

/* The events fell back to user frames: the samples and session follow. */
static void follow_kernel_fallback(struct sampler *s)
{
	if (s->o->kernel && !s->perf.o.kernel) {
		smp_model_set_kernel(s->model, false);
		s->si.flags &= ~SC_SESS_KERNEL;
	}
}

/* ---- launch ---------------------------------------------------------- */

/* Reap what ended; true once no descendant is left. */
static bool reap(pid_t first, int *status)
{
	for (;;) {
		int st;
		pid_t p = waitpid(-1, &st, WNOHANG);

		if (p > 0) {
			if (p == first)
				*status = st;
			continue;
		}
		return p < 0 && errno == ECHILD;
	}
}

/* Signals: SIGCHLD wakes us; others are passed on to the target, unless the
 * terminal sent them to its whole process group (si_code SI_KERNEL). */
static void handle_signals(struct sampler *s, pid_t target, bool *stop)
{
	struct signalfd_siginfo si;

	while (read(s->sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		if (si.ssi_signo == SIGCHLD)
			continue;
		if (stop)
			*stop = true;
		if (target > 0 && si.ssi_code != SI_KERNEL)
			kill(target, (int)si.ssi_signo);
	}
}

static int run_launch(struct sampler *s)
{
	struct launch l;
	bool done = false, stopped = false;
	int ret;

	ret = launch_prepare(&l, s->o->argv, NULL);
	if (ret) {
		pr_err("cannot start '%s': %s (fork or pipe failed: free memory, raise 'ulimit -u' or 'ulimit -n', then retry)",
		       s->o->argv[0], strerror(-ret));
		return RECORD_EXIT_FAILED;
	}
	s->si.target_pid = l.pid;
	s->si.argv = s->o->argv;
	s->si.argc = s->o->argc;
	smp_model_add_launched(s->model, l.pid, now_ns());
	ret = smp_perf_open_task(&s->perf, l.pid);
	follow_kernel_fallback(s);
	if (ret)
		smp_perf_explain(ret, l.pid);
	else
		ret = block_signals(s);
	if (ret) {
		launch_abort(&l);            /* the held child leaves without exec */
		return RECORD_EXIT_FAILED;
	}
	s->t0 = s->last_write = now_ns();
	s->si.start_realtime_ns = realtime_ns();
	ret = launch_go(&l);
	if (ret) {
		ret = launch_report_exec_error(s->o->argv[0], -ret);
		unblock_signals(s);
		return ret;
	}
	while (!done) {
		struct pollfd sig = { .fd = s->sigfd };

		wait_round(s, &sig, 1, poll_timeout(s));
		handle_signals(s, l.pid, NULL);
		done = reap(l.pid, &s->si.exit_status);
		if (!done)
			drain(s, false);
		if (!stopped && duration_over(s)) {
			/* --duration with a program: stop sampling, then
			 * stop the program as Ctrl-C would, and wait. */
			stopped = true;
			smp_perf_disable(&s->perf);
			s->si.duration_ns = now_ns() - s->t0;
			kill(l.pid, SIGINT);
		}
		if (!done)
			checkpoint(s);
	}
	if (!stopped)
		s->si.duration_ns = now_ns() - s->t0;
	unblock_signals(s);
	return 0;
}

/* ---- attach ---------------------------------------------------------- */

static char **read_cmdline(pid_t pid, int *argc)
{
	char path[64], buf[8192];
	char **argv;
	size_t n = 0;
	int fd, c = 0;
	ssize_t r;

	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		while (n < sizeof(buf) - 1 && (r = read(fd, buf + n, sizeof(buf) - 1 - n)) > 0)
			n += (size_t)r;
		close(fd);
	}
	if (n && buf[n - 1] != 0)
		buf[n++] = 0;
	for (size_t i = 0; i < n; i++)
		c += !buf[i];
	argv = xcalloc((size_t)c + 1, sizeof(*argv));
	for (size_t i = 0, k = 0; i < n; k++) {
		argv[k] = xstrdup(buf + i);
		i += strlen(buf + i) + 1;
	}
	*argc = c;
	return argv;
}

struct tidset {
	pid_t *tids;
	size_t n, alloc;
};

static bool tidset_has(const struct tidset *t, pid_t tid)
{
	for (size_t i = 0; i < t->n; i++)
		if (t->tids[i] == tid)
			return true;
	return false;
}

/*
 * One event per CPU on every thread, until a pass over /proc/PID/task
 * finds no thread left out (threads made after a thread's events exist are
 * inherited anyway).
 */
static int open_threads(struct sampler *s, pid_t pid)
{
	struct tidset done = { 0 };
	char path[64];
	int ret = 0;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	for (int pass = 0; pass < 8; pass++) {
		DIR *d = opendir(path);
		struct dirent *de;
		bool added = false;

		if (!d) {
			ret = -ESRCH;
			break;
		}
		while ((de = readdir(d))) {
			pid_t tid;
			int r;

			if (!isdigit((unsigned char)de->d_name[0]))
				continue;
			tid = (pid_t)atoi(de->d_name);
			if (tidset_has(&done, tid))
				continue;
			r = smp_perf_open_task(&s->perf, tid);
			if (r == -ESRCH)
				continue;           /* that thread just ended */
			if (r) {
				ret = r;
				break;
			}
			ALLOC_GROW(done.tids, done.n + 1, done.alloc);
			done.tids[done.n++] = tid;
			added = true;
		}
		closedir(d);
		if (ret || !added)
			break;
	}
	if (!ret && !done.n)
		ret = -ESRCH;
	free(done.tids);
	return ret;
}

static int pidfd_open_compat(pid_t pid)
{
#ifdef SYS_pidfd_open
	return (int)syscall(SYS_pidfd_open, pid, 0);
#else
	errno = ENOSYS;
	return -1;
#endif
}

static int run_attach(struct sampler *s)
{
	pid_t pid = s->o->attach_pid;
	bool stop = false;
	char msg[256];
	int pidfd, ret;

	if (proc_exited_msg(pid, msg, sizeof(msg))) {
		pr_err("%s", msg);
		return RECORD_EXIT_FAILED;
	}
	if (kill(pid, 0) < 0) {
		if (errno == EPERM)
			pr_err("not permitted to profile PID %d (it belongs to another user): run as root or as its owner",
			       (int)pid);
		else
			pr_err("no process with PID %d", (int)pid);
		return RECORD_EXIT_FAILED;
	}
	ret = open_threads(s, pid);
	follow_kernel_fallback(s);
	if (ret) {
		smp_perf_explain(ret, pid);
		return RECORD_EXIT_FAILED;
	}
	pidfd = pidfd_open_compat(pid);
	s->cmdline = read_cmdline(pid, &s->si.argc);
	s->si.argv = s->cmdline;
	s->si.target_pid = pid;
	s->si.flags |= SC_SESS_ATTACHED;
	s->si.exit_status = -1;
	ret = block_signals(s);
	if (ret) {
		if (pidfd >= 0)
			close(pidfd);
		return RECORD_EXIT_FAILED;
	}
	s->t0 = s->last_write = now_ns();
	s->si.start_realtime_ns = realtime_ns();
	smp_perf_enable(&s->perf);
	/* After enabling: a mapping made meanwhile is in the rings too. */
	smp_model_add_existing(s->model, pid, s->t0);

	while (!stop) {
		struct pollfd extra[2] = { { .fd = s->sigfd }, { .fd = pidfd } };

		wait_round(s, extra, pidfd >= 0 ? 2 : 1, poll_timeout(s));
		handle_signals(s, 0, &stop);
		if (pidfd >= 0 ? (extra[1].revents & POLLIN) : kill(pid, 0) < 0)
			stop = true;                 /* the process ended */
		if (duration_over(s))
			stop = true;
		drain(s, false);
		if (!stop)
			checkpoint(s);
	}
	s->si.duration_ns = now_ns() - s->t0;
	smp_perf_disable(&s->perf);
	if (pidfd >= 0)
		close(pidfd);
	unblock_signals(s);
	return 0;
}

int record_sample(const struct record_opts *opts)
{
	struct sampler s = { .o = opts, .sigfd = -1 };
	struct smp_perf_opts po = {
		.frequency_hz = opts->frequency_hz,
		.stack_size = stack_size_from_env(),
		.kernel = opts->kernel,
		.enable_on_exec = !opts->attach_pid,
	};
	struct smp_model_opts mo = { .stack_size = po.stack_size, .kernel = opts->kernel,
				     .timeline_size = opts->timeline ? opts->tl_size : 0 };
	int ret;

	if (!opts->attach_pid) {
		char prog[PATH_MAX];
		int why = record_find_program(opts->argv[0], prog, sizeof(prog)) ? SC_EXEC_OK
										  : record_exec_why(prog);

		/* the kernel ends a process's perf events at an exec that
		 * changes its credentials (perf_event_exit_task): 0 samples */
		if (why == SC_EXEC_SETID) {
			pr_err("'%s' cannot be sampled: it is %s and changes the credentials at its start, where "
			       "the kernel ends the perf events opened on it (run it as its owner, or without "
			       "the set-ID bit)", opts->argv[0], sc_exec_why_text(why));
			return RECORD_EXIT_FAILED;
		}
		if (why == SC_EXEC_ELF32)
			pr_warn("'%s' is a 32-bit program: each sample counts its leaf function only (stacks are "
				"unwound in x86-64 code only)", opts->argv[0]);
	}
	s.si.frequency_hz = opts->frequency_hz;
	s.si.flags = opts->kernel ? SC_SESS_KERNEL : 0;
	s.si.exit_status = -1;
	smp_perf_init(&s.perf, &po);
	s.model = smp_model_new(&mo);
	ret = opts->attach_pid ? run_attach(&s) : run_launch(&s);
	if (!ret) {
		drain(&s, true);
		ret = write_file(&s) ? RECORD_EXIT_FAILED : 0;
		if (!ret)
			print_summary(&s);
		report_status(s.si.exit_status);
		if (!ret)
			ret = record_exit_status(s.si.exit_status);
	}
	smp_perf_close(&s.perf);
	smp_model_free(s.model);
	if (s.cmdline) {
		for (char **a = s.cmdline; *a; a++)
			free(*a);
		free(s.cmdline);
	}
	return ret;
}
