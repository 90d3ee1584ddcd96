/*
 * e2e_vfork — children made by vfork() that call functions with probes on
 * their parent's stack and memory before they exec, as dash (Debian's
 * /bin/sh) does for every external command:
 *
 *   e2e_vfork N PROG   spawn() N times; each vforks; the child calls
 *                      child_go(), which calls child_prep() (a library
 *                      call, snprintf) and execs PROG (or _exit(127) if
 *                      it cannot); the parent waits for it, then calls
 *                      after()
 *   e2e_vfork -S PROG  the same for S seconds (a target to attach to that
 *                      outlives the attach on any machine)
 *
 * Prints "spawned N, exit statuses S" (S the sum of the children's) and
 * exits 0.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile int sink;

__attribute__((noinline)) void child_prep(int i)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%d", i);
	sink += (int)strlen(buf);
}

__attribute__((noinline)) void child_go(int i, const char *prog)
{
	child_prep(i);
	execl(prog, prog, (char *)NULL);
	_exit(127);
}

__attribute__((noinline)) int spawn(int i, const char *prog)
{
	int st = 0;
	pid_t pid = vfork();

	if (pid == 0)
		child_go(i, prog);
	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		return 1000;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 1000;
}

__attribute__((noinline)) void after(void)
{
	sink++;
}

int main(int argc, char **argv)
{
	int n = argc > 2 ? atoi(argv[1]) : 5, sum = 0, i;
	time_t end = n < 0 ? time(NULL) - n : 0;

	for (i = 0; n < 0 ? time(NULL) < end : i < n; i++) {
		sum += spawn(i, argc > 2 ? argv[2] : "/bin/true");
		after();
	}
	printf("spawned %d, exit statuses %d\n", i, sum);
	return 0;
}
