/*
 * sample_model — what the perf records describe, kept as the recording
 * goes (see sample_int.h).
 *
 * Process images: each pid gets a proc_id, and each exec (a COMM record with
 * the exec flag) gives the pid a new one, so every address is later
 * resolved against the mappings of the image that ran it.  A forked child
 * starts with a copy of its parent's mappings; MMAP2 records add to them.
 * The launched child is "fresh" until its first exec: that exec names the
 * first image rather than starting a second one.
 *
 * Each sample is unwound at once (unwind.h) and only its stack is kept:
 * stacks are interned (one id per distinct {frames, flags}) and counted per
 * (proc_id, tid, stack_id), so memory grows with the number of distinct
 * stacks, not with the length of the run.
 *
 * The data file is written whole, from this state, by smp_model_write().
 */
#include "record/sample_int.h"
#include "record/tl_buf.h"
#include "format/scdata.h"
#include "unwind/unwind.h"
#include "util/util.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#define NO_PROC UINT32_MAX

/* ---- a small hash map: (u64, u64) -> u64 ----------------------------- */

struct kv {
	uint64_t a, b, val;
	bool used;
};

struct map2 {
	struct kv *slots;
	size_t cap, n;            /* cap a power of two, n < cap / 2 */
};

static uint64_t key_hash(uint64_t a, uint64_t b)
{
	return hash_u64(a * 0x9e3779b97f4a7c15ULL ^ hash_u64(b));
}

static struct kv *map2_slot(struct map2 *m, uint64_t a, uint64_t b)
{
	size_t i = key_hash(a, b) & (m->cap - 1);

	while (m->slots[i].used && (m->slots[i].a != a || m->slots[i].b != b))
		i = (i + 1) & (m->cap - 1);
	return &m->slots[i];
}

static void map2_grow(struct map2 *m)
{
	struct kv *old = m->slots;
	size_t oldcap = m->cap;

	m->cap = oldcap ? oldcap * 2 : 64;
	m->slots = xcalloc(m->cap, sizeof(*m->slots));
	for (size_t i = 0; i < oldcap; i++)
		if (old[i].used)
			*map2_slot(m, old[i].a, old[i].b) = old[i];
	free(old);
}

/* The value slot for (a, b), created zeroed if absent. */
static uint64_t *map2_get(struct map2 *m, uint64_t a, uint64_t b, bool *created)
{
	struct kv *s;

	if ((m->n + 1) * 2 > m->cap)
		map2_grow(m);
	s = map2_slot(m, a, b);
	*created = !s->used;
	if (!s->used) {
		s->used = true;
		s->a = a;
		s->b = b;
		s->val = 0;
		m->n++;
	}
	return &s->val;
}

static bool map2_find(const struct map2 *m, uint64_t a, uint64_t b, uint64_t *val)
{
	size_t i;

	if (!m->cap)
		return false;
	i = key_hash(a, b) & (m->cap - 1);
	while (m->slots[i].used) {
		if (m->slots[i].a == a && m->slots[i].b == b) {
			*val = m->slots[i].val;
			return true;
		}
		i = (i + 1) & (m->cap - 1);
	}
	return false;
}

/* ---- the model ------------------------------------------------------- */

struct proc {
	uint32_t proc_id;
	pid_t pid, ppid;
	uint32_t parent_proc_id;
	uint64_t start_ns, end_ns;
	char *exe;
	struct unw_space *space;
	bool fresh;               /* launched, not exec'd yet */
	bool want_exe;            /* the next file mapping names the image */
	uint64_t lost;            /* PERF_RECORD_LOST* charged here */
	uint64_t partial;         /* samples whose unwinding stopped early */
};

struct thread {
	uint32_t proc_id;
	uint32_t tid;
	uint64_t start_ns, end_ns;
	char name[17];
	struct tl_buf tl;         /* --timeline: each sample, in order */
};

struct stack {
	uint32_t off;             /* into ips */
	uint16_t n;
	uint16_t flags;           /* SC_STACK_* */
	uint64_t hash;
};

struct smp_model {
	struct smp_model_opts o;
	struct unw_cache *cache;

	struct proc *procs;
	size_t nprocs, aprocs;
	struct map2 pid_map;      /* pid -> index of its current image */

	struct thread *threads;
	size_t nthreads, athreads;
	struct map2 thread_map;   /* (proc_id, tid) -> index */

	struct stack *stacks;
	size_t nstacks, astacks;
	uint64_t *ips;
	size_t nips, aips;
	uint32_t *stack_slots;    /* open addressing: index + 1, 0 = empty */
	size_t stack_cap;

