/*
 * t521: known calls in three threads, for the HTML report's timeline.
 * main calls stage() twice (25 ms each, stage calls leaf() 5 times, 5 ms
 * each), threads "alpha" and "beta" call spin_a() 3 times (20 ms) and
 * spin_b() 2 times (30 ms); every duration is spent spinning on the clock,
 * so sampling sees it too.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <time.h>

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* the clock read every 20,000 additions: a few thousand calls in all */
static void __attribute__((noinline)) spin(double ms)
{
	double end = now_ms() + ms;
	volatile unsigned x = 0;

	while (now_ms() < end)
		for (int i = 0; i < 20000; i++)
			x += i;
}

void __attribute__((noinline)) leaf(void) { spin(5); }

void __attribute__((noinline)) stage(void)
{
	for (int i = 0; i < 5; i++)
		leaf();
}

void __attribute__((noinline)) spin_a(void) { spin(20); }
void __attribute__((noinline)) spin_b(void) { spin(30); }

static void *alpha(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "alpha");
	for (int i = 0; i < 3; i++)
		spin_a();
	return NULL;
}

static void *beta(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "beta");
	for (int i = 0; i < 2; i++)
		spin_b();
	return NULL;
}

int main(void)
{
	pthread_t a, b;

	pthread_create(&a, NULL, alpha, NULL);
	pthread_create(&b, NULL, beta, NULL);
	stage();
	stage();
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	return 0;
}
