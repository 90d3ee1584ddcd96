/*
 * attach — `record -m instrument -p PID` (SPEC section 13): the recorder's
 * half of runtime/attach.h.  The runtime is loaded into the running
 * process and set up by its entry (tracee.h does the loading); the threads
 * are stopped while the plans are applied and again while everything is
 * put back; in between they run free of ptrace, as under a launched
 * recording.  The data file is written from the image like a launched
 * program's (instrument.c).
 */
#include "record/record.h"
#include "record/attach_seed.h"
#include "record/procmaps.h"
#include "record/plan_file.h"
#include "record/tracee.h"
#include "runtime/attach.h"
#include "runtime/patch.h"
#include "runtime/shm.h"
#include "symbols/symbols.h"
#include "util/util.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define CALL_TIMEOUT_MS  20000
#define STATE_TIMEOUT_MS 20000
#define STEP_ROUNDS      50
#define UNSAFE_WAIT_MS   5000   /* for a signal handler over an entry's bytes */

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int record_attach_exe(pid_t pid, char *out, size_t len)
{
	char link[64], msg[256];
	ssize_t n;

	if (proc_exited_msg(pid, msg, sizeof(msg))) {
		pr_err("record: %s", msg);
		return -1;
	}
	snprintf(link, sizeof(link), "/proc/%d/exe", (int)pid);
	n = readlink(link, out, len - 1);
	if (n < 0) {
		if (errno == ENOENT)
			pr_err("record: no process %d (check the PID with 'ps')", (int)pid);
		else
			pr_err("record: cannot read %s: %s (attaching needs the rights ptrace needs: the "
			       "same user, or root)", link, strerror(errno));
		return -1;
	}
	out[n] = 0;
	if (n > 10 && !strcmp(out + n - 10, " (deleted)")) {
		pr_err("record: the program of process %d was deleted or replaced since it started (%s); "
		       "its plan cannot be made from the file: restart it, or record it by sampling",
		       (int)pid, out);
		return -1;
	}
	return 0;
}

/* ---- the entries the threads must not be stopped inside ---------------- */

struct ranges {
	struct sc_range *r;
	size_t n, alloc;
};

static void range_add(struct ranges *rs, uint64_t lo, uint64_t hi)
{
	if (hi <= lo)
		return;
	ALLOC_GROW(rs->r, rs->n + 1, rs->alloc);
	rs->r[rs->n].lo = lo;
	rs->r[rs->n].hi = hi;
	rs->n++;
}

/* plan_ranges's walk over the executable file mappings */
struct plan_walk {
	char *const *plans;
	int nplans, ndone;
	char done[64][PATH_MAX];
	struct ranges *rs;
	struct attach_fns *fns;
};

static int plan_map(void *arg, const struct proc_map *pm)
{
	struct plan_walk *w = arg;
	uint8_t bid[64];
	unsigned bid_len;
	int64_t bias;

	if (pm->perms[2] != 'x' || pm->path[0] != '/' || w->ndone == 64)
		return 0;
	for (int i = 0; i < w->ndone; i++)
		if (!strcmp(w->done[i], pm->path))
			return 0;
	snprintf(w->done[w->ndone++], PATH_MAX, "%s", pm->path);
	bid_len = sym_file_build_id(pm->path, bid);
	bias = attach_file_bias(pm->path, pm->lo, pm->off);
	if (!bid_len || bias == INT64_MIN)
		return 0;
	for (int k = 0; k < w->nplans; k++) {
		int fd = open(w->plans[k], O_RDONLY | O_CLOEXEC);
		struct stat st;
		const struct plan_file_header *h;
		const struct plan_file_entry *v;
		void *m;
		size_t n;

		if (fd < 0)
			continue;
		if (fstat(fd, &st) || !st.st_size) {
			close(fd);
			continue;
		}
		m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
		close(fd);
		if (m == MAP_FAILED)
			continue;
		h = m;
		v = plan_file_check(h, (uint64_t)st.st_size, &n);
		if (v && h->build_id_len == bid_len && !memcmp(h->build_id, bid, bid_len)) {
			for (size_t i = 0; i < n; i++) {
				range_add(w->rs, v[i].entry.site + (uint64_t)bias + 1,
					  v[i].entry.site + (uint64_t)bias + v[i].entry.len);
				attach_fns_add(w->fns, v[i].addr + (uint64_t)bias, v[i].entry.site + (uint64_t)bias);
			}
		}
		munmap(m, (size_t)st.st_size);
	}
	return 0;
}

