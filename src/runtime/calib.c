/*
 * calib — the probes' cost, read from the tree the calibration program
 * left; see calib.h.
 */
#include "runtime/calib.h"

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

/*
 * The mean exclusive ticks per call of node n, with `intervals` ticks put
 * back, leaving out its longest call: the first, whose probes made the
 * node and learned its position.
 */
static uint64_t per_call(const struct sc_eng_node *n, unsigned intervals)
{
	return n->calls > 1 ? (n->excl_sum - n->excl_max) / (n->calls - 1) + intervals : 0;
}

int rt_calib_from_tree(struct sc_eng_thread *t, const unsigned long long *plain, struct rt_calib *out)
{
	uint64_t ex[RT_CALIB_BATCHES], one[RT_CALIB_BATCHES], two[RT_CALIB_BATCHES], exw[RT_CALIB_BATCHES], k, m;
	const struct sc_eng_node *root = sc_eng_node_at(t, t->root_off >> SC_ENG_NODE_SHIFT);
	uint64_t pl[RT_CALIB_BATCHES], work;
	unsigned nb = 0;
	uint32_t b;

	/* the work without probes, per call */
	for (unsigned i = 0; i < RT_CALIB_BATCHES; i++)
		pl[i] = plain[i];
	work = median(pl, RT_CALIB_BATCHES);
	/* patched (calib/prog.c): the batches are main's, the root child with
	 * the most children */
	{
		uint32_t best = 0, most = 0;

		for (b = root->first_child; b; b = sc_eng_node_at(t, b)->next_sibling) {
			uint32_t kids = 0;

			for (uint32_t i = sc_eng_node_at(t, b)->first_child; i; i = sc_eng_node_at(t, i)->next_sibling)
				kids++;
			if (kids > most) {
				most = kids;
				best = b;
			}
		}
		if (most >= RT_CALIB_BATCHES)
			root = sc_eng_node_at(t, best);
	}
	/* children are listed most recently used first: any order will do */
	for (b = root->first_child; b && nb < RT_CALIB_BATCHES; b = sc_eng_node_at(t, b)->next_sibling) {
		const struct sc_eng_node *c[4] = { 0 };
		uint64_t w;
		uint32_t i;

		/* a batch's children by creation: leaf, one, two, work */
		for (i = sc_eng_node_at(t, b)->first_child; i; i = sc_eng_node_at(t, i)->next_sibling) {
			const struct sc_eng_node *n = sc_eng_node_at(t, i);
			unsigned slot = 0;

			for (unsigned j = 0; j < 4; j++)
				if (c[j] && c[j]->id < n->id)
					slot++;
			if (slot < 4) {
				for (unsigned j = 3; j > slot; j--)
					c[j] = c[j - 1];
				c[slot] = n;
			}
		}
		for (i = 0; i < 4; i++)
			if (!c[i] || c[i]->calls != RT_CALIB_PER)
				return -1;
		/* one tick was taken out of each interval (calib.h): put back */
		ex[nb] = per_call(c[0], 1);
		one[nb] = per_call(c[1], 2);
		two[nb] = per_call(c[2], 3);
		w = per_call(c[3], 1);
		exw[nb] = w > work ? w - work : 0;
		nb++;
	}
	if (nb != RT_CALIB_BATCHES)
		return -1;
	out->cost[0][1] = median(ex, nb);
	k = median(one, nb);
	out->cost[0][0] = k / 2;
	out->cost[1][1] = k - k / 2;
	m = median(two, nb);
	out->cost[1][0] = m > k ? m - k : 0;
	out->ex_work = median(exw, nb);
	if (out->ex_work > out->cost[0][1])
		out->ex_work = out->cost[0][1];
	out->batches = nb;
	return 0;
}
