/*
 * smp_syscalls — time in the kernel on behalf of the target, for
 * `record --kernel`: main -> read_loop() reads /dev/zero 64 KiB at a time
 * (most of the time is the kernel's copy) for MS milliseconds of wall time.
 * Usage: smp_syscalls [MS]   (default 500)
 */
#include <fcntl.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static char buf[65536];

__attribute__((noinline)) long read_loop(int fd, long ms)
{
	struct timespec a, b;
	long n = 0;

	clock_gettime(CLOCK_MONOTONIC, &a);
	do {
		for (int i = 0; i < 100; i++)
			n += read(fd, buf, sizeof(buf));
		clock_gettime(CLOCK_MONOTONIC, &b);
	} while ((b.tv_sec - a.tv_sec) * 1000 + (b.tv_nsec - a.tv_nsec) / 1000000 < ms);
	return n;
}

int main(int argc, char **argv)
{
	int fd = open("/dev/zero", O_RDONLY);

	if (fd < 0)
		return 1;
	return read_loop(fd, argc > 1 ? atol(argv[1]) : 500) > 0 ? 0 : 1;
}
