/*
 * analysis — turning the records of a data file into report rows.
 *
 * Two steps, both methods from the same code:
 *
 *  1. an_profile: the recording, loaded.  Records are fed one by one
 *     (an_profile_add) or a whole file is read (an_profile_load).  The
 *     records are already aggregated by the recorder (calling-context-tree
 *     nodes for instrumentation, distinct stacks with counts for sampling),
 *     and the profile keeps them so: its memory grows with the number of
 *     distinct call paths and stacks, never with the recording's length.
 *     Addresses are symbolized through a resolver (symbols.h by default, a
 *     fake one in tests), once per (process image, address), and functions
 *     are identified by their (module, name) strings: two addresses that
 *     resolve to the same name in the same module are one function.
 *
 *  2. an_report: one grouping (--by) of the profile as typed rows plus a
 *     session summary, independent of any output format.  The numbers mean
 *     exactly what SPEC.md sections 2 and 3 say:
 *       instrumentation: EE/AE of a function = sum over its CCT nodes of the
 *       stored exclusive values; EI/AI = sum over its outermost nodes (no
 *       ancestor of the same function) of their subtree's exclusive sums, so
 *       a recursive function is charged once per interval; session EI/AI =
 *       sum of all exclusive values; EI% = 100*EI/SessionEI,
 *       EE% = 100*EE/SessionEI, AI% = 100*AI/SessionAI,
 *       AE% = 100*AE/SessionAI (0 when the denominator is 0).
 *       sampling: per sample the leaf's exclusive count and the inclusive
 *       count of every distinct function (module, line, address) on the
 *       inline-expanded stack go up by one; % = 100*count/total samples.
 *     an_report_check() verifies SPEC's invariants on a report.
 *
 * Ownership: an_profile_free() frees the profile; an_report_free() the
 * report.  A report points into its profile (strings, session), so it must
 * be freed first.  Every string in a report is owned by the profile.
 * Nothing here is thread-safe; nothing exits: errors are -errno plus a
 * one-line message in the caller's buffer.
 */
#ifndef SC_ANALYSIS_H
#define SC_ANALYSIS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "format/scdata.h"
#include "symbols/symbols.h"

/* ---- resolver ----------------------------------------------------------- */

/*
 * How the profile turns addresses into frames; same contract as
 * sym_resolve() (innermost frame first, inlined frames before the function
 * holding them, at least one frame).  Strings must stay valid until the
 * profile is freed; they need not be interned (the profile interns them).
 */
struct an_resolver {
	int (*resolve)(void *ctx, uint32_t proc_id, uint64_t addr, bool is_return,
		       struct sym_frame *out, int max);
	/* Optional: called for every SC_REC_MODULE record. */
	void (*add_module)(void *ctx, const struct sc_rec_module *m, const char *path);
	void *ctx;
};

/* ---- profile ------------------------------------------------------------ */

struct an_session;

struct an_profile;

/*
 * A new, empty profile resolving through res (copied), or through its own
 * sym_session when res is NULL.
 */
struct an_profile *an_profile_new(const struct an_resolver *res);
void an_profile_free(struct an_profile *p);          /* accepts NULL */

/*
 * Instrumentation: load the values as measured, the probes' cost not taken
 * out (report --raw-times; SPEC section 10).  Call before loading.  Per-call
 * minimum and maximum have no raw form: they are then absent.
 */
void an_profile_set_raw_times(struct an_profile *p, bool raw);

/*
 * Feed one record (as returned by sc_reader_next).  Records that fail
 * sc_record_check() are counted and skipped.  Returns 0 or -EINVAL for a
 * record that was skipped.
 */
int an_profile_add(struct an_profile *p, const struct sc_record *rec);

/*
 * Open path, feed every record, close.  Returns 0, or -errno with a one-line
 * message naming the file in err.  A damaged file is read up to the damage:
 * the return is 0 and *damaged (if given) is set to the reader's
 * description, valid until the profile is freed.
 */
int an_profile_load(struct an_profile *p, const char *path,
		    const char **damaged, char *err, size_t errlen);

/*
 * The session's description without building a report: method, command,
 * processes and threads, duration, exit, and for sampling the frequency
 * and lost samples (no totals: those come with a report).  Strings are the
 * profile's.
 */
void an_profile_session(struct an_profile *p, struct an_session *s);

