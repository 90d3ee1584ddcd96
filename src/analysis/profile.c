/*
 * Loading a recording into an an_profile (see analysis.h).
 *
 * Records are kept in the aggregated form the recorder wrote them in:
 * CCT nodes per thread, call-site records, distinct stacks and per-thread
 * sample counts.  Repeated sample records for one (thread, stack) are
 * summed, so the profile's size follows the number of distinct stacks.
 * Symbolization is lazy and cached per (process image, address).
 */
#include "analysis/internal.h"
#include "util/util.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- resolver through symbols.h ----------------------------------------- */

static int sym_res_resolve(void *ctx, uint32_t proc_id, uint64_t addr, bool is_return,
			   struct sym_frame *out, int max)
{
	return sym_resolve(ctx, proc_id, addr, is_return, out, max);
}

static void sym_res_add_module(void *ctx, const struct sc_rec_module *m, const char *path)
{
	sym_add_module(ctx, m, path);
}

struct an_profile *an_profile_new(const struct an_resolver *res)
{
	struct an_profile *p = xcalloc(1, sizeof(*p));

	p->tl_fd = -1;
	if (res) {
		p->res = *res;
	} else {
		p->own_sym = sym_session_new();
		p->res.resolve = sym_res_resolve;
		p->res.add_module = sym_res_add_module;
		p->res.ctx = p->own_sym;
	}
	return p;
}

void an_profile_free(struct an_profile *p)
{
	if (!p)
		return;
	an_strtab_release(&p->strs);
	free(p->funcs);
	an_map_release(&p->func_map);
	free(p->bids);
	an_map_release(&p->bid_map);
	free(p->mods);
	an_map_release(&p->mod_map);
	free(p->frames);
	free(p->spans);
	an_map_release(&p->resolved);
	free(p->argv_sid);
	free(p->argv);
	free(p->procs);
	an_map_release(&p->proc_map);
	an_map_release(&p->tname_map);
	an_map_release(&p->libcall_map);
	free(p->unrec);
	for (size_t i = 0; i < p->nthreads; i++) {
		big_free(p->threads[i].nodes, p->threads[i].anodes, sizeof(*p->threads[i].nodes));
		free(p->threads[i].smp);
	}
	free(p->threads);
	an_map_release(&p->thread_map);
	free(p->sites);
	free(p->patch_ids);
	free(p->tstats);
	an_map_release(&p->tstats_map);
	free(p->tmore);
	an_map_release(&p->tmore_map);
	for (size_t i = 0; i < p->ntlblocks; i++)
		big_free(p->tlblocks[i].b, p->tlblocks[i].alloc, 1);
	free(p->tlblocks);
	free(p->tlrecs);
	if (p->tl_fd >= 0)
		close(p->tl_fd);
	free(p->stacks);
	free(p->ips);
	an_map_release(&p->stack_map);
	free(p->samples);
	an_map_release(&p->sample_map);
	free(p->damage);
	for (int i = 0; i < 3; i++)
		for (int j = 0; j < 2; j++)
			an_cct_free(p->cct[i][j]);
	sym_session_free(p->own_sym);
	free(p);
}

/* ---- functions, modules, resolution ------------------------------------- */

uint32_t an_func_intern(struct an_profile *p, const char *module, const char *name)
{
	uint32_t msid = an_str_intern(&p->strs, module ? module : "[unknown]");
	uint32_t nsid = an_str_intern(&p->strs, name ? name : "[unknown]");
	bool found;
	uint32_t id = an_map_put(&p->func_map, msid, nsid, (uint32_t)p->nfuncs, &found);
	uint32_t mod;

	if (found)
		return id;
	mod = an_map_put(&p->mod_map, msid, 0, (uint32_t)p->nmods, &found);
	if (!found) {
		ALLOC_GROW(p->mods, p->nmods + 1, p->amods);
		p->mods[p->nmods++] = msid;
	}
	ALLOC_GROW(p->funcs, p->nfuncs + 1, p->afuncs);
	p->funcs[p->nfuncs].name = nsid;
	p->funcs[p->nfuncs].module = msid;
	p->funcs[p->nfuncs].mod = mod;
	p->funcs[p->nfuncs].unnamed = false;
	p->funcs[p->nfuncs].system = AN_NONE;
	p->funcs[p->nfuncs].file = AN_NONE;
	p->funcs[p->nfuncs].line = 0;
	return (uint32_t)p->nfuncs++;
}

