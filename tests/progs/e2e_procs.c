/*
 * e2e_procs — fork and exec: the parent runs parent_work(), the forked
 * child runs child_work() and exits, then the parent execs argv[1] (another
 * instrumented program) if given.
 */
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile unsigned long sink;

__attribute__((noinline)) void child_work(void)
{
	for (int i = 0; i < 1000; i++)
		sink += i;
}

__attribute__((noinline)) void parent_work(void)
{
	for (int i = 0; i < 1000; i++)
		sink += i;
}

int main(int argc, char **argv)
{
	pid_t pid = fork();

	if (pid == 0) {
		child_work();
		_exit(0);
	}
	parent_work();
	waitpid(pid, NULL, 0);
	if (argc > 1) {
		execv(argv[1], argv + 1);
		perror("execv");
		return 1;
	}
	return 0;
}
