/*
 * Reports: the column catalogue, the session summary, building, sorting
 * and the SPEC invariant checker, shared by both methods.
 */
#include "analysis/internal.h"
#include "util/util.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Names are SPEC section 5's; keys sort ascending, values descending. */
static const struct an_column_info columns[AN_NCOLS] = {
	[AN_COL_FUNCTION]      = { "function", AN_T_STR, "name symbol func" },
	[AN_COL_MODULE]        = { "module", AN_T_STR, "dso object" },
	[AN_COL_TID]           = { "tid", AN_T_U64, "thread" },
	[AN_COL_PID]           = { "pid", AN_T_U64, "process" },
	[AN_COL_THREAD_NAME]   = { "thread_name", AN_T_STR, "comm" },
	[AN_COL_EXECUTABLE]    = { "executable", AN_T_STR, "exe" },
	[AN_COL_FILE]          = { "file", AN_T_STR, "source" },
	[AN_COL_LINE]          = { "line", AN_T_U64, "" },
	[AN_COL_ADDRESS]       = { "address", AN_T_ADDR, "addr ip pc" },
	[AN_COL_CALLEE]        = { "callee", AN_T_STR, "" },
	[AN_COL_CALLEE_MODULE] = { "callee_module", AN_T_STR, "" },
	[AN_COL_CALLS]         = { "calls", AN_T_U64, "count" },
	[AN_COL_COMPLETED]     = { "completed", AN_T_U64, "returned" },
	[AN_COL_EI]            = { "elapsed_inclusive_ns", AN_T_NS, "ei elapsed_inclusive inclusive incl" },
	[AN_COL_EE]            = { "elapsed_exclusive_ns", AN_T_NS, "ee elapsed_exclusive exclusive excl self" },
	[AN_COL_AI]            = { "application_inclusive_ns", AN_T_NS, "ai application_inclusive" },
	[AN_COL_AE]            = { "application_exclusive_ns", AN_T_NS, "ae application_exclusive" },
	[AN_COL_EI_PCT]        = { "elapsed_inclusive_pct", AN_T_PCT, "ei% ei_pct" },
	[AN_COL_EE_PCT]        = { "elapsed_exclusive_pct", AN_T_PCT, "ee% ee_pct" },
	[AN_COL_AI_PCT]        = { "application_inclusive_pct", AN_T_PCT, "ai% ai_pct" },
	[AN_COL_AE_PCT]        = { "application_exclusive_pct", AN_T_PCT, "ae% ae_pct" },
	[AN_COL_MIN_EI]        = { "min_elapsed_inclusive_ns", AN_T_NS, "min_ei min" },
	[AN_COL_MAX_EI]        = { "max_elapsed_inclusive_ns", AN_T_NS, "max_ei max" },
	[AN_COL_MEAN_EI]       = { "mean_elapsed_inclusive_ns", AN_T_NS, "mean_ei mean avg" },
	[AN_COL_MIN_EE]        = { "min_elapsed_exclusive_ns", AN_T_NS, "min_ee" },
	[AN_COL_MAX_EE]        = { "max_elapsed_exclusive_ns", AN_T_NS, "max_ee" },
	[AN_COL_MEAN_EE]       = { "mean_elapsed_exclusive_ns", AN_T_NS, "mean_ee" },
	[AN_COL_REPAIRS]       = { "repairs", AN_T_U64, "" },
	[AN_COL_OPEN_FRAMES]   = { "open_frames", AN_T_U64, "open" },
	[AN_COL_INCL_SAMPLES]  = { "inclusive_samples", AN_T_U64, "inclusive incl samples ei" },
	[AN_COL_EXCL_SAMPLES]  = { "exclusive_samples", AN_T_U64, "exclusive excl self ee" },
	[AN_COL_INCL_PCT]      = { "inclusive_pct", AN_T_PCT, "inclusive% incl%" },
	[AN_COL_EXCL_PCT]      = { "exclusive_pct", AN_T_PCT, "exclusive% excl%" },
	[AN_COL_BELOW_RES]     = { "below_resolution", AN_T_BOOL, "" },
	[AN_COL_SMP_INCL_PCT]  = { "sampled_inclusive_pct", AN_T_PCT,
				   "sampled_inclusive sampled_incl si% smp_incl" },
	[AN_COL_SMP_EXCL_PCT]  = { "sampled_exclusive_pct", AN_T_PCT,
				   "sampled_exclusive sampled_excl se% smp_excl sampled" },
};

const struct an_column_info *an_column_info(enum an_col c)
{
	return (unsigned)c < AN_NCOLS ? &columns[c] : NULL;
}