#define AN_MAX_INLINE 64

struct an_span an_resolve(struct an_profile *p, uint32_t proc_id, uint64_t addr,
			  bool is_return)
{
	uint64_t key = proc_id | (uint64_t)is_return << 32;
	uint32_t si = an_map_get(&p->resolved, key, addr);
	struct sym_frame fr[AN_MAX_INLINE];
	struct an_span span;
	char unknown[32];
	int n;

	if (si != AN_NONE)
		return p->spans[si];
	memset(fr, 0, sizeof(fr));
	n = p->res.resolve ? p->res.resolve(p->res.ctx, proc_id, addr, is_return,
					    fr, AN_MAX_INLINE) : 0;
	if (n < 1) {
		snprintf(unknown, sizeof(unknown), "0x%" PRIx64, addr);
		fr[0] = (struct sym_frame){ .function = unknown, .module = "[unknown]",
					    .module_offset = addr };
		n = 1;
	}
	if (n > AN_MAX_INLINE)
		n = AN_MAX_INLINE;
	if (!is_return) {
		/* a library call's row: named by the name the call used, in the
		 * module the symbol table found (SPEC section 11) */
		uint32_t sid = an_map_get(&p->libcall_map, proc_id, addr);

		if (sid != AN_NONE) {
			fr[0] = fr[n - 1];
			fr[0].function = an_str(&p->strs, sid);
			fr[0].inlined = false;
			fr[0].unnamed = false;
			n = 1;
		}
	}
	span.first = (uint32_t)p->nframes;
	span.n = (uint32_t)n;
	span.module_offset = n ? fr[0].module_offset : addr;
	ALLOC_GROW(p->frames, p->nframes + n, p->aframes);
	for (int i = 0; i < n; i++) {
		struct an_frame *f = &p->frames[p->nframes++];

		f->func = an_func_intern(p, fr[i].module, fr[i].function);
		p->funcs[f->func].unnamed |= fr[i].unnamed;
		if (fr[i].system_name && p->funcs[f->func].system == AN_NONE)
			p->funcs[f->func].system = an_str_intern(&p->strs, fr[i].system_name);
		/* the function's own file: where a non-inlined frame of it is */
		if (fr[i].file && !fr[i].inlined && p->funcs[f->func].file == AN_NONE)
			p->funcs[f->func].file = an_str_intern(&p->strs, fr[i].file);
		f->file = fr[i].file ? an_str_intern(&p->strs, fr[i].file) : AN_NONE;
		f->line = fr[i].line;
		f->inlined = fr[i].inlined;
	}
	ALLOC_GROW(p->spans, p->nspans + 1, p->aspans);
	p->spans[p->nspans] = span;
	an_map_put(&p->resolved, key, addr, (uint32_t)p->nspans++, NULL);
	return span;
}

uint32_t an_resolve_entry(struct an_profile *p, uint32_t proc_id, uint64_t addr)
{
	struct an_span s = an_resolve(p, proc_id, addr, false);
	const struct an_frame *f = &p->frames[s.first + s.n - 1];
	struct an_func *fn = &p->funcs[f->func];

	if (!fn->line && f->line && f->file == fn->file)
		fn->line = f->line;
	return f->func;
}

uint32_t an_proc_pid(const struct an_profile *p, uint32_t proc_id)
{
	uint32_t i = an_map_get(&p->proc_map, proc_id, 0);

	return i == AN_NONE ? proc_id : p->procs[i].pid;
}

const char *an_proc_exe(const struct an_profile *p, uint32_t proc_id)
{
	uint32_t i = an_map_get(&p->proc_map, proc_id, 0);

	return i == AN_NONE ? NULL : an_str(&p->strs, p->procs[i].exe);
}

const char *an_thread_name(const struct an_profile *p, uint32_t proc_id, uint32_t tid)
{
	return an_str(&p->strs, an_map_get(&p->tname_map, proc_id, tid));
}

/* ---- records ------------------------------------------------------------ */

