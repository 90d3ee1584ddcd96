/*
 * inst_basic — small behaviours the instrumentation recorder must get right
 * (tests/unit/test_runtime.c), one per mode:
 *
 *   threads N CALLS   N threads ("worker-I") each call work() CALLS times
 *   kill CALLS        tick() CALLS times, then SIGKILL itself two frames deep
 *   fork              a child calls child_work() 100 times and returns through
 *                     the frames it inherited; the parent parent_work() 10 times
 *   exec PROG         exec_from() execs PROG after (which runs after_exec() 5x)
 *   deep N            recursion N deep
 *   paths             a few thousand distinct call paths
 *   dlopen LIB        calls lib_fn() of an instrumented library 10 times
 *   print             writes known lines to stdout and stderr
 *   sleep             sleeper() sleeps 60 ms, spinner() spins 30 ms
 *   unbalanced        longjmp over two frames, then exit() three frames deep
 *   pexit             a thread calls pthread_exit() two frames deep
 *   closeall DIR      closes every fd but 0-2 (as daemons do), opens files of
 *                     its own on the freed numbers, then calls, forks and
 *                     starts threads; exits 3 if its files were disturbed
 *
 * When $INST_ADDRS names a file, "NAME ADDRESS PID" lines give the run-time
 * addresses of the functions a test looks for.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long sink;

static void note(const char *name, void *addr)
{
	const char *path = getenv("INST_ADDRS");
	FILE *f;

	if (!path || !(f = fopen(path, "a")))
		return;
	fprintf(f, "%s %p %d\n", name, addr, (int)getpid());
	fclose(f);
}

__attribute__((noinline)) void work(void) { sink++; }

static long calls_each;

__attribute__((noinline)) void *worker(void *arg)
{
	char name[16];

	snprintf(name, sizeof(name), "worker-%ld", (long)arg);
	pthread_setname_np(pthread_self(), name);
	for (long i = 0; i < calls_each; i++)
		work();
	return NULL;
}

__attribute__((noinline)) void tick(void) { sink++; }
__attribute__((noinline)) void die_inner(void) { kill(getpid(), SIGKILL); pause(); }
__attribute__((noinline)) void die_outer(void) { die_inner(); }

__attribute__((noinline)) void child_work(void) { sink++; }
__attribute__((noinline)) void parent_work(void) { sink++; }

__attribute__((noinline)) void do_fork(void)
{
	pid_t pid = fork();

	if (pid == 0) {
		for (int i = 0; i < 100; i++)
			child_work();
		return;                 /* back through frames entered before fork */
	}
	waitpid(pid, NULL, 0);
	for (int i = 0; i < 10; i++)
		parent_work();
}

__attribute__((noinline)) void after_exec(void) { sink++; }

__attribute__((noinline)) void exec_from(const char *prog)
{
	execl(prog, prog, "after", (char *)NULL);
	perror("exec");
	exit(1);
}

__attribute__((noinline)) unsigned long deep(int n) { return n ? deep(n - 1) + 1 : 0; }

/* Sixteen functions calling each other by a table: thousands of paths. */
typedef void (*fn_t)(int);
static fn_t table[16];
#define PATHFN(i) __attribute__((noinline)) void path##i(int d) { sink++; if (d > 0) { table[(d * 7 + i) % 16](d - 1); table[(d * 5 + i + 3) % 16](d - 1); } }
PATHFN(0) PATHFN(1) PATHFN(2) PATHFN(3) PATHFN(4) PATHFN(5) PATHFN(6) PATHFN(7)
PATHFN(8) PATHFN(9) PATHFN(10) PATHFN(11) PATHFN(12) PATHFN(13) PATHFN(14) PATHFN(15)

__attribute__((noinline)) void sleeper(void) { usleep(60000); }

/* 30 ms of CPU time, nearly all of it in user code: the thread's CPU clock
 * is a system call, so it is read only every million iterations. */
__attribute__((noinline)) void spinner(void)
{
	struct timespec a, b;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
	do {
		for (int i = 0; i < 1000000; i++)
			sink++;
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
	} while ((b.tv_sec - a.tv_sec) * 1000000000L + (b.tv_nsec - a.tv_nsec) < 30000000L);
}

static jmp_buf env;
__attribute__((noinline)) void jump_leaf(void) { longjmp(env, 1); }
__attribute__((noinline)) void jump_mid(void) { jump_leaf(); sink++; }
__attribute__((noinline)) void jump_outer(void) { if (!setjmp(env)) jump_mid(); }
__attribute__((noinline)) void exit_inner(void) { exit(0); }
__attribute__((noinline)) void exit_mid(void) { exit_inner(); }

__attribute__((noinline)) void pexit_inner(void) { pthread_exit(NULL); }
__attribute__((noinline)) void *pexit_thread(void *arg) { pexit_inner(); return arg; }

