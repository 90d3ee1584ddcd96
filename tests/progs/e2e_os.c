/*
 * e2e_os — one function per kind of time, for the Application-time tests:
 *   sleeper()  nanosleep 200 ms: Elapsed ~200 ms, Application ~0
 *   spinner()  100 ms of its thread's CPU time in many short calls to
 *              step(): Application >= ~100 ms whatever the machine's load
 *              (time spent preempted is Elapsed, not Application)
 *   syncer()   writes 1 MiB and fsyncs it 8 times: system calls, OS-bound
 * Usage: e2e_os DIR   (DIR for the scratch file)
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long sink;

__attribute__((noinline)) void step(unsigned long i)
{
	for (int k = 0; k < 200; k++)
		sink += i * k;
}

__attribute__((noinline)) void spinner(void)
{
	struct timespec a, b;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
	do {
		for (int i = 0; i < 1000; i++)
			step(i);
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
	} while ((b.tv_sec - a.tv_sec) * 1000000000L + (b.tv_nsec - a.tv_nsec) < 100000000L);
}

__attribute__((noinline)) void sleeper(void)
{
	struct timespec ts = { 0, 200000000L };
	nanosleep(&ts, NULL);
}

__attribute__((noinline)) void syncer(const char *dir)
{
	static char buf[1 << 20];
	char path[4096];
	int fd;

	snprintf(path, sizeof(path), "%s/e2e_os.tmp", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0)
		return;
	memset(buf, 'x', sizeof(buf));
	for (int i = 0; i < 8; i++) {
		if (write(fd, buf, sizeof(buf)) < 0)
			break;
		fsync(fd);
	}
	close(fd);
	unlink(path);
}

int main(int argc, char **argv)
{
	sleeper();
	spinner();
	syncer(argc > 1 ? argv[1] : "/tmp");
	return 0;
}