/* Remember a module's build-id by its path (as the resolver names it). */
/* An object patched at run time: its counts, once per object (the same
 * program exec'ed again patches the same functions again). */
static void add_patched(struct an_profile *p, const struct sc_rec_patched *r)
{
	uint8_t id[21] = { 0 };

	p->have_patch = true;
	if (r->build_id_len && r->build_id_len <= sizeof(r->build_id)) {
		id[0] = (uint8_t)r->build_id_len;
		memcpy(id + 1, r->build_id, r->build_id_len);
		for (size_t i = 0; i < p->npatch_ids; i++)
			if (!memcmp(p->patch_ids[i], id, sizeof(id)))
				return;
		ALLOC_GROW(p->patch_ids, p->npatch_ids + 1, p->apatch_ids);
		memcpy(p->patch_ids[p->npatch_ids++], id, sizeof(id));
	}
	p->patched += r->patched;
	for (size_t i = 0; i < ARRAY_SIZE(p->unpatched); i++)
		p->unpatched[i] += r->unpatched[i];
}

static void add_build_id(struct an_profile *p, const struct sc_rec_module *m)
{
	static const char deleted[] = " (deleted)";
	const char *path = (const char *)(m + 1);
	size_t len = strlen(path);
	uint32_t sid;
	char *clean;
	bool found;

	uint8_t id[20];
	unsigned idlen;

	if (m->build_id_len > sizeof(m->build_id) || path[0] != '/')
		return;
	if (len > sizeof(deleted) - 1 && !strcmp(path + len - (sizeof(deleted) - 1), deleted))
		len -= sizeof(deleted) - 1;
	clean = xasprintf("%.*s", (int)len, path);
	sid = an_str_intern(&p->strs, clean);
	if (an_map_get(&p->bid_map, sid, 0) != AN_NONE) {
		free(clean);
		return;
	}
	/* The instrumentation recorder names modules without their build-id:
	 * the file's own, read once (the file the report reads symbols from). */
	idlen = m->build_id_len;
	memcpy(id, m->build_id, idlen);
	if (!idlen)
		idlen = sym_file_build_id(clean, id);
	free(clean);
	if (!idlen)
		return;
	an_map_put(&p->bid_map, sid, 0, (uint32_t)p->nbids, &found);
	ALLOC_GROW(p->bids, p->nbids + 1, p->abids);
	p->bids[p->nbids].module = sid;
	p->bids[p->nbids].len = idlen;
	memcpy(p->bids[p->nbids].id, id, idlen);
	p->nbids++;
}

static void add_session(struct an_profile *p, const struct sc_rec_session *s, size_t size)
{
	const char *arg = (const char *)(s + 1);

	p->have_session = true;
	p->sess = *s;
	free(p->argv_sid);
	free(p->argv);
	p->argv = NULL;
	/* sc_record_check() verified that argc strings fit in the record */
	p->argv_sid = xcalloc(s->argc ? s->argc : 1, sizeof(*p->argv_sid));
	p->argc = s->argc;
	for (uint32_t i = 0; i < s->argc; i++) {
		p->argv_sid[i] = an_str_intern(&p->strs, arg);
		arg += strlen(arg) + 1;
	}
	(void)size;
}

static void add_process(struct an_profile *p, const struct sc_rec_process *r)
{
	bool found;
	uint32_t i = an_map_put(&p->proc_map, r->proc_id, 0, (uint32_t)p->nprocs, &found);

	if (!found) {
		ALLOC_GROW(p->procs, p->nprocs + 1, p->aprocs);
		p->nprocs++;
	}
	p->procs[i].proc_id = r->proc_id;
	p->procs[i].pid = r->pid;
	p->procs[i].ppid = r->ppid;
	p->procs[i].exe = *(const char *)(r + 1) ?
		an_str_intern(&p->strs, (const char *)(r + 1)) : AN_NONE;
}