	struct map2 counts;       /* (proc_id << 32 | tid, stack_id) -> n */
	uint64_t tl_budget;       /* --timeline: bytes still allowed */

	uint64_t lost_unknown;    /* lost records of no known process */
	uint64_t frames_buf[SMP_MAX_KERNEL_FRAMES + SMP_MAX_USER_FRAMES];
	struct smp_stats st;
	bool dirty;
};

struct smp_model *smp_model_new(const struct smp_model_opts *o)
{
	struct smp_model *m = xcalloc(1, sizeof(*m));

	m->o = *o;
	m->tl_budget = o->timeline_size;
	m->cache = unw_cache_new();
	return m;
}

void smp_model_set_kernel(struct smp_model *m, bool kernel)
{
	m->o.kernel = kernel;
}

void smp_model_free(struct smp_model *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->nprocs; i++) {
		unw_space_free(m->procs[i].space);
		free(m->procs[i].exe);
	}
	free(m->procs);
	free(m->pid_map.slots);
	for (size_t i = 0; i < m->nthreads; i++)
		tl_buf_release(&m->threads[i].tl);
	free(m->threads);
	free(m->thread_map.slots);
	free(m->stacks);
	free(m->ips);
	free(m->stack_slots);
	free(m->counts.slots);
	unw_cache_free(m->cache);
	free(m);
}

static struct proc *new_proc(struct smp_model *m, pid_t pid)
{
	struct proc *p;
	bool created;

	ALLOC_GROW(m->procs, m->nprocs + 1, m->aprocs);
	p = &m->procs[m->nprocs];
	memset(p, 0, sizeof(*p));
	p->proc_id = (uint32_t)m->nprocs;
	p->pid = pid;
	p->parent_proc_id = NO_PROC;
	*map2_get(&m->pid_map, (uint64_t)pid, 0, &created) = m->nprocs;
	m->nprocs++;
	m->dirty = true;
	return p;
}

static struct proc *find_proc(struct smp_model *m, pid_t pid)
{
	uint64_t i;

	return map2_find(&m->pid_map, (uint64_t)pid, 0, &i) ? &m->procs[i] : NULL;
}

static struct thread *get_thread(struct smp_model *m, uint32_t proc_id, uint32_t tid,
				 uint64_t time, bool *created)
{
	uint64_t *slot = map2_get(&m->thread_map, proc_id, tid, created);
	struct thread *t;

	if (!*created)
		return &m->threads[*slot];
	ALLOC_GROW(m->threads, m->nthreads + 1, m->athreads);
	*slot = m->nthreads;
	t = &m->threads[m->nthreads++];
	memset(t, 0, sizeof(*t));
	t->proc_id = proc_id;
	t->tid = tid;
	t->start_ns = time;
	m->dirty = true;
	return t;
}

static void set_name(struct thread *t, const char *name)
{
	snprintf(t->name, sizeof(t->name), "%s", name);
}

/* ---- reading /proc --------------------------------------------------- */

static char *read_link(const char *path)
{
	char buf[PATH_MAX];
	ssize_t n = readlink(path, buf, sizeof(buf) - 1);

	if (n <= 0)
		return NULL;
	buf[n] = 0;
	return xstrdup(buf);
}

static void read_comm(pid_t pid, pid_t tid, char *name, size_t size)
{
	char path[64];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", (int)pid, (int)tid);
	name[0] = 0;
	f = fopen(path, "re");
	if (!f)
		return;
	if (fgets(name, (int)size, f))
		name[strcspn(name, "\n")] = 0;
	fclose(f);
}

static pid_t read_ppid(pid_t pid)
{
	char path[64], buf[512], *p;
	FILE *f;
	int ppid = 0;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	/* The command name may hold spaces and parentheses: skip to the last ')'. */
	p = strrchr(buf, ')');
	if (p && sscanf(p + 1, " %*c %d", &ppid) == 1)
		return ppid;
	return 0;
}

/*
 * A file mapping whose path no longer leads to the mapped file: deleted
 * (" (deleted)"), replaced since (another inode at the path; ino 0 when
 * the record gave a build-id instead, which the cache checks), or only
 * visible under the process's own root (a container).  Returns an open
 * descriptor of the mapped file, or -1 when the path is good or nothing
 * better can be had.  /proc/PID/root/ needs the right to trace the process;
 * /proc/PID/map_files/ needs CAP_SYS_ADMIN (root) and reaches deleted files.
 */
