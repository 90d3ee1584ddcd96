/*
 * sample_perf — the perf events of the sampling recorder (see sample_int.h).
 *
 * The sampler is the software cpu-clock event: it is driven by an hrtimer,
 * so the rate asked for is honoured even with a 250 Hz kernel tick, and it
 * runs only while the task is on a CPU, so a sample is always of the target.
 * Events are per task AND per CPU (pid = task, cpu = i) with inherit=1: the
 * kernel then follows every thread and child the task creates, and all the
 * events of one CPU write into ONE ring (PERF_EVENT_IOC_SET_OUTPUT), so the
 * recorder polls ncpus rings whatever the number of threads.
 *
 * Rings are read in rounds.  Records of different CPUs interleave in time
 * (an mmap on CPU 0, then samples in the new library on CPU 1), so a round
 * merges the rings by timestamp (CLOCK_MONOTONIC via use_clockid) and only
 * hands out records stamped before the round's limit; a record stamped
 * earlier than now - 2 ms has certainly been committed, so nothing older
 * can appear later.  Records past the limit stay in the ring until the next
 * round.
 */
#include "record/sample_int.h"
#include "util/util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/*
 * A ring holds about 1/RING_SECONDS_DIV s of samples at the rate asked, so
 * that the recorder can be busy that long (building the CFI table of a big
 * library) without losing any; within these bounds.
 */
#define RING_SECONDS_DIV 4
#define RING_BYTES_MAX  (32u << 20)
#define RING_BYTES_LOW  (1u << 20)
#define RING_BYTES_MIN  (128u << 10)
#define SCRATCH_BYTES   (64u << 10)   /* > any record (u16 size) */

static long sys_perf_event_open(struct perf_event_attr *attr, pid_t pid, int cpu,
				int group_fd, unsigned long flags)
{
	return syscall(SYS_perf_event_open, attr, pid, cpu, group_fd, flags);
}

int smp_perf_init(struct smp_perf *p, const struct smp_perf_opts *o)
{
	/* A record: the stack copy, 8 registers and a few words of header. */
	uint64_t want = (uint64_t)o->frequency_hz * (o->stack_size + 160) / RING_SECONDS_DIV;
	struct rlimit rl;
	long n = sysconf(_SC_NPROCESSORS_CONF);

	memset(p, 0, sizeof(*p));
	p->o = *o;
	p->ncpus = n > 0 ? (int)n : 1;
	p->rings = xcalloc((size_t)p->ncpus, sizeof(*p->rings));
	for (int i = 0; i < p->ncpus; i++)
		p->rings[i].fd = -1;
	p->ring_bytes = RING_BYTES_LOW;
	while (p->ring_bytes < want && p->ring_bytes < RING_BYTES_MAX)
		p->ring_bytes *= 2;
	p->scratch_size = SCRATCH_BYTES;
	p->scratch = xmalloc(p->scratch_size * (size_t)p->ncpus);
	/* Attaching to many threads takes ncpus descriptors per thread. */
	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	return 0;
}

static void fill_attr(const struct smp_perf *p, struct perf_event_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->type = PERF_TYPE_SOFTWARE;
	a->config = PERF_COUNT_SW_CPU_CLOCK;
	a->freq = 1;
	a->sample_freq = p->o.frequency_hz;
	a->sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
			 PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
	/*
	 * Besides ip, sp and bp, the callee-saved registers CFA rules are
	 * defined from (rbx in ld.so's lazy-binding resolver): 8 bytes each
	 * per sample, next to a stack copy of 32 KiB.  sample_model.c reads
	 * them in this bit order.
	 */
	a->sample_regs_user = SMP_REGS_USER;
	a->sample_stack_user = p->o.stack_size;
	if (p->o.kernel) {
		a->sample_type |= PERF_SAMPLE_CALLCHAIN;
		a->exclude_callchain_user = 1;   /* user frames: our unwinder */
	} else {
		a->exclude_kernel = 1;
	}
	a->exclude_hv = 1;
	a->disabled = 1;
	a->inherit = 1;
	a->enable_on_exec = p->o.enable_on_exec;
	a->mmap = 1;
	a->mmap2 = 1;
	a->comm = 1;
	a->comm_exec = 1;
	a->task = 1;
	a->sample_id_all = 1;
	a->use_clockid = 1;
	a->clockid = CLOCK_MONOTONIC;
	a->build_id = !p->no_build_id;
	a->watermark = 1;
	a->wakeup_watermark = (uint32_t)(p->ring_bytes / 4);
}

/* Map the ring of a CPU's first event, shrinking it if memory is locked. */
static int map_ring(struct smp_perf *p, struct smp_ring *r, int fd)
{
	long page = sysconf(_SC_PAGESIZE);

	for (size_t bytes = p->ring_bytes; bytes >= RING_BYTES_MIN; bytes /= 2) {
		void *m = mmap(NULL, bytes + (size_t)page, PROT_READ | PROT_WRITE,
			       MAP_SHARED, fd, 0);
		if (m == MAP_FAILED) {
			if (errno == EPERM || errno == ENOMEM)
				continue;
			return -errno;
		}
		r->fd = fd;
		r->meta = m;
		r->data = (uint8_t *)m + page;
		r->size = bytes;
		r->tail = r->head = 0;
		/* Later CPUs start at the size that worked. */
		p->ring_bytes = bytes;
		return 0;
	}
	return -ENOMEM;
}

