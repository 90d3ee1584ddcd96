/*
 * stackclock dump — show the raw records of a data file, one line each.
 *
 * For debugging the recorders and the format: the file header, each chunk
 * as it is met (offset, sizes, CRC), then every record decoded field by
 * field with the names of docs/data-format.md.  Records of types this
 * build does not know are shown by number and size.  A damaged file is
 * shown up to the damage, then a warning names the offset and the
 * problem, and the status is 1.
 *
 * --stacks shows the calling-context tree (src/analysis/cct.h) instead,
 * per thread, one line per path and state of the stacks that ended there:
 *
 *   STATE PID TID VALUE root;caller;...;leaf
 *
 * STATE is "root", "trunc" or "partial" (sampling: unwinding reached the
 * thread's root, stopped at the end of the copied stack, or stopped early),
 * with "+kernel" when the stacks started with kernel frames, or "instr"
 * (instrumentation); VALUE is exclusive samples, or exclusive elapsed ns.
 * Frames are function names after symbolization, inlined frames included:
 * the tests check call chains on it with grep and awk.  A damaged file
 * shows the stacks read before the damage, a warning, and status 1, as the
 * records do.
 */
#include "analysis/cct.h"
#include "cmd/cmd.h"
#include "record/discover.h"
#include "format/execcheck.h"
#include "format/scdata.h"
#include "util/util.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

static const char dump_usage[] =
	"usage: stackclock dump [-i FILE] [--stacks]\n"
	"\n"
	"  -i, --input FILE    data file, default stackclock.data\n"
	"  --stacks            the call paths per thread, symbolized, one line each:\n"
	"                      STATE PID TID VALUE root;...;leaf\n"
	"\n"
	"usage: stackclock dump --patch-plan ELF [--functions]\n"
	"\n"
	"  the run-time patcher's plan of an ELF object: candidates, patched,\n"
	"  refused per reason, the time discovery took; --functions lists each\n";

static void stack_line(FILE *f, const char *state, bool kernel, uint32_t pid, uint32_t tid,
		       uint64_t value, const char *path)
{
	fprintf(f, "%s%s %u %u %" PRIu64 " %s\n", state, kernel ? "+kernel" : "", pid, tid, value,
		path);
}

static int dump_stacks(FILE *f, const char *path)
{
	static const char *const state[AN_STACK_NSTATES] = { "root", "trunc", "partial" };
	struct an_profile *p = an_profile_new(NULL);
	const struct an_cct *c;
	const uint32_t *tops;
	size_t ntops, len = 0, cap = 4096;
	size_t *mark = NULL, amark = 0;
	char *buf = NULL, err[512];
	const char *damaged = NULL;
	int status = 1;

	if (an_profile_load(p, path, &damaged, err, sizeof(err)) < 0) {
		pr_err("dump: cannot read %s", err);
		goto out;
	}
	c = an_profile_cct(p, AN_CCT_BY_THREAD, AN_APP_INTERVAL);
	ntops = an_cct_tops(c, &tops);
	buf = xmalloc(cap);
	for (size_t t = 0; t < ntops; t++) {
		uint32_t proc_id, tid, pid = an_cct_group_pid(c, (uint32_t)t), n = tops[t];

		an_cct_group(c, (uint32_t)t, &proc_id, &tid);
		/* depth first; mark[d] is the path's length before depth d */
		for (;;) {
			const struct an_cct_node *nd = an_cct_node(c, n);

			if (nd->parent != AN_CCT_NONE) {
				const char *name = an_cct_func_name(c, nd->func);
				size_t nl = strlen(name ? name : "?");

				ALLOC_GROW(mark, nd->depth + 1, amark);
				len = nd->depth > 1 ? mark[nd->depth - 1] : 0;
				if (len + nl + 2 > cap) {
					cap = 2 * (len + nl + 2);
					buf = xrealloc(buf, cap);
				}
				if (len)
					buf[len++] = ';';
				memcpy(buf + len, name ? name : "?", nl + 1);
				len += nl;
				mark[nd->depth] = len;
				if (an_cct_method(c) == SC_METHOD_INSTRUMENT && nd->excl)
					stack_line(f, "instr", false, pid, tid, nd->excl, buf);
				for (int s = 0; an_cct_method(c) == SC_METHOD_SAMPLE && s < AN_STACK_NSTATES; s++)
					for (int k = 0; k < 2; k++)
						if (nd->state[s][k])
							stack_line(f, state[s], k, pid, tid, nd->state[s][k], buf);
			}
			if (nd->first_child != AN_CCT_NONE) {
				n = nd->first_child;
				continue;
			}
			while (n != tops[t] && an_cct_node(c, n)->next_sibling == AN_CCT_NONE)
				n = an_cct_node(c, n)->parent;
			if (n == tops[t])
				break;
			n = an_cct_node(c, n)->next_sibling;
		}
	}
	status = fflush(f) ? 1 : 0;
	/* as the records are: what was read is shown, the damage said, status 1 */
	if (damaged) {
		pr_warn("%s is damaged (%s); the stacks read before the damage are shown above",
			path, damaged);
		status = 1;
	}
out:
	free(buf);
	free(mark);
	an_profile_free(p);
	return status;
}