static struct an_thread *thread_instance(struct an_profile *p, uint32_t proc_id,
					 uint32_t tid, bool new_root)
{
	uint32_t i = an_map_get(&p->thread_map, proc_id, tid);

	/*
	 * A second root for the same (process image, tid) is a new thread that
	 * reused the tid: keep it as an instance of its own so node ids do not
	 * collide; report rows merge instances by tid.
	 */
	if (i == AN_NONE || (new_root && p->threads[i].has_root)) {
		ALLOC_GROW(p->threads, p->nthreads + 1, p->athreads);
		i = (uint32_t)p->nthreads++;
		memset(&p->threads[i], 0, sizeof(p->threads[i]));
		p->threads[i].proc_id = proc_id;
		p->threads[i].tid = tid;
		an_map_set(&p->thread_map, proc_id, tid, i);
	}
	return &p->threads[i];
}

static void add_node(struct an_profile *p, const struct sc_rec_cct_node *n)
{
	bool root = n->parent == UINT32_MAX;
	struct an_thread *t = thread_instance(p, n->proc_id, n->tid, root);

	if (root)
		t->has_root = true;
	BIG_GROW(t->nodes, t->nnodes + 1, t->anodes);
	t->nodes[t->nnodes++] = *n;
}

/* What compensation took out of a node: counted, and added back for raw values. */
static void add_removed(struct an_profile *p, const struct sc_rec_cct_removed *r)
{
	uint32_t i = an_map_get(&p->thread_map, r->proc_id, r->tid);
	struct sc_rec_cct_node *n;

	if (i == AN_NONE || r->id >= p->threads[i].nnodes ||
	    (n = &p->threads[i].nodes[r->id])->id != r->id) {
		p->bad_records++;
		return;
	}
	p->removed_ns += r->elapsed_excl;
	if (!p->raw_times)
		return;
	n->elapsed_excl += r->elapsed_excl;
	n->app_excl += r->app_excl;
	n->app_excl_exact += r->app_excl_exact;
	n->incl_sum += r->incl_sum;
	n->excl_sum += r->excl_sum;
}

/*
 * A node's samples (SPEC section 14), kept by id on the thread instance
 * whose nodes came last (records follow their thread's nodes); checked
 * against the nodes and the thread's totals by an_shares_check().
 */
static void add_cct_samples(struct an_profile *p, const struct sc_rec_cct_samples *r)
{
	uint32_t i = an_map_get(&p->thread_map, r->proc_id, r->tid);
	struct an_thread *t;

	if (i == AN_NONE) {
		if (!p->smp_orphan[0])
			snprintf(p->smp_orphan, sizeof(p->smp_orphan),
				 "node samples of thread %u (image %u), which has no call tree",
				 r->tid, r->proc_id);
		return;
	}
	t = &p->threads[i];
	ALLOC_GROW(t->smp, t->nsmp + 1, t->asmp);
	t->smp[t->nsmp++] = (struct an_node_samples){ r->id, r->samples };
	p->nsmp_rec++;
}

static void add_thread_more(struct an_profile *p, const struct sc_rec_thread_more *r)
{
	bool found;
	uint32_t i = an_map_put(&p->tmore_map, r->proc_id, r->tid, (uint32_t)p->ntmore, &found);

	/* a tid reused within an image: its instances add up, as its rows do */
	if (!found) {
		ALLOC_GROW(p->tmore, p->ntmore + 1, p->atmore);
		p->tmore[i] = (struct an_tmore){ .proc_id = r->proc_id, .tid = r->tid };
		p->ntmore++;
	}
	p->tmore[i].samples += r->samples;
	p->tmore[i].probe_samples += r->probe_samples;
	for (int c = 0; c < SC_REPAIR_NCAUSE; c++)
		p->tmore[i].repairs[c] += r->repairs[c];
}

/* Whether thread instance t has a node of id (ids are dense in practice:
 * node i has id i; ids is a lazily built set for the others). */
static bool has_node(const struct an_thread *t, uint32_t id, struct an_map *ids)
{
	if (id < t->nnodes && t->nodes[id].id == id)
		return true;
	if (!ids->n)
		for (size_t k = 0; k < t->nnodes; k++)
			an_map_set(ids, t->nodes[k].id, 0, 1);
	return an_map_get(ids, id, 0) != AN_NONE;
}

/*
 * The sampled shares are shown only when every count adds up, so that no
 * share is computed from part of the data: per (image, tid), the samples
 * of its nodes (which must exist) equal its samples minus those in probe
 * code.  Repairs by cause likewise must split the thread's repairs and
 * open frames exactly.  The first problem met is kept as the reason.
 */
