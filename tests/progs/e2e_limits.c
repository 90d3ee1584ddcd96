/*
 * e2e_limits — the runtime under resource limits and with the program's
 * own descriptors in view.
 *
 *   calls N   main -> mid() N times -> leaf() twice each
 *   deep N    recurse() N frames deep (the runtime's stack memory grows)
 *   fds       the program's first open() must get the lowest free number
 *             (0, 1 or 2 if closed at start, else 3); every descriptor of
 *             the runtime (its shared-memory file and directory, perf
 *             events) must be close-on-exec and at or above 768 — with a
 *             thread started, so that its perf events exist too.  Exit 3:
 *             open() got another number; 4: a runtime descriptor is low or
 *             inherited by exec.  Prints how many runtime descriptors it saw.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static volatile unsigned long sink;

__attribute__((noinline)) void leaf(int i) { sink += (unsigned long)i; }
__attribute__((noinline)) void mid(int i) { leaf(i); leaf(i + 1); }
__attribute__((noinline)) void recurse(int n) { if (n > 1) recurse(n - 1); sink++; }
__attribute__((noinline)) void *worker(void *arg) { (void)arg; for (int i = 0; i < 100; i++) leaf(i); return NULL; }

static int check_fds(void)
{
	int expect = 3, fd, ours = 0, bad = 0;
	pthread_t t;
	char path[64], link[256];

	for (fd = 2; fd >= 0; fd--)
		if (fcntl(fd, F_GETFD) < 0)
			expect = fd;
	fd = open("/dev/null", O_RDONLY);
	if (fd != expect)
		return 3;
	pthread_create(&t, NULL, worker, NULL);
	pthread_join(t, NULL);
	for (int n = 0; n < 4096; n++) {
		ssize_t len;

		snprintf(path, sizeof(path), "/proc/self/fd/%d", n);
		len = readlink(path, link, sizeof(link) - 1);
		if (len < 0)
			continue;
		link[len] = 0;
		if (!strstr(link, "stackclock") && !strstr(link, "perf_event") && strcmp(link, "/dev/shm"))
			continue;
		ours++;
		if (n < 768 || !(fcntl(n, F_GETFD) & FD_CLOEXEC))
			bad = 1;
	}
	/* stdout may be closed: report on stderr, or not at all */
	dprintf(fcntl(2, F_GETFD) < 0 ? fd : 2, "runtime descriptors: %d\n", ours);
	return bad ? 4 : 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "calls";
	int n = argc > 2 ? atoi(argv[2]) : 1000;

	if (!strcmp(mode, "fds"))
		return check_fds();
	if (!strcmp(mode, "deep")) {
		recurse(n);
		return 0;
	}
	for (int i = 0; i < n; i++)
		mid(i);
	return 0;
}