static int mapped_file_fd(pid_t pid, uint64_t start, uint64_t end,
			  const char *path, size_t len, bool deleted, uint64_t ino)
{
	char buf[PATH_MAX + 64];
	struct stat st;
	int fd;

	if (!deleted) {
		if (!ino || (stat(path, &st) == 0 && st.st_ino == ino))
			return -1;
		snprintf(buf, sizeof(buf), "/proc/%d/root%s", (int)pid, path);
		fd = open(buf, O_RDONLY | O_CLOEXEC);
		if (fd >= 0 && fstat(fd, &st) == 0 && st.st_ino == ino)
			return fd;
		if (fd >= 0)
			close(fd);
	}
	snprintf(buf, sizeof(buf), "/proc/%d/map_files/%llx-%llx", (int)pid,
		 (unsigned long long)start, (unsigned long long)end);
	fd = open(buf, O_RDONLY | O_CLOEXEC);
	if (fd >= 0 && ino && (fstat(fd, &st) != 0 || st.st_ino != ino)) {
		close(fd);
		fd = -1;
	}
	if (fd < 0)
		pr_debug("sampling: %.*s of PID %d is not the mapped file, and %s: %s",
			 (int)len, path, (int)pid, buf, strerror(errno));
	return fd;
}

static void add_mapping(struct smp_model *m, struct proc *p, uint64_t start,
			uint64_t end, uint64_t pgoff, const char *path,
			const uint8_t *build_id, size_t build_id_len, uint64_t ino)
{
	static const char deleted[] = " (deleted)";
	struct unw_module *mod = NULL;

	if (path[0] == '/') {
		size_t len = strlen(path);
		bool gone = len > sizeof(deleted) - 1 &&
			    !strcmp(path + len - (sizeof(deleted) - 1), deleted);
		int fd;

		if (gone)
			len -= sizeof(deleted) - 1;
		fd = p->pid > 0 ? mapped_file_fd(p->pid, start, end, path, len, gone, ino) : -1;
		if (fd >= 0) {
			char *name = xasprintf("%.*s", (int)len, path);
			mod = unw_cache_module_fd(m->cache, name, fd);
			free(name);
		} else {
			mod = unw_cache_module(m->cache, path, build_id, build_id_len);
		}
	} else if (!strcmp(path, "[vdso]")) {
		mod = unw_cache_module(m->cache, path, build_id, build_id_len);
	}
	unw_space_add(p->space, start, end, pgoff, mod);
	if (p->want_exe && path[0] == '/') {
		free(p->exe);
		p->exe = xstrdup(path);
		p->want_exe = false;
	}
	m->dirty = true;
}

/* Executable mappings of a live process, from /proc/PID/maps. */
static int read_maps(struct smp_model *m, struct proc *p)
{
	char path[64], *line = NULL;
	size_t cap = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)p->pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (getline(&line, &cap, f) > 0) {
		unsigned long long start, end, pgoff, ino = 0;
		char perms[8];
		int name_at = 0;

		if (sscanf(line, "%llx-%llx %7s %llx %*s %llu %n", &start, &end, perms,
			   &pgoff, &ino, &name_at) < 4 || !strchr(perms, 'x'))
			continue;
		line[strcspn(line, "\n")] = 0;
		add_mapping(m, p, start, end, pgoff, name_at ? line + name_at : "", NULL, 0, ino);
	}
	free(line);
	fclose(f);
	return 0;
}

void smp_model_add_launched(struct smp_model *m, pid_t pid, uint64_t now)
{
	struct proc *p = new_proc(m, pid);
	bool created;

	p->ppid = getpid();
	p->start_ns = now;
	p->space = unw_space_new();
	p->fresh = true;
	p->want_exe = true;
	get_thread(m, p->proc_id, (uint32_t)pid, now, &created);
}

int smp_model_add_existing(struct smp_model *m, pid_t pid, uint64_t now)
{
	struct proc *p = new_proc(m, pid);
	char path[64];
	struct dirent *de;
	DIR *d;
	int ret;

	p->ppid = read_ppid(pid);
	p->start_ns = now;
	p->space = unw_space_new();
	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	p->exe = read_link(path);
	ret = read_maps(m, p);
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	while (d && (de = readdir(d))) {
		struct thread *t;
		bool created;

		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		t = get_thread(m, p->proc_id, (uint32_t)atoi(de->d_name), now, &created);
		read_comm(pid, (pid_t)t->tid, t->name, sizeof(t->name));
	}
	if (d)
		closedir(d);
	return ret;
}

/* The current image of pid; one read from /proc if the pid is new to us. */
static struct proc *proc_of(struct smp_model *m, pid_t pid, uint64_t time)
{
	struct proc *p = find_proc(m, pid);