static bool word_in(const char *list, const char *w)
{
	size_t n = strlen(w);

	while (*list) {
		const char *e = strchr(list, ' ');
		size_t len = e ? (size_t)(e - list) : strlen(list);

		if (len == n && !strncasecmp(list, w, n))
			return true;
		list += len;
		while (*list == ' ')
			list++;
	}
	return false;
}

int an_column_lookup(const char *name)
{
	for (int c = 0; c < AN_NCOLS; c++)
		if (!strcasecmp(columns[c].name, name))
			return c;
	return -1;
}

bool an_column_known(const char *name)
{
	if (an_column_lookup(name) >= 0)
		return true;
	for (int c = 0; c < AN_NCOLS; c++)
		if (word_in(columns[c].aliases, name))
			return true;
	return false;
}

/* An alias may name a column of either method ("inclusive"): pick the one
 * this report has. */
int an_column_lookup_among(const enum an_col *cols, unsigned n, const char *name)
{
	int c = an_column_lookup(name);

	if (c >= 0)
		return c;
	for (unsigned i = 0; i < n; i++)
		if (word_in(columns[cols[i]].aliases, name))
			return cols[i];
	return -1;
}

static int column_lookup_in(const struct an_report *r, const char *name)
{
	return an_column_lookup_among(r->cols, r->ncols, name);
}

/* ---- column sets -------------------------------------------------------- */

#define INSTR_VALUES AN_COL_CALLS, AN_COL_EI, AN_COL_EE, AN_COL_AI, AN_COL_AE, \
	AN_COL_EI_PCT, AN_COL_EE_PCT, AN_COL_AI_PCT, AN_COL_AE_PCT
#define PER_CALL AN_COL_MIN_EI, AN_COL_MAX_EI, AN_COL_MEAN_EI, \
	AN_COL_MIN_EE, AN_COL_MAX_EE, AN_COL_MEAN_EE, AN_COL_COMPLETED
/* SPEC section 14; left out of a report whose recording did not sample */
#define SHARES AN_COL_SMP_INCL_PCT, AN_COL_SMP_EXCL_PCT
#define SAMPLE_VALUES AN_COL_INCL_SAMPLES, AN_COL_EXCL_SAMPLES, AN_COL_INCL_PCT, AN_COL_EXCL_PCT

/* below_resolution (SPEC section 14) where a row is the calls of code:
 * by function and module (a line's or call site's EE is not its calls'
 * own time, and a thread's calls are not one code's) */
static const enum an_col i_function[] = { AN_COL_FUNCTION, AN_COL_MODULE, INSTR_VALUES, SHARES,
	AN_COL_BELOW_RES, PER_CALL };
static const enum an_col i_module[] = { AN_COL_MODULE, INSTR_VALUES, SHARES, AN_COL_BELOW_RES, PER_CALL };
static const enum an_col i_thread[] = { AN_COL_TID, AN_COL_PID, AN_COL_THREAD_NAME, INSTR_VALUES, SHARES,
	PER_CALL, AN_COL_REPAIRS, AN_COL_OPEN_FRAMES };
static const enum an_col i_process[] = { AN_COL_PID, AN_COL_EXECUTABLE, INSTR_VALUES, SHARES, PER_CALL,
	AN_COL_REPAIRS, AN_COL_OPEN_FRAMES };
static const enum an_col i_callsite[] = { AN_COL_FUNCTION, AN_COL_MODULE, AN_COL_FILE, AN_COL_LINE,
	AN_COL_CALLEE, AN_COL_CALLEE_MODULE, INSTR_VALUES };
/* a line's inclusive share is not known: samples say which node was on
 * top, not from which line of its caller it was called */
static const enum an_col i_line[] = { AN_COL_FILE, AN_COL_LINE, AN_COL_FUNCTION, AN_COL_MODULE,
	INSTR_VALUES, AN_COL_SMP_EXCL_PCT };
static const enum an_col s_callsite[] = { AN_COL_FUNCTION, AN_COL_MODULE, AN_COL_FILE, AN_COL_LINE,
	AN_COL_CALLEE, AN_COL_CALLEE_MODULE, SAMPLE_VALUES };
static const enum an_col s_function[] = { AN_COL_FUNCTION, AN_COL_MODULE, SAMPLE_VALUES };
static const enum an_col s_module[] = { AN_COL_MODULE, SAMPLE_VALUES };
static const enum an_col s_thread[] = { AN_COL_TID, AN_COL_PID, AN_COL_THREAD_NAME, SAMPLE_VALUES };
static const enum an_col s_process[] = { AN_COL_PID, AN_COL_EXECUTABLE, SAMPLE_VALUES };
static const enum an_col s_line[] = { AN_COL_FILE, AN_COL_LINE, AN_COL_FUNCTION, AN_COL_MODULE,
	SAMPLE_VALUES };