/* Each r-x file mapping of pid: the plan in plans[] made for it (by
 * build-id), its entries' bytes after the first as ranges, its functions
 * into fns. */
static void plan_ranges(pid_t pid, char *const *plans, int nplans, struct ranges *rs,
			struct attach_fns *fns)
{
	struct plan_walk *w = xcalloc(1, sizeof(*w));

	w->plans = plans;
	w->nplans = nplans;
	w->rs = rs;
	w->fns = fns;
	proc_maps_each(pid, plan_map, w);
	free(w);
}

/* ---- the runtime to load ----------------------------------------------- */

/* runtimes_in's count of distinct runtime files */
struct rt_walk {
	int n;
	char seen[16][PATH_MAX];
};

static int rt_map(void *arg, const struct proc_map *pm)
{
	struct rt_walk *w = arg;
	const char *base = strrchr(pm->path, '/');

	if (!base || strncmp(base + 1, "libstackclock.", 14) || !strstr(base, ".so") || w->n == 16)
		return 0;
	for (int i = 0; i < w->n; i++)
		if (!strcmp(w->seen[i], pm->path))
			return 0;
	snprintf(w->seen[w->n++], PATH_MAX, "%s", pm->path);
	return 0;
}

/* How many runtimes process pid has mapped (attached to before: each one
 * stays, inert, after its detach). */
static int runtimes_in(pid_t pid)
{
	struct rt_walk *w = xcalloc(1, sizeof(*w));
	int n;

	proc_maps_each(pid, rt_map, w);
	n = w->n;
	free(w);
	return n;
}

/*
 * The runtime for this attach: its own file, or for a process that has
 * one already, a copy of it under another name (dlopen would give back the
 * one loaded: its globals and thread-local words are its first attach's).
 * A copy's name starts like the runtime's, so that no runtime ever patches
 * or hooks another.  The copy is made in a directory of its own that
 * mkdtemp created and that stays ours (0711: the target's user, whoever
 * it is, may reach the file, not list or change the directory; never
 * given away, as its owner could put a link in its place), the file
 * created in it by descriptor, O_EXCL (0755, a copy of a file anyone may
 * read).  The runtime's own directory is tried first, then /tmp, /var/tmp
 * and /dev/shm (one may be mounted noexec, where dlopen fails).  Returns
 * the path (malloc'ed), *copy set when it is a copy to remove once loaded
 * (runtime_file_drop); NULL after a one-line error.
 */
static char *runtime_file(pid_t pid, const char *runtime, int *copy, int *nbefore)
{
	char *dir = xstrdup(runtime), *slash = strrchr(dir, '/');
	const char *dirs[] = { dir, "/tmp", "/var/tmp", "/dev/shm" };
	char *path = NULL;
	int in;

	*copy = 0;
	*nbefore = runtimes_in(pid);
	if (!*nbefore) {
		free(dir);
		return xstrdup(runtime);
	}
	if (slash)
		*slash = 0;
	in = open(runtime, O_RDONLY | O_CLOEXEC);
	for (size_t d = 0; in >= 0 && d < sizeof(dirs) / sizeof(dirs[0]) && !path; d++) {
		char buf[1 << 16], *priv = xasprintf("%s/stackclock-attach-XXXXXX", dirs[d]), *name;
		ssize_t n = 1;
		int out = -1, dfd = -1, bad;
		struct stat st;

		if (!mkdtemp(priv)) {
			free(priv);
			continue;
		}
		name = xasprintf("libstackclock.attach-%d-%d.so", (int)getpid(), *nbefore);
		path = xasprintf("%s/%s", priv, name);
		dfd = open(priv, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (dfd >= 0 && !fstat(dfd, &st) && st.st_uid == geteuid() && !fchmod(dfd, 0711))
			out = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0755);
		if (out >= 0 && !lseek(in, 0, SEEK_SET)) {
			while ((n = read(in, buf, sizeof(buf))) > 0)
				if (write(out, buf, (size_t)n) != n) {
					n = -1;
					break;
				}
		}
		bad = out < 0 || n < 0 || fchmod(out, 0755);
		if (out >= 0 && close(out))
			bad = 1;
		if (bad) {
			if (out >= 0)
				unlinkat(dfd, name, 0);
			rmdir(priv);
			free(path);
			path = NULL;
		}
		if (dfd >= 0)
			close(dfd);
		free(name);
		free(priv);
	}
	if (in >= 0)
		close(in);
	free(dir);
	if (!path)
		pr_err("record: process %d was attached to before, and a copy of the runtime %s for another "
		       "attach cannot be written (in its directory, /tmp, /var/tmp or /dev/shm)", (int)pid,
		       runtime);
	*copy = path != NULL;
	return path;
}

