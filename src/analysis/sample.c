/*
 * Sampling rows (SPEC section 3).
 *
 * By function, module, thread and process: folds over the calling-context
 * tree (cct.h), where each sample's inline-expanded stack is a path and
 * its leaf holds the count; a key's inclusive count is the sum over its
 * outermost nodes, so a function twice on a stack counts once.
 *
 * By line, address and call site the key is finer than a path of
 * functions, so those rows come from the distinct stacks themselves (a
 * call site: a frame's function and line, the line of its call, with the
 * function of the frame below it, which that call entered): work is per distinct
 * (process image, stack), weighted by its sample count, never per sample;
 * the leaf's key gets the exclusive count and every distinct key on the
 * stack the inclusive count ("distinct" is a stamp per key, the serial of
 * the stack last counted, so a stack of n frames costs O(n)).
 */
#include "analysis/cct.h"
#include "analysis/internal.h"
#include "util/util.h"

#include <stdlib.h>
#include <string.h>

struct counts {
	uint64_t incl, excl;
	uint32_t stamp;           /* serial of the last stack counted, + 1 */
	/* what a line, address or call-site row shows */
	uint32_t func, file, line;
	uint32_t callee;
	uint64_t addr;
};

struct tally {
	struct counts *c;
	size_t n, alloc;
	struct an_map map;        /* composite key -> index (line, address, ...) */
};

static struct counts *tally_key(struct tally *t, uint64_t a, uint64_t b)
{
	bool found;
	uint32_t i = an_map_put(&t->map, a, b, (uint32_t)t->n, &found);

	if (!found) {
		ALLOC_GROW(t->c, t->n + 1, t->alloc);
		memset(&t->c[t->n++], 0, sizeof(*t->c));
	}
	return &t->c[i];
}

/* Count one key of a stack: inclusive once per stack, exclusive if leaf. */
static void count(struct counts *c, uint32_t serial, uint64_t n, bool leaf)
{
	if (c->stamp != serial + 1) {
		c->stamp = serial + 1;
		c->incl += n;
	}
	if (leaf)
		c->excl += n;
}

/* A pseudo-function for a sample whose stack is empty or missing. */
static struct an_span missing_span(struct an_profile *p, const char *what)
{
	struct an_span s = { .first = (uint32_t)p->nframes, .n = 1 };

	ALLOC_GROW(p->frames, p->nframes + 1, p->aframes);
	p->frames[p->nframes++] = (struct an_frame){
		.func = an_func_intern(p, "[unknown]", what), .file = AN_NONE,
	};
	return s;
}

static void count_stack(struct an_profile *p, enum an_group by, struct tally *t,
			uint32_t proc_id, const struct an_stack *st, uint64_t n, uint32_t serial)
{
	uint32_t nf = st ? st->nframes : 0;
	bool prev_kernel = false;
	uint32_t callee = AN_NONE;    /* the frame below (called by the next one) */
	bool callee_leaf = false;

	for (uint32_t i = 0; i < (nf ? nf : 1); i++) {
		struct an_span sp;
		uint64_t ip = nf ? p->ips[st->ip + i] : 0;
		bool kernel = ip >= AN_KERNEL_START;

		if (!st)
			sp = missing_span(p, "[missing stack]");
		else if (!nf)
			sp = missing_span(p, "[no frames]");
		else
			/* return addresses, except the user pc after kernel frames */
			sp = an_resolve(p, proc_id, ip, i > 0 && !(prev_kernel && !kernel));
		prev_kernel = kernel;
		if (by == AN_BY_ADDRESS) {
			/* module-relative: the same row in every run (docs/values.md) */
			const struct an_frame *f = &p->frames[sp.first];
			struct counts *c = tally_key(t, sp.module_offset, f->func);

			c->addr = sp.module_offset;
			c->func = f->func;
			c->file = f->file;
			c->line = f->line;
			count(c, serial, n, i == 0);
			continue;
		}
		for (uint32_t j = 0; j < sp.n; j++) {
			const struct an_frame *f = &p->frames[sp.first + j];
			bool leaf = i == 0 && j == 0;
			struct counts *c;

			if (by == AN_BY_CALLSITE) {
				/* the call from this frame's line to the frame below;
				 * exclusive when that callee is the leaf */
				if (callee != AN_NONE) {
					c = tally_key(t, (uint64_t)f->file << 32 | f->line,
						      (uint64_t)f->func << 32 | callee);
					c->func = f->func;
					c->file = f->file;
					c->line = f->line;
					c->callee = callee;
					count(c, serial, n, callee_leaf);
				}
				callee = f->func;
				callee_leaf = leaf;
				continue;
			}
			c = tally_key(t, (uint64_t)f->file << 32 | f->line, f->func);
			c->func = f->func;
			c->file = f->file;
			c->line = f->line;
			count(c, serial, n, leaf);
		}
	}
}

