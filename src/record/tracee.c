/*
 * tracee — every thread of one process under PTRACE_SEIZE, and a library
 * loaded into it by a self-contained blob (tracee.h has the contract and
 * why it is built this way).
 *
 * Thread states, as this file keeps them:
 *   TH_RUNNING   seized, not in a ptrace stop we asked for (it may sit in a
 *                signal-delivery stop nobody has seen yet: sc_tracee_pump);
 *   TH_STOPPED   in a ptrace stop (PTRACE_INTERRUPT's event stop, or a
 *                single step's); `sig` is a signal to pass on when resumed;
 *   TH_GROUPSTOP in a job-control stop (SIGSTOP and the like): resumed with
 *                PTRACE_LISTEN so it stays stopped until SIGCONT;
 *   TH_GONE      ended; dropped from the list at the next compaction.
 * No ptrace option is set: new threads are not auto-attached (that would
 * stop them at birth until the tracer looks), they are seized when the
 * tracer next stops everything; and PTRACE_O_EXITKILL is never set, so the
 * target outlives its tracer.
 */
#include "record/tracee.h"
#include "record/procmaps.h"
#include "util/util.h"

#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum { TH_RUNNING, TH_STOPPED, TH_GROUPSTOP, TH_GONE };

struct thread {
	pid_t tid;
	int state;
	int sig;        /* signal to deliver when it goes on (0: none) */
};

struct sc_tracee {
	pid_t pid;
	int memfd;
	struct thread *th;
	int n, cap;
	/* the last sc_tracee_stop()'s threads left running (perhaps never
	 * seized: the runtime's own): sc_tracee_step_out() leaves them too */
	pid_t *kept;
	int nkept;
};

#define ERR(...) do { if (err && errlen) snprintf(err, errlen, __VA_ARGS__); } while (0)

/* stops of every thread in which sc_tracee_call looks for one to run its
 * call (free of a pending signal), 1 ms of running apart */
#define CALL_PICK_TRIES 200

/* ---- small helpers ---- */

static void sleep_us(long us)
{
	struct timespec ts = { us / 1000000, (us % 1000000) * 1000 };
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static uint64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* The whole of a small /proc file, NUL-terminated; -errno on failure. */
static ssize_t read_small(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	size_t got = 0;
	while (got + 1 < size) {
		ssize_t r = read(fd, buf + got, size - 1 - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	close(fd);
	buf[got] = 0;
	return (ssize_t)got;
}

/* The first number after "Key:" in /proc/PID/status (-1 if absent). */
static long status_num(const char *status, const char *key)
{
	const char *p = strstr(status, key);
	if (!p)
		return -1;
	return strtol(p + strlen(key), NULL, 10);
}

/* The 4th number of "Uid:"/"Gid:" (the filesystem id), -1 if absent. */
static long status_fsid(const char *status, const char *key)
{
	const char *p = strstr(status, key);
	if (!p)
		return -1;
	p += strlen(key);
	long v = -1;
	for (int i = 0; i < 4; i++)
		v = strtol(p, (char **)&p, 10);
	return v;
}

/* A thread's state letter from /proc/PID/task/TID/stat, 0 if it is gone. */
static char thread_state(pid_t pid, pid_t tid)
{
	char path[64], buf[512];
	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", pid, tid);
	if (read_small(path, buf, sizeof(buf)) <= 0)
		return 0;
	char *p = strrchr(buf, ')');
	return p && p[1] == ' ' ? p[2] : 0;
}

/* Has the thread a signal pending of its own (SigPnd: a fault it
 * raised, or a tgkill), which it takes at its next instruction?  One it
 * blocks (SigBlk) waits on and does not count (a fault is never blocked:
 * the kernel unblocks it as it raises it). */
static bool sig_pending(pid_t pid, pid_t tid)
{
	char path[64], buf[4096];
	snprintf(path, sizeof(path), "/proc/%d/task/%d/status", pid, tid);
	if (read_small(path, buf, sizeof(buf)) <= 0)
		return false;
	const char *p = strstr(buf, "\nSigPnd:"), *b = strstr(buf, "\nSigBlk:");
	return p && (strtoull(p + 8, NULL, 16) & ~(b ? strtoull(b + 8, NULL, 16) : 0)) != 0;
}

/* ---- threads ---- */

static struct thread *find_thread(struct sc_tracee *t, pid_t tid)
{
	for (int i = 0; i < t->n; i++)
		if (t->th[i].tid == tid)
			return &t->th[i];
	return NULL;
}

static void compact(struct sc_tracee *t)
{
	int k = 0;
	for (int i = 0; i < t->n; i++)
		if (t->th[i].state != TH_GONE)
			t->th[k++] = t->th[i];
	t->n = k;
}

static bool listed(pid_t tid, const pid_t *except, int nexcept)
{
	for (int i = 0; i < nexcept; i++)
		if (except[i] == tid)
			return true;
	return false;
}

/* Seize tid (running on).  1 seized, 0 it was gone, -errno. */
static int seize_one(struct sc_tracee *t, pid_t tid)
{
	if (t->n == t->cap) {
		int cap = t->cap ? 2 * t->cap : 16;
		struct thread *th = realloc(t->th, (size_t)cap * sizeof(*th));
		if (!th)
			return -ENOMEM;
		t->th = th;
		t->cap = cap;
	}
	if (ptrace(PTRACE_SEIZE, tid, 0, 0) < 0)
		return errno == ESRCH ? 0 : -errno;
	t->th[t->n++] = (struct thread){ .tid = tid, .state = TH_RUNNING };
	return 1;
}

/* th ended (or is ending): reap it if it can be, so that a traced thread
 * that exited does not stay a zombie in the target until we detach. */
static void mark_gone(struct thread *th)
{
	int st;
	waitpid(th->tid, &st, __WALL | WNOHANG);
	th->state = TH_GONE;
}

enum stop_kind { K_NONE, K_EXIT, K_EVENT, K_GROUP, K_SIGNAL };

static enum stop_kind classify(int st, int *sig)
{
	*sig = 0;
	if (WIFEXITED(st) || WIFSIGNALED(st))
		return K_EXIT;
	if (!WIFSTOPPED(st))
		return K_NONE;
	int s = WSTOPSIG(st);
	if ((st >> 16) == PTRACE_EVENT_STOP) {
		if (s == SIGSTOP || s == SIGTSTP || s == SIGTTIN || s == SIGTTOU)
			return K_GROUP;
		return K_EVENT;
	}
	if ((st >> 16) != 0)
		return K_EVENT;   /* no option is set: not expected; a stop all the same */
	*sig = s;
	return K_SIGNAL;
}

/* Wait until th (interrupted) is in a ptrace stop.  Signals that stop it
 * first are passed on (the handler runs now) and the wait goes on for the
 * interrupt's stop, so no stray trap is left pending.  A thread that ends
 * is marked gone.  0 or -errno. */
static int wait_stop(struct sc_tracee *t, struct thread *th)
{
	uint64_t start = now_ms();
	long nap = 20;
	for (;;) {
		int st, sig;
		pid_t r = waitpid(th->tid, &st, __WALL | WNOHANG);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			th->state = TH_GONE;   /* ECHILD: not ours any more (it ended) */
			return 0;
		}
		if (r == 0) {
			char s = thread_state(t->pid, th->tid);
			if (s == 0 || s == 'Z' || s == 'X') {
				mark_gone(th);
				return 0;
			}
			if (now_ms() - start > 10000)
				return -ETIMEDOUT;   /* e.g. in uninterruptible sleep (D) */
			sleep_us(nap);
			if (nap < 1000)
				nap *= 2;
			continue;
		}
		switch (classify(st, &sig)) {
		case K_EXIT:
			th->state = TH_GONE;
			return 0;
		case K_EVENT:
			th->state = TH_STOPPED;
			return 0;
		case K_GROUP:
			th->state = TH_GROUPSTOP;
			return 0;
		case K_SIGNAL:
			if (ptrace(PTRACE_CONT, th->tid, 0, (long)sig) < 0 && errno == ESRCH) {
				mark_gone(th);
				return 0;
			}
			break;
		default:
			break;
		}
	}
}

int sc_tracee_pump(struct sc_tracee *t)
{
	int passed = 0;
	for (int i = 0; i < t->n; i++) {
		struct thread *th = &t->th[i];
		if (th->state != TH_RUNNING)
			continue;
		int st, sig;
		pid_t r = waitpid(th->tid, &st, __WALL | WNOHANG);
		if (r < 0 && errno == ECHILD) {
			th->state = TH_GONE;
			continue;
		}
		if (r <= 0)
			continue;
		switch (classify(st, &sig)) {
		case K_EXIT:
			th->state = TH_GONE;
			break;
		case K_SIGNAL:
			passed++;
			/* fall through */
		case K_EVENT:
			ptrace(PTRACE_CONT, th->tid, 0, (long)sig);
			break;
		case K_GROUP:
			ptrace(PTRACE_LISTEN, th->tid, 0, 0);
			break;
		default:
			break;
		}
	}
	compact(t);
	return passed;
}

/* One pass over /proc/PID/task: seize the threads not yet held (and not in
 * except); with stop, interrupt them and wait.  Returns how many were new
 * (>= 0) or -errno. */
static int scan_tasks(struct sc_tracee *t, bool stop, const pid_t *except, int nexcept)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/task", t->pid);
	DIR *d = opendir(path);
	if (!d)
		return -errno;
	int added = 0, rc = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		pid_t tid = (pid_t)atoi(e->d_name);
		if (tid <= 0 || find_thread(t, tid) || listed(tid, except, nexcept))
			continue;
		int r = seize_one(t, tid);
		if (r < 0) {
			rc = r;
			break;
		}
		if (r == 0)
			continue;
		added++;
		if (stop) {
			struct thread *th = &t->th[t->n - 1];
			if (ptrace(PTRACE_INTERRUPT, tid, 0, 0) < 0)
				mark_gone(th);
			else if ((rc = wait_stop(t, th)) < 0)
				break;
		}
	}
	closedir(d);
	compact(t);
	return rc < 0 ? rc : added;
}

