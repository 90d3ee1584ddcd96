/*
 * cct — the calling-context tree of a profile (SPEC section 6), the one
 * model both methods produce and every view and export walks.
 *
 * A node is one distinct path of functions from a top: the recorder's
 * per-thread trees (instrumentation) and the symbolized stacks
 * (sampling, inline frames as frames of their own) are merged into it,
 * children keyed by function, so its size follows the number of distinct
 * paths, never the recording's length.  Tops are the groups the tree is
 * split by: one top for the whole profile (AN_CCT_MERGED), one per process
 * image or one per thread; a top has no function and no values of its own
 * but sampled ones (smp_excl below).
 *
 * Values of a node:
 *   excl, app_excl   charged while the node was the top of the stack:
 *                    EE and AE in nanoseconds (AE by the --app-time mode
 *                    the tree was built for), or exclusive samples
 *                    (app_excl 0);
 *   incl, app_incl   the sums of excl / app_excl over the node's subtree
 *                    (no "distinct" rule inside a path: a path is one
 *                    place; a top's incl is its group's total);
 *   calls and per-call statistics (instrumentation), exclusive samples by
 *   the state of their stack (sampling);
 *   smp_excl, smp_incl (instrumentation)  the sampled shares' counts
 *                    (SPEC section 14), the only values a top may hold
 *                    itself: its threads' samples with no call open.
 *
 * Invariants a walker may rely on:
 *   - node ids run from 0 to an_cct_size()-1; a parent's id is lower than
 *     each of its children's, so a loop over ids visits parents first and a
 *     loop downwards visits children first;
 *   - tops have parent AN_CCT_NONE, func AN_CCT_NONE and depth 0; a
 *     function called at a thread's root has depth 1;
 *   - siblings never share a function; incl >= excl, app_incl >= app_excl,
 *     incl == excl + sum of the children's incl;
 *   - sum of the tops' incl == the session total (session EI, or samples).
 *
 * Ownership: a tree is built on first use by an_profile_cct() and owned by
 * the profile (freed with it); walkers get const pointers valid until
 * an_profile_free().  Not thread-safe.
 */
#ifndef SC_ANALYSIS_CCT_H
#define SC_ANALYSIS_CCT_H

#include "analysis/analysis.h"

#define AN_CCT_NONE UINT32_MAX

enum an_cct_split {
	AN_CCT_MERGED,            /* one top for everything */
	AN_CCT_BY_PROCESS,        /* one top per process image */
	AN_CCT_BY_THREAD,         /* one top per (process image, tid) */
	AN_CCT_NSPLITS
};

/* The state of the stacks behind a sampling node's exclusive samples. */
enum an_stack_state {
	AN_STACK_ROOT,            /* unwinding reached the thread's root */
	AN_STACK_TRUNC,           /* stopped at the end of the copied stack */
	AN_STACK_PARTIAL,         /* stopped early for another reason */
	AN_STACK_NSTATES
};

struct an_cct_node {
	uint32_t func;            /* function id (an_cct_func_*), AN_CCT_NONE for tops */
	uint32_t parent;          /* AN_CCT_NONE for tops */
	uint32_t first_child;     /* AN_CCT_NONE: a leaf */
	uint32_t next_sibling;    /* AN_CCT_NONE: the last child */
	uint32_t group;           /* index of the node's top in an_cct_tops() */
	uint32_t depth;
	bool inlined;             /* sampling: an inline frame, its code inside
				     the parent's (pprof puts both in one
				     location) */
	uint64_t calls;
	uint64_t excl, app_excl;
	uint64_t incl, app_incl;
	/* instrumentation, sampled shares (SPEC section 14): the samples that
	 * found this node on top of the stack of open calls, and over its
	 * subtree; a top's own are its threads' samples with no call open */
	uint64_t smp_excl, smp_incl;
	union {
		struct {          /* instrumentation: over the calls that returned */
			uint64_t completed;
			uint64_t incl_min, incl_max, incl_sum;
			uint64_t excl_min, excl_max, excl_sum;
		} call;
		/* sampling: excl split by stack state, [state][kernel frames?] */
		uint64_t state[AN_STACK_NSTATES][2];
	};
};

struct an_cct;

/*
 * The profile's tree for split (and, for instrumentation, the AE of
 * app_time), built on first use.  Never NULL; an empty profile has tops
 * only (or none).
 */
const struct an_cct *an_profile_cct(struct an_profile *p, enum an_cct_split split,
				    enum an_app_time app_time);

enum sc_method an_cct_method(const struct an_cct *c);
size_t an_cct_size(const struct an_cct *c);
const struct an_cct_node *an_cct_node(const struct an_cct *c, uint32_t id);

