/*
 * e2e_dropuid — a program started as root that drops its privileges (to
 * nobody), as a daemon's workers do, then forks 3 children: every one of
 * them must still be recorded (t123).  work() is called 100 times by each
 * of the 4 processes; prints the sum.
 */
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

__attribute__((noinline)) int work(int x)
{
	volatile int v = x;    /* long enough to be patched */

	for (int i = 0; i < 3; i++)
		v += i;
	return v - 2;
}

int main(void)
{
	int s = 0;

	for (int i = 0; i < 100; i++)
		s += work(i);
	if (setgid(65534) || setuid(65534)) {
		perror("dropping privileges");
		return 1;
	}
	for (int k = 0; k < 3; k++) {
		pid_t p = fork();

		if (!p) {
			for (int i = 0; i < 100; i++)
				s += work(i);
			_exit(0);
		}
		waitpid(p, NULL, 0);
	}
	printf("%d\n", s);
	return 0;
}