static void add_fd(struct smp_perf *p, int fd)
{
	ALLOC_GROW(p->fds, p->nfds + 1, p->afds);
	p->fds[p->nfds++] = fd;
}

static int read_sysctl_int(const char *path, int *v)
{
	FILE *f = fopen(path, "re");
	int ok;

	if (!f)
		return -1;
	ok = fscanf(f, "%d", v) == 1;
	fclose(f);
	return ok ? 0 : -1;
}

static long open_event(struct smp_perf *p, pid_t pid, int cpu)
{
	struct perf_event_attr a;
	long fd;

	fill_attr(p, &a);
	fd = sys_perf_event_open(&a, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0 && errno == EINVAL && !p->no_build_id) {
		/* Kernels before 5.12 know no attr.build_id. */
		p->no_build_id = true;
		fill_attr(p, &a);
		fd = sys_perf_event_open(&a, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
	}
	return fd;
}

static void unmap_ring(struct smp_ring *r)
{
	munmap(r->meta, r->size + (size_t)sysconf(_SC_PAGESIZE));
	memset(r, 0, sizeof(*r));
	r->fd = -1;
}

int smp_perf_open_task(struct smp_perf *p, pid_t pid)
{
	int opened = 0, first_err = 0;

	for (int cpu = 0; cpu < p->ncpus; cpu++) {
		struct smp_ring *r = &p->rings[cpu];
		long fd = open_event(p, pid, cpu);
		int ret;

		if (fd < 0 && (errno == EACCES || errno == EPERM) && p->o.kernel && !p->nfds) {
			/*
			 * Kernel samples are what kernel.perf_event_paranoid
			 * refuses first: go on with user frames only.
			 */
			int paranoid = -100;

			p->o.kernel = false;
			fd = open_event(p, pid, cpu);
			if (fd >= 0) {
				read_sysctl_int("/proc/sys/kernel/perf_event_paranoid", &paranoid);
				pr_warn("kernel frames not permitted (kernel.perf_event_paranoid = %d): "
					"sampling user frames only (run as root for --kernel)", paranoid);
			}
		}
		if (fd < 0) {
			int e = errno;
			/* A CPU that is not there: skip it. */
			if (e == ENODEV || e == ENXIO)
				continue;
			if (!first_err)
				first_err = -e;
			if (e == ESRCH || e == EACCES || e == EPERM)
				return -e;
			continue;
		}
		if (r->fd < 0) {
			size_t asked = p->ring_bytes;

			ret = map_ring(p, r, (int)fd);
			if (!ret && p->ring_bytes != asked) {
				/*
				 * Locked memory allowed less (an unprivileged
				 * user: kernel.perf_event_mlock_kb).  The
				 * wakeup watermark was set for the bigger
				 * ring: open the event again with one that fits.
				 */
				unmap_ring(r);
				close((int)fd);
				fd = open_event(p, pid, cpu);
				ret = fd < 0 ? -errno : map_ring(p, r, (int)fd);
				if (!ret && !p->warned_small) {
					p->warned_small = true;
					pr_warn("perf ring buffers limited to %zu KB by kernel.perf_event_mlock_kb: "
						"samples may be lost (run as root, or lower -F)",
						p->ring_bytes / 1024);
				}
			}
			if (ret) {
				if (fd >= 0)
					close((int)fd);
				return ret;
			}
		} else if (ioctl((int)fd, PERF_EVENT_IOC_SET_OUTPUT, r->fd) < 0) {
			ret = -errno;
			close((int)fd);
			return ret;
		}
		add_fd(p, (int)fd);
		opened++;
	}
	return opened ? 0 : (first_err ? first_err : -ENODEV);
}

int smp_perf_enable(struct smp_perf *p)
{
	for (size_t i = 0; i < p->nfds; i++)
		if (ioctl(p->fds[i], PERF_EVENT_IOC_ENABLE, 0) < 0)
			return -errno;
	return 0;
}

int smp_perf_disable(struct smp_perf *p)
{
	for (size_t i = 0; i < p->nfds; i++)
		ioctl(p->fds[i], PERF_EVENT_IOC_DISABLE, 0);
	return 0;
}

void smp_perf_close(struct smp_perf *p)
{
	/* Redirected events first: a ring's owner goes last. */
	for (size_t i = p->nfds; i-- > 0;)
		close(p->fds[i]);
	for (int i = 0; p->rings && i < p->ncpus; i++)
		if (p->rings[i].meta)
			unmap_ring(&p->rings[i]);
	free(p->rings);
	free(p->fds);
	free(p->scratch);
	memset(p, 0, sizeof(*p));
}

void smp_perf_explain(int err, pid_t pid)
{
	int paranoid;

	switch (err) {
	case -EACCES:
	case -EPERM:
		if (read_sysctl_int("/proc/sys/kernel/perf_event_paranoid", &paranoid) < 0)
			paranoid = -100;
		if (paranoid != -100)
			pr_err("the kernel refuses perf events (kernel.perf_event_paranoid = %d): "
			       "run as root, or allow them with 'sysctl kernel.perf_event_paranoid=1'",
			       paranoid);
		else
			pr_err("the kernel refuses perf events (see kernel.perf_event_paranoid): "
			       "run as root, or allow them with 'sysctl kernel.perf_event_paranoid=1'");
		break;
	case -ESRCH:
		pr_err("no process with PID %d", (int)pid);
		break;
	case -ENOENT:
	case -ENODEV:
	case -EOPNOTSUPP:
		pr_err("this kernel has no cpu-clock perf event (%s): sampling needs CONFIG_PERF_EVENTS",
		       strerror(-err));
		break;
	case -EMFILE:
	case -ENFILE:
		pr_err("out of file descriptors opening perf events (%s): raise 'ulimit -n'",
		       strerror(-err));
		break;
	case -ENOMEM:
		pr_err("cannot map perf ring buffers: raise kernel.perf_event_mlock_kb or run as root");
		break;
	default:
		pr_err("cannot open the software cpu-clock sampling event for PID %d: %s "
		       "(check kernel.perf_event_paranoid, or run as root)", (int)pid, strerror(-err));
		break;
	}
}

int smp_perf_pollfds(const struct smp_perf *p, int *fds, int max)
{
	int n = 0;

	for (int i = 0; i < p->ncpus && n < max; i++)
		if (p->rings[i].fd >= 0)
			fds[n++] = p->rings[i].fd;
	return n;
}

/* ---- reading --------------------------------------------------------- */

struct cursor {
	const struct perf_event_header *rec;   /* current record, or NULL */
	uint64_t time;
};

/* Timestamp of a record: samples carry it after ip and pid/tid; the others
 * end with the sample_id trailer {pid, tid, time}. */
static uint64_t record_time(const struct perf_event_header *h)
{
	uint64_t t = 0;

	if (h->type == PERF_RECORD_SAMPLE) {
		if (h->size >= sizeof(*h) + 24)
			memcpy(&t, (const uint8_t *)h + sizeof(*h) + 16, 8);
	} else if (h->size >= sizeof(*h) + 16) {
		memcpy(&t, (const uint8_t *)h + h->size - 8, 8);
	}
	return t;
}

/*
 * The record at the ring's tail, linearised into scratch if it wraps.
 * NULL when the ring holds no complete record.
 */
static const struct perf_event_header *peek(struct smp_ring *r, uint8_t *scratch,
					    size_t scratch_size)
{
	struct perf_event_header h;
	uint64_t off, first;

	if (r->head - r->tail < sizeof(h))
		return NULL;
	off = r->tail & (r->size - 1);
	first = r->size - off;
	if (first >= sizeof(h)) {
		memcpy(&h, r->data + off, sizeof(h));
	} else {
		memcpy(&h, r->data + off, first);
		memcpy((uint8_t *)&h + first, r->data, sizeof(h) - first);
	}
	if (h.size < sizeof(h) || r->head - r->tail < h.size) {
		if (h.size < sizeof(h))
			r->tail = r->head;          /* corrupt: drop the rest */
		return NULL;
	}
	if (first >= h.size)
		return (const struct perf_event_header *)(r->data + off);
	if (h.size > scratch_size)
		return NULL;
	memcpy(scratch, r->data + off, first);
	memcpy(scratch + first, r->data, h.size - first);
	return (const struct perf_event_header *)scratch;
}

static void advance(struct smp_perf *p, int i, struct cursor *c, uint64_t limit)
{
	struct smp_ring *r = &p->rings[i];

	c->rec = peek(r, p->scratch + (size_t)i * p->scratch_size, p->scratch_size);
	if (c->rec) {
		c->time = record_time(c->rec);
		if (c->time > limit)
			c->rec = NULL;
	}
}

size_t smp_perf_drain(struct smp_perf *p, uint64_t limit_ns, smp_record_fn fn, void *ctx)
{
	struct cursor cur[p->ncpus];
	size_t handled = 0;

	for (int i = 0; i < p->ncpus; i++) {
		struct smp_ring *r = &p->rings[i];

		cur[i].rec = NULL;
		if (r->fd < 0)
			continue;
		r->head = __atomic_load_n(&r->meta->data_head, __ATOMIC_ACQUIRE);
		advance(p, i, &cur[i], limit_ns);
	}
	for (;;) {
		int best = -1;

		for (int i = 0; i < p->ncpus; i++)
			if (cur[i].rec && (best < 0 || cur[i].time < cur[best].time))
				best = i;
		if (best < 0)
			break;
		fn(ctx, cur[best].rec);
		handled++;
		p->rings[best].tail += cur[best].rec->size;
		advance(p, best, &cur[best], limit_ns);
	}
	for (int i = 0; i < p->ncpus; i++)
		if (p->rings[i].fd >= 0)
			__atomic_store_n(&p->rings[i].meta->data_tail, p->rings[i].tail,
					 __ATOMIC_RELEASE);
	return handled;
}