static const enum an_col s_address[] = { AN_COL_ADDRESS, AN_COL_FUNCTION, AN_COL_MODULE,
	AN_COL_FILE, AN_COL_LINE, SAMPLE_VALUES };

#define SET(a) { a, ARRAY_SIZE(a) }
static const struct colset {
	const enum an_col *cols;
	unsigned n;
} colsets[2][AN_NGROUPS] = {
	[0] = {   /* instrumentation */
		[AN_BY_FUNCTION] = SET(i_function),
		[AN_BY_MODULE]   = SET(i_module),
		[AN_BY_THREAD]   = SET(i_thread),
		[AN_BY_PROCESS]  = SET(i_process),
		[AN_BY_LINE]     = SET(i_line),
		[AN_BY_CALLSITE] = SET(i_callsite),
	},
	[1] = {   /* sampling */
		[AN_BY_FUNCTION] = SET(s_function),
		[AN_BY_MODULE]   = SET(s_module),
		[AN_BY_THREAD]   = SET(s_thread),
		[AN_BY_PROCESS]  = SET(s_process),
		[AN_BY_LINE]     = SET(s_line),
		[AN_BY_CALLSITE] = SET(s_callsite),
		[AN_BY_ADDRESS]  = SET(s_address),
	},
};

const enum an_col *an_colset(enum sc_method m, enum an_group by, unsigned *n)
{
	const struct colset *cs = &colsets[m == SC_METHOD_SAMPLE][by];

	*n = cs->n;
	return cs->cols;
}

/* Tree nodes: a function row, or a thread or process row at the top. */
static const enum an_col it_thread[] = { AN_COL_TID, AN_COL_PID, AN_COL_THREAD_NAME,
	AN_COL_FUNCTION, AN_COL_MODULE, INSTR_VALUES, SHARES, PER_CALL };
static const enum an_col it_process[] = { AN_COL_PID, AN_COL_EXECUTABLE,
	AN_COL_FUNCTION, AN_COL_MODULE, INSTR_VALUES, SHARES, PER_CALL };
static const enum an_col st_thread[] = { AN_COL_TID, AN_COL_PID, AN_COL_THREAD_NAME,
	AN_COL_FUNCTION, AN_COL_MODULE, SAMPLE_VALUES };
static const enum an_col st_process[] = { AN_COL_PID, AN_COL_EXECUTABLE,
	AN_COL_FUNCTION, AN_COL_MODULE, SAMPLE_VALUES };
/* Callers and callees: the function's values without per-call statistics. */
static const enum an_col i_edge[] = { AN_COL_FUNCTION, AN_COL_MODULE, INSTR_VALUES, SHARES };

const enum an_col *an_tree_colset(enum sc_method m, enum an_group by, unsigned *n)
{
	bool smp = m == SC_METHOD_SAMPLE;

	if (by == AN_BY_THREAD) {
		*n = smp ? ARRAY_SIZE(st_thread) : ARRAY_SIZE(it_thread);
		return smp ? st_thread : it_thread;
	}
	if (by == AN_BY_PROCESS) {
		*n = smp ? ARRAY_SIZE(st_process) : ARRAY_SIZE(it_process);
		return smp ? st_process : it_process;
	}
	return an_colset(m, AN_BY_FUNCTION, n);
}

const enum an_col *an_edge_colset(enum sc_method m, unsigned *n)
{
	if (m == SC_METHOD_SAMPLE)
		return an_colset(m, AN_BY_FUNCTION, n);
	*n = ARRAY_SIZE(i_edge);
	return i_edge;
}

unsigned an_cols_for(const enum an_col *cols, unsigned n, const struct an_session *s,
		     enum an_col *out)
{
	unsigned k = 0;

	for (unsigned i = 0; i < n && k < AN_NCOLS; i++)
		if (!an_col_is_share(cols[i]) || s->have_shares)
			out[k++] = cols[i];
	return k;
}

static const char *const group_names[AN_NGROUPS] = {
	[AN_BY_FUNCTION] = "function",
	[AN_BY_MODULE]   = "module",
	[AN_BY_THREAD]   = "thread",
	[AN_BY_PROCESS]  = "process",
	[AN_BY_LINE]     = "line",
	[AN_BY_CALLSITE] = "callsite",
	[AN_BY_ADDRESS]  = "address",
};

const char *an_group_name(enum an_group g)
{
	return (unsigned)g < AN_NGROUPS ? group_names[g] : NULL;
}

