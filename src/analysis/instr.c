/*
 * Instrumentation rows (SPEC section 2) as folds over the calling-context
 * tree (cct.h).
 *
 * Every interval of a thread was charged by the recorder's engine to the
 * CCT node of the stack as it stood: the node's stored exclusive values.
 * For any grouping key (function, module, thread, process) a key is on the
 * stack of an interval iff the interval's node lies in the subtree of an
 * outermost node of that key (a node with no ancestor of the same key), and
 * those subtrees are disjoint.  So
 *     inclusive(key) = sum over outermost nodes n of key of subtree(n),
 *     exclusive(key) = sum over nodes n of key of own(n),
 * which is an_cct_fold(): O(nodes), charged once for recursion by
 * construction.  Call sites and lines are finer than a path of functions:
 * their rows come from the recorder's call-site records (lines also from
 * the functions' own time, put on their first lines).
 */
#include "analysis/cct.h"
#include "analysis/internal.h"
#include "util/util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct acc {
	uint64_t calls, completed;
	uint64_t repairs, open_frames;   /* thread and process groupings */
	uint64_t ei, ee, ai, ae;
	uint64_t min_i, max_i, sum_i, min_e, max_e, sum_e;
	uint64_t smp_i, smp_e;           /* sampled shares' counts (SPEC section 14) */
	bool used;
};

static void acc_from_fold(struct acc *a, const struct an_fold *f)
{
	a->used = f->used;
	a->calls = f->calls;
	a->completed = f->completed;
	a->ei = f->incl;
	a->ee = f->excl;
	a->ai = f->app_incl;
	a->ae = f->app_excl;
	a->min_i = f->incl_min;
	a->max_i = f->incl_max;
	a->sum_i = f->incl_sum;
	a->min_e = f->excl_min;
	a->max_e = f->excl_max;
	a->sum_e = f->excl_sum;
	a->smp_i = f->smp_incl;
	a->smp_e = f->smp_excl;
}

static void set_values(struct an_row *row, const struct acc *a, const struct an_session *s,
		       bool per_call)
{
	an_row_set_u(row, AN_COL_CALLS, a->calls);
	an_row_set_u(row, AN_COL_EI, a->ei);
	an_row_set_u(row, AN_COL_EE, a->ee);
	an_row_set_u(row, AN_COL_AI, a->ai);
	an_row_set_u(row, AN_COL_AE, a->ae);
	an_row_set_d(row, AN_COL_EI_PCT, an_pct(a->ei, s->elapsed_inclusive_ns));
	an_row_set_d(row, AN_COL_EE_PCT, an_pct(a->ee, s->elapsed_inclusive_ns));
	an_row_set_d(row, AN_COL_AI_PCT, an_pct(a->ai, s->application_inclusive_ns));
	an_row_set_d(row, AN_COL_AE_PCT, an_pct(a->ae, s->application_inclusive_ns));
	if (s->have_shares) {
		/* of the whole session's own samples, whatever the grouping */
		an_row_set_d(row, AN_COL_SMP_INCL_PCT, an_pct(a->smp_i, s->samples));
		an_row_set_d(row, AN_COL_SMP_EXCL_PCT, an_pct(a->smp_e, s->samples));
	}
	an_row_set_resolution(row, s);
	if (!per_call)
		return;
	/*
	 * Per call: over the calls that returned (repaired ones included).
	 * When none did (frames open at the end), SPEC's integer fields are 0
	 * and "completed" says there was nothing to measure.
	 */
	an_row_set_u(row, AN_COL_COMPLETED, a->completed);
	if (s->raw_times) {
		/* no raw minimum or maximum: absent, and the mean unbounded */
		an_row_set_u(row, AN_COL_MEAN_EI, an_mean(a->sum_i, a->completed, 0, UINT64_MAX));
		an_row_set_u(row, AN_COL_MEAN_EE, an_mean(a->sum_e, a->completed, 0, UINT64_MAX));
		return;
	}
	an_row_set_u(row, AN_COL_MEAN_EI, an_mean(a->sum_i, a->completed, a->min_i, a->max_i));
	an_row_set_u(row, AN_COL_MEAN_EE, an_mean(a->sum_e, a->completed, a->min_e, a->max_e));
	an_row_set_u(row, AN_COL_MIN_EI, a->completed ? a->min_i : 0);
	an_row_set_u(row, AN_COL_MAX_EI, a->completed ? a->max_i : 0);
	an_row_set_u(row, AN_COL_MIN_EE, a->completed ? a->min_e : 0);
	an_row_set_u(row, AN_COL_MAX_EE, a->completed ? a->max_e : 0);
}