void an_shares_check(struct an_profile *p)
{
	struct an_map node_sum = { 0 };    /* (proc_id, tid) -> index into sums */
	struct {
		uint32_t proc_id, tid;
		uint64_t n;
	} *sums = NULL;
	size_t nsums = 0, asums = 0;

	if (p->shares_checked)
		return;
	p->shares_checked = true;
	p->shares_ok = p->ntmore > 0 && !p->smp_orphan[0];
	p->causes_ok = p->ntmore > 0;
	p->shares_why[0] = p->causes_why[0] = '\0';
	p->smp_total = p->probe_total = 0;
	memset(p->causes, 0, sizeof(p->causes));
	if (p->smp_orphan[0])
		snprintf(p->shares_why, sizeof(p->shares_why), "%s", p->smp_orphan);
	else if (!p->ntmore && p->nsmp_rec)
		snprintf(p->shares_why, sizeof(p->shares_why),
			 "node samples without the threads' sample totals (no thread_more records)");
	for (size_t i = 0; i < p->nthreads && p->shares_ok; i++) {
		const struct an_thread *t = &p->threads[i];
		struct an_map ids = { 0 };
		bool found;
		uint32_t k;

		if (!t->nsmp)
			continue;
		k = an_map_put(&node_sum, t->proc_id, t->tid, (uint32_t)nsums, &found);
		if (!found) {
			ALLOC_GROW(sums, nsums + 1, asums);
			sums[nsums].proc_id = t->proc_id;
			sums[nsums].tid = t->tid;
			sums[nsums++].n = 0;
		}
		for (size_t j = 0; j < t->nsmp; j++) {
			if (!has_node(t, t->smp[j].id, &ids)) {
				snprintf(p->shares_why, sizeof(p->shares_why),
					 "samples of node %u of thread %u, which has no such node",
					 t->smp[j].id, t->tid);
				p->shares_ok = false;
				break;
			}
			sums[k].n += t->smp[j].samples;
		}
		an_map_release(&ids);
	}
	for (size_t i = 0; i < p->ntmore; i++) {
		const struct an_tmore *m = &p->tmore[i];
		uint32_t k = an_map_get(&node_sum, m->proc_id, m->tid);
		uint64_t nodes = k == AN_NONE ? 0 : sums[k].n;
		uint32_t si = an_map_get(&p->tstats_map, m->proc_id, m->tid);
		uint64_t rep = si == AN_NONE ? 0 : p->tstats[si].repairs;
		uint64_t open = si == AN_NONE ? 0 : p->tstats[si].open_frames;
		uint64_t r4 = m->repairs[SC_REPAIR_LONGJMP] + m->repairs[SC_REPAIR_EXCEPTION] +
			m->repairs[SC_REPAIR_SIGNAL] + m->repairs[SC_REPAIR_OTHER];
		uint64_t r2 = m->repairs[SC_REPAIR_EXIT] + m->repairs[SC_REPAIR_KILL] +
			m->repairs[SC_REPAIR_DETACH];
		uint64_t own = m->probe_samples > m->samples ? 0 : m->samples - m->probe_samples;

		if (p->shares_ok && (m->probe_samples > m->samples || nodes != own)) {
			snprintf(p->shares_why, sizeof(p->shares_why),
				 "thread %u: its nodes hold %llu samples, its totals %llu (%llu less %llu "
				 "in probe code)", m->tid, (unsigned long long)nodes,
				 (unsigned long long)own, (unsigned long long)m->samples,
				 (unsigned long long)m->probe_samples);
			p->shares_ok = false;
		}
		if (p->causes_ok && (r4 != rep || r2 != open)) {
			snprintf(p->causes_why, sizeof(p->causes_why),
				 "thread %u: repairs by cause sum to %llu and %llu, its stats say %llu "
				 "repairs and %llu open frames", m->tid, (unsigned long long)r4,
				 (unsigned long long)r2, (unsigned long long)rep,
				 (unsigned long long)open);
			p->causes_ok = false;
		}
		p->smp_total += own;
		p->probe_total += m->probe_samples;
		for (int c = 0; c < SC_REPAIR_NCAUSE; c++)
			p->causes[c] += m->repairs[c];
	}
	/* node samples of a thread without totals */
	for (size_t i = 0; i < nsums && p->shares_ok; i++)
		if (sums[i].n && an_map_get(&p->tmore_map, sums[i].proc_id, sums[i].tid) == AN_NONE) {
			snprintf(p->shares_why, sizeof(p->shares_why),
				 "thread %u has node samples but no sample totals (thread_more record)",
				 sums[i].tid);
			p->shares_ok = false;
		}
	/* a thread with repairs but no causes recorded */
	for (size_t i = 0; i < p->ntstats && p->causes_ok; i++)
		if ((p->tstats[i].repairs || p->tstats[i].open_frames) &&
		    an_map_get(&p->tmore_map, p->tstats[i].proc_id, p->tstats[i].tid) == AN_NONE) {
			snprintf(p->causes_why, sizeof(p->causes_why),
				 "thread %u has repairs but no repairs by cause (thread_more record)",
				 p->tstats[i].tid);
			p->causes_ok = false;
		}
	free(sums);
	an_map_release(&node_sum);
}

