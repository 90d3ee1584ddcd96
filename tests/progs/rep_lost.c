/*
 * rep_lost — OS events faster than the runtime's per-thread ring can hold:
 * flood() makes FLOOD system calls and touches FLOOD_PAGES fresh pages
 * without calling an instrumented function, so the kernel's ring overflows
 * in that one interval and drops records; few() makes a handful of system
 * calls (no overflow).  mark() afterwards gives the runtime a probe at
 * which the kernel's report of the loss (written with the next record that
 * fits) is read.  With the argument "burst", only burst(): BURST system
 * calls in one interval, which a small ring (16 KiB, 680 records) drops
 * and the main thread's (256 KiB) holds.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define FLOOD 20000
#define FEW 20
#define FLOOD_PAGES 4096
#define BURST 2000

static volatile long sink;

__attribute__((noinline)) void flood(char *mem)
{
	for (int i = 0; i < FLOOD; i++)
		sink += syscall(SYS_getppid);
	for (long i = 0; i < FLOOD_PAGES; i++)
		mem[i * 4096] = 1;
}

__attribute__((noinline)) void few(void)
{
	for (int i = 0; i < FEW; i++)
		sink += syscall(SYS_getppid);
}

__attribute__((noinline)) void burst(void)
{
	for (int i = 0; i < BURST; i++)
		sink += syscall(SYS_getppid);
}

__attribute__((noinline)) void mark(void)
{
	sink++;
}

int main(int argc, char **argv)
{
	size_t len = (size_t)FLOOD_PAGES * 4096;
	char *mem;

	if (argc > 1 && !strcmp(argv[1], "burst")) {
		burst();
		mark();
		printf("%ld\n", sink > 0 ? 1L : 0L);
		return 0;
	}
	mem = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (mem == MAP_FAILED)
		return 1;
	madvise(mem, len, MADV_NOHUGEPAGE);    /* one fault per page */
	few();
	flood(mem);
	sink += syscall(SYS_getppid);
	mark();
	printf("%ld\n", sink > 0 ? 1L : 0L);
	return 0;
}
