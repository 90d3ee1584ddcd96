/*
 * Private to src/analysis: the loaded profile's layout and the small hash
 * tables it is built from.  Nothing outside this folder includes it.
 *
 * Dense ids: strings, functions and modules are numbered from 0 in the
 * order they are first met, so per-report accumulators are plain arrays
 * indexed by id (no per-event allocation, O(1) lookups).
 */
#ifndef SC_ANALYSIS_INTERNAL_H
#define SC_ANALYSIS_INTERNAL_H

#include "analysis/analysis.h"

#define AN_NONE UINT32_MAX
/* Sampled addresses from here up are the kernel's. */
#define AN_KERNEL_START 0xffff800000000000ULL

struct an_cct;

/* ---- (u64, u64) -> u32 open-addressing map ------------------------------ */

struct an_map {
	struct an_map_slot {
		uint64_t a, b;
		uint32_t val;         /* AN_NONE: empty slot */
	} *slots;
	size_t cap, n;            /* cap is a power of two (or 0) */
};

/* The value stored for (a, b), or AN_NONE. */
uint32_t an_map_get(const struct an_map *m, uint64_t a, uint64_t b);
/*
 * The slot's value for (a, b), inserting val if absent; *found tells which.
 * val must not be AN_NONE.
 */
uint32_t an_map_put(struct an_map *m, uint64_t a, uint64_t b, uint32_t val, bool *found);
/* Insert or overwrite. */
void an_map_set(struct an_map *m, uint64_t a, uint64_t b, uint32_t val);
void an_map_release(struct an_map *m);

/* ---- interned strings --------------------------------------------------- */

struct an_strtab {
	char **str;               /* id -> string (owned) */
	size_t n, alloc;
	uint32_t *slot;           /* hash slots holding ids, AN_NONE empty */
	size_t cap;
};

uint32_t an_str_intern(struct an_strtab *t, const char *s);
static inline const char *an_str(const struct an_strtab *t, uint32_t id)
{
	return id == AN_NONE ? NULL : t->str[id];
}
void an_strtab_release(struct an_strtab *t);

/* ---- the profile -------------------------------------------------------- */

struct an_func {
	uint32_t name, module;    /* string ids */
	uint32_t mod;             /* dense module id */
	bool unnamed;             /* named by offset: no symbol (docs/values.md) */
	uint32_t system;          /* string id of the mangled name, or AN_NONE */
	uint32_t file;            /* string id of its source file, or AN_NONE */
	uint32_t line;            /* the line of its entry address (an
				     instrumented function's first line), 0: unknown */
};

/* The GNU build-id of a module, as its mappings were recorded. */
struct an_build_id {
	uint32_t module;          /* string id of the path */
	uint32_t len;
	uint8_t id[20];
};

/* One symbolized frame; inline frames come before the function holding them. */
struct an_frame {
	uint32_t func;            /* dense function id */
	uint32_t file;            /* string id or AN_NONE */
	uint32_t line;
	uint32_t inlined;
};

struct an_span {
	uint32_t first, n;        /* into an_profile.frames */
	uint64_t module_offset;   /* the address relative to its module */
};

struct an_proc {
	uint32_t proc_id, pid, ppid;
	uint32_t exe;             /* string id or AN_NONE */
};

/* Per (process image, tid): what its SC_REC_THREAD_STATS records say. */
struct an_tstats {
	uint32_t proc_id, tid;
	uint64_t repairs, open_frames;
};

/* Sampled shares (SPEC section 14): a node's samples, by node id. */
struct an_node_samples {
	uint32_t id;
	uint64_t samples;
};

struct an_thread {
	uint32_t proc_id, tid;
	struct sc_rec_cct_node *nodes;
	size_t nnodes, anodes;
	bool has_root;
	struct an_node_samples *smp;  /* its SC_REC_CCT_SAMPLES records */
	size_t nsmp, asmp;
};

/* Per (process image, tid): its SC_REC_THREAD_MORE records, summed. */
struct an_tmore {
	uint32_t proc_id, tid;
	uint64_t samples, probe_samples;
	uint64_t repairs[SC_REPAIR_NCAUSE];
};

struct an_stack {
	size_t ip;                /* index of ip[0] in an_profile.ips */
	uint32_t nframes;
	uint32_t flags;
};

struct an_sample {
	uint32_t proc_id, tid, stack_id;
	uint64_t count;
};

