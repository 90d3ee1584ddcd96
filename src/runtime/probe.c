/*
 * probe — the runtime injected (LD_PRELOAD) into a program built with
 * -finstrument-functions.  It defines the two hooks the compiler calls and
 * feeds each thread's events to the attribution engine (engine.h), whose
 * state lives in a shared-memory file the recorder reads afterwards (shm.h).
 *
 * Hot path, per event: one initial-exec TLS load, rdtsc, one compare of
 * the thread's perf ring head with the last one seen (the kernel logs the
 * thread's context switches, system calls and page faults there), then the
 * engine's few loads and stores.  No locks, no allocation, no system call.
 * Everything else is a rare path: a thread's first event (state, perf
 * events), a new calling context or call site (the module holding it),
 * more memory (fallocate), OS records to read, fork.
 *
 * Paranoia: this code runs inside someone else's process.  It never writes
 * to the target's stdout/stderr, never exits it, keeps its symbols hidden
 * (runtime.map exports the hooks only), and a probe that interrupts a probe
 * (a signal handler) is dropped and counted rather than corrupting state.
 * When the shared memory or the kernel's perf events are refused, the
 * program runs as it would without us and the loss is recorded.
 */
/* Vectorised pairs of loads over the frame just pushed stall on store
 * forwarding; scalar code is faster here. */
#pragma GCC optimize("no-tree-slp-vectorize")

#include "runtime/shm.h"
#include "format/scdata.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

#define HOOK __attribute__((visibility("default")))
#define barrier() __asm__ __volatile__("" ::: "memory")

#define RING_PAGES 4          /* data pages of a thread's OS-event ring */

enum { EV_SWITCH, EV_SYS_ENTER, EV_SYS_EXIT, EV_FAULT, NEV };

/* A thread's perf events and the reading state of their common ring. */
struct rt_ring {
	struct perf_event_mmap_page *pg;
	uint8_t *data;
	uint64_t mask;                 /* data size - 1 */
	size_t map_len;
	uint64_t id[NEV];              /* sample ids, 0 if not opened */
	int in_sys, out, depth;        /* measuring OS time (exact mode) */
	uint64_t since;                /* ns when depth went 0 -> 1 */
};

/* An event that arrived while a probe of the same thread was running (a
 * signal handler's), kept for that probe to apply when it is done. */
struct rt_pending {
	uint64_t fn, site, tsc;
	uint64_t is_exit;
};
#define RT_PENDING 64

struct rt_tls {
	struct sc_eng_thread *t;       /* the thread's engine state, or NULL */
	uintptr_t busy;                /* stack pointer of the probe running, 0 */
	const volatile uint64_t *ring_head;
	uint64_t ring_seen;
	uint32_t npending;             /* events in pending[] */
	int state;                     /* RT_* */
	uint64_t pending_lost;
	struct rt_pending pending[RT_PENDING];
	struct rt_ring ring;
};
enum { RT_NEW, RT_ON, RT_OFF };

static __thread struct rt_tls tls __attribute__((tls_model("initial-exec")));

static struct {
	int state;                     /* RT_NEW until init, then RT_ON / RT_OFF */
	int fd;                        /* our file, see shm_fd() */
	dev_t dev;
	ino_t ino;
	struct sc_shm_header *hdr;
	struct sc_eng_arena arena;
	char path[512];
	char prefix[400];
	uint32_t os_mask;
	uint64_t tp_enter, tp_exit;
	uint64_t clock0_tsc, clock0_ns;  /* a (tsc, monotonic) pair from early on */
	long fds_held, fds_budget;       /* perf fds open; at most a quarter of
	                                    RLIMIT_NOFILE, the rest is the program's */
	pthread_key_t key;
	int rebuilding;
} rt;
static pthread_once_t rt_once = PTHREAD_ONCE_INIT;

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + ts.tv_nsec;
}

/*
 * OS records are timed in CLOCK_MONOTONIC nanoseconds, probes in TSC ticks.
 * The kernel does not always publish its TSC rate (cap_user_time), so the
 * rate is measured from a pair taken early (the recorder's, passed in the
 * environment, else our own) to now: rare path only.
 */