/*
 * Rows keyed by call site (caller, its file and line, callee) or by line
 * (file, line, the function holding it), from the recorder's call-site
 * records: the call site is the return address the probe receives,
 * resolved to the call instruction before it.  A key's values are the
 * sums over its records (calls, inclusive and callee-exclusive times).
 */
struct site_key {
	uint32_t caller, callee, file, line;
};

static size_t site_rows(struct an_profile *p, bool by_line, struct acc **acc_out,
			struct site_key **key_out, struct an_map *keys)
{
	struct acc *acc = NULL;
	struct site_key *info = NULL;
	size_t n = 0, a_acc = 0, a_info = 0;

	for (size_t i = 0; i < p->nsites; i++) {
		const struct sc_rec_callsite *cs = &p->sites[i];
		struct an_span ss = an_resolve(p, cs->proc_id, cs->site, true);
		uint32_t callee = by_line ? AN_NONE : an_resolve_entry(p, cs->proc_id, cs->callee);
		/* after both resolutions: resolving may move p->frames */
		const struct an_frame *site = &p->frames[ss.first];
		bool found;
		uint32_t k = an_map_put(keys, (uint64_t)site->func << 32 | callee,
					(uint64_t)site->file << 32 | site->line, (uint32_t)n, &found);

		if (!found) {
			ALLOC_GROW(acc, n + 1, a_acc);
			ALLOC_GROW(info, n + 1, a_info);
			memset(&acc[n], 0, sizeof(acc[n]));
			info[n] = (struct site_key){ site->func, callee, site->file, site->line };
			n++;
		}
		acc[k].calls += cs->calls;
		acc[k].ei += cs->elapsed_incl;
		acc[k].ai += cs->app_incl;
		if (!by_line) {
			acc[k].ee += cs->elapsed_excl;
			acc[k].ae += cs->app_excl;
		}
	}
	*acc_out = acc;
	*key_out = info;
	return n;
}

static void callsite_rows(struct an_profile *p, struct an_report *r, size_t *alloc)
{
	struct an_map keys = { 0 };
	struct acc *acc;
	struct site_key *info;
	size_t n = site_rows(p, false, &acc, &info, &keys);

	for (size_t k = 0; k < n; k++) {
		struct an_row *row = an_report_add_row(r, alloc);
		const struct an_func *caller = &p->funcs[info[k].caller];
		const struct an_func *callee = &p->funcs[info[k].callee];

		an_row_set_s(row, AN_COL_FUNCTION, an_str(&p->strs, caller->name));
		an_row_set_s(row, AN_COL_MODULE, an_str(&p->strs, caller->module));
		an_row_set_s(row, AN_COL_FILE, an_str(&p->strs, info[k].file));
		if (info[k].file != AN_NONE)     /* no line information: null, not 0 */
			an_row_set_u(row, AN_COL_LINE, info[k].line);
		an_row_set_s(row, AN_COL_CALLEE, an_str(&p->strs, callee->name));
		an_row_set_s(row, AN_COL_CALLEE_MODULE, an_str(&p->strs, callee->module));
		set_values(row, &acc[k], &r->session, false);
		/* samples do not say from which call site their node was called */
		row->v[AN_COL_SMP_INCL_PCT].present = false;
		row->v[AN_COL_SMP_EXCL_PCT].present = false;
	}
	free(acc);
	free(info);
	an_map_release(&keys);
}

/*
 * By line (docs/values.md): instrumentation sees calls, not the lines
 * between them.  A line that makes calls gets their inclusive time (EI,
 * AI) and their number; a function's own time (EE, AE) is put on its first
 * line, the line of its entry, which so also gets EI = EE and AI = AE for
 * it.  The exclusive values so add up to the session totals, as sampling's
 * do, and the exclusive time of a line is never guessed.
 */