/* Remove a copy runtime_file() made, and its private directory. */
static void runtime_file_drop(const char *path)
{
	char *dir = xstrdup(path), *slash = strrchr(dir, '/');

	unlink(path);
	if (slash) {
		*slash = 0;
		rmdir(dir);
	}
	free(dir);
}

/* ---- the control file --------------------------------------------------- */

static int wait_state(volatile struct sc_attach_ctl *ctl, uint32_t want, pid_t pid, int timeout_ms)
{
	uint64_t end = mono_ns() + (uint64_t)timeout_ms * 1000000u;

	for (;;) {
		uint32_t s = __atomic_load_n(&ctl->state, __ATOMIC_ACQUIRE);

		if (s == want)
			return 0;
		if (s == SC_ATT_FAILED)
			return -EIO;
		if (kill(pid, 0) && errno == ESRCH)
			return -ESRCH;
		if (mono_ns() > end)
			return -ETIMEDOUT;
		usleep(500);
	}
}

static char *file_in(const char *prefix, const char *suffix)
{
	return xasprintf("%s-%s", prefix, suffix);
}

/* A new file in the session's private directory, the target's own; fd or -errno. */
static int private_file(const char *path, int flags, pid_t pid)
{
	int fd = open(path, flags | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600), ret;

	if (fd < 0)
		return -errno;
	ret = give_to_proc_owner(fd, pid);
	if (ret) {
		close(fd);
		unlink(path);
		return ret;
	}
	return fd;
}

static int write_cfg(const char *path, char *const *env, pid_t pid)
{
	int fd = private_file(path, O_WRONLY, pid);
	FILE *f;

	if (fd < 0)
		return fd;
	f = fdopen(fd, "w");
	if (!f) {
		close(fd);
		return -ENOMEM;
	}
	for (int i = 0; env[i]; i++)
		fwrite(env[i], 1, strlen(env[i]) + 1, f);
	if (fclose(f))
		return -EIO;
	return 0;
}

/* The pid of a process that ended while attached: no more to wait for. */
static int gone(pid_t pid)
{
	return kill(pid, 0) && errno == ESRCH;
}

/*
 * Stop every thread but the watchdog, move them out of rs, ask for cmd and
 * wait for want.  The threads are resumed whatever happens.
 */
static void clocks_now(uint64_t *real, uint64_t *mono)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	*real = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	*mono = mono_ns();
}

/* What PATCH needs besides: the frames open, for the seed file. */
struct seed_req {
	struct attach_seeder *seeder;
	const char *path;
	struct attach_seed_stats *st;
};

/* real, mono: when the threads were stopped (DETACH), or let go
 * (PATCH): the ends of the window recorded.  seed (PATCH): the frames
 * open, written for the runtime with the threads stopped. */