static uint64_t ns_to_ticks(uint64_t ns)
{
	uint64_t tsc = __rdtsc(), mono = mono_ns();

	if (mono <= rt.clock0_ns || tsc <= rt.clock0_tsc)
		return ns;
	return (uint64_t)((double)ns * (double)(tsc - rt.clock0_tsc) / (double)(mono - rt.clock0_ns));
}

/* ---- OS events ------------------------------------------------------- */

/* Forget what is in the ring now: our own system calls made it. */
static void ring_discard(void)
{
	struct rt_ring *r = &tls.ring;
	uint64_t head;

	if (!r->pg)
		return;
	head = __atomic_load_n(&r->pg->data_head, __ATOMIC_ACQUIRE);
	__atomic_store_n(&r->pg->data_tail, head, __ATOMIC_RELEASE);
	tls.ring_seen = head;
}

static void ring_copy(const struct rt_ring *r, uint64_t pos, void *dst, size_t len)
{
	size_t off = pos & r->mask, first = r->mask + 1 - off;

	if (first >= len) {
		memcpy(dst, r->data + off, len);
	} else {
		memcpy(dst, r->data + off, first);
		memcpy((uint8_t *)dst + first, r->data, len - first);
	}
}

static void os_start(struct rt_ring *r, uint64_t ns)
{
	if (r->depth++ == 0)
		r->since = ns;
}

static uint64_t os_end(struct rt_ring *r, uint64_t ns)
{
	if (r->depth > 0 && --r->depth == 0 && ns > r->since)
		return ns - r->since;
	return 0;
}

/*
 * Free bytes in the ring below which the kernel may have refused a record
 * in the interval being drained: our largest record (24 bytes) plus the
 * PERF_RECORD_LOST (40 bytes) it would carry, plus slack.
 */
#define RING_OVERFLOW_FREE 128

/*
 * The ring head moved: read the new records, count them per category, and
 * charge the interval ending now as OS-bound with the OS time measured in it
 * (switch-out to switch-in, sys_enter to sys_exit, their union).
 *
 * The ring is empty at the start of every interval (each drain consumes all
 * of it), so records can only be lost in an interval that filled it: that
 * interval is OS-bound under the interval rule anyway, and since its
 * measured OS time is then short by the lost records, it is charged as OS
 * time whole in the exact mode too.  The kernel reports the loss (a
 * PERF_RECORD_LOST) only with the next record it manages to write, in a
 * later interval: counted then.
 */