static void print_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = *s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20 || c >= 0x7f)
			fprintf(f, "\\x%02x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

/* Names of the set bits of mask, comma-separated, or "none". */
static void print_bits(FILE *f, uint32_t mask, const char *const *names, unsigned nnames)
{
	const char *sep = "";

	if (!mask) {
		fputs("none", f);
		return;
	}
	for (unsigned i = 0; i < 32; i++) {
		if (!(mask & (1u << i)))
			continue;
		if (i < nnames && names[i])
			fprintf(f, "%s%s", sep, names[i]);
		else
			fprintf(f, "%s0x%x", sep, 1u << i);
		sep = ",";
	}
}

static const char *const feat_names[] = { "zstd", "instrument", "sample" };
static const char *const sess_names[] = { "attached", "kernel" };
static const char *const mod_names[] = { "exec", "base" };
static const char *const stack_names[] = { "root", "truncated", "kernel" };

/* An SC_OS_BIT mask by the names the command line uses. */
static void print_os_mask(FILE *f, uint32_t mask)
{
	const char *names[SC_OS_NCAT];

	for (unsigned c = 0; c < SC_OS_NCAT; c++)
		names[c] = sc_os_cat_name(c);
	print_bits(f, mask, names, SC_OS_NCAT);
}

static void print_proc_id(FILE *f, const char *key, uint32_t id)
{
	if (id == UINT32_MAX)
		fprintf(f, " %s=none", key);
	else
		fprintf(f, " %s=%" PRIu32, key, id);
}

static void dump_session(FILE *f, const void *data)
{
	const struct sc_rec_session *s = data;
	const char *arg = (const char *)(s + 1);
	time_t secs = s->start_realtime_ns / 1000000000;
	struct tm tm;
	char when[32] = "?";

	if (gmtime_r(&secs, &tm))
		strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S UTC", &tm);
	fprintf(f, " method=%s frequency_hz=%" PRIu32 " os_requested=",
		s->method == SC_METHOD_INSTRUMENT ? "instrument" :
		s->method == SC_METHOD_SAMPLE ? "sample" : "unknown", s->frequency_hz);
	print_os_mask(f, s->os_requested);
	fputs(" flags=", f);
	print_bits(f, s->flags, sess_names, ARRAY_SIZE(sess_names));
	fprintf(f, " start_realtime_ns=%" PRIu64 " (%s) target_pid=%" PRIu32 " argc=%" PRIu32 " argv=[",
		s->start_realtime_ns, when, s->target_pid, s->argc);
	for (uint32_t i = 0; i < s->argc; i++) {
		fputs(i ? ", " : "", f);
		print_str(f, arg);
		arg += strlen(arg) + 1;
	}
	fputc(']', f);
}

static void dump_session_end(FILE *f, const void *data)
{
	const struct sc_rec_session_end *e = data;
	int st = e->exit_status;

	fprintf(f, " duration_ns=%" PRIu64 " exit_status=%" PRId32, e->duration_ns, e->exit_status);
	if (st == -1)
		fputs(" (unknown)", f);
	else if (WIFEXITED(st))
		fprintf(f, " (exited %d)", WEXITSTATUS(st));
	else if (WIFSIGNALED(st))
		fprintf(f, " (killed by signal %d)", WTERMSIG(st));
	fputs(" os_observed=", f);
	print_os_mask(f, e->os_observed);
	fprintf(f, " lost_events=%" PRIu64 " lost_samples=%" PRIu64, e->lost_events, e->lost_samples);
}

static void dump_process(FILE *f, const void *data)
{
	const struct sc_rec_process *p = data;

	fprintf(f, " proc_id=%" PRIu32 " pid=%" PRIu32 " ppid=%" PRIu32, p->proc_id, p->pid, p->ppid);
	print_proc_id(f, "parent_proc_id", p->parent_proc_id);
	fprintf(f, " start_ns=%" PRIu64 " end_ns=%" PRIu64 " exe=", p->start_ns, p->end_ns);
	print_str(f, (const char *)(p + 1));
}

static void dump_thread(FILE *f, const void *data)
{
	const struct sc_rec_thread *t = data;

	fprintf(f, " proc_id=%" PRIu32 " tid=%" PRIu32 " start_ns=%" PRIu64 " end_ns=%" PRIu64 " name=",
		t->proc_id, t->tid, t->start_ns, t->end_ns);
	print_str(f, (const char *)(t + 1));
}

static void dump_module(FILE *f, const void *data)
{
	const struct sc_rec_module *m = data;

	fprintf(f, " proc_id=%" PRIu32 " start=0x%" PRIx64 " end=0x%" PRIx64 " pgoff=0x%" PRIx64
		" flags=", m->proc_id, m->start, m->end, m->pgoff);
	print_bits(f, m->flags, mod_names, ARRAY_SIZE(mod_names));
	fputs(" build_id=", f);
	if (!m->build_id_len)
		fputs("none", f);
	for (uint32_t i = 0; i < m->build_id_len; i++)
		fprintf(f, "%02x", m->build_id[i]);
	fputs(" path=", f);
	print_str(f, (const char *)(m + 1));
}

static void dump_cct_node(FILE *f, const void *data)
{
	const struct sc_rec_cct_node *n = data;

	fprintf(f, " proc_id=%" PRIu32 " tid=%" PRIu32 " id=%" PRIu32, n->proc_id, n->tid, n->id);
	print_proc_id(f, "parent", n->parent);
	fprintf(f, " func=0x%" PRIx64 " calls=%" PRIu64 " elapsed_excl=%" PRIu64
		" app_excl=%" PRIu64 " app_excl_exact=%" PRIu64 " completed=%" PRIu64
		" incl_min=%" PRIu64 " incl_max=%" PRIu64 " incl_sum=%" PRIu64
		" excl_min=%" PRIu64 " excl_max=%" PRIu64 " excl_sum=%" PRIu64,
		n->func, n->calls, n->elapsed_excl, n->app_excl, n->app_excl_exact, n->completed,
		n->incl_min, n->incl_max, n->incl_sum, n->excl_min, n->excl_max, n->excl_sum);
}

static void dump_callsite(FILE *f, const void *data)
{
	const struct sc_rec_callsite *c = data;

	fprintf(f, " proc_id=%" PRIu32 " tid=%" PRIu32 " site=0x%" PRIx64 " callee=0x%" PRIx64
		" calls=%" PRIu64 " elapsed_incl=%" PRIu64 " elapsed_excl=%" PRIu64
		" app_incl=%" PRIu64 " app_excl=%" PRIu64,
		c->proc_id, c->tid, c->site, c->callee, c->calls, c->elapsed_incl,
		c->elapsed_excl, c->app_incl, c->app_excl);
}

static void dump_thread_stats(FILE *f, const void *data)
{
	const struct sc_rec_thread_stats *t = data;

	fprintf(f, " proc_id=%" PRIu32 " tid=%" PRIu32 " events=%" PRIu64 " lost_events=%" PRIu64
		" repairs=%" PRIu64 " open_frames=%" PRIu64,
		t->proc_id, t->tid, t->events, t->lost_events, t->repairs, t->open_frames);
	for (unsigned c = 0; c < SC_OS_NCAT; c++)
		fprintf(f, " os_%s=%" PRIu64, sc_os_cat_name(c), t->os_count[c]);
	fprintf(f, " first_ns=%" PRIu64 " last_ns=%" PRIu64, t->first_ns, t->last_ns);
}

static void dump_stack(FILE *f, const void *data)
{
	const struct sc_rec_stack *s = data;
	const uint64_t *ip = (const uint64_t *)(s + 1);

	fprintf(f, " id=%" PRIu32 " nframes=%u flags=", s->id, s->nframes);
	print_bits(f, s->flags, stack_names, ARRAY_SIZE(stack_names));
	fputs(" ips=[", f);
	for (unsigned i = 0; i < s->nframes; i++)
		fprintf(f, "%s0x%" PRIx64, i ? " " : "", ip[i]);
	fputc(']', f);
}

static void dump_samples(FILE *f, const void *data)
{
	const struct sc_rec_samples *s = data;

	fprintf(f, " proc_id=%" PRIu32 " tid=%" PRIu32 " stack_id=%" PRIu32 " count=%" PRIu64,
		s->proc_id, s->tid, s->stack_id, s->count);
}

static void dump_lost(FILE *f, const void *data)
{
	static const char *const kinds[] = {
		[SC_LOST_SAMPLES] = "samples", [SC_LOST_EVENTS] = "events",
		[SC_LOST_UNWIND] = "unwind", [SC_LOST_OS_RECORDS] = "os_records",
		[SC_LOST_UNHOOKED] = "unhooked",
	};
	const struct sc_rec_lost *l = data;

	if (l->kind < ARRAY_SIZE(kinds) && kinds[l->kind])
		fprintf(f, " kind=%s", kinds[l->kind]);
	else
		fprintf(f, " kind=%" PRIu32, l->kind);
	print_proc_id(f, "proc_id", l->proc_id);
	fprintf(f, " count=%" PRIu64, l->count);
}

static void dump_probe_cost(FILE *f, const void *data)
{
	const struct sc_rec_probe_cost *c = data;

	fprintf(f, " samples=%" PRIu32 " enter_enter_ps=%" PRIu64 " enter_exit_ps=%" PRIu64
		" exit_enter_ps=%" PRIu64 " exit_exit_ps=%" PRIu64 " enter_exit_work_ps=%" PRIu64 " probes=%s",
		c->samples, c->cost_ps[0], c->cost_ps[1], c->cost_ps[2], c->cost_ps[3], c->enter_exit_work_ps,
		c->flags & SC_PROBE_COST_PATCHED ? "patched" : "hooks");
}

static void dump_cct_removed(FILE *f, const void *data)
{
	const struct sc_rec_cct_removed *r = data;

	fprintf(f, " proc_id=%" PRIu32 " tid=%" PRIu32 " id=%" PRIu32 " ee=%" PRIu64 " ae=%" PRIu64
		" ae_exact=%" PRIu64 " incl_sum=%" PRIu64 " excl_sum=%" PRIu64,
		r->proc_id, r->tid, r->id, r->elapsed_excl, r->app_excl, r->app_excl_exact,
		r->incl_sum, r->excl_sum);
}

static void dump_cct_samples(FILE *f, const void *data)
{
	const struct sc_rec_cct_samples *r = data;

	fprintf(f, " proc_id=%" PRIu32 " tid=%" PRIu32 " id=%" PRIu32 " samples=%" PRIu64,
		r->proc_id, r->tid, r->id, r->samples);
}

static void dump_thread_more(FILE *f, const void *data)
{
	const struct sc_rec_thread_more *t = data;

	fprintf(f, " proc_id=%" PRIu32 " tid=%" PRIu32 " samples=%" PRIu64 " probe_samples=%" PRIu64,
		t->proc_id, t->tid, t->samples, t->probe_samples);
	for (unsigned c = 0; c < SC_REPAIR_NCAUSE; c++)
		fprintf(f, " repairs_%s=%" PRIu64, sc_repair_cause_name(c), t->repairs[c]);
}

static void dump_patched(FILE *f, const void *data)
{
	const struct sc_rec_patched *p = data;

	print_proc_id(f, "proc_id", p->proc_id);
	fprintf(f, " base=0x%" PRIx64 " build_id=", p->base);
	for (uint32_t i = 0; i < p->build_id_len && i < sizeof(p->build_id); i++)
		fprintf(f, "%02x", p->build_id[i]);
	fprintf(f, " patched=%" PRIu32 " patch_ns=%" PRIu64, p->patched, p->patch_ns);
	for (unsigned r = 1; r < PATCH_NREASONS; r++)
		if (p->unpatched[r])
			fprintf(f, " %s=%" PRIu32, patch_reason_name(r), p->unpatched[r]);
}

static void dump_libcall(FILE *f, const void *data)
{
	const struct sc_rec_libcall *l = data;

	fprintf(f, " proc_id=%" PRIu32 " addr=0x%" PRIx64 " name=", l->proc_id, l->addr);
	print_str(f, (const char *)(l + 1));
}

static void dump_unrecorded(FILE *f, const void *data)
{
	const struct sc_rec_unrecorded *u = data;

	fprintf(f, " proc_id=%" PRIu32 " pid=%" PRIu32 " reason=%" PRIu32 " (%s) path=", u->proc_id, u->pid,
		u->reason, sc_exec_why_text(u->reason));
	print_str(f, (const char *)(u + 1));
}

static void dump_timeline(FILE *f, const void *data)
{
	const struct sc_rec_timeline *t = data;

	fprintf(f, " proc_id=%" PRIu32 " tid=%" PRIu32 " base_ns=%" PRIu64 " nitems=%" PRIu32
		" dropped=%" PRIu64 " filtered=%" PRIu64 " (items: 'stackclock replay')",
		t->proc_id, t->tid, t->base_ns, t->nitems, t->dropped, t->filtered);
}

static void (*const dumpers[SC_REC_MAX])(FILE *f, const void *data) = {
	[SC_REC_SESSION]      = dump_session,
	[SC_REC_SESSION_END]  = dump_session_end,
	[SC_REC_PROCESS]      = dump_process,
	[SC_REC_THREAD]       = dump_thread,
	[SC_REC_MODULE]       = dump_module,
	[SC_REC_CCT_NODE]     = dump_cct_node,
	[SC_REC_CALLSITE]     = dump_callsite,
	[SC_REC_THREAD_STATS] = dump_thread_stats,
	[SC_REC_STACK]        = dump_stack,
	[SC_REC_SAMPLES]      = dump_samples,
	[SC_REC_LOST]         = dump_lost,
	[SC_REC_PATCHED]      = dump_patched,
	[SC_REC_PROBE_COST]   = dump_probe_cost,
	[SC_REC_THREAD_MORE]  = dump_thread_more,
	[SC_REC_CCT_REMOVED]  = dump_cct_removed,
	[SC_REC_CCT_SAMPLES]  = dump_cct_samples,
	[SC_REC_LIBCALL]      = dump_libcall,
	[SC_REC_UNRECORDED]   = dump_unrecorded,
	[SC_REC_TIMELINE]     = dump_timeline,
};

static void dump_record(FILE *f, const struct sc_record *rec)
{
	const char *name = sc_rec_type_name(rec->type);
	uint64_t whole[SC_REC_WHOLE_MAX / 8];

	if (!name || !dumpers[rec->type]) {
		fprintf(f, "  type %u, %" PRIu32 " bytes\n", (unsigned)rec->type, rec->size);
		return;
	}
	fprintf(f, "  %s", name);
	if (sc_record_check(rec))
		fprintf(f, " malformed (%" PRIu32 " bytes)", rec->size);
	else
		dumpers[rec->type](f, sc_record_whole(rec, whole));   /* an older,
					shorter record: the fields it lacks 0 */
	fputc('\n', f);
}

static void dump_chunk(FILE *f, const struct sc_chunk_info *c)
{
	fprintf(f, "chunk %" PRIu64 " at byte %" PRIu64 ": %s, %" PRIu32 " bytes stored, %" PRIu32
		" raw", c->index, c->offset, c->flags & SC_CHUNK_ZSTD ? "zstd" : "uncompressed",
		c->stored_size, c->raw_size);
	if (c->flags & SC_CHUNK_ZSTD && c->stored_size)
		fprintf(f, " (ratio %.1f)", (double)c->raw_size / c->stored_size);
	fprintf(f, ", %" PRIu32 " records, crc 0x%08" PRIx32 " ok\n", c->nrecords, c->crc32);
}

/*
 * The patch plan of an ELF object (record/discover.h), for measuring
 * coverage and debugging the patcher: a summary, then with functions one
 * line per candidate start.
 */
static int dump_patch_plan(const char *elf, bool functions)
{
	static const char *const flag_names[] = {
		"symbol", "fde", "called", "addr_taken", "jumped",
	};
	static const char *const site_names[] = {
		[REL_SITE_DISPLACED] = "displaced", [REL_SITE_NOPS] = "nops",
		[REL_SITE_HOOK_CALL] = "hook_call",
	};
	struct dsc_plan *p;
	const struct dsc_stats *st;
	int ret = dsc_plan_build(elf, &p);

	if (ret) {
		pr_err("%s: %s; give an x86-64 ELF program or library",
		       elf, ret == -EPROTONOSUPPORT ? "not x86-64" : strerror(-ret));
		return 1;
	}
	st = &p->stats;
	printf("patch plan %s: %zu candidates, %u patched, %zu refused, %.1f ms "
	       "(symbols %.1f, cfi %.1f, scan %.1f, decide %.1f), CPU %.1f ms\n",
	       elf, p->nfuncs, p->count[PATCH_OK], p->nfuncs - p->count[PATCH_OK],
	       st->total_ns / 1e6, st->symbols_ns / 1e6, st->cfi_ns / 1e6,
	       st->scan_ns / 1e6, st->decide_ns / 1e6, st->cpu_ns / 1e6);
	printf("scan: %zu instructions, %zu call targets, %zu jump targets, %zu addresses taken\n",
	       st->insns, st->calls, st->jumps, st->taken);
	printf("unpatched:");
	for (unsigned r = 1; r < PATCH_NREASONS; r++)
		if (p->count[r])
			printf(" %s %u", patch_reason_name(r), p->count[r]);
	printf("\n");
	if (p->count[PATCH_CALL_SITES])
		printf("call sites: %zu direct branches redirected to %u functions too short to patch\n",
		       p->ncalls, p->count[PATCH_CALL_SITES]);
	for (size_t i = 0; functions && i < p->nfuncs; i++) {
		const struct dsc_func *fn = &p->funcs[i];

		printf("0x%" PRIx64 " %" PRIu64 " %s", fn->addr, fn->size,
		       patch_reason_name(fn->reason));
		if (fn->reason == PATCH_OK)
			printf(" %s+%u len %u insns %u", site_names[fn->entry.site_kind],
			       fn->entry.skip, fn->entry.len, fn->entry.ninsn);
		if (fn->reason == PATCH_CALL_SITES)
			printf(" at %u", fn->ncall_sites);
		printf(" ");
		print_bits(stdout, fn->flags, flag_names, ARRAY_SIZE(flag_names));
		printf(" %s\n", fn->name ? fn->name : "-");
	}
	dsc_plan_free(p);
	return 0;
}

int cmd_dump(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "input", required_argument, NULL, 'i' },
		{ "stacks", no_argument,      NULL, 's' },
		{ "help",  no_argument,       NULL, 'h' },
		{ "patch-plan", required_argument, NULL, 'P' },
		{ "functions", no_argument,   NULL, 'F' },
		{ NULL, 0, NULL, 0 },
	};
	const char *plan = NULL;
	bool functions = false;
	const char *path = "stackclock.data";
	const struct sc_file_header *h;
	struct sc_reader *r;
	struct sc_record rec;
	uint64_t chunk = UINT64_MAX, nrec = 0, nchunks = 0;
	bool ended = false;
	char err[512];
	FILE *f = stdout;
	bool stacks = false;
	int c, ret;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":i:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'i':
			path = optarg;
			break;
		case 's':
			stacks = true;
			break;
		case 'h':
			fputs(dump_usage, stdout);
			return 0;
		case 'P':
			plan = optarg;
			break;
		case 'F':
			functions = true;
			break;
		default:
			return cmd_bad_option("dump", c, argv);
		}
	}
	if (optind < argc) {
		pr_err("dump: unexpected argument '%s' (use -i FILE)", argv[optind]);
		return 2;
	}
	if (plan)
		return dump_patch_plan(plan, functions);
	if (!*path) {
		pr_err("dump: -i needs a file name (see 'stackclock dump --help')");
		return 2;
	}
	if (stacks)
		return dump_stacks(f, path);

	ret = sc_reader_open(path, &r, err, sizeof(err));
	if (ret) {
		pr_err("%s: %s", path, err);
		return 1;
	}
	sc_reader_keep_unknown(r, 1);
	h = sc_reader_header(r);
	fprintf(f, "file %s: magic %.8s, version %u, min_version %u, features 0x%" PRIx32 " (",
		path, h->magic, h->version, h->min_version, h->features);
	print_bits(f, h->features, feat_names, ARRAY_SIZE(feat_names));
	fputs(")\n", f);

	while ((ret = sc_reader_next(r, &rec)) == SC_READ_OK) {
		const struct sc_chunk_info *ci = sc_reader_chunk(r);

		if (ci->index != chunk) {
			chunk = ci->index;
			nchunks++;
			dump_chunk(f, ci);
		}
		dump_record(f, &rec);
		ended |= rec.type == SC_REC_SESSION_END;
		nrec++;
	}
	fprintf(f, "%" PRIu64 " record%s in %" PRIu64 " chunk%s%s\n",
		nrec, nrec == 1 ? "" : "s", nchunks, nchunks == 1 ? "" : "s",
		ended || ret == SC_READ_DAMAGED ? "" :
		" (no session_end record: the recording did not finish)");
	fflush(f);
	if (ret == SC_READ_DAMAGED)
		pr_warn("%s: %s; the records before it are shown above", path, sc_reader_damage(r));
	sc_reader_close(r);
	return ret == SC_READ_DAMAGED ? 1 : 0;
}
