/*
 * e2e_env — what a program sees of its environment, and what it gives the
 * programs it runs (t322).
 *
 *   e2e_env env TAG              print "TAG: VAR=VALUE" for each variable,
 *                                in order; work() 100 times
 *   e2e_env spin                 work() 3,000,000 times (about half a second)
 *   e2e_env run MODE CHILD [ARG] print the environment (tag "parent"),
 *                                work() 10 times, run "CHILD env child"
 *                                (or "CHILD ARG" if given) by MODE and
 *                                wait for it; exit with its status
 *
 * MODE: fork-execve, vfork-execve, fork-execv, fork-execvp, fork-execvpe,
 * fork-execl, fork-execlp, fork-execle, fork-fexecve, fork-execveat,
 * spawn, spawnp, system, popen.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;
static volatile unsigned long sink;

__attribute__((noinline)) void work(void)
{
	for (int i = 0; i < 100; i++)
		sink += (unsigned long)i;
}

static void print_env(const char *tag)
{
	for (char **e = environ; *e; e++)
		printf("%s: %s\n", tag, *e);
	fflush(stdout);
}

static void child_exec(const char *mode, const char *child, char *const argv[])
{
	if (!strcmp(mode, "fork-execve") || !strcmp(mode, "vfork-execve"))
		execve(child, argv, environ);
	else if (!strcmp(mode, "fork-execv"))
		execv(child, argv);
	else if (!strcmp(mode, "fork-execvp"))
		execvp(child, argv);
	else if (!strcmp(mode, "fork-execvpe"))
		execvpe(child, argv, environ);
	else if (!strcmp(mode, "fork-execl"))
		execl(child, argv[0], argv[1], argv[2], (char *)NULL);
	else if (!strcmp(mode, "fork-execlp"))
		execlp(child, argv[0], argv[1], argv[2], (char *)NULL);
	else if (!strcmp(mode, "fork-execle"))
		execle(child, argv[0], argv[1], argv[2], (char *)NULL, environ);
	else if (!strcmp(mode, "fork-fexecve"))
		fexecve(open(child, O_RDONLY | O_CLOEXEC), argv, environ);
	else if (!strcmp(mode, "fork-execveat"))
		execveat(AT_FDCWD, child, argv, environ, 0);
	_exit(126);
}

int main(int argc, char **argv)
{
	char *cargv[4] = { NULL, (char *)"env", (char *)"child", NULL };
	int status = 0;
	pid_t pid;

	if (argc >= 3 && !strcmp(argv[1], "env")) {
		print_env(argv[2]);
		for (int i = 0; i < 100; i++)
			work();
		return 0;
	}
	if (argc == 2 && !strcmp(argv[1], "spin")) {
		for (int i = 0; i < 3000000; i++)
			work();
		return 0;
	}
	if (argc < 4 || strcmp(argv[1], "run"))
		return 2;
	print_env("parent");
	for (int i = 0; i < 10; i++)
		work();
	cargv[0] = argv[3];
	if (argc > 4) {
		cargv[1] = argv[4];
		cargv[2] = NULL;
	}
	if (!strcmp(argv[2], "spawn") || !strcmp(argv[2], "spawnp")) {
		int r = !strcmp(argv[2], "spawn") ? posix_spawn(&pid, argv[3], NULL, NULL, cargv, environ)
						  : posix_spawnp(&pid, argv[3], NULL, NULL, cargv, environ);

		if (r)
			return 3;
	} else if (!strcmp(argv[2], "system") || !strcmp(argv[2], "popen")) {
		char cmd[4096];
		FILE *f;

		snprintf(cmd, sizeof(cmd), "'%s' %s %s", argv[3], cargv[1], cargv[2] ? cargv[2] : "");
		if (!strcmp(argv[2], "system"))
			return WEXITSTATUS(system(cmd));
		f = popen(cmd, "r");
		if (!f)
			return 3;
		for (int c; (c = getc(f)) != EOF;)
			putchar(c);
		return WEXITSTATUS(pclose(f));
	} else {
		pid = !strncmp(argv[2], "vfork", 5) ? vfork() : fork();
		if (pid == 0)
			child_exec(argv[2], argv[3], cargv);
		if (pid < 0)
			return 3;
	}
	if (waitpid(pid, &status, 0) != pid)
		return 4;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