	if (!p) {
		/* Its FORK record was lost, or it predates an attach. */
		smp_model_add_existing(m, pid, time);
		p = find_proc(m, pid);
	}
	return p;
}

/* ---- records --------------------------------------------------------- */

/* The sample_id trailer of non-sample records: {pid, tid, time}. */
struct trailer {
	uint32_t pid, tid;
	uint64_t time;
};

static bool get_trailer(const struct perf_event_header *h, struct trailer *t)
{
	if (h->size < sizeof(*h) + sizeof(*t))
		return false;
	memcpy(t, (const uint8_t *)h + h->size - sizeof(*t), sizeof(*t));
	return true;
}

static void on_fork(struct smp_model *m, const struct perf_event_header *h)
{
	struct { uint32_t pid, ppid, tid, ptid; uint64_t time; } r;
	struct proc *parent, *child;
	struct thread *t, *pt;
	uint64_t pti;
	bool created;

	if (h->size < sizeof(*h) + sizeof(r))
		return;
	memcpy(&r, h + 1, sizeof(r));
	parent = proc_of(m, (pid_t)r.ppid, r.time);
	if (r.pid == r.ppid) {                           /* a new thread */
		t = get_thread(m, parent->proc_id, r.tid, r.time, &created);
		t->start_ns = r.time;
		t->end_ns = 0;
	} else {                                         /* a new process */
		child = new_proc(m, (pid_t)r.pid);
		parent = find_proc(m, (pid_t)r.ppid);        /* procs moved */
		child->ppid = (pid_t)r.ppid;
		child->parent_proc_id = parent->proc_id;
		child->start_ns = r.time;
		child->exe = parent->exe ? xstrdup(parent->exe) : NULL;
		child->space = unw_space_clone(parent->space);
		t = get_thread(m, child->proc_id, r.tid, r.time, &created);
	}
	/* A new task is named after the thread that made it. */
	if (map2_find(&m->thread_map, parent->proc_id, r.ptid, &pti)) {
		pt = &m->threads[pti];
		if (created && pt != t)
			memcpy(t->name, pt->name, sizeof(t->name));
	}
	m->st.threads = m->nthreads;
	m->st.processes = m->nprocs;
}

static void on_exit_rec(struct smp_model *m, const struct perf_event_header *h)
{
	struct { uint32_t pid, ppid, tid, ptid; uint64_t time; } r;
	struct proc *p;
	uint64_t ti;

	if (h->size < sizeof(*h) + sizeof(r))
		return;
	memcpy(&r, h + 1, sizeof(r));
	p = find_proc(m, (pid_t)r.pid);
	/* A thread of an image an exec has replaced is ended already. */
	if (!p || !map2_find(&m->thread_map, p->proc_id, r.tid, &ti))
		return;
	m->threads[ti].end_ns = r.time;
	/* The image ends with its last thread (usually the main one). */
	if (r.tid == r.pid || r.time > p->end_ns)
		p->end_ns = r.time;
	m->dirty = true;
}

static void end_threads(struct smp_model *m, uint32_t proc_id, uint64_t time)
{
	for (size_t i = 0; i < m->nthreads; i++)
		if (m->threads[i].proc_id == proc_id && !m->threads[i].end_ns)
			m->threads[i].end_ns = time;
}

static void on_comm(struct smp_model *m, const struct perf_event_header *h)
{
	const uint8_t *d = (const uint8_t *)(h + 1);
	struct trailer tr;
	uint32_t pid, tid;
	char name[17];
	struct proc *p;
	struct thread *t;
	bool created;
	size_t max;

	if (!get_trailer(h, &tr) || h->size < sizeof(*h) + 8 + sizeof(tr))
		return;
	memcpy(&pid, d, 4);
	memcpy(&tid, d + 4, 4);
	max = h->size - sizeof(*h) - 8 - sizeof(tr);
	snprintf(name, sizeof(name), "%.*s", (int)strnlen((const char *)d + 8, max),
		 (const char *)d + 8);
	p = proc_of(m, (pid_t)pid, tr.time);
	if (h->misc & PERF_RECORD_MISC_COMM_EXEC) {
		if (p->fresh) {
			p->fresh = false;
		} else {
			struct proc *old = p;
			uint32_t old_id = old->proc_id;
			pid_t ppid = old->ppid;

			old->end_ns = tr.time;
			end_threads(m, old_id, tr.time);
			p = new_proc(m, (pid_t)pid);
			p->ppid = ppid;
			/* An exec's parent is the image it replaced. */
			p->parent_proc_id = old_id;
			p->start_ns = tr.time;
			p->space = unw_space_new();
		}
		p->want_exe = true;
		t = get_thread(m, p->proc_id, tid, tr.time, &created);
		set_name(t, name);
		m->st.processes = m->nprocs;
	} else {
		t = get_thread(m, p->proc_id, tid, tr.time, &created);
		set_name(t, name);
	}
	m->st.threads = m->nthreads;
	m->dirty = true;
}