/* The method of the recording (from the session record, or guessed from
 * the record kinds seen), or 0 if the profile holds no profile data. */
enum sc_method an_profile_method(const struct an_profile *p);

/* ---- columns ------------------------------------------------------------ */

enum an_col {
	/* keys */
	AN_COL_FUNCTION,
	AN_COL_MODULE,
	AN_COL_TID,
	AN_COL_PID,
	AN_COL_THREAD_NAME,
	AN_COL_EXECUTABLE,
	AN_COL_FILE,
	AN_COL_LINE,
	AN_COL_ADDRESS,
	AN_COL_CALLEE,
	AN_COL_CALLEE_MODULE,
	/* instrumentation values */
	AN_COL_CALLS,
	AN_COL_COMPLETED,
	AN_COL_EI,
	AN_COL_EE,
	AN_COL_AI,
	AN_COL_AE,
	AN_COL_EI_PCT,
	AN_COL_EE_PCT,
	AN_COL_AI_PCT,
	AN_COL_AE_PCT,
	AN_COL_MIN_EI,
	AN_COL_MAX_EI,
	AN_COL_MEAN_EI,
	AN_COL_MIN_EE,
	AN_COL_MAX_EE,
	AN_COL_MEAN_EE,
	AN_COL_REPAIRS,           /* thread and process rows: SPEC section 2's */
	AN_COL_OPEN_FRAMES,       /* repairs and frames open at the end */
	/* sampling values */
	AN_COL_INCL_SAMPLES,
	AN_COL_EXCL_SAMPLES,
	AN_COL_INCL_PCT,
	AN_COL_EXCL_PCT,
	AN_COL_BELOW_RES,       /* instrumentation: mean EE per call under resolution_ns */
	/* instrumentation, SPEC section 14: shares of the program's own
	 * samples (present only when the recording sampled) */
	AN_COL_SMP_INCL_PCT,
	AN_COL_SMP_EXCL_PCT,
	AN_NCOLS
};

enum an_type {
	AN_T_STR,       /* v.s, may be absent */
	AN_T_U64,       /* v.u, a count or a number */
	AN_T_NS,        /* v.u, nanoseconds */
	AN_T_PCT,       /* v.d, a percentage */
	AN_T_ADDR,      /* v.u, an address (hex in text formats) */
	AN_T_BOOL,      /* v.u, 0 or 1 (true/false in text formats) */
};

struct an_column_info {
	const char *name;         /* JSON/CSV name, SPEC section 5 */
	enum an_type type;
	const char *aliases;      /* other names --sort accepts, space separated */
};

const struct an_column_info *an_column_info(enum an_col c);
/* Column id of a JSON/CSV column name, or -1. */
int an_column_lookup(const char *name);
/* Column by name, or by an alias of one of cols; -1 if none. */
int an_column_lookup_among(const enum an_col *cols, unsigned n, const char *name);
/* Whether name is a column name or an alias of some column (--sort). */
bool an_column_known(const char *name);
/* Key columns (names, ids, lines) sort ascending, values descending. */
bool an_col_is_key(enum an_col c);
/* The sampled shares of instrumentation (SPEC section 14). */
static inline bool an_col_is_share(enum an_col c)
{
	return c == AN_COL_SMP_INCL_PCT || c == AN_COL_SMP_EXCL_PCT;
}

/* ---- report ------------------------------------------------------------- */

enum an_group {
	AN_BY_FUNCTION,
	AN_BY_MODULE,
	AN_BY_THREAD,
	AN_BY_PROCESS,
	AN_BY_LINE,
	AN_BY_CALLSITE,
	AN_BY_ADDRESS,
	AN_NGROUPS
};
const char *an_group_name(enum an_group g);
int an_group_lookup(const char *name);    /* enum an_group or -1 */

enum an_app_time { AN_APP_INTERVAL, AN_APP_EXACT };

struct an_value {
	union {
		uint64_t u;
		double d;
		const char *s;
	};
	bool present;             /* false: no value (JSON null, CSV empty) */
};

struct an_row {
	struct an_value v[AN_NCOLS];
	uint32_t order;           /* creation order: the last sort key */
};

/*
 * Code without symbols (docs/values.md, "Code without symbols"), per module: the exclusive samples
 * (sampling) or elapsed exclusive ns (instrumentation) of its functions
 * named by offset, their share of the session total, and what to install
 * for names.
 */