static int stopped_step(struct sc_tracee *t, volatile struct sc_attach_ctl *ctl, pid_t pid,
			const struct ranges *rs, uint32_t cmd, uint32_t want, const char *what,
			uint64_t *real, uint64_t *mono, const struct seed_req *seed, uint64_t *held_ns)
{
	/* (the runtime's number for its thread: another in a pid namespace) */
	pid_t wd = (pid_t)__atomic_load_n(&ctl->watchdog_tid, __ATOMIC_ACQUIRE);

	if (wd)
		wd = sc_tracee_outer_tid(t, wd);
	uint64_t t0, until = mono_ns() + UNSAFE_WAIT_MS * 1000000ull;
	int ret, left;

	for (;;) {
		t0 = mono_ns();
		ret = sc_tracee_stop(t, &wd, wd ? 1 : 0);
		if (ret) {
			pr_err("record: cannot stop the threads of process %d to %s: %s", (int)pid, what,
			       strerror(-ret));
			return ret;
		}
		left = sc_tracee_step_out(t, rs->r, rs->n, STEP_ROUNDS);
		if (left) {
			sc_tracee_resume(t);
			pr_err("record: %d thread(s) of process %d stayed inside the code to %s; not done "
			       "(retry when it is less busy)", left < 0 ? 0 : left, (int)pid, what);
			return -EBUSY;
		}
		/* (the rounds that moved threads out of rs let them run with probes) */
		if (!seed)
			break;
		ret = attach_seed_write(seed->seeder, t, wd, rs->r, rs->n, seed->path, seed->st);
		if (ret)
			pr_warn("record: cannot write the frames open in process %d (%s): %s; the calls "
				"running at the attach are seen from their first event only", (int)pid,
				seed->path, strerror(-ret));
		if (!seed->st->unsafe)
			break;
		/* a signal handler interrupted an entry's first bytes (or a
		 * call returns there), or an exception is being unwound: let
		 * it finish first */
		sc_tracee_resume(t);
		if (mono_ns() > until) {
			pr_err("record: %" PRIu64 " thread(s) of process %d stayed %d s in a signal handler "
			       "that interrupted the first bytes of a function to patch, or in an exception's "
			       "unwinding; not attached (retry when it is less busy)", seed->st->unsafe,
			       (int)pid, UNSAFE_WAIT_MS / 1000);
			return -EBUSY;
		}
		usleep(2000);
	}
	if (cmd == SC_ATT_CMD_DETACH)
		clocks_now(real, mono);
	__atomic_store_n(&ctl->cmd, cmd, __ATOMIC_RELEASE);
	ret = wait_state(ctl, want, pid, STATE_TIMEOUT_MS);
	if (cmd == SC_ATT_CMD_PATCH)
		clocks_now(real, mono);
	sc_tracee_resume(t);
	*held_ns = mono_ns() - t0;
	if (ret)
		pr_err("record: the runtime in process %d did not %s: %s (its state %u, thread %u)%s%s",
		       (int)pid, what, ret == -ETIMEDOUT ? "no answer in 20 s" : strerror(-ret),
		       ctl->state, ctl->watchdog_tid, ctl->msg[0] ? ": " : "", (const char *)ctl->msg);
	return ret;
}

/* The objects a process has mapped executable (their paths, once each). */
struct objs {
	char **path;
	size_t n, alloc;
};

static int objs_add(void *arg, const struct proc_map *pm)
{
	struct objs *o = arg;

	if (pm->perms[2] != 'x' || pm->path[0] != '/')
		return 0;
	for (size_t i = 0; i < o->n; i++)
		if (!strcmp(o->path[i], pm->path))
			return 0;
	ALLOC_GROW(o->path, o->n + 1, o->alloc);
	o->path[o->n++] = xstrdup(pm->path);
	return 0;
}

static void objs_release(struct objs *o)
{
	for (size_t i = 0; i < o->n; i++)
		free(o->path[i]);
	free(o->path);
	memset(o, 0, sizeof(*o));
}

/*
 * The objects built with the hooks that the process loaded while attached
 * (dlopen): their calls were not counted (the runtime redirects the hooks'
 * GOT slots of the objects there at the attach only), which the user is
 * told rather than left to find rows missing.  before: the objects at the
 * attach.
 */
static void note_loaded_since(pid_t pid, const struct objs *before)
{
	struct objs now = { 0 };
	char *list = xstrdup(""), *more;
	int n = 0;

	proc_maps_each(pid, objs_add, &now);
	for (size_t i = 0; i < now.n; i++) {
		size_t k = 0;

		while (k < before->n && strcmp(before->path[k], now.path[i]))
			k++;
		if (k < before->n || strstr(now.path[i], "libstackclock") ||
		    record_elf_calls_hooks(now.path[i]) != 1)
			continue;
		more = xasprintf("%s%s%s", list, n++ ? ", " : "", now.path[i]);
		free(list);
		list = more;
	}
	if (n)
		pr_warn("record: %d object%s built with -finstrument-functions %s loaded by process %d "
			"while attached (dlopen), and %s calls are not counted: %s (a library loaded so is "
			"instrumented only when the process is started by record)", n, n > 1 ? "s" : "",
			n > 1 ? "were" : "was", (int)pid, n > 1 ? "their" : "its", list);
	free(list);
	objs_release(&now);
}

/* The initial-exec TLS of the runtime at path (its PT_TLS size), which
 * every copy an attach loads keeps of glibc's static TLS surplus (about
 * 1,700 bytes by default: 14 copies of 120); -1 if unread. */