static void on_mmap2(struct smp_model *m, const struct perf_event_header *h)
{
	struct {
		uint32_t pid, tid;
		uint64_t addr, len, pgoff;
		union {
			struct { uint32_t maj, min; uint64_t ino, ino_gen; };
			struct { uint8_t bid_size, res8; uint16_t res16; uint8_t bid[20]; };
		};
		uint32_t prot, flags;
	} r;
	struct trailer tr;
	const char *name;
	size_t max;
	char path[PATH_MAX];
	struct proc *p;

	if (!get_trailer(h, &tr) || h->size < sizeof(*h) + sizeof(r) + sizeof(tr))
		return;
	memcpy(&r, h + 1, sizeof(r));
	if (!(r.prot & PROT_EXEC))
		return;
	name = (const char *)(h + 1) + sizeof(r);
	max = h->size - sizeof(*h) - sizeof(r) - sizeof(tr);
	snprintf(path, sizeof(path), "%.*s", (int)strnlen(name, max), name);
	p = proc_of(m, (pid_t)r.pid, tr.time);
	if (h->misc & PERF_RECORD_MISC_MMAP_BUILD_ID)
		add_mapping(m, p, r.addr, r.addr + r.len, r.pgoff, path, r.bid,
			    r.bid_size <= 20 ? r.bid_size : 20, 0);
	else
		add_mapping(m, p, r.addr, r.addr + r.len, r.pgoff, path, NULL, 0, r.ino);
}

static void on_lost(struct smp_model *m, const struct perf_event_header *h, size_t off)
{
	struct trailer tr;
	uint64_t lost;
	struct proc *p;

	if (h->size < sizeof(*h) + off + 8)
		return;
	memcpy(&lost, (const uint8_t *)(h + 1) + off, 8);
	p = get_trailer(h, &tr) ? find_proc(m, (pid_t)tr.pid) : NULL;
	if (p)
		p->lost += lost;
	else
		m->lost_unknown += lost;
	m->st.lost += lost;
	m->dirty = true;
}

/* ---- stacks ---------------------------------------------------------- */

static uint64_t stack_hash(const uint64_t *ips, unsigned n, unsigned flags)
{
	uint64_t h = hash_u64(n * 31 + flags + 1);

	for (unsigned i = 0; i < n; i++)
		h = hash_u64(h ^ ips[i]) + i;
	return h;
}

static void stack_table_grow(struct smp_model *m)
{
	size_t cap = m->stack_cap ? m->stack_cap * 2 : 1024;
	uint32_t *slots = xcalloc(cap, sizeof(*slots));

	for (size_t i = 0; i < m->nstacks; i++) {
		size_t j = m->stacks[i].hash & (cap - 1);
		while (slots[j])
			j = (j + 1) & (cap - 1);
		slots[j] = (uint32_t)i + 1;
	}
	free(m->stack_slots);
	m->stack_slots = slots;
	m->stack_cap = cap;
}

static uint32_t intern_stack(struct smp_model *m, const uint64_t *ips, unsigned n,
			     unsigned flags)
{
	uint64_t h = stack_hash(ips, n, flags);
	struct stack *s;
	size_t j;

	if ((m->nstacks + 1) * 2 > m->stack_cap)
		stack_table_grow(m);
	for (j = h & (m->stack_cap - 1); m->stack_slots[j]; j = (j + 1) & (m->stack_cap - 1)) {
		s = &m->stacks[m->stack_slots[j] - 1];
		if (s->hash == h && s->n == n && s->flags == flags &&
		    !memcmp(&m->ips[s->off], ips, n * sizeof(*ips)))
			return m->stack_slots[j] - 1;
	}
	ALLOC_GROW(m->stacks, m->nstacks + 1, m->astacks);
	ALLOC_GROW(m->ips, m->nips + n, m->aips);
	s = &m->stacks[m->nstacks];
	s->off = (uint32_t)m->nips;
	s->n = (uint16_t)n;
	s->flags = (uint16_t)flags;
	s->hash = h;
	memcpy(&m->ips[m->nips], ips, n * sizeof(*ips));
	m->nips += n;
	m->stack_slots[j] = (uint32_t)m->nstacks + 1;
	m->st.stacks = ++m->nstacks;
	return (uint32_t)m->nstacks - 1;
}