int an_group_lookup(const char *name)
{
	for (int g = 0; g < AN_NGROUPS; g++)
		if (!strcmp(group_names[g], name))
			return g;
	return -1;
}

/* ---- rows --------------------------------------------------------------- */

struct an_row *an_report_add_row(struct an_report *r, size_t *alloc)
{
	struct an_row *row;

	ALLOC_GROW(r->rows, r->nrows + 1, *alloc);
	row = &r->rows[r->nrows];
	memset(row, 0, sizeof(*row));
	row->order = (uint32_t)r->nrows++;
	return row;
}

void an_row_set_u(struct an_row *row, enum an_col c, uint64_t v)
{
	row->v[c].u = v;
	row->v[c].present = true;
}

void an_row_set_resolution(struct an_row *row, const struct an_session *s)
{
	uint64_t calls = row->v[AN_COL_CALLS].u, ee = row->v[AN_COL_EE].u;

	if (row->v[AN_COL_TID].present || row->v[AN_COL_PID].present || row->v[AN_COL_LINE].present ||
	    row->v[AN_COL_CALLEE].present)
		return;                    /* see i_function above */

	/* ee / calls < resolution, without the division's rounding */
	an_row_set_u(row, AN_COL_BELOW_RES, calls && s->resolution_ns && ee < calls * s->resolution_ns);
}

void an_row_set_d(struct an_row *row, enum an_col c, double v)
{
	row->v[c].d = v;
	row->v[c].present = true;
}

void an_row_set_s(struct an_row *row, enum an_col c, const char *s)
{
	row->v[c].s = s;
	row->v[c].present = s != NULL;
}

bool an_report_has_col(const struct an_report *r, enum an_col c)
{
	for (unsigned i = 0; i < r->ncols; i++)
		if (r->cols[i] == c)
			return true;
	return false;
}

/* ---- session ------------------------------------------------------------ */

void an_profile_session(struct an_profile *p, struct an_session *s)
{
	memset(s, 0, sizeof(*s));
	an_session_fill(p, s);
}

/* The processes, threads and images a profile has data of. */
struct counted {
	struct an_map pids;       /* image -> its pid */
	struct an_map procs, threads, images;
};

/* Image proc_id (and its thread tid, or AN_NONE) has data.  Its process
 * is its pid (an exec keeps the process and its threads), or the image
 * itself when no process record says (a key above every pid). */
static void seen(struct counted *c, uint32_t proc_id, uint32_t tid)
{
	uint32_t pid = an_map_get(&c->pids, proc_id, 0);
	uint64_t k = pid != AN_NONE ? pid : (1ull << 32) | proc_id;

	an_map_put(&c->images, proc_id, 0, 1, NULL);
	an_map_put(&c->procs, k, 0, 1, NULL);
	if (tid != AN_NONE)
		an_map_put(&c->threads, k, tid, 1, NULL);
}

