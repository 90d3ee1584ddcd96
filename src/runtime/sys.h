/*
 * sys — the runtime's own system calls and string helpers.
 *
 * The runtime lives in someone else's process, and that process may define
 * open(), close(), getenv(), clock_gettime(), malloc() ... itself (a test
 * harness, an allocator, a sandbox shim).  With the runtime preloaded, a
 * call from here to any such name would reach the program's definition:
 * the program's own counts would include our calls, and its behaviour
 * could change.  So the runtime enters the kernel directly (x86-64 Linux
 * system-call convention), reads the environment itself, and formats its
 * few strings by hand.  Every rt_sys* call returns the kernel's result:
 * >= 0, or -errno (errno is never touched).
 *
 * Thread-safety: none needed, everything here is stateless.
 */
#ifndef SC_RUNTIME_SYS_H
#define SC_RUNTIME_SYS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/syscall.h>

static inline long rt_sys6(long nr, long a, long b, long c, long d, long e, long f)
{
	register long r10 __asm__("r10") = d;
	register long r8 __asm__("r8") = e;
	register long r9 __asm__("r9") = f;
	long ret;

	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"(nr), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
			 : "rcx", "r11", "memory");
	return ret;
}

#define rt_sys0(n)                rt_sys6((n), 0, 0, 0, 0, 0, 0)
#define rt_sys1(n, a)             rt_sys6((n), (long)(a), 0, 0, 0, 0, 0)
#define rt_sys2(n, a, b)          rt_sys6((n), (long)(a), (long)(b), 0, 0, 0, 0)
#define rt_sys3(n, a, b, c)       rt_sys6((n), (long)(a), (long)(b), (long)(c), 0, 0, 0)
#define rt_sys4(n, a, b, c, d)    rt_sys6((n), (long)(a), (long)(b), (long)(c), (long)(d), 0, 0)
#define rt_sys5(n, a, b, c, d, e) rt_sys6((n), (long)(a), (long)(b), (long)(c), (long)(d), (long)(e), 0)

static inline int rt_close(int fd)        { return (int)rt_sys1(SYS_close, fd); }
static inline int rt_getpid(void)         { return (int)rt_sys0(SYS_getpid); }
static inline int rt_gettid(void)         { return (int)rt_sys0(SYS_gettid); }

/* A failed mmap returns -errno: an address in the last page. */
static inline int rt_mmap_failed(long r)  { return (unsigned long)r > -4096ul; }

static inline size_t rt_strlen(const char *s)
{
	size_t n = 0;

	while (s[n])
		n++;
	return n;
}

/* Copy src into dst[cap] (always terminated); returns the end of dst's text. */
static inline char *rt_stpcpy(char *dst, const char *src, size_t cap)
{
	size_t i = 0;

	if (!cap)
		return dst;
	for (; src[i] && i + 1 < cap; i++)
		dst[i] = src[i];
	dst[i] = 0;
	return dst + i;
}

/* Append the decimal value of v to dst[cap]; returns the new end. */
static inline char *rt_utoa(char *dst, uint64_t v, size_t cap)
{
	char tmp[24];
	int n = 0;

	do
		tmp[n++] = (char)('0' + v % 10);
	while ((v /= 10) && n < (int)sizeof(tmp));
	while (n && cap > 1) {
		*dst++ = tmp[--n];
		cap--;
	}
	if (cap)
		*dst = 0;
	return dst;
}

/* The decimal number at s; *end (if not NULL) is where it stopped. */
static inline uint64_t rt_atou(const char *s, const char **end)
{
	uint64_t v = 0;

	while (*s >= '0' && *s <= '9')
		v = v * 10 + (uint64_t)(*s++ - '0');
	if (end)
		*end = s;
	return v;
}

/* getenv() over the process's environment, without calling getenv(). */
static inline const char *rt_getenv(char **envp, const char *name)
{
	size_t n = rt_strlen(name), i;

	for (; envp && *envp; envp++) {
		const char *e = *envp;

		for (i = 0; i < n && e[i] == name[i]; i++)
			;
		if (i == n && e[n] == '=')
			return e + n + 1;
	}
	return NULL;
}

#endif