/* ---- seize, stop, resume, release ---- */

/* The one line for EPERM, from what was found: the tracer already there
 * (tracer > 0, its name in comm), the target's and our uid, Yama's
 * ptrace_scope (-1: no Yama). */
static void eperm_message(pid_t pid, long tracer, const char *comm, long uid, long euid, long scope,
			  char *err, size_t errlen)
{
	if (tracer > 0)
		ERR("cannot attach to process %d: it is already traced by process %ld (%s); "
		    "detach that debugger or tracer first", pid, tracer, comm[0] ? comm : "?");
	else if (uid >= 0 && uid != euid && euid != 0)
		ERR("cannot attach to process %d: it belongs to another user (uid %ld, you are %ld); "
		    "run as that user or as root", pid, uid, euid);
	else if (scope == 1)
		ERR("cannot attach to process %d: kernel.yama.ptrace_scope is 1 (only a parent may trace); "
		    "run as root, or allow it with `sysctl kernel.yama.ptrace_scope=0`", pid);
	else if (scope == 2)
		ERR("cannot attach to process %d: kernel.yama.ptrace_scope is 2 (only CAP_SYS_PTRACE may trace); "
		    "run as root", pid);
	else if (scope == 3)
		ERR("cannot attach to process %d: kernel.yama.ptrace_scope is 3 (no tracing at all, "
		    "until the next reboot); reboot with it set lower", pid);
	else
		ERR("cannot attach to process %d: not permitted (a set-user-ID program, or a security module "
		    "refused); run as root", pid);
}

static void explain_eperm(pid_t pid, const char *status, char *err, size_t errlen)
{
	char buf[64], comm[64] = "";
	long tracer = status_num(status, "TracerPid:"), scope = -1;
	if (tracer > 0) {
		snprintf(buf, sizeof(buf), "/proc/%ld/comm", tracer);
		if (read_small(buf, comm, sizeof(comm)) > 0)
			comm[strcspn(comm, "\n")] = 0;
	}
	if (read_small("/proc/sys/kernel/yama/ptrace_scope", buf, sizeof(buf)) > 0)
		scope = strtol(buf, NULL, 10);
	eperm_message(pid, tracer, comm, status_num(status, "Uid:"), (long)geteuid(), scope, err, errlen);
}

int sc_tracee_seize(pid_t pid, struct sc_tracee **out, char *err, size_t errlen)
{
	char path[64], status[4096];
	*out = NULL;
	if (pid <= 0) {
		ERR("no such process %d: give the PID of a running process", pid);
		return -ESRCH;
	}
	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	if (read_small(path, status, sizeof(status)) <= 0 || status_num(status, "Tgid:") != pid) {
		ERR("no such process %d: check the PID (ps -e)", pid);
		return -ESRCH;
	}
	char exited[256];
	if (proc_exited_msg(pid, exited, sizeof(exited))) {
		ERR("%s", exited);
		return -ESRCH;
	}
	if (pid == getpid()) {
		ERR("process %d is stackclock itself: give the PID of another process", pid);
		return -EINVAL;
	}
	struct sc_tracee *t = calloc(1, sizeof(*t));
	if (!t) {
		ERR("out of memory");
		return -ENOMEM;
	}
	t->pid = pid;
	t->memfd = -1;
	int r = seize_one(t, pid);
	if (r <= 0) {
		free(t);
		if (r == 0) {
			ERR("no such process %d (it ended)", pid);
			return -ESRCH;
		}
		if (r == -EPERM)
			explain_eperm(pid, status, err, errlen);
		else
			ERR("cannot attach to process %d: %s", pid, strerror(-r));
		return r;
	}
	/* seized: /proc/PID/auxv and mem are readable now */
	uint64_t auxv[2 * 64];
	snprintf(path, sizeof(path), "/proc/%d/auxv", pid);
	ssize_t na = read_small(path, (char *)auxv, sizeof(auxv));
	bool dynamic = false;
	for (ssize_t i = 0; 2 * i + 1 < na / 8; i++)
		if (auxv[2 * i] == AT_BASE)
			dynamic = auxv[2 * i + 1] != 0;
	if (na > 0 && !dynamic) {
		ERR("process %d is statically linked (no dynamic loader): the runtime cannot be loaded "
		    "into it; use sampling (record -p %d without -m instrument)", pid, pid);
		sc_tracee_release(t);
		return -ENOEXEC;
	}
	snprintf(path, sizeof(path), "/proc/%d/mem", pid);
	t->memfd = open(path, O_RDWR | O_CLOEXEC);
	if (t->memfd < 0) {
		r = -errno;
		ERR("cannot open %s: %s", path, strerror(errno));
		sc_tracee_release(t);
		return r;
	}
	for (;;) {
		r = scan_tasks(t, false, NULL, 0);
		if (r < 0) {
			ERR("cannot attach to the threads of process %d: %s", pid, strerror(-r));
			sc_tracee_release(t);
			return r;
		}
		if (r == 0)
			break;
	}
	*out = t;
	return 0;
}

int sc_tracee_stop(struct sc_tracee *t, const pid_t *except, int nexcept)
{
	int rc = 0;

	if (except != t->kept) {
		pid_t *k = nexcept ? malloc((size_t)nexcept * sizeof(*k)) : NULL;

		if (nexcept && !k)
			return -ENOMEM;
		for (int i = 0; i < nexcept; i++)
			k[i] = except[i];
		free(t->kept);
		t->kept = k;
		t->nkept = nexcept;
	}
	for (int i = 0; i < t->n; i++) {
		struct thread *th = &t->th[i];
		if (th->state != TH_RUNNING || listed(th->tid, except, nexcept))
			continue;
		if (ptrace(PTRACE_INTERRUPT, th->tid, 0, 0) < 0)
			mark_gone(th);
	}
	for (int i = 0; i < t->n; i++) {
		struct thread *th = &t->th[i];
		if (th->state != TH_RUNNING || listed(th->tid, except, nexcept))
			continue;
		int r = wait_stop(t, th);
		if (r < 0 && !rc)
			rc = r;
	}
	compact(t);
	/* threads born since: seized and stopped, until a pass finds none
	 * (the held ones are stopped, so only new ones can add more) */
	for (int r; !rc && (r = scan_tasks(t, true, except, nexcept)) != 0;)
		if (r < 0)
			rc = r;
	return rc;
}