/* Bytes left in a sample record from p; false if fewer than n. */
static bool take(const uint8_t **p, const uint8_t *end, void *out, size_t n)
{
	if ((size_t)(end - *p) < n)
		return false;
	if (out)
		memcpy(out, *p, n);
	*p += n;
	return true;
}

/*
 * The kernel copies a sample's user stack without faulting pages in: the
 * copy stops at the first page that is not present, and a stack has such
 * pages inside large frames that were never written whole (sort's
 * comparison function reserves 8.5 KiB and writes its two ends).  Every
 * sample taken in such a frame then loses the frames above it.  Reading the
 * pages the copy missed, through process_vm_readv, faults them in as any
 * read does: an untouched page becomes the shared zero page (no memory
 * used, nothing the program can see), so the samples that follow are copied
 * whole.  The sample at hand stays partial: the stack has moved on since.
 * [from, to) is what the copy should have held; reads stop at the first
 * page that cannot be read (the end of the stack).
 */
static void fault_in_stack(struct smp_model *m, pid_t pid, uint64_t from, uint64_t to)
{
	struct iovec local, remote[(SMP_STACK_MAX + 2 * 4096) / 4096];
	uint8_t bytes[ARRAY_SIZE(remote)];
	unsigned n = 0;

	for (uint64_t page = from & ~(uint64_t)4095; page < to && n < ARRAY_SIZE(remote); page += 4096)
		remote[n++] = (struct iovec){ .iov_base = (void *)(uintptr_t)(page > from ? page : from),
					      .iov_len = 1 };
	local = (struct iovec){ .iov_base = bytes, .iov_len = n };
	if (n && process_vm_readv(pid, &local, 1, remote, n, 0) > 0)
		m->st.stack_fault_ins++;
}

static void on_sample(struct smp_model *m, const struct perf_event_header *h)
{
	const uint8_t *p = (const uint8_t *)(h + 1), *end = (const uint8_t *)h + h->size;
	uint64_t ip, time, abi, regs[SMP_NREGS_USER] = { 0 }, size = 0, dyn = 0, nr = 0;
	uint32_t pid, tid;
	const uint8_t *stack_data = NULL;
	uint64_t *frames = m->frames_buf;
	unsigned n = 0, flags = 0;
	struct proc *proc;
	struct thread *t;
	bool created;
	uint32_t sid;

	if (!take(&p, end, &ip, 8) || !take(&p, end, &pid, 4) ||
	    !take(&p, end, &tid, 4) || !take(&p, end, &time, 8))
		return;
	if (m->o.kernel) {
		if (!take(&p, end, &nr, 8) || nr > (uint64_t)(end - p) / 8)
			return;
		for (uint64_t i = 0; i < nr; i++) {
			uint64_t k;
			memcpy(&k, p + i * 8, 8);
			if (k >= (uint64_t)PERF_CONTEXT_MAX) {
				if (k == (uint64_t)PERF_CONTEXT_USER)
					break;
				continue;           /* PERF_CONTEXT_KERNEL marker */
			}
			if (n < SMP_MAX_KERNEL_FRAMES)
				frames[n++] = k;
		}
		p += nr * 8;
		if (n)
			flags |= SC_STACK_KERNEL;
	}
	if (!take(&p, end, &abi, 8))
		return;
	if (abi && !take(&p, end, regs, sizeof(regs)))
		return;
	if (!take(&p, end, &size, 8))
		return;
	if (size) {
		stack_data = p;
		if (!take(&p, end, NULL, size) || !take(&p, end, &dyn, 8))
			return;
		if (dyn > size)
			dyn = size;
	}

	proc = proc_of(m, (pid_t)pid, time);
	if (abi) {
		/* regs[] in bit order (SMP_REGS_USER). */
		struct unw_regs r = {
			.ip = regs[3], .sp = regs[2], .bp = regs[1],
			.regs = { [UNW_REG_RBX] = regs[0], [UNW_REG_R12] = regs[4],
				  [UNW_REG_R13] = regs[5], [UNW_REG_R14] = regs[6],
				  [UNW_REG_R15] = regs[7] },
			.regs_known = (1u << UNW_NREGS) - 1,
		};
		struct unw_stack st = {
			.data = stack_data, .start = r.sp, .size = dyn,
			.full = dyn >= m->o.stack_size,
		};
		struct unw_result res;
		uint64_t t0 = now_ns();

		unw_unwind(proc->space, &r, &st, frames + n, SMP_MAX_USER_FRAMES, &res);
		m->st.unwind_ns += now_ns() - t0;
		n += res.nframes;
		if (res.flags & UNW_ROOT) {
			flags |= SC_STACK_ROOT;
			m->st.root++;
		} else if (res.flags & UNW_TRUNCATED) {
			flags |= SC_STACK_TRUNCATED;
			m->st.truncated++;
		} else {
			proc->partial++;
		}
		if (res.stop < ARRAY_SIZE(m->st.stops))
			m->st.stops[res.stop]++;
		if (res.stop == UNW_STOP_SHORT_COPY && dyn < m->o.stack_size)
			fault_in_stack(m, (pid_t)pid, r.sp + dyn, r.sp + m->o.stack_size);
	} else if (!n) {
		frames[n++] = ip;
	}

	sid = intern_stack(m, frames, n, flags);
	t = get_thread(m, proc->proc_id, tid, time, &created);
	if (created)
		read_comm(proc->pid, (pid_t)tid, t->name, sizeof(t->name));
	(*map2_get(&m->counts, (uint64_t)proc->proc_id << 32 | tid, sid, &created))++;
	if (m->o.timeline_size)
		tl_buf_add(&t->tl, &m->tl_budget, time, SC_TL_SAMPLE, sid, 0, 1);
	m->st.samples++;
	m->dirty = true;
}

