/*
 * e2e_libcalls — known calls into other modules (SPEC section 11), each
 * kind a PLT hook must survive, with the counts the report must give.
 *
 * Usage: e2e_libcalls N HOOKED_LIB.so
 *   main thread: getppid() N times; two threads 100 times each; memcpy 1000
 *   and memmove 500 times (one IFUNC variant serves both); qsort once and
 *   bsearch 10 times, their comparator instrumented; raise(SIGUSR1) 5
 *   times, the handler calling getpid(); setjmp/longjmp 3 times through a
 *   library call's frame (qsort's comparator jumps out); plain_work() of
 *   libplain (no probes) once, which calls strlen 5 times; a library built
 *   with the hooks, dlopen'ed, its lib_work() called 4 times through a
 *   dlsym'd pointer (each calls strlen 3 times); getppid 7 more times
 *   through a dlsym'd pointer (not hooked: not counted); a fork whose child
 *   calls getpgrp 10 times; getuid's address compared with dlsym's (a
 *   pointer the program takes must stay the function's own); exit(), whose
 *   atexit handler calls getppid once more.
 * Prints what it did, for the test to compare.
 *
 * Usage: e2e_libcalls sig N
 *   a 100 us timer's SIGALRM handler calls getpid() while the main thread
 *   calls getppid() N times: signals land inside library-call probes.
 *   Prints "handler H".
 *
 * Usage: e2e_libcalls vfork N   vfork, the child execs /bin/true (exec and
 *   _exit are not hooked: the child runs on its parent's stack), then
 *   getppid() N times.
 * Usage: e2e_libcalls abort N   getppid() N times, then abort() from
 *   inside a function of the program (the process dies of SIGABRT).
 *
 * Usage: e2e_libcalls values N   library calls taking and returning floats
 *   (pow, powf, ldexp: xmm arguments and results), long doubles (sqrtl,
 *   fmal: arguments on the stack, the result in x87's st0), a variadic
 *   call with more doubles than vector argument registers and a long
 *   double (snprintf: al counts the vector registers used, the rest on the
 *   stack), a complex result (cexp: xmm0 and xmm1), a structure returned
 *   in rax:rdx (ldiv), N times each (ldiv and cexp once); prints the
 *   results exactly (hexadecimal floats), which must not change when
 *   recorded.
 */
#include <complex.h>
#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

void plain_work(void);

static volatile long sink;
static volatile int cmp_calls, handler_calls, jumps;
static jmp_buf env;
static volatile int jump_now;

__attribute__((noinline)) static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	cmp_calls++;
	if (jump_now) {
		jump_now = 0;
		longjmp(env, 1);
	}
	return (x > y) - (x < y);
}

__attribute__((noinline)) static void on_usr1(int sig)
{
	(void)sig;
	handler_calls++;
	sink += getpid();
}

__attribute__((noinline)) static void on_alarm(int sig)
{
	(void)sig;
	handler_calls++;
	sink += getpid();
}

static int signals(int n)
{
	struct itimerval it = { { 0, 100 }, { 0, 100 } };
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGALRM, &sa, NULL);
	setitimer(ITIMER_REAL, &it, NULL);
	for (int i = 0; i < n; i++)
		sink += getppid();
	it = (struct itimerval){ { 0, 0 }, { 0, 0 } };
	setitimer(ITIMER_REAL, &it, NULL);
	printf("handler %d\n", handler_calls);
	return 0;
}

__attribute__((noinline)) static void die(void)
{
	abort();
}

static int ends(const char *how, int n)
{
	if (!strcmp(how, "vfork")) {
		pid_t pid = vfork();

		if (pid == 0) {
			execl("/bin/true", "true", (char *)NULL);
			_exit(127);
		}
		waitpid(pid, NULL, 0);
	}
	for (int i = 0; i < n; i++)
		sink += getppid();
	if (!strcmp(how, "abort"))
		die();
	return 0;
}

