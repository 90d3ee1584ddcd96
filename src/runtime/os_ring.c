/*
 * os_ring — a thread's OS events: the kernel logs the thread's context
 * switches, system calls and page faults (and the CPU-clock samples of
 * sampled shares) into one small perf ring per thread.  The probes compare
 * its head with the last one seen; when it has moved, rt_os_drain() reads
 * the new records and charges the interval that ends as OS-bound.  The ring
 * is opened at a thread's first event and closed at its exit; a fork child
 * closes the descriptors it inherited (they are its parent's threads').
 */
#include "runtime/rt.h"

#include <errno.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>

#define RING_PAGES 4          /* data pages of a thread's OS-event ring, */
#define RING_PAGES_BIG 64     /* or of the first RING_BIG threads' of a process: */
#define RING_BIG 8            /* a call into code without probes (a libc routine
				 touching 100 MB) can bring thousands of faults
				 between two probes; the kernel's ring memory is
				 locked, so not for every thread */

/*
 * Is a sampled ip in the probes' own code: this runtime's, or the stubs of
 * patched functions (their relocated entry instructions too, a few bytes
 * each)?  Kernel addresses are the program's: the kernel was working for
 * it.
 */
static int rt_in_probe(uint64_t ip)
{
	return sc_rt_in_self(ip) || sc_patch_in_stubs(ip);
}

/*
 * OS records are timed in CLOCK_MONOTONIC nanoseconds, probes in TSC ticks.
 * The rate is the kernel's own when the thread's perf page publishes it
 * (cap_user_time); else it is measured from a pair taken early (the
 * recorder's, passed in the environment, else our own) to a later one,
 * measured again each time the time since the first pair has doubled (a
 * system call, rarely: the error of one pair shrinks as the span grows),
 * never inside a sandbox.
 */
static uint64_t ns_to_ticks(uint64_t ns)
{
	const struct perf_event_mmap_page *pg = tls.x ? tls.x->ring.pg : NULL;
	uint64_t tsc;

	if (pg && pg->cap_user_time && pg->time_mult)
		return (uint64_t)((double)ns * (double)(1ull << pg->time_shift) / (double)pg->time_mult);
	tsc = rt_clock();
	if (!rt.sandboxed && tsc > rt.clock0_tsc &&
	    (!rt.ticks_per_ns || tsc - rt.clock0_tsc > 2 * (rt.rate_tsc - rt.clock0_tsc))) {
		uint64_t a = __rdtsc(), mono = mono_ns(), b = __rdtsc(), mid = a + (b - a) / 2;

		if (mono > rt.clock0_ns + 1000000 && mid > rt.clock0_tsc) {
			rt.ticks_per_ns = (double)(mid - rt.clock0_tsc) / (double)(mono - rt.clock0_ns);
			rt.rate_tsc = mid;
		}
	}
	return rt.ticks_per_ns ? (uint64_t)((double)ns * rt.ticks_per_ns) : ns;
}

