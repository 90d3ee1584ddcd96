/*
 * e2e_cancel — threads ended by pthread_exit and by pthread_cancel under
 * frames with cleanup handlers (built with -fexceptions: the handlers are
 * the frames' landing pads, run by the C library's forced unwind, which
 * walks every return address up to the thread's start):
 *   exit     a thread calls pthread_exit two frames deep, each frame with
 *            a handler: both run;
 *   cancel   a thread 10 frames deep (a handler each) sleeps in a loop
 *            (usleep, a cancellation point: a library call) until another
 *            cancels it: all 11 handlers run.
 * Prints "exit 42 cleaned 2" and "cancel 1 cleaned 11", N times each
 * (-S: for S seconds).
 *   e2e_cancel [N | -S]
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static volatile int cleaned, reached;

__attribute__((noinline)) void cleanup(void *arg)
{
	cleaned += (int)(long)arg;
}

__attribute__((noinline)) void exit_deep(int d)
{
	pthread_cleanup_push(cleanup, (void *)1L);
	if (d == 0)
		pthread_exit((void *)42L);
	exit_deep(d - 1);
	pthread_cleanup_pop(0);
}

__attribute__((noinline)) void sleeper(void)
{
	__atomic_store_n(&reached, 1, __ATOMIC_SEQ_CST);
	for (;;)
		usleep(100);
}

__attribute__((noinline)) void cancel_deep(int d)
{
	pthread_cleanup_push(cleanup, (void *)1L);
	if (d == 0)
		sleeper();
	else
		cancel_deep(d - 1);
	pthread_cleanup_pop(0);
}

__attribute__((noinline)) void *exit_start(void *arg)
{
	exit_deep((int)(long)arg);
	return NULL;
}

__attribute__((noinline)) void *cancel_start(void *arg)
{
	cancel_deep((int)(long)arg);
	return NULL;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 3;
	time_t end = n < 0 ? time(NULL) - n : 0;

	for (int k = 0; n < 0 ? time(NULL) < end : k < n; k++) {
		pthread_t t;
		void *r;

		cleaned = 0;
		if (pthread_create(&t, NULL, exit_start, (void *)1L) || pthread_join(t, &r))
			return 1;
		printf("exit %ld cleaned %d\n", (long)r, cleaned);
		cleaned = reached = 0;
		if (pthread_create(&t, NULL, cancel_start, (void *)10L))
			return 1;
		while (!__atomic_load_n(&reached, __ATOMIC_SEQ_CST))
			usleep(100);
		if (pthread_cancel(t) || pthread_join(t, &r))
			return 1;
		printf("cancel %d cleaned %d\n", r == PTHREAD_CANCELED, cleaned);
	}
	return 0;
}
