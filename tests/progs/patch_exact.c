/*
 * Exact counts under run-time patching (t701): one function per rule of
 * docs/patching.md, built -O2 -rdynamic without hooks.  The program prints what it
 * computed (the test compares it with a run without stackclock: registers
 * and results unchanged) and, on stderr, "expect NAME CALLS" for every
 * function it calls a known number of times in this run (the counting
 * oracle; some depend on the time a loop took).
 *
 *	patch_exact N [child]     N rounds; "child": the exec'ed copy
 */
#include <execinfo.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#ifdef __clang__
#define NOINL __attribute__((noinline))
#else
#define NOINL __attribute__((noinline, noclone))
#endif

volatile int g_seed = 3;
static long expect[32];
static const char *names[32];
static int nexpect;

static void want(const char *name, long calls)
{
	int i;

	for (i = 0; i < nexpect && strcmp(names[i], name); i++)
		;
	if (i == nexpect) {
		names[nexpect++] = name;
		expect[i] = 0;
	}
	expect[i] += calls;
}

/* plain calls and recursion */
NOINL long leaf(long x) { return x * 3 + g_seed; }
NOINL long rec(int depth) { return leaf(depth <= 0 ? 0 : rec(depth - 1)); }

/* a RIP-relative load first: its displacement is rewritten */
int g_counter = 5;
NOINL int rip_first(int x) { return g_counter + x; }

/* float arguments in all eight vector registers, a double returned */
NOINL double fmix(double a, double b, double c, double d, float e, float f, double g, double h, int k)
{
	return a * 1.5 + b - c * d + e / 2 + f + g * h + k;
}
NOINL float fret(float a) { return a * 0.25f + 1.0f; }

/* a function calling others with values it keeps in caller-saved
 * registers (-fipa-ra knows the callees leave them alone) */
static NOINL int ipa_leaf(int x) { return x ^ 0x55; }
static NOINL long ipa_caller(long a, long b, long c, long d)
{
	long r = 0;

	for (int i = 0; i < 4; i++)
		r += ipa_leaf((int)(a + i)) + b * c - d;
	return r + a + b + c + d;
}

/* a system call without a call, so that -fipa-ra lets the caller keep
 * doubles in vector registers across it, while its exit probe reads the
 * kernel's records of that system call (a slow path, libc and floating
 * point inside) */
static NOINL long do_sys(long x)
{
	long r;

	__asm__ volatile("syscall" : "=a"(r) : "a"((long)SYS_getppid) : "rcx", "r11", "memory");
	return r * 0 + x;
}
static NOINL double keep_xmm(double a, double b, int n)
{
	double c = a * b, d = a + b, e = a - b, f = a / b, g = c * d, h = e * f;
	long s = 0;

	for (int i = 0; i < n; i++) {
		s += do_sys(i);
		c += 1.0; d += 2.0; e += 3.0; f += 4.0; g += 0.5; h += 0.25;
	}
	return c + d * 2 + e * 3 + f * 5 + g * 7 + h * 11 + (double)s;
}

/* doubles in every vector register across calls of a patched leaf that
 * uses none (-fipa-ra keeps them there, no spill): the probes' fast paths,
 * which take every call here, must leave all sixteen alone (the stubs
 * keep vector state on the slow paths only, docs/patching.md) */
static NOINL long int_leaf(long x) { return (x ^ 0x33) + g_seed; }
static NOINL double keep_xmm16(int n)
{
	double a = g_seed, b = a + 1, c = a + 2, d = a + 3, e = a + 4, f = a + 5, g = a + 6, h = a + 7;
	double i = a + 8, j = a + 9, k = a + 10, l = a + 11, m = a + 12, o = a + 13;
	long s = 0;

	for (int r = 0; r < n; r++) {
		s += int_leaf(r);
		a += b; b += c; c += d; d += e; e += f; f += g; g += h; h += i;
		i += j; j += k; k += l; l += m; m += o; o *= 0.5;
	}
	return a + b * 2 + c * 3 + d * 4 + e * 5 + f * 6 + g * 7 + h * 8 + i * 9 + j * 10 + k * 11 + l * 12 +
	       m * 13 + o * 14 + (double)s;
}