void smp_model_record(void *ctx, const struct perf_event_header *h)
{
	struct smp_model *m = ctx;

	switch (h->type) {
	case PERF_RECORD_SAMPLE:
		on_sample(m, h);
		break;
	case PERF_RECORD_MMAP2:
		on_mmap2(m, h);
		break;
	case PERF_RECORD_COMM:
		on_comm(m, h);
		break;
	case PERF_RECORD_FORK:
		on_fork(m, h);
		break;
	case PERF_RECORD_EXIT:
		on_exit_rec(m, h);
		break;
	case PERF_RECORD_LOST:
		on_lost(m, h, 8);           /* {id, lost} */
		break;
	case PERF_RECORD_LOST_SAMPLES:
		on_lost(m, h, 0);           /* {lost} */
		break;
	default:
		break;
	}
}

void smp_model_stats(const struct smp_model *m, struct smp_stats *st)
{
	struct unw_cache_stats cs;

	*st = m->st;
	unw_cache_stats(m->cache, &cs);
	st->tables = cs.tables;
	st->table_fdes = cs.fdes;
	st->table_rows = cs.rows;
	st->table_bytes = cs.bytes;
	st->table_ns = cs.build_ns;
	st->processes = m->nprocs;
	st->threads = m->nthreads;
	st->tl_items = st->tl_bytes = st->tl_dropped = 0;
	for (size_t i = 0; i < m->nthreads; i++) {
		st->tl_items += m->threads[i].tl.items;
		st->tl_bytes += m->threads[i].tl.bytes;
		st->tl_dropped += m->threads[i].tl.dropped;
	}
}

bool smp_model_dirty(const struct smp_model *m)
{
	return m->dirty;
}

/* ---- writing --------------------------------------------------------- */

static int write_session(struct sc_writer *w, const struct smp_session_info *si)
{
	struct sc_rec_session s = {
		.method = SC_METHOD_SAMPLE,
		.frequency_hz = si->frequency_hz,
		.flags = si->flags,
		.start_realtime_ns = si->start_realtime_ns,
		.argc = (uint32_t)si->argc,
		.target_pid = (uint32_t)si->target_pid,
	};
	size_t len = 0, off = 0;
	char *buf;
	int ret;

	for (int i = 0; i < si->argc; i++)
		len += strlen(si->argv[i]) + 1;
	buf = xmalloc(len + 1);
	for (int i = 0; i < si->argc; i++) {
		size_t l = strlen(si->argv[i]) + 1;
		memcpy(buf + off, si->argv[i], l);
		off += l;
	}
	ret = sc_writer_add2(w, SC_REC_SESSION, &s, sizeof(s), buf, len);
	free(buf);
	return ret;
}