/* By function, module, thread, process: a fold over the tree. */
static void fold_rows(struct an_profile *p, enum an_group by, struct an_report *r)
{
	enum an_cct_split split = by == AN_BY_THREAD ? AN_CCT_BY_THREAD :
		by == AN_BY_PROCESS ? AN_CCT_BY_PROCESS : AN_CCT_MERGED;
	const struct an_cct *c = an_profile_cct(p, split, AN_APP_INTERVAL);
	const struct an_session *s = &r->session;
	const uint32_t *tops;
	size_t n = an_cct_size(c), ntops = an_cct_tops(c, &tops), alloc = 0;
	size_t nkeys = by == AN_BY_FUNCTION ? p->nfuncs : by == AN_BY_MODULE ? p->nmods : ntops;
	uint32_t *key = xmalloc((n ? n : 1) * sizeof(*key));
	struct an_fold *acc = xcalloc(nkeys ? nkeys : 1, sizeof(*acc));

	for (size_t i = 0; i < n; i++) {
		const struct an_cct_node *nd = an_cct_node(c, (uint32_t)i);

		if (nd->parent == AN_CCT_NONE)
			key[i] = AN_CCT_NONE;
		else if (by == AN_BY_FUNCTION)
			key[i] = nd->func;
		else if (by == AN_BY_MODULE)
			key[i] = p->funcs[nd->func].mod;
		else
			key[i] = nd->group;
	}
	an_cct_fold(c, key, nkeys, acc);
	for (size_t k = 0; k < nkeys; k++) {
		struct an_row *row;
		uint32_t proc_id = 0, tid = 0;

		if (!acc[k].incl)
			continue;
		row = an_report_add_row(r, &alloc);
		if (by == AN_BY_THREAD || by == AN_BY_PROCESS)
			an_cct_group(c, (uint32_t)k, &proc_id, &tid);
		switch (by) {
		case AN_BY_FUNCTION:
			an_row_set_s(row, AN_COL_FUNCTION, an_str(&p->strs, p->funcs[k].name));
			an_row_set_s(row, AN_COL_MODULE, an_str(&p->strs, p->funcs[k].module));
			break;
		case AN_BY_MODULE:
			an_row_set_s(row, AN_COL_MODULE, an_str(&p->strs, p->mods[k]));
			break;
		case AN_BY_THREAD:
			an_row_set_u(row, AN_COL_TID, tid);
			an_row_set_u(row, AN_COL_PID, an_proc_pid(p, proc_id));
			an_row_set_s(row, AN_COL_THREAD_NAME, an_thread_name(p, proc_id, tid));
			break;
		default:
			an_row_set_u(row, AN_COL_PID, an_proc_pid(p, proc_id));
			an_row_set_s(row, AN_COL_EXECUTABLE, an_proc_exe(p, proc_id));
			break;
		}
		an_row_set_u(row, AN_COL_INCL_SAMPLES, acc[k].incl);
		an_row_set_u(row, AN_COL_EXCL_SAMPLES, acc[k].excl);
		an_row_set_d(row, AN_COL_INCL_PCT, an_pct(acc[k].incl, s->samples));
		an_row_set_d(row, AN_COL_EXCL_PCT, an_pct(acc[k].excl, s->samples));
	}
	free(key);
	free(acc);
}

