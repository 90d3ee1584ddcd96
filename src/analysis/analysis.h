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

struct an_profile;

/*
 * A new, empty profile resolving through res (copied), or through its own
 * sym_session when res is NULL.
 */
struct an_profile *an_profile_new(const struct an_resolver *res);
void an_profile_free(struct an_profile *p);          /* accepts NULL */

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
	AN_NCOLS
};

enum an_type {
	AN_T_STR,       /* v.s, may be absent */
	AN_T_U64,       /* v.u, a count or a number */
	AN_T_NS,        /* v.u, nanoseconds */
	AN_T_PCT,       /* v.d, a percentage */
	AN_T_ADDR,      /* v.u, an address (hex in text formats) */
};

struct an_column_info {
	const char *name;         /* JSON/CSV name, SPEC section 5 */
	enum an_type type;
	const char *aliases;      /* other names --sort accepts, space separated */
};

const struct an_column_info *an_column_info(enum an_col c);
/* Column id of a JSON/CSV column name, or -1. */
int an_column_lookup(const char *name);
/* Whether name is a column name or an alias of some column (--sort). */
bool an_column_known(const char *name);

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

struct an_session {
	enum sc_method method;
	const char *const *argv;  /* the profiled command, argc strings */
	uint32_t argc;
	uint64_t processes, threads;
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
	/* sampling */
	uint64_t samples, frequency_hz, lost_samples, unwind_failures;
	uint64_t root_reached, truncated;     /* samples with SC_STACK_ROOT / _TRUNCATED */
	double root_reached_pct, truncated_pct;
	/* code without symbols: share of the session, per module (largest
	 * first) */
	double unnamed_pct;
	struct an_unnamed *unnamed;
	size_t nunnamed;
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

#endif