int sc_tracee_resume(struct sc_tracee *t)
{
	int rc = 0;
	for (int i = 0; i < t->n; i++) {
		struct thread *th = &t->th[i];
		long r = 0;
		if (th->state == TH_STOPPED)
			r = ptrace(PTRACE_CONT, th->tid, 0, (long)th->sig);
		else if (th->state == TH_GROUPSTOP)
			r = ptrace(PTRACE_LISTEN, th->tid, 0, 0);
		else
			continue;
		if (r < 0 && errno == ESRCH)
			mark_gone(th);
		else if (r < 0 && !rc)
			rc = -errno;
		else if (r == 0)
			th->state = TH_RUNNING, th->sig = 0;
	}
	compact(t);
	return rc;
}

void sc_tracee_release(struct sc_tracee *t)
{
	if (!t)
		return;
	/* PTRACE_DETACH needs a ptrace stop; no new thread is seized here */
	for (int i = 0; i < t->n; i++)
		if (t->th[i].state == TH_RUNNING && ptrace(PTRACE_INTERRUPT, t->th[i].tid, 0, 0) < 0)
			mark_gone(&t->th[i]);
	for (int i = 0; i < t->n; i++)
		if (t->th[i].state == TH_RUNNING)
			wait_stop(t, &t->th[i]);
	for (int i = 0; i < t->n; i++)
		if (t->th[i].state == TH_STOPPED || t->th[i].state == TH_GROUPSTOP)
			ptrace(PTRACE_DETACH, t->th[i].tid, 0, (long)t->th[i].sig);
	if (t->memfd >= 0)
		close(t->memfd);
	free(t->th);
	free(t->kept);
	free(t);
}

int sc_tracee_regs(struct sc_tracee *t, int i, uint64_t *ip, uint64_t *sp, uint64_t *bp,
		   uint64_t *saved)
{
	struct user_regs_struct g;

	if (i < 0 || i >= t->n || (t->th[i].state != TH_STOPPED && t->th[i].state != TH_GROUPSTOP))
		return -ESRCH;
	if (ptrace(PTRACE_GETREGS, t->th[i].tid, 0, &g) < 0)
		return -errno;
	*ip = g.rip;
	*sp = g.rsp;
	*bp = g.rbp;
	if (saved) {
		saved[0] = g.rbx;
		saved[1] = g.r12;
		saved[2] = g.r13;
		saved[3] = g.r14;
		saved[4] = g.r15;
	}
	return 0;
}

/* The last number of the NSpid: line of thread tid, or 0. */
static pid_t nspid_inner(pid_t pid, pid_t tid)
{
	char path[64], buf[4096];
	snprintf(path, sizeof(path), "/proc/%d/task/%d/status", pid, tid);
	if (read_small(path, buf, sizeof(buf)) <= 0)
		return 0;
	const char *p = strstr(buf, "\nNSpid:");
	if (!p)
		return 0;
	long last = 0;
	for (char *end, *q = (char *)p + 7;; q = end) {
		long v = strtol(q, &end, 10);
		if (end == q)
			break;
		last = v;
	}
	return (pid_t)last;
}

pid_t sc_tracee_inner_tid(const struct sc_tracee *t, pid_t tid)
{
	pid_t in = nspid_inner(t->pid, tid);
	return in > 0 ? in : tid;
}

pid_t sc_tracee_outer_tid(const struct sc_tracee *t, pid_t inner)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/task", t->pid);
	DIR *d = opendir(path);
	struct dirent *e;
	pid_t found = 0;
	while (d && !found && (e = readdir(d))) {
		pid_t tid = (pid_t)atoi(e->d_name);
		if (tid > 0 && nspid_inner(t->pid, tid) == inner)
			found = tid;
	}
	if (d)
		closedir(d);
	return found ? found : inner;
}

int sc_tracee_nthreads(const struct sc_tracee *t)
{
	return t->n;
}

pid_t sc_tracee_tid(const struct sc_tracee *t, int i)
{
	return i >= 0 && i < t->n ? t->th[i].tid : -1;
}

pid_t sc_tracee_pid(const struct sc_tracee *t)
{
	return t->pid;
}

/* ---- memory ---- */

/* len bytes at addr through /proc/PID/mem, read into buf or written from it */
static int mem_io(struct sc_tracee *t, uint64_t addr, void *buf, size_t len, bool write)
{
	size_t done = 0;
	while (done < len) {
		ssize_t r = write ? pwrite(t->memfd, (const char *)buf + done, len - done, (off_t)(addr + done))
				  : pread(t->memfd, (char *)buf + done, len - done, (off_t)(addr + done));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return r < 0 ? -errno : -EIO;
		done += (size_t)r;
	}
	return 0;
}

int sc_tracee_read(struct sc_tracee *t, uint64_t addr, void *buf, size_t len)
{
	return mem_io(t, addr, buf, len, false);
}

int sc_tracee_write(struct sc_tracee *t, uint64_t addr, const void *buf, size_t len)
{
	return mem_io(t, addr, (void *)buf, len, true);
}

/* ---- moving threads out of ranges ---- */

static int range_cmp(const void *a, const void *b)
{
	const struct sc_range *x = a, *y = b;
	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* Inside one of the sorted ranges?  (Ranges may overlap: each range up to
 * the last one starting at or below ip is checked against the largest hi.) */
static bool in_ranges(const struct sc_range *r, const uint64_t *maxhi, size_t n, uint64_t ip)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (r[mid].lo <= ip)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo > 0 && ip < maxhi[lo - 1];
}

static bool restart_pending(const struct user_regs_struct *g)
{
	long rax = (long)g->rax;
	return (long)g->orig_rax >= 0 && (rax == -512 || rax == -513 || rax == -514 || rax == -516);
}

/* Threads inside; each thread's flag in inside[] (sized t->n). */
static int count_inside(struct sc_tracee *t, const struct sc_range *r, const uint64_t *maxhi,
			size_t n, bool *inside)
{
	int c = 0;
	for (int i = 0; i < t->n; i++) {
		struct user_regs_struct g;
		inside[i] = false;
		if (t->th[i].state != TH_STOPPED && t->th[i].state != TH_GROUPSTOP)
			continue;
		if (ptrace(PTRACE_GETREGS, t->th[i].tid, 0, &g) < 0)
			continue;
		if (in_ranges(r, maxhi, n, g.rip))
			inside[i] = true, c++;
	}
	return c;
}

/* Single steps of th (stopped inside the ranges) until it is out of them,
 * at most STEP_OUT_MAX or STEP_OUT_MS: 1 if it is out (or gone), 0 if not.
 * Any stop but a step's own trap ends the steps with th left in it: a
 * signal is kept for th's resumption from that very stop (its siginfo
 * intact), a job-control stop is marked as such; a step that does not end
 * (a blocking system call) is interrupted.  See sc_tracee_step_out() for
 * why this is the last resort. */
#define STEP_OUT_MAX 1000000
#define STEP_OUT_MS  2000
static int step_out_steps(struct sc_tracee *t, struct thread *th, const struct sc_range *s,
			  const uint64_t *maxhi, size_t n)
{
	uint64_t until = now_ms() + STEP_OUT_MS;

	for (int k = 0; k < STEP_OUT_MAX && now_ms() < until; k++) {
		struct user_regs_struct g;
		siginfo_t si;
		int st, sig;
		pid_t r;

		if (ptrace(PTRACE_GETREGS, th->tid, 0, &g) < 0)
			return 0;
		if (!in_ranges(s, maxhi, n, g.rip))
			return 1;
		if (restart_pending(&g))
			return 0;    /* blocked in a system call: it stays where it is */
		if (ptrace(PTRACE_SINGLESTEP, th->tid, 0, 0) < 0)
			return 0;
		th->state = TH_RUNNING;
		while ((r = waitpid(th->tid, &st, __WALL | WNOHANG)) == 0 || (r < 0 && errno == EINTR)) {
			if (r == 0 && now_ms() > until) {
				/* a step into a system call that blocks */
				if (ptrace(PTRACE_INTERRUPT, th->tid, 0, 0) < 0 || wait_stop(t, th) < 0)
					return 0;
				return th->state == TH_GONE;
			}
			if (r == 0)
				sleep_us(10);
		}
		if (r < 0) {
			mark_gone(th);
			return 1;
		}
		switch (classify(st, &sig)) {
		case K_EXIT:
			th->state = TH_GONE;
			return 1;
		case K_GROUP:
			th->state = TH_GROUPSTOP;
			return 0;
		case K_SIGNAL:
			th->state = TH_STOPPED;
			if (sig == SIGTRAP && ptrace(PTRACE_GETSIGINFO, th->tid, 0, &si) == 0 &&
			    si.si_code == TRAP_TRACE)
				break;       /* the step's own trap */
			th->sig = sig;       /* the program's: delivered from this stop */
			return 0;
		default:
			th->state = TH_STOPPED;
			break;
		}
	}
	return 0;
}

