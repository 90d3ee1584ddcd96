/*
 * e2e_daemon — programs that outlive or ignore their recorder's patience.
 *
 *   daemon PIDFILE   parent_work() 10 times, then a double fork: the
 *                    grandchild calls setsid(), writes its pid to PIDFILE
 *                    and calls tick() every millisecond (for 60 s at most);
 *                    the parent and the middle child exit at once
 *   busy PIDFILE     stays in the recorder's process group: forks a worker
 *                    (same group), writes its own pid, and both call tick()
 *                    every millisecond until a signal ends them
 *   stubborn PIDFILE as busy, alone, ignoring SIGINT
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long sink;

__attribute__((noinline)) void parent_work(void) { sink++; }
__attribute__((noinline)) void tick(void) { sink++; }

static void note_pid(const char *path)
{
	char tmp[4096];
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "w");
	if (!f)
		_exit(2);
	fprintf(f, "%d\n", (int)getpid());
	fclose(f);
	rename(tmp, path);
}

static void tick_for(int seconds)
{
	struct timespec ms = { 0, 1000000 };

	for (long i = 0; i < seconds * 1000L; i++) {
		tick();
		nanosleep(&ms, NULL);
	}
}

int main(int argc, char **argv)
{
	if (argc < 3)
		return 2;
	if (!strcmp(argv[1], "stubborn")) {
		signal(SIGINT, SIG_IGN);
		note_pid(argv[2]);
		tick_for(60);
		return 0;
	}
	if (!strcmp(argv[1], "busy")) {
		if (fork() == 0) {
			tick_for(60);
			_exit(0);
		}
		note_pid(argv[2]);
		tick_for(60);
		wait(NULL);
		return 0;
	}
	for (int i = 0; i < 10; i++)
		parent_work();
	if (fork() == 0) {
		setsid();
		if (fork() == 0) {
			note_pid(argv[2]);
			tick_for(60);
			_exit(0);
		}
		_exit(0);
	}
	wait(NULL);
	return 0;
}