static long tls_bytes(const char *path)
{
	Elf64_Ehdr eh;
	Elf64_Phdr ph;
	long size = -1;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd >= 0 && pread(fd, &eh, sizeof(eh), 0) == sizeof(eh) && eh.e_phentsize == sizeof(ph))
		for (int i = 0; i < eh.e_phnum && size < 0; i++)
			if (pread(fd, &ph, sizeof(ph), (off_t)(eh.e_phoff + (uint64_t)i * sizeof(ph))) ==
			    sizeof(ph) && ph.p_type == PT_TLS)
				size = (long)ph.p_memsz;
	if (fd >= 0)
		close(fd);
	return size;
}

int record_attach_run(const struct record_opts *opts, const char *runtime, const char *prefix,
		      char **env, int has_hooks, volatile struct launch_stop *stop,
		      struct record_attach_times *times)
{
	pid_t pid = opts->attach_pid;
	char *cfg = file_in(prefix, "attach.cfg"), *ctl_path = file_in(prefix, "attach.ctl");
	char *seed = file_in(prefix, "attach.seed"), *rtfile = NULL;
	int rtcopy = 0, nbefore = 0;
	struct attach_fns fns = { 0 };
	struct attach_seeder *seeder;
	struct attach_seed_stats sst;
	char err[512] = "", *full_env[40], *plans[SC_PATCH_MAX_PLANS];
	struct sc_attach_ctl *ctl = MAP_FAILED;
	struct sc_tracee *t = NULL;
	struct ranges entries = { 0 }, inside = { 0 };
	struct objs loaded = { 0 };
	int ret, n = 0, nplans = 0, callret = 0, fd = -1;
	uint64_t t0, end, end_real = 0, end_mono = 0;

