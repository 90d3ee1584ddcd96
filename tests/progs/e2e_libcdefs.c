/*
 * e2e_libcdefs — a program that defines C library functions itself, all
 * instrumented: malloc, free, calloc, realloc (passed on to glibc's
 * __libc_* functions), getenv, open, close and clock_gettime (made by hand
 * from system calls).  Each definition counts its calls in a plain
 * variable; at the end the program writes "name count" lines to the file
 * named by $LIBCDEFS_OUT (fd 3 style: opened with its own open()).
 *
 * A profiler must add no call to these counts (run with and without it:
 * the same numbers) and report exactly these counts.
 *
 *   hook    main calls each function a known number of times
 *   fork    malloc/free in the parent, fork, more in the child
 *   tsd     threads keep a malloc'ed block as thread-specific data freed by
 *           the key's destructor when they end
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern void *__libc_malloc(size_t);
extern void __libc_free(void *);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern char **environ;

enum { C_MALLOC, C_FREE, C_CALLOC, C_REALLOC, C_GETENV, C_OPEN, C_CLOSE, C_CLOCK, NC };
static const char *const names[NC] = { "malloc", "free", "calloc", "realloc",
				       "getenv", "open", "close", "clock_gettime" };
static unsigned long count[NC];

void *malloc(size_t n) { __atomic_fetch_add(&count[C_MALLOC], 1, __ATOMIC_RELAXED); return __libc_malloc(n); }
void free(void *p) { __atomic_fetch_add(&count[C_FREE], 1, __ATOMIC_RELAXED); __libc_free(p); }
void *calloc(size_t a, size_t b) { __atomic_fetch_add(&count[C_CALLOC], 1, __ATOMIC_RELAXED); return __libc_calloc(a, b); }
void *realloc(void *p, size_t n) { __atomic_fetch_add(&count[C_REALLOC], 1, __ATOMIC_RELAXED); return __libc_realloc(p, n); }

char *getenv(const char *name)
{
	size_t len = strlen(name);

	count[C_GETENV]++;
	for (char **e = environ; e && *e; e++)
		if (!strncmp(*e, name, len) && (*e)[len] == '=')
			return *e + len + 1;
	return NULL;
}

int open(const char *path, int flags, ...)
{
	va_list ap;
	int mode;

	va_start(ap, flags);
	mode = va_arg(ap, int);
	va_end(ap);
	count[C_OPEN]++;
	return (int)syscall(SYS_openat, AT_FDCWD, path, flags, mode);
}

int close(int fd)
{
	count[C_CLOSE]++;
	return (int)syscall(SYS_close, fd);
}

int clock_gettime(clockid_t id, struct timespec *ts)
{
	count[C_CLOCK]++;
	return (int)syscall(SYS_clock_gettime, id, ts);
}

static void put(int fd, const char *s) { if (write(fd, s, strlen(s)) < 0) _exit(9); }

static void dump(const char *tag)
{
	const char *out = getenv("LIBCDEFS_OUT");
	char num[32];
	int fd;

	if (!out)
		return;
	fd = (int)syscall(SYS_openat, AT_FDCWD, out, O_WRONLY | O_APPEND | O_CREAT, 0644);
	for (int i = 0; i < NC; i++) {
		int n = 0;
		unsigned long v = count[i];
		char tmp[32];

		do
			tmp[n++] = (char)('0' + v % 10);
		while ((v /= 10));
		for (int j = 0; j < n; j++)
			num[j] = tmp[n - 1 - j];
		num[n] = 0;
		put(fd, tag);
		put(fd, " ");
		put(fd, names[i]);
		put(fd, " ");
		put(fd, num);
		put(fd, "\n");
	}
	syscall(SYS_close, fd);
}

static pthread_key_t key;

__attribute__((noinline)) void tsd_release(void *p) { free(p); }

__attribute__((noinline)) void *tsd_thread(void *arg)
{
	(void)arg;
	pthread_setspecific(key, malloc(32));
	return NULL;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "hook";
	struct timespec ts;

	if (!strcmp(mode, "hook")) {
		for (int i = 0; i < 10; i++)
			free(malloc(64));
		for (int i = 0; i < 2; i++)
			free(calloc(4, 16));
		free(realloc(realloc(realloc(NULL, 8), 16), 32));
		for (int i = 0; i < 3; i++)
			(void)getenv("HOME");
		for (int i = 0; i < 4; i++)
			close(open("/dev/null", O_RDONLY));
		for (int i = 0; i < 5; i++)
			clock_gettime(CLOCK_MONOTONIC, &ts);
	} else if (!strcmp(mode, "fork")) {
		pid_t pid;

		for (int i = 0; i < 5; i++)
			free(malloc(16));
		pid = fork();
		if (pid == 0) {
			memset(count, 0, sizeof(count));   /* the child's own calls */
			for (int i = 0; i < 7; i++)
				free(malloc(16));
			dump("child");
			_exit(0);
		}
		waitpid(pid, NULL, 0);
	} else if (!strcmp(mode, "tsd")) {
		pthread_t t[4];

		pthread_key_create(&key, tsd_release);
		for (int i = 0; i < 4; i++)
			pthread_create(&t[i], NULL, tsd_thread, NULL);
		for (int i = 0; i < 4; i++)
			pthread_join(t[i], NULL);
	}
	dump("main");
	return 0;
}
