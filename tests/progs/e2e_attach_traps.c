/*
 * A program that traps on purpose, in a loop, and handles its own traps
 * (t331): two threads run int3 (SIGTRAP), ud2 (SIGILL) and a load from an
 * unmapped address (SIGSEGV), each counted before it is raised; the
 * handlers count what they get and step over the instruction.  A handler
 * checks that the signal is the program's own (the instruction's address,
 * the fault's address and code): anything else is "foreign", said on
 * stderr, and the program exits with status 3 at once (it could not go on
 * safely).  The main thread installs the handlers again and again meanwhile
 * (a program that reinstalls its handlers races whoever saves and puts
 * back dispositions).  argv[1]: a file where "ready" is written once every
 * kind has been handled.  SIGTERM ends it: one line
 *   raised T I S handled T I S
 * and status 0 when each kind was handled exactly as often as raised.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#define BAD_ADDR 0xdead000ul   /* never mapped (below the usual mmap_min_addr's reach: not made) */

enum { TRAP, ILL, SEGV, KINDS };

static volatile sig_atomic_t done;
static unsigned long raised[KINDS], handled[KINDS];
static const int signo[KINDS] = { SIGTRAP, SIGILL, SIGSEGV };

extern const char sc_int3_at[], sc_ud2_at[], sc_load_at[];

__attribute__((noinline)) void trap_int3(void)
{
	__atomic_fetch_add(&raised[TRAP], 1, __ATOMIC_RELAXED);
	__asm__ volatile(".globl sc_int3_at\nsc_int3_at: int3" ::: "memory");
}

__attribute__((noinline)) void trap_ud2(void)
{
	__atomic_fetch_add(&raised[ILL], 1, __ATOMIC_RELAXED);
	__asm__ volatile(".globl sc_ud2_at\nsc_ud2_at: ud2" ::: "memory");
}

__attribute__((noinline)) uint64_t trap_load(void)
{
	uint64_t v = 7;

	__atomic_fetch_add(&raised[SEGV], 1, __ATOMIC_RELAXED);
	/* movq (%rdi), %rax: 3 bytes (48 8b 07), stepped over by the handler */
	__asm__ volatile(".globl sc_load_at\nsc_load_at: movq (%%rdi), %%rax"
			 : "+a"(v) : "D"(BAD_ADDR) : "memory");
	return v;
}

static void foreign(int sig, const siginfo_t *si, uint64_t ip)
{
	char line[160];
	int n = snprintf(line, sizeof(line), "foreign signal %d (code %d, addr %p) at %#lx\n", sig,
			 si->si_code, si->si_addr, (unsigned long)ip);

	write(2, line, (size_t)n);
	_exit(3);
}

static void on_trap(int sig, siginfo_t *si, void *ucv)
{
	ucontext_t *uc = ucv;
	greg_t *g = uc->uc_mcontext.gregs;
	uint64_t ip = (uint64_t)g[REG_RIP];

	switch (sig) {
	case SIGTRAP:
		if (si->si_code != SI_KERNEL || ip != (uint64_t)sc_int3_at + 1)
			foreign(sig, si, ip);
		__atomic_fetch_add(&handled[TRAP], 1, __ATOMIC_RELAXED);
		break;
	case SIGILL:
		if (si->si_code != ILL_ILLOPN || ip != (uint64_t)sc_ud2_at)
			foreign(sig, si, ip);
		__atomic_fetch_add(&handled[ILL], 1, __ATOMIC_RELAXED);
		g[REG_RIP] += 2;
		break;
	default:
		if (si->si_code != SEGV_MAPERR || (uint64_t)si->si_addr != BAD_ADDR ||
		    ip != (uint64_t)sc_load_at)
			foreign(sig, si, ip);
		__atomic_fetch_add(&handled[SEGV], 1, __ATOMIC_RELAXED);
		g[REG_RIP] += 3;
		break;
	}
}

static void install(int flags)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_trap;
	sa.sa_flags = SA_SIGINFO | flags;
	for (int k = 0; k < KINDS; k++)
		sigaction(signo[k], &sa, NULL);
}

static void *worker(void *arg)
{
	uint64_t sum = 0;

	while (!done) {
		trap_int3();
		trap_ud2();
		sum += trap_load();
	}
	return (void *)(uintptr_t)(sum == 0);
}

static void on_term(int sig)
{
	(void)sig;
	done = 1;
}

int main(int argc, char **argv)
{
	pthread_t w[2];
	int ready = 0;

	signal(SIGTERM, on_term);
	install(0);
	for (int i = 0; i < 2; i++)
		pthread_create(&w[i], NULL, worker, NULL);
	for (unsigned long turn = 0; !done; turn++) {
		struct timespec ts = { 0, 200000 };

		/* the same handler, its flags changed: a disposition written
		 * by the program while the traps go on */
		install(turn & 1 ? SA_RESTART : SA_NODEFER);
		if (!ready && argc > 1 && __atomic_load_n(&handled[TRAP], __ATOMIC_RELAXED) &&
		    __atomic_load_n(&handled[ILL], __ATOMIC_RELAXED) &&
		    __atomic_load_n(&handled[SEGV], __ATOMIC_RELAXED)) {
			FILE *f = fopen(argv[1], "w");

			if (f) {
				fputs("ready\n", f);
				fclose(f);
			}
			ready = 1;
		}
		nanosleep(&ts, NULL);
	}
	for (int i = 0; i < 2; i++)
		pthread_join(w[i], NULL);
	printf("raised %lu %lu %lu handled %lu %lu %lu\n", raised[TRAP], raised[ILL], raised[SEGV],
	       handled[TRAP], handled[ILL], handled[SEGV]);
	return memcmp(raised, handled, sizeof(raised)) ? 1 : 0;
}
