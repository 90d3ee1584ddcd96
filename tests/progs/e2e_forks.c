/*
 * e2e_forks — new processes made while the parent keeps working, by every
 * route the runtime must follow.  Exact call counts are known per mode:
 *
 *   work N       spawn() N times; each forks; the child calls child_fn()
 *                3 times and leaves; the parent calls parent_fn() 20 times
 *                straight after the fork, while the child starts
 *   rawfork N    the same with syscall(SYS_fork): libc's fork handlers
 *                never run
 *   clone N      clone() without CLONE_VM on a stack of its own; the child
 *                runs clone_child(), which calls child_fn() 3 times
 *   chroot DIR N chroot(DIR) (an empty directory), then as "work N"
 *
 * Exits 0 when every child exited 0.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile unsigned long sink;

__attribute__((noinline)) void child_fn(void) { sink++; }
__attribute__((noinline)) void parent_fn(void) { sink += 2; }

__attribute__((noinline)) int clone_child(void *arg)
{
	(void)arg;
	for (int i = 0; i < 3; i++)
		child_fn();
	return 0;
}

__attribute__((noinline)) pid_t spawn(int raw)
{
	pid_t pid = raw ? (pid_t)syscall(SYS_fork) : fork();

	if (pid == 0) {
		for (int i = 0; i < 3; i++)
			child_fn();
		_exit(0);
	}
	for (int i = 0; i < 20; i++)
		parent_fn();
	return pid;
}

static int reap(int n)
{
	int bad = 0, st;

	while (n-- > 0)
		if (wait(&st) < 0 || !WIFEXITED(st) || WEXITSTATUS(st))
			bad = 1;
	return bad;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "work";
	int n = argc > 2 ? atoi(argv[argc - 1]) : 10;

	if (!strcmp(mode, "clone")) {
		static char stacks[64][65536] __attribute__((aligned(16)));

		if (n > 64)
			n = 64;
		for (int i = 0; i < n; i++)
			if (clone(clone_child, stacks[i] + sizeof(stacks[i]), SIGCHLD, NULL) < 0)
				return 2;
		return reap(n);
	}
	if (!strcmp(mode, "chroot") && (argc < 4 || chroot(argv[2]) || chdir("/")))
		return 2;
	for (int i = 0; i < n; i++)
		spawn(!strcmp(mode, "rawfork"));
	return reap(n);
}
