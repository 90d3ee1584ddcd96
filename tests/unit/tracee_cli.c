/*
 * tracee_cli — drives src/record/tracee.h for tests/e2e/t800_tracee.sh
 * (not a TAP test: the script checks what it prints).
 *
 *   tracee_cli seize PID                   seize, say "seized N threads", release
 *   tracee_cli hold PID MS                 seize, print "held", keep it MS ms, release
 *   tracee_cli stopcount PID N             seize; N times: 20 ms running, stop all,
 *                                          compare the threads held with /proc's
 *                                          tasks; "stops N mismatched M held H"
 *   tracee_cli call PID LIB SYM ARG [TID]  seize + call + release; prints
 *                                          "ret N" and "times seize_us call_us release_us
 *                                          cpu_us" (the last: this process's CPU time);
 *                                          with TID, first "in ORIG_RAX RAX" of that
 *                                          thread once stopped
 *   tracee_cli poke PID LO HI              stop, say how many threads are inside
 *                                          [LO, HI) (hex), step_out (50 rounds, as attach), read it,
 *                                          write 0xcc over it, read back, write the
 *                                          original back, read back, resume, release
 *   tracee_cli killcall N PID LIB SYM ARG US  N times: a child seizes and calls, the
 *                                          parent SIGKILLs it after 0-US us (random)
 * Errors: the library's one line on stderr, exit 1.
 */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "record/tracee.h"

static long us_since(const struct timespec *a)
{
	struct timespec b;
	clock_gettime(CLOCK_MONOTONIC, &b);
	return (b.tv_sec - a->tv_sec) * 1000000L + (b.tv_nsec - a->tv_nsec) / 1000;
}

static struct sc_tracee *seize(const char *spid)
{
	char err[512];
	struct sc_tracee *t;
	if (sc_tracee_seize((pid_t)atoi(spid), &t, err, sizeof(err)) < 0) {
		fprintf(stderr, "%s\n", err);
		exit(1);
	}
	return t;
}