/* One SC_REC_TIMELINE record, kept coded (analysis/timeline.c decodes). */
struct an_tlrec {
	uint32_t proc_id, tid;
	uint32_t inst;            /* thread instance (nodes), AN_NONE if none */
	uint32_t nitems, flags;
	uint64_t base_ns, dropped, filtered;
	uint64_t base_tick, tick0, ns0;   /* SC_TL_TICKS */
	double ns_per_tick;
	uint8_t *data;            /* in the profile's tlblocks, or NULL: ... */
	int64_t off;              /* ... in the data file (tl_fd) at this offset */
	size_t len;
};

struct an_profile {
	struct an_resolver res;
	struct sym_session *own_sym;  /* when resolving through symbols.h */

	struct an_strtab strs;
	struct an_func *funcs;
	size_t nfuncs, afuncs;
	struct an_map func_map;       /* (module sid, name sid) -> func id */
	struct an_build_id *bids;     /* one per module path with a build-id */
	size_t nbids, abids;
	struct an_map bid_map;        /* module sid -> index into bids */
	uint32_t *mods;               /* dense module id -> module string id */
	size_t nmods, amods;
	struct an_map mod_map;        /* module sid -> module id */

	struct an_frame *frames;      /* resolution results, cached */
	size_t nframes, aframes;
	struct an_span *spans;
	size_t nspans, aspans;
	struct an_map resolved;       /* (proc_id | is_return << 32, addr) -> span */

	/* session */
	bool have_session, have_end;
	struct sc_rec_session sess;
	struct sc_rec_session_end end;
	uint32_t *argv_sid;
	size_t argc;
	const char **argv;            /* built on demand, strings from strs */
	uint64_t lost_events_rec, lost_samples_rec, lost_unwind_rec, lost_os_rec;
	struct an_unrecorded *unrec;  /* SC_REC_UNRECORDED, in file order */
	size_t nunrec, aunrec;
	uint64_t bad_records;
	uint32_t features;            /* SC_FEAT_* seen (file header or records) */
	/* run-time patching: each object counted once (by build-id) */
	bool have_patch;
	uint64_t patched, unpatched[32];
	uint64_t unhooked_rec;        /* frames whose return was not hooked */
	uint8_t (*patch_ids)[21];     /* build-ids seen: length, then bytes */
	size_t npatch_ids, apatch_ids;

	struct an_proc *procs;
	size_t nprocs, aprocs;
	struct an_map proc_map;       /* proc_id -> index */

	/* threads known from SC_REC_THREAD (names) */
	struct an_map tname_map;      /* (proc_id, tid) -> name sid */
	struct an_map libcall_map;    /* (proc_id, addr) -> name sid of a
	                                 library call's row (SPEC 11) */
	/* instrumentation */
	struct an_thread *threads;
	size_t nthreads, athreads;
	struct an_map thread_map;     /* (proc_id, tid) -> current instance */
	struct sc_rec_callsite *sites;
	size_t nsites, asites;
	struct sc_rec_thread_stats stats;   /* summed over all threads */
	bool raw_times;                     /* add the probe cost back (--raw-times) */
	struct sc_rec_probe_cost probe_cost; /* samples 0: none recorded */
	uint64_t removed_ns;                /* probe cost taken out, all nodes */
	uint64_t nstats;
	struct an_tstats *tstats;           /* per thread */
	size_t ntstats, atstats;
	struct an_map tstats_map;           /* (proc_id, tid) -> index */
	/* sampled shares and repairs by cause (SPEC section 14) */
	struct an_tmore *tmore;
	size_t ntmore, atmore;
	struct an_map tmore_map;            /* (proc_id, tid) -> index */
	uint64_t nsmp_rec;                  /* SC_REC_CCT_SAMPLES records kept */
	char smp_orphan[160];               /* a cct_samples record without its
					       thread's nodes, "" if none */
	/* an_shares_check()'s verdict, until the next record */
	bool shares_checked, shares_ok, causes_ok;
	uint64_t smp_total, probe_total;
	uint64_t causes[SC_REPAIR_NCAUSE];
	char shares_why[200], causes_why[200];

	/* sampling */
	struct an_stack *stacks;
	size_t nstacks, astacks;
	uint64_t *ips;
	size_t nips, aips;
	struct an_map stack_map;      /* stack id -> index */
	struct an_sample *samples;
	size_t nsamples, asamples;
	struct an_map sample_map;     /* (proc_id << 32 | tid, stack id) -> index */

	char *damage;                 /* reader's damage description, owned */