static void line_rows(struct an_profile *p, const struct an_cct *c, struct an_report *r,
		      size_t *alloc)
{
	struct an_map keys = { 0 };
	struct acc *acc;
	struct site_key *info;
	size_t n = site_rows(p, true, &acc, &info, &keys), a_acc = n, a_info = n, nnodes = an_cct_size(c);
	size_t nfuncs = p->nfuncs;
	uint32_t *key = xmalloc((nnodes ? nnodes : 1) * sizeof(*key));
	struct an_fold *fold = xcalloc(nfuncs ? nfuncs : 1, sizeof(*fold));

	for (size_t i = 0; i < nnodes; i++)
		key[i] = an_cct_node(c, (uint32_t)i)->func;
	an_cct_fold(c, key, nfuncs, fold);
	for (uint32_t fn = 0; fn < nfuncs; fn++) {
		const struct an_func *f = &p->funcs[fn];
		uint32_t line = f->file == AN_NONE ? 0 : f->line;
		bool found;
		uint32_t k;

		if (!fold[fn].excl && !fold[fn].app_excl &&
		    !(r->session.have_shares && fold[fn].smp_excl))
			continue;
		k = an_map_put(&keys, (uint64_t)fn << 32 | AN_NONE, (uint64_t)f->file << 32 | line,
			       (uint32_t)n, &found);
		if (!found) {
			ALLOC_GROW(acc, n + 1, a_acc);
			ALLOC_GROW(info, n + 1, a_info);
			memset(&acc[n], 0, sizeof(acc[n]));
			info[n] = (struct site_key){ fn, AN_NONE, f->file, line };
			n++;
		}
		acc[k].ee += fold[fn].excl;
		acc[k].ae += fold[fn].app_excl;
		acc[k].ei += fold[fn].excl;
		acc[k].ai += fold[fn].app_excl;
		acc[k].smp_e += fold[fn].smp_excl;
	}
	for (size_t k = 0; k < n; k++) {
		struct an_row *row = an_report_add_row(r, alloc);
		const struct an_func *f = &p->funcs[info[k].caller];

		an_row_set_s(row, AN_COL_FILE, an_str(&p->strs, info[k].file));
		if (info[k].file != AN_NONE)
			an_row_set_u(row, AN_COL_LINE, info[k].line);
		an_row_set_s(row, AN_COL_FUNCTION, an_str(&p->strs, f->name));
		an_row_set_s(row, AN_COL_MODULE, an_str(&p->strs, f->module));
		set_values(row, &acc[k], &r->session, false);
		/* only the function's own samples are a line's: no inclusive share */
		row->v[AN_COL_SMP_INCL_PCT].present = false;
	}
	free(key);
	free(fold);
	free(acc);
	free(info);
	an_map_release(&keys);
}

int an_build_instrument(struct an_profile *p, const struct an_report_options *o,
			struct an_report *r, char *err, size_t errlen)
{
	enum an_cct_split split = o->by == AN_BY_THREAD ? AN_CCT_BY_THREAD :
		o->by == AN_BY_PROCESS ? AN_CCT_BY_PROCESS : AN_CCT_MERGED;
	const struct an_cct *c = an_profile_cct(p, split, o->app_time);
	size_t n = an_cct_size(c), nkeys = 0, alloc = 0;
	uint32_t *key = xmalloc((n ? n : 1) * sizeof(*key));
	struct an_fold *fold;
	struct acc *acc;
	struct an_session *s = &r->session;
	const uint32_t *tops;
	size_t ntops = an_cct_tops(c, &tops);