/* tail calls (built with sibling calls on) */
NOINL long tail_b(long x) { return leaf(x) + 1; }
NOINL long tail_a(long x) { return tail_b(x + 1); }

/* hand-written entries */
long jcc_first(long x);       /* a jcc among the first 5 bytes */
long loop_entry(long x);      /* jumps back to its own entry */
long tiny(void);              /* 3 bytes: too short to patch, counted at
				 its call site */
__asm__(".text\n"
	".globl jcc_first\n.type jcc_first, @function\n"
	"jcc_first:\n"
	"\t.cfi_startproc\n"
	"\ttest %rdi, %rdi\n"
	"\tjle 1f\n"
	"\tlea (%rdi,%rdi), %rax\n"
	"\tret\n"
	"1:\txor %eax, %eax\n"
	"\tret\n"
	"\t.cfi_endproc\n"
	".size jcc_first, .-jcc_first\n"
	".globl loop_entry\n.type loop_entry, @function\n"
	"loop_entry:\n"
	"\t.cfi_startproc\n"
	"\tsub $1, %rdi\n"
	"\tjg loop_entry\n"
	"\tmov %rdi, %rax\n"
	"\tret\n"
	"\t.cfi_endproc\n"
	".size loop_entry, .-loop_entry\n"
	".globl tiny\n.type tiny, @function\n"
	"tiny:\n"
	"\t.cfi_startproc\n"
	"\txor %eax, %eax\n"
	"\tret\n"
	"\t.cfi_endproc\n"
	".size tiny, .-tiny\n");

/* backtrace() from patched frames: the callers' names, as without us
 * (built -rdynamic) */
NOINL void bt_leaf(void)
{
	void *pc[16];
	int n = backtrace(pc, 16);
	char **sym = backtrace_symbols(pc, n);

	for (int i = 0; sym && i < n && i < 4; i++) {
		const char *a = strchr(sym[i], '('), *b = a ? strchr(a, '+') : NULL;

		printf("bt %d %.*s\n", i, a && b ? (int)(b - a - 1) : 1, a && b ? a + 1 : "?");
	}
	free(sym);
}
NOINL void bt_mid(void) { bt_leaf(); g_seed++; }
NOINL void bt_top(void) { bt_mid(); g_seed++; }

/* signal handlers, on an alternate stack, interrupting patched code */
static volatile int g_signals;
NOINL int sig_leaf(int x) { return x + g_seed; }
static void on_signal(int sig)
{
	g_signals += sig_leaf(sig) > 0;
}
NOINL void raise_n(int n)
{
	for (int i = 0; i < n; i++)
		raise(SIGUSR1);
}

/* a timer's signals landing anywhere in patched code, its stubs and
 * trampolines included (10 ticks of the profiling timer: 40 ms of CPU) */
static volatile int g_ticks;
NOINL int tick_leaf(int x) { return x + g_seed; }
static void on_tick(int sig)
{
	g_ticks += tick_leaf(sig) > 0;
}
NOINL long spin_rec(int d) { return leaf(d <= 0 ? 0 : spin_rec(d - 1) + spin_rec(d - 2)); }

/* threads */
#define NTHREADS 4
NOINL long thread_work(long n)
{
	long s = 0;

	for (long i = 0; i < n; i++)
		s += leaf(i);
	return s;
}

static void *thread_main(void *arg)
{
	long *n = arg;

	*n = thread_work(*n);
	return NULL;
}

/* fork and exec */
NOINL int in_child(int n)
{
	long s = 0;

	for (int i = 0; i < n; i++)
		s += rec(3);
	return (int)(s & 0x7f);
}

