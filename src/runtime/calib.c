/*
 * calib — the probes' cost, measured through the real hooks; see calib.h.
 */
#include "runtime/calib.h"

void __cyg_profile_func_enter(void *fn, void *site);
void __cyg_profile_func_exit(void *fn, void *site);

/*
 * What -finstrument-functions makes of a function: the hooks around its
 * body, given the function and its return address.  The empty asm keeps
 * the compiler from turning the exit hook's call into a jump.
 */
#define CALIB_ENTER(f) __cyg_profile_func_enter((void *)(f), __builtin_return_address(0))
#define CALIB_EXIT(f)  do { __cyg_profile_func_exit((void *)(f), __builtin_return_address(0)); \
			    __asm__ volatile("" ::: "memory"); } while (0)

static __attribute__((noinline)) void calib_leaf(void)
{
	CALIB_ENTER(calib_leaf);
	CALIB_EXIT(calib_leaf);
}

static __attribute__((noinline)) void calib_one(void)
{
	CALIB_ENTER(calib_one);
	calib_leaf();
	CALIB_EXIT(calib_one);
}

static __attribute__((noinline)) void calib_two(void)
{
	CALIB_ENTER(calib_two);
	calib_leaf();
	calib_leaf();
	CALIB_EXIT(calib_two);
}

static struct sc_eng_node *child_of(struct sc_eng_thread *t, struct sc_eng_node *p, uint64_t func)
{
	uint32_t idx;

	for (idx = p->first_child; idx; idx = sc_eng_node_at(t, idx)->next_sibling)
		if (sc_eng_node_at(t, idx)->func == func)
			return sc_eng_node_at(t, idx);
	return 0;
}

static uint64_t median(uint64_t *v, unsigned n)
{
	unsigned i, j;

	for (i = 1; i < n; i++)                /* insertion sort: n is small */
		for (j = i; j > 0 && v[j - 1] > v[j]; j--) {
			uint64_t x = v[j];

			v[j] = v[j - 1];
			v[j - 1] = x;
		}
	return v[n / 2];
}

int rt_calib_measure(struct sc_eng_thread *t, struct rt_calib *out)
{
	uint64_t ex[RT_CALIB_BATCHES], one[RT_CALIB_BATCHES], two[RT_CALIB_BATCHES];
	struct sc_eng_node *root = t->stack[0].node, *n[3] = { 0 };
	uint64_t before[3] = { 0 };
	unsigned b, i, k;

	/* a first round creates the nodes and learns their positions */
	calib_leaf();
	calib_one();
	calib_two();
	n[0] = child_of(t, root, (uint64_t)calib_leaf);
	n[1] = child_of(t, root, (uint64_t)calib_one);
	n[2] = child_of(t, root, (uint64_t)calib_two);
	if (!n[0] || !n[1] || !n[2])
		return -1;
	for (b = 0; b < RT_CALIB_BATCHES; b++) {
		for (k = 0; k < 3; k++)
			before[k] = n[k]->excl_sum;
		for (i = 0; i < RT_CALIB_PER; i++)
			calib_leaf();
		for (i = 0; i < RT_CALIB_PER; i++)
			calib_one();
		for (i = 0; i < RT_CALIB_PER; i++)
			calib_two();
		/* each interval had 1 tick taken out (calib.h): put it back */
		ex[b] = (n[0]->excl_sum - before[0]) / RT_CALIB_PER + 1;
		one[b] = (n[1]->excl_sum - before[1]) / RT_CALIB_PER + 2;
		two[b] = (n[2]->excl_sum - before[2]) / RT_CALIB_PER + 3;
	}
	out->cost[0][1] = median(ex, RT_CALIB_BATCHES);
	k = (unsigned)median(one, RT_CALIB_BATCHES);
	out->cost[0][0] = k / 2;
	out->cost[1][1] = k - k / 2;
	i = (unsigned)median(two, RT_CALIB_BATCHES);
	out->cost[1][0] = i > k ? i - k : 0;
	out->batches = RT_CALIB_BATCHES;
	return 0;
}
