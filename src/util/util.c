/* util — see util.h. */
#include "util/util.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <elf.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static void vpr(const char *prefix, const char *fmt, va_list ap)
{
	fprintf(stderr, "stackclock: %s", prefix);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void pr_err(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vpr("", fmt, ap);
	va_end(ap);
}

void pr_warn(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vpr("warning: ", fmt, ap);
	va_end(ap);
}

void pr_debug(const char *fmt, ...)
{
	va_list ap;
	if (!getenv("STACKCLOCK_DEBUG"))
		return;
	va_start(ap, fmt);
	vpr("debug: ", fmt, ap);
	va_end(ap);
}

static void *oom(size_t n)
{
	fprintf(stderr, "stackclock: out of memory allocating %zu bytes\n", n);
	abort();
}

/*
 * Large blocks (the analysis's tables of a million call paths) are asked to
 * be backed by transparent huge pages, where the kernel offers them on
 * request (THP "madvise" mode): one page fault per 2 MiB instead of per
 * 4 KiB, which halves the time a report spends building its tables on a
 * VM where faults are costly.  glibc serves such blocks with mmap (and
 * grows them with mremap, which keeps the advice), so the advice covers
 * memory no one else uses.  Purely a hint: failures are ignored.
 */
#define HUGE_ADVICE_MIN (8u << 20)

static void *advise_huge(void *p, size_t n)
{
	uintptr_t start, end;

	if (!p || n < HUGE_ADVICE_MIN)
		return p;
	start = ((uintptr_t)p + 4095) & ~(uintptr_t)4095;
	end = ((uintptr_t)p + n) & ~(uintptr_t)4095;
	if (end > start)
		madvise((void *)start, end - start, MADV_HUGEPAGE);
	return p;
}

void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	return p ? advise_huge(p, n) : oom(n);
}

void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);
	return p ? advise_huge(p, n * size) : oom(n * size);
}

void *calloc_huge(size_t n, size_t size)
{
	return advise_huge(calloc(n ? n : 1, size ? size : 1), n * size);
}

void *xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);
	return q ? advise_huge(q, n) : oom(n);
}

char *xstrdup(const char *s)
{
	char *p = strdup(s);
	return p ? p : oom(strlen(s) + 1);
}

char *xasprintf(const char *fmt, ...)
{
	va_list ap;
	char *s;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&s, fmt, ap);
	va_end(ap);
	return n < 0 ? oom(0) : s;
}

void grow_array(void **arr, size_t *alloc, size_t need, size_t elem)
{
	size_t n;

	if (need <= *alloc)
		return;
	n = *alloc ? *alloc : 16;
	while (n < need)
		n *= 2;
	*arr = xrealloc(*arr, n * elem);
	*alloc = n;
}

#define BIG_MIN (1u << 20)

static size_t big_bytes(size_t n, size_t elem)
{
	size_t b = BIG_MIN;

	while (b / elem < n)
		b *= 2;
	return b;
}

