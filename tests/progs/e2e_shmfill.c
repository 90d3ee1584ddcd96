/*
 * e2e_shmfill — a program that fills the runtime's shared-memory directory
 * while it runs (the directory was usable when the recorder checked it):
 *
 *   e2e_shmfill late DIR   fills DIR before its first instrumented call
 *                          (main has no hooks), then calls deep(1000):
 *                          the runtime cannot create its image at all
 *   e2e_shmfill grow DIR   calls deep(10) (the image is made), fills DIR,
 *                          then deep(100000): 100,000 new calling contexts
 *                          that the image cannot grow to hold
 *   e2e_shmfill exec DIR   calls deep(10), fills DIR, then execs itself as
 *                          "after DIR", which calls deep(1000) in an image
 *                          the runtime cannot make
 *   e2e_shmfill fork DIR   calls deep(10), fills DIR, then forks a child
 *                          that calls deep(1000) (no image either), and
 *                          waits for it
 *
 * The fill is DIR/fill, written until the file system refuses; it stays.
 * Prints "ok" and exits 0.
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile unsigned long sink;

__attribute__((noinline)) void deep(int n)
{
	if (n > 1)
		deep(n - 1);
	sink++;
}

__attribute__((no_instrument_function)) static void fill(const char *dir)
{
	static char block[4096];
	char path[4096];
	int fd;

	snprintf(path, sizeof(path), "%s/fill", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0)
		return;
	while (write(fd, block, sizeof(block)) > 0)
		;
	close(fd);
}

__attribute__((no_instrument_function)) int main(int argc, char **argv)
{
	const char *mode = argc > 2 ? argv[1] : "";
	int late = !strcmp(mode, "late"), status;
	pid_t pid;

	if (argc < 3)
		return 2;
	if (!strcmp(mode, "after")) {
		deep(1000);
		printf("ok\n");
		return 0;
	}
	if (!late)
		deep(10);
	fill(argv[2]);
	if (!strcmp(mode, "exec")) {
		char *args[] = { argv[0], "after", argv[2], NULL };

		execv(argv[0], args);
		return 3;
	}
	if (!strcmp(mode, "fork")) {
		pid = fork();
		if (pid == 0) {
			deep(1000);
			_exit(0);
		}
		if (pid < 0 || waitpid(pid, &status, 0) != pid || status)
			return 4;
		printf("ok\n");
		return 0;
	}
	deep(!strcmp(mode, "grow") ? 100000 : 1000);
	printf("ok\n");
	return 0;
}