void an_profile_set_raw_times(struct an_profile *p, bool raw)
{
	p->raw_times = raw;
}

static void add_stats(struct an_profile *p, const struct sc_rec_thread_stats *s)
{
	bool found;
	uint32_t i = an_map_put(&p->tstats_map, s->proc_id, s->tid, (uint32_t)p->ntstats, &found);

	/* a tid reused within an image: its instances add up, as its rows do */
	if (!found) {
		ALLOC_GROW(p->tstats, p->ntstats + 1, p->atstats);
		p->tstats[i] = (struct an_tstats){ s->proc_id, s->tid, 0, 0 };
		p->ntstats++;
	}
	p->tstats[i].repairs += s->repairs;
	p->tstats[i].open_frames += s->open_frames;
	p->nstats++;
	p->stats.events += s->events;
	p->stats.lost_events += s->lost_events;
	p->stats.repairs += s->repairs;
	p->stats.open_frames += s->open_frames;
	for (int c = 0; c < SC_OS_NCAT; c++)
		p->stats.os_count[c] += s->os_count[c];
	if (!p->stats.first_ns || (s->first_ns && s->first_ns < p->stats.first_ns))
		p->stats.first_ns = s->first_ns;
	if (s->last_ns > p->stats.last_ns)
		p->stats.last_ns = s->last_ns;
}

static int add_stack(struct an_profile *p, const struct sc_rec_stack *s)
{
	const uint64_t *ip = (const uint64_t *)(s + 1);
	bool found;
	uint32_t i = an_map_put(&p->stack_map, s->id, 0, (uint32_t)p->nstacks, &found);

	if (found)          /* ids are unique in a file; keep the first */
		return -EINVAL;
	ALLOC_GROW(p->stacks, p->nstacks + 1, p->astacks);
	ALLOC_GROW(p->ips, p->nips + s->nframes, p->aips);
	if (s->nframes)
		memcpy(&p->ips[p->nips], ip, s->nframes * sizeof(*ip));
	p->stacks[i].ip = p->nips;
	p->stacks[i].nframes = s->nframes;
	p->stacks[i].flags = s->flags;
	p->nips += s->nframes;
	p->nstacks++;
	return 0;
}

static void add_samples(struct an_profile *p, const struct sc_rec_samples *s)
{
	bool found;
	uint32_t i = an_map_put(&p->sample_map, (uint64_t)s->proc_id << 32 | s->tid,
				s->stack_id, (uint32_t)p->nsamples, &found);

	if (!found) {
		ALLOC_GROW(p->samples, p->nsamples + 1, p->asamples);
		p->samples[i] = (struct an_sample){ s->proc_id, s->tid, s->stack_id, 0 };
		p->nsamples++;
	}
	p->samples[i].count += s->count;
}

#define TL_BLOCK (8u << 20)

/* len bytes for a timeline record's data, from the profile's blocks. */
static uint8_t *tl_alloc(struct an_profile *p, size_t len)
{
	struct an_tlblock *bl = p->ntlblocks ? &p->tlblocks[p->ntlblocks - 1] : NULL;

	if (!bl || bl->alloc - bl->used < len) {
		ALLOC_GROW(p->tlblocks, p->ntlblocks + 1, p->atlblocks);
		bl = &p->tlblocks[p->ntlblocks++];
		memset(bl, 0, sizeof(*bl));
		big_grow((void **)&bl->b, &bl->alloc, len > TL_BLOCK ? len : TL_BLOCK, 1);
	}
	bl->used += len;
	return bl->b + bl->used - len;
}

