/*
 * One function both inlined and called out of line from the same caller
 * (t317): host calls step through a function pointer (its out-of-line
 * copy) and then directly (inlined, with leaf inlined into that copy), as
 * g++ -O2 does with std::__relocate_a in vector growth.  Both activations
 * are the same calling-context node (host > step) with different frames:
 * the out-of-line one's offset from the probe to its CFA put the inlined
 * one too low, and leaf's entry then closed it (a repair, and another at
 * step's own exit).  Exact counts: host N, step, leaf and other 2N.
 *
 *	e2e_inl_mixed [N]
 */
#include <stdlib.h>

static volatile int sink;

static inline __attribute__((always_inline)) void leaf(int x)
{
	sink = x;
}

static inline __attribute__((always_inline)) void other(int x)
{
	sink = -x;
}

/* two children: the one entered last is the node's first child, and an
 * entry of the other looks its node up the slow way (where the position
 * is computed from the stack) until the thread has a child cache */
static inline __attribute__((always_inline)) void step(int x)
{
	leaf(x);
	other(x);
}

static void (*volatile step_call)(int) = step;

__attribute__((noinline)) void host(int x)
{
	char pad[48];             /* a frame of its own size */

	pad[x & 31] = (char)x;
	sink = pad[(x + 1) & 31];
	step_call(x);
	step(x);
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 1000;

	for (int i = 0; i < n; i++)
		host(i);
	return 0;
}