int sc_tracee_step_out(struct sc_tracee *t, const struct sc_range *r, size_t n, int rounds)
{
	if (n == 0)
		return 0;
	struct sc_range *s = malloc(n * sizeof(*s));
	uint64_t *maxhi = malloc(n * sizeof(*maxhi));
	if (!s || !maxhi) {
		free(s);
		free(maxhi);
		return -ENOMEM;
	}
	memcpy(s, r, n * sizeof(*s));
	qsort(s, n, sizeof(*s), range_cmp);
	for (size_t i = 0; i < n; i++)
		maxhi[i] = i && maxhi[i - 1] > s[i].hi ? maxhi[i - 1] : s[i].hi;

	/* the threads the caller left running stay out of it */
	pid_t *except = NULL;
	int nexcept = 0, rc = 0;
	bool *inside = NULL;
	except = malloc(((size_t)t->n + (size_t)t->nkept + 1) * sizeof(*except));
	if (!except) {
		rc = -ENOMEM;
		goto out;
	}
	for (int i = 0; i < t->n; i++)
		if (t->th[i].state == TH_RUNNING)
			except[nexcept++] = t->th[i].tid;
	/* and those never seized (a thread born after the seize, such as the
	 * runtime's own, that the caller's stop left running) */
	for (int i = 0; i < t->nkept; i++)
		except[nexcept++] = t->kept[i];

	for (int round = 0;; round++) {
		free(inside);
		inside = calloc((size_t)t->n + 1, sizeof(*inside));
		if (!inside) {
			rc = -ENOMEM;
			goto out;
		}
		rc = count_inside(t, s, maxhi, n, inside);
		if (rc == 0 || round >= rounds)
			break;
		/* resume only the threads this function stopped */
		if ((rc = sc_tracee_resume(t)) < 0)
			goto out;
		sleep_us(1000);
		if ((rc = sc_tracee_stop(t, except, nexcept)) < 0)
			goto out;
	}
	/* The rest, one thread at a time, by nudges: PTRACE_CONT, a sleep of
	 * 10-200 us, PTRACE_INTERRUPT lets it run a little, alone.  Single
	 * steps (step_out_steps) only for a thread the nudges never found
	 * outside: a tracer killed while a thread is stopped after a step
	 * leaves the trap flag set (the kernel clears it only when the tracer
	 * resumes or detaches it), and the thread, no longer traced, dies of
	 * SIGTRAP after its next instruction; so the steps are kept to the
	 * case no nudge solves, a hot loop inside the range: an interrupt
	 * lands after the loop's slow instructions nearly every time (1,000
	 * nudges found a thread in a 200-turn loop outside it in none of 3
	 * tries out of 10, on an AMD EPYC). */
	for (int i = 0; i < t->n && rc > 0; i++) {
		struct thread *th = &t->th[i];
		if (!inside[i] || th->state != TH_STOPPED)
			continue;
		for (int k = 0; k < 1000; k++) {
			struct user_regs_struct g;
			if (ptrace(PTRACE_GETREGS, th->tid, 0, &g) < 0)
				goto next;
			if (!in_ranges(s, maxhi, n, g.rip)) {
				rc--;
				goto next;
			}
			if (restart_pending(&g))
				goto next;   /* blocked in a system call: it stays where it is */
			if (ptrace(PTRACE_CONT, th->tid, 0, (long)th->sig) < 0)
				goto next;
			th->sig = 0;
			th->state = TH_RUNNING;
			sleep_us(k < 100 ? 10 + k : 200);   /* a few microseconds: it runs at least a little */
			if (ptrace(PTRACE_INTERRUPT, th->tid, 0, 0) < 0 || wait_stop(t, th) < 0 ||
			    th->state != TH_STOPPED) {
				if (th->state == TH_GONE)
					rc--;
				goto next;
			}
		}
		rc -= step_out_steps(t, th, s, maxhi, n);
next:;
	}
	compact(t);
out:
	free(inside);
	free(except);
	free(s);
	free(maxhi);
	return rc;
}

/* ---- the target's memory map and ELF files ---- */

struct mapping {
	uint64_t lo, hi, off;
	char perm[5];
	char *path;     /* a file's path, "[stack]" and the like, NULL for anonymous */
};

struct maps {
	struct mapping *m;
	size_t n, cap;
};

static void maps_free(struct maps *mp)
{
	for (size_t i = 0; i < mp->n; i++)
		free(mp->m[i].path);
	free(mp->m);
	mp->m = NULL;
	mp->n = 0;
}

static int maps_add(void *arg, const struct proc_map *pm)
{
	struct maps *mp = arg;
	struct mapping x = { .lo = pm->lo, .hi = pm->hi, .off = pm->off };

	memcpy(x.perm, pm->perms, sizeof(x.perm));
	if ((pm->path[0] == '/' && !strstr(pm->path, " (deleted)")) || pm->path[0] == '[')
		x.path = strdup(pm->path);   /* a file, or [stack], [heap], [vdso]... */
	if (mp->n == mp->cap) {
		size_t cap = mp->cap ? 2 * mp->cap : 64;
		struct mapping *m = realloc(mp->m, cap * sizeof(*m));

		if (!m) {
			free(x.path);
			return -ENOMEM;
		}
		mp->m = m;
		mp->cap = cap;
	}
	mp->m[mp->n++] = x;
	return 0;
}

static int maps_read(pid_t pid, struct maps *mp)
{
	int ret;

	mp->m = NULL;
	mp->n = mp->cap = 0;
	ret = proc_maps_each(pid, maps_add, mp);
	return ret == -ENOMEM ? 0 : ret;     /* (what was read stands) */
}

static const struct mapping *maps_find(const struct maps *mp, uint64_t addr)
{
	for (size_t i = 0; i < mp->n; i++)
		if (mp->m[i].lo <= addr && addr < mp->m[i].hi)
			return &mp->m[i];
	return NULL;
}

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');
	return s ? s + 1 : p;
}

/* One loaded ELF object, read from its file as the target sees it
 * (/proc/PID/root/PATH: right across mount namespaces). */
struct object {
	int fd;
	const char *path;
	uint64_t bias;
	Elf64_Ehdr eh;
	Elf64_Phdr ph[64];
	int nph;
};

static int object_open(pid_t pid, const struct maps *mp, const char *path, struct object *o)
{
	char file[PATH_MAX + 64];
	memset(o, 0, sizeof(*o));
	o->fd = -1;
	o->path = path;
	snprintf(file, sizeof(file), "/proc/%d/root%s", pid, path);
	o->fd = open(file, O_RDONLY | O_CLOEXEC);
	if (o->fd < 0)
		return -errno;
	if (pread(o->fd, &o->eh, sizeof(o->eh), 0) != sizeof(o->eh) ||
	    memcmp(o->eh.e_ident, ELFMAG, SELFMAG) || o->eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    o->eh.e_phentsize != sizeof(Elf64_Phdr))
		goto bad;
	o->nph = o->eh.e_phnum < 64 ? o->eh.e_phnum : 64;
	ssize_t want = (ssize_t)(o->nph * sizeof(Elf64_Phdr));
	if (pread(o->fd, o->ph, (size_t)want, (off_t)o->eh.e_phoff) != want)
		goto bad;
	uint64_t lowest = UINT64_MAX, base = UINT64_MAX;
	for (int i = 0; i < o->nph; i++)
		if (o->ph[i].p_type == PT_LOAD && (o->ph[i].p_vaddr & ~0xfffULL) < lowest)
			lowest = o->ph[i].p_vaddr & ~0xfffULL;
	for (size_t i = 0; i < mp->n; i++)
		if (mp->m[i].path && !strcmp(mp->m[i].path, path) && mp->m[i].off == 0 && mp->m[i].lo < base)
			base = mp->m[i].lo;
	if (lowest == UINT64_MAX || base == UINT64_MAX)
		goto bad;
	o->bias = base - lowest;
	return 0;
bad:
	close(o->fd);
	o->fd = -1;
	return -ENOEXEC;
}