void big_grow(void **arr, size_t *alloc, size_t need, size_t elem)
{
	size_t old = *alloc ? big_bytes(*alloc, elem) : 0, nb;
	void *p;

	if (need <= *alloc)
		return;
	nb = big_bytes(need > 2 * *alloc ? need : 2 * *alloc, elem);
	if (*arr)
		p = mremap(*arr, old, nb, MREMAP_MAYMOVE);
	else
		p = mmap(NULL, nb, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		oom(nb);
	if (nb >= HUGE_ADVICE_MIN)
		madvise(p, nb, MADV_HUGEPAGE);
	*arr = p;
	*alloc = nb / elem;
}

void big_free(void *arr, size_t alloc, size_t elem)
{
	if (arr)
		munmap(arr, big_bytes(alloc, elem));
}

int grow_bytes(uint8_t **buf, size_t *alloc, size_t need)
{
	size_t n = *alloc ? *alloc : 64 * 1024;
	uint8_t *p;

	if (need <= *alloc)
		return 0;
	while (n < need) {
		if (n > SIZE_MAX / 2)
			return -ENOMEM;
		n *= 2;
	}
	p = realloc(*buf, n);
	if (!p)
		return -ENOMEM;
	*buf = p;
	*alloc = n;
	return 0;
}

uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

const void *vdso_image(size_t *size)
{
	const Elf64_Ehdr *eh = (const void *)getauxval(AT_SYSINFO_EHDR);
	const Elf64_Phdr *ph;
	size_t end;

	if (!eh || memcmp(eh->e_ident, ELFMAG, SELFMAG))
		return NULL;
	/* The image ends with its section headers or its last segment. */
	ph = (const void *)((const char *)eh + eh->e_phoff);
	end = eh->e_shoff + (size_t)eh->e_shnum * eh->e_shentsize;
	for (unsigned i = 0; i < eh->e_phnum; i++)
		if (ph[i].p_type == PT_LOAD && ph[i].p_offset + ph[i].p_filesz > end)
			end = ph[i].p_offset + ph[i].p_filesz;
	*size = end;
	return eh;
}

/* ---- output files ---------------------------------------------------- */

/*
 * An entry someone else put in a shared directory (sticky and writable by
 * all, like /tmp): a link, which the kernel's protected_symlinks refuses
 * to follow for open() but we would resolve ourselves and rename over its
 * target; a FIFO or device, which protected_fifos does not cover without
 * O_CREAT, and whose reader would get the profile.  In such a directory an
 * entry is used only when we or the directory's owner own it.  lst is the
 * entry's lstat.
 */
static bool entry_untrusted(const char *path, const struct stat *lst)
{
	char *copy;
	struct stat dst;
	bool bad = false;

	if (S_ISREG(lst->st_mode) || lst->st_uid == geteuid())
		return false;
	copy = xstrdup(path);
	if (!stat(dirname(copy), &dst) && (dst.st_mode & S_ISVTX) && (dst.st_mode & S_IWOTH) &&
	    dst.st_uid != lst->st_uid)
		bad = true;
	free(copy);
	return bad;
}

const char *outfile_strerror(int err)
{
	return err == -ELOOP ? "a link, FIFO or device another user made in a shared directory (not used)"
			     : strerror(-err);
}

/*
 * The temporary file, in dir: unnamed (O_TMPFILE) where the file system
 * allows it, so that a recorder killed while writing leaves nothing behind
 * (the named one, ".NAME.XXXXXX", stayed); named where O_TMPFILE is refused
 * (an old kernel, a file system without it).  0600 until the mode is set.
 */
static int tmp_create(struct outfile *out, const char *dir)
{
	out->fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (out->fd >= 0) {
		out->unnamed = true;
		return 0;
	}
	out->fd = mkostemp(out->tmp, O_CLOEXEC);
	return out->fd < 0 ? -errno : 0;
}

/*
 * Give the unnamed temporary a name of out->tmp's pattern, unused (as
 * mkstemp picks one), for the rename over the destination: the only moment
 * a killed recorder could leave it.  Through /proc/self/fd, else by
 * AT_EMPTY_PATH (which needs CAP_DAC_READ_SEARCH).  0 or -errno.
 */
static int tmp_link(struct outfile *out)
{
	static const char chars[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
	char *x = out->tmp + strlen(out->tmp) - 6, proc[64];
	struct timespec ts;
	uint64_t v;

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", out->fd);
	clock_gettime(CLOCK_MONOTONIC, &ts);
	v = (uint64_t)ts.tv_nsec ^ (uint64_t)ts.tv_sec << 30 ^ (uint64_t)getpid() << 16;
	for (int tries = 0; tries < 100; tries++) {
		v = v * 6364136223846793005ull + 1442695040888963407ull;
		for (int i = 0; i < 6; i++)
			x[i] = chars[(v >> (16 + 6 * i)) % (sizeof(chars) - 1)];
		if (!linkat(AT_FDCWD, proc, AT_FDCWD, out->tmp, AT_SYMLINK_FOLLOW) ||
		    (errno == ENOENT && !linkat(out->fd, "", AT_FDCWD, out->tmp, AT_EMPTY_PATH))) {
			out->unnamed = false;
			return 0;
		}
		if (errno != EEXIST)
			return -errno;
	}
	return -EEXIST;
}

int outfile_open(struct outfile *out, const char *path)
{
	char *real = NULL, *dir_copy, *base_copy;
	const char *dir;
	struct stat st, lst;
	bool exists;
	int err;

	memset(out, 0, sizeof(*out));
	out->fd = -1;
	/* one look at the entry: a link is resolved only when it is trusted
	 * (looked at again, a name someone swaps meanwhile could resolve
	 * elsewhere); any other entry is replaced by the rename, never
	 * followed */
	exists = lstat(path, &lst) == 0;
	if (exists && entry_untrusted(path, &lst))
		return -ELOOP;
	if (exists && S_ISLNK(lst.st_mode))
		exists = stat(path, &st) == 0;
	else
		st = lst;
	if (exists && !S_ISREG(st.st_mode)) {
		out->fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
		if (out->fd < 0)
			return -errno;
		out->path = xstrdup(path);
		return 0;
	}
	if (exists && S_ISLNK(lst.st_mode))
		real = realpath(path, NULL);
	out->path = real ? real : xstrdup(path);
	dir_copy = xstrdup(out->path);
	base_copy = xstrdup(out->path);
	dir = dirname(dir_copy);
	out->tmp = xasprintf("%s/.%s.XXXXXX", dir, basename(base_copy));
	free(base_copy);
	err = tmp_create(out, dir);
	free(dir_copy);
	if (err) {
		free(out->tmp);
		free(out->path);
		memset(out, 0, sizeof(*out));
		out->fd = -1;
		return err;
	}
	/* profiles are private whatever the umask, as perf's are: they hold
	 * the command line, paths and the program's own names (mkostemp made
	 * the temporary 0600; say so in case a future libc does not) */
	if (fchmod(out->fd, 0600) < 0)
		pr_debug("cannot set the mode of %s: %s", out->tmp, strerror(errno));
	return 0;
}

/* Make the rename itself durable: fsync the directory (best effort). */
static void sync_dir_of(const char *path)
{
	char *copy = xstrdup(path);
	int fd = open(dirname(copy), O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd >= 0) {
		fsync(fd);
		close(fd);
	}
	free(copy);
}

int outfile_commit(struct outfile *out)
{
	int ret = 0;

	if (out->tmp && fsync(out->fd) < 0)
		ret = -errno;
	if (!ret && out->unnamed)
		ret = tmp_link(out);
	if (close(out->fd) < 0 && !ret)
		ret = -errno;
	out->fd = -1;
	if (!ret && out->tmp && rename(out->tmp, out->path) < 0)
		ret = -errno;
	if (out->tmp && ret && !out->unnamed)
		unlink(out->tmp);
	else if (out->tmp && !ret)
		sync_dir_of(out->path);
	free(out->tmp);
	free(out->path);
	out->tmp = out->path = NULL;
	return ret;
}

void outfile_discard(struct outfile *out)
{
	if (out->fd >= 0)
		close(out->fd);
	if (out->tmp && !out->unnamed)
		unlink(out->tmp);
	free(out->tmp);
	free(out->path);
	memset(out, 0, sizeof(*out));
	out->fd = -1;
}

int outfile_probe(const char *path)
{
	struct outfile o;
	struct stat st;
	int ret;

	/* another user's entry in a shared directory is refused (outfile_open);
	 * a FIFO with no reader yet will have one when the data is written */
	if (!lstat(path, &st) && entry_untrusted(path, &st))
		return -ELOOP;
	if (!stat(path, &st) && S_ISFIFO(st.st_mode))
		return 0;
	ret = outfile_open(&o, path);
	if (!ret)
		outfile_discard(&o);
	return ret;
}

/* ---- processes ------------------------------------------------------- */

int proc_owner(int pid, uid_t *uid, gid_t *gid)
{
	char path[64];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%d", pid);
	if (stat(path, &st))
		return -errno;
	*uid = st.st_uid;
	*gid = st.st_gid;
	return 0;
}

int give_to_proc_owner(int fd, int pid)
{
	struct stat fst;
	uid_t uid = 0;
	gid_t gid = 0;
	int ret = proc_owner(pid, &uid, &gid);

	if (ret)
		return ret;
	if (fstat(fd, &fst))
		return -errno;
	if ((fst.st_uid != uid || fst.st_gid != gid) && fchown(fd, uid, gid))
		return -errno;
	return 0;
}

int proc_children(int pid, int *out, int max)
{
	char path[64];
	int n = 0;
	long v;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/children", pid, pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (fscanf(f, "%ld", &v) == 1) {
		if (n < max)
			out[n] = (int)v;
		n++;
	}
	fclose(f);
	return n;
}

bool proc_exited_msg(int pid, char *msg, size_t len)
{
	char path[64], buf[1024], *paren, *f[20];
	int n = 0;
	FILE *fp;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	fp = fopen(path, "re");
	if (!fp)
		return false;
	paren = fgets(buf, sizeof(buf), fp) ? strrchr(buf, ')') : NULL;
	fclose(fp);
	if (!paren || paren[1] != ' ')
		return false;
	/* after "PID (COMM) ": state, ppid, ... num_threads is the 18th */
	for (char *save = NULL, *t = strtok_r(paren + 2, " ", &save); t && n < 20; t = strtok_r(NULL, " ", &save))
		f[n++] = t;
	if (n < 18 || (f[0][0] != 'Z' && f[0][0] != 'X') || atoi(f[17]) > 1)
		return false;
	snprintf(msg, len, "process %d has exited (a zombie: state %c in /proc/%d/stat; its parent %s has not "
		 "reaped it yet, which is why ps still lists it): nothing to attach to", pid, f[0][0], pid, f[1]);
	return true;
}

bool proc_running(int pid)
{
	char path[64], buf[512], *paren;
	FILE *f;
	bool running = false;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "re");
	if (!f)
		return false;
	/* "PID (COMM) STATE ...": COMM may hold spaces and parentheses */
	if (fgets(buf, sizeof(buf), f) && (paren = strrchr(buf, ')')) && paren[1] == ' ')
		running = paren[2] != 'Z' && paren[2] != 'X';
	fclose(f);
	return running;
}
