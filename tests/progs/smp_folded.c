/*
 * smp_folded — a test helper, not a profiled program: prints the sampled
 * stacks of a data file, one line per (process image, thread, stack):
 *
 *   FLAGS PID TID COUNT root;caller;...;leaf
 *
 * FLAGS is "root", "trunc" or "partial" (the unwinding stopped early),
 * with "+kernel" when the stack starts with kernel frames (--kernel);
 * frames are function names, root first, from the recorded addresses
 * through symbols.h (inlined frames included).  The end-to-end scripts of
 * the sampler (tests/e2e/t1xx_sample_*.sh) build it against libcore.a and
 * check call chains with grep/awk.  Usage: smp_folded FILE
 */
#include "format/scdata.h"
#include "symbols/symbols.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct stack {
	uint16_t nframes, flags;
	uint64_t *ips;
};

int main(int argc, char **argv)
{
	struct sym_session *sym = sym_session_new();
	struct sc_reader *r;
	struct sc_record rec;
	struct stack *stacks = NULL;
	uint32_t nstacks = 0;
	uint32_t pids[4096] = { 0 };
	char err[256];
	struct {
		struct sc_rec_samples s;
	} *samples = NULL;
	size_t nsamples = 0;

	if (argc != 2 || sc_reader_open(argv[1], &r, err, sizeof(err)) < 0) {
		fprintf(stderr, "usage: smp_folded FILE (%s)\n", argc == 2 ? err : "");
		return 2;
	}
	while (sc_reader_next(r, &rec) == SC_READ_OK) {
		if (sc_record_check(&rec) < 0)
			continue;
		if (rec.type == SC_REC_MODULE) {
			const struct sc_rec_module *m = rec.data;
			sym_add_module(sym, m, (const char *)(m + 1));
		} else if (rec.type == SC_REC_PROCESS) {
			const struct sc_rec_process *p = rec.data;
			if (p->proc_id < 4096)
				pids[p->proc_id] = p->pid;
		} else if (rec.type == SC_REC_STACK) {
			const struct sc_rec_stack *s = rec.data;
			if (s->id >= nstacks) {
				stacks = realloc(stacks, (s->id + 1) * sizeof(*stacks));
				memset(stacks + nstacks, 0, (s->id + 1 - nstacks) * sizeof(*stacks));
				nstacks = s->id + 1;
			}
			stacks[s->id].nframes = s->nframes;
			stacks[s->id].flags = s->flags;
			stacks[s->id].ips = malloc(s->nframes * sizeof(uint64_t) + 1);
			memcpy(stacks[s->id].ips, s + 1, s->nframes * sizeof(uint64_t));
		} else if (rec.type == SC_REC_SAMPLES) {
			samples = realloc(samples, (nsamples + 1) * sizeof(*samples));
			memcpy(&samples[nsamples++].s, rec.data, sizeof(struct sc_rec_samples));
		}
	}
	for (size_t i = 0; i < nsamples; i++) {
		const struct sc_rec_samples *s = &samples[i].s;
		const struct stack *st = s->stack_id < nstacks ? &stacks[s->stack_id] : NULL;

		if (!st || !st->ips)
			continue;
		printf("%s%s %u %u %llu ", st->flags & SC_STACK_ROOT ? "root" :
		       st->flags & SC_STACK_TRUNCATED ? "trunc" : "partial",
		       st->flags & SC_STACK_KERNEL ? "+kernel" : "",
		       s->proc_id < 4096 ? pids[s->proc_id] : 0, s->tid,
		       (unsigned long long)s->count);
		for (int f = st->nframes - 1; f >= 0; f--) {
			struct sym_frame fr[16];
			int n = sym_resolve(sym, s->proc_id, st->ips[f], f > 0, fr, 16);

			/* Outermost first: the holder of inlined frames first. */
			for (int k = n - 1; k >= 0; k--)
				printf("%s%s", fr[k].function, f == 0 && k == 0 ? "" : ";");
		}
		putchar('\n');
	}
	sc_reader_close(r);
	sym_session_free(sym);
	for (uint32_t i = 0; i < nstacks; i++)
		free(stacks[i].ips);
	free(stacks);
	free(samples);
	return 0;
}
