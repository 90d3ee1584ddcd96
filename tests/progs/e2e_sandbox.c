/*
 * e2e_sandbox — a program that locks itself into seccomp, then keeps
 * calling functions (new call paths included):
 *
 *   strict   prctl(PR_SET_SECCOMP, SECCOMP_MODE_STRICT): from then on only
 *            read, write, exit and sigreturn; leaves with SYS_exit
 *   filter   syscall(SYS_seccomp, ...) with a filter that kills the process
 *            on mmap, munmap, madvise, fallocate, perf_event_open, openat
 *
 * before() runs 100 times before the sandbox, after() 100000 times inside,
 * each calling leaf(); late() once, from a call path first seen inside;
 * then deep() recurses 5000 frames (a profiler needs more memory for that).
 * Exits 0 (prints "sandboxed" first).
 */
#define _GNU_SOURCE
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

static volatile unsigned long sink;

__attribute__((noinline)) void leaf(void) { sink++; }
__attribute__((noinline)) void before(void) { leaf(); }
__attribute__((noinline)) void after(void) { leaf(); }
__attribute__((noinline)) void late(void) { leaf(); }
__attribute__((noinline)) void deep(int n) { if (n > 1) deep(n - 1); sink++; }

#define DENY(nr) BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (nr), 0, 1), \
		 BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS)

static int enter_filter(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		DENY(SYS_mmap), DENY(SYS_munmap), DENY(SYS_madvise), DENY(SYS_fallocate),
		DENY(SYS_perf_event_open), DENY(SYS_openat),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { sizeof(f) / sizeof(f[0]), f };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return -1;
	return (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog);
}

int main(int argc, char **argv)
{
	int strict = argc > 1 && !strcmp(argv[1], "strict");

	for (int i = 0; i < 100; i++)
		before();
	if (strict ? prctl(PR_SET_SECCOMP, SECCOMP_MODE_STRICT) : enter_filter())
		return 2;
	for (int i = 0; i < 100000; i++)
		after();
	late();
	deep(5000);
	if (write(1, "sandboxed\n", 10) != 10)
		return 3;
	if (strict)
		syscall(SYS_exit, 0);
	return 0;
}
