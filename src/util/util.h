/*
 * util — small helpers shared by the command-line tool and its libraries.
 *
 * Contract:
 *  - xmalloc/xcalloc/xrealloc/xstrdup/xasprintf and ALLOC_GROW abort the
 *    *tool* with a message on OOM; grow_bytes() returns -ENOMEM instead.
 *    Nothing here may be used by the injected runtime (src/runtime/), which
 *    lives inside someone else's process and may not exit or print there.
 *  - The x* functions return memory the caller frees with free().
 *  - pr_err() prints one line "stackclock: <message>" to stderr; callers then
 *    return a negative errno or a non-zero status.  Library code never exits.
 *  - pr_warn() is the same with "warning: ", for damage the tool works around.
 *  - Not thread-safe beyond what stdio gives; the tool is single-threaded.
 */
#ifndef SC_UTIL_H
#define SC_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <stdbool.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define SC_PRINTF(a, b) __attribute__((format(printf, a, b)))

void pr_err(const char *fmt, ...) SC_PRINTF(1, 2);
void pr_warn(const char *fmt, ...) SC_PRINTF(1, 2);
/* Verbose diagnostics, shown only when STACKCLOCK_DEBUG is set. */
void pr_debug(const char *fmt, ...) SC_PRINTF(1, 2);

void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
/* calloc() with large blocks' huge pages advised (see xcalloc); NULL on
 * OOM, for code that reports -ENOMEM itself; freed with free(). */
void *calloc_huge(size_t n, size_t size);
char *xasprintf(const char *fmt, ...) SC_PRINTF(1, 2);

/*
 * In an array sorted by a uint64_t key, the number of leading elements whose
 * key is <= addr: the index just past the last such element, 0 if none.
 * Every "which symbol/map/range starts at or before this address" lookup
 * goes through it.  Use UPPER_BOUND(v, n, field, addr).
 */
static inline size_t upper_bound(const void *base, size_t n, size_t stride,
				     size_t key_off, uint64_t addr)
{
	const char *p = base;
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (*(const uint64_t *)(p + mid * stride + key_off) <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

#define UPPER_BOUND(v, n, field, addr)                                   \
	(upper_bound((v), (n), sizeof(*(v)),                             \
			 offsetof(__typeof__(*(v)), field), (addr)) +        \
	 0 * sizeof(char[__builtin_types_compatible_p(                        \
			 __typeof__((v)->field), uint64_t) ? 1 : -1]))

/* Grow *arr (of *alloc elements of size elem) so that index need-1 fits. */
void grow_array(void **arr, size_t *alloc, size_t need, size_t elem);
#define ALLOC_GROW(arr, need, alloc) \
	grow_array((void **)&(arr), &(alloc), (need), sizeof(*(arr)))

/*
 * Arrays that may grow to hundreds of megabytes (a recording's call-tree
 * nodes): mapped from the kernel, grown by mremap (moved, never copied),
 * huge pages advised.  Freed with big_free(arr, alloc, elem) only.
 */
void big_grow(void **arr, size_t *alloc, size_t need, size_t elem);
void big_free(void *arr, size_t alloc, size_t elem);
#define BIG_GROW(arr, need, alloc) \
	big_grow((void **)&(arr), &(alloc), (need), sizeof(*(arr)))

/*
 * Make the byte buffer *buf (of *alloc bytes, or NULL and 0) hold at least
 * need bytes, doubling from 64 KiB; the contents are kept.  Returns 0, or
 * -ENOMEM with *buf untouched: for library code, which may not exit.
 */
int grow_bytes(uint8_t **buf, size_t *alloc, size_t need);

/*
 * An output file that replaces its destination only once it is complete:
 * written to a temporary file in the same directory, fsync'ed, then
 * renamed over the destination, so a full disk or a crash never leaves a
 * damaged file where a good one was.  The temporary is unnamed (O_TMPFILE)
 * until the rename, so a process killed before leaves no file; where the
 * file system refuses that, it is ".NAME.XXXXXX" from the start.  A destination that
 * exists and is not a regular file (a FIFO, /dev/null, a terminal) is
 * written in place; a symbolic link is followed, and the file it names is
 * replaced, except a link of another user in a sticky directory writable
 * by all (/tmp: the kernel's protected_symlinks rule), refused with
 * -ELOOP.  The file written is private (0600) whatever the umask or the
 * mode of the file it replaces: profiles hold command lines and names.
 *
 * outfile_open: 0 and out->fd to write to, or -errno (nothing created).
 * outfile_commit: fsync, close and rename; 0, or -errno with the temporary
 * removed and the destination untouched.  outfile_discard: close and
 * remove the temporary (NULL-safe after a failed open).  Both free what
 * outfile_open allocated.
 * outfile_probe: could outfile_open succeed for path?  Creates and removes
 * a temporary file; 0 or -errno.
 */
struct outfile {
	int fd;
	char *path;               /* where the rename goes (symlinks resolved) */
	char *tmp;                /* the temporary file, or NULL: in place */
	bool unnamed;             /* tmp not made yet: the file is O_TMPFILE's */
};
int outfile_open(struct outfile *out, const char *path);
int outfile_commit(struct outfile *out);
void outfile_discard(struct outfile *out);
int outfile_probe(const char *path);
/* outfile_open's -errno in words (its -ELOOP is the refused link). */
const char *outfile_strerror(int err);

/*
 * Files made for a process of another user (attaching as root):
 * proc_owner: the owner of process pid (its /proc directory: the
 * effective user and group), 0 or -errno.  give_to_proc_owner: make the
 * file open as fd the property of process pid's owner (it reads them in
 * the session's directory, which stays ours); 0 or -errno.
 */
int proc_owner(int pid, uid_t *uid, gid_t *gid);
int give_to_proc_owner(int fd, int pid);

/*
 * The children of pid's main thread (/proc/PID/task/PID/children) into
 * out[max]; how many there are (may exceed max; 0 if unreadable).
 */
int proc_children(int pid, int *out, int max);
/* Does process pid exist and run (not a zombie waiting to be reaped)? */
bool proc_running(int pid);
/* Has process pid exited, its parent not having reaped it yet (state Z or
 * X in /proc/PID/stat, no thread left; `ps` still lists it)?  Then the one
 * line that says so, for an attach to it, is written into msg. */
bool proc_exited_msg(int pid, char *msg, size_t len);

/* Nanoseconds of CLOCK_MONOTONIC. */
uint64_t now_ns(void);

/*
 * This process's vdso: the ELF image the kernel maps into every process
 * (AT_SYSINFO_EHDR), read-only, and its size in *size.  NULL if there is
 * none.  Every process under the same kernel maps the same image.
 */
const void *vdso_image(size_t *size);

/* 64-bit FNV-1a style mixer, for hash tables keyed by integers. */
static inline uint64_t hash_u64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}

#endif