static int write_procs(struct smp_model *m, struct sc_writer *w)
{
	int ret = 0;

	for (size_t i = 0; i < m->nprocs && !ret; i++) {
		const struct proc *p = &m->procs[i];
		struct sc_rec_process r = {
			.proc_id = p->proc_id, .pid = (uint32_t)p->pid,
			.ppid = (uint32_t)p->ppid, .parent_proc_id = p->parent_proc_id,
			.start_ns = p->start_ns, .end_ns = p->end_ns,
		};
		const char *exe = p->exe ? p->exe : "";

		ret = sc_writer_add2(w, SC_REC_PROCESS, &r, sizeof(r), exe, strlen(exe) + 1);
	}
	for (size_t i = 0; i < m->nthreads && !ret; i++) {
		const struct thread *t = &m->threads[i];
		struct sc_rec_thread r = {
			.proc_id = t->proc_id, .tid = t->tid,
			.start_ns = t->start_ns, .end_ns = t->end_ns,
		};

		ret = sc_writer_add2(w, SC_REC_THREAD, &r, sizeof(r), t->name, strlen(t->name) + 1);
	}
	for (size_t i = 0; i < m->nprocs && !ret; i++) {
		const struct proc *p = &m->procs[i];
		size_t n = unw_space_count(p->space);

		for (size_t j = 0; j < n && !ret; j++) {
			struct unw_mapping mp;
			struct sc_rec_module r = { .proc_id = p->proc_id, .flags = SC_MOD_EXEC };
			const uint8_t *id;
			const char *path;

			unw_space_get(p->space, j, &mp);
			r.start = mp.start;
			r.end = mp.end;
			r.pgoff = mp.pgoff;
			path = mp.mod ? unw_module_path(mp.mod) : "//anon";
			if (mp.mod) {
				r.build_id_len = (uint32_t)unw_module_build_id(mp.mod, &id);
				memcpy(r.build_id, id, r.build_id_len);
			}
			ret = sc_writer_add2(w, SC_REC_MODULE, &r, sizeof(r), path, strlen(path) + 1);
		}
	}
	return ret;
}

static int write_samples(struct smp_model *m, struct sc_writer *w)
{
	int ret = 0;

	for (size_t i = 0; i < m->nstacks && !ret; i++) {
		const struct stack *s = &m->stacks[i];
		struct sc_rec_stack r = { .id = (uint32_t)i, .nframes = s->n, .flags = s->flags };

		ret = sc_writer_add2(w, SC_REC_STACK, &r, sizeof(r), &m->ips[s->off],
				     s->n * sizeof(uint64_t));
	}
	for (size_t i = 0; i < m->counts.cap && !ret; i++) {
		const struct kv *kv = &m->counts.slots[i];
		struct sc_rec_samples r;

		if (!kv->used)
			continue;
		r = (struct sc_rec_samples){
			.proc_id = (uint32_t)(kv->a >> 32), .tid = (uint32_t)kv->a,
			.stack_id = (uint32_t)kv->b, .count = kv->val,
		};
		ret = sc_writer_add(w, SC_REC_SAMPLES, &r, sizeof(r));
	}
	for (size_t i = 0; i < m->nthreads && !ret; i++)
		ret = tl_buf_write(&m->threads[i].tl, w, m->threads[i].proc_id, m->threads[i].tid);
	for (size_t i = 0; i <= m->nprocs && !ret; i++) {
		uint32_t id = i < m->nprocs ? m->procs[i].proc_id : NO_PROC;
		uint64_t lost = i < m->nprocs ? m->procs[i].lost : m->lost_unknown;
		uint64_t partial = i < m->nprocs ? m->procs[i].partial : 0;

		if (lost) {
			struct sc_rec_lost r = { .kind = SC_LOST_SAMPLES, .proc_id = id, .count = lost };
			ret = sc_writer_add(w, SC_REC_LOST, &r, sizeof(r));
		}
		if (partial && !ret) {
			struct sc_rec_lost r = { .kind = SC_LOST_UNWIND, .proc_id = id, .count = partial };
			ret = sc_writer_add(w, SC_REC_LOST, &r, sizeof(r));
		}
	}
	return ret;
}

int smp_model_write(struct smp_model *m, const char *path, const struct smp_session_info *si)
{
	struct sc_rec_session_end e = {
		.duration_ns = si->duration_ns,
		.exit_status = si->exit_status,
		.lost_samples = m->st.lost,
	};
	struct sc_writer *w = NULL;
	int ret;

	/* the writer puts the file in place only once it is whole */
	ret = sc_writer_open(path, SC_FEAT_SAMPLE, &w);
	if (ret)
		return ret;
	ret = write_session(w, si);
	if (!ret)
		ret = write_procs(m, w);
	if (!ret)
		ret = write_samples(m, w);
	if (!ret)
		ret = sc_writer_add(w, SC_REC_SESSION_END, &e, sizeof(e));
	if (ret)
		sc_writer_discard(w);
	else
		ret = sc_writer_close(w);
	if (!ret)
		m->dirty = false;
	return ret;
}
