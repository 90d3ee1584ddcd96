/*
 * launch — fork the target held before exec, release it, wait for it and
 * for every process it leaves behind.  See record.h.
 *
 * The child blocks on a pipe read until the recorder has prepared whatever
 * must exist before the first instruction of the target (perf events with
 * enable_on_exec, shared memory).  Exec failure travels back through a
 * close-on-exec pipe, so "no such program" is told apart from a target that
 * ran and failed.  A child that reads EOF instead of the go byte exits
 * without exec: a recorder that fails (or dies) during its set-up never
 * leaves the target running unobserved.
 */
#include "record/record.h"
#include "util/util.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static void child_run(int go_rd, int err_wr, char **argv, char *const *env_extra)
{
	ssize_t n;
	char c;
	int err;

	do
		n = read(go_rd, &c, 1);
	while (n < 0 && errno == EINTR);
	/*
	 * EOF instead of the go byte: the recorder gave up (launch_abort) or
	 * died before its set-up was done.  The target must not run
	 * unobserved, so leave without a word.
	 */
	if (n != 1)
		_exit(127);
	close(go_rd);
	for (; env_extra && *env_extra; env_extra++)
		putenv(*env_extra);
	execvp(argv[0], argv);
	err = errno;
	/* If the recorder is gone there is no one to tell: exit either way. */
	if (write(err_wr, &err, sizeof(err)) != sizeof(err))
		_exit(127);
	_exit(127);
}

int launch_prepare(struct launch *l, char **argv, char *const *env_extra)
{
	int go[2], ep[2];
	pid_t pid;

	if (prctl(PR_SET_CHILD_SUBREAPER, 1) < 0)
		pr_debug("cannot become a subreaper: %s", strerror(errno));
	if (pipe2(go, O_CLOEXEC) < 0)
		return -errno;
	if (pipe2(ep, O_CLOEXEC) < 0) {
		int e = -errno;
		close(go[0]);
		close(go[1]);
		return e;
	}
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		int e = -errno;
		close(go[0]); close(go[1]); close(ep[0]); close(ep[1]);
		return e;
	}
	if (pid == 0) {
		close(go[1]);
		close(ep[0]);
		child_run(go[0], ep[1], argv, env_extra);
	}
	close(go[0]);
	close(ep[1]);
	l->pid = pid;
	l->go_fd = go[1];
	l->err_fd = ep[0];
	return 0;
}

void launch_abort(struct launch *l)
{
	close(l->go_fd);          /* EOF: the child leaves without exec */
	close(l->err_fd);
	while (waitpid(l->pid, NULL, 0) < 0 && errno == EINTR)
		;
}

int launch_go(struct launch *l)
{
	int err = 0;
	ssize_t n;

	if (write(l->go_fd, "g", 1) != 1) {
		err = errno;
		launch_abort(l);
		return -err;
	}
	close(l->go_fd);
	do
		n = read(l->err_fd, &err, sizeof(err));
	while (n < 0 && errno == EINTR);
	close(l->err_fd);
	if (n == (ssize_t)sizeof(err)) {
		waitpid(l->pid, NULL, 0);
		return -err;
	}
	return 0;
}

int launch_wait_all(struct launch *l, int *status, volatile int *stop_flag)
{
	bool signalled = false;
	*status = -1;

	for (;;) {
		int st;
		pid_t p = waitpid(-1, &st, 0);

		if (p < 0) {
			if (errno == EINTR) {
				if (stop_flag && *stop_flag && !signalled) {
					kill(l->pid, SIGINT);
					signalled = true;
				}
				continue;
			}
			if (errno == ECHILD)
				return 0;
			return -errno;
		}
		if (p == l->pid)
			*status = st;
	}
}

void launch_report_exec_error(const char *prog, int err)
{
	struct stat st;

	if (err == ENOENT)
		pr_err("cannot run '%s': no such program (check the path, or PATH)", prog);
	else if (err == EACCES && !stat(prog, &st) && S_ISDIR(st.st_mode))
		pr_err("cannot run '%s': it is a directory (name the program itself)", prog);
	else if (err == EACCES)
		pr_err("cannot run '%s': permission denied (is it executable?)", prog);
	else
		pr_err("cannot run '%s': %s", prog, strerror(err));
}
