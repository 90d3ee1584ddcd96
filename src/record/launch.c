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

#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
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

/*
 * The children of pid, of every thread of it (/proc/PID/task/TID/children:
 * a child is its forking thread's), into out[max]; how many there are.
 */
static int children_of(pid_t pid, pid_t *out, int max)
{
	char path[64];
	struct dirent *e;
	int n = 0;
	long v;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	while (d && (e = readdir(d))) {
		FILE *f;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%.16s/children", (int)pid, e->d_name);
		f = fopen(path, "re");
		if (!f)
			continue;
		while (fscanf(f, "%ld", &v) == 1) {
			if (n < max)
				out[n] = (pid_t)v;
			n++;
		}
		fclose(f);
	}
	if (d)
		closedir(d);
	return n;
}

/*
 * Send sig to pid and every descendant of it still in group pgid.  The
 * whole tree is read before anyone is signalled: a process signalled
 * first may end, and its children, reparented, are no longer in its
 * list (read after, they escaped; so did a child that ends at once when
 * its parent dies, PR_SET_PDEATHSIG, with its own children).  Then the
 * tree is read again, and whoever is new (forked meanwhile) signalled,
 * until a reading finds nobody new (at most 8 readings).
 */
#define TREE_MAX 4096
static void kill_tree(pid_t pid, pid_t pgid, int sig)
{
	static pid_t tree[TREE_MAX], done[TREE_MAX];
	int ndone = 0;

	for (int pass = 0; pass < 8; pass++) {
		int n = 0, fresh = 0;

		tree[n++] = pid;
		for (int i = 0; i < n; i++) {
			pid_t kids[256];
			int k = children_of(tree[i], kids, 256);

			for (int j = 0; j < k && j < 256 && n < TREE_MAX; j++)
				if (getpgid(kids[j]) == pgid)
					tree[n++] = kids[j];
		}
		for (int i = 0; i < n; i++) {
			bool seen = false;

			for (int j = 0; j < ndone && !seen; j++)
				seen = done[j] == tree[i];
			if (seen || ndone == TREE_MAX)
				continue;
			kill(tree[i], sig);
			done[ndone++] = tree[i];
			fresh++;
		}
		if (!fresh)
			break;
	}
}

/* Has a child of ours in process group pgid not been reaped yet? */
static bool group_has_child(pid_t pgid)
{
	siginfo_t si;

	memset(&si, 0, sizeof(si));
	return pgid > 0 && !waitid(P_PGID, (id_t)pgid, &si, WEXITED | WNOHANG | WNOWAIT);
}

/*
 * The stop signal goes to the target's process group, unless the terminal
 * sent it there already.  When the target shares our group (which may hold
 * the shell script that started us), only the target and its descendants
 * in that group get it.
 */
static void forward_stop(struct launch *l, const struct launch_stop *stop, pid_t target_pgid)
{
	int sig = stop->sig ? stop->sig : SIGINT;

	if (target_pgid > 0 && target_pgid != getpgrp())
		kill(-target_pgid, sig);
	else if (stop->to_us_only && target_pgid > 0)
		kill_tree(l->pid, target_pgid, sig);
}

int launch_wait_all(struct launch *l, int *status, struct launch_stop *stop, int *left)
{
	pid_t target_pgid = getpgid(l->pid);
	bool forwarded = false, target_done = false;

	*status = -1;
	*left = 0;
	for (;;) {
		int st;
		pid_t p;

		if (stop && stop->count >= 2)
			break;
		if (stop && stop->count && !forwarded) {
			pid_t g = target_done ? -1 : getpgid(l->pid);

			if (g > 0)
				target_pgid = g;
			forward_stop(l, stop, target_done ? -1 : target_pgid);
			forwarded = true;
		}
		p = waitpid(-1, &st, forwarded ? WNOHANG : 0);
		if (p > 0) {
			if (p == l->pid) {
				*status = st;
				target_done = true;
			}
			continue;
		}
		if (p < 0 && errno == EINTR)
			continue;
		if (p < 0 && errno == ECHILD)
			return 0;
		if (p < 0)
			return -errno;
		/* stopping, and children remain: are any still the target's? */
		if (!group_has_child(getpgrp()) && !group_has_child(target_pgid))
			break;
		usleep(20000);
	}
	/* what remains left the target's group (daemons), or we were told twice */
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
	*left = children_of(getpid(), NULL, 0);
	return 0;
}

int launch_report_exec_error(const char *prog, int err)
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
	return err == ENOENT ? RECORD_EXIT_NOT_FOUND : RECORD_EXIT_CANNOT_RUN;
}

int record_exit_status(int wait_status)
{
	if (wait_status == -1)
		return 0;
	if (WIFSIGNALED(wait_status))
		return 128 + WTERMSIG(wait_status);
	return WIFEXITED(wait_status) ? WEXITSTATUS(wait_status) : 0;
}