static __attribute__((noinline, cold)) void rt_os_drain(struct sc_eng_thread *t, uint64_t now)
{
	struct rt_ring *r = &tls.ring;
	uint64_t head = __atomic_load_n(&r->pg->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = tls.ring_seen, os_ns = 0;
	int bound = 0, overflow = head - tail > r->mask + 1 - RING_OVERFLOW_FREE;

	while (tail < head) {
		struct perf_event_header h;
		uint64_t rec[4];

		ring_copy(r, tail, &h, sizeof(h));
		if (h.size < sizeof(h) || h.size > head - tail) {
			bound = 1;
			break;
		}
		if (h.size >= sizeof(h) + 16)
			ring_copy(r, tail + sizeof(h), rec, 16);
		else
			rec[0] = rec[1] = 0;
		switch (h.type) {
		case PERF_RECORD_SAMPLE:           /* {identifier, time} */
			bound = 1;
			if (rec[0] == r->id[EV_SYS_ENTER]) {
				t->os_count[SC_OS_SYSCALL]++;
				if (!r->in_sys) {
					r->in_sys = 1;
					os_start(r, rec[1]);
				}
			} else if (rec[0] == r->id[EV_SYS_EXIT]) {
				if (r->in_sys) {
					r->in_sys = 0;
					os_ns += os_end(r, rec[1]);
				}
			} else if (rec[0] == r->id[EV_FAULT]) {
				t->os_count[SC_OS_FAULT]++;
			}
			break;
		case PERF_RECORD_SWITCH:           /* sample_id: {time, identifier} */
			bound = 1;
			if (h.misc & PERF_RECORD_MISC_SWITCH_OUT) {
				t->os_count[SC_OS_SWITCH]++;
				if (!r->out) {
					r->out = 1;
					os_start(r, rec[0]);
				}
			} else if (r->out) {
				r->out = 0;
				os_ns += os_end(r, rec[0]);
			}
			break;
		case PERF_RECORD_LOST:             /* {id, lost} */
			bound = 1;
			t->os_lost += rec[1];
			break;
		default:
			break;
		}
		tail += h.size;
	}
	__atomic_store_n(&r->pg->data_tail, head, __ATOMIC_RELEASE);
	tls.ring_seen = head;
	/* We run user code again: whatever was open has ended. */
	r->in_sys = r->out = r->depth = 0;
	if (overflow)
		sc_eng_os(t, now);
	else if (bound)
		sc_eng_os_exact(t, now, os_ns ? ns_to_ticks(os_ns) : 0);
}

static long perf_open(struct perf_event_attr *a)
{
	long fd = syscall(SYS_perf_event_open, a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);

	if (fd < 0 && !a->exclude_kernel && (errno == EACCES || errno == EPERM)) {
		a->exclude_kernel = 1;
		fd = syscall(SYS_perf_event_open, a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	}
	return fd;
}

/*
 * Each thread's perf fds are kept (+1, 0 = none) in t->user[0..3] and their
 * event ids in t->user[4..7], so that they are closed at thread exit, and in
 * a forked child, only if they are still ours: a program may close fds it
 * does not know of and reuse the numbers.
 */
static void close_events(struct sc_eng_thread *t)
{
	int i;

	for (i = 0; i < NEV; i++) {
		uint64_t id = 0;
		int fd = (int)t->user[i] - 1;

		if (t->user[i] && !ioctl(fd, PERF_EVENT_IOC_ID, &id) && id == t->user[NEV + i]) {
			close(fd);
			__atomic_fetch_sub(&rt.fds_held, 1, __ATOMIC_RELAXED);
		}
		t->user[i] = t->user[NEV + i] = 0;
	}
}

static void os_close(struct sc_eng_thread *t)
{
	if (tls.ring.pg)
		munmap(tls.ring.pg, tls.ring.map_len);
	memset(&tls.ring, 0, sizeof(tls.ring));
	tls.ring_head = &tls.ring_seen;
	if (t)
		close_events(t);
}

static void os_failed(uint32_t cats)
{
	__atomic_fetch_or(&rt.hdr->os_failed, cats, __ATOMIC_RELAXED);
}

static void os_opened(uint32_t cats)
{
	__atomic_fetch_or(&rt.hdr->os_opened, cats, __ATOMIC_RELAXED);
}

/* Open one more event into the ring; 0 or -1. */
static int os_add(struct sc_eng_thread *t, int which, uint32_t type, uint64_t config, int leader)
{
	struct perf_event_attr a;
	uint64_t id = 0;
	long fd;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = type;
	a.config = config;
	a.sample_period = 1;
	a.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TIME;
	a.sample_id_all = 1;
	a.use_clockid = 1;
	a.clockid = CLOCK_MONOTONIC;
	a.exclude_hv = 1;
	fd = perf_open(&a);
	if (fd < 0)
		return -1;
	if (ioctl((int)fd, PERF_EVENT_IOC_SET_OUTPUT, leader) < 0 ||
	    ioctl((int)fd, PERF_EVENT_IOC_ID, &id) < 0) {
		close((int)fd);
		return -1;
	}
	t->user[which] = (uint64_t)fd + 1;
	t->user[NEV + which] = id;
	__atomic_fetch_add(&rt.fds_held, 1, __ATOMIC_RELAXED);
	tls.ring.id[which] = id;
	return 0;
}

/*
 * Ask the kernel to log this thread's OS events into a small ring: a dummy
 * event carrying context-switch records, the syscall tracepoints and the
 * page-fault event redirected into it.  What is refused is recorded.
 */
static void os_open(struct sc_eng_thread *t)
{
	uint32_t want = rt.os_mask;
	struct perf_event_attr a;
	struct rt_ring *r = &tls.ring;
	long page = sysconf(_SC_PAGESIZE);
	void *map;
	long fd;

	tls.ring_head = &tls.ring_seen;
	if (!want)
		return;
	if (__atomic_load_n(&rt.fds_held, __ATOMIC_RELAXED) + NEV > rt.fds_budget) {
		os_failed(want);           /* so many threads: leave fds to the program */
		return;
	}
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_DUMMY;
	a.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TIME;
	a.sample_id_all = 1;
	a.use_clockid = 1;
	a.clockid = CLOCK_MONOTONIC;
	a.exclude_hv = 1;
	a.context_switch = !!(want & SC_OS_BIT(SC_OS_SWITCH));
	fd = perf_open(&a);
	if (fd < 0) {
		os_failed(want);
		return;
	}
	r->map_len = (size_t)(1 + RING_PAGES) * page;
	map = mmap(NULL, r->map_len, PROT_READ | PROT_WRITE, MAP_SHARED, (int)fd, 0);
	if (map == MAP_FAILED) {
		close((int)fd);
		os_failed(want);
		return;
	}
	t->user[EV_SWITCH] = (uint64_t)fd + 1;
	if (!ioctl((int)fd, PERF_EVENT_IOC_ID, &t->user[NEV + EV_SWITCH]))
		tls.ring.id[EV_SWITCH] = t->user[NEV + EV_SWITCH];
	__atomic_fetch_add(&rt.fds_held, 1, __ATOMIC_RELAXED);
	r->pg = map;
	r->data = (uint8_t *)map + page;
	r->mask = (uint64_t)RING_PAGES * page - 1;
	if (want & SC_OS_BIT(SC_OS_SWITCH))
		os_opened(SC_OS_BIT(SC_OS_SWITCH));
	if (want & SC_OS_BIT(SC_OS_SYSCALL)) {
		if (rt.tp_enter && rt.tp_exit &&
		    !os_add(t, EV_SYS_ENTER, PERF_TYPE_TRACEPOINT, rt.tp_enter, (int)fd) &&
		    !os_add(t, EV_SYS_EXIT, PERF_TYPE_TRACEPOINT, rt.tp_exit, (int)fd))
			os_opened(SC_OS_BIT(SC_OS_SYSCALL));
		else
			os_failed(SC_OS_BIT(SC_OS_SYSCALL));
	}
	if (want & SC_OS_BIT(SC_OS_FAULT)) {
		if (!os_add(t, EV_FAULT, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS, (int)fd))
			os_opened(SC_OS_BIT(SC_OS_FAULT));
		else
			os_failed(SC_OS_BIT(SC_OS_FAULT));
	}
	tls.ring_head = (const volatile uint64_t *)&r->pg->data_head;
	ring_discard();
}

/* ---- shared memory ---------------------------------------------------- */

/*
 * Back [off, off+len) of the arena before first use: fallocate (a full
 * tmpfs fails here rather than with SIGBUS later), then map the pages in
 * now, so that the page faults are ours, made here, and forgotten with the
 * ring's records instead of being charged to the program.
 */
/* A descriptor of our file far from the small numbers programs expect. */
static int fd_high(int fd)
{
	int hi = fcntl(fd, F_DUPFD_CLOEXEC, 700);

	if (hi < 0)
		return fd;
	close(fd);
	return hi;
}

/*
 * Our file's descriptor, checked: a program may have closed it (daemons
 * close every fd) and reused the number, and fallocate() must never touch
 * a file of the program's.  Reopened by name if so; -1 if that fails.
 */
static int shm_fd(void)
{
	int fd = __atomic_load_n(&rt.fd, __ATOMIC_RELAXED), nfd;
	struct stat st;

	if (fd >= 0 && !fstat(fd, &st) && st.st_dev == rt.dev && st.st_ino == rt.ino)
		return fd;
	nfd = open(rt.path, O_RDWR | O_CLOEXEC);
	if (nfd < 0 || fstat(nfd, &st) || st.st_dev != rt.dev || st.st_ino != rt.ino) {
		if (nfd >= 0)
			close(nfd);
		return -1;
	}
	nfd = fd_high(nfd);
	if (!__atomic_compare_exchange_n(&rt.fd, &fd, nfd, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
		close(nfd);
		return fd;
	}
	return nfd;
}

static int rt_commit(struct sc_eng_arena *a, uint64_t off, uint64_t len)
{
	int fd = shm_fd();
	int ret = fd < 0 ? -1 : fallocate(fd, 0, (off_t)off, (off_t)len);

	if (!ret) {
		uint8_t *p = a->base + off, *end = p + len;
		uintptr_t page = 4096, start = (uintptr_t)p & ~(page - 1);

		if (madvise((void *)start, (size_t)((uintptr_t)end - start), MADV_POPULATE_WRITE))
			for (p = (uint8_t *)start; p < end; p += page)
				*(volatile uint8_t *)p = *(volatile uint8_t *)p;
	}
	ring_discard();
	return ret ? -1 : 0;
}

static void module_add(uint64_t base, const char *path)
{
	struct sc_shm_header *h = rt.hdr;
	uint32_t i, n = __atomic_load_n(&h->nmodules, __ATOMIC_ACQUIRE);
	size_t len = strlen(path);
	uint64_t off;

	if (len >= SC_SHM_PATH_MAX)
		len = SC_SHM_PATH_MAX - 1;
	/* known if the same object is at the same place (a library unloaded
	 * and another loaded at its address is a new one) */
	for (i = 0; i < n && i < SC_SHM_MAX_MODULES; i++)
		if (__atomic_load_n(&h->modules[i].valid, __ATOMIC_ACQUIRE) && h->modules[i].base == base &&
		    h->modules[i].path_len == len &&
		    !memcmp(rt.arena.base + h->modules[i].path_off, path, len))
			return;
	i = __atomic_fetch_add(&h->nmodules, 1, __ATOMIC_RELAXED);
	off = i < SC_SHM_MAX_MODULES ? sc_eng_alloc(&rt.arena, len + 1) : 0;
	if (!off) {
		__atomic_fetch_add(&h->modules_lost, 1, __ATOMIC_RELAXED);
		return;
	}
	memcpy(rt.arena.base + off, path, len);
	rt.arena.base[off + len] = 0;
	h->modules[i].base = base;
	h->modules[i].path_off = off;
	h->modules[i].path_len = (uint32_t)len;
	__atomic_store_n(&h->modules[i].valid, 1, __ATOMIC_RELEASE);
}

/* A new calling context or call site: make sure the recorder will know the
 * module holding addr. */
static void rt_newaddr(struct sc_eng_arena *a, uint64_t addr)
{
	struct link_map *lm = NULL;
	Dl_info info;

	(void)a;
	if (rt.rebuilding)
		return;
	if (!dladdr1((void *)addr, &info, (void **)&lm, RTLD_DL_LINKMAP) || !info.dli_fbase || !lm)
		return;
	/* dli_fbase (where the object's first page is mapped) is what
	 * SC_MOD_BASE records carry; the main program's link map has no name
	 * (and dli_fname may be relative): its path is /proc/self/exe's */
	module_add((uint64_t)info.dli_fbase, lm->l_name && lm->l_name[0] ? lm->l_name : rt.hdr->exe);
}

/* Create this image's file, map it, write the header.  0 or -1. */
static int image_open(const char *parent_file)
{
	struct sc_shm_header *h;
	struct stat st;
	int fd = -1, n;
	void *map;

	for (n = 0; n < 10000; n++) {
		snprintf(rt.path, sizeof(rt.path), "%s.%d.%d", rt.prefix, (int)getpid(), n);
		fd = open(rt.path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		if (fd >= 0 || errno != EEXIST)
			break;
	}
	if (fd < 0)
		return -1;
	if (ftruncate(fd, (off_t)SC_SHM_ARENA_SIZE) ||
	    fallocate(fd, 0, 0, (off_t)SC_SHM_HEADER_SIZE))
		goto fail;
	map = mmap(NULL, SC_SHM_ARENA_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, fd, 0);
	if (map == MAP_FAILED)
		goto fail;
	h = map;
	h->arena.size = SC_SHM_ARENA_SIZE;
	h->arena.bump = SC_SHM_HEADER_SIZE;
	h->version = SC_SHM_VERSION;
	h->pid = (uint32_t)getpid();
	h->ppid = (uint32_t)getppid();
	h->start_tsc = __rdtsc();
	h->start_ns = mono_ns();
	h->os_requested = rt.os_mask;
	if (parent_file) {
		const char *slash = strrchr(parent_file, '/');
		snprintf(h->parent_file, sizeof(h->parent_file), "%s", slash ? slash + 1 : parent_file);
		h->flags |= SC_SHM_FORKED;
	}
	n = (int)readlink("/proc/self/exe", h->exe, sizeof(h->exe) - 1);
	h->exe[n > 0 ? n : 0] = 0;
	rt.fd = fd_high(fd);
	if (!fstat(rt.fd, &st)) {
		rt.dev = st.st_dev;
		rt.ino = st.st_ino;
	}
	rt.hdr = h;
	sc_eng_arena_attach(&rt.arena, map, SC_SHM_ARENA_SIZE);
	rt.arena.commit = rt_commit;
	rt.arena.newaddr = rt_newaddr;
	__atomic_store_n(&h->magic, SC_SHM_MAGIC, __ATOMIC_RELEASE);
	return 0;
fail:
	close(fd);
	unlink(rt.path);
	return -1;
}

/* ---- threads and processes -------------------------------------------- */

static void thread_name(struct sc_eng_thread *t)
{
	char name[17] = { 0 };

	if (!prctl(PR_GET_NAME, name))
		memcpy(t->name, name, sizeof(t->name));
}

static inline uintptr_t stack_pointer(void)
{
	uintptr_t sp;

	__asm__ volatile("mov %%rsp, %0" : "=r"(sp));
	return sp;
}

/* pthread key destructor: the thread is ending. */
static void rt_thread_exit(void *arg)
{
	struct sc_eng_thread *t = arg;

	tls.busy = stack_pointer();    /* a signal's probes wait meanwhile */
	barrier();
	os_close(t);
	thread_name(t);
	barrier();
	tls.busy = 0;
}

static void rt_atfork_child(void);

static void rt_process_init(void)
{
	const char *prefix = getenv(SC_SHM_ENV_PREFIX), *s;
	struct rlimit lim;

	rt.state = RT_OFF;
	if (!prefix || !*prefix || strlen(prefix) >= sizeof(rt.prefix))
		return;
	snprintf(rt.prefix, sizeof(rt.prefix), "%s", prefix);
	s = getenv(SC_SHM_ENV_OS);
	rt.os_mask = s ? (uint32_t)strtoul(s, NULL, 10) & SC_OS_ALL : SC_OS_ALL;
	s = getenv(SC_SHM_ENV_CLOCK0);
	if (s) {
		char *end;
		rt.clock0_tsc = strtoull(s, &end, 10);
		rt.clock0_ns = *end == ',' ? strtoull(end + 1, NULL, 10) : 0;
	}
	if (!rt.clock0_ns) {
		rt.clock0_tsc = __rdtsc();
		rt.clock0_ns = mono_ns();
	}
	s = getenv(SC_SHM_ENV_TP);
	if (s) {
		char *end;
		rt.tp_enter = strtoull(s, &end, 10);
		rt.tp_exit = *end == ',' ? strtoull(end + 1, NULL, 10) : 0;
	}
	if (!getrlimit(RLIMIT_NOFILE, &lim) && lim.rlim_cur != RLIM_INFINITY)
		rt.fds_budget = (long)(lim.rlim_cur / 4);
	else
		rt.fds_budget = 1 << 16;
	if (image_open(NULL))
		return;
	if (pthread_key_create(&rt.key, rt_thread_exit))
		return;
	pthread_atfork(NULL, NULL, rt_atfork_child);
	rt.state = RT_ON;
}

/* A thread's first event: its engine state, its OS-event ring. */
static struct sc_eng_thread *thread_start(void)
{
	struct sc_eng_thread *t;

	tls.state = RT_OFF;            /* while starting, probes are ignored */
	barrier();
	pthread_once(&rt_once, rt_process_init);
	if (rt.state != RT_ON)
		return NULL;
	t = sc_eng_thread_new(&rt.arena, (uint32_t)syscall(SYS_gettid), __rdtsc());
	if (!t) {
		__atomic_fetch_add(&rt.hdr->arena.lost, 1, __ATOMIC_RELAXED);
		return NULL;
	}
	thread_name(t);
	os_open(t);
	pthread_setspecific(rt.key, t);
	tls.t = t;
	tls.state = RT_ON;
	return t;
}

/*
 * In the child of fork(): the parent's file, ring and perf fds are not ours.
 * Start a new file for this image and rebuild the forking thread's stack in
 * it, so that the exits to come balance; the other threads do not exist
 * here.  Only system calls and the engine: fork may have left locks held.
 */
static void rt_atfork_child(void)
{
	struct sc_eng_arena old_arena = rt.arena;
	struct sc_eng_thread *old_t = tls.t, *t = NULL;
	struct sc_shm_header *old_hdr = rt.hdr;
	char old_path[512];
	uint64_t off, now;
	uint32_t i;
	int old_fd = rt.fd;
	struct stat st;

	if (rt.state != RT_ON)
		return;
	if (fstat(old_fd, &st) || st.st_dev != rt.dev || st.st_ino != rt.ino)
		old_fd = -1;               /* closed by the program: not ours now */
	memcpy(old_path, rt.path, sizeof(old_path));
	memset(&tls.ring, 0, sizeof(tls.ring));      /* the ring was not inherited */
	tls.ring_head = &tls.ring_seen;
	tls.t = NULL;
	tls.npending = 0;
	for (off = old_hdr->arena.threads; off && off < old_arena.size;) {
		struct sc_eng_thread *o = (struct sc_eng_thread *)(old_arena.base + off);
		uint64_t ids[2 * NEV];

		/* close the inherited fds, but leave the parent's records alone */
		memcpy(ids, o->user, sizeof(ids));
		close_events(o);
		memcpy(o->user, ids, sizeof(ids));
		off = o->next_off;
	}
	rt.fds_held = 0;
	if (image_open(old_path)) {
		rt.state = RT_OFF;
		tls.state = RT_OFF;
		munmap(old_arena.base, old_arena.size);
		if (old_fd >= 0)
			close(old_fd);
		return;
	}
	for (i = 0; i < old_hdr->nmodules && i < SC_SHM_MAX_MODULES; i++)
		if (old_hdr->modules[i].valid)
			module_add(old_hdr->modules[i].base,
				   (const char *)old_arena.base + old_hdr->modules[i].path_off);
	now = __rdtsc();
	if (old_t) {
		t = sc_eng_thread_new(&rt.arena, (uint32_t)syscall(SYS_gettid), now);
		if (t) {
			rt.rebuilding = 1;
			sc_eng_rebuild(t, old_t->stack, (uint64_t)(old_t->top - old_t->stack), now);
			rt.rebuilding = 0;
			memcpy(t->name, old_t->name, sizeof(t->name));
		}
	}
	munmap(old_arena.base, old_arena.size);
	if (old_fd >= 0)
		close(old_fd);
	tls.state = t ? RT_ON : RT_NEW;
	if (t) {
		pthread_setspecific(rt.key, t);
		os_open(t);
		tls.t = t;
	}
}

/* The image ends (exit, or return from main): note when. */
static __attribute__((destructor)) void rt_fini(void)
{
	if (rt.state != RT_ON)
		return;
	rt.hdr->end_tsc = __rdtsc();
	__atomic_fetch_or(&rt.hdr->flags, SC_SHM_ENDED, __ATOMIC_RELEASE);
	if (tls.t)
		thread_name(tls.t);
}

/* ---- the hooks --------------------------------------------------------- */

/*
 * The hooks.  The common case is inline and free of calls (so the compiler
 * gives the hooks no stack frame); everything else is in probe_slow().
 *
 * Signal handlers: while a probe runs, tls.busy holds its stack pointer.  A
 * probe of a signal handler that interrupted it must not touch the engine;
 * it queues its event, and the interrupted probe applies the queue before it
 * returns.  A handler may also never return to the interrupted probe
 * (siglongjmp): the next probe then runs with a stack pointer above the
 * abandoned one's, takes over, and applies the queue.  The engine's state
 * is consistent at every instruction boundary but the stores that update a
 * frame, so an abandoned probe costs at most one call's statistics.
 */
static void probe_apply(struct sc_eng_thread *t, uint64_t fn, uint64_t site, uint64_t now, int is_exit)
{
	if (*tls.ring_head != tls.ring_seen)
		rt_os_drain(t, now);
	if (is_exit)
		sc_eng_exit(t, fn, now);
	else
		sc_eng_enter(t, fn, site, now);
}

/* Apply the events queued by signal handlers (with tls.busy set). */
static __attribute__((noinline, cold)) void probe_replay(struct sc_eng_thread *t)
{
	uint32_t i = 0, n;

	for (;;) {
		n = __atomic_load_n(&tls.npending, __ATOMIC_RELAXED);
		for (; i < n && i < RT_PENDING; i++) {
			const struct rt_pending *e = &tls.pending[i];
			probe_apply(t, e->fn, e->site, e->tsc, (int)e->is_exit);
		}
		if (__atomic_compare_exchange_n(&tls.npending, &n, 0, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
			break;
	}
	t->lost_nested += tls.pending_lost;
	tls.pending_lost = 0;
}

static __attribute__((noinline, cold)) void probe_replay_done(struct sc_eng_thread *t)
{
	probe_replay(t);
	barrier();
	tls.busy = 0;
}

/* Finish a probe: queued events first, then the thread is free again. */
static inline void probe_done(struct sc_eng_thread *t)
{
	barrier();
	if (unlikely(tls.npending)) {
		probe_replay_done(t);      /* a tail call: the hooks need no frame */
	} else {
		barrier();
		tls.busy = 0;
	}
}

static __attribute__((noinline)) void probe_slow(struct sc_eng_thread *t, uint64_t fn, uint64_t site,
						 uint64_t now, int is_exit)
{
	probe_apply(t, fn, site, now, is_exit);
	probe_done(t);
}

static int on_alt_stack(void)
{
	stack_t ss;

	return !sigaltstack(NULL, &ss) && (ss.ss_flags & SS_ONSTACK);
}

/*
 * A probe with no engine state (first event, off) or inside a probe.  sp is
 * the hook's stack pointer: compared with the running probe's, it tells a
 * signal handler (below it) from code a longjmp took back above it.
 */
static __attribute__((noinline, cold)) void probe_cold(uint64_t fn, uint64_t site, int is_exit,
						       uintptr_t sp)
{
	uint64_t now = __rdtsc();
	struct sc_eng_thread *t = tls.t;

	if (tls.busy) {
		uint32_t n = tls.npending;

		if (!t || sp < tls.busy || on_alt_stack()) {
			/* a signal handler inside a probe: queue the event */
			if (n >= RT_PENDING) {
				tls.pending_lost++;
				return;
			}
			tls.pending[n] = (struct rt_pending){ fn, site, now, (uint64_t)is_exit };
			barrier();
			tls.npending = n + 1;
			return;
		}
		/* the probe that was running was left by a longjmp: take over */
		tls.busy = sp;
		barrier();
		if (tls.npending)
			probe_replay(t);
		probe_slow(t, fn, site, now, is_exit);
		return;
	}
	if (t || tls.state != RT_NEW) {
		if (rt.state == RT_ON && tls.state == RT_OFF && rt.hdr)
			__atomic_fetch_add(&rt.hdr->arena.lost, 1, __ATOMIC_RELAXED);
		return;
	}
	tls.busy = sp;
	barrier();
	t = thread_start();
	if (!t) {
		tls.busy = 0;
		return;
	}
	probe_slow(t, fn, site, __rdtsc(), is_exit);
}

HOOK void __cyg_profile_func_enter(void *fn, void *site);
HOOK void __cyg_profile_func_exit(void *fn, void *site);

void __cyg_profile_func_enter(void *fn, void *site)
{
	struct sc_eng_thread *t = tls.t;
	uint64_t now;

	if (unlikely(!t || tls.busy)) {
		probe_cold((uint64_t)fn, (uint64_t)site, 0, stack_pointer());
		return;
	}
	tls.busy = stack_pointer();
	barrier();
	now = __rdtsc();
	if (unlikely(*tls.ring_head != tls.ring_seen) ||
	    unlikely(!sc_eng_enter_fast(t, (uint64_t)fn, (uint64_t)site, now))) {
		probe_slow(t, (uint64_t)fn, (uint64_t)site, now, 0);
		return;
	}
	probe_done(t);
}

void __cyg_profile_func_exit(void *fn, void *site)
{
	struct sc_eng_thread *t = tls.t;
	uint64_t now;

	if (unlikely(!t || tls.busy)) {
		probe_cold((uint64_t)fn, (uint64_t)site, 1, stack_pointer());
		return;
	}
	tls.busy = stack_pointer();
	barrier();
	now = __rdtsc();
	if (unlikely(*tls.ring_head != tls.ring_seen) ||
	    unlikely(!sc_eng_exit_fast(t, (uint64_t)fn, now))) {
		probe_slow(t, (uint64_t)fn, 0, now, 1);
		return;
	}
	probe_done(t);
}