/* A timeline record, kept coded, tied to the thread instance whose nodes
 * precede it (a tid reused later is another instance). */
static void add_timeline(struct an_profile *p, const struct sc_rec_timeline *t, size_t size,
			 int64_t off)
{
	struct an_tlrec *r;
	size_t len = size - sizeof(*t);

	ALLOC_GROW(p->tlrecs, p->ntlrecs + 1, p->atlrecs);
	r = &p->tlrecs[p->ntlrecs++];
	r->proc_id = t->proc_id;
	r->tid = t->tid;
	r->inst = an_map_get(&p->thread_map, t->proc_id, t->tid);
	r->nitems = t->nitems;
	r->flags = t->flags;
	r->base_ns = t->base_ns;
	r->base_tick = t->base_tick;
	r->tick0 = t->tick0;
	r->ns0 = t->ns0;
	r->ns_per_tick = t->ns_per_tick > 0 && t->ns_per_tick < 1e6 ? t->ns_per_tick : 1.0;
	r->dropped = t->dropped;
	r->filtered = t->filtered;
	r->len = len;
	if (off >= 0) {
		r->data = NULL;
		r->off = off + (int64_t)sizeof(*t);
		return;
	}
	r->data = tl_alloc(p, len);
	r->off = -1;
	memcpy(r->data, t + 1, len);
}

static int profile_add(struct an_profile *p, const struct sc_record *rec, int64_t off);

int an_profile_add(struct an_profile *p, const struct sc_record *rec)
{
	return profile_add(p, rec, -1);
}

/* off: where rec's payload is in p->tl_fd's file, or -1 */
static int profile_add(struct an_profile *p, const struct sc_record *rec, int64_t off)
{
	const void *d = rec->data;
	uint64_t whole[SC_REC_WHOLE_MAX / 8];      /* an older, shorter record */

	if (sc_record_check(rec) < 0) {
		p->bad_records++;
		return -EINVAL;
	}
	/* a tree built before this record no longer describes the profile */
	p->shares_checked = false;
	for (int i = 0; i < 3; i++)
		for (int j = 0; j < 2; j++) {
			an_cct_free(p->cct[i][j]);
			p->cct[i][j] = NULL;
		}
	switch (rec->type) {
	case SC_REC_SESSION:
		add_session(p, d, rec->size);
		break;
	case SC_REC_SESSION_END:
		p->have_end = true;
		p->end = *(const struct sc_rec_session_end *)d;
		break;
	case SC_REC_PROCESS:
		add_process(p, d);
		break;
	case SC_REC_THREAD: {
		const struct sc_rec_thread *t = d;
		const char *name = (const char *)(t + 1);

		if (*name)
			an_map_put(&p->tname_map, t->proc_id, t->tid,
				   an_str_intern(&p->strs, name), NULL);
		break;
	}
	case SC_REC_LIBCALL: {
		const struct sc_rec_libcall *l = d;
		char *name = sym_demangle((const char *)(l + 1));

		an_map_put(&p->libcall_map, l->proc_id, l->addr, an_str_intern(&p->strs, name), NULL);
		free(name);
		break;
	}
	case SC_REC_UNRECORDED: {
		const struct sc_rec_unrecorded *u = d;

		ALLOC_GROW(p->unrec, p->nunrec + 1, p->aunrec);
		p->unrec[p->nunrec].pid = u->pid;
		p->unrec[p->nunrec].reason = u->reason;
		/* (interned: the table's strings stay put as it grows) */
		p->unrec[p->nunrec++].path = an_str(&p->strs, an_str_intern(&p->strs, (const char *)(u + 1)));
		break;
	}
	case SC_REC_MODULE:
		add_build_id(p, d);
		if (p->res.add_module)
			p->res.add_module(p->res.ctx, d,
					  (const char *)((const struct sc_rec_module *)d + 1));
		break;
	case SC_REC_CCT_NODE:
		p->features |= SC_FEAT_INSTRUMENT;
		add_node(p, d);
		break;
	case SC_REC_CALLSITE:
		p->features |= SC_FEAT_INSTRUMENT;
		ALLOC_GROW(p->sites, p->nsites + 1, p->asites);
		p->sites[p->nsites++] = *(const struct sc_rec_callsite *)d;
		break;
	case SC_REC_THREAD_STATS:
		p->features |= SC_FEAT_INSTRUMENT;
		add_stats(p, d);
		break;
	case SC_REC_PROBE_COST:
		p->probe_cost = *(const struct sc_rec_probe_cost *)d;
		break;
	case SC_REC_CCT_REMOVED:
		add_removed(p, d);
		break;
	case SC_REC_CCT_SAMPLES:
		add_cct_samples(p, d);
		break;
	case SC_REC_THREAD_MORE:
		p->features |= SC_FEAT_INSTRUMENT;
		add_thread_more(p, sc_record_whole(rec, whole));
		break;
	case SC_REC_STACK:
		p->features |= SC_FEAT_SAMPLE;
		if (add_stack(p, d) < 0) {
			p->bad_records++;
			return -EINVAL;
		}
		break;
	case SC_REC_SAMPLES:
		p->features |= SC_FEAT_SAMPLE;
		add_samples(p, d);
		break;
	case SC_REC_PATCHED:
		add_patched(p, d);
		break;
	case SC_REC_TIMELINE:
		add_timeline(p, d, rec->size, off);
		break;
	case SC_REC_LOST: {
		const struct sc_rec_lost *l = d;

		if (l->kind == SC_LOST_SAMPLES)
			p->lost_samples_rec += l->count;
		else if (l->kind == SC_LOST_EVENTS)
			p->lost_events_rec += l->count;
		else if (l->kind == SC_LOST_UNWIND)
			p->lost_unwind_rec += l->count;
		else if (l->kind == SC_LOST_OS_RECORDS)
			p->lost_os_rec += l->count;
		else if (l->kind == SC_LOST_UNHOOKED)
			p->unhooked_rec += l->count;
		break;
	}
	default:
		break;
	}
	return 0;
}