/* The top nodes, in the order their groups were first met: *ids[n]. */
size_t an_cct_tops(const struct an_cct *c, const uint32_t **ids);
/* The process image and thread of top group g (tid 0 unless by thread). */
void an_cct_group(const struct an_cct *c, uint32_t g, uint32_t *proc_id, uint32_t *tid);

/* The pid of top group g's process (its image id when not recorded). */
uint32_t an_cct_group_pid(const struct an_cct *c, uint32_t g);
/* The executable of top group g's process image and the name of its thread
 * (by thread only), or NULL when not recorded; owned by the profile. */
const char *an_cct_group_exe(const struct an_cct *c, uint32_t g);
const char *an_cct_group_thread_name(const struct an_cct *c, uint32_t g);

/* Function ids: dense, shared with the profile's flat rows. */
size_t an_cct_nfuncs(const struct an_cct *c);
const char *an_cct_func_name(const struct an_cct *c, uint32_t func);
const char *an_cct_func_module(const struct an_cct *c, uint32_t func);
/* Dense module id of a function (the module grouping). */
uint32_t an_cct_func_mod(const struct an_cct *c, uint32_t func);
/* The mangled name, or NULL; the source file, or NULL (exports). */
const char *an_cct_func_system_name(const struct an_cct *c, uint32_t func);
const char *an_cct_func_file(const struct an_cct *c, uint32_t func);
/* The line of the function's entry (instrumentation: its first line), 0
 * when unknown (a sampled function is entered by no sample). */
unsigned an_cct_func_line(const struct an_cct *c, uint32_t func);
/* The build-id of the function's module: its length (0: unknown). */
size_t an_cct_func_build_id(const struct an_cct *c, uint32_t func, const uint8_t **id);

/*
 * A depth-first walk below a top, parents before children, without
 * recursion:
 *     for (id = first child of the top; id != AN_CCT_NONE; id = an_cct_next(c, id, &left))
 * an_cct_next() gives the node after id and sets *left to the number of
 * nodes the walk is done with on the way there: 0 when it goes down to
 * id's first child, 1 when to id's next sibling, k when id and its k - 1
 * nearest ancestors are finished (those are id, its parent, ...).  At the
 * end of the top's subtree it returns AN_CCT_NONE, *left counting every
 * node still open down to the top's child.
 */
uint32_t an_cct_next(const struct an_cct *c, uint32_t id, uint32_t *left);

/* Session totals: sum of excl and of app_excl over all nodes. */
uint64_t an_cct_total(const struct an_cct *c);
uint64_t an_cct_app_total(const struct an_cct *c);
/* Instrumentation: sum of smp_excl over all nodes, tops included: the
 * program's own samples. */
uint64_t an_cct_smp_total(const struct an_cct *c);

/*
 * Fold: the flat values of keys over the tree.  key[id] is the key of
 * node id (AN_CCT_NONE: charged to nothing; tops should be).  For each key
 * k, acc[k] gets the own values (excl, app_excl, calls, per-call stats) of
 * every node of key k, and the inclusive values of its outermost nodes (no
 * ancestor of key k), so a key is charged once per interval or sample
 * whatever the recursion.  acc has nkeys zeroed entries.
 */
struct an_fold {
	bool used;                /* some node had this key */
	uint64_t calls, excl, app_excl, incl, app_incl;
	uint64_t smp_excl, smp_incl;  /* sampled shares' counts, as excl/incl */
	uint64_t completed, incl_min, incl_max, incl_sum, excl_min, excl_max, excl_sum;
};
void an_cct_fold(const struct an_cct *c, const uint32_t *key, size_t nkeys, struct an_fold *acc);
/* Fold one node's per-call statistics (completed calls, min, max, sums)
 * into a; nothing for a node none of whose calls returned. */
void an_fold_call_stats(struct an_fold *a, const struct an_cct_node *nd);

/*
 * Call edges between functions, for call graphs (callgrind): for each pair
 * (caller F, callee D) the calls of D made directly by F (every
 * occurrence) and the inclusive values of D credited to F by SPEC section
 * 6's callee rule (the intervals or samples in which the innermost F on
 * the stack directly called D), so that for every function F its own
 * exclusive value plus the inclusive values of its edges equals its
 * inclusive value (recursion charged once).  Calls from a top (a thread's
 * root) are not edges.  Returns the number of edges; *out is malloc'ed and
 * the caller frees it; sorted by caller, then callee.
 */
struct an_cct_edge {
	uint32_t caller, callee;  /* function ids */
	uint64_t calls, incl, app_incl;
};
size_t an_cct_edges(const struct an_cct *c, struct an_cct_edge **out);

#endif
