/*
 * 3,000 coroutines (issue 30): each made by makecontext on a 64 KiB stack of
 * its own, running body(), which never returns: it calls step() for ever,
 * and each step does one work() and switches back (swapcontext) to whoever
 * resumed it.  Six rounds resume every coroutine once each: rounds 1-2 and
 * 5-6 from main, rounds 3-4 the even ones from main and the odd ones from
 * a second thread at the same time.  At the end every coroutine is
 * suspended inside step(): body and step open in each.
 *
 * Calls: body 3000 (none returns), step 18000 (15000 return), work
 * 18000, resume 18000, run_round 8 (6 from main, 2 from the thread),
 * thread_main 1.  Prints "body B step S work W resume R".
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <ucontext.h>

#define N 3000
#define STACK (64 << 10)

struct co {
	ucontext_t uc;
	ucontext_t *back;              /* the context that resumed it */
	int id;
};

static struct co co[N];
static __thread ucontext_t sched;      /* each thread's own context */
static unsigned long n_body, n_step, n_work, n_resume, total;

#define COUNT(x) __atomic_fetch_add(&(x), 1, __ATOMIC_RELAXED)

__attribute__((noinline)) long work(long x)
{
	COUNT(n_work);
	return x * 7 + 1;
}

__attribute__((noinline)) void step(struct co *c, int r)
{
	COUNT(n_step);
	__atomic_fetch_add(&total, (unsigned long)work(c->id + r), __ATOMIC_RELAXED);
	swapcontext(&c->uc, c->back);
}

__attribute__((noinline)) void body(int id)
{
	COUNT(n_body);
	for (int r = 0;; r++)
		step(&co[id], r);
}

__attribute__((noinline)) void resume(struct co *c)
{
	COUNT(n_resume);
	c->back = &sched;
	swapcontext(&sched, &c->uc);
}

__attribute__((noinline)) void run_round(int first, int stride)
{
	for (int i = first; i < N; i += stride)
		resume(&co[i]);
}

__attribute__((noinline)) void *thread_main(void *arg)
{
	(void)arg;
	run_round(1, 2);
	run_round(1, 2);
	return NULL;
}

int main(void)
{
	char *stacks = mmap(NULL, (size_t)N * STACK, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	pthread_t th;

	if (stacks == MAP_FAILED)
		return 1;
	for (int i = 0; i < N; i++) {
		co[i].id = i;
		getcontext(&co[i].uc);
		co[i].uc.uc_stack.ss_sp = stacks + (size_t)i * STACK;
		co[i].uc.uc_stack.ss_size = STACK;
		co[i].uc.uc_link = NULL;
		makecontext(&co[i].uc, (void (*)(void))body, 1, i);
	}
	run_round(0, 1);
	run_round(0, 1);
	if (pthread_create(&th, NULL, thread_main, NULL))
		return 1;
	run_round(0, 2);
	run_round(0, 2);
	pthread_join(th, NULL);
	run_round(0, 1);
	run_round(0, 1);
	printf("body %lu step %lu work %lu resume %lu\n", n_body, n_step, n_work, n_resume);
	return total == 42;
}