	(void)err;
	(void)errlen;
	s->elapsed_inclusive_ns = an_cct_total(c);
	s->application_inclusive_ns = an_cct_app_total(c);
	/* code without symbols: the exclusive time of functions named by offset */
	for (size_t i = 0; i < n; i++) {
		const struct an_cct_node *nd = an_cct_node(c, (uint32_t)i);

		if (nd->parent != AN_CCT_NONE && p->funcs[nd->func].unnamed)
			an_unnamed_add(p, r, p->funcs[nd->func].mod, nd->excl);
	}
	if (o->by == AN_BY_CALLSITE || o->by == AN_BY_LINE) {
		if (o->by == AN_BY_LINE)
			line_rows(p, c, r, &alloc);
		else
			callsite_rows(p, r, &alloc);
		free(key);
		return 0;
	}
	if (o->by == AN_BY_FUNCTION)
		nkeys = p->nfuncs;
	else if (o->by == AN_BY_MODULE)
		nkeys = p->nmods;
	else
		nkeys = ntops;
	for (size_t i = 0; i < n; i++) {
		const struct an_cct_node *nd = an_cct_node(c, (uint32_t)i);

		if (nd->parent == AN_CCT_NONE)
			key[i] = AN_CCT_NONE;
		else if (o->by == AN_BY_FUNCTION)
			key[i] = nd->func;
		else if (o->by == AN_BY_MODULE)
			key[i] = p->funcs[nd->func].mod;
		else
			key[i] = nd->group;
	}
	fold = xcalloc(nkeys ? nkeys : 1, sizeof(*fold));
	acc = xcalloc(nkeys ? nkeys : 1, sizeof(*acc));
	an_cct_fold(c, key, nkeys, fold);
	for (size_t k = 0; k < nkeys; k++)
		acc_from_fold(&acc[k], &fold[k]);
	/*
	 * A thread's (process's) samples with no call open are its own: its
	 * top's, which holds the whole group below it (SPEC section 14: the
	 * samples of the row's nodes, the thread's root among them).
	 */
	if (o->by == AN_BY_THREAD || o->by == AN_BY_PROCESS)
		for (size_t g = 0; g < ntops; g++) {
			const struct an_cct_node *top = an_cct_node(c, tops[g]);

			acc[g].smp_e += top->smp_excl;
			acc[g].smp_i = top->smp_incl;
			acc[g].used |= top->smp_incl && r->session.have_shares;
		}
	if (o->by == AN_BY_THREAD || o->by == AN_BY_PROCESS) {
		/* which thread or process had its stack repaired, or left open */
		struct an_map gmap = { 0 };

		for (size_t g = 0; g < ntops; g++) {
			uint32_t proc_id, tid;

			an_cct_group(c, (uint32_t)g, &proc_id, &tid);
			an_map_put(&gmap, proc_id, tid, (uint32_t)g, NULL);
		}
		for (size_t i = 0; i < p->ntstats; i++) {
			const struct an_tstats *ts = &p->tstats[i];
			uint32_t g = an_map_get(&gmap, ts->proc_id, o->by == AN_BY_THREAD ? ts->tid : 0);

			if (g == AN_NONE)
				continue;
			acc[g].repairs += ts->repairs;
			acc[g].open_frames += ts->open_frames;
		}
		an_map_release(&gmap);
	}

	for (size_t k = 0; k < nkeys; k++) {
		struct an_row *row;
		uint32_t proc_id = 0, tid = 0;

		if (!acc[k].used)
			continue;
		row = an_report_add_row(r, &alloc);
		if (o->by == AN_BY_THREAD || o->by == AN_BY_PROCESS)
			an_cct_group(c, (uint32_t)k, &proc_id, &tid);
		switch (o->by) {
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
			an_row_set_u(row, AN_COL_REPAIRS, acc[k].repairs);
			an_row_set_u(row, AN_COL_OPEN_FRAMES, acc[k].open_frames);
			break;
		case AN_BY_PROCESS:
			an_row_set_u(row, AN_COL_PID, an_proc_pid(p, proc_id));
			an_row_set_s(row, AN_COL_EXECUTABLE, an_proc_exe(p, proc_id));
			an_row_set_u(row, AN_COL_REPAIRS, acc[k].repairs);
			an_row_set_u(row, AN_COL_OPEN_FRAMES, acc[k].open_frames);
			break;
		default:
			break;
		}
		set_values(row, &acc[k], s, true);
	}
	free(key);
	free(fold);
	free(acc);
	return 0;
}