struct an_unnamed {
	const char *module;       /* owned by the profile */
	uint64_t value;
	double pct;
	char *hint;               /* owned by the report */
};

/* A process the recording could not follow (SC_REC_UNRECORDED). */
struct an_unrecorded {
	uint32_t pid;
	uint32_t reason;          /* enum sc_exec_why (format/execcheck.h) */
	const char *path;         /* owned by the profile */
};

struct an_session {
	enum sc_method method;
	const char *const *argv;  /* the profiled command, argc strings */
	uint32_t argc;
	uint64_t processes, threads;  /* by pid (an exec keeps its process) */
	uint64_t images;          /* process images: every exec is one more */
	uint64_t duration_ns;
	bool have_end;            /* a SESSION_END record was read */
	bool attached;
	int32_t exit_status;
	/* instrumentation */
	enum an_app_time app_time;
	uint64_t elapsed_inclusive_ns, application_inclusive_ns;
	uint32_t os_requested, os_observed;   /* SC_OS_BIT masks */
	uint64_t os_count[SC_OS_NCAT];
	uint64_t repairs, open_frames, lost_events, events;
	uint64_t lost_os_records;             /* OS-event records the kernel dropped */
	double probe_cost_ns;                 /* calibrated cost taken out per event, 0: none */
	/* SPEC section 14: the per-call time below which a row's interval
	 * values are not reliable: the probe cost removed from one call (its
	 * entry's and its exit's), 0 when no cost was measured */
	uint64_t resolution_ns;
	uint64_t probe_removed_ns;            /* taken out in all */
	bool raw_times;                       /* values shown with the cost left in */
	/* run-time patching (SPEC section 10): functions patched, and left
	 * alone per enum patch_reason (record/reloc.h), over the objects
	 * patched (each once) */
	bool have_patch;
	uint64_t patched, unpatched[32];
	uint64_t unhooked_returns;    /* patched frames whose exit was inferred */
	/*
	 * SPEC section 14, sampled shares: have_shares when the recording
	 * sampled its threads (frequency_hz > 0) and the records add up;
	 * then samples is the program's own (probe_samples, those in the
	 * probes' code, left out) and is the shares' denominator.  When the
	 * records are damaged, shares_damage says how and there are none.
	 */
	bool have_shares;
	uint64_t probe_samples;
	const char *shares_damage;
	/* repairs split by cause (enum sc_repair_cause): the first four sum
	 * to repairs, the last two to open_frames; causes_damage as above */
	bool have_causes;
	uint64_t repairs_by_cause[SC_REPAIR_NCAUSE];
	const char *causes_damage;
	/* sampling (and samples, frequency_hz of instrumentation's shares) */
	uint64_t samples, frequency_hz, lost_samples, unwind_failures;
	uint64_t root_reached, truncated;     /* samples with SC_STACK_ROOT / _TRUNCATED */
	double root_reached_pct, truncated_pct;
	/* code without symbols: share of the session, per module (largest
	 * first) */
	double unnamed_pct;
	struct an_unnamed *unnamed;
	size_t nunnamed;
	/* processes not recorded, and why */
	const struct an_unrecorded *unrecorded;   /* owned by the profile */
	size_t nunrecorded;
	/* records skipped as malformed while loading */
	uint64_t bad_records;
	/* the reader's description of damage (file read up to it), or NULL */
	const char *damage;
};

struct an_report {
	const struct an_profile *profile;
	enum an_group by;
	struct an_session session;
	const enum an_col *cols;  /* the columns of this report, output order */
	unsigned ncols;
	enum an_col colbuf[AN_NCOLS];   /* cols when some were left out */
	struct an_row *rows;
	size_t nrows;
	/* whether the rows partition the exclusive values (all but callsite) */
	bool partition;
};

struct an_report_options {
	enum an_group by;
	enum an_app_time app_time;
};

/*
 * Build one grouping.  Returns 0, or -EINVAL with a one-line reason in err
 * when the grouping does not apply to the recording's method (for example
 * --by line of an instrumentation recording) or the profile is empty.
 */
int an_report_build(struct an_profile *p, const struct an_report_options *o,
		    struct an_report **out, char *err, size_t errlen);
void an_report_free(struct an_report *r);            /* accepts NULL */

/* Whether column c is one of the report's columns. */
bool an_report_has_col(const struct an_report *r, enum an_col c);

