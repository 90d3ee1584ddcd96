/*
 * gen_contexts — write a synthetic instrumentation recording with N
 * distinct calling contexts, for bench/views.sh (a benchmark input, not a
 * test).
 *
 *   gen_contexts OUT.data N SEED MODULE < offsets
 *
 * offsets: function start offsets in MODULE (hex, one a line, e.g. from
 * nm), so that every node names a real function.  The tree is a random
 * recursive tree (each node's parent drawn uniformly from the nodes
 * before it: depth about e*ln N at most, ~14 on average), siblings never
 * share a function, so it has exactly N distinct paths below the root.
 * Values are random; SEED changes them and the shape (for diff).
 */
#include "format/scdata.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BASE 0x555555554000ULL

static uint64_t rng;

static uint32_t rnd(uint32_t n)
{
	rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
	return (uint32_t)(rng >> 33) % n;
}

int main(int argc, char **argv)
{
	static uint64_t offs[1 << 20];
	uint32_t nf = 0, n, *fn, *kids;
	struct sc_writer *w;
	char line[256];
	struct sc_rec_session sess = { .method = SC_METHOD_INSTRUMENT, .argc = 1 };
	struct sc_rec_session_end end = { .duration_ns = 1000000000 };
	struct sc_rec_process pr = { .proc_id = 1, .pid = 4242, .parent_proc_id = UINT32_MAX };
	struct sc_rec_module mod = { .proc_id = 1, .start = BASE, .end = BASE + (1ULL << 32) };
	struct sc_rec_cct_node root = { .proc_id = 1, .tid = 4242, .id = 0, .parent = UINT32_MAX };

	if (argc != 5) {
		fprintf(stderr, "usage: gen_contexts OUT.data N SEED MODULE < offsets\n");
		return 2;
	}
	n = (uint32_t)atol(argv[2]);
	rng = (uint64_t)atol(argv[3]) * 0x9e3779b97f4a7c15ULL + 1;
	while (nf < (1u << 20) && fgets(line, sizeof(line), stdin))
		if ((offs[nf] = strtoull(line, NULL, 16)))
			nf++;
	if (nf < 2 || sc_writer_open(argv[1], SC_FEAT_INSTRUMENT, &w)) {
		fprintf(stderr, "gen_contexts: no offsets on stdin, or cannot write %s\n", argv[1]);
		return 1;
	}
	fn = calloc((size_t)n + 1, sizeof(*fn));
	kids = calloc((size_t)n + 1, sizeof(*kids));
	sc_writer_add2(w, SC_REC_SESSION, &sess, sizeof(sess), "synthetic", 10);
	sc_writer_add2(w, SC_REC_PROCESS, &pr, sizeof(pr), argv[4], strlen(argv[4]) + 1);
	sc_writer_add2(w, SC_REC_MODULE, &mod, sizeof(mod), argv[4], strlen(argv[4]) + 1);
	sc_writer_add(w, SC_REC_CCT_NODE, &root, sizeof(root));
	for (uint32_t i = 1; i <= n; i++) {
		uint32_t parent = rnd(i);
		struct sc_rec_cct_node nd = { .proc_id = 1, .tid = 4242, .id = i, .parent = parent };
		uint64_t ee = 1 + rnd(100000);

		/* the k-th child of a node: a function none of its siblings has */
		fn[i] = (fn[parent] * 31 + 17 * kids[parent]++ + 1) % nf;
		nd.func = BASE + offs[fn[i]];
		nd.calls = nd.completed = 1 + rnd(10);
		nd.elapsed_excl = ee;
		nd.app_excl = nd.app_excl_exact = ee - rnd((uint32_t)ee);
		nd.incl_min = nd.incl_max = nd.excl_min = nd.excl_max = ee;
		nd.incl_sum = nd.excl_sum = ee * nd.completed;
		sc_writer_add(w, SC_REC_CCT_NODE, &nd, sizeof(nd));
	}
	sc_writer_add(w, SC_REC_SESSION_END, &end, sizeof(end));
	free(fn);
	free(kids);
	return sc_writer_close(w) ? 1 : 0;
}
