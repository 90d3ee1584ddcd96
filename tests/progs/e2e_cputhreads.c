/*
 * e2e_cputhreads — two threads doing 3:1 amounts of the same CPU work, and
 * a forked child doing some of its own: per-thread sample counts must
 * follow each thread's CPU time, and the child is a process of its own.
 * Prints "tid cpu_ns" for each thread so the test can compare.
 */
#include <pthread.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long sink;

__attribute__((noinline)) void spin_for(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		sink += i ^ (sink >> 5);
}

__attribute__((noinline)) void *heavy(void *arg)
{
	struct timespec ts;

	spin_for((unsigned long)arg);
	sink++;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	printf("%ld %ld\n", (long)syscall(SYS_gettid), ts.tv_sec * 1000000000L + ts.tv_nsec);
	fflush(stdout);
	return NULL;
}

__attribute__((noinline)) void child_spin(void)
{
	spin_for(100000000UL);
	sink++;	/* not a tail call: child_spin stays on the stack */
}

int main(void)
{
	pthread_t a, b;
	pid_t pid = fork();

	if (pid == 0) {
		child_spin();
		_exit(0);
	}
	pthread_create(&a, NULL, heavy, (void *)600000000UL);
	pthread_create(&b, NULL, heavy, (void *)200000000UL);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	waitpid(pid, NULL, 0);
	return 0;
}