/* The run-time address of a default-version dynamic symbol, 0 if none. */
static uint64_t object_sym(struct object *o, const char *name)
{
	Elf64_Shdr *sh = NULL;
	uint64_t found = 0;
	size_t nsh = o->eh.e_shnum;
	if (!nsh || o->eh.e_shentsize != sizeof(Elf64_Shdr) || nsh > 4096)
		return 0;
	sh = malloc(nsh * sizeof(*sh));
	if (!sh || pread(o->fd, sh, nsh * sizeof(*sh), (off_t)o->eh.e_shoff) != (ssize_t)(nsh * sizeof(*sh)))
		goto out;
	const Elf64_Shdr *dsym = NULL, *vsym = NULL;
	for (size_t i = 0; i < nsh; i++) {
		if (sh[i].sh_type == SHT_DYNSYM)
			dsym = &sh[i];
		else if (sh[i].sh_type == SHT_GNU_versym)
			vsym = &sh[i];
	}
	if (!dsym || dsym->sh_link >= nsh || dsym->sh_entsize != sizeof(Elf64_Sym))
		goto out;
	const Elf64_Shdr *str = &sh[dsym->sh_link];
	size_t nsym = dsym->sh_size / sizeof(Elf64_Sym), nlen = strlen(name) + 1;
	Elf64_Sym *syms = malloc(dsym->sh_size);
	char *strs = malloc(str->sh_size + 1);
	uint16_t *vers = vsym ? malloc(vsym->sh_size) : NULL;
	if (syms && strs && (!vsym || vers) &&
	    pread(o->fd, syms, dsym->sh_size, (off_t)dsym->sh_offset) == (ssize_t)dsym->sh_size &&
	    pread(o->fd, strs, str->sh_size, (off_t)str->sh_offset) == (ssize_t)str->sh_size &&
	    (!vsym || pread(o->fd, vers, vsym->sh_size, (off_t)vsym->sh_offset) == (ssize_t)vsym->sh_size)) {
		strs[str->sh_size] = 0;
		for (size_t i = 1; i < nsym && !found; i++) {
			if (syms[i].st_name + nlen > str->sh_size + 1 || memcmp(strs + syms[i].st_name, name, nlen) ||
			    syms[i].st_shndx == SHN_UNDEF || ELF64_ST_TYPE(syms[i].st_info) != STT_FUNC)
				continue;
			if (vers && i < vsym->sh_size / 2 && (vers[i] & 0x8000))
				continue;   /* a hidden (non-default) version */
			found = o->bias + syms[i].st_value;
		}
	}
	free(syms);
	free(strs);
	free(vers);
out:
	free(sh);
	return found;
}

/* The unused tail of the last page of an executable segment: bytes past
 * the segment's end, in the same r-x mapping, that no other segment of the
 * object covers.  The largest one of at least `need` bytes, in *addr and
 * *len.  0 or -ENOSPC. */
static int find_tail(pid_t pid, const struct maps *mp, size_t need, uint64_t *addr, size_t *len)
{
	const long page = sysconf(_SC_PAGESIZE);
	*len = 0;
	for (size_t i = 0; i < mp->n; i++) {
		const struct mapping *m = &mp->m[i];
		if (!m->path || m->path[0] != '/' || m->perm[2] != 'x')
			continue;
		bool seen = false;
		for (size_t k = 0; k < i && !seen; k++)
			seen = mp->m[k].path && mp->m[k].perm[2] == 'x' && !strcmp(mp->m[k].path, m->path);
		if (seen)
			continue;
		struct object o;
		if (object_open(pid, mp, m->path, &o) < 0)
			continue;
		for (int p = 0; p < o.nph; p++) {
			const Elf64_Phdr *ph = &o.ph[p];
			if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
				continue;
			uint64_t end = o.bias + ph->p_vaddr + ph->p_memsz;
			uint64_t pend = (end + (uint64_t)page - 1) & ~((uint64_t)page - 1);
			uint64_t start = (end + 15) & ~15ULL;
			if (start >= pend || pend - start < need || pend - start <= *len)
				continue;
			const struct mapping *at = maps_find(mp, end - 1);
			if (!at || at->perm[2] != 'x' || at->hi < pend || at->lo > end - 1)
				continue;
			bool other = false;
			for (int q = 0; q < o.nph; q++) {
				const Elf64_Phdr *x = &o.ph[q];
				uint64_t lo = o.bias + x->p_vaddr, hi = lo + x->p_memsz;
				if (q != p && x->p_type == PT_LOAD && lo < pend && hi > end)
					other = true;
			}
			if (other)
				continue;
			*addr = start;
			*len = pend - start;
		}
		close(o.fd);
	}
	return *len ? 0 : -ENOSPC;
}

/* The bytes the tail holds in the file (what goes back after the call):
 * from the file, so a blob left by a tracer killed earlier is not taken
 * for the original; from memory if the file cannot be read. */
static int tail_original(struct sc_tracee *t, const struct maps *mp, uint64_t tail, void *buf, size_t len)
{
	const struct mapping *m = maps_find(mp, tail);
	char file[PATH_MAX + 64];
	if (m && m->path && m->path[0] == '/') {
		snprintf(file, sizeof(file), "/proc/%d/root%s", t->pid, m->path);
		int fd = open(file, O_RDONLY | O_CLOEXEC);
		if (fd >= 0) {
			ssize_t r = pread(fd, buf, len, (off_t)(m->off + (tail - m->lo)));
			close(fd);
			if (r == (ssize_t)len)
				return 0;
		}
	}
	return sc_tracee_read(t, tail, buf, len);
}

/* ---- the call ---- */

/*
 * The blob.  Entered with rsp = R, [R] = the address to return to, the
 * data block (struct blob_data) at R + 8, BLOB_DATA bytes, and the
 * thread's red zone untouched above it.  It pushes rflags and the 15
 * general registers, saves errno (through __errno_location) and the
 * vector/x87 state (XSAVE with the mask and size in the data, see
 * xsave_params; FXSAVE when the mask is 0) in a 64-aligned zeroed area
 * below, calls dlopen(lib, RTLD_NOW), dlsym and
 * the function, writes the record {magic, stage, value, dlerror() text}
 * to the status file (openat/write/close, raw system calls) and removes
 * the file and its directory (the tracer reads its open descriptor; a
 * tracer killed meanwhile leaves nothing in /tmp), restores it
 * all and returns with `ret $BLOB_DATA + 128`, which pops the return
 * address and gives the stack back in one instruction.  Assembled into
 * the recorder's read-only data, never run there.
 */
#define BLOB_DATA 8192
struct blob_data {
	uint64_t dlopen, dlsym, dlerror, errno_location;
	uint64_t magic;
	uint64_t lib, sym, arg, status, dir;   /* target addresses of the strings */
	uint64_t xsave_mask, xsave_size;       /* 0 and 512: FXSAVE */
	char strings[BLOB_DATA - 96];
};
_Static_assert(sizeof(struct blob_data) == BLOB_DATA, "blob data size");
_Static_assert(offsetof(struct blob_data, errno_location) == 24 && offsetof(struct blob_data, magic) == 32 &&
	       offsetof(struct blob_data, lib) == 40 && offsetof(struct blob_data, status) == 64 &&
	       offsetof(struct blob_data, dir) == 72 && offsetof(struct blob_data, xsave_mask) == 80 &&
	       offsetof(struct blob_data, xsave_size) == 88, "the offsets the blob uses");

/* What the blob saves the vector state with, found here (XCR0 is the same
 * in every process): XSAVE of every enabled component but the AMX tiles
 * (17, 18: no code on the call's path uses them, and a process that never
 * asked for them has them disabled by XFD), into an area of the size
 * CPUID leaf 0xd gives; FXSAVE's 512 bytes without OSXSAVE.  Not in the
 * blob: a process may have CPUID made to fault (ARCH_SET_CPUID). */