	memset(times, 0, sizeof(*times));
	for (int i = 0; env[i] && n < 36; i++)
		full_env[n++] = env[i];
	full_env[n++] = xasprintf("%s=%s", SC_ATTACH_ENV_CTL, ctl_path);
	full_env[n++] = xasprintf("%s=%s", SC_ATTACH_ENV_SEED, seed);
	full_env[n] = NULL;
	ret = write_cfg(cfg, full_env, pid);
	if (!ret) {
		fd = private_file(ctl_path, O_RDWR, pid);
		ret = fd < 0 ? fd : 0;
	}
	if (!ret) {
		ret = ftruncate(fd, (off_t)sizeof(*ctl)) ? -errno : 0;
	}
	if (!ret) {
		ctl = mmap(NULL, sizeof(*ctl), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		ret = ctl == MAP_FAILED ? -errno : 0;
	}
	/* the sign of this recorder's life the runtime watches (attach.h):
	 * held until the end, dropped by the kernel however the recorder ends */
	if (!ret && fcntl(fd, F_OFD_SETLK, &(struct flock){ .l_type = F_WRLCK, .l_whence = SEEK_SET }))
		ret = -errno;
	if (ret) {
		pr_err("record: cannot write the attach files %s*: %s (set STACKCLOCK_SHM_DIR to a "
		       "writable directory)", prefix, strerror(-ret));
		goto out;
	}
	ctl->magic = SC_ATTACH_MAGIC;
	ctl->version = SC_ATTACH_VERSION;
	ctl->hooks = has_hooks == 1;

	/* where the plans' entries are: no thread may be stopped in them */
	for (int i = 0; env[i]; i++) {
		size_t len = strlen(SC_PATCH_ENV);
		char *s, *save = NULL, *list;

		if (strncmp(env[i], SC_PATCH_ENV, len) || env[i][len] != '=')
			continue;
		list = xstrdup(env[i] + len + 1);
		for (s = strtok_r(list, ":", &save); s && nplans < SC_PATCH_MAX_PLANS; s = strtok_r(NULL, ":", &save))
			plans[nplans++] = xstrdup(s);
		free(list);
	}

	t0 = mono_ns();
	rtfile = runtime_file(pid, runtime, &rtcopy, &nbefore);
	if (!rtfile) {
		ret = -EIO;
		goto out;
	}
	ret = sc_tracee_seize(pid, &t, err, sizeof(err));
	if (ret) {
		pr_err("record: cannot attach to process %d: %s", (int)pid, err);
		goto out;
	}
	ret = sc_tracee_call(t, rtfile, SC_ATTACH_ENTRY, cfg, CALL_TIMEOUT_MS, &callret, err, sizeof(err));
	if (rtcopy && ret != -ETIMEDOUT)
		runtime_file_drop(rtfile); /* mapped now, or never */
	if (ret && strstr(err, "static TLS")) {
		pr_err("record: cannot load another runtime into process %d: it was attached to %d times, "
		       "and the C library's static TLS has no room left for one more (each attach keeps "
		       "%ld bytes of it; %s); restart it to attach again, with "
		       "GLIBC_TUNABLES=glibc.rtld.optional_static_tls=8192 in its environment for room "
		       "for over 60", (int)pid, nbefore, tls_bytes(runtime), err);
		goto release;
	}
	if (ret || callret) {
		pr_err("record: cannot load the runtime into process %d: %s%s%s", (int)pid,
		       ret ? err : strerror(callret < 0 ? -callret : callret), ctl->msg[0] ? ": " : "",
		       ctl->msg);
		if (!ret)
			ret = -EIO;
		goto release;
	}
	/* the watchdog's thread id is what the stops leave running */
	for (int i = 0; i < 5000 && !__atomic_load_n(&ctl->watchdog_tid, __ATOMIC_ACQUIRE); i++)
		usleep(1000);
	if (!ctl->watchdog_tid) {
		pr_err("record: the runtime's thread in process %d did not start within 5 s; nothing "
		       "was patched (retry when the process is less busy)", (int)pid);
		ret = -ETIMEDOUT;
		goto release;
	}
	plan_ranges(pid, plans, nplans, &entries, &fns);
	seeder = attach_seeder_new(pid, &fns, has_hooks == 1);
	ret = stopped_step(t, ctl, pid, &entries, SC_ATT_CMD_PATCH, SC_ATT_PATCHED, "apply the plans",
			   &times->window_real_ns, &times->window_mono_ns,
			   &(struct seed_req){ seeder, seed, &sst }, &times->held_ns);
	attach_seeder_free(seeder);
	if (ret)
		goto release;
	times->attach_ns = mono_ns() - t0;
	times->patch_ns = ctl->patch_ns;
	times->seed_threads = ctl->seed_threads;
	times->seed_frames = ctl->seed_frames;
	times->seed_partial = sst.partial;
	times->sites = ctl->sites;
	times->got_slots = ctl->got_slots;
	/* no ptrace while recording: a signal to the target would wait for us */
	sc_tracee_release(t);
	t = NULL;
	proc_maps_each(pid, objs_add, &loaded);

	/* record: --duration, Ctrl-C (stop), or the process's end */
	end = opts->duration_s > 0 ? mono_ns() + (uint64_t)(opts->duration_s * 1e9) : UINT64_MAX;
	while (!stop->count && mono_ns() < end && !gone(pid))
		usleep(2000);
	times->window_ns = mono_ns() - times->window_mono_ns;
	if (gone(pid)) {
		times->target_ended = 1;
		ret = 0;
		goto release;
	}
	t0 = mono_ns();
	for (uint32_t i = 0; i < ctl->nranges && i < SC_ATTACH_RANGES; i++)
		range_add(&inside, ctl->ranges[i].lo, ctl->ranges[i].hi);
	ret = sc_tracee_seize(pid, &t, err, sizeof(err));
	if (ret) {
		pr_err("record: cannot attach to process %d again to detach: %s (its runtime puts the "
		       "code back by itself when this recorder ends)", (int)pid, err);
		goto release;
	}
	ret = stopped_step(t, ctl, pid, &inside, SC_ATT_CMD_DETACH, SC_ATT_DETACHED, "detach", &end_real,
			   &end_mono, NULL, &times->detach_held_ns);
	if (end_mono > times->window_mono_ns)
		times->window_ns = end_mono - times->window_mono_ns;
	times->detach_ns = mono_ns() - t0;
	if (!ret)
		note_loaded_since(pid, &loaded);
	times->restore_ns = ctl->restore_ns;
	times->sites_restored = ctl->sites_restored;
	times->frames_restored = ctl->frames_restored;
	times->seed_used = ctl->seed_used;
release:
	if (t)
		sc_tracee_release(t);
out:
	if (ctl != MAP_FAILED)
		munmap(ctl, sizeof(*ctl));
	if (fd >= 0)
		close(fd);
	unlink(cfg);
	unlink(ctl_path);
	free(cfg);
	free(ctl_path);
	free(full_env[n - 1]);
	free(full_env[n - 2]);
	unlink(seed);
	free(seed);
	free(rtfile);
	free(fns.v);
	for (int i = 0; i < nplans; i++)
		free(plans[i]);
	free(entries.r);
	free(inside.r);
	objs_release(&loaded);
	return ret;
}