/* ---- OS events ------------------------------------------------------- */

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
__attribute__((noinline, cold)) void rt_os_drain(struct sc_eng_thread *t, uint64_t now)
{
	struct rt_ring *r = &tls.x->ring;   /* the head moved: os_open mapped it */
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
		case PERF_RECORD_SAMPLE:           /* {identifier, time}; a sample's {identifier, ip} */
			if (rec[0] == r->id[EV_SAMPLE] && r->id[EV_SAMPLE]) {
				/* not an OS event: the interval stays the program's */
				sc_eng_sample(t, rt_in_probe(rec[1]));
				break;
			}
			bound = 1;
			if (rec[0] == r->id[EV_SYS_ENTER]) {
				t->os_count[SC_OS_SYSCALL]++;
				if (!r->in_sys) {
					r->in_sys = 1;
					os_start(r, rec[1]);
				}
				if (t->tl_cur) {
					/* with the timeline, the record carries the
					 * tracepoint's raw data: {u32 size, common
					 * fields (8 bytes), long id, ...} */
					int64_t nr = -1;

					if (h.size >= sizeof(h) + 36)
						ring_copy(r, tail + sizeof(h) + 28, &nr, 8);
					r->tl_sys_ns = rec[1];
					r->tl_sysno = nr >= 0 && nr < 4096 ? nr : -1;
				}
			} else if (rec[0] == r->id[EV_SYS_EXIT]) {
				if (r->in_sys) {
					r->in_sys = 0;
					os_ns += os_end(r, rec[1]);
				}
				if (t->tl_cur && r->tl_sys_ns && rec[1] >= r->tl_sys_ns)
					sc_eng_tl_os(t, r->tl_sys_ns, rec[1] - r->tl_sys_ns, SC_OS_SYSCALL,
						     r->tl_sysno);
				r->tl_sys_ns = 0;
			} else if (rec[0] == r->id[EV_FAULT]) {
				t->os_count[SC_OS_FAULT]++;
				if (t->tl_cur)
					sc_eng_tl_os(t, rec[1], 0, SC_OS_FAULT, -1);
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
				r->tl_out_ns = rec[0];
			} else {
				if (r->out) {
					r->out = 0;
					os_ns += os_end(r, rec[0]);
				}
				if (t->tl_cur && r->tl_out_ns && rec[0] >= r->tl_out_ns)
					sc_eng_tl_os(t, r->tl_out_ns, rec[0] - r->tl_out_ns, SC_OS_SWITCH, -1);
				r->tl_out_ns = 0;
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
	r->tl_sys_ns = r->tl_out_ns = 0;
	if (overflow)
		sc_eng_os(t, now);
	else if (bound)
		sc_eng_os_exact(t, now, os_ns ? ns_to_ticks(os_ns) : 0);
}

/* ---- OS-event descriptors ---------------------------------------------- */

static long perf_open(struct perf_event_attr *a)
{
	long fd = rt_sys5(SYS_perf_event_open, a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);

	if ((fd == -EACCES || fd == -EPERM) && !a->exclude_kernel) {
		a->exclude_kernel = 1;
		fd = rt_sys5(SYS_perf_event_open, a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	}
	if (fd == -EMFILE)             /* the program's limit: no room for ours */
		why(SC_SHM_WHY_FDCAP);
	return fd < 0 ? -1 : fd_high(fd);
}

/*
 * Each thread's perf fds are kept in t->user[0..NEV-1], one word each: the
 * fd + 1 (0 = none) in the low USER_FD_BITS, the event's id above, so that
 * they are closed at thread exit, and in a forked child, only if they are
 * still ours: a program may close fds it does not know of and reuse the
 * numbers.  (Ids are the kernel's count of events made since boot: 40 bits
 * hold them; a wrapped one only means an fd is left open.)
 */
#define USER_FD_BITS 24
#define USER_FD_MASK ((1ull << USER_FD_BITS) - 1)
#define USER_ID_MASK ((1ull << (64 - USER_FD_BITS)) - 1)

static uint64_t user_word(long fd, uint64_t id)
{
	return (uint64_t)(fd + 1) | (id & USER_ID_MASK) << USER_FD_BITS;
}

void close_events(struct sc_eng_thread *t)
{
	int i;

	for (i = 0; i < NEV; i++) {
		uint64_t id = 0;
		int fd = (int)(t->user[i] & USER_FD_MASK) - 1;

		if (t->user[i] && !rt_sys3(SYS_ioctl, fd, PERF_EVENT_IOC_ID, &id) &&
		    (id & USER_ID_MASK) == t->user[i] >> USER_FD_BITS) {
			rt_close(fd);
			__atomic_fetch_sub(&rt.fds_held, 1, __ATOMIC_RELAXED);
		}
		t->user[i] = 0;
	}
}

void os_close(struct sc_eng_thread *t)
{
	if (tls.x && tls.x->ring.pg)
		rt_sys2(SYS_munmap, tls.x->ring.pg, tls.x->ring.map_len);
	if (tls.x)
		memset(&tls.x->ring, 0, sizeof(tls.x->ring));
	tls.ring_head = &tls.ring_seen;
	if (t)
		close_events(t);
}

static void os_failed(uint32_t cats)
{
	__atomic_fetch_or(&rt.hdr->os_failed, cats, __ATOMIC_RELAXED);
}

/* The thread's ring could not be had: its OS events and its samples. */
static void os_refused(uint32_t cats)
{
	os_failed(cats);
	if (rt.sample_hz)
		__atomic_fetch_or(&rt.hdr->samp_state, SC_SHM_SAMP_FAILED, __ATOMIC_RELAXED);
}

static void os_opened(uint32_t cats)
{
	__atomic_fetch_or(&rt.hdr->os_opened, cats, __ATOMIC_RELAXED);
}

#define OS_SAMPLE_TYPE (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TIME)

/* Open one more event into the ring; 0 or -1. */
static int os_add(struct sc_eng_thread *t, int which, uint32_t type, uint64_t config, int leader,
		  uint64_t period, uint64_t sample_type)
{
	struct perf_event_attr a;
	uint64_t id = 0;
	long fd;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = type;
	a.config = config;
	a.sample_period = period;
	a.sample_type = sample_type;
	a.sample_id_all = 1;
	a.use_clockid = 1;
	a.clockid = CLOCK_MONOTONIC;
	a.exclude_hv = 1;
	fd = perf_open(&a);
	if (fd < 0)
		return -1;
	if (rt_sys3(SYS_ioctl, fd, PERF_EVENT_IOC_SET_OUTPUT, leader) < 0 ||
	    rt_sys3(SYS_ioctl, fd, PERF_EVENT_IOC_ID, &id) < 0) {
		rt_close((int)fd);
		return -1;
	}
	t->user[which] = user_word(fd, id);
	__atomic_fetch_add(&rt.fds_held, 1, __ATOMIC_RELAXED);
	tls.x->ring.id[which] = id;        /* os_open has it */
	return 0;
}

/*
 * Ask the kernel to log this thread's OS events into a small ring: a dummy
 * event carrying context-switch records, the syscall tracepoints and the
 * page-fault event redirected into it.  What is refused is recorded.
 */
void os_open(struct sc_eng_thread *t)
{
	uint32_t want = rt.os_mask;
	struct perf_event_attr a;
	struct rt_tls_ext *x = rt_ext();
	struct rt_ring *r = x ? &x->ring : NULL;
	long fd, map, pages;

	tls.ring_head = &tls.ring_seen;
	if ((!want && !rt.sample_hz) || rt.sandboxed)
		return;
	if (!r) {
		os_refused(want);           /* no memory for the thread's ring */
		return;
	}
	if (__atomic_load_n(&rt.fds_held, __ATOMIC_RELAXED) + NEV > rt.fds_budget) {
		os_refused(want);           /* so many threads: leave fds to the program */
		why(SC_SHM_WHY_FDCAP);
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
		os_refused(want);
		return;
	}
	pages = __atomic_fetch_add(&rt.rings_big, 1, __ATOMIC_RELAXED) < RING_BIG ? RING_PAGES_BIG : RING_PAGES;
	r->map_len = (size_t)(1 + pages) * PAGE;
	map = rt_sys6(SYS_mmap, 0, (long)r->map_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (rt_mmap_failed(map) && pages != RING_PAGES) {
		/* over the locked-memory limit (perf_event_mlock_kb): small */
		pages = RING_PAGES;
		r->map_len = (size_t)(1 + pages) * PAGE;
		map = rt_sys6(SYS_mmap, 0, (long)r->map_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	}
	if (rt_mmap_failed(map)) {
		rt_close((int)fd);
		os_refused(want);
		return;
	}
	{
		uint64_t id = 0;

		if (!rt_sys3(SYS_ioctl, fd, PERF_EVENT_IOC_ID, &id))
			r->id[EV_SWITCH] = id;
		t->user[EV_SWITCH] = user_word(fd, id);
	}
	__atomic_fetch_add(&rt.fds_held, 1, __ATOMIC_RELAXED);
	r->pg = (struct perf_event_mmap_page *)map;
	r->data = (uint8_t *)map + PAGE;
	r->mask = (uint64_t)pages * PAGE - 1;
	if (want & SC_OS_BIT(SC_OS_SWITCH))
		os_opened(SC_OS_BIT(SC_OS_SWITCH));
	if (want & SC_OS_BIT(SC_OS_SYSCALL)) {
		if (rt.tp_enter && rt.tp_exit &&
		    !os_add(t, EV_SYS_ENTER, PERF_TYPE_TRACEPOINT, rt.tp_enter, (int)fd, 1,
			    OS_SAMPLE_TYPE | (t->tl_cur ? PERF_SAMPLE_RAW : 0)) &&
		    !os_add(t, EV_SYS_EXIT, PERF_TYPE_TRACEPOINT, rt.tp_exit, (int)fd, 1, OS_SAMPLE_TYPE))
			os_opened(SC_OS_BIT(SC_OS_SYSCALL));
		else
			os_failed(SC_OS_BIT(SC_OS_SYSCALL));
	}
	if (want & SC_OS_BIT(SC_OS_FAULT)) {
		if (!os_add(t, EV_FAULT, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS, (int)fd, 1, OS_SAMPLE_TYPE))
			os_opened(SC_OS_BIT(SC_OS_FAULT));
		else
			os_failed(SC_OS_BIT(SC_OS_FAULT));
	}
	/* Sampled shares (SPEC section 14): the thread's CPU clock, its
	 * samples {identifier, ip} in the same ring, found by the probes as
	 * the OS records are, and charged to the node on top then. */
	if (rt.sample_hz) {
		uint32_t st = os_add(t, EV_SAMPLE, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, (int)fd,
				     1000000000ull / rt.sample_hz, PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP)
			      ? SC_SHM_SAMP_FAILED : SC_SHM_SAMP_OPENED;

		__atomic_fetch_or(&rt.hdr->samp_state, st, __ATOMIC_RELAXED);
	}
	tls.ring_head = (const volatile uint64_t *)&r->pg->data_head;
	ring_discard();
}
