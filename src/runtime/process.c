/*
 * process — the runtime's life in a process: set up from the environment
 * (by the constructor, or by the first probe if the program's own
 * .preinit_array code comes first), a thread's start at its first event and
 * its end (the key's destructor; the memory of threads gone reaped), the
 * image's end (the destructor), where the runtime's descriptors go, and
 * calibration mode (calib.h).
 */
#include "runtime/rt.h"

#include "runtime/calib.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

#define FD_BASE    1000       /* our descriptors start here when the limit allows */

static const uint64_t rt_alive_const = 1;
const volatile uint64_t *rt_alive = &rt_alive_const;
static volatile uint64_t *rt_alive_page;

struct rt_state rt;
struct rt_tls_ext *rt_exts[RT_EXT_MAX];
static pthread_once_t rt_once = PTHREAD_ONCE_INIT;

_Static_assert(sizeof(struct rt_tls) + sizeof(struct sc_rt_clock) <= RT_TLS_STATIC_MAX,
	       "the runtime's static TLS must fit glibc's surplus for dlopen (rt.h)");

/* ---- a thread's larger state ------------------------------------------- */

/* Raw system calls and plain stores only: called with the program's vector
 * registers live (modules.c's XSAVE area is in here). */
struct rt_tls_ext *rt_ext_map(void)
{
	size_t len = (sizeof(struct rt_tls_ext) + PAGE - 1) & ~(PAGE - 1);
	long m = rt_sys6(SYS_mmap, 0, (long)len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct rt_tls_ext *x, *none = NULL;

	if (rt_mmap_failed(m))
		return NULL;
	x = (struct rt_tls_ext *)m;
	x->map_len = len;
	/* a signal handler's probe may have mapped one meanwhile */
	if (!__atomic_compare_exchange_n(&tls.x, &none, x, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
		rt_sys2(SYS_munmap, m, (long)len);
		return none;
	}
	for (uint32_t i = 0; i < RT_EXT_MAX; i++) {
		struct rt_tls_ext *free_slot = NULL;

		if (!__atomic_load_n(&rt_exts[i], __ATOMIC_RELAXED) &&
		    __atomic_compare_exchange_n(&rt_exts[i], &free_slot, x, 0, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED)) {
			x->reg = i + 1;
			break;
		}
	}
	return x;
}

void rt_ext_unmap(struct rt_tls_ext *x)
{
	if (!x)
		return;
	if (x->reg)
		__atomic_store_n(&rt_exts[x->reg - 1], NULL, __ATOMIC_RELEASE);
	rt_sys2(SYS_munmap, x, (long)x->map_len);
}

/* ---- descriptors -------------------------------------------------------- */

/*
 * fd, moved to rt.fd_base or above (close-on-exec), so that the program's
 * own open() calls get the numbers they would get without us and fds 0-2
 * (closed by some programs at start) are never ours.  Returns the new
 * descriptor, or -1 (fd closed) when there is no room up there: the
 * runtime then goes without rather than crowd the program.
 */
int fd_high(long fd)
{
	long hi;

	if (fd < 0)
		return -1;
	if (fd >= rt.fd_base)
		return (int)fd;
	hi = rt_sys3(SYS_fcntl, fd, F_DUPFD_CLOEXEC, rt.fd_base);
	rt_close((int)fd);
	if (hi < 0) {
		why(SC_SHM_WHY_FDCAP);
		return -1;
	}
	return (int)hi;
}

/*
 * A program may lower RLIMIT_NOFILE below the descriptors we take (to 3,
 * say: it opens nothing itself), and then fork or start threads, whose
 * image file and perf events need descriptors of their own.  For the time
 * of our opens, the soft limit (and the hard one, if the process may) goes
 * up to what fd_high() needs, then back: descriptors already open stay
 * valid under a lower limit.  Nothing of the program's runs in between but
 * its signal handlers.  Returns 1 if *old is to be restored.
 */
int fd_room_begin(struct rlimit *old)
{
	struct rlimit want;

	if (rt.sandboxed || rt_sys4(SYS_prlimit64, 0, RLIMIT_NOFILE, 0, old) ||
	    old->rlim_cur == RLIM_INFINITY || old->rlim_cur >= (rlim_t)rt.fd_base + 64)
		return 0;
	want.rlim_cur = (rlim_t)rt.fd_base + 64;
	want.rlim_max = old->rlim_max > want.rlim_cur ? old->rlim_max : want.rlim_cur;
	if (!rt_sys4(SYS_prlimit64, 0, RLIMIT_NOFILE, &want, 0))
		return 1;
	want.rlim_cur = want.rlim_max = old->rlim_max;     /* without CAP_SYS_RESOURCE */
	return want.rlim_cur > old->rlim_cur && !rt_sys4(SYS_prlimit64, 0, RLIMIT_NOFILE, &want, 0);
}

void fd_room_end(int raised, const struct rlimit *old)
{
	if (raised)
		rt_sys4(SYS_prlimit64, 0, RLIMIT_NOFILE, old, 0);
}

/* ---- threads and processes -------------------------------------------- */

static void thread_name(struct sc_eng_thread *t)
{
	char name[17] = { 0 };

	if (!rt.sandboxed && !rt_sys2(SYS_prctl, PR_GET_NAME, name))
		memcpy(t->name, name, sizeof(t->name));
}

/*
 * pthread key destructor: the thread is ending.  The first round closes its
 * OS events; the key is then set again so that we run in every round of
 * destructors.  After the last one the thread may still run the program's
 * code (glibc frees the keys' memory and its own with the program's free()),
 * so it keeps recording; it is put on the list of ending threads, and the
 * next thread to start gives the memory of those that are gone back to the
 * arena (rt_reap).
 */
static void rt_thread_exit(void *arg)
{
	struct sc_eng_thread *t = arg;
	unsigned i;

	if (rt.sandboxed || !*rt_alive)
		return;                    /* no system calls; or a fork child's copy of
					      its parent's thread, not ours to touch */
	tls.busy = stack_pointer();    /* a signal's probes wait meanwhile */
	barrier();
	if (!tls.exit_round++) {
		os_close(t);
		thread_name(t);
	}
	if (tls.exit_round < PTHREAD_DESTRUCTOR_ITERATIONS) {
		pthread_setspecific(rt.key, t);
	} else if (tls.t == t) {
		for (i = 0; i < RT_ENDING; i++) {
			struct sc_eng_thread *none = NULL;

			if (__atomic_compare_exchange_n(&rt.ending[i].t, &none, t, 0,
							__ATOMIC_ACQ_REL, __ATOMIC_RELAXED)) {
				rt.ending[i].x = tls.x;
				__atomic_store_n(&rt.ending[i].tid, (uint64_t)t->tid + 1, __ATOMIC_RELEASE);
				break;
			}
		}
	}
	barrier();
	tls.busy = 0;
}

/*
 * Retire the ending threads that are gone: the kernel no longer knows their
 * thread id in this process (a thread's id is not handed out again while
 * it runs).  Called as a thread starts; the memory goes to that thread.
 */
#define RT_ENDING_BUSY ((struct sc_eng_thread *)1)   /* a slot being emptied */

static void rt_reap(void)
{
	struct rt_tls_ext *x;
	unsigned i;

	for (i = 0; i < RT_ENDING; i++) {
		struct sc_eng_thread *t = __atomic_load_n(&rt.ending[i].t, __ATOMIC_ACQUIRE);
		uint64_t tid = __atomic_load_n(&rt.ending[i].tid, __ATOMIC_ACQUIRE);

		if (!t || t == RT_ENDING_BUSY || !tid || rt_sys3(SYS_tgkill, rt.pid, (long)tid - 1, 0) != -ESRCH)
			continue;
		/* whoever takes the slot retires the thread: the slot is
		 * emptied only once its fields are cleared, so that a thread
		 * ending meanwhile never has its own cleared (then it would
		 * never be reaped, and its memory stayed in the image) */
		if (!__atomic_compare_exchange_n(&rt.ending[i].t, &t, RT_ENDING_BUSY, 0,
						 __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
			continue;
		x = rt.ending[i].x;
		rt.ending[i].x = NULL;
		__atomic_store_n(&rt.ending[i].tid, 0, __ATOMIC_RELEASE);
		__atomic_store_n(&rt.ending[i].t, NULL, __ATOMIC_RELEASE);
		rt_ext_unmap(x);
		sc_eng_thread_retire(t);
	}
}

/* The "same process" word: a fresh MADV_WIPEONFORK page holding 1. */
void alive_arm(void)
{
	long p;

	if (!rt_alive_page) {
		p = rt_sys6(SYS_mmap, 0, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (rt_mmap_failed(p))
			return;
		if (rt_sys3(SYS_madvise, p, PAGE, MADV_WIPEONFORK)) {
			rt_sys2(SYS_munmap, p, PAGE);
			return;
		}
		rt_alive_page = (volatile uint64_t *)p;
	}
	*rt_alive_page = 1;
	__atomic_store_n(&rt_alive, rt_alive_page, __ATOMIC_RELEASE);
}

/*
 * The environment before libc has set __environ: a program's
 * .preinit_array functions run first (a malloc of its own installed from
 * there, instrumented), and their probes start the runtime.  Our variables
 * only, from /proc/self/environ, into static memory.
 */
static char **early_environ(void)
{
	static char buf[16384];
	static char *vars[32];
	long fd = rt_sys4(SYS_openat, AT_FDCWD, "/proc/self/environ", O_RDONLY | O_CLOEXEC, 0), n, got = 0;
	size_t nv = 0;
	char *p;

	if (fd < 0)
		return NULL;
	while (got < (long)sizeof(buf) - 1 && (n = rt_sys3(SYS_read, fd, buf + got, sizeof(buf) - 1 - (size_t)got)) > 0)
		got += n;
	rt_close((int)fd);
	buf[got] = 0;
	for (p = buf; p < buf + got && nv < sizeof(vars) / sizeof(vars[0]) - 1; p += rt_strlen(p) + 1)
		if (!memcmp(p, "STACKCLOCK", 10))
			vars[nv++] = p;
	vars[nv] = NULL;
	return vars;
}

/* The main program's load bias: the loader lists it first. */
static int first_bias(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	*(uint64_t *)data = info->dlpi_addr;
	return 1;
}

static uint64_t exe_bias(void)
{
	uint64_t bias = 0;

	dl_iterate_phdr(first_bias, &bias);
	return bias;
}

/* Timeline --only (engine.h): one of the functions named? */
static int tl_match(struct sc_eng_arena *a, uint64_t func)
{
	(void)a;
	for (uint32_t i = 0; i < rt.tl_nonly; i++)
		if (rt.tl_only[i] == func)
			return 1;
	return 0;
}

/* A new engine thread's probe costs and timeline. */
void rt_thread_setup(struct sc_eng_thread *t)
{
	sc_eng_set_cost(t, rt.cost[0], rt.cost[1], rt.cost[2], rt.cost[3], rt.cost[4]);
	if (rt.tl_size) {
		double tpn = rt.ticks_per_ns;
		uint64_t tsc = rt_clock(), ns = mono_ns();

		/* the filter's ticks: the rate known, else from the early pair */
		if (!tpn && ns > rt.clock0_ns + 100000 && tsc > rt.clock0_tsc)
			tpn = (double)(tsc - rt.clock0_tsc) / (double)(ns - rt.clock0_ns);
		rt.arena.tl_match = rt.tl_nonly ? tl_match : 0;
		sc_eng_tl_start(t, (uint64_t)((double)rt.tl_min_ns * (tpn ? tpn : 1.0)), rt.tl_min_ns,
				rt.tl_depth, rt.tl_nonly != 0);
	}
}

static char **rt_envp;          /* attach.c's environment, else NULL */

static void rt_process_init(void)
{
	char **envp = rt_envp ? rt_envp : __environ ? __environ : early_environ();
	const char *prefix = rt_getenv(envp, SC_SHM_ENV_PREFIX), *s, *slash = NULL, *end;
	struct rlimit lim;
	size_t len;

	rt.state = RT_OFF;
	rt.fd = rt.dirfd = rt.spare_fd = -1;
	if (!prefix || !*prefix || (len = rt_strlen(prefix)) >= sizeof(rt.dir))
		return;
	for (s = prefix; *s; s++)
		if (*s == '/')
			slash = s;
	if (!slash || rt_strlen(slash + 1) >= sizeof(rt.stem) - 64)
		return;
	rt_stpcpy(rt.dir, prefix, (size_t)(slash - prefix) + 1 + (slash == prefix));
	rt_stpcpy(rt.stem, slash + 1, sizeof(rt.stem));
	s = rt_getenv(envp, SC_SHM_ENV_OS);
	rt.os_mask = s ? (uint32_t)rt_atou(s, NULL) & SC_OS_ALL : SC_OS_ALL;
	s = rt_getenv(envp, SC_SHM_ENV_SAMPLE_HZ);
	rt.sample_hz = s ? (uint32_t)rt_atou(s, NULL) : 0;
	if (rt.sample_hz > 100000)
		rt.sample_hz = 100000;
	s = rt_getenv(envp, SC_SHM_ENV_CLOCK0);
	if (s) {
		rt.clock0_tsc = rt_atou(s, &end);
		rt.clock0_ns = *end == ',' ? rt_atou(end + 1, NULL) : 0;
	}
	if (!rt.clock0_ns) {
		rt.clock0_tsc = rt_clock();
		rt.clock0_ns = mono_ns();
	}
	s = rt_getenv(envp, SC_SHM_ENV_TP);
	if (s) {
		rt.tp_enter = rt_atou(s, &end);
		rt.tp_exit = *end == ',' ? rt_atou(end + 1, NULL) : 0;
	}
	s = rt_getenv(envp, SC_SHM_ENV_TIMELINE);
	if (s) {
		rt.tl_size = rt_atou(s, &end);
		rt.tl_min_ns = *end == ',' ? rt_atou(end + 1, &end) : 0;
		rt.tl_depth = *end == ',' ? (uint32_t)rt_atou(end + 1, NULL) : 0;
		if (rt.tl_size && rt.tl_size < SC_ENG_TL_CHUNK)
			rt.tl_size = SC_ENG_TL_CHUNK;
	}
	s = rt_getenv(envp, SC_SHM_ENV_TL_ONLY);
	if (s && rt.tl_size) {
		uint64_t bias = exe_bias();

		while (*s && rt.tl_nonly < SC_SHM_TL_ONLY_MAX) {
			uint64_t v = rt_atou(s, &end);

			if (end == s)
				break;
			rt.tl_only[rt.tl_nonly++] = v + bias;
			s = *end == ',' ? end + 1 : end;
		}
		if (!rt.tl_nonly)
			rt.tl_only[rt.tl_nonly++] = 1;    /* nothing matches: keep nothing */
	}
	s = rt_getenv(envp, SC_SHM_ENV_COST);
	for (int i = 0; s && i < 5; i++) {
		uint64_t v = rt_atou(s, &end);

		rt.cost[i] = v < (1u << 20) ? (uint32_t)v : 0;   /* a millisecond is no probe */
		s = *end == ',' ? end + 1 : NULL;
	}
	/* descriptors: a quarter of RLIMIT_NOFILE at most, from the top quarter
	 * (or from FD_BASE when the limit is high) */
	if (!rt_sys4(SYS_prlimit64, 0, RLIMIT_NOFILE, 0, &lim) && lim.rlim_cur != RLIM_INFINITY) {
		rt.fds_budget = (long)(lim.rlim_cur / 4);
		rt.fd_base = lim.rlim_cur >= 2 * FD_BASE ? FD_BASE : (int)(lim.rlim_cur - lim.rlim_cur / 4);
	} else {
		rt.fds_budget = 1 << 16;
		rt.fd_base = FD_BASE;
	}
	if (rt.fd_base < 3)
		rt.fd_base = 3;
	if (image_open(NULL))
		return;
	if (pthread_key_create(&rt.key, rt_thread_exit))
		return;
	alive_arm();
	rt.state = RT_ON;
	if (!rt.attached)
		spare_make();     /* (attached: no fork handlers, no spare for them) */
}

/*
 * Calibration mode (calib.h): record the calibration program's thread on a
 * private engine thread; at exit, write the costs to descriptor cal.fd.
 */
static struct {
	int fd;
	long map;
	size_t len;
	struct sc_eng_arena arena;
	struct sc_eng_thread *t;
} cal = { .fd = -1 };

static void rt_calib_begin(int fd)
{
	cal.len = 4u << 20;
	cal.map = rt_sys6(SYS_mmap, 0, (long)cal.len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (rt_mmap_failed(cal.map))
		return;
	sc_eng_arena_init(&cal.arena, (void *)cal.map, cal.len);
	cal.arena.cfa_of = rt_cfa_of;
	cal.t = sc_eng_thread_new(&cal.arena, (uint32_t)rt_gettid(), __rdtsc());
	if (!cal.t)
		return;
	sc_eng_set_cost(cal.t, 1, 1, 1, 1, 1);
	cal.fd = fd;
	alive_arm();
	tls.ring_head = &tls.ring_seen;
	tls.t = cal.t;
	tls.state = RT_ON;
}

static void rt_calib_end(void)
{
	const unsigned long long *plain;
	struct rt_calib c;
	char line[160], *q = line;

	tls.t = NULL;
	tls.state = RT_OFF;
	plain = (const unsigned long long *)dlsym(RTLD_DEFAULT, RT_CALIB_PLAIN);
	if (cal.fd < 0 || !plain || rt_calib_from_tree(cal.t, plain, &c))
		return;
	q = rt_utoa(q, c.cost[0][0], 24);
	*q++ = ' ';
	q = rt_utoa(q, c.cost[0][1], 24);
	*q++ = ' ';
	q = rt_utoa(q, c.cost[1][0], 24);
	*q++ = ' ';
	q = rt_utoa(q, c.cost[1][1], 24);
	*q++ = ' ';
	q = rt_utoa(q, c.ex_work, 24);
	*q++ = ' ';
	q = rt_utoa(q, c.batches, 24);
	*q++ = '\n';
	rt_sys3(SYS_write, cal.fd, line, q - line);
}

/*
 * Set up before main (the first probe may come later, or never): libc's
 * calls made from here (pthread_atfork may allocate, and a program may
 * define malloc itself, instrumented) find this thread "off" and are not
 * counted as the program's.
 */
static __attribute__((constructor)) void rt_ctor(void)
{
	int saved = tls.state;
	const char *calfd = rt_getenv(__environ, RT_CALIB_ENV);

	if (calfd) {
		rt_calib_begin((int)rt_atou(calfd, NULL));
		sc_patch_start(__environ);     /* stackclock-calib-patch */
		return;
	}
	tls.state = RT_SELF;
	jumps_resolve();
	rt_ret_tramp = sc_patch_arch_return();
	rt_lc_tramp = sc_patch_arch_lc_return();
	if (__environ && !rt_getenv(__environ, SC_SHM_ENV_PREFIX)) {
		tls.state = saved;     /* loaded by dlopen, not for a recording (yet:
					  rt_attach_init may follow) */
		return;
	}
	if (tsc_refused())
		sc_rt_clk.off = 1;     /* until thread_start has the engine thread */
	pthread_once(&rt_once, rt_process_init);
	if (rt.state == RT_ON)
		pthread_atfork(rt_atfork_prepare, rt_atfork_parent, rt_atfork_child);
	if (rt.state == RT_ON)
		sc_patch_start(__environ);     /* a program built without hooks */
	sc_exec_start(__environ);      /* last: the settings are read */
	tls.state = saved;
}

/* Set up from envp in a process already running (attach.c): as the
 * constructor would have, without fork's handlers (attached to this
 * process only) and without patching yet.  0, or -1 if the runtime is off. */
int rt_attach_init(char **envp)
{
	int saved = tls.state;

	if (rt.state != RT_NEW)
		return rt.state == RT_ON ? 0 : -1;
	tls.state = RT_SELF;
	rt_envp = envp;
	rt.attached = 1;
	pthread_once(&rt_once, rt_process_init);
	tls.state = saved;
	return rt.state == RT_ON ? 0 : -1;
}

/* A thread's first event: its engine state, its OS-event ring. */
struct sc_eng_thread *thread_start(uintptr_t sp)
{
	struct sc_eng_thread *t;
	uint64_t now;
	struct rlimit lim;
	int room;

	tls.state = RT_SELF;           /* our own calls into libc are not the program's */
	barrier();
	pthread_once(&rt_once, rt_process_init);
	tls.state = RT_OFF;            /* until the thread is on: its events are lost */
	if (rt.state != RT_ON)
		return NULL;
	/* in a sandbox: gettid, perf events, no more system calls */
	if (!rt.sandboxed)
		rt_reap();
	if (!rt.sandboxed && tsc_refused())
		sc_rt_clk.off = 1;     /* inherited from the thread that made this one */
	now = rt_clock();
	t = rt.sandboxed ? NULL : sc_eng_thread_new(&rt.arena, (uint32_t)rt_gettid(), now);
	if (t)
		rt_thread_setup(t);
	if (t && rt.attached)
		sc_attach_seed_engine(t, now);     /* its frames open at the attach */
	if (!t) {
		__atomic_fetch_add(&rt.hdr->arena.lost, 1, __ATOMIC_RELAXED);
		return NULL;
	}
	tls.state = RT_SELF;
	thread_name(t);
	room = fd_room_begin(&lim);
	os_open(t);
	fd_room_end(room, &lim);
	pthread_setspecific(rt.key, t);
	if (rt_ext())
		tls.x->t = t;
	tls.t = t;
	tls.sp_first = sp;
	tls.state = RT_ON;
	if (sc_rt_clk.off) {
		sc_rt_clk.off = 0;
		tsc_off();
	}
	return t;
}

/* The image ends (exit, return from main, _exit): note when. */
static void image_ends(void)
{
	if (rt.state != RT_ON || !*rt_alive)
		return;
	rt.hdr->end_tsc = rt_clock();
	__atomic_fetch_or(&rt.hdr->flags, SC_SHM_ENDED, __ATOMIC_RELEASE);
	if (tls.t)
		thread_name(tls.t);
}

static __attribute__((destructor)) void rt_fini(void)
{
	if (cal.t) {
		rt_calib_end();
		return;
	}
	image_ends();
}

/*
 * _exit() and _Exit() (the program's; libc's exit() calls its own): no
 * destructor runs, so the image's end is noted here, or its frames left
 * open would be told apart from a kill by nothing (dash ends every shell
 * so).  Not in a vfork child, which runs on its parent's memory and image
 * (fork.c), nor in any other process whose image is not this one yet (a
 * clone sharing our memory; a child made without fork's handlers before
 * its first probe, where rt_alive is zero).
 */
__attribute__((noreturn, visibility("default"))) void _exit(int status)
{
	/* (a child sharing our memory by clone(CLONE_VM) has a pid of its own) */
	if (tls.state != RT_VFORK && !cal.t && rt.state == RT_ON && rt_getpid() == rt.pid)
		image_ends();
	for (;;) {
		rt_sys1(SYS_exit_group, status);
		rt_sys1(SYS_exit, status);
	}
}

__attribute__((noreturn, visibility("default"))) void _Exit(int status)
{
	_exit(status);
}
