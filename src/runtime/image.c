/*
 * image — this process image's shared-memory file (shm.h): created in the
 * recorder's directory, mapped, its header written; backed ahead of the
 * engine's arena as it grows (commit_to); and the spare file a process
 * keeps made ahead, for a fork child that could not create its own.
 */
#include "runtime/rt.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>

#define COMMIT_STEP SC_SHM_COMMIT_STEP  /* the file grows by at least this much, */
#define COMMIT_FRAC 8                    /* or an eighth of its size */

/*
 * The directory of our files, checked like shm_fd() checks the file: held
 * open so that a chroot does not hide it, reopened by path if the program
 * closed it, never a directory of the program's that took its number.
 */
static int dir_fd(void)
{
	int fd = rt.dirfd;
	struct stat st;
	long nfd;

	if (fd >= 0 && !rt_sys2(SYS_fstat, fd, &st) && st.st_dev == rt.dir_dev && st.st_ino == rt.dir_ino)
		return fd;
	nfd = rt_sys4(SYS_openat, AT_FDCWD, rt.dir, O_PATH | O_DIRECTORY | O_CLOEXEC, 0);
	nfd = fd_high(nfd);
	if (nfd < 0)
		return -1;
	if (rt_sys2(SYS_fstat, nfd, &st) || (rt.dir_ino && (st.st_dev != rt.dir_dev || st.st_ino != rt.dir_ino))) {
		rt_close((int)nfd);
		return -1;
	}
	rt.dir_dev = st.st_dev;
	rt.dir_ino = st.st_ino;
	rt.dirfd = (int)nfd;
	return (int)nfd;
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

	if (fd >= 0 && !rt_sys2(SYS_fstat, fd, &st) && st.st_dev == rt.dev && st.st_ino == rt.ino)
		return fd;
	nfd = dir_fd();
	if (nfd >= 0)
		nfd = (int)rt_sys4(SYS_openat, nfd, rt.name, O_RDWR | O_NOFOLLOW | O_CLOEXEC, 0);
	if (nfd < 0)
		return -1;
	if (rt_sys2(SYS_fstat, nfd, &st) || st.st_dev != rt.dev || st.st_ino != rt.ino) {
		rt_close(nfd);
		return -1;
	}
	nfd = fd_high(nfd);
	if (nfd < 0)
		return -1;
	if (!__atomic_compare_exchange_n(&rt.fd, &fd, nfd, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
		rt_close(nfd);
		return fd;
	}
	return nfd;
}

/*
 * Back [off, off+len) of the arena before first use.  The file grows in
 * steps of COMMIT_STEP or an eighth of its size, whichever is larger (so a
 * short-lived image costs little and a big one few system calls), never
 * past the mapping or the file-size limit (a target
 * must not get SIGXFSZ because of us): fallocate, so that a full tmpfs
 * fails here rather than with SIGBUS later, then the pages are mapped in
 * now, so that the page faults are ours, made here, and forgotten with the
 * ring's records instead of being charged to the program.  Inside a
 * sandbox only what was committed before it closed is used.
 */
int commit_to(uint64_t end)
{
	uint64_t have = __atomic_load_n(&rt.committed, __ATOMIC_ACQUIRE), want, step;
	int fd;
	long ret;

	if (end <= have)
		return 0;
	if (rt.sandboxed) {
		why(SC_SHM_WHY_SECCOMP);
		return -1;
	}
	if (end > rt.cap) {
		why(rt.cap == rt.fsize_max ? SC_SHM_WHY_FSIZE : rt.cap < SC_SHM_ARENA_SIZE ? SC_SHM_WHY_AS : 0);
		return -1;
	}
	step = have / COMMIT_FRAC > COMMIT_STEP ? (have / COMMIT_FRAC + PAGE - 1) & ~(PAGE - 1) : COMMIT_STEP;
	want = (end + PAGE - 1) & ~(PAGE - 1);
	if (want < have + step)
		want = have + step;
	if (want > rt.cap)
		want = rt.cap;
	if (want < end)
		want = end;
	fd = shm_fd();
	if (fd < 0)
		return -1;
	ret = rt_sys4(SYS_fallocate, fd, 0, (long)have, (long)(want - have));
	if (ret) {
		why(ret == -ENOSPC ? SC_SHM_WHY_SPACE : ret == -EFBIG ? SC_SHM_WHY_FSIZE : 0);
		return -1;
	}
	if (rt_sys3(SYS_madvise, rt.arena.base + have, want - have, MADV_POPULATE_WRITE)) {
		uint8_t *p;

		for (p = rt.arena.base + have; p < rt.arena.base + want; p += PAGE)
			*(volatile uint8_t *)p = *(volatile uint8_t *)p;
	}
	while (have < want &&
	       !__atomic_compare_exchange_n(&rt.committed, &have, want, 0, __ATOMIC_RELEASE,
					    __ATOMIC_ACQUIRE))
		;
	return 0;
}

static int rt_commit(struct sc_eng_arena *a, uint64_t off, uint64_t len)
{
	int ret = commit_to(off + len);

	(void)a;
	ring_discard();
	return ret;
}

/*
 * The engine's copies of timeline items into their chunk: written into the
 * file rather than through the mapping, whose pages a first touch made
 * cost about 13 us each on a VM (its shadow page tables), more than the
 * bytes written in them; the kernel writes through its own mapping.  Not
 * inside a sandbox (the system call may be refused, or kill): the engine
 * copies then.
 */
static int rt_write(struct sc_eng_arena *a, uint64_t off, const void *src, uint64_t len)
{
	const uint8_t *p = src;
	long n;
	int fd;

	(void)a;
	if (rt.sandboxed || off + len > __atomic_load_n(&rt.committed, __ATOMIC_ACQUIRE))
		return -1;
	fd = shm_fd();
	if (fd < 0)
		return -1;
	while (len) {
		n = rt_sys4(SYS_pwrite64, fd, p, (long)len, (long)off);
		if (n == -EINTR)
			continue;
		if (n <= 0)
			break;
		p += n;
		off += (uint64_t)n;
		len -= (uint64_t)n;
	}
	ring_discard();
	return len ? -1 : 0;
}

/*
 * The most of the arena we may map and fill: SC_SHM_ARENA_SIZE, no more
 * than the file-size limit allows, and no more than a sixteenth of an
 * address-space limit (the rest is the program's).
 */
static void arena_limits(void)
{
	struct rlimit lim;

	rt.cap = SC_SHM_ARENA_SIZE;
	rt.fsize_max = UINT64_MAX;
	if (!rt_sys4(SYS_prlimit64, 0, RLIMIT_FSIZE, 0, &lim) && lim.rlim_cur != RLIM_INFINITY) {
		rt.fsize_max = (uint64_t)lim.rlim_cur & ~(PAGE - 1);
		if (rt.cap > rt.fsize_max)
			rt.cap = rt.fsize_max;
	}
	if (!rt_sys4(SYS_prlimit64, 0, RLIMIT_AS, 0, &lim) && lim.rlim_cur != RLIM_INFINITY &&
	    rt.cap > ((uint64_t)lim.rlim_cur / 16 & ~(PAGE - 1))) {
		rt.cap = (uint64_t)lim.rlim_cur / 16 & ~(PAGE - 1);
		rt.why |= SC_SHM_WHY_AS;
	}
}

/* A new, empty image file in dfd, named into name[len]: its descriptor or -1. */
static int image_create(int dfd, char *name, size_t len)
{
	static uint64_t seq;
	int fd = -1, n;
	char *p;

	for (n = 0; n < 100; n++) {
		p = rt_stpcpy(name, rt.stem, len);
		p = rt_stpcpy(p, ".", len - (size_t)(p - name));
		p = rt_utoa(p, (uint64_t)rt_getpid(), len - (size_t)(p - name));
		p = rt_stpcpy(p, ".", len - (size_t)(p - name));
		rt_utoa(p, rt_clock() + __atomic_fetch_add(&seq, 1, __ATOMIC_RELAXED), len - (size_t)(p - name));
		fd = (int)rt_sys4(SYS_openat, dfd, name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		if (fd != -EEXIST)
			break;
	}
	return fd_high(fd);
}

/*
 * A program may fork after lowering RLIMIT_NOFILE so far that no
 * descriptor is left (and fd_room_begin() cannot raise it without
 * CAP_SYS_RESOURCE): the child could not create its image.  So a process
 * keeps one image file made ahead; a fork's prepare handler hands it to the
 * forking thread (one child takes it: concurrent forks cannot share it),
 * the child makes it its own, the parent closes its copy and makes a new
 * one when it can.  An unused one is empty: the recorder removes it.
 */
/* Still the spare made as id: a program may close descriptors and reuse them. */
static int spare_is(int fd, const uint64_t id[2])
{
	struct stat st;

	return !rt_sys2(SYS_fstat, fd, &st) && st.st_dev == id[0] && st.st_ino == id[1];
}

/* A spare taken by a fork: closed if it is still ours. */
void spare_drop(void)
{
	if (tls.spare && spare_is(tls.spare - 1, tls.x->spare_id))
		rt_close(tls.spare - 1);
	tls.spare = 0;
}

void spare_make(void)
{
	struct rlimit lim;
	struct stat st;
	int dfd, fd, room;

	if (rt.state != RT_ON || rt.sandboxed || __atomic_load_n(&rt.spare_fd, __ATOMIC_RELAXED) >= 0)
		return;
	room = fd_room_begin(&lim);
	dfd = dir_fd();
	fd = dfd < 0 ? -1 : image_create(dfd, rt.spare_name, sizeof(rt.spare_name));
	fd_room_end(room, &lim);
	if (fd < 0)
		return;
	if (rt_sys2(SYS_fstat, fd, &st)) {
		rt_close(fd);
		return;
	}
	rt.spare_id[0] = st.st_dev;
	rt.spare_id[1] = st.st_ino;
	__atomic_store_n(&rt.spare_fd, fd, __ATOMIC_RELEASE);
}

/*
 * An image that could not be made says so to the recorder by an empty file
 * "<stem>.<pid>.E<errno>" (a full file system still takes a name): its
 * calls are missing, and the recorder tells why.  err: what failed, or 0 to
 * take it from the reason commit_to() gave.  Not for the file-size and
 * address-space limits, which the recorder names itself (it shares them).
 */
static void image_failed(int dfd, long err)
{
	char name[sizeof(rt.name)], *p;
	int fd;

	if (err == -ENOMEM || err == -EFBIG || (!err && !(rt.why & SC_SHM_WHY_SPACE) &&
						 (rt.why & (SC_SHM_WHY_FSIZE | SC_SHM_WHY_AS))))
		return;
	if (!err)
		err = rt.why & SC_SHM_WHY_SPACE ? -ENOSPC : -EIO;
	p = rt_stpcpy(name, rt.stem, sizeof(name));
	p = rt_stpcpy(p, ".", sizeof(name) - (size_t)(p - name));
	p = rt_utoa(p, (uint64_t)rt_getpid(), sizeof(name) - (size_t)(p - name));
	p = rt_stpcpy(p, ".E", sizeof(name) - (size_t)(p - name));
	rt_utoa(p, (uint64_t)-err, sizeof(name) - (size_t)(p - name));
	fd = (int)rt_sys4(SYS_openat, dfd, name, O_RDONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd >= 0)
		rt_close(fd);
}

/*
 * Create this image's file, map it, write the header.  parent: the fork
 * parent's header (NULL for a new program).  0 or -1 (the recorder told,
 * image_failed).
 */
int image_open(const struct sc_shm_header *parent)
{
	struct sc_shm_header *h;
	struct stat st;
	int fd = -1, n, pid = rt_getpid(), dfd = dir_fd();
	long map;

	if (dfd < 0)
		return -1;
	arena_limits();
	if (rt.cap < SC_SHM_MIN_SIZE) {
		why(rt.cap < rt.fsize_max ? SC_SHM_WHY_AS : SC_SHM_WHY_FSIZE);
		return -1;
	}
	if (parent && tls.spare && spare_is(tls.spare - 1, tls.x->spare_id)) {
		fd = tls.spare - 1;    /* made ahead by the parent */
		rt_stpcpy(rt.name, tls.x->spare_name, sizeof(rt.name));
		tls.spare = 0;
	} else {
		tls.spare = 0;
		fd = image_create(dfd, rt.name, sizeof(rt.name));
	}
	if (fd < 0) {
		image_failed(dfd, fd);
		return -1;
	}
	rt.committed = 0;
	rt.fd = fd;
	if (!rt_sys2(SYS_fstat, fd, &st)) {
		rt.dev = st.st_dev;
		rt.ino = st.st_ino;
	}
	map = rt_sys6(SYS_mmap, 0, (long)rt.cap, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, fd, 0);
	if (rt_mmap_failed(map)) {
		if (map == -ENOMEM)
			why(SC_SHM_WHY_AS);
		goto fail;
	}
	rt.arena.base = (uint8_t *)map;
	if (commit_to(SC_SHM_HEADER_SIZE)) {
		rt_sys2(SYS_munmap, map, rt.cap);
		goto fail;
	}
	h = (struct sc_shm_header *)map;
	h->arena.size = rt.cap;
	h->arena.bump = SC_SHM_HEADER_SIZE;
	h->version = SC_SHM_VERSION;
	h->pid = (uint32_t)pid;
	h->ppid = (uint32_t)rt_sys0(SYS_getppid);
	h->start_tsc = rt_clock();
	h->start_ns = mono_ns();
	h->os_requested = rt.os_mask;
	h->fd_base = (uint32_t)rt.fd_base;
	h->lost_why = rt.why;
	if (parent) {
		h->flags |= SC_SHM_FORKED;     /* parent_file: set by the caller */
		memcpy(h->exe, parent->exe, sizeof(h->exe));   /* a chroot hides /proc */
	} else {
		n = (int)rt_sys3(SYS_readlink, "/proc/self/exe", h->exe, sizeof(h->exe) - 1);
		h->exe[n > 0 ? n : 0] = 0;
	}
	rt.hdr = h;
	/* the engine may ask for more than the mapping: commit_to() refuses
	 * it, naming the limit */
	sc_eng_arena_attach(&rt.arena, (void *)map, SC_SHM_ARENA_SIZE);
	rt.arena.commit = rt_commit;
	rt.arena.newaddr = rt_newaddr;
	rt.arena.cfa_of = rt_cfa_of;
	rt.arena.write = rt_write;
	if (rt.tl_size) {
		h->tl_size = h->tl_left = rt.tl_size;
		rt.arena.tl_left = &h->tl_left;
	}
	rt.pid = pid;
	__atomic_store_n(&h->magic, SC_SHM_MAGIC, __ATOMIC_RELEASE);
	return 0;
fail:
	rt_close(fd);
	rt_sys3(SYS_unlinkat, dfd, rt.name, 0);
	rt.fd = -1;
	image_failed(dfd, rt_mmap_failed(map) ? map : 0);
	return -1;
}

/* This image's header while the runtime is on (patch.c reports there what
 * it patched), else NULL. */
struct sc_shm_header *sc_rt_shm_header(void)
{
	return rt.state == RT_ON && *rt_alive ? rt.hdr : NULL;
}

/* Bytes of the current image's arena for the runtime's other parts (a
 * table libcall.c publishes): their offset, or 0. */
uint64_t sc_rt_alloc(uint64_t len)
{
	return sc_rt_shm_header() ? sc_eng_alloc(&rt.arena, len) : 0;
}