static int call(int argc, char **argv)
{
	char err[512];
	int ret, rc;
	struct timespec t0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	struct sc_tracee *t = seize(argv[2]);
	long seize_us = us_since(&t0);
	pid_t tid = argc > 6 ? (pid_t)atoi(argv[6]) : 0;
	if (tid && sc_tracee_stop(t, NULL, 0) == 0) {
		/* where the thread is: "in N R" (system call N, rax R), or "in -1" */
		struct user_regs_struct g;
		if (ptrace(PTRACE_GETREGS, tid, 0, &g) == 0)
			printf("in %lld %lld\n", (long long)g.orig_rax, (long long)g.rax);
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	rc = sc_tracee_call_in(t, tid, argv[3], argv[4], argv[5], 5000, &ret, err, sizeof(err));
	long call_us = us_since(&t0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	sc_tracee_release(t);
	long release_us = us_since(&t0);
	if (rc < 0) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	printf("ret %d\ntimes %ld %ld %ld %ld\n", ret, seize_us, call_us, release_us,
	       (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000L + ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
	return 0;
}

static int poke(char **argv)
{
	struct sc_tracee *t = seize(argv[2]);
	struct sc_range r = { strtoull(argv[3], NULL, 16), strtoull(argv[4], NULL, 16) };
	size_t len = (size_t)(r.hi - r.lo);
	unsigned char *orig = malloc(len), *back = malloc(len), *cc = malloc(len);
	int rc = 1;
	if (!orig || !back || !cc || sc_tracee_stop(t, NULL, 0) < 0)
		goto out;
	memset(cc, 0xcc, len);
	int inside = 0;
	for (int i = 0; i < sc_tracee_nthreads(t); i++) {
		struct user_regs_struct g;
		if (ptrace(PTRACE_GETREGS, sc_tracee_tid(t, i), 0, &g) == 0 && g.rip >= r.lo && g.rip < r.hi)
			inside++;
	}
	int left = sc_tracee_step_out(t, &r, 1, 50);   /* attach.c's STEP_ROUNDS */
	printf("inside %d\nthreads %d left %d\n", inside, sc_tracee_nthreads(t), left);
	if (left != 0)
		goto out;
	if (sc_tracee_read(t, r.lo, orig, len) < 0 || sc_tracee_write(t, r.lo, cc, len) < 0 ||
	    sc_tracee_read(t, r.lo, back, len) < 0)
		goto out;
	printf("written %s\n", memcmp(back, cc, len) ? "differs" : "same");
	if (sc_tracee_write(t, r.lo, orig, len) < 0 || sc_tracee_read(t, r.lo, back, len) < 0)
		goto out;
	printf("restored %s\n", memcmp(back, orig, len) ? "differs" : "same");
	rc = sc_tracee_resume(t) < 0;
out:
	sc_tracee_release(t);
	free(orig);
	free(back);
	free(cc);
	return rc;
}

static int killcall(char **argv)
{
	int n = atoi(argv[2]), maxus = atoi(argv[7]), finished = 0, killed = 0;
	srand((unsigned)getpid() ^ (unsigned)time(NULL));
	for (int i = 0; i < n; i++) {
		pid_t c = fork();
		if (c == 0) {
			char *args[] = { argv[0], "call", argv[3], argv[4], argv[5], argv[6], NULL };
			freopen("/dev/null", "w", stdout);
			_exit(call(6, args));
		}
		long us = rand() % (maxus + 1);
		struct timespec ts = { 0, us * 1000 };
		nanosleep(&ts, NULL);
		kill(c, SIGKILL);
		int st;
		waitpid(c, &st, 0);
		if (WIFSIGNALED(st))
			killed++;
		else
			finished++;
	}
	printf("killed %d finished %d\n", killed, finished);
	return 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc >= 3 && !strcmp(argv[1], "seize")) {
		struct sc_tracee *t = seize(argv[2]);
		printf("seized %d threads\n", sc_tracee_nthreads(t));
		sc_tracee_release(t);
		return 0;
	}
	if (argc >= 4 && !strcmp(argv[1], "hold")) {
		struct sc_tracee *t = seize(argv[2]);
		printf("held\n");
		for (int ms = atoi(argv[3]); ms > 0; ms -= 10) {
			usleep(10000);
			sc_tracee_pump(t);
		}
		sc_tracee_release(t);
		return 0;
	}
	if (argc >= 4 && !strcmp(argv[1], "stopcount")) {
		/* seize; N times: let it run 20 ms, stop, count the tasks
		 * /proc lists against the threads held (all must be) */
		struct sc_tracee *t = seize(argv[2]);
		int bad = 0, n = atoi(argv[3]);
		long held = 0;
		for (int k = 0; k < n; k++) {
			usleep(20000);
			if (sc_tracee_stop(t, NULL, 0) < 0) {
				bad++;
				continue;
			}
			char path[64];
			snprintf(path, sizeof(path), "/proc/%s/task", argv[2]);
			DIR *d = opendir(path);
			int tasks = 0;
			struct dirent *e;
			while (d && (e = readdir(d)))
				tasks += e->d_name[0] != '.';
			if (d)
				closedir(d);
			held += sc_tracee_nthreads(t);
			if (tasks != sc_tracee_nthreads(t)) {
				printf("# stop %d: %d tasks, %d held\n", k, tasks, sc_tracee_nthreads(t));
				bad++;
			}
			sc_tracee_resume(t);
		}
		sc_tracee_release(t);
		printf("stops %d mismatched %d held %ld\n", n, bad, held);
		return 0;
	}
	if (argc >= 6 && !strcmp(argv[1], "call"))
		return call(argc, argv);
	if (argc == 5 && !strcmp(argv[1], "poke"))
		return poke(argv);
	if (argc == 8 && !strcmp(argv[1], "killcall"))
		return killcall(argv);
	fprintf(stderr, "usage: tracee_cli seize|hold|call|poke|killcall ... (see its source)\n");
	return 2;
}
