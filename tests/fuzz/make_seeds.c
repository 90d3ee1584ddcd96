/*
 * Seed corpus for fuzz_reader: small valid data files written by the real
 * writer, covering every record type, compressed and stored chunks, an
 * unknown record type and an empty recording.  Usage: make_seeds DIR
 */
#include "format/scdata.h"

#include <stdio.h>
#include <string.h>

static struct sc_writer *open_seed(const char *dir, const char *name, uint32_t features)
{
	struct sc_writer *w;
	char path[4096];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (sc_writer_open(path, features, &w)) {
		perror(path);
		return NULL;
	}
	return w;
}

static void instrument_records(struct sc_writer *w, uint32_t n)
{
	struct sc_rec_session s = { .method = SC_METHOD_INSTRUMENT, .os_requested = SC_OS_ALL, .argc = 2 };
	struct sc_rec_process p = { .proc_id = 1, .pid = 100, .parent_proc_id = UINT32_MAX };
	struct sc_rec_thread t = { .proc_id = 1, .tid = 100 };
	struct sc_rec_module m = { .proc_id = 1, .build_id_len = 20, .start = 0x400000, .end = 0x500000 };
	struct sc_rec_thread_stats ts = { .proc_id = 1, .tid = 100, .events = 2 * n };
	struct sc_rec_session_end e = { .duration_ns = 1000000, .os_observed = SC_OS_ALL };

	sc_writer_add2(w, SC_REC_SESSION, &s, sizeof(s), "./prog\0arg", 11);
	sc_writer_add2(w, SC_REC_PROCESS, &p, sizeof(p), "/tmp/prog", 10);
	sc_writer_add2(w, SC_REC_THREAD, &t, sizeof(t), "prog", 5);
	sc_writer_add2(w, SC_REC_MODULE, &m, sizeof(m), "/tmp/prog", 10);
	for (uint32_t i = 0; i < n; i++) {
		struct sc_rec_cct_node c = {
			.proc_id = 1, .tid = 100, .id = i, .parent = i ? i / 2 : UINT32_MAX,
			.func = 0x401000 + 16 * i, .calls = i + 1, .elapsed_excl = 1000 * i,
		};
		struct sc_rec_callsite cs = { .proc_id = 1, .tid = 100, .site = 0x401100 + i, .calls = i };

		sc_writer_add(w, SC_REC_CCT_NODE, &c, sizeof(c));
		sc_writer_add(w, SC_REC_CALLSITE, &cs, sizeof(cs));
	}
	sc_writer_add(w, SC_REC_THREAD_STATS, &ts, sizeof(ts));
	sc_writer_add(w, SC_REC_SESSION_END, &e, sizeof(e));
}

static void sample_records(struct sc_writer *w, uint32_t n)
{
	struct sc_rec_session s = { .method = SC_METHOD_SAMPLE, .frequency_hz = 999, .argc = 1 };
	struct sc_rec_lost l = { .kind = SC_LOST_SAMPLES, .proc_id = 1, .count = 2 };
	struct sc_rec_session_end e = { .duration_ns = 1000000, .lost_samples = 2 };

	sc_writer_add2(w, SC_REC_SESSION, &s, sizeof(s), "./prog", 7);
	for (uint32_t i = 0; i < n; i++) {
		uint64_t ips[4] = { 0x401000 + i, 0x402000, 0x403000, 0x404000 };
		struct sc_rec_stack st = { .id = i, .nframes = 1 + i % 4, .flags = SC_STACK_ROOT };
		struct sc_rec_samples sm = { .proc_id = 1, .tid = 100, .stack_id = i, .count = i + 1 };

		sc_writer_add2(w, SC_REC_STACK, &st, sizeof(st), ips, st.nframes * sizeof(ips[0]));
		sc_writer_add(w, SC_REC_SAMPLES, &sm, sizeof(sm));
		if (i % 8 == 7)
			sc_writer_flush(w);
	}
	sc_writer_add(w, SC_REC_LOST, &l, sizeof(l));
	sc_writer_add(w, SC_REC_SESSION_END, &e, sizeof(e));
}

int main(int argc, char **argv)
{
	struct sc_writer *w;
	uint8_t noise[64];

	if (argc != 2) {
		fprintf(stderr, "usage: make_seeds DIR\n");
		return 2;
	}
	if ((w = open_seed(argv[1], "instrument.data", SC_FEAT_INSTRUMENT))) {
		instrument_records(w, 12);
		sc_writer_close(w);
	}
	if ((w = open_seed(argv[1], "sample.data", SC_FEAT_SAMPLE))) {
		sample_records(w, 20);
		sc_writer_close(w);
	}
	if ((w = open_seed(argv[1], "stored.data", SC_FEAT_SAMPLE))) {
		/* incompressible: a stored chunk, with an unknown type in it */
		for (size_t i = 0; i < sizeof(noise); i++)
			noise[i] = (uint8_t)(i * 2654435761u >> 11);
		sc_writer_add(w, 77, noise, sizeof(noise));
		sample_records(w, 1);
		sc_writer_close(w);
	}
	if ((w = open_seed(argv[1], "empty.data", 0)))
		sc_writer_close(w);
	return 0;
}