static int values(int n)
{
	volatile double x = 1.25, y = 0.5;
	volatile float xf = 1.5f;
	volatile long double xl = 1.0000000000000000001L;
	double acc = 0, keep = x * 3;        /* live across the calls */
	float accf = 0;
	long double accl = 0;
	char buf[256] = "";
	long len = 0;
	double complex z;
	ldiv_t d;

	for (int i = 0; i < n; i++) {
		acc += pow(x + i, y);
		accf += powf(xf + (float)i, 0.25f);
		accl += sqrtl(xl + i);
		accl += fmal(xl, (long double)i, xl);
		acc += ldexp(x, i & 7) * keep;
		len += snprintf(buf, sizeof(buf), "%.17g %g %d %.21Lg %s %.9g %.9g %.9g %.9g %.9g %.9g %.9g", acc,
				y * i, i, accl, "s", x, y, x * 2, y * 2, x * 3, y * 3, x * 4 + i);
	}
	z = cexp(x + y * I);
	d = ldiv(1000003L * n, 7);
	printf("values %a %a %La %ld\n", acc, (double)accf, accl, len);
	printf("last %s\n", buf);
	printf("cexp %a %a ldiv %ld %ld\n", creal(z), cimag(z), d.quot, d.rem);
	return 0;
}

__attribute__((noinline)) static void *thread_fn(void *arg)
{
	(void)arg;
	for (int i = 0; i < 100; i++)
		sink += getppid();
	return NULL;
}

__attribute__((noinline)) static void at_exit_fn(void)
{
	sink += getppid();
	printf("cmp %d handler %d jumps %d\n", cmp_calls, handler_calls, jumps);
	fflush(stdout);
}

__attribute__((noinline)) static void jump_through_qsort(int *v, int n)
{
	if (!setjmp(env)) {
		jump_now = 1;
		qsort(v, (size_t)n, sizeof(*v), cmp_int);
	} else {
		jumps++;
	}
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 1000, v[64], key;
	char a[64] = "abcdef", b[64];
	pthread_t t[2];
	void *h;
	void (*work)(void);
	pid_t (*ppid)(void);
	pid_t child;

	if (argc < 3)
		return 2;
	if (!strcmp(argv[1], "sig"))
		return signals(atoi(argv[2]));
	if (!strcmp(argv[1], "vfork") || !strcmp(argv[1], "abort"))
		return ends(argv[1], atoi(argv[2]));
	if (!strcmp(argv[1], "values"))
		return values(atoi(argv[2]));
	atexit(at_exit_fn);
	for (int i = 0; i < n; i++)
		sink += getppid();
	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, thread_fn, NULL);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	for (int i = 0; i < 1000; i++)
		memcpy(b, a, 8 + (size_t)(i & 7));
	for (int i = 0; i < 500; i++)
		memmove(a + 1, a, 8);
	for (int i = 0; i < 64; i++)
		v[i] = (i * 37) % 64;
	qsort(v, 64, sizeof(v[0]), cmp_int);
	for (int i = 0; i < 10; i++) {
		key = i * 5;
		sink += bsearch(&key, v, 64, sizeof(v[0]), cmp_int) != NULL;
	}
	signal(SIGUSR1, on_usr1);
	for (int i = 0; i < 5; i++)
		raise(SIGUSR1);
	for (int i = 0; i < 3; i++)
		jump_through_qsort(v, 64);
	plain_work();
	h = dlopen(argv[2], RTLD_NOW);
	work = h ? (void (*)(void))dlsym(h, "lib_work") : NULL;
	if (!work) {
		fprintf(stderr, "cannot load %s\n", argv[2]);
		return 1;
	}
	for (int i = 0; i < 4; i++)
		work();
	ppid = (pid_t(*)(void))dlsym(RTLD_DEFAULT, "getppid");
	for (int i = 0; i < 7; i++)
		sink += ppid();
	printf("identity %d\n", (void *)getuid == dlsym(RTLD_DEFAULT, "getuid"));
	child = fork();
	if (child == 0) {
		for (int i = 0; i < 10; i++)
			sink += getpgrp();
		_exit(0);
	}
	waitpid(child, NULL, 0);
	fflush(stdout);
	exit(0);
}
