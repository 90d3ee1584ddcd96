/*
 * e2e_preinit — a program with an allocator of its own (malloc, realloc,
 * free, instrumented like the rest), served from a static buffer until a
 * function of its .preinit_array has looked up the C library's: probes
 * fire before any constructor, before libc has set __environ.
 *
 *   e2e_preinit plain   work() 100 times
 *   e2e_preinit fork    fork(), then work() 100 times in each process
 *   e2e_preinit tsd     a thread-specific value freed by its destructor:
 *                       work() 100 times in main and in one thread
 *
 * Each work() calls malloc and free once.  Prints "ok" and exits 0.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void *(*libc_malloc)(size_t);
static void *(*libc_realloc)(void *, size_t);
static void (*libc_free)(void *);
static char early[1 << 20];
static size_t early_used;

static int is_early(const void *p)
{
	return (const char *)p >= early && (const char *)p < early + sizeof(early);
}

void *malloc(size_t n)
{
	void *p;

	if (libc_malloc)
		return libc_malloc(n);
	n = (n + 15) & ~(size_t)15;
	if (early_used + n > sizeof(early))
		return NULL;
	p = early + early_used;
	early_used += n;
	return p;
}

void *realloc(void *old, size_t n)
{
	char *p;

	if (libc_realloc && !is_early(old))
		return libc_realloc(old, n);
	p = malloc(n);
	if (p && old)
		for (size_t i = 0; i < n && (const char *)old + i < early + early_used; i++)
			p[i] = ((const char *)old)[i];
	return p;
}

void free(void *p)
{
	if (!is_early(p) && libc_free)
		libc_free(p);
}

static void find_libc_allocator(void)
{
	libc_malloc = (void *(*)(size_t))dlsym(RTLD_NEXT, "malloc");
	libc_realloc = (void *(*)(void *, size_t))dlsym(RTLD_NEXT, "realloc");
	libc_free = (void (*)(void *))dlsym(RTLD_NEXT, "free");
}
__attribute__((section(".preinit_array"), used)) static void (*preinit[])(void) = { find_libc_allocator };

static void *volatile kept;
static pthread_key_t key;

__attribute__((noinline)) void work(void)
{
	kept = malloc(24);
	free(kept);
}

__attribute__((noinline)) void tsd_dtor(void *p)
{
	free(p);
}

__attribute__((noinline)) void *thread_main(void *arg)
{
	pthread_setspecific(key, malloc(8));
	for (int i = 0; i < 100; i++)
		work();
	return arg;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "plain";
	pthread_t t;
	pid_t pid = 0;
	int st;

	if (!strcmp(mode, "tsd")) {
		pthread_key_create(&key, tsd_dtor);
		if (pthread_create(&t, NULL, thread_main, NULL) || pthread_join(t, NULL))
			return 2;
	}
	if (!strcmp(mode, "fork") && (pid = fork()) < 0)
		return 2;
	for (int i = 0; i < 100; i++)
		work();
	if (pid == 0 && !strcmp(mode, "fork"))
		_exit(0);
	if (pid > 0 && (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st)))
		return 3;
	if (write(1, "ok\n", 3) != 3)
		return 3;
	return 0;
}