	/* the timeline (SPEC section 12), as recorded */
	struct an_tlrec *tlrecs;
	size_t ntlrecs, atlrecs;
	/* the tlrecs' data, in blocks of TL_BLOCK bytes or more (util.h's
	 * big_grow: huge pages, a fault per 2 MiB instead of per 4 KiB) */
	struct an_tlblock { uint8_t *b; size_t alloc, used; } *tlblocks;
	size_t ntlblocks, atlblocks;
	/* the data file, open for the tlrecs left in it (an_profile_load:
	 * a long timeline is read back as it is used, never held), or -1 */
	int tl_fd;

	/* calling-context trees, built on first use: [split][app_time] */
	struct an_cct *cct[3][2];
};

void an_cct_free(struct an_cct *c);   /* accepts NULL */
/* The profile a tree was built from (names of threads and processes). */
struct an_profile *an_cct_profile(const struct an_cct *c);

/*
 * Resolve addr of proc_id through the cache: the span of its frames
 * (innermost first, at least one).
 */
/* Add value to the unnamed total of module id mod (docs/values.md, "Code without symbols"). */
void an_unnamed_add(const struct an_profile *p, struct an_report *r, uint32_t mod,
		    uint64_t value);

struct an_span an_resolve(struct an_profile *p, uint32_t proc_id, uint64_t addr,
			  bool is_return);
/*
 * The function entered at addr (the outermost frame of its resolution),
 * its first line noted from the entry's line: for instrumentation's
 * entry and callee addresses.
 */
uint32_t an_resolve_entry(struct an_profile *p, uint32_t proc_id, uint64_t addr);
/* The dense function id for (module, name), creating it. */
uint32_t an_func_intern(struct an_profile *p, const char *module, const char *name);
/* pid of a process image, or its proc_id when not recorded. */
uint32_t an_proc_pid(const struct an_profile *p, uint32_t proc_id);
const char *an_proc_exe(const struct an_profile *p, uint32_t proc_id);
const char *an_thread_name(const struct an_profile *p, uint32_t proc_id, uint32_t tid);

/* Report assembly shared by the two methods (rows.c). */
struct an_row *an_report_add_row(struct an_report *r, size_t *alloc);
void an_row_set_u(struct an_row *row, enum an_col c, uint64_t v);
void an_row_set_d(struct an_row *row, enum an_col c, double v);
/* AN_COL_BELOW_RES of an instrumentation row from its calls and EE (rows
 * without calls are not marked). */
void an_row_set_resolution(struct an_row *row, const struct an_session *s);
void an_row_set_s(struct an_row *row, enum an_col c, const char *s);
void an_session_fill(struct an_profile *p, struct an_session *s);
/*
 * Whether the sampled-share and repair-cause records add up (node ids
 * that exist, per thread node samples == samples - probe_samples, causes
 * == thread_stats' repairs and open frames); cached in p until the next
 * record.
 */
void an_shares_check(struct an_profile *p);
/* Columns of cols that the session shows (no sampled shares without
 * them) into out (AN_NCOLS entries); their number. */
unsigned an_cols_for(const enum an_col *cols, unsigned n, const struct an_session *s,
		     enum an_col *out);


/* Column sets (rows.c): a flat grouping's, a tree node's, a caller's. */
const enum an_col *an_colset(enum sc_method m, enum an_group by, unsigned *n);
const enum an_col *an_tree_colset(enum sc_method m, enum an_group by, unsigned *n);
const enum an_col *an_edge_colset(enum sc_method m, unsigned *n);

int an_build_instrument(struct an_profile *p, const struct an_report_options *o,
			struct an_report *r, char *err, size_t errlen);
int an_build_sample(struct an_profile *p, const struct an_report_options *o,
		    struct an_report *r, char *err, size_t errlen);

static inline double an_pct(uint64_t x, uint64_t total)
{
	return total ? 100.0 * (double)x / (double)total : 0.0;
}

/*
 * The mean of c completed calls whose times add up to sum, rounded to the
 * nearest ns and held within [lo, hi], their minimum and maximum.  The
 * recorder converts each of the three from ticks on its own (flooring), so
 * the sum of two 128.6 ns calls is 257 ns while the maximum is 128 ns: the
 * rounded mean alone would be 129, above the maximum.  0 when c is 0.
 */
static inline uint64_t an_mean(uint64_t sum, uint64_t c, uint64_t lo, uint64_t hi)
{
	uint64_t m;

	if (!c)
		return 0;
	m = (sum + c / 2) / c;
	if (m > hi)
		m = hi;
	return m < lo ? lo : m;
}

#endif