static void *rounds(int n, unsigned long *sum, double *fsum)
{
	for (int i = 0; i < n; i++) {
		*sum += (unsigned long)rec(i % 7);
		*sum += (unsigned long)rip_first(i);
		*sum += (unsigned long)tail_a(i);
		*sum += (unsigned long)jcc_first(i % 3 - 1);
		*sum += (unsigned long)loop_entry(i % 5 + 1);
		*sum += (unsigned long)tiny();
		*sum += (unsigned long)ipa_caller(i, i + 1, i + 2, i + 3);
		*fsum += fmix(i, 0.5, 1.25, i / 3.0, 2.5f, (float)i, -1.0, 0.125, i);
		*fsum += fret((float)i);
		want("rec", i % 7 + 1);
		want("leaf", i % 7 + 1 + 1);       /* rec's, tail_b's */
	}
	want("rip_first", n);
	want("tail_a", n);
	want("tail_b", n);
	want("jcc_first", n);
	want("loop_entry", n);
	want("tiny", n);
	want("ipa_caller", n);
	want("ipa_leaf", 4L * n);
	want("fmix", n);
	want("fret", n);
	return NULL;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 1000, status = 0;
	unsigned long sum = 0;
	double fsum = 0;
	pthread_t th[NTHREADS];
	long tn[NTHREADS];
	pid_t pid;

	if (argc > 2 && !strcmp(argv[2], "child"))
		return in_child(n);
	rounds(n, &sum, &fsum);
	bt_top();
	want("bt_leaf", 1);
	fsum += keep_xmm(1.5, 2.5, n);
	want("keep_xmm", 1);
	fsum += keep_xmm16(n * 8);
	want("keep_xmm16", 1);
	want("int_leaf", (long)n * 8);
	want("do_sys", n);
	{
		static char alt[1 << 16];
		stack_t ss = { .ss_sp = alt, .ss_size = sizeof(alt) };
		struct sigaction sa = { .sa_handler = on_signal, .sa_flags = SA_ONSTACK };

		sigaltstack(&ss, NULL);
		sigaction(SIGUSR1, &sa, NULL);
		raise_n(n);
		want("raise_n", 1);
		want("on_signal", g_signals);
		want("sig_leaf", g_signals);
		sum += (unsigned long)g_signals;
	}
	for (int i = 0; i < NTHREADS; i++) {
		tn[i] = n;
		pthread_create(&th[i], NULL, thread_main, &tn[i]);
	}
	for (int i = 0; i < NTHREADS; i++) {
		pthread_join(th[i], NULL);
		sum += (unsigned long)tn[i];
	}
	want("thread_work", NTHREADS);
	want("leaf", (long)NTHREADS * n);
	fflush(NULL);
	pid = fork();
	if (pid == 0)
		_exit(in_child(n));
	waitpid(pid, &status, 0);
	sum += (unsigned long)WEXITSTATUS(status);
	pid = fork();
	if (pid == 0) {
		char arg[16];

		snprintf(arg, sizeof(arg), "%d", n);
		execl("/proc/self/exe", argv[0], arg, "child", (char *)NULL);
		_exit(127);
	}
	waitpid(pid, &status, 0);
	sum += (unsigned long)WEXITSTATUS(status);
	{
		struct sigaction sa = { .sa_handler = on_tick, .sa_flags = SA_RESTART };
		struct itimerval it = { { 0, 200 }, { 0, 200 } }, off = { { 0, 0 }, { 0, 0 } };
		long calls = 0;

		sigaction(SIGPROF, &sa, NULL);
		setitimer(ITIMER_PROF, &it, NULL);
		while (g_ticks < 10) {
			spin_rec(18);          /* (how many times depends on time) */
			calls++;
		}
		setitimer(ITIMER_PROF, &off, NULL);
		want("spin_rec", calls * 13529);   /* calls of spin_rec(18) */
		want("leaf", calls * 13529);       /* one per spin_rec */
		want("on_tick", g_ticks);
		want("tick_leaf", g_ticks);
	}
	/* in the two children: in_child once each, rec(3) n times each */
	want("in_child", 2);
	want("rec", 2L * 4 * n);
	want("leaf", 2L * 4 * n);
	want("main", 2);
	printf("sum %lu fsum %.17g\n", sum, fsum);
	for (int i = 0; i < nexpect; i++)
		fprintf(stderr, "expect %s %ld\n", names[i], expect[i]);
	return 0;
}