void an_session_fill(struct an_profile *p, struct an_session *s)
{
	struct counted ctr = { 0 };

	s->method = an_profile_method(p);
	if (!p->argv && p->argc) {
		p->argv = xcalloc(p->argc, sizeof(*p->argv));
		for (size_t i = 0; i < p->argc; i++)
			p->argv[i] = an_str(&p->strs, p->argv_sid[i]);
	}
	s->argv = p->argv;
	s->argc = (uint32_t)p->argc;
	s->attached = p->have_session && (p->sess.flags & SC_SESS_ATTACHED);
	s->have_end = p->have_end;
	s->exit_status = p->have_end ? p->end.exit_status : -1;

	/* processes and threads: those recorded, and those with data; an
	 * image is a process's (pid's) until an exec, which starts another
	 * image of the same process, on the same threads */
	for (size_t i = 0; i < p->nprocs; i++)
		an_map_put(&ctr.pids, p->procs[i].proc_id, 0, p->procs[i].pid, NULL);
	for (size_t i = 0; i < p->nprocs; i++)
		seen(&ctr, p->procs[i].proc_id, AN_NONE);
	for (size_t i = 0; i < p->tname_map.cap; i++) {
		const struct an_map_slot *sl = &p->tname_map.slots[i];

		if (sl->val != AN_NONE)
			seen(&ctr, (uint32_t)sl->a, (uint32_t)sl->b);
	}
	for (size_t i = 0; i < p->nthreads; i++)
		seen(&ctr, p->threads[i].proc_id, p->threads[i].tid);
	for (size_t i = 0; i < p->nsamples; i++)
		seen(&ctr, p->samples[i].proc_id, p->samples[i].tid);
	s->processes = ctr.procs.n;
	s->threads = ctr.threads.n;
	s->images = ctr.images.n;
	an_map_release(&ctr.procs);
	an_map_release(&ctr.threads);
	an_map_release(&ctr.images);
	an_map_release(&ctr.pids);

	if (p->have_end)
		s->duration_ns = p->end.duration_ns;
	else if (p->stats.last_ns > p->stats.first_ns)
		s->duration_ns = p->stats.last_ns - p->stats.first_ns;

	s->os_requested = p->have_session ? p->sess.os_requested : 0;
	/*
	 * Observed: what the recorder confirmed, or without its end record
	 * the categories that have events; never pretend for the others.
	 */
	memcpy(s->os_count, p->stats.os_count, sizeof(s->os_count));
	s->os_observed = p->have_end ? p->end.os_observed & SC_OS_ALL : 0;
	if (!p->have_end)
		for (int c = 0; c < SC_OS_NCAT; c++)
			if (s->os_count[c])
				s->os_observed |= SC_OS_BIT(c);
	s->repairs = p->stats.repairs;
	s->open_frames = p->stats.open_frames;
	s->events = p->stats.events;
	/* the same losses may be in both places: take the larger, never the sum */
	s->lost_events = p->stats.lost_events + p->lost_events_rec;
	if (p->have_end && p->end.lost_events > s->lost_events)
		s->lost_events = p->end.lost_events;
	s->lost_samples = p->lost_samples_rec;
	if (p->have_end && p->end.lost_samples > s->lost_samples)
		s->lost_samples = p->end.lost_samples;
	s->unwind_failures = p->lost_unwind_rec;
	s->lost_os_records = p->lost_os_rec;
	if (p->probe_cost.samples) {
		double sum = 0;

		for (int k = 0; k < 4; k++)
			sum += (double)p->probe_cost.cost_ps[k];
		/* one interval per event: the mean over the four kinds */
		s->probe_cost_ns = sum / 4 / 1000;
	}
	s->probe_removed_ns = p->removed_ns;
	s->resolution_ns = (uint64_t)(2 * s->probe_cost_ns + 0.5);
	s->raw_times = p->raw_times;
	s->have_patch = p->have_patch;
	s->patched = p->patched;
	s->unhooked_returns = p->unhooked_rec;
	s->unrecorded = p->unrec;
	s->nunrecorded = p->nunrec;
	memcpy(s->unpatched, p->unpatched, sizeof(s->unpatched));
	s->frequency_hz = p->have_session ? p->sess.frequency_hz : 0;
	if (s->method == SC_METHOD_INSTRUMENT) {
		an_shares_check(p);
		/* frequency 0: the recording did not sample (SPEC section 14) */
		bool off = p->have_session && !p->sess.frequency_hz;

		s->have_shares = p->shares_ok && !off;
		s->shares_damage = p->shares_why[0] && !off ? p->shares_why : NULL;
		if (s->have_shares) {
			s->samples = p->smp_total;
			s->probe_samples = p->probe_total;
		}
		s->have_causes = p->causes_ok;
		s->causes_damage = p->causes_why[0] ? p->causes_why : NULL;
		if (s->have_causes)
			memcpy(s->repairs_by_cause, p->causes, sizeof(s->repairs_by_cause));
	}
	s->bad_records = p->bad_records;
	s->damage = p->damage;
}

/* ---- build -------------------------------------------------------------- */

void an_unnamed_add(const struct an_profile *p, struct an_report *r, uint32_t mod,
		    uint64_t value)
{
	struct an_session *s = &r->session;
	const char *module = an_str(&p->strs, p->mods[mod]);
	size_t i;

	for (i = 0; i < s->nunnamed && s->unnamed[i].module != module; i++)
		;
	if (i == s->nunnamed) {
		s->unnamed = xrealloc(s->unnamed, (i + 1) * sizeof(*s->unnamed));
		s->unnamed[i] = (struct an_unnamed){ .module = module };
		s->nunnamed++;
	}
	s->unnamed[i].value += value;
}

static int cmp_unnamed(const void *a, const void *b)
{
	const struct an_unnamed *x = a, *y = b;

	if (x->value != y->value)
		return x->value > y->value ? -1 : 1;
	return strcmp(x->module, y->module);
}