/* Write a line to each of fds[]; 0 if all went through. */
static int write_all_fds(const int *fds, int n)
{
	for (int i = 0; i < n; i++)
		if (write(fds[i], "line\n", 5) != 5)
			return -1;
	return 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";

	note("main", (void *)main);
	if (!strcmp(mode, "threads") && argc > 3) {
		long n = atol(argv[2]);
		pthread_t t[64];

		calls_each = atol(argv[3]);
		note("work", (void *)work);
		note("worker", (void *)worker);
		for (long i = 0; i < n && i < 64; i++)
			pthread_create(&t[i], NULL, worker, (void *)i);
		for (long i = 0; i < n && i < 64; i++)
			pthread_join(t[i], NULL);
	} else if (!strcmp(mode, "kill") && argc > 2) {
		long n = atol(argv[2]);
		note("tick", (void *)tick);
		note("die_inner", (void *)die_inner);
		for (long i = 0; i < n; i++)
			tick();
		die_outer();
	} else if (!strcmp(mode, "fork")) {
		note("child_work", (void *)child_work);
		note("parent_work", (void *)parent_work);
		note("do_fork", (void *)do_fork);
		do_fork();
	} else if (!strcmp(mode, "exec") && argc > 2) {
		note("exec_from", (void *)exec_from);
		exec_from(argv[2]);
	} else if (!strcmp(mode, "after")) {
		note("after_exec", (void *)after_exec);
		for (int i = 0; i < 5; i++)
			after_exec();
	} else if (!strcmp(mode, "deep") && argc > 2) {
		note("deep", (void *)deep);
		sink += deep(atoi(argv[2]));
	} else if (!strcmp(mode, "paths")) {
		fn_t fns[16] = { path0, path1, path2, path3, path4, path5, path6, path7,
				 path8, path9, path10, path11, path12, path13, path14, path15 };
		memcpy(table, fns, sizeof(fns));
		for (int i = 0; i < 16; i++) {
			char name[16];
			snprintf(name, sizeof(name), "path%d", i);
			note(name, (void *)fns[i]);
		}
		path0(12);
	} else if (!strcmp(mode, "dlopen") && argc > 2) {
		void *h = dlopen(argv[2], RTLD_NOW);
		int (*f)(int) = h ? (int (*)(int))dlsym(h, "lib_fn") : NULL;
		if (!f)
			return 2;
		note("lib_fn", (void *)f);
		for (int i = 0; i < 10; i++)
			sink += f(i);
	} else if (!strcmp(mode, "print")) {
		printf("hello from the target\n");
		fflush(stdout);
		fprintf(stderr, "target stderr\n");
	} else if (!strcmp(mode, "sleep")) {
		note("sleeper", (void *)sleeper);
		note("spinner", (void *)spinner);
		sleeper();
		spinner();
	} else if (!strcmp(mode, "unbalanced")) {
		note("jump_outer", (void *)jump_outer);
		note("jump_leaf", (void *)jump_leaf);
		note("exit_inner", (void *)exit_inner);
		jump_outer();
		exit_mid();
	} else if (!strcmp(mode, "closeall") && argc > 2) {
		fn_t fns[16] = { path0, path1, path2, path3, path4, path5, path6, path7,
				 path8, path9, path10, path11, path12, path13, path14, path15 };
		int fds[64], n = 0, status;
		struct stat st;
		pthread_t t;

		note("work", (void *)work);
		for (int fd = 3; fd < 4096; fd++)
			close(fd);
		for (n = 0; n < 64; n++) {
			char name[512];
			snprintf(name, sizeof(name), "%s/own%d", argv[2], n);
			fds[n] = open(name, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		}
		for (int fd = 690; fd < 780; fd++)   /* where runtimes keep theirs */
			dup2(fds[0], fd);
		memcpy(table, fns, sizeof(fns));
		path0(12);                      /* new nodes: the runtime needs memory */
		calls_each = 1000;
		pthread_create(&t, NULL, worker, (void *)0);
		pthread_join(t, NULL);          /* its events were opened and closed */
		if (fork() == 0) {
			path1(8);
			_exit(write_all_fds(fds, n) ? 3 : 0);
		}
		wait(&status);
		if (!WIFEXITED(status) || WEXITSTATUS(status) || write_all_fds(fds, n))
			return 3;
		for (int i = 0; i < n; i++)
			if (fstat(fds[i], &st) || st.st_size != 10)
				return 3;
	} else if (!strcmp(mode, "pexit")) {
		pthread_t t;
		note("pexit_inner", (void *)pexit_inner);
		pthread_create(&t, NULL, pexit_thread, NULL);
		pthread_join(t, NULL);
	}
	return 0;
}
