/*
 * attach_loop — a target for the tracee tests (src/record/tracee.h), built
 * without hooks: three threads in steady loops, each checking its own
 * invariants, while a tracer attaches, stops them, moves them, writes their
 * text and loads a library into them.
 *   spin   calls work() (integer and floating-point) twice per iteration
 *          and compares; keeps a double that must equal iterations / 2;
 *          checks errno, ymm15's upper half, zmm31, the x87 control word
 *          and MXCSR against values it set (check_state);
 *   sleep  nanosleep(1 ms) in a loop, a monotonic clock that never goes back;
 *   read   blocking read() of a pipe the main thread writes 0, 1, 2, ...
 *          into every 2 ms: each byte must be the next one.
 * Prints "checks ..." (the state checked) and "tids SPIN SLEEP READ" at the start, "tick MS SPIN SLEEP READ"
 * every 100 ms (the counters), and at the end (after SECONDS, or on
 * SIGTERM) "ok" or "FAIL what".
 * With "churn", the main thread also starts a thread every 2 ms, which
 * sleeps 1 ms and returns its number times 3 (checked when joined); "end"
 * then gives their count.  SIGRTMIN is counted (queued signals: none
 * merge): "signals N" before the last line.
 *   attach_loop SECONDS [churn]
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static atomic_int stop;
static atomic_long n_spin, n_sleep, n_read;
static atomic_int failed;
static char why[128];
static int pipefd[2];
static pid_t tids[3];

static void fail(const char *what)
{
	if (!atomic_exchange(&failed, 1))
		snprintf(why, sizeof(why), "%s", what);
}

__attribute__((noipa)) long work(long seed)
{
	long h = seed;
	double d = (double)seed;
	for (int k = 0; k < 200; k++) {
		h = h * 6364136223846793005L + 1442695040888963407L;
		d = d * 0.5 + (double)(h & 0xff);
	}
	return h ^ (long)d;
}

/* State a call made in this thread must give back: errno, the upper half
 * of ymm15 (AVX code in libc ends with vzeroupper, which clears it), zmm31
 * (only AVX-512 code can reach it), the x87 control word and MXCSR's
 * flush-to-zero bit.  Code built without -mavx never touches the first
 * three itself. */
static int has_avx2, has_avx512;
#define YMM_MARK 0x5a5a123456789abcUL
#define ZMM_MARK 0x0123456789abcdefUL

static void set_state(void)
{
	unsigned long y = YMM_MARK, z = ZMM_MARK;
	unsigned short cw = 0x037f & ~0x0300;   /* x87 precision: single */
	unsigned int mx;
	errno = 1234;
	if (has_avx2)
		__asm__ volatile("vmovq %0, %%xmm0\n\tvpbroadcastq %%xmm0, %%ymm0\n\t"
				 "vinserti128 $1, %%xmm0, %%ymm15, %%ymm15" :: "r"(y) : "xmm0", "xmm15");
	if (has_avx512)
		__asm__ volatile("vpbroadcastq %0, %%zmm31" :: "r"(z));
	__asm__ volatile("fldcw %0" :: "m"(cw));
	__asm__ volatile("stmxcsr %0" : "=m"(mx));
	mx |= 1u << 15;
	__asm__ volatile("ldmxcsr %0" :: "m"(mx));
}

static void check_state(void)
{
	unsigned long y = YMM_MARK, z = ZMM_MARK;
	unsigned short cw;
	unsigned int mx;
	if (errno != 1234)
		fail("spin: errno changed");
	if (has_avx2)
		__asm__ volatile("vextracti128 $1, %%ymm15, %%xmm0\n\tvmovq %%xmm0, %0" : "=r"(y) :: "xmm0");
	if (y != YMM_MARK)
		fail("spin: the upper half of ymm15 changed");
	if (has_avx512)
		__asm__ volatile("vextracti64x4 $1, %%zmm31, %%ymm0\n\tvmovq %%xmm0, %0" : "=r"(z) :: "xmm0");
	if (z != ZMM_MARK)
		fail("spin: zmm31 changed");
	__asm__ volatile("fnstcw %0" : "=m"(cw));
	if (cw != (0x037f & ~0x0300))
		fail("spin: the x87 control word changed");
	__asm__ volatile("stmxcsr %0" : "=m"(mx));
	if (!(mx & (1u << 15)))
		fail("spin: MXCSR's flush-to-zero bit changed");
}