/* Shares of the session and hints, once the builder has added the values. */
static void unnamed_finish(struct an_session *s)
{
	uint64_t total = s->method == SC_METHOD_SAMPLE ? s->samples : s->elapsed_inclusive_ns;
	uint64_t sum = 0;

	if (s->nunnamed > 1)
		qsort(s->unnamed, s->nunnamed, sizeof(*s->unnamed), cmp_unnamed);
	for (size_t i = 0; i < s->nunnamed; i++) {
		s->unnamed[i].pct = an_pct(s->unnamed[i].value, total);
		s->unnamed[i].hint = sym_debug_hint(s->unnamed[i].module);
		sum += s->unnamed[i].value;
	}
	s->unnamed_pct = an_pct(sum, total);
}

int an_report_build(struct an_profile *p, const struct an_report_options *o,
		    struct an_report **out, char *err, size_t errlen)
{
	enum sc_method m = an_profile_method(p);
	struct an_report *r;
	const struct colset *cs;
	int ret;

	*out = NULL;
	if ((unsigned)o->by >= AN_NGROUPS) {
		snprintf(err, errlen, "unknown grouping");
		return -EINVAL;
	}
	if (!m) {
		snprintf(err, errlen, "holds no profile data (no session, call-tree or sample records)");
		return -ENODATA;
	}
	cs = &colsets[m == SC_METHOD_SAMPLE][o->by];
	if (!cs->cols) {
		/* only addresses: instrumentation records no instruction addresses */
		snprintf(err, errlen, "--by %s needs a sampling recording and this one is "
			 "instrumented (try --by line or --by callsite)", group_names[o->by]);
		return -EINVAL;
	}
	if (m == SC_METHOD_INSTRUMENT && (o->by == AN_BY_CALLSITE || o->by == AN_BY_LINE) &&
	    o->app_time == AN_APP_EXACT) {
		snprintf(err, errlen, "--app-time=exact is not recorded per call site; "
			 "use the default interval rule with --by %s", group_names[o->by]);
		return -EINVAL;
	}
	r = xcalloc(1, sizeof(*r));
	r->profile = p;
	r->by = o->by;
	r->partition = o->by != AN_BY_CALLSITE;
	an_session_fill(p, &r->session);
	r->ncols = an_cols_for(cs->cols, cs->n, &r->session, r->colbuf);
	r->cols = r->colbuf;
	r->session.app_time = o->app_time;
	if (m == SC_METHOD_SAMPLE)
		ret = an_build_sample(p, o, r, err, errlen);
	else
		ret = an_build_instrument(p, o, r, err, errlen);
	if (ret < 0) {
		an_report_free(r);
		return ret;
	}
	unnamed_finish(&r->session);
	an_report_sort(r, an_report_default_sort(r));
	*out = r;
	return 0;
}

void an_report_free(struct an_report *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->session.nunnamed; i++)
		free(r->session.unnamed[i].hint);
	free(r->session.unnamed);
	free(r->rows);
	free(r);
}

/* ---- sorting ------------------------------------------------------------ */

bool an_col_is_key(enum an_col c)
{
	return c <= AN_COL_CALLEE_MODULE;
}

static int cmp_rows(const void *pa, const void *pb, void *arg)
{
	const struct an_row *a = pa, *b = pb;
	enum an_col sort_col = *(const enum an_col *)arg;
	const struct an_value *va = &a->v[sort_col], *vb = &b->v[sort_col];
	int d = 0;

	if (va->present != vb->present) {
		d = va->present ? -1 : 1;     /* absent values last */
	} else if (va->present) {
		switch (columns[sort_col].type) {
		case AN_T_STR:
			d = strcmp(va->s, vb->s);
			break;
		case AN_T_PCT:
			d = va->d < vb->d ? -1 : va->d > vb->d;
			break;
		default:
			d = va->u < vb->u ? -1 : va->u > vb->u;
			break;
		}
		if (!an_col_is_key(sort_col))
			d = -d;
	}
	if (d)
		return d;
	return a->order < b->order ? -1 : a->order > b->order;
}

void an_rows_sort(struct an_row *rows, size_t n, enum an_col c)
{
	if (n > 1)
		qsort_r(rows, n, sizeof(*rows), cmp_rows, &c);
}

int an_report_sort(struct an_report *r, enum an_col c)
{
	if (!an_report_has_col(r, c))
		return -EINVAL;
	an_rows_sort(r->rows, r->nrows, c);
	return 0;
}

enum an_col an_report_default_sort(const struct an_report *r)
{
	return r->session.method == SC_METHOD_SAMPLE ? AN_COL_INCL_SAMPLES : AN_COL_EI;
}

int an_report_sort_by_name(struct an_report *r, const char *name)
{
	int c = column_lookup_in(r, name);

	if (c < 0 || !an_report_has_col(r, c))
		return -EINVAL;
	return an_report_sort(r, c);
}

/* ---- invariants --------------------------------------------------------- */

