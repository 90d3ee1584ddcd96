/*
 * e2e_unbalanced — exits that never come:
 *   jumper: main -> jump_outer -> jump_mid -> jump_leaf, which longjmps back
 *           into jump_outer (jump_mid and jump_leaf never exit)
 *   recursion: recurse(50) charged once however deep
 *   ender:  "exit" argument: exit() from three frames deep (open frames)
 *   "signal": an instrumented SIGALRM handler runs on top of whatever frame
 *           was interrupted, 20 times, then a handler siglongjmps out of
 *           two frames (repairs)
 *   "thread": a thread calls pthread_exit() from three frames deep
 */
#include <pthread.h>
#include <signal.h>
#include <sys/time.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>

static jmp_buf env;
static volatile unsigned long sink;

__attribute__((noinline)) void jump_leaf(void) { longjmp(env, 1); }
__attribute__((noinline)) void jump_mid(void) { jump_leaf(); sink++; }

__attribute__((noinline)) void jump_outer(void)
{
	for (int i = 0; i < 10; i++)
		if (!setjmp(env))
			jump_mid();
}

__attribute__((noinline)) unsigned long recurse(int n)
{
	return n ? recurse(n - 1) + 1 : 0;
}

__attribute__((noinline)) void exit_deep2(void) { exit(0); }
__attribute__((noinline)) void exit_deep1(void) { exit_deep2(); }

static volatile sig_atomic_t ticks;
static sigjmp_buf sigenv;

__attribute__((noinline)) void on_alarm(int sig) { ticks++; (void)sig; }
__attribute__((noinline)) void on_alarm_jump(int sig) { (void)sig; siglongjmp(sigenv, 1); }
__attribute__((noinline)) void busy(void) { sink++; }

__attribute__((noinline)) void wait_ticks(void)
{
	struct itimerval it = { { 0, 2000 }, { 0, 2000 } };

	signal(SIGALRM, on_alarm);
	setitimer(ITIMER_REAL, &it, NULL);
	while (ticks < 20)
		busy();
	it.it_value.tv_usec = it.it_interval.tv_usec = 0;
	setitimer(ITIMER_REAL, &it, NULL);
}

__attribute__((noinline)) void spin_forever(void) { for (;;) busy(); }
__attribute__((noinline)) void jump_spin(void) { spin_forever(); }

__attribute__((noinline)) void jump_out_of_handler(void)
{
	struct itimerval it = { { 0, 0 }, { 0, 5000 } };

	if (sigsetjmp(sigenv, 1))
		return;
	signal(SIGALRM, on_alarm_jump);
	setitimer(ITIMER_REAL, &it, NULL);
	jump_spin();
}

__attribute__((noinline)) void pexit_inner(void) { pthread_exit(NULL); }
__attribute__((noinline)) void pexit_outer(void) { pexit_inner(); }
__attribute__((noinline)) void *pexit_thread(void *arg) { pexit_outer(); return arg; }

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "signal")) {
		wait_ticks();
		jump_out_of_handler();
		return 0;
	}
	if (argc > 1 && !strcmp(argv[1], "thread")) {
		pthread_t t;
		pthread_create(&t, NULL, pexit_thread, NULL);
		pthread_join(t, NULL);
		return 0;
	}
	jump_outer();
	sink += recurse(50);
	if (argc > 1 && !strcmp(argv[1], "exit"))
		exit_deep1();
	return 0;
}