int an_build_sample(struct an_profile *p, const struct an_report_options *o,
		    struct an_report *r, char *err, size_t errlen)
{
	struct an_session *s = &r->session;
	struct an_map groups = { 0 };       /* (proc_id, stack) -> dense */
	struct {
		uint32_t proc_id, stack_id;
		uint64_t count;
	} *g = NULL;
	size_t ng = 0, ag = 0, alloc = 0;
	struct tally t = { 0 };

	(void)err;
	(void)errlen;
	for (size_t i = 0; i < p->nsamples; i++) {
		const struct an_sample *sm = &p->samples[i];
		uint32_t si = an_map_get(&p->stack_map, sm->stack_id, 0);

		s->samples += sm->count;
		if (si != AN_NONE) {
			const struct an_stack *st = &p->stacks[si];

			if (st->flags & SC_STACK_ROOT)
				s->root_reached += sm->count;
			if (st->flags & SC_STACK_TRUNCATED)
				s->truncated += sm->count;
			if (st->nframes) {
				/* the innermost frame at the sampled pc */
				struct an_span sp = an_resolve(p, sm->proc_id,
							       p->ips[st->ip], false);
				const struct an_func *fn = &p->funcs[p->frames[sp.first].func];

				if (fn->unnamed)
					an_unnamed_add(p, r, fn->mod, sm->count);
			}
		}
	}
	s->root_reached_pct = an_pct(s->root_reached, s->samples);
	s->truncated_pct = an_pct(s->truncated, s->samples);
	if (o->by != AN_BY_LINE && o->by != AN_BY_ADDRESS && o->by != AN_BY_CALLSITE) {
		fold_rows(p, o->by, r);
		return 0;
	}

	/* line and address: the per-thread counts merged per process image */
	for (size_t i = 0; i < p->nsamples; i++) {
		const struct an_sample *sm = &p->samples[i];
		bool found;
		uint32_t k = an_map_put(&groups, sm->proc_id, sm->stack_id, (uint32_t)ng, &found);

		if (!found) {
			ALLOC_GROW(g, ng + 1, ag);
			g[ng].proc_id = sm->proc_id;
			g[ng].stack_id = sm->stack_id;
			g[ng].count = 0;
			ng++;
		}
		g[k].count += sm->count;
	}
	for (size_t k = 0; k < ng; k++) {
		uint32_t si = an_map_get(&p->stack_map, g[k].stack_id, 0);

		count_stack(p, o->by, &t, g[k].proc_id, si == AN_NONE ? NULL : &p->stacks[si],
			    g[k].count, (uint32_t)k);
	}

	for (size_t i = 0; i < t.n; i++) {
		const struct counts *c = &t.c[i];
		struct an_row *row;

		if (!c->incl)
			continue;
		row = an_report_add_row(r, &alloc);
		if (o->by == AN_BY_ADDRESS)
			an_row_set_u(row, AN_COL_ADDRESS, c->addr);
		if (o->by == AN_BY_CALLSITE) {
			an_row_set_s(row, AN_COL_CALLEE, an_str(&p->strs, p->funcs[c->callee].name));
			an_row_set_s(row, AN_COL_CALLEE_MODULE,
				     an_str(&p->strs, p->funcs[c->callee].module));
		}
		an_row_set_s(row, AN_COL_FUNCTION, an_str(&p->strs, p->funcs[c->func].name));
		an_row_set_s(row, AN_COL_MODULE, an_str(&p->strs, p->funcs[c->func].module));
		an_row_set_s(row, AN_COL_FILE, an_str(&p->strs, c->file));
		if (c->file != AN_NONE)
			an_row_set_u(row, AN_COL_LINE, c->line);
		an_row_set_u(row, AN_COL_INCL_SAMPLES, c->incl);
		an_row_set_u(row, AN_COL_EXCL_SAMPLES, c->excl);
		an_row_set_d(row, AN_COL_INCL_PCT, an_pct(c->incl, s->samples));
		an_row_set_d(row, AN_COL_EXCL_PCT, an_pct(c->excl, s->samples));
	}
	free(g);
	free(t.c);
	an_map_release(&t.map);
	an_map_release(&groups);
	return 0;
}