static const char *row_label(const struct an_row *row, char *buf, size_t len)
{
	if (row->v[AN_COL_FUNCTION].present)
		snprintf(buf, len, "%s", row->v[AN_COL_FUNCTION].s);
	else if (row->v[AN_COL_MODULE].present)
		snprintf(buf, len, "%s", row->v[AN_COL_MODULE].s);
	else if (row->v[AN_COL_TID].present)
		snprintf(buf, len, "tid %" PRIu64, row->v[AN_COL_TID].u);
	else if (row->v[AN_COL_PID].present)
		snprintf(buf, len, "pid %" PRIu64, row->v[AN_COL_PID].u);
	else
		snprintf(buf, len, "row %u", row->order);
	return buf;
}

static int fail(char *why, size_t len, const char *fmt, ...) SC_PRINTF(3, 4);
static int fail(char *why, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, len, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

static bool pct_ok(const struct an_row *row, enum an_col c, uint64_t x, uint64_t total)
{
	return row->v[c].present && fabs(row->v[c].d - an_pct(x, total)) <= 1e-9 * 100;
}

/*
 * SPEC section 14's shares: 0 <= exclusive <= inclusive <= 100 per row
 * (a line row has no inclusive share), and the exclusive shares of a
 * partition add up to at most 100 (the samples with no call open are in
 * no function's row); repairs by cause split repairs and open frames.
 */
static int check_shares(const struct an_report *r, char *why, size_t len)
{
	const struct an_session *s = &r->session;
	bool incl = an_report_has_col(r, AN_COL_SMP_INCL_PCT);
	double sum = 0;
	char lb[160];

	if (s->have_causes) {
		const uint64_t *c = s->repairs_by_cause;

		if (c[SC_REPAIR_LONGJMP] + c[SC_REPAIR_EXCEPTION] + c[SC_REPAIR_SIGNAL] +
		    c[SC_REPAIR_OTHER] != s->repairs || c[SC_REPAIR_EXIT] + c[SC_REPAIR_KILL] + c[SC_REPAIR_DETACH] != s->open_frames)
			return fail(why, len, "repairs by cause do not add up to repairs %" PRIu64
				    " and open frames %" PRIu64, s->repairs, s->open_frames);
	}
	if (!s->have_shares) {
		for (unsigned i = 0; i < r->ncols; i++)
			if (an_col_is_share(r->cols[i]))
				return fail(why, len, "sampled shares shown for a recording without them");
		return 0;
	}
	for (size_t i = 0; i < r->nrows; i++) {
		const struct an_row *row = &r->rows[i];
		double se = row->v[AN_COL_SMP_EXCL_PCT].d, si = row->v[AN_COL_SMP_INCL_PCT].d;

		if (!an_report_has_col(r, AN_COL_SMP_EXCL_PCT))
			break;
		if (!row->v[AN_COL_SMP_EXCL_PCT].present || (incl && !row->v[AN_COL_SMP_INCL_PCT].present))
			return fail(why, len, "%s: a sampled share is missing", row_label(row, lb, sizeof(lb)));
		if (se < 0 || se > 100 + 1e-9 || (incl && (se > si + 1e-9 || si > 100 + 1e-9)))
			return fail(why, len, "%s: 0 <= sampled exclusive <= inclusive <= 100 broken "
				    "(%.6f, %.6f)", row_label(row, lb, sizeof(lb)), se, si);
		sum += se;
	}
	if (r->partition && sum > 100 + 1e-6)
		return fail(why, len, "sampled exclusive shares over %s rows sum to %.6f%%",
			    group_names[r->by], sum);
	return 0;
}

static int check_instrument(const struct an_report *r, char *why, size_t len)
{
	const struct an_session *s = &r->session;
	uint64_t sum_ee = 0, sum_ae = 0;
	char lb[160];
	int ret = check_shares(r, why, len);

	if (ret < 0)
		return ret;

	for (size_t i = 0; i < r->nrows; i++) {
		const struct an_row *row = &r->rows[i];
		uint64_t ei = row->v[AN_COL_EI].u, ee = row->v[AN_COL_EE].u;
		uint64_t ai = row->v[AN_COL_AI].u, ae = row->v[AN_COL_AE].u;

		if (!row->v[AN_COL_EI].present || !row->v[AN_COL_EE].present ||
		    !row->v[AN_COL_AI].present || !row->v[AN_COL_AE].present)
			return fail(why, len, "%s: a time value is missing", row_label(row, lb, sizeof(lb)));
		if (!(ae <= ee && ee <= ei))
			return fail(why, len, "%s: AE <= EE <= EI broken (AE %" PRIu64 ", EE %" PRIu64
				    ", EI %" PRIu64 ")", row_label(row, lb, sizeof(lb)), ae, ee, ei);
		if (!(ae <= ai && ai <= ei))
			return fail(why, len, "%s: AE <= AI <= EI broken (AE %" PRIu64 ", AI %" PRIu64
				    ", EI %" PRIu64 ")", row_label(row, lb, sizeof(lb)), ae, ai, ei);
		if (r->partition && (ei > s->elapsed_inclusive_ns || ai > s->application_inclusive_ns))
			return fail(why, len, "%s: inclusive time above the session's",
				    row_label(row, lb, sizeof(lb)));
		if (!pct_ok(row, AN_COL_EI_PCT, ei, s->elapsed_inclusive_ns) ||
		    !pct_ok(row, AN_COL_EE_PCT, ee, s->elapsed_inclusive_ns) ||
		    !pct_ok(row, AN_COL_AI_PCT, ai, s->application_inclusive_ns) ||
		    !pct_ok(row, AN_COL_AE_PCT, ae, s->application_inclusive_ns))
			return fail(why, len, "%s: a percentage differs from its definition",
				    row_label(row, lb, sizeof(lb)));
		/* no minimum or maximum with raw times: nothing to hold the mean */
		if (row->v[AN_COL_MEAN_EI].present && row->v[AN_COL_MIN_EI].present &&
		    !(row->v[AN_COL_MIN_EI].u <= row->v[AN_COL_MEAN_EI].u &&
		      row->v[AN_COL_MEAN_EI].u <= row->v[AN_COL_MAX_EI].u &&
		      row->v[AN_COL_MIN_EE].u <= row->v[AN_COL_MEAN_EE].u &&
		      row->v[AN_COL_MEAN_EE].u <= row->v[AN_COL_MAX_EE].u))
			return fail(why, len, "%s: per-call min <= mean <= max broken",
				    row_label(row, lb, sizeof(lb)));
		if (row->v[AN_COL_COMPLETED].present &&
		    row->v[AN_COL_COMPLETED].u > row->v[AN_COL_CALLS].u)
			return fail(why, len, "%s: more completed calls than calls",
				    row_label(row, lb, sizeof(lb)));
		sum_ee += ee;
		sum_ae += ae;
	}
	if (r->partition && sum_ee != s->elapsed_inclusive_ns)
		return fail(why, len, "sum of EE over %s rows %" PRIu64 " != session EI %" PRIu64,
			    group_names[r->by], sum_ee, s->elapsed_inclusive_ns);
	if (r->partition && sum_ae != s->application_inclusive_ns)
		return fail(why, len, "sum of AE over %s rows %" PRIu64 " != session AI %" PRIu64,
			    group_names[r->by], sum_ae, s->application_inclusive_ns);
	if (s->application_inclusive_ns > s->elapsed_inclusive_ns)
		return fail(why, len, "session AI %" PRIu64 " > session EI %" PRIu64,
			    s->application_inclusive_ns, s->elapsed_inclusive_ns);
	return 0;
}

static int check_sample(const struct an_report *r, char *why, size_t len)
{
	const struct an_session *s = &r->session;
	uint64_t sum = 0;
	char lb[160];

	for (size_t i = 0; i < r->nrows; i++) {
		const struct an_row *row = &r->rows[i];
		uint64_t in = row->v[AN_COL_INCL_SAMPLES].u, ex = row->v[AN_COL_EXCL_SAMPLES].u;

		if (!(ex <= in && in <= s->samples))
			return fail(why, len, "%s: exclusive <= inclusive <= samples broken (%" PRIu64
				    " %" PRIu64 " %" PRIu64 ")", row_label(row, lb, sizeof(lb)),
				    ex, in, s->samples);
		if (!pct_ok(row, AN_COL_INCL_PCT, in, s->samples) ||
		    !pct_ok(row, AN_COL_EXCL_PCT, ex, s->samples))
			return fail(why, len, "%s: a percentage differs from its definition",
				    row_label(row, lb, sizeof(lb)));
		sum += ex;
	}
	if (r->partition && sum != s->samples)
		return fail(why, len, "sum of exclusive samples over %s rows %" PRIu64
			    " != samples %" PRIu64, group_names[r->by], sum, s->samples);
	if (s->root_reached > s->samples || s->truncated > s->samples)
		return fail(why, len, "more root-reaching or truncated samples than samples");
	return 0;
}

int an_report_check(const struct an_report *r, char *why, size_t whylen)
{
	if (r->session.method == SC_METHOD_SAMPLE)
		return check_sample(r, why, whylen);
	return check_instrument(r, why, whylen);
}
