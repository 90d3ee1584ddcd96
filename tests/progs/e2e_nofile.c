/*
 * e2e_nofile — a program that lowers its descriptor limit to 3 (only
 * stdin, stdout and stderr: it opens nothing itself), then forks.
 *
 *   e2e_nofile [SOFT HARD [closeall]]   limits (default 3 3); closeall
 *                                       closes descriptors 3-4095 first
 *
 * work() 2000 times before the fork, 2000 times in the child, 2000 times
 * in the parent after it; each calls leaf().  Exits 0 ("parent done").
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile unsigned long sink;

__attribute__((noinline)) void leaf(void) { sink++; }
__attribute__((noinline)) void work(void) { leaf(); }
__attribute__((noinline)) void in_child(void)
{
	for (int i = 0; i < 2000; i++)
		work();
}

int main(int argc, char **argv)
{
	struct rlimit lim = { 3, 3 };
	int st;
	pid_t pid;

	if (argc > 2) {
		lim.rlim_cur = strtoul(argv[1], NULL, 10);
		lim.rlim_max = strtoul(argv[2], NULL, 10);
	}
	for (int i = 0; i < 2000; i++)
		work();
	if (argc > 3)
		for (int fd = 3; fd < 4096; fd++)
			close(fd);
	if (setrlimit(RLIMIT_NOFILE, &lim))
		return 2;
	pid = fork();
	if (pid < 0)
		return 3;
	if (pid == 0) {
		in_child();
		_exit(0);
	}
	for (int i = 0; i < 2000; i++)
		work();
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st))
		return 4;
	printf("parent done\n");
	return 0;
}