int an_profile_load(struct an_profile *p, const char *path, const char **damaged,
		    char *err, size_t errlen)
{
	struct sc_reader *r = NULL;
	struct sc_record rec;
	char why[256] = "";
	bool in_file;
	int ret;

	if (damaged)
		*damaged = NULL;
	ret = sc_reader_open(path, &r, why, sizeof(why));
	if (ret < 0) {
		snprintf(err, errlen, "%s: %s", path, why[0] ? why : strerror(-ret));
		return ret;
	}
	p->features |= sc_reader_features(r);
	/* timeline payloads stored as they are stay in the file (a long
	 * timeline is hundreds of MB): read back through a descriptor of our own */
	in_file = p->tl_fd < 0 && sc_reader_file_fd(r) >= 0 &&
		  (p->tl_fd = fcntl(sc_reader_file_fd(r), F_DUPFD_CLOEXEC, 0)) >= 0;
	while ((ret = sc_reader_next(r, &rec)) == SC_READ_OK)
		profile_add(p, &rec, rec.type == SC_REC_TIMELINE && in_file
			    ? sc_reader_payload_offset(r, &rec) : -1);
	if (ret == SC_READ_DAMAGED) {
		const char *d = sc_reader_damage(r);

		free(p->damage);
		p->damage = xstrdup(d && *d ? d : "damaged data");
		if (damaged)
			*damaged = p->damage;
	}
	sc_reader_close(r);
	return 0;
}

enum sc_method an_profile_method(const struct an_profile *p)
{
	if (p->have_session && (p->sess.method == SC_METHOD_INSTRUMENT ||
				p->sess.method == SC_METHOD_SAMPLE))
		return p->sess.method;
	if (p->nthreads || p->nsites)
		return SC_METHOD_INSTRUMENT;
	if (p->nsamples || p->nstacks)
		return SC_METHOD_SAMPLE;
	if (p->features & SC_FEAT_INSTRUMENT)
		return SC_METHOD_INSTRUMENT;
	if (p->features & SC_FEAT_SAMPLE)
		return SC_METHOD_SAMPLE;
	return 0;
}
