/*
 * e2e_env — what a program sees of its environment, and what it gives the
 * programs it runs (t322).
 *
 *   e2e_env env TAG              print "TAG: VAR=VALUE" for each variable,
 *                                in order; work() 100 times
 *   e2e_env spin                 work() 3,000,000 times (about half a second)
 *   e2e_env one                  work() once, print "one", exit 7
 *   e2e_env threads CHILD        3 threads each run "CHILD one" 10 times by
 *                                popen (its output and pclose's status
 *                                checked) and 10 times by system (status
 *                                checked), and system("true") 10 times,
 *                                while the main thread loops over
 *                                getenv/setenv/unsetenv (none of the
 *                                recorder's variables may show); prints
 *                                the counts and "ok", or what differed
 *   e2e_env vfork-leak PROG N    N vfork+execve of PROG; prints how many
 *                                pages the process grew by (statm size)
 *   e2e_env exec-errno PROG      execve PROG; prints its errno
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
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
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

static const char *t_child;
static int t_done, t_bad_popen, t_bad_system, t_bad_true, t_popen, t_system, t_true;

static void *t_run(void *arg)
{
	char cmd[4200], out[64];

	(void)arg;
	snprintf(cmd, sizeof(cmd), "'%s' one", t_child);
	for (int i = 0; i < 10; i++) {
		FILE *f = popen(cmd, "r");
		size_t n = f ? fread(out, 1, sizeof(out) - 1, f) : 0;
		int st = f ? pclose(f) : -2;

		out[n] = 0;
		__atomic_add_fetch(strcmp(out, "one\n") || st != 7 << 8 ? &t_bad_popen : &t_popen, 1, __ATOMIC_RELAXED);
		st = system(cmd);
		__atomic_add_fetch(st != 7 << 8 ? &t_bad_system : &t_system, 1, __ATOMIC_RELAXED);
		st = system("true");
		__atomic_add_fetch(st != 0 ? &t_bad_true : &t_true, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

static int threads(const char *child)
{
	pthread_t t[3];
	long loops = 0, ours = 0;

	t_child = child;
	for (int i = 0; i < 3; i++)
		pthread_create(&t[i], NULL, t_run, NULL);
	while (__atomic_load_n(&t_popen, __ATOMIC_RELAXED) + __atomic_load_n(&t_bad_popen, __ATOMIC_RELAXED) < 30 ||
	       __atomic_load_n(&t_true, __ATOMIC_RELAXED) + __atomic_load_n(&t_bad_true, __ATOMIC_RELAXED) < 30) {
		char v[32];

		snprintf(v, sizeof(v), "%ld", loops++);
		setenv("E2E_T", v, 1);
		if (strcmp(getenv("E2E_T"), v))
			ours += 1000000;       /* a setenv lost */
		if (getenv("LD_PRELOAD") || getenv("STACKCLOCK_SHM") || getenv("STACKCLOCK_PRELOAD0"))
			ours++;
		if (loops % 7 == 0)
			unsetenv("E2E_T");
		usleep(100);
	}
	for (int i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	t_done = 1;
	printf("popen %d (bad %d), system %d (bad %d), system(\"true\") %d (bad %d), system(NULL) %d, ours seen %ld\n",
	       t_popen, t_bad_popen, t_system, t_bad_system, t_true, t_bad_true, system(NULL), ours);
	puts(t_bad_popen || t_bad_system || t_bad_true || ours ? "bad" : "ok");
	return 0;
}

static long statm_size(void)
{
	FILE *f = fopen("/proc/self/statm", "r");
	long a = -1;

	if (f) {
		if (fscanf(f, "%ld", &a) != 1)
			a = -1;
		fclose(f);
	}
	return a;
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
	if (argc == 2 && !strcmp(argv[1], "one")) {
		work();
		puts("one");
		return 7;
	}
	if (argc == 3 && !strcmp(argv[1], "threads"))
		return threads(argv[2]);
	if (argc == 4 && !strcmp(argv[1], "vfork-leak")) {
		char *av[] = { argv[2], NULL };
		long before = statm_size();
		int n = atoi(argv[3]);

		for (int i = 0; i < n; i++) {
			pid = vfork();
			if (pid == 0) {
				execve(argv[2], av, environ);
				_exit(127);
			}
			if (pid < 0 || waitpid(pid, &status, 0) != pid || status)
				return 3;
		}
		printf("%d vfork+execve: grew %ld pages\n", n, statm_size() - before);
		return 0;
	}
	if (argc == 3 && !strcmp(argv[1], "exec-errno")) {
		char *av[] = { argv[2], NULL };

		execve(argv[2], av, environ);
		printf("execve: errno %d\n", errno);
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
