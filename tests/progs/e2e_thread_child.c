/*
 * A child forked by a thread that is not the main one (t309): it is in
 * that thread's /proc/PID/task/TID/children, not the main thread's, while
 * that thread lives (it waits on).  The child waits for SIGINT and then
 * writes "child SIGINT" to argv[1] and exits 0; the parent writes "ready"
 * to argv[1] once the child is up and waits for a signal (SIGINT ends it:
 * the default action, set again, as a shell's background job has it
 * ignored).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static const char *file;

static void on_int(int sig)
{
	FILE *f = fopen(file, "w");

	(void)sig;
	if (f) {
		fputs("child SIGINT\n", f);
		fclose(f);
	}
	_exit(0);
}

static int up[2];

static void *forker(void *arg)
{
	if (fork() == 0) {
		signal(SIGINT, on_int);
		write(up[1], "u", 1);
		for (;;)
			pause();
	}
	for (;;)
		pause();
	return arg;
}

int main(int argc, char **argv)
{
	pthread_t t;
	FILE *f;
	char c;

	if (argc < 2 || pipe(up))
		return 2;
	file = argv[1];
	signal(SIGINT, SIG_DFL);
	pthread_create(&t, NULL, forker, NULL);
	if (read(up[0], &c, 1) != 1)
		return 2;
	f = fopen(file, "w");
	if (f) {
		fputs("ready\n", f);
		fclose(f);
	}
	for (;;)
		pause();
}