static void xsave_params(uint64_t *mask, uint64_t *size)
{
	unsigned a, b, c, d;
	__asm__("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d) : "a"(1), "c"(0));
	*mask = 0;
	*size = 512;
	if (!(c & (1u << 27)))
		return;
	__asm__("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d) : "a"(0xd), "c"(0));
	*size = b;
	__asm__("xgetbv" : "=a"(a), "=d"(d) : "c"(0));
	*mask = ((uint64_t)d << 32 | a) & ~0x60000ULL;
}

struct blob_record {
	uint64_t magic;
	uint32_t stage;       /* 1 dlopen failed, 2 dlsym failed, 3 called */
	int32_t value;
	char msg[256];
};

__asm__(
	".pushsection .rodata.sc_tracee_blob,\"a\"\n"
	".globl sc_tracee_blob_start\n.hidden sc_tracee_blob_start\n"
	".globl sc_tracee_blob_end\n.hidden sc_tracee_blob_end\n"
	"sc_tracee_blob_start:\n"
	"	pushfq\n"
	"	push %rax\n	push %rbx\n	push %rcx\n	push %rdx\n"
	"	push %rsi\n	push %rdi\n	push %rbp\n	push %r8\n"
	"	push %r9\n	push %r10\n	push %r11\n	push %r12\n"
	"	push %r13\n	push %r14\n	push %r15\n"
	"	cld\n"
	"	mov %rsp, %rbp\n"
	"	lea 136(%rbp), %r12\n"          /* the data block */
	"	sub $32, %rsp\n"                /* -8 xsave mask, -16 errno, -24 &errno */
	"	movq $0, -24(%rbp)\n"
	"	mov 80(%r12), %rax\n"           /* the XSAVE mask (0: FXSAVE) and size */
	"	mov %rax, -8(%rbp)\n"
	"	mov 88(%r12), %r13\n"
	"	sub %r13, %rsp\n"
	"	and $-64, %rsp\n"
	"	mov %rsp, %rdi\n"
	"	mov %r13, %rcx\n"
	"	xor %eax, %eax\n"
	"	rep stosb\n"                    /* XRSTOR wants a clean header */
	"	mov -8(%rbp), %rax\n"
	"	test %rax, %rax\n"
	"	jz 3f\n"
	"	mov %rax, %rdx\n"
	"	shr $32, %rdx\n"
	"	xsave64 (%rsp)\n"
	"	jmp 4f\n"
	"3:	fxsave64 (%rsp)\n"
	"4:	mov %rsp, %r14\n"
	"	mov 24(%r12), %rax\n"           /* __errno_location */
	"	test %rax, %rax\n"
	"	jz 5f\n"
	"	call *%rax\n"
	"	mov %rax, -24(%rbp)\n"
	"	mov (%rax), %eax\n"
	"	mov %eax, -16(%rbp)\n"
	"5:	sub $320, %rsp\n"               /* the record */
	"	mov 40(%r12), %rdi\n"
	"	mov $2, %esi\n"                 /* RTLD_NOW */
	"	call *0(%r12)\n"
	"	mov $1, %ebx\n"
	"	test %rax, %rax\n"
	"	jz 6f\n"
	"	mov %rax, %rdi\n"
	"	mov 48(%r12), %rsi\n"
	"	call *8(%r12)\n"
	"	mov $2, %ebx\n"
	"	test %rax, %rax\n"
	"	jz 6f\n"
	"	mov 56(%r12), %rdi\n"
	"	call *%rax\n"
	"	mov %eax, %r15d\n"
	"	mov $3, %ebx\n"
	"	xor %eax, %eax\n"
	"	jmp 7f\n"
	"6:	xor %r15d, %r15d\n"
	"	call *16(%r12)\n"               /* dlerror() */
	"7:	mov 32(%r12), %rcx\n"
	"	mov %rcx, (%rsp)\n"
	"	mov %ebx, 8(%rsp)\n"
	"	mov %r15d, 12(%rsp)\n"
	"	lea 16(%rsp), %rdi\n"
	"	xor %ecx, %ecx\n"
	"	test %rax, %rax\n"
	"	jz 9f\n"
	"8:	movzbl (%rax,%rcx), %edx\n"
	"	test %dl, %dl\n"
	"	jz 9f\n"
	"	mov %dl, (%rdi,%rcx)\n"
	"	inc %ecx\n"
	"	cmp $255, %ecx\n"
	"	jb 8b\n"
	"9:	movb $0, (%rdi,%rcx)\n"
	"	lea 17(%rcx), %r13\n"
	"	mov $257, %eax\n"               /* openat(AT_FDCWD, status, O_WRONLY|O_CLOEXEC) */
	"	mov $-100, %rdi\n"
	"	mov 64(%r12), %rsi\n"
	"	mov $0x80001, %edx\n"
	"	xor %r10d, %r10d\n"
	"	syscall\n"
	"	test %rax, %rax\n"
	"	js 10f\n"
	"	mov %rax, %rbx\n"
	"	mov $1, %eax\n"                 /* write(fd, record, 17 + length) */
	"	mov %rbx, %rdi\n"
	"	mov %rsp, %rsi\n"
	"	mov %r13, %rdx\n"
	"	syscall\n"
	"	mov $3, %eax\n"                 /* close(fd) */
	"	mov %rbx, %rdi\n"
	"	syscall\n"
	"	mov $87, %eax\n"                /* unlink(status): the tracer holds it open */
	"	mov 64(%r12), %rdi\n"
	"	syscall\n"
	"	mov $84, %eax\n"                /* rmdir(its directory) */
	"	mov 72(%r12), %rdi\n"
	"	syscall\n"
	"10:	mov -24(%rbp), %rax\n"
	"	test %rax, %rax\n"
	"	jz 11f\n"
	"	mov -16(%rbp), %ecx\n"
	"	mov %ecx, (%rax)\n"
	"11:	mov -8(%rbp), %rax\n"
	"	test %rax, %rax\n"
	"	jz 12f\n"
	"	mov %rax, %rdx\n"
	"	shr $32, %rdx\n"
	"	xrstor64 (%r14)\n"
	"	jmp 13f\n"
	"12:	fxrstor64 (%r14)\n"
	"13:	mov %rbp, %rsp\n"
	"	pop %r15\n	pop %r14\n	pop %r13\n	pop %r12\n"
	"	pop %r11\n	pop %r10\n	pop %r9\n	pop %r8\n"
	"	pop %rbp\n	pop %rdi\n	pop %rsi\n	pop %rdx\n"
	"	pop %rcx\n	pop %rbx\n	pop %rax\n"
	"	popfq\n"
	"	ret $8320\n"                    /* BLOB_DATA + 128 */
	"sc_tracee_blob_end:\n"
	".popsection\n");
extern const unsigned char sc_tracee_blob_start[], sc_tracee_blob_end[];
_Static_assert(BLOB_DATA + 128 == 8320, "the blob's ret immediate");

/* A thread to run the call: stopped, with 256 KiB of stack below its rsp
 * (or on the main thread's growing stack);
 * best outside libc and the loader and not in a system call, then in
 * them, then blocked in a restartable system call.  -1 if none. */
static int choose_thread(struct sc_tracee *t, const struct maps *mp, const char *libc, const char *ldso)
{
	int best = -1, best_score = 1 << 30;
	for (int i = 0; i < t->n; i++) {
		struct user_regs_struct g;
		if (t->th[i].state != TH_STOPPED || t->th[i].sig || sig_pending(t->pid, t->th[i].tid))
			continue;
		if (ptrace(PTRACE_GETREGS, t->th[i].tid, 0, &g) < 0)
			continue;
		const struct mapping *st = maps_find(mp, g.rsp - 1);
		bool grows = st && st->path && !strcmp(st->path, "[stack]");   /* the main thread's */
		if (!st || st->perm[1] != 'w' || (!grows && g.rsp - 262144 < st->lo))
			continue;
		const struct mapping *code = maps_find(mp, g.rip);
		int score = 0;
		if (code && code->path && (!strcmp(code->path, libc) || (ldso && !strcmp(code->path, ldso))))
			score += 1;
		if ((long)g.orig_rax >= 0)
			score += 2;
		if (restart_pending(&g))
			score += 4;
		if (score < best_score)
			best = i, best_score = score;
	}
	return best;
}

/* A private directory in the target's /tmp (or /dev/shm, /var/tmp),
 * named after this process, with an empty status file the target's user
 * can write: its path as the tracer
 * sees it in tpath, as the target sees it in path. */
/*
 * Remove a status directory made by make_status_file (base/name, and its
 * status file), by descriptor: the directory is the target's user's, who
 * may have put a link in its place or in place of its file; unlinkat in
 * the directory opened without following links removes only what is
 * really there.
 */
static void drop_status_dir(const char *dir)
{
	char base[PATH_MAX], *slash;
	int bfd, dfd;

	snprintf(base, sizeof(base), "%s", dir);
	slash = strrchr(base, '/');
	if (!slash)
		return;
	*slash = 0;
	bfd = open(base, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (bfd < 0)
		return;
	dfd = openat(bfd, slash + 1, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd >= 0) {
		unlinkat(dfd, "status", 0);
		close(dfd);
		unlinkat(bfd, slash + 1, AT_REMOVEDIR);
	} else if (errno == ENOTDIR || errno == ELOOP) {
		unlinkat(bfd, slash + 1, 0);    /* a link or a file in its place: itself */
	}
	close(bfd);
}

/* Status directories in base whose tracer is gone (killed before its
 * blob ran, which removes them otherwise): removed. */
static void sweep_stale(const char *base)
{
	static const char prefix[] = "stackclock-attach.";
	DIR *d = opendir(base);
	struct dirent *e;
	char path[PATH_MAX];
	while (d && (e = readdir(d))) {
		if (strncmp(e->d_name, prefix, sizeof(prefix) - 1))
			continue;
		long owner = strtol(e->d_name + sizeof(prefix) - 1, NULL, 10);
		if (owner <= 0 || kill((pid_t)owner, 0) == 0 || errno != ESRCH)
			continue;
		snprintf(path, sizeof(path), "%s/%s", base, e->d_name);
		drop_status_dir(path);
	}
	if (d)
		closedir(d);
}

/*
 * Everything by descriptor: the base opened without following a link (a
 * link there would be followed from our root, not the target's), the
 * directory made in it under a name of ours and checked to be the one we
 * made, the file made in that, and both given to the target's user (its
 * blob removes them) through their descriptors: a link the user puts in
 * place of either name meanwhile is never followed.
 */
static int make_status_file(pid_t pid, const char *status, char *dir, size_t dlen, char *tpath,
			    size_t tlen, char *path, size_t plen)
{
	static const char *const bases[] = { "/tmp", "/dev/shm", "/var/tmp" };
	static const char chars[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
	long uid = status_fsid(status, "Uid:"), gid = status_fsid(status, "Gid:");
	char root[64], base[128], name[64];
	int n = snprintf(root, sizeof(root), "/proc/%d/root", pid);
	struct timespec ts;
	uint64_t v;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	v = (uint64_t)ts.tv_nsec ^ (uint64_t)ts.tv_sec << 30 ^ (uint64_t)getpid() << 16;
	for (size_t b = 0; b < sizeof(bases) / sizeof(bases[0]); b++) {
		struct stat st;
		int bfd, dfd = -1, fd = -1, tries;

		snprintf(base, sizeof(base), "%s%s", root, bases[b]);
		bfd = open(base, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (bfd < 0)
			continue;
		sweep_stale(base);
		for (tries = 0; tries < 100; tries++) {
			int k = snprintf(name, sizeof(name), "stackclock-attach.%d.", (int)getpid());

			v = v * 6364136223846793005ull + 1442695040888963407ull;
			for (int i = 0; i < 6; i++)
				name[k + i] = chars[(v >> (16 + 6 * i)) % (sizeof(chars) - 1)];
			name[k + 6] = 0;
			if (!mkdirat(bfd, name, 0700) || errno != EEXIST)
				break;
		}
		dfd = openat(bfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (dfd >= 0 && (fstat(dfd, &st) || st.st_uid != geteuid())) {
			close(dfd);              /* not the one we made */
			close(bfd);
			continue;
		}
		if (dfd >= 0)
			fd = openat(dfd, "status", O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd >= 0 && uid >= 0 && (uid_t)uid != geteuid() &&
		    (fchown(dfd, (uid_t)uid, (gid_t)gid) < 0 || fchown(fd, (uid_t)uid, (gid_t)gid) < 0)) {
			close(fd);
			unlinkat(dfd, "status", 0);
			fd = -1;
		}
		if (fd < 0) {
			if (dfd >= 0) {
				close(dfd);
				unlinkat(bfd, name, AT_REMOVEDIR);
			}
			close(bfd);
			continue;
		}
		close(dfd);
		close(bfd);
		snprintf(dir, dlen, "%s/%s", base, name);
		snprintf(tpath, tlen, "%s/status", dir);
		snprintf(path, plen, "%s", tpath + n);
		return fd;
	}
	return -1;
}

int sc_tracee_call(struct sc_tracee *t, const char *lib, const char *sym, const char *arg,
		   int timeout_ms, int *ret, char *err, size_t errlen)
{
	return sc_tracee_call_in(t, 0, lib, sym, arg, timeout_ms, ret, err, errlen);
}

int sc_tracee_call_in(struct sc_tracee *t, pid_t tid, const char *lib, const char *sym,
		      const char *arg, int timeout_ms, int *ret, char *err, size_t errlen)
{
	struct maps mp = { 0 };
	struct object libc = { .fd = -1 };
	struct blob_data *data = NULL;
	char dir[PATH_MAX], tpath[PATH_MAX], spath[PATH_MAX], status[4096], path[64];
	const char *libc_path = NULL, *ldso_path = NULL;
	size_t blob_len = (size_t)(sc_tracee_blob_end - sc_tracee_blob_start);
	unsigned char saved_tail[1024];
	uint64_t tail = 0;
	size_t tail_len = 0;
	int sfd = -1, rc;
	bool blob_written = false, timed_out = false;
	struct thread *th;

	*ret = 0;
	dir[0] = 0;
	snprintf(path, sizeof(path), "/proc/%d/status", t->pid);
	if (read_small(path, status, sizeof(status)) <= 0) {
		ERR("process %d ended", t->pid);
		return -ESRCH;
	}
	if (strstr(status, "x86_Thread_features:") &&
	    strstr(strstr(status, "x86_Thread_features:"), "shstk")) {
		ERR("process %d uses shadow stacks (CET): loading a library into it is not supported", t->pid);
		return -ENOTSUP;
	}
	size_t ll = strlen(lib) + 1, sl = strlen(sym) + 1, al = strlen(arg) + 1;
	if ((rc = maps_read(t->pid, &mp)) < 0) {
		ERR("cannot read /proc/%d/maps: %s", t->pid, strerror(-rc));
		return rc;
	}
	for (size_t i = 0; i < mp.n; i++) {
		const char *b = mp.m[i].path ? base_name(mp.m[i].path) : "";
		if (!libc_path && !strcmp(b, "libc.so.6"))
			libc_path = mp.m[i].path;
		if (!ldso_path && !strncmp(b, "ld-linux", 8))
			ldso_path = mp.m[i].path;
	}
	if (!libc_path) {
		ERR("process %d has no libc.so.6 loaded (not a glibc program): cannot load a library into it",
		    t->pid);
		rc = -ENOEXEC;
		goto out;
	}
	if ((rc = object_open(t->pid, &mp, libc_path, &libc)) < 0) {
		ERR("cannot read the target's C library %s: %s", libc_path, strerror(-rc));
		goto out;
	}
	data = calloc(1, sizeof(*data));
	if (!data) {
		rc = -ENOMEM;
		ERR("out of memory");
		goto out;
	}
	data->dlopen = object_sym(&libc, "dlopen");
	data->dlsym = object_sym(&libc, "dlsym");
	data->dlerror = object_sym(&libc, "dlerror");
	data->errno_location = object_sym(&libc, "__errno_location");
	xsave_params(&data->xsave_mask, &data->xsave_size);
	if (!data->dlopen || !data->dlsym || !data->dlerror) {
		ERR("no dlopen in the target's libc (%s: glibc 2.34 or later has it)", libc_path);
		rc = -ENOSYS;
		goto out;
	}
	if ((rc = find_tail(t->pid, &mp, blob_len, &tail, &tail_len)) < 0) {
		ERR("no room for the loader's code in process %d (no executable segment ends %zu bytes "
		    "before its page does)", t->pid, blob_len);
		goto out;
	}
	if (ll + sl + al + 512 > sizeof(data->strings) || blob_len > sizeof(saved_tail)) {
		ERR("library path, symbol or argument too long (%zu bytes in all; at most %zu)",
		    ll + sl + al, sizeof(data->strings) - 512);
		rc = -ENAMETOOLONG;
		goto out;
	}
	if (getrandom(&data->magic, sizeof(data->magic), 0) != sizeof(data->magic))
		data->magic = (uint64_t)now_ms() * 0x9e3779b97f4a7c15ULL ^ (uint64_t)getpid();
	data->magic |= 1;

	/* A thread stopped with a signal of its own pending (its fault
	 * raised, the interrupt's stop taken first) gets it at the next
	 * instruction it runs: the blob's, were it chosen, and the program's
	 * handler would see its own fault at an address of ours (seen: a
	 * handler stepping over its faulting load went on 3 bytes into the
	 * blob, SIGSEGV).  Such a thread is passed over; if every thread is,
	 * they run on for a moment (the signals are delivered) and are
	 * stopped again. */
	int pick = -1;
	for (int tries = 0; pick < 0 && tries < CALL_PICK_TRIES; tries++) {
		if (tries) {
			sc_tracee_resume(t);
			sleep_us(1000);
		}
		if ((rc = sc_tracee_stop(t, NULL, 0)) < 0) {
			ERR("cannot stop the threads of process %d: %s", t->pid, strerror(-rc));
			goto out;
		}
		if (tid) {
			for (int i = 0; i < t->n; i++)
				if (t->th[i].tid == tid && t->th[i].state == TH_STOPPED && !t->th[i].sig &&
				    !sig_pending(t->pid, tid))
					pick = i;
		} else {
			pick = choose_thread(t, &mp, libc_path, ldso_path);
		}
	}
	if (pick < 0) {
		if (tid)
			ERR("thread %d of process %d is not held (ended, or stopped by job control), or has "
			    "a signal pending", tid, t->pid);
		else
			ERR("no thread of process %d can run the call (each is stopped by job control, has a "
			    "signal pending, or has under 256 KiB of stack left)", t->pid);
		rc = -ESRCH;
		goto resume;
	}
	th = &t->th[pick];
	sfd = make_status_file(t->pid, status, dir, sizeof(dir), tpath, sizeof(tpath), spath, sizeof(spath));
	if (sfd < 0) {
		ERR("cannot make a status file in the target's /tmp, /dev/shm or /var/tmp: %s", strerror(errno));
		dir[0] = 0;
		rc = -EACCES;
		goto resume;
	}
	if (2 * strlen(spath) + 2 > 512) {
		ERR("the status file's path %s is too long", spath);
		rc = -ENAMETOOLONG;
		goto resume;
	}
	struct user_regs_struct g;
	if (ptrace(PTRACE_GETREGS, th->tid, 0, &g) < 0) {
		rc = -errno;
		ERR("cannot read the registers of thread %d: %s", th->tid, strerror(errno));
		goto resume;
	}
	/* what the kernel would do on the way out with no handler to run */
	uint64_t back = g.rip;
	if (restart_pending(&g)) {
		g.rax = (long)g.rax == -516 ? SYS_restart_syscall : g.orig_rax;
		back = g.rip - 2;
	}
	g.orig_rax = (uint64_t)-1;
	uint64_t frame = g.rsp - 128 - BLOB_DATA - 8;
	uint64_t dbase = frame + 8, soff = dbase + offsetof(struct blob_data, strings);
	char *s = data->strings;
	memcpy(s, lib, ll), data->lib = soff, s += ll, soff += ll;
	memcpy(s, sym, sl), data->sym = soff, s += sl, soff += sl;
	memcpy(s, arg, al), data->arg = soff, s += al, soff += al;
	size_t pl = strlen(spath) + 1;
	memcpy(s, spath, pl), data->status = soff, s += pl, soff += pl;
	memcpy(s, spath, pl), data->dir = soff;
	s[strlen(s) - strlen("/status")] = 0;

	if ((rc = tail_original(t, &mp, tail, saved_tail, blob_len)) < 0 ||
	    (rc = sc_tracee_write(t, tail, sc_tracee_blob_start, blob_len)) < 0) {
		ERR("cannot write the loader's code at %#llx in process %d: %s", (unsigned long long)tail,
		    t->pid, strerror(-rc));
		goto resume;
	}
	blob_written = true;
	if ((rc = sc_tracee_write(t, frame, &back, 8)) < 0 ||
	    (rc = sc_tracee_write(t, dbase, data, sizeof(*data))) < 0) {
		ERR("cannot write the call's data on thread %d's stack: %s", th->tid, strerror(-rc));
		goto resume;
	}
	g.rsp = frame;
	g.rip = tail;
	/* the last step: from here the thread runs the call with or without us */
	if (ptrace(PTRACE_SETREGS, th->tid, 0, &g) < 0) {
		rc = -errno;
		ERR("cannot set the registers of thread %d: %s", th->tid, strerror(errno));
		goto resume;
	}
	pid_t call_tid = th->tid;
	if ((rc = sc_tracee_resume(t)) < 0) {
		ERR("cannot resume process %d: %s", t->pid, strerror(-rc));
		goto out;
	}

	struct blob_record rec;
	uint64_t start = now_ms();
	long nap = 50;
	for (;;) {
		ssize_t got = pread(sfd, &rec, sizeof(rec), 0);
		if (got >= 17 && rec.magic == data->magic)
			break;
		if (now_ms() - start > (uint64_t)timeout_ms) {
			timed_out = true;
			break;
		}
		sc_tracee_pump(t);
		if (thread_state(t->pid, call_tid) == 0) {
			ERR("thread %d of process %d ended during the call into %s", call_tid, t->pid, lib);
			rc = -ESRCH;
			goto out;   /* the blob's bytes stay: another thread may be in them */
		}
		sleep_us(nap);
		if (nap < 1000)
			nap *= 2;
	}
	if (timed_out) {
		ERR("the call to %s in %s did not finish within %d ms (it may still finish; its code stays "
		    "in process %d)", sym, lib, timeout_ms, t->pid);
		rc = -ETIMEDOUT;
		goto out;
	}
	rec.msg[sizeof(rec.msg) - 1] = 0;
	if (rec.stage == 3) {
		*ret = rec.value;
		rc = 0;
	} else {
		ERR("%s in process %d: %s", rec.stage == 1 ? "dlopen failed" : "dlsym failed", t->pid,
		    rec.msg[0] ? rec.msg : "(no dlerror text)");
		rc = -ENOENT;
	}
	/* the blob's bytes go back once its thread has left them: that thread
	 * alone is interrupted (a thread the function started stays unseized),
	 * looked at and let go, up to 1000 times 1 ms apart */
	struct thread *ct = find_thread(t, call_tid);
	for (int k = 0; ct && ct->state == TH_RUNNING && k < 1000; k++) {
		struct user_regs_struct now;
		if (ptrace(PTRACE_INTERRUPT, ct->tid, 0, 0) < 0 || wait_stop(t, ct) < 0 ||
		    ct->state != TH_STOPPED)
			break;
		bool out_of_it = ptrace(PTRACE_GETREGS, ct->tid, 0, &now) == 0 &&
				 (now.rip < tail || now.rip >= tail + blob_len);
		if (out_of_it)
			sc_tracee_write(t, tail, saved_tail, blob_len);
		if (ptrace(PTRACE_CONT, ct->tid, 0, 0) < 0) {
			mark_gone(ct);
			break;
		}
		ct->state = TH_RUNNING;
		if (out_of_it)
			break;
		sleep_us(1000);
	}
	compact(t);
	goto out;

resume:
	if (blob_written)
		sc_tracee_write(t, tail, saved_tail, blob_len);
	sc_tracee_resume(t);
out:
	if (sfd >= 0)
		close(sfd);
	if (dir[0]) {
		drop_status_dir(dir);
	}
	if (libc.fd >= 0)
		close(libc.fd);
	free(data);
	maps_free(&mp);
	return rc;
}