/*
 * Sort rows by column c: numbers descending, strings ascending; ties keep
 * creation order.  Returns -EINVAL if c is not a column of the report.
 */
int an_report_sort(struct an_report *r, enum an_col c);
/* Same by a column name or alias (--sort); -EINVAL if none of the report's. */
int an_report_sort_by_name(struct an_report *r, const char *name);
/* The default sort column: EI for instrumentation, inclusive samples for
 * sampling. */
enum an_col an_report_default_sort(const struct an_report *r);

/*
 * Verify SPEC's invariants on a report (all rows, before any --top):
 * instrumentation: sum of EE == session EI and sum of AE == session AI over
 * a partitioning grouping; per row AE <= EE <= EI and AE <= AI <= EI; the
 * percentages equal their definitions; per-call min <= mean <= max.
 * sampling: sum of exclusive == samples over a partitioning grouping; per
 * row exclusive <= inclusive <= samples.
 * Returns 0, or -EINVAL with the first violation described in why.
 */
int an_report_check(const struct an_report *r, char *why, size_t whylen);

/* Sort any rows by column c as an_report_sort() does. */
void an_rows_sort(struct an_row *rows, size_t n, enum an_col c);

/* ---- views of the call stacks (SPEC section 6) -------------------------- */

/*
 * The call tree: the calling-context tree (cct.h) merged over threads and
 * processes (by function), or one tree per thread or process (by thread,
 * by process: the roots are thread or process rows).  Children are sorted
 * by inclusive value, largest first; a node whose inclusive value is below
 * threshold_pct % of the session total, or deeper than max_depth, is
 * hidden and counted on its parent.  The hot path runs from the largest
 * root through the child with the largest inclusive value while that child
 * holds at least half of its parent's.
 *
 * Node ids are the cct's (an_cct_node()); a tree points into its profile
 * and must be freed before it.
 */
struct an_tree_options {
	enum an_group by;         /* function, thread or process */
	enum an_app_time app_time;
	double threshold_pct;     /* 0: show everything */
	uint32_t max_depth;       /* 0: no limit; 1: the roots' functions only */
};

struct an_tree {
	const struct an_cct *cct;
	enum an_group by;
	struct an_session session;   /* the flat report's, which the tree keeps */
	struct an_report *flat;
	const enum an_col *cols;  /* the fields of a node row, output order */
	unsigned ncols;
	enum an_col colbuf[AN_NCOLS];
	uint32_t *roots;          /* shown roots, sorted */
	size_t nroots;
	uint32_t root_hidden;     /* roots hidden by the threshold */
	uint64_t root_hidden_value;
	/* per cct node: shown children (CSR into kids, sorted), hidden ones */
	uint32_t *kid_start, *kids;
	uint32_t *hidden;
	uint64_t *hidden_value;   /* their summed inclusive value */
	bool *hot;
	uint32_t *hot_path;       /* the hot nodes, from the root down */
	size_t nhot;
	bool merged;              /* roots are the merged tree's functions */
	uint64_t shown;           /* nodes shown */
};

int an_tree_build(struct an_profile *p, const struct an_tree_options *o, struct an_tree **out,
		  char *err, size_t errlen);
void an_tree_free(struct an_tree *t);                /* accepts NULL */
/* Shown children of node id, sorted; their number. */
size_t an_tree_children(const struct an_tree *t, uint32_t id, const uint32_t **ids);
/* Fill row with node id's fields (t->cols; per-call values over the
 * node's own calls). */
void an_tree_row(const struct an_tree *t, uint32_t id, struct an_row *row);
/* The inclusive value the tree sorts and thresholds by. */
uint64_t an_tree_value(const struct an_tree *t, uint32_t id);
/*
 * SPEC section 6 on the whole tree: every node's children's inclusive
 * values sum to at most its own (exactly, with its exclusive value added),
 * the roots sum to the session total, AE <= EE <= EI and AE <= AI <= EI.
 */
int an_tree_check(const struct an_tree *t, char *why, size_t whylen);

/*
 * What the first screen of a report says before its full table: the
 * functions doing most individual work (the largest exclusive values: EE,
 * or exclusive samples; only those above 0) and the hot path of the merged
 * call tree, the chain --tree marks.  Rows are the flat function report's
 * and the tree's node rows; all owned by the highlights, which point into
 * the profile and must be freed before it.
 */