static void *spin(void *arg)
{
	(void)arg;
	double half = 0;
	long sum = 0;
	tids[0] = gettid();
	set_state();
	for (long i = 0; !atomic_load_explicit(&stop, memory_order_relaxed); i++) {
		long a = work(i), b = work(i);
		if (a != b)
			fail("spin: work() gave two values");
		sum += a;
		half += 0.5;
		if ((i & 1023) == 0)
			check_state();
		if (half != (double)(i + 1) / 2)
			fail("spin: the double counter drifted");
		atomic_fetch_add_explicit(&n_spin, 1, memory_order_relaxed);
	}
	return (void *)sum;
}

static long now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000L + ts.tv_nsec;
}

static void *sleeper(void *arg)
{
	(void)arg;
	long last = now_ns();
	tids[1] = gettid();
	while (!atomic_load(&stop)) {
		struct timespec ts = { 0, 1000000 };
		if (nanosleep(&ts, NULL) < 0 && errno != EINTR)
			fail("sleep: nanosleep failed");
		long t = now_ns();
		if (t < last)
			fail("sleep: the clock went back");
		last = t;
		atomic_fetch_add(&n_sleep, 1);
	}
	return NULL;
}

static void *reader(void *arg)
{
	(void)arg;
	unsigned char want = 0, c;
	tids[2] = gettid();
	for (;;) {
		ssize_t r = read(pipefd[0], &c, 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			fail("read: read failed");
		if (r <= 0)
			break;   /* the writer closed it: the end */
		if (c != want)
			fail("read: a byte out of sequence");
		want++;
		atomic_fetch_add(&n_read, 1);
	}
	return NULL;
}

static void *churned(void *arg)
{
	struct timespec ts = { 0, 1000000 };
	nanosleep(&ts, NULL);
	return (void *)((long)arg * 3);
}

static atomic_long n_rt;

static void on_rt(int sig)
{
	(void)sig;
	atomic_fetch_add(&n_rt, 1);
}

static void on_term(int sig)
{
	(void)sig;
	atomic_store(&stop, 1);
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 5;
	int churn = argc > 2 && !strcmp(argv[2], "churn");
	long n_churn = 0;
	pthread_t th[3];
	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGTERM, on_term);
	struct sigaction sa = { .sa_handler = on_rt, .sa_flags = SA_RESTART };
	sigaction(SIGRTMIN, &sa, NULL);
	if (pipe(pipefd) < 0)
		return 2;
	has_avx2 = __builtin_cpu_supports("avx2");
	has_avx512 = __builtin_cpu_supports("avx512f");
	printf("checks errno x87 mxcsr%s%s\n", has_avx2 ? " ymm" : "", has_avx512 ? " zmm" : "");
	pthread_create(&th[0], NULL, spin, NULL);
	pthread_create(&th[1], NULL, sleeper, NULL);
	pthread_create(&th[2], NULL, reader, NULL);
	while (!tids[0] || !tids[1] || !tids[2])
		usleep(1000);
	printf("tids %d %d %d\n", tids[0], tids[1], tids[2]);
	long start = now_ns(), next_tick = start;
	unsigned char b = 0;
	while (!atomic_load(&stop) && now_ns() - start < (long)(seconds * 1e9)) {
		struct timespec ts = { 0, 2000000 };
		pthread_t c;
		void *r;
		if (churn && pthread_create(&c, NULL, churned, (void *)n_churn) != 0)
			fail("churn: pthread_create failed");
		nanosleep(&ts, NULL);
		if (churn) {   /* a thread of 1 ms every 2 ms */
			if (pthread_join(c, &r) != 0 || (long)r != n_churn * 3)
				fail("churn: a thread did not run or returned a wrong value");
			n_churn++;
		}
		if (write(pipefd[1], &b, 1) == 1)
			b++;
		else if (errno != EINTR)
			fail("main: write to the pipe failed");
		if (now_ns() >= next_tick) {
			printf("tick %ld %ld %ld %ld\n", (now_ns() - start) / 1000000, atomic_load(&n_spin),
			       atomic_load(&n_sleep), atomic_load(&n_read));
			next_tick += 100000000;
		}
	}
	atomic_store(&stop, 1);
	close(pipefd[1]);
	for (int i = 0; i < 3; i++)
		pthread_join(th[i], NULL);
	printf("end %ld %ld %ld %ld\n", atomic_load(&n_spin), atomic_load(&n_sleep), atomic_load(&n_read), n_churn);
	printf("signals %ld\n", atomic_load(&n_rt));
	if (atomic_load(&failed)) {
		printf("FAIL %s\n", why);
		return 1;
	}
	printf("ok\n");
	return 0;
}