struct an_highlights {
	struct an_tree *tree;     /* merged, nothing hidden */
	struct an_row *top;       /* function rows, largest exclusive value first */
	size_t ntop;
	struct an_row *path;      /* the hot path's nodes from the root down */
	size_t npath;
};

int an_highlights_build(struct an_profile *p, enum an_app_time app_time, size_t ntop,
			struct an_highlights **out, char *err, size_t errlen);
void an_highlights_free(struct an_highlights *h);    /* accepts NULL */

/*
 * Callers and callees of the functions named name (every module holding
 * one): per function its flat row, its callers (credited with the outermost
 * occurrence of the function on each stack, "[root]" at a thread's root)
 * and its callees (credited by the innermost occurrence), so that the
 * callers' inclusive values add up to the function's, and its exclusive
 * value plus the callees' inclusive values too.  A caller's exclusive
 * value is the function's own time under it; a callee's, the callee's own
 * time directly under the function.  calls: entries of the function made
 * directly by the caller, entries of the callee made directly by the
 * function (every occurrence).  Lists are sorted by inclusive value.
 */
struct an_callers_entry {
	struct an_row self;
	struct an_row *callers, *callees;
	size_t ncallers, ncallees;
};

struct an_callers {
	struct an_session session;      /* the flat report's, kept as below */
	struct an_report *flat;         /* the function rows (self rows point here) */
	const enum an_col *self_cols;   /* the flat function row's */
	unsigned nself_cols;
	const enum an_col *cols;        /* callers' and callees' rows */
	unsigned ncols;
	enum an_col colbuf[AN_NCOLS];
	struct an_callers_entry *fn;
	size_t nfn;
};

/*
 * Returns 0, or -ENOENT with "no function named ...; closest: a, b, c" in
 * err, or -EINVAL for a profile without data.
 */
int an_callers_build(struct an_profile *p, const char *name, enum an_app_time app_time,
		     struct an_callers **out, char *err, size_t errlen);
void an_callers_free(struct an_callers *c);          /* accepts NULL */
/* Sort every caller and callee list by column c (-EINVAL: not a column). */
int an_callers_sort(struct an_callers *c, enum an_col col);
/* The split adds up exactly (SPEC section 6); the first violation in why. */
int an_callers_check(const struct an_callers *c, char *why, size_t whylen);

/* ---- diff of two reports (SPEC section 7) -------------------------------- */

/*
 * Rows of two reports of one grouping matched by key: function and the
 * module's file name (not its directory), line by file name and line,
 * thread by name (tid without one), process by executable file name.
 * Rows of one side with the same key are combined (values summed, per-call
 * minimum and maximum kept, means weighted by completed calls).  A row
 * missing on one side has no values there (0 in deltas).
 */
struct an_diff_row {
	struct an_row base, new;
	bool in_base, in_new;
	uint32_t order;
};

enum an_diff_part { AN_DIFF_BASE, AN_DIFF_NEW, AN_DIFF_DELTA };

struct an_diff {
	const struct an_report *base, *new;
	const enum an_col *keys;  /* key columns of the grouping */
	unsigned nkeys;
	const enum an_col *vals;  /* value columns: base_X, new_X, delta_X */
	unsigned nvals;
	struct an_diff_row *rows;
	size_t nrows;
	/* the order of the rows (an_diff_sort): column and part (the delta's
	 * absolute value for AN_DIFF_DELTA) */
	enum an_col sort_col;
	enum an_diff_part sort_part;
};

/* -EINVAL with the reason in err when the methods or groupings differ. */
int an_diff_build(const struct an_report *base, const struct an_report *new,
		  struct an_diff **out, char *err, size_t errlen);
void an_diff_free(struct an_diff *d);                /* accepts NULL */
/* A row's value of column c: its key (from the side that has it), or part. */
const struct an_value *an_diff_key(const struct an_diff_row *row, enum an_col c);
/* delta: new - base as a double (counts and times fit exactly below 2^53). */
double an_diff_value(const struct an_diff_row *row, enum an_col c, enum an_diff_part part);
/*
 * Sort by "base_X", "new_X", "delta_X" or a bare X / alias (its delta),
 * deltas by absolute value, largest first; NULL: delta of the exclusive
 * percentage.  -EINVAL if no such column.
 */
int an_diff_sort(struct an_diff *d, const char *name);

#endif
