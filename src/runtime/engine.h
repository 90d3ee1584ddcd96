/*
 * engine — the attribution state machine of the instrumentation method.
 *
 * One engine thread turns a thread's stream of enter/exit events into a
 * calling-context tree (CCT) whose nodes hold the counters SPEC section 2
 * needs, plus a small call-site table.  The very same code runs inside the
 * target (src/runtime/probe.c, on shared memory the recorder reads after the
 * target ends or is killed) and in the unit tests (on a heap buffer), so what
 * the tests prove is what the probes do.
 *
 * Rules:
 *  - Time is in abstract ticks (rdtsc in the runtime, nanoseconds in tests);
 *    the caller passes non-decreasing times (a smaller one counts as equal).
 *  - Interval i = (time of event i-1, time of event i] is charged to the
 *    frame on top before event i.  The hot path does not add it up: the
 *    exclusive time of a call is its inclusive time minus its children's,
 *    known when it returns, so a node's EE is the sum of its calls'
 *    exclusive times (excl_sum) plus, for frames still open, their part up
 *    to the thread's last event (added by the emitter from the stack).  If
 *    an interval was OS-bound the caller first calls sc_eng_os() with the
 *    same time: node->osb += d and node->osx += min(measured OS ticks, d), so
 *    AE = EE - osb and the exact mode's AE = EE - osx.  Intervals with an
 *    empty stack are not part of any value.
 *  - The CCT is keyed by (parent node, function), never by call site.
 *    Inclusive values are derived at report time from the tree.
 *  - Exit of the top function: pop, per-call stats.  Exit of a function
 *    deeper in the stack: every frame above it is closed at that time (one
 *    repair each), then it is popped.  Exit of a function not on the stack:
 *    ignored, one repair.  Frames still open at the end are open frames.
 *  - Stack positions (SPEC section 2): an entry may carry its canonical
 *    frame address (CFA, the stack pointer before the call; see
 *    sc_eng_enter_sp).  A live callee's CFA is below its caller's, so an
 *    entry whose CFA is at or above an open frame's proves that frame gone
 *    (longjmp, an exception through frames without exit hooks): it is
 *    closed at that time, one repair each, before the entry is pushed.
 *    Equal CFAs are the one ambiguity: a function inlined into the frame on
 *    top (even the same function, inlined into itself) shares its CFA and
 *    its call site (the physical frame's return address), so an equal CFA
 *    closes the top frame only if its entry probe was called from the same
 *    instruction (pc: then it is a new activation at the same place, the
 *    old one is gone) or the entry comes from another site.  An inlined frame then gets
 *    its container's CFA minus one (learned, like any node's, as an offset
 *    from the probe's stack pointer), so that its entries stay on the fast
 *    path.  Frames with no known CFA (UINT64_MAX, or above every real one)
 *    are never closed so.
 *  - Call sites: per (site, callee) calls, EE and AE of every call, EI and AI
 *    of the outermost ones only (no call of the same site and callee below
 *    on the stack), so that a call-site row obeys the invariants of any
 *    grouping (AE <= EE <= EI, AE <= AI <= EI).
 *  - When memory runs out (arena full) or the stack passes its maximum, the
 *    events from there until the stack is back are dropped and counted in
 *    lost; their time goes to the frame below, as for uninstrumented code.
 *
 * Memory: everything lives in one arena (a byte range whose first 128 bytes
 * are struct sc_eng_arena_hdr) and is allocated with an atomic bump, so any
 * number of threads allocate without locks.  Structures link to each other
 * by arena offsets (what the recorder follows) and, for the hot path only,
 * by process-local pointers (which the recorder never dereferences).
 * Nothing here calls libc; no locks; an engine thread is used by one thread.
 *
 * How a test drives it (see tests/unit/test_engine.c):
 *
 *	size_t len = 64 << 20;
 *	void *buf = calloc(1, len);           // zeroed: an arena starts empty
 *	struct sc_eng_arena a;
 *	sc_eng_arena_init(&a, buf, len);      // writes the arena header
 *	struct sc_eng_thread *t = sc_eng_thread_new(&a, tid, first_time);
 *	sc_eng_enter(t, fn, site, time);      // fn != 0
 *	sc_eng_os(t, time);                   // interval ending at `time` was
 *	                                      // OS-bound (before that event)
 *	sc_eng_exit(t, fn, time);
 *	...
 *	// emit records (src/record/cct_emit.h), ticks == ns:
 *	struct sc_tick_conv conv = SC_TICK_CONV_IDENTITY;
 *	sc_cct_emit_thread(w, buf, len, sc_eng_thread_off(t), proc_id, &conv, NULL);
 *
 * sc_eng_os_exact(t, time, os_ticks) is sc_eng_os() with a measured OS time.
 */
#ifndef SC_RUNTIME_ENGINE_H
#define SC_RUNTIME_ENGINE_H

#include <stddef.h>
#include <stdint.h>

#include "format/scdata.h"
#include "format/varint.h"

#ifndef likely
#define likely(x)   __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)
#endif

/* Slow paths: out of line so the probes stay short; "unused" so that a file
 * including this header without using them does not warn. */
#define SC_ENG_SLOW static __attribute__((noinline, cold, unused))
/* the steps of every event: inlined into the probes' fast paths */
#define SC_ENG_HOT static inline __attribute__((always_inline))

#define SC_ENG_NODE_SHIFT   7                  /* nodes are 128 bytes */
#define SC_ENG_NODE_SIZE    (1u << SC_ENG_NODE_SHIFT)
#define SC_ENG_CHUNK_FIRST  8u                 /* node slots of a thread's first chunk */
#define SC_ENG_CHUNK_MAX    1024u              /* chunks double up to this (128 KiB) */
#define SC_ENG_STACK_FIRST  16u                /* frames of a new stack */
#define SC_ENG_STACK_MAX    (1u << 20)         /* deepest stack kept */
#define SC_ENG_CS_FIRST     8u                 /* call-site table slots */
#define SC_ENG_CS_MAX       (1u << 18)
#define SC_ENG_CS_PROBE     8u                 /* slots a site may sit from home */
#define SC_ENG_DROP_FUNC    UINT64_MAX         /* func of the "dropping" frame */
#define SC_ENG_NO_SITE      UINT64_MAX         /* a node's empty call-site cache */
#define SC_ENG_THREAD_MAGIC 0x3130445248544353ull  /* "SCTHRD01" */
#define SC_ENG_NO_CFA       UINT64_MAX         /* a frame's position is unknown */
#define SC_ENG_CFA_NEAR     (64ull << 20)      /* a jump up the same stack spans less */
#define SC_ENG_CFA_UNKNOWN  INT32_MAX          /* sp + this is above any frame: slow path */
#define SC_ENG_CC_BITS      12                 /* child cache: 4096 slots (16 KiB) */
#define SC_ENG_CC_AFTER     256                /* ... made after this many child misses */

/* Causes of repairs, as sc_eng_thread.repair_by counts them (the same
 * numbers as enum sc_repair_cause of the data file). */
#define SC_ENG_REPAIR_LONGJMP   0u
#define SC_ENG_REPAIR_EXCEPTION 1u
#define SC_ENG_REPAIR_SIGNAL    2u
#define SC_ENG_REPAIR_OTHER     3u
#define SC_ENG_REPAIR_N         4u
#define SC_ENG_SAMP_FIRST       256u           /* sample table slots at first */

/* sc_eng_thread.flags */
#define SC_ENG_THREAD_RETIRED (1u << 0)        /* ended; its spare memory given back */
#define SC_ENG_THREAD_PACKED  (1u << 1)        /* call sites: cs_count entries, packed */

/* sc_eng_node.flags */
#define SC_ENG_NODE_CFA     (1u << 0)          /* cfa_k learned */
#define SC_ENG_NODE_TAIL    (1u << 1)          /* its work after its last callee
						  returned was long (probe.c) */
#define SC_ENG_NODE_TLIN    (1u << 2)          /* timeline --only: in the calls of
						  a function named */

/* The timeline (SPEC section 12; sc_eng_tl_start) */
#define SC_ENG_TL_CHUNK     (256u << 10)       /* bytes of a chunk, header included */
#define SC_ENG_TL_STAGE     (32u << 10)        /* bytes of a thread's staging buffer
						  (sc_eng_tl_grow), ROOM beyond */
#define SC_ENG_TL_ROOM      (3 * SC_VARINT_MAX) /* the longest item */
/* A call item's times count in units of 2^SC_ENG_TL_SHIFT ticks by default
 * (1.9 ns at 2.1 GHz, far below a probe's cost; sc_eng_tl_unit): each
 * absolute time is rounded down, so calls still nest, and on fib a call
 * takes 2.5 bytes instead of 3.6. */
#define SC_ENG_TL_SHIFT     2
#define SC_ENG_TL_SHIFT_MAX 16
#define SC_ENG_TL_NONE      (UINT32_MAX - 1)   /* tl_prev: no call item yet */
/* sc_eng_thread.tl_filter */
#define SC_ENG_TL_MIN       (1u << 0)          /* calls at least tl_min ticks */
#define SC_ENG_TL_DEPTH     (1u << 1)          /* calls at depth < tl_depth */
#define SC_ENG_TL_ONLY      (1u << 2)          /* calls of SC_ENG_NODE_TLIN nodes */

/* First 128 bytes of every arena; doubles as node index 0 ("no node"). */
struct sc_eng_arena_hdr {
	uint64_t null_func;       /* always 0: a lookup of child 0 never matches */
	uint64_t bump;            /* allocation cursor in bytes (atomic) */
	uint64_t size;            /* arena bytes */
	uint64_t threads;         /* offset of the newest thread, 0 if none */
	uint64_t lost;            /* events lost with no thread state at all */
	uint64_t free_head[9];    /* blocks given back, per size class (see
	                             sc_eng_free): (tag << 40) | off >> 7 */
	uint64_t freed;           /* bytes given back so far (statistics) */
	uint64_t reused;          /* bytes handed out again */
};

struct sc_eng_arena;
/* Back [off, off+len) with memory before use (fallocate on tmpfs); 0 or -1. */
typedef int (*sc_eng_commit_fn)(struct sc_eng_arena *a, uint64_t off, uint64_t len);
/* Copy len bytes from src to the arena at off (committed) without touching
 * the pages through this mapping (pwrite to the arena's file); 0 or -1. */
typedef int (*sc_eng_write_fn)(struct sc_eng_arena *a, uint64_t off, const void *src, uint64_t len);
/*
 * Called with an address the report will have to resolve, once per new CCT
 * node (its function) and once per new call-site entry (the byte before the
 * return address, inside the call instruction): the runtime records the
 * module holding it.  Rare path only, never per event.
 */
typedef void (*sc_eng_newaddr_fn)(struct sc_eng_arena *a, uint64_t addr);
/*
 * The CFA of the function whose entry probe ran with stack pointer sp and
 * was given call site `site` (its return address), or SC_ENG_NO_CFA.  Slow
 * path only: its result is learned per CCT node as an offset from sp.
 * NULL: the sp passed to sc_eng_enter_sp() is the CFA itself (tests).
 */
typedef uint64_t (*sc_eng_cfa_fn)(struct sc_eng_arena *a, uint64_t site, uint64_t sp);
/* Timeline --only: whether func is one of the functions named (slow path:
 * once per new node). */
typedef int (*sc_eng_tl_match_fn)(struct sc_eng_arena *a, uint64_t func);

/* Process-local description of an arena (never stored in the arena). */
struct sc_eng_arena {
	uint8_t *base;
	uint64_t size;
	struct sc_eng_arena_hdr *hdr;
	sc_eng_commit_fn commit;      /* NULL: memory already backed */
	sc_eng_newaddr_fn newaddr;    /* NULL: nothing to do */
	sc_eng_cfa_fn cfa_of;         /* NULL: sp is the CFA */
	sc_eng_tl_match_fn tl_match;  /* NULL: no --only */
	sc_eng_write_fn write;        /* NULL (or failing): memcpy */
	uint64_t *tl_left;            /* timeline bytes the image may still take
					 (shared by its threads), NULL: no limit */
	void *ctx;
};

struct sc_eng_node {                   /* 128 bytes, two cache lines */
	uint64_t func;
	uint32_t first_child;              /* node index; most recently used first */
	uint32_t next_sibling;
	uint64_t calls;                    /* entries */
	uint64_t incl_sum, excl_sum;       /* per completed call */
	uint64_t incl_min, incl_max;
	uint64_t excl_min;
	/* second line */
	uint64_t excl_max;
	uint64_t osb;                      /* OS-bound ticks (interval rule) on top */
	uint64_t osx;                      /* measured OS ticks on top */
	uint32_t id;                       /* thread-local id, root = 0 */
	uint32_t parent;                   /* parent's id, UINT32_MAX for the root */
	uint32_t flags;                    /* SC_ENG_NODE_* */
	int32_t cfa_k;                     /* CFA - stack pointer of its entries;
	                                      SC_ENG_CFA_UNKNOWN until learned */
	uint64_t cs_site;                  /* the call site it was last entered from */
	struct sc_eng_cs *cs;              /* and that site's entry (a cache) */
	uint64_t removed;                  /* probe cost taken out of its calls'
					      subtrees (raw inclusive - inclusive) */
};

struct sc_eng_cs {                     /* 64 bytes; callee == 0: empty slot */
	uint64_t site, callee;
	uint64_t calls;                    /* entries */
	uint64_t ei;                       /* completed outermost calls */
	uint64_t ee;                       /* completed calls */
	uint64_t osb_incl;                 /* AI = ei - osb_incl */
	uint64_t osb_excl;                 /* AE = ee - osb_excl */
	uint64_t active;                   /* its frames open now */
};

struct sc_eng_frame {                  /* 88 bytes */
	struct sc_eng_node *node;
	struct sc_eng_cs *cs;
	uint64_t entry;                    /* clock reading at entry */
	uint64_t e_acc;                    /* thread's acc at entry */
	/* of its completed children (sc_eng_close): */
	uint64_t cnet;                     /* clock less the cost in their windows */
	uint64_t ccomp;                    /* inclusive values */
	uint64_t osb_entry;                /* thread osb_total at entry */
	uint64_t osb_own;                  /* OS-bound ticks of its own intervals */
	uint64_t owed;                     /* cost a closed child of it could not
					      give: its next child to close gives
					      it, or it does */
	uint64_t cfa;                      /* its position, SC_ENG_NO_CFA if unknown */
	uint64_t pc;                       /* where its entry probe was called from */
};

/* A chunk of nodes: node slot 0 of the chunk holds this header. */
struct sc_eng_chunk {
	uint64_t next_off;                 /* next chunk of the thread, 0 = last */
	uint32_t used;                     /* nodes in use after this header */
	uint32_t first_id;                 /* thread-local id of the first one */
	uint32_t slots;                    /* node slots, this header's included */
	uint32_t reserved32;
	uint64_t reserved[13];
};

struct sc_eng_thread {
	/* hot: every event */
	struct sc_eng_frame *top;
	struct sc_eng_frame *limit;        /* entering with top == limit: slow path */
	uint64_t acc;                      /* probe cost of every interval so far */
	uint8_t *base;                     /* arena base (node index -> address) */
	uint64_t osb_total;                /* OS-bound ticks of the thread so far */
	struct sc_eng_cs *cs_tab;          /* call sites, open addressing */
	uint64_t cs_shift;                 /* slot of a site: hash >> cs_shift */
	uint64_t last_raw;                 /* clock reading of the previous event */
	/* probe cost: ticks taken out of an interval, by the kinds of the
	 * events at its ends: [enter|exit before][enter|exit after] */
	uint32_t cost[2][2];
	uint32_t prev_exit;                /* the previous event was an exit */
	uint32_t cost_skip;                /* the interval ending now was OS-bound */
	uint64_t cost_exw;                 /* enter->exit cost beside work (calib.h) */
	/* timeline (sc_eng_tl_start): items written at tl_cur in the staging
	 * buffer, moved to the chunk from tl_end on; tl_cur NULL: no timeline */
	uint8_t *tl_cur, *tl_end;
	uint64_t tl_last;                  /* time of the last call item, in
					      units of 2^SC_ENG_TL_SHIFT ticks */
	uint32_t tl_filter;                /* SC_ENG_TL_*: record-time filters */
	uint32_t tl_depth;
	uint32_t tl_shift;                 /* call times in units of 2^tl_shift ticks */
	uint32_t tl_prev, tl_prev_parent;  /* node id of the last call item of
					      this chunk and its parent's (a
					      call item names its node by them,
					      SC_TL_NODEREL), SC_ENG_TL_NONE */
	/* slow path */
	struct sc_eng_arena *arena;
	struct sc_eng_frame *stack;        /* frames [0, stack_cap); 0 = root */
	struct sc_eng_node *drop_node;     /* node of the "dropping" frame */
	struct sc_eng_chunk *chunk;        /* current node chunk */
	uint64_t cs_mask;                  /* slots - 1 (+ SC_ENG_CS_PROBE at the end) */
	uint64_t cs_count;
	uint64_t drop_depth;               /* > 0: dropping events */
	/* counters the recorder reads */
	uint64_t magic;                    /* SC_ENG_THREAD_MAGIC */
	uint64_t next_off;                 /* older thread of the arena, 0 = none */
	uint64_t self_off;
	uint64_t stack_off, stack_cap;
	uint64_t cs_off;
	uint64_t chunk_head_off;           /* first node chunk */
	uint64_t nnodes;                   /* ids handed out */
	uint64_t root_off;                 /* root node */
	uint64_t first;                    /* time of the first event */
	uint64_t lost;                     /* events dropped */
	uint64_t repair_closed;            /* frames closed by a deeper exit */
	uint64_t stray_exits;              /* exits with no matching entry */
	uint64_t cs_lost;                  /* calls not put in the call-site table */
	uint64_t os_count[3];              /* OS events per category (runtime) */
	uint64_t os_lost;                  /* OS records the kernel dropped */
	uint64_t lost_nested;              /* probes inside a probe (signal handler) */
	/* child cache: node index of a (parent, function) pair's node, for
	 * parents with several children (an interpreter's); 0 until made */
	uint32_t *ccache;
	uint64_t ccache_off;
	uint64_t child_misses;
	uint32_t tid;
	uint32_t flags;
	char name[16];
	uint64_t user[5];                  /* owned by the runtime */
	uint64_t more_off;                 /* struct sc_eng_more (sc_eng_more_of) */
	struct sc_eng_cs cs_root;          /* charged while the stack is empty */
};

/* A thread's counters of the slow paths, in a block of their own (the
 * thread's state fills its 512 bytes, a size the arena's free lists keep). */
struct sc_eng_more {
	/* sampled shares (SPEC section 14; sc_eng_sample): samples by node
	 * id, open addressing, struct sc_eng_samp[samp_mask + 1] */
	uint64_t samp_off;                 /* 0: none yet */
	uint32_t samp_mask;
	uint32_t samp_used;
	uint64_t samples;                  /* all, probe_samples included */
	uint64_t probe_samples;            /* inside the probes' own code */
	/* repairs by cause (SC_ENG_REPAIR_*): repair_closed and stray_exits
	 * split; repair_cause is the cause of the repairs made now */
	uint64_t repair_by[SC_ENG_REPAIR_N];
	uint32_t repair_cause;
	uint32_t reserved;
	/* timeline: chunks of struct sc_eng_tl_chunk, oldest first */
	uint64_t tl_head_off, tl_chunk_off;
	uint64_t tl_dropped;               /* items the size limit kept out */
	uint64_t tl_filtered;              /* calls the filters kept out */
	uint64_t tl_min;                   /* --min-time in ticks */
	uint64_t tl_last_ns;               /* time of the last OS item (ns) */
	uint64_t tl_min_ns;                /* --min-time in ns (OS items) */
};

/*
 * A chunk of a thread's timeline: this header, then items coded as
 * SC_REC_TIMELINE codes them with SC_TL_NODEREL (scdata.h; the first call
 * item of a chunk writes its node out) in the runtime's clocks: a
 * call's times in units of 2^tl_shift ticks (its head's delta
 * against the previous call item),
 * an OS event's in CLOCK_MONOTONIC ns (against the previous OS item); the
 * recorder copies them (record/cct_emit.c), each chunk's first items
 * coded against its bases.
 *
 * The items are written into the thread's staging buffer (stage_off:
 * SC_ENG_TL_STAGE bytes and SC_ENG_TL_ROOM, in the arena, after the
 * thread's first chunk), the same pages again and again, and copied to the
 * end of the chunk's items when it is full (sc_eng_tl_grow): len counts
 * the bytes copied into the chunk, and the last chunk's go on in the staging
 * buffer up to the thread's tl_cur, unless flush_to, set while a copy is
 * made, equals len (the copy was counted, tl_cur not yet moved back).
 */
struct sc_eng_tl_chunk {
	uint64_t next_off;
	uint64_t len;                      /* bytes of items in the chunk */
	uint64_t base_tick;                /* the previous call item's time (units) */
	uint64_t base_ns;                  /* the previous OS item's time */
	uint64_t stage_off;                /* the thread's staging buffer */
	uint64_t flush_to;                 /* len a copy in progress makes, or 0 */
	uint64_t reserved[10];
};

/* A node's samples; id + 1 (0: an empty slot). */
struct sc_eng_samp {
	uint32_t key;
	uint32_t count;
};

_Static_assert(sizeof(struct sc_eng_arena_hdr) == SC_ENG_NODE_SIZE, "arena header");
_Static_assert(sizeof(struct sc_eng_node) == SC_ENG_NODE_SIZE, "node size");
_Static_assert(sizeof(struct sc_eng_chunk) == SC_ENG_NODE_SIZE, "chunk size");
_Static_assert(sizeof(struct sc_eng_cs) == 64, "call-site size");
_Static_assert(sizeof(struct sc_eng_frame) == 88, "frame size");
_Static_assert(sizeof(struct sc_eng_thread) <= 512, "a thread's state takes a 512-byte block");
_Static_assert(sizeof(struct sc_eng_more) == SC_ENG_NODE_SIZE, "more size");
_Static_assert(sizeof(struct sc_eng_tl_chunk) == SC_ENG_NODE_SIZE, "timeline chunk size");

/* A thread's slow-path counters (slow paths only). */
static inline struct sc_eng_more *sc_eng_more_of(const struct sc_eng_thread *t)
{
	return (struct sc_eng_more *)(t->base + t->more_off);
}

/* One frame closed by repair, counted under the cause the runtime gave. */
static inline void sc_eng_repaired(struct sc_eng_thread *t)
{
	struct sc_eng_more *m = sc_eng_more_of(t);

	t->repair_closed++;
	m->repair_by[m->repair_cause]++;
}

/* ---- arena ------------------------------------------------------------ */

/* Attach to an arena whose header is already written (size, bump). */
static inline void sc_eng_arena_attach(struct sc_eng_arena *a, void *buf, uint64_t size)
{
	a->base = (uint8_t *)buf;
	a->size = size;
	a->hdr = (struct sc_eng_arena_hdr *)buf;
	a->commit = 0;
	a->newaddr = 0;
	a->cfa_of = 0;
	a->write = 0;
	a->ctx = 0;
}

/* Initialise a zeroed buffer as an empty arena (tests; the runtime uses shm.h). */
static inline void sc_eng_arena_init(struct sc_eng_arena *a, void *buf, uint64_t size)
{
	sc_eng_arena_attach(a, buf, size);
	a->hdr->null_func = 0;
	a->hdr->size = size;
	if (a->hdr->bump < sizeof(struct sc_eng_arena_hdr))
		a->hdr->bump = sizeof(struct sc_eng_arena_hdr);
}

/*
 * Memory given back: lock-free stacks of blocks (Treiber stacks whose head
 * carries a 24-bit tag against ABA), each block starting with its struct
 * sc_eng_free.  List k (1..8) holds blocks of exactly k * 128 bytes, the
 * sizes a thread's first allocations take (thread 512, shadow stack 896,
 * call-site table and first node chunk 1024); list 0 the larger ones.
 * Blocks come from threads that ended (their shadow stack, call-site table
 * and the unused tail of their last node chunk) and from tables a live
 * thread outgrew.  An allocation takes a block of its own class, else of a
 * larger one (the rest given back); pushes and pops are rare (a thread's
 * start and end, a table's growth).
 */
struct sc_eng_free {
	uint64_t next;                /* block index (offset >> 7), 0 = none */
	uint64_t len;                 /* bytes, a multiple of 128 */
};

#define SC_ENG_FREE_IDX     ((1ull << 40) - 1)
#define SC_ENG_FREE_TAG     (1ull << 40)
#define SC_ENG_FREE_EXACT   8u           /* largest exact class, in nodes */

static inline unsigned sc_eng_free_class(uint64_t len)
{
	uint64_t u = len >> SC_ENG_NODE_SHIFT;

	return u <= SC_ENG_FREE_EXACT ? (unsigned)u : 0;
}

/* Give [off, off + len) back: len a multiple of 128, or rounded down. */
SC_ENG_SLOW void sc_eng_free(struct sc_eng_arena *a, uint64_t off, uint64_t len)
{
	uint64_t *headp, head, idx;
	struct sc_eng_free *b;

	len &= ~(uint64_t)(SC_ENG_NODE_SIZE - 1);
	if (!len || off % SC_ENG_NODE_SIZE || off < sizeof(struct sc_eng_arena_hdr) ||
	    off > a->size || len > a->size - off)
		return;
	b = (struct sc_eng_free *)(a->base + off);
	b->len = len;
	idx = off >> SC_ENG_NODE_SHIFT;
	headp = &a->hdr->free_head[sc_eng_free_class(len)];
	head = __atomic_load_n(headp, __ATOMIC_RELAXED);
	do
		b->next = head & SC_ENG_FREE_IDX;
	while (!__atomic_compare_exchange_n(headp, &head, ((head & ~SC_ENG_FREE_IDX) + SC_ENG_FREE_TAG) | idx,
					    1, __ATOMIC_RELEASE, __ATOMIC_RELAXED));
	__atomic_fetch_add(&a->hdr->freed, len, __ATOMIC_RELAXED);
}

/* Take the newest block off list k: its offset, 0 if the list is empty. */
static inline uint64_t sc_eng_free_pop(struct sc_eng_arena *a, unsigned k)
{
	uint64_t *headp = &a->hdr->free_head[k], head = __atomic_load_n(headp, __ATOMIC_ACQUIRE), idx;
	struct sc_eng_free *b;

	do {
		idx = head & SC_ENG_FREE_IDX;
		if (!idx || idx > a->size >> SC_ENG_NODE_SHIFT)
			return 0;
		b = (struct sc_eng_free *)(a->base + (idx << SC_ENG_NODE_SHIFT));
		/* b->next is stale if another thread took b meanwhile: the
		 * head's tag has changed then, and the exchange fails */
	} while (!__atomic_compare_exchange_n(headp, &head,
					      ((head & ~SC_ENG_FREE_IDX) + SC_ENG_FREE_TAG) |
					      (__atomic_load_n(&b->next, __ATOMIC_RELAXED) & SC_ENG_FREE_IDX),
					      1, __ATOMIC_ACQUIRE, __ATOMIC_ACQUIRE));
	return idx << SC_ENG_NODE_SHIFT;
}

/* Give back again a block just taken (not counted as freed twice). */
static inline void sc_eng_free_again(struct sc_eng_arena *a, uint64_t off, uint64_t len)
{
	sc_eng_free(a, off, len);
	__atomic_fetch_sub(&a->hdr->freed, len & ~(uint64_t)(SC_ENG_NODE_SIZE - 1), __ATOMIC_RELAXED);
}

/* A block of len bytes (a multiple of 128) from the lists, zeroed, or 0. */
SC_ENG_SLOW uint64_t sc_eng_reuse(struct sc_eng_arena *a, uint64_t len)
{
	uint64_t small[4], small_len[4], off = 0, blen = 0, i;
	unsigned k, nsmall = 0;
	volatile uint64_t *w;

	for (k = sc_eng_free_class(len); k && k <= SC_ENG_FREE_EXACT && !off; k++)
		off = sc_eng_free_pop(a, k);
	if (off) {
		blen = ((struct sc_eng_free *)(a->base + off))->len;
	} else {
		/* the large blocks: the newest few, those too small go back */
		while (nsmall < 4 && (off = sc_eng_free_pop(a, 0))) {
			blen = ((struct sc_eng_free *)(a->base + off))->len;
			if (blen >= len)
				break;
			small[nsmall] = off;
			small_len[nsmall++] = blen;
			off = 0;
		}
		for (i = 0; i < nsmall; i++)
			sc_eng_free_again(a, small[i], small_len[i]);
	}
	if (!off)
		return 0;
	if (blen < len || blen > a->size || off > a->size - blen)
		return 0;                  /* damaged: dropped */
	if (blen > len)
		sc_eng_free_again(a, off + len, blen - len);
	/* a loop, not memset: the runtime calls nothing the program may define */
	w = (volatile uint64_t *)(a->base + off);
	for (i = 0; i < len / 8; i++)
		w[i] = 0;
	__atomic_fetch_add(&a->hdr->reused, len, __ATOMIC_RELAXED);
	return off;
}

/* Allocate len bytes aligned to 128; returns the offset, or 0 if full. */
static inline uint64_t sc_eng_alloc(struct sc_eng_arena *a, uint64_t len)
{
	uint64_t off;

	len = (len + SC_ENG_NODE_SIZE - 1) & ~(uint64_t)(SC_ENG_NODE_SIZE - 1);
	if (unlikely(__atomic_load_n(&a->hdr->freed, __ATOMIC_RELAXED)) && (off = sc_eng_reuse(a, len)))
		return off;
	off = __atomic_fetch_add(&a->hdr->bump, len, __ATOMIC_RELAXED);
	if (off < sizeof(struct sc_eng_arena_hdr) || off > a->size || len > a->size - off)
		return 0;
	if (a->commit && a->commit(a, off, len)) {
		/* given back unless another allocation followed: a large one
		 * refused (a call-site table in a sandbox's reserve) must not
		 * leave the smaller ones that still fit with nothing */
		uint64_t end = off + len;

		__atomic_compare_exchange_n(&a->hdr->bump, &end, off, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
		return 0;
	}
	return off;
}

static inline struct sc_eng_node *sc_eng_node_at(const struct sc_eng_thread *t, uint32_t idx)
{
	return (struct sc_eng_node *)(t->base + ((uint64_t)idx << SC_ENG_NODE_SHIFT));
}

static inline uint32_t sc_eng_node_idx(const struct sc_eng_thread *t, const struct sc_eng_node *n)
{
	return (uint32_t)(((const uint8_t *)n - t->base) >> SC_ENG_NODE_SHIFT);
}

static inline uint64_t sc_eng_thread_off(const struct sc_eng_thread *t)
{
	return t->self_off;
}

/* ---- slow paths (rare: new node, new call site, deep stack) ----------- */

SC_ENG_SLOW struct sc_eng_node *sc_eng_node_new(struct sc_eng_thread *t, uint64_t func,
					   uint32_t parent_id, uint32_t flags)
{
	struct sc_eng_chunk *c = t->chunk;
	struct sc_eng_node *n;

	if (!c || c->used + 1 >= c->slots) {
		/* small for the many threads that call little, doubling for the rest */
		uint32_t slots = !c ? SC_ENG_CHUNK_FIRST : c->slots < SC_ENG_CHUNK_MAX ? c->slots * 2 : c->slots;
		uint64_t off = sc_eng_alloc(t->arena, (uint64_t)slots * SC_ENG_NODE_SIZE);
		struct sc_eng_chunk *nc;

		if (!off)
			return 0;
		nc = (struct sc_eng_chunk *)(t->base + off);
		nc->next_off = 0;
		nc->used = 0;
		nc->slots = slots;
		nc->first_id = (uint32_t)t->nnodes;
		if (c)
			__atomic_store_n(&c->next_off, off, __ATOMIC_RELEASE);
		else
			__atomic_store_n(&t->chunk_head_off, off, __ATOMIC_RELEASE);
		t->chunk = c = nc;
	}
	n = (struct sc_eng_node *)((uint8_t *)c + (uint64_t)(c->used + 1) * SC_ENG_NODE_SIZE);
	n->func = func;
	n->first_child = 0;
	n->next_sibling = 0;
	n->calls = 0;
	n->osb = n->osx = 0;
	n->incl_sum = n->excl_sum = 0;
	n->incl_min = n->excl_min = UINT64_MAX;
	n->incl_max = n->excl_max = 0;
	n->id = (uint32_t)t->nnodes;
	n->parent = parent_id;
	n->flags = flags | SC_ENG_NODE_TAIL;  /* ordered exits until learned (probe.c) */
	n->cs_site = SC_ENG_NO_SITE;
	n->cs = 0;
	n->cfa_k = SC_ENG_CFA_UNKNOWN;
	t->nnodes++;
	__atomic_store_n(&c->used, c->used + 1, __ATOMIC_RELEASE);
	return n;
}

static inline uint64_t sc_eng_cc_slot(uint32_t parent_id, uint64_t func)
{
	return (((uint64_t)parent_id * 0x9e3779b97f4a7c15ull) ^ func) * 0xff51afd7ed558ccdull >>
	       (64 - SC_ENG_CC_BITS);
}

/* Child of the top frame's node for func, found or created; NULL if full. */
SC_ENG_SLOW struct sc_eng_node *sc_eng_child_slow(struct sc_eng_thread *t, uint64_t func)
{
	struct sc_eng_node *p = t->top->node, *n, *prev = 0;
	uint32_t idx;

	if (p->first_child && !t->ccache && ++t->child_misses > SC_ENG_CC_AFTER) {
		uint64_t off = sc_eng_alloc(t->arena, sizeof(uint32_t) << SC_ENG_CC_BITS);

		t->child_misses = 0;       /* full arena: try again later */
		if (off) {
			t->ccache_off = off;
			t->ccache = (uint32_t *)(t->base + off);
		}
	}
	for (idx = p->first_child; idx; idx = n->next_sibling) {
		n = sc_eng_node_at(t, idx);
		if (n->func == func) {
			if (prev) {    /* move to front: the probe checks the first */
				prev->next_sibling = n->next_sibling;
				n->next_sibling = p->first_child;
				p->first_child = idx;
			}
			if (t->ccache)
				t->ccache[sc_eng_cc_slot(p->id, func)] = idx;
			return n;
		}
		prev = n;
	}
	n = sc_eng_node_new(t, func, p->id,
			    (t->tl_filter & SC_ENG_TL_ONLY) &&
			    ((p->flags & SC_ENG_NODE_TLIN) ||
			     (t->arena->tl_match && t->arena->tl_match(t->arena, func)))
			    ? SC_ENG_NODE_TLIN : 0);
	if (!n)
		return 0;
	n->next_sibling = p->first_child;
	p->first_child = sc_eng_node_idx(t, n);
	if (t->ccache)
		t->ccache[sc_eng_cc_slot(p->id, func)] = p->first_child;
	if (t->arena->newaddr)
		t->arena->newaddr(t->arena, func);
	return n;
}

/*
 * Call sites: open addressing by site only (a call instruction calls one
 * function, except indirect calls), so a probe finds its slot with one
 * multiply.  A site lives within SC_ENG_CS_PROBE slots of its home, without
 * wrapping (the table has that many extra slots at its end); the probe
 * checks the first two inline.
 */
/*
 * The home slot of (site, callee).  Both count: the hooks of functions
 * inlined into one host all pass the host's return address as their call
 * site, so one site can have dozens of callees (sqlite3VdbeExec has over a
 * hundred), which a slot of the site alone could not hold in its window:
 * the table grew to its limit, the rest went to cs_root, and their frames
 * lost the site that tells an inlined frame from a sibling (2.9 M repairs
 * in a SQLite workload).
 */
static inline uint64_t sc_eng_cs_slot(uint64_t site, uint64_t callee, uint64_t shift)
{
	return ((site ^ (callee * 0xc2b2ae3d27d4eb4full)) * 0x9e3779b97f4a7c15ull) >> shift;
}

/* The entry of (site, callee), else the free slot it may take, else NULL. */
static inline struct sc_eng_cs *sc_eng_cs_find(struct sc_eng_cs *tab, uint64_t shift,
					       uint64_t site, uint64_t callee, int *is_new)
{
	struct sc_eng_cs *e = tab + sc_eng_cs_slot(site, callee, shift), *end = e + SC_ENG_CS_PROBE;

	for (; e < end; e++) {
		if (e->callee == callee && e->site == site) {
			*is_new = 0;
			return e;
		}
		if (!e->callee) {
			*is_new = 1;
			return e;
		}
	}
	return 0;
}

static inline uint64_t sc_eng_log2(uint64_t x)
{
	return 63 - (uint64_t)__builtin_clzll(x);
}

/* Make the call-site table larger (four times, or more if its sites do not
 * fit their windows); open frames follow.  0 or -1. */
SC_ENG_SLOW int sc_eng_cs_grow(struct sc_eng_thread *t)
{
	uint64_t slots = t->cs_mask + 1, off, i, shift;
	struct sc_eng_cs *tab, *old = t->cs_tab, *e;
	struct sc_eng_frame *f;
	struct sc_eng_chunk *c;
	int is_new;

again:
	slots *= 4;
	shift = 64 - sc_eng_log2(slots);
	if (slots > SC_ENG_CS_MAX)
		return -1;
	off = sc_eng_alloc(t->arena, (slots + SC_ENG_CS_PROBE) * sizeof(struct sc_eng_cs));
	if (!off)
		return -1;
	tab = (struct sc_eng_cs *)(t->base + off);
	for (i = 0; i <= t->cs_mask + SC_ENG_CS_PROBE; i++) {
		if (!old[i].callee)
			continue;
		e = sc_eng_cs_find(tab, shift, old[i].site, old[i].callee, &is_new);
		if (!e) {                  /* the new table is given back */
			sc_eng_free(t->arena, off, (slots + SC_ENG_CS_PROBE) * sizeof(struct sc_eng_cs));
			goto again;
		}
		*e = old[i];
	}
	for (f = t->stack + 1; f <= t->top; f++) {
		if (f->cs >= old && f->cs <= old + t->cs_mask + SC_ENG_CS_PROBE)
			f->cs = sc_eng_cs_find(tab, shift, f->cs->site, f->cs->callee, &is_new);
	}
	for (c = t->chunk_head_off ? (struct sc_eng_chunk *)(t->base + t->chunk_head_off) : 0; c;
	     c = c->next_off ? (struct sc_eng_chunk *)(t->base + c->next_off) : 0) {
		struct sc_eng_node *n = (struct sc_eng_node *)(c + 1);
		for (i = 0; i < c->used; i++)      /* their caches point into the old table */
			n[i].cs_site = SC_ENG_NO_SITE;
	}
	t->cs_tab = tab;
	sc_eng_free(t->arena, t->cs_off, (t->cs_mask + 1 + SC_ENG_CS_PROBE) * sizeof(struct sc_eng_cs));
	t->cs_mask = slots - 1;
	t->cs_shift = shift;
	__atomic_store_n(&t->cs_off, off, __ATOMIC_RELEASE);
	return 0;
}

SC_ENG_SLOW struct sc_eng_cs *sc_eng_cs_slow(struct sc_eng_thread *t, uint64_t site, uint64_t callee)
{
	struct sc_eng_cs *e;
	int is_new;

	e = sc_eng_cs_find(t->cs_tab, t->cs_shift, site, callee, &is_new);
	if (e && !is_new)
		return e;
	if (!e || (t->cs_count + 1) * 4 > t->cs_mask + 1) {
		if (sc_eng_cs_grow(t) ||
		    !(e = sc_eng_cs_find(t->cs_tab, t->cs_shift, site, callee, &is_new))) {
			t->cs_lost++;
			return &t->cs_root;
		}
	}
	e->site = site;
	e->calls = e->ei = e->ee = e->osb_incl = e->osb_excl = e->active = 0;
	__atomic_store_n(&e->callee, callee, __ATOMIC_RELEASE);
	t->cs_count++;
	/* the caller may be code that is not instrumented (libc's qsort,
	 * start_thread): its module is known only from here */
	if (site && t->arena->newaddr)
		t->arena->newaddr(t->arena, site - 1);
	return e;
}

/* Bytes the arena gave a shadow stack of cap frames. */
static inline uint64_t sc_eng_frames_len(uint64_t cap)
{
	return (cap * sizeof(struct sc_eng_frame) + SC_ENG_NODE_SIZE - 1) & ~(uint64_t)(SC_ENG_NODE_SIZE - 1);
}

/* A stack four times deeper, or -1. */
SC_ENG_SLOW int sc_eng_stack_grow(struct sc_eng_thread *t)
{
	uint64_t cap = t->stack_cap * 4, off, depth = (uint64_t)(t->top - t->stack), i;
	struct sc_eng_frame *s;

	if (cap > SC_ENG_STACK_MAX)
		return -1;
	off = sc_eng_alloc(t->arena, cap * sizeof(struct sc_eng_frame));
	if (!off)
		return -1;
	s = (struct sc_eng_frame *)(t->base + off);
	for (i = 0; i <= depth; i++)
		s[i] = t->stack[i];
	sc_eng_free(t->arena, t->stack_off, sc_eng_frames_len(t->stack_cap));
	t->stack = s;
	t->top = s + depth;
	t->limit = s + cap - 2;    /* the last slot is kept for a dropping frame */
	t->stack_cap = cap;
	__atomic_store_n(&t->stack_off, off, __ATOMIC_RELEASE);
	return 0;
}

/*
 * A CPU-clock sample of the thread (SPEC section 14), found at an event:
 * it fell in the interval that event ends, so it belongs to the node on
 * top, like the interval (the frame below a "dropping" frame's).  One in
 * the probes' own code (in_probe) is only counted.  Nodes' counts are kept
 * in a table of their own (a node has no room, and samples are rare: ~1000
 * a second); a sample that finds no memory is not counted at all, so that
 * the nodes' counts always add up to samples - probe_samples.
 */
SC_ENG_SLOW void sc_eng_sample(struct sc_eng_thread *t, int in_probe)
{
	const struct sc_eng_frame *f = t->top;
	struct sc_eng_more *m = sc_eng_more_of(t);
	struct sc_eng_samp *tab;
	uint32_t key, i;

	if (in_probe) {
		m->samples++;
		m->probe_samples++;
		return;
	}
	if (f->node == t->drop_node && f > t->stack)
		f--;
	key = f->node->id + 1;
	if (!m->samp_off || 2 * (m->samp_used + 1) > m->samp_mask + 1) {
		uint32_t slots = m->samp_off ? 2 * (m->samp_mask + 1) : SC_ENG_SAMP_FIRST;
		uint64_t off = sc_eng_alloc(t->arena, (uint64_t)slots * sizeof(*tab));
		const struct sc_eng_samp *old = (const struct sc_eng_samp *)(t->base + m->samp_off);

		if (!off)
			return;
		tab = (struct sc_eng_samp *)(t->base + off);
		for (i = 0; m->samp_off && i <= m->samp_mask; i++) {
			uint32_t j = (old[i].key * 2654435761u) & (slots - 1);

			if (!old[i].key)
				continue;
			while (tab[j].key)
				j = (j + 1) & (slots - 1);
			tab[j] = old[i];
		}
		if (m->samp_off)
			sc_eng_free(t->arena, m->samp_off, (uint64_t)(m->samp_mask + 1) * sizeof(*tab));
		m->samp_mask = slots - 1;
		__atomic_store_n(&m->samp_off, off, __ATOMIC_RELEASE);
	}
	tab = (struct sc_eng_samp *)(t->base + m->samp_off);
	for (i = (key * 2654435761u) & m->samp_mask; tab[i].key && tab[i].key != key; i = (i + 1) & m->samp_mask)
		;
	if (!tab[i].key) {
		tab[i].key = key;
		m->samp_used++;
	}
	tab[i].count++;
	m->samples++;
}

/* ---- the state machine ------------------------------------------------ */

/*
 * The clock.  `raw` is the reading at an event (is_exit: an exit); a
 * reading below the previous one counts as equal.  Returns the reading, and
 * adds the probe cost of the interval ending now (by the kinds of its two
 * events; none for an OS-bound interval) to the thread's running total
 * `acc`.  Nothing here depends on the time taken out of whom: a call's
 * values are made when it closes (sc_eng_close), from its readings and the
 * cost added in its window, so an entry's work after its clock read is one
 * store, and no value waits on the previous event's arithmetic.  (Taking
 * the cost out of a clock of its own at every event, as before, put the
 * previous exit's arithmetic on the path of every entry: with the exit's
 * lfence, that was 5 ns a call in fib.)
 */
SC_ENG_HOT uint64_t sc_eng_now(struct sc_eng_thread *t, uint64_t raw, unsigned is_exit)
{
	uint64_t x = raw > t->last_raw ? raw : t->last_raw;
	uint64_t d = x - t->last_raw, c = t->cost[t->prev_exit][is_exit];

	{
		/* a function's own interval (enter->exit): less of the cost
		 * shows the longer it computes, down to cost_exw (calib.h);
		 * without branches, which leaves of any length would mispredict */
		uint64_t over = d > c ? d - c : 0;
		uint64_t own = over >= c - t->cost_exw ? t->cost_exw : c - over;

		c = ((t->prev_exit ^ 1) & is_exit) ? own : c;
	}
	t->prev_exit = is_exit;
	t->last_raw = x;
	if (unlikely(t->cost_skip)) {
		t->cost_skip = 0;
		c = 0;
	}
	t->acc += c;
	return x;
}

/*
 * What frame f closes with at reading x, the thread's cost total at acc;
 * *owed is its caller's `owed` (what an earlier child of the caller could
 * not give).  Its window's cost is acc - e_acc; net, its reading less that
 * cost, is what its caller takes out of its own (cnet).  Its own value is
 * net less its children's, less what is owed to it by its last child and
 * what its caller's earlier child left: an interval's reading comes early
 * or late by a varying amount (the entry's clock read is not ordered), so
 * short and long ones cancel over the call, and across calls of the same
 * caller (eight calls of an empty function in a loop, some short of their
 * cost, some over it).  Never below its OS-bound ticks (application time is
 * never negative): what it cannot give is left in *owed, for the caller's
 * next child to close or the caller itself, never a call in another
 * call's subtree (a rule that gave it to whatever closed next charged a
 * caller's shortfall to the first leaf of its next call: the 30 ns leaf of
 * bench/accuracy.sh came out 0.86-0.93x).  Without branches: tiny
 * functions come out about as long as their cost, so a branch on "short"
 * would mispredict.
 */
struct sc_eng_closed {
	uint64_t raw, net, incl, excl;
};

SC_ENG_HOT struct sc_eng_closed sc_eng_close(const struct sc_eng_frame *f, uint64_t x, uint64_t acc,
					     uint64_t *owed)
{
	struct sc_eng_closed r;
	int64_t own;
	uint64_t s;

	r.raw = x - f->entry;
	r.net = r.raw - (acc - f->e_acc);
	own = (int64_t)(r.net - f->cnet - f->owed - *owed);
	/* s = max(osb_own - own, 0) with a mask: gcc makes a branch of "?:" */
	s = f->osb_own - (uint64_t)own;
	s &= ~(uint64_t)((int64_t)s >> 63);
	r.excl = (uint64_t)own + s;
	*owed = s;
	r.incl = r.excl + f->ccomp;
	return r;
}

/* The closed child's values go to its parent p. */
SC_ENG_HOT void sc_eng_fold(struct sc_eng_frame *p, const struct sc_eng_closed *r)
{
	p->cnet += r->net;
	p->ccomp += r->incl;
}

/*
 * Probe costs in ticks per interval, by the kinds of its two events, and
 * enter_exit_work, the enter->exit cost in a function that computes
 * (calib.h; at most enter_exit).
 */
static inline void sc_eng_set_cost(struct sc_eng_thread *t, uint32_t enter_enter, uint32_t enter_exit,
				   uint32_t exit_enter, uint32_t exit_exit, uint32_t enter_exit_work)
{
	t->cost_exw = enter_exit_work < enter_exit ? enter_exit_work : enter_exit;
	t->cost[0][0] = enter_enter;
	t->cost[0][1] = enter_exit;
	t->cost[1][0] = exit_enter;
	t->cost[1][1] = exit_exit;
}

/*
 * The interval ending at `now` (the time of the next event, passed to the
 * following sc_eng_enter/exit) was OS-bound; os_ticks is the OS time
 * measured inside it (clamped to the interval).  Call before that event.
 * Such an interval keeps its probe cost: it is not application time at all.
 */
static inline void sc_eng_os_exact(struct sc_eng_thread *t, uint64_t now, uint64_t os_ticks)
{
	struct sc_eng_frame *f = t->top;
	uint64_t d = now > t->last_raw ? now - t->last_raw : 0;

	t->cost_skip = 1;
	if (unlikely(f->node == t->drop_node))
		f--;                       /* dropped time belongs to the frame below */
	if (os_ticks > d)
		os_ticks = d;
	f->node->osb += d;
	f->node->osx += os_ticks;
	f->osb_own += d;
	f->cs->osb_excl += d;
	t->osb_total += d;
}

static inline void sc_eng_os(struct sc_eng_thread *t, uint64_t now)
{
	sc_eng_os_exact(t, now, UINT64_MAX);
}

/* ---- the timeline (SPEC section 12) --------------------------------- */

/*
 * Keep a timeline in this thread: chunks from the arena (each taken from
 * arena->tl_left, when set), calls kept if they last min_ticks or more
 * (0: all), are less than depth deep (0: all), and, with only, are calls
 * of nodes marked SC_ENG_NODE_TLIN (arena->tl_match).  OS events are kept
 * if they last min_ns or more and the call they interrupt is kept by the
 * other two.  Call once, before the thread's first event.
 */
SC_ENG_SLOW void sc_eng_tl_start(struct sc_eng_thread *t, uint64_t min_ticks, uint64_t min_ns, uint32_t depth,
				 int only)
{
	struct sc_eng_more *m = sc_eng_more_of(t);

	m->tl_min = min_ticks;
	m->tl_min_ns = min_ns;
	t->tl_depth = depth;
	t->tl_filter = (min_ticks ? SC_ENG_TL_MIN : 0) | (depth ? SC_ENG_TL_DEPTH : 0) |
		       (only ? SC_ENG_TL_ONLY : 0);
	t->tl_shift = SC_ENG_TL_SHIFT;
	t->tl_last = t->last_raw >> SC_ENG_TL_SHIFT;
	t->tl_prev = t->tl_prev_parent = SC_ENG_TL_NONE;
	/* no chunk yet: the first item takes one (a thread that makes no
	 * call takes no memory) */
	t->tl_cur = t->tl_end = t->base;
}

/* Count the call items' times in units of 2^shift ticks (at most
 * SC_ENG_TL_SHIFT_MAX; tests whose ticks are nanoseconds keep them exact
 * with 0).  After sc_eng_tl_start, before the thread's first event. */
SC_ENG_SLOW void sc_eng_tl_unit(struct sc_eng_thread *t, unsigned shift)
{
	t->tl_shift = shift < SC_ENG_TL_SHIFT_MAX ? shift : SC_ENG_TL_SHIFT_MAX;
	t->tl_last = t->last_raw >> t->tl_shift;
}

/*
 * The staging buffer is full (or the thread has no chunk yet): its items
 * are copied to the chunk, through a->write when it can (on a VM a first
 * touch of each page of fresh shared memory cost more than the bytes
 * written in it: 13 us a page), and a new chunk is taken when the chunk
 * cannot hold another buffer.  Returns where to write, or NULL: the item
 * is dropped, counted (the next items try again, a chunk may be given
 * back).  Nothing is lost if the thread dies here: see sc_eng_tl_chunk.
 */
SC_ENG_SLOW uint8_t *sc_eng_tl_grow(struct sc_eng_thread *t)
{
	struct sc_eng_more *m = sc_eng_more_of(t);
	struct sc_eng_arena *a = t->arena;
	struct sc_eng_tl_chunk *c = m->tl_chunk_off ? (struct sc_eng_tl_chunk *)(t->base + m->tl_chunk_off) : 0;
	uint64_t off, left, stage_off = c ? c->stage_off : 0, take = SC_ENG_TL_CHUNK;
	uint8_t *stage = t->base + stage_off;

	if (c) {
		uint64_t pending = t->tl_cur >= stage && t->tl_cur <= stage + SC_ENG_TL_STAGE + SC_ENG_TL_ROOM
			? (uint64_t)(t->tl_cur - stage) : 0;

		if (pending && c->len + pending <= SC_ENG_TL_CHUNK - sizeof(*c)) {
			__atomic_store_n(&c->flush_to, c->len + pending, __ATOMIC_RELEASE);
			if (!a->write || a->write(a, m->tl_chunk_off + sizeof(*c) + c->len, stage, pending))
				__builtin_memcpy((uint8_t *)(c + 1) + c->len, stage, pending);
			__atomic_store_n(&c->len, c->len + pending, __ATOMIC_RELEASE);
			__atomic_store_n(&t->tl_cur, stage, __ATOMIC_RELEASE);
			__atomic_store_n(&c->flush_to, 0, __ATOMIC_RELEASE);
		}
		if (c->len + SC_ENG_TL_STAGE + SC_ENG_TL_ROOM <= SC_ENG_TL_CHUNK - sizeof(*c)) {
			t->tl_end = stage + SC_ENG_TL_STAGE;
			return t->tl_cur = stage;
		}
		/* full: no item until a new chunk is had */
		t->tl_cur = t->tl_end = stage;
	} else {
		take += SC_ENG_TL_STAGE + SC_ENG_TL_ROOM;     /* the staging buffer after it */
	}
	if (a->tl_left) {
		left = __atomic_load_n(a->tl_left, __ATOMIC_RELAXED);
		do {
			if (left < SC_ENG_TL_CHUNK) {
				m->tl_dropped++;
				return 0;
			}
		} while (!__atomic_compare_exchange_n(a->tl_left, &left, left - SC_ENG_TL_CHUNK, 1,
						      __ATOMIC_RELAXED, __ATOMIC_RELAXED));
	}
	off = sc_eng_alloc(a, take);
	if (!off) {
		if (a->tl_left)
			__atomic_fetch_add(a->tl_left, SC_ENG_TL_CHUNK, __ATOMIC_RELAXED);
		m->tl_dropped++;
		return 0;
	}
	if (!c) {
		stage_off = off + SC_ENG_TL_CHUNK;
		stage = t->base + stage_off;
	}
	{
		struct sc_eng_tl_chunk *n = (struct sc_eng_tl_chunk *)(t->base + off);

		n->next_off = 0;
		n->len = 0;
		n->base_tick = t->tl_last;
		n->base_ns = m->tl_last_ns;
		n->stage_off = stage_off;
		n->flush_to = 0;
	}
	if (c)
		__atomic_store_n(&c->next_off, off, __ATOMIC_RELEASE);
	else
		__atomic_store_n(&m->tl_head_off, off, __ATOMIC_RELEASE);
	m->tl_chunk_off = off;
	/* a chunk is a record of its own: its first call item names its node */
	t->tl_prev = t->tl_prev_parent = SC_ENG_TL_NONE;
	t->tl_end = stage + SC_ENG_TL_STAGE;
	return t->tl_cur = stage;
}

/* Whether a call of frame f lasting dur passes the record-time filters. */
SC_ENG_SLOW int sc_eng_tl_keep(struct sc_eng_thread *t, const struct sc_eng_frame *f, uint64_t dur)
{
	if (((t->tl_filter & SC_ENG_TL_MIN) && dur < sc_eng_more_of(t)->tl_min) ||
	    ((t->tl_filter & SC_ENG_TL_DEPTH) && (uint64_t)(f - t->stack) > t->tl_depth) ||
	    ((t->tl_filter & SC_ENG_TL_ONLY) && !(f->node->flags & SC_ENG_NODE_TLIN))) {
		sc_eng_more_of(t)->tl_filtered++;
		return 0;
	}
	return 1;
}

/*
 * A varint of v at p, the byte after it: values below 2^14 (nearly all of
 * a call item's) without a branch on their length, which a mix of one- and
 * two-byte values would mispredict.  Room for SC_VARINT_MAX bytes.
 */
SC_ENG_HOT uint8_t *sc_eng_tl_put(uint8_t *p, uint64_t v)
{
	if (likely(v < (1u << 14))) {
		uint64_t two = v >= 0x80;
		uint16_t x = (uint16_t)((v & 0x7f) | two << 7 | (v >> 7) << 8);

		__builtin_memcpy(p, &x, sizeof(x));
		return p + 1 + two;
	}
	return sc_varint_put(p, v);
}

/*
 * The call of frame f ends at now (flags SC_TL_F_*): one item, coded as
 * SC_TL_NODEREL says (scdata.h): its node named by the last call item's
 * when it is the same node or that one's parent (a loop's calls, a return
 * up the stack: most of them), else written out.  Times never go back
 * (sc_eng_now), so the end's delta is unsigned; both times are rounded
 * down to the thread's unit (sc_eng_tl_unit).
 */
SC_ENG_HOT void sc_eng_tl_call(struct sc_eng_thread *t, const struct sc_eng_frame *f, uint64_t now,
			       unsigned fl)
{
	uint8_t *p = t->tl_cur;
	const struct sc_eng_node *n = f->node;
	uint64_t end = now >> t->tl_shift;
	uint32_t id = n->id;
	uint64_t tag, v1, v2, v3, x, len1, len2, len3;

	if (unlikely(t->tl_filter) && !sc_eng_tl_keep(t, f, now - f->entry))
		return;
	if (unlikely(p >= t->tl_end) && !(p = sc_eng_tl_grow(t)))
		return;
	tag = SC_TL_N_NODE - (id == t->tl_prev_parent) - 2 * (uint64_t)(id == t->tl_prev);
	tag = fl ? SC_TL_N_NODE : tag;
	v1 = (end - t->tl_last) << 2 | tag;
	v2 = end - (f->entry >> t->tl_shift);
	v3 = (uint64_t)id << 2 | fl;
	if (likely((v1 | v2 | v3) < (1u << 14))) {
		/* the three as two-byte-at-most varints in one word, one store:
		 * the node's bytes written always, counted only when named */
		len1 = 1 + (v1 >= 0x80);
		len2 = 1 + (v2 >= 0x80);
		len3 = (1 + (v3 >= 0x80)) & -(uint64_t)(tag == SC_TL_N_NODE);
		x = (v1 & 0x7f) | (v1 >= 0x80) << 7 | (v1 >> 7) << 8;
		x |= ((v2 & 0x7f) | (v2 >= 0x80) << 7 | (v2 >> 7) << 8) << (8 * len1);
		x |= ((v3 & 0x7f) | (v3 >= 0x80) << 7 | (v3 >> 7) << 8) << (8 * (len1 + len2));
		__builtin_memcpy(p, &x, sizeof(x));
		p += len1 + len2 + len3;
	} else {
		p = sc_varint_put(p, v1);
		p = sc_varint_put(p, v2);
		if (tag == SC_TL_N_NODE)
			p = sc_varint_put(p, v3);
	}
	t->tl_prev = id;
	t->tl_prev_parent = n->parent;
	t->tl_cur = p;
	t->tl_last = end;
}

/* An OS event of category cat (system call sysno, or -1) from start_ns
 * lasting dur_ns (CLOCK_MONOTONIC): one item. */
SC_ENG_SLOW void sc_eng_tl_os(struct sc_eng_thread *t, uint64_t start_ns, uint64_t dur_ns, unsigned cat,
			      int64_t sysno)
{
	struct sc_eng_more *m = sc_eng_more_of(t);
	const struct sc_eng_frame *f = t->top;
	uint8_t *p = t->tl_cur;

	if (!p)
		return;
	if (t->tl_filter && (dur_ns < m->tl_min_ns ||
			     ((t->tl_filter & SC_ENG_TL_DEPTH) && (uint64_t)(f - t->stack) > t->tl_depth) ||
			     ((t->tl_filter & SC_ENG_TL_ONLY) && !(f->node->flags & SC_ENG_NODE_TLIN))))
		return;
	if (p >= t->tl_end && !(p = sc_eng_tl_grow(t)))
		return;
	p = sc_varint_put(p, (sc_zigzag((int64_t)(start_ns - m->tl_last_ns)) << 1 | SC_TL_X_OS) << 2 | SC_TL_N_OTHER);
	p = sc_varint_put(p, dur_ns);
	p = sc_varint_put(p, (uint64_t)(cat & 3) | (uint64_t)(sysno + 1) << 2);
	t->tl_cur = p;
	m->tl_last_ns = start_ns;
}

/* Close the top frame at reading now (stats, parent's children, call site);
 * fl: SC_TL_F_REPAIRED when a repair closes it. */
SC_ENG_HOT void sc_eng_pop_fl(struct sc_eng_thread *t, uint64_t now, unsigned fl)
{
	struct sc_eng_frame *f = t->top;
	struct sc_eng_node *n = f->node;
	struct sc_eng_cs *cs = f->cs;
	struct sc_eng_closed r = sc_eng_close(f, now, t->acc, &f[-1].owed);
	uint64_t incl = r.incl, excl = r.excl;

	n->incl_sum += incl;
	n->excl_sum += excl;
	if (unlikely(incl < n->incl_min))
		n->incl_min = incl;
	if (unlikely(incl > n->incl_max))
		n->incl_max = incl;
	if (unlikely(excl < n->excl_min))
		n->excl_min = excl;
	if (unlikely(excl > n->excl_max))
		n->excl_max = excl;
	n->removed += r.raw - incl;
	sc_eng_fold(f - 1, &r);
	cs->ee += excl;
	if (--cs->active == 0) {
		cs->ei += incl;
		cs->osb_incl += t->osb_total - f->osb_entry;
	}
	if (t->tl_cur)
		sc_eng_tl_call(t, f, now, fl);
	t->top = f - 1;
}

SC_ENG_HOT void sc_eng_pop(struct sc_eng_thread *t, uint64_t now)
{
	sc_eng_pop_fl(t, now, 0);
}

/* A frame opened at reading now (node n, call site cs, position cfa, pc). */
SC_ENG_HOT void sc_eng_frame_open(const struct sc_eng_thread *t, struct sc_eng_frame *f, struct sc_eng_node *n,
				  struct sc_eng_cs *cs, uint64_t now, uint64_t cfa, uint64_t pc)
{
	f->node = n;
	f->cs = cs;
	f->entry = now;
	f->e_acc = t->acc;
	f->cnet = f->ccomp = f->owed = 0;
	f->osb_entry = t->osb_total;
	f->osb_own = 0;
	f->cfa = cfa;
	f->pc = pc;
}

/* Function entry at now: node and call site already found. */
SC_ENG_HOT void sc_eng_push(struct sc_eng_thread *t, struct sc_eng_node *n,
			       struct sc_eng_cs *cs, uint64_t now, uint64_t cfa, uint64_t pc)
{
	struct sc_eng_frame *f = t->top + 1;

	sc_eng_frame_open(t, f, n, cs, now, cfa, pc);
	cs->calls++;
	cs->active++;
	n->calls++;
	t->top = f;
}

/*
 * Close the frames an entry at physical CFA `cfa` (from `site`, probe called
 * at pc) proves gone; see the rules at the top.  Returns the entry's
 * effective CFA against the frame now on top (its container's minus one if
 * inlined).
 */
static inline uint64_t sc_eng_cfa_repair(struct sc_eng_thread *t, uint64_t site, uint64_t pc,
					 uint64_t cfa, uint64_t now)
{
	struct sc_eng_frame *f;

	if (cfa == SC_ENG_NO_CFA)
		return cfa;
	for (f = t->top; f > t->stack; f = t->top) {
		if (f->node == t->drop_node || f->cfa == SC_ENG_NO_CFA || cfa < f->cfa ||
		    cfa - f->cfa >= SC_ENG_CFA_NEAR)
			break;
		/* a physical callee is at least 16 bytes lower (an aligned call
		 * pushes 8): closer is a chain of inlined frames */
		if (cfa - f->cfa < 16 && f->cs->site == site && f->pc != pc)
			return f->cfa - 1;         /* inlined into the frame on top */
		sc_eng_pop_fl(t, now, SC_TL_F_REPAIRED);
		sc_eng_repaired(t);
	}
	return cfa;
}

/*
 * An entry at physical CFA phys (SC_ENG_NO_CFA: unknown), its probe called
 * from pc; sp, the probe's stack pointer, to learn the node's offset from
 * (0: nothing learned, as for an entry applied after its stack is gone: a
 * signal handler's, queued while a probe ran).
 */
SC_ENG_SLOW void sc_eng_enter_at(struct sc_eng_thread *t, uint64_t func, uint64_t site, uint64_t now,
				 uint64_t sp, uint64_t phys, uint64_t pc)
{
	struct sc_eng_frame *f;
	struct sc_eng_node *n;
	struct sc_eng_cs *cs;
	uint64_t cfa;

	if (t->drop_depth) {
		t->drop_depth++;
		t->lost++;
		return;
	}
	cfa = sc_eng_cfa_repair(t, site, pc, phys, now);
	f = t->top;
	if (f == t->limit && sc_eng_stack_grow(t))
		goto drop;
	n = sc_eng_child_slow(t, func);
	if (!n)
		goto drop;
	if (sp && phys != SC_ENG_NO_CFA && cfa >= sp && cfa - sp < (1u << 30)) {
		if (!(n->flags & SC_ENG_NODE_CFA)) {
			n->cfa_k = (int32_t)(cfa - sp);
			n->flags |= SC_ENG_NODE_CFA;
		} else if (n->cfa_k != SC_ENG_CFA_UNKNOWN && (int64_t)(cfa - sp) != n->cfa_k) {
			/* One node, two frame shapes: a function the compiler
			 * inlined on one path and called on another (g++'s
			 * std::__relocate_a in vector growth), or a frame that
			 * realigns its stack.  The learned offset would place the
			 * other shape's frames wrong (closed by their own
			 * callees: a repair each); unlearned, the fast path
			 * sends every entry of the node here. */
			n->cfa_k = SC_ENG_CFA_UNKNOWN;
		}
	}
	cs = sc_eng_cs_slow(t, site, func);
	sc_eng_push(t, n, cs, now, cfa, pc);
	return;
drop:
	/* A frame that keeps the stack's shape while events are dropped; its
	 * node has no children and matches no function, so every event comes
	 * here until its exit.  Its time stays in the frame below (it is not
	 * one of that frame's children). */
	f = t->top + 1;
	sc_eng_frame_open(t, f, t->drop_node, &t->cs_root, now, SC_ENG_NO_CFA, 0);
	t->top = f;
	t->drop_depth = 1;
	t->lost++;
}

SC_ENG_SLOW void sc_eng_enter_slow(struct sc_eng_thread *t, uint64_t func, uint64_t site, uint64_t now,
				   uint64_t sp, uint64_t pc)
{
	uint64_t phys = SC_ENG_NO_CFA;

	if (sp && !t->drop_depth)
		phys = t->arena->cfa_of ? t->arena->cfa_of(t->arena, site, sp) : sp;
	sc_eng_enter_at(t, func, site, now, sp, phys, pc);
}

/*
 * The common entry (known child, call site cached by the node or in one of
 * its first two slots, room on the stack), in two steps without any call,
 * so that a probe built on them needs no stack frame: the lookups, which
 * return the child node (NULL: nothing was changed, sc_eng_enter() must
 * handle the event) with its call site and position; then the entry at
 * `now`.  A probe reads its clock between the two, as late as it can.
 */
static inline struct sc_eng_node *sc_eng_enter_find(struct sc_eng_thread *t, uint64_t func, uint64_t site,
						    uint64_t sp, struct sc_eng_cs **csp, uint64_t *cfap)
{
	struct sc_eng_frame *f = t->top;
	struct sc_eng_node *n = sc_eng_node_at(t, f->node->first_child);
	struct sc_eng_cs *cs;
	uint64_t cfa;

	/* position: a learned offset from sp (not learned yet: above every
	 * frame); at or above the top frame's, the slow path decides what it
	 * closes */
	if (unlikely(n->func != func)) {
		/* not the most recent child: the cache, if the thread has one
		 * (node 0 is the arena header: its func is 0, never a match) */
		if (!t->ccache)
			return 0;
		n = sc_eng_node_at(t, t->ccache[sc_eng_cc_slot(f->node->id, func)]);
		if (n->func != func || n->parent != f->node->id)
			return 0;
	}
	cfa = sp + (uint64_t)(int64_t)n->cfa_k;
	if (unlikely(f == t->limit || cfa >= f->cfa))
		return 0;
	if (likely(n->cs_site == site)) {
		cs = n->cs;                /* most nodes are entered from one site */
	} else {
		struct sc_eng_cs *end;

		cs = t->cs_tab + sc_eng_cs_slot(site, func, t->cs_shift);
		for (end = cs + SC_ENG_CS_PROBE; cs->site != site || cs->callee != func; cs++)
			if (cs + 1 == end || !cs->callee)
				return 0;
		n->cs_site = site;
		n->cs = cs;
	}
	*csp = cs;
	*cfap = cfa;
	return n;
}

static inline void sc_eng_enter_commit(struct sc_eng_thread *t, struct sc_eng_node *n, struct sc_eng_cs *cs,
				       uint64_t now, uint64_t cfa, uint64_t pc)
{
	sc_eng_push(t, n, cs, sc_eng_now(t, now, 0), cfa, pc);
}

/* Both steps: 1 if done, 0 if nothing was changed. */
static inline int sc_eng_enter_fast(struct sc_eng_thread *t, uint64_t func, uint64_t site, uint64_t now,
				    uint64_t sp, uint64_t pc)
{
	struct sc_eng_node *n;
	struct sc_eng_cs *cs;
	uint64_t cfa;

	n = sc_eng_enter_find(t, func, site, sp, &cs, &cfa);
	if (!n)
		return 0;
	sc_eng_enter_commit(t, n, cs, now, cfa, pc);
	return 1;
}

/*
 * An entry whose probe ran with stack pointer sp (0: position unknown, then
 * the frame is never closed by position, and the slow path is taken),
 * called from instruction pc.  With arena->cfa_of NULL, sp is the CFA
 * itself.
 */
static inline void sc_eng_enter_sp(struct sc_eng_thread *t, uint64_t func, uint64_t site, uint64_t now,
				   uint64_t sp, uint64_t pc)
{
	if (!sp || !sc_eng_enter_fast(t, func, site, now, sp, pc))
		sc_eng_enter_slow(t, func, site, sc_eng_now(t, now, 0), sp, pc);
}

static inline void sc_eng_enter(struct sc_eng_thread *t, uint64_t func, uint64_t site, uint64_t now)
{
	sc_eng_enter_sp(t, func, site, now, 0, 0);
}

SC_ENG_SLOW void sc_eng_exit_slow(struct sc_eng_thread *t, uint64_t func, uint64_t now)
{
	struct sc_eng_frame *f;

	if (t->drop_depth) {
		t->lost++;
		if (--t->drop_depth == 0)
			t->top--;
		return;
	}
	for (f = t->top - 1; f > t->stack; f--)
		if (f->node->func == func)
			break;
	if (f <= t->stack) {
		struct sc_eng_more *m = sc_eng_more_of(t);

		/* under the cause at hand: a frame a throw's repairs closed
		 * before the catch gives back its return (retstack.c) */
		t->stray_exits++;
		m->repair_by[m->repair_cause]++;
		return;
	}
	while (t->top != f) {
		sc_eng_pop_fl(t, now, SC_TL_F_REPAIRED);
		sc_eng_repaired(t);
	}
	sc_eng_pop(t, now);
}

/* The common exit (of the top frame): 1 if done, 0 if nothing was changed. */
SC_ENG_HOT int sc_eng_exit_fast(struct sc_eng_thread *t, uint64_t func, uint64_t now)
{
	if (unlikely(t->top->node->func != func))
		return 0;
	sc_eng_pop(t, sc_eng_now(t, now, 1));
	return 1;
}

static inline void sc_eng_exit(struct sc_eng_thread *t, uint64_t func, uint64_t now)
{
	if (!sc_eng_exit_fast(t, func, now))
		sc_eng_exit_slow(t, func, sc_eng_now(t, now, 1));
}

/*
 * A thread of execution that stops running without an event of its own (a
 * user-level context switched away from): the interval up to reading now
 * is its top frame's, with no probe cost in it.  Returns the reading.
 */
SC_ENG_SLOW uint64_t sc_eng_suspend(struct sc_eng_thread *t, uint64_t now)
{
	t->cost_skip = 1;
	return sc_eng_now(t, now, t->prev_exit);
}

/*
 * It runs again at reading now, suspended since reading `at`: its open
 * frames were on no running stack meanwhile, so that time is left out of
 * their windows (their entries move later by it), and the interval to
 * its next event starts now.
 */
SC_ENG_SLOW void sc_eng_resume(struct sc_eng_thread *t, uint64_t at, uint64_t now)
{
	uint64_t d = now > at ? now - at : 0;
	struct sc_eng_frame *f;

	for (f = t->stack; f && f <= t->top; f++)
		f->entry += d;
	if (now > t->last_raw)
		t->last_raw = now;
	t->cost_skip = 1;
}

/*
 * A new engine thread in arena a, first event time `now`.  Returns NULL if
 * the arena is full.  Linked into the arena's thread list for the recorder.
 */
SC_ENG_SLOW struct sc_eng_thread *sc_eng_thread_new(struct sc_eng_arena *a, uint32_t tid, uint64_t now)
{
	uint64_t off = sc_eng_alloc(a, sizeof(struct sc_eng_thread)), soff, coff, doff, moff;
	struct sc_eng_thread *t;
	struct sc_eng_node *root;
	uint64_t head;

	if (!off)
		return 0;
	moff = sc_eng_alloc(a, sizeof(struct sc_eng_more));
	soff = sc_eng_alloc(a, SC_ENG_STACK_FIRST * sizeof(struct sc_eng_frame));
	coff = sc_eng_alloc(a, (SC_ENG_CS_FIRST + SC_ENG_CS_PROBE) * sizeof(struct sc_eng_cs));
	doff = sc_eng_alloc(a, SC_ENG_NODE_SIZE);
	if (!soff || !coff || !doff || !moff)
		return 0;
	t = (struct sc_eng_thread *)(a->base + off);
	t->arena = a;
	t->base = a->base;
	t->magic = SC_ENG_THREAD_MAGIC;
	t->self_off = off;
	t->tid = tid;
	t->more_off = moff;
	sc_eng_more_of(t)->repair_cause = SC_ENG_REPAIR_OTHER;
	t->stack = (struct sc_eng_frame *)(a->base + soff);
	t->stack_off = soff;
	t->stack_cap = SC_ENG_STACK_FIRST;
	t->cs_tab = (struct sc_eng_cs *)(a->base + coff);
	t->cs_off = coff;
	t->cs_mask = SC_ENG_CS_FIRST - 1;
	t->cs_shift = 64 - sc_eng_log2(SC_ENG_CS_FIRST);
	t->first = t->last_raw = now;
	t->cost_skip = 1;                  /* the first interval is the runtime's, not a probe's */
	t->drop_node = (struct sc_eng_node *)(a->base + doff);
	t->drop_node->func = SC_ENG_DROP_FUNC;
	t->drop_node->first_child = 0;
	root = sc_eng_node_new(t, 0, UINT32_MAX, 0);
	if (!root)
		return 0;
	t->root_off = (uint64_t)((uint8_t *)root - a->base);
	sc_eng_frame_open(t, &t->stack[0], root, &t->cs_root, now, SC_ENG_NO_CFA, 0);
	t->top = t->stack;
	t->limit = t->stack + SC_ENG_STACK_FIRST - 2;
	head = __atomic_load_n(&a->hdr->threads, __ATOMIC_RELAXED);
	do
		t->next_off = head;
	while (!__atomic_compare_exchange_n(&a->hdr->threads, &head, off, 1,
					    __ATOMIC_RELEASE, __ATOMIC_RELAXED));
	return t;
}

/*
 * The thread has ended (no event will come): give back what the recorder
 * does not read.  Always the unused node slots of its last chunk; with no
 * frame open (the usual end: its start function returned), its shadow
 * stack and the empty slots of its call-site table too, whose entries are
 * packed to the front (SC_ENG_THREAD_PACKED: the recorder reads cs_count
 * entries).  Open frames keep both: the recorder needs them.
 */
SC_ENG_SLOW void sc_eng_thread_retire(struct sc_eng_thread *t)
{
	struct sc_eng_arena *a = t->arena;
	struct sc_eng_chunk *c = t->chunk;
	struct sc_eng_cs *tab = t->cs_tab;
	uint64_t i, j, n, keep;

	if (t->flags & SC_ENG_THREAD_RETIRED)
		return;
	t->flags |= SC_ENG_THREAD_RETIRED;
	if (t->ccache) {
		t->ccache = 0;
		sc_eng_free(a, t->ccache_off, sizeof(uint32_t) << SC_ENG_CC_BITS);
	}
	if (c && c->slots > c->used + 1) {
		uint32_t slots = c->slots;

		__atomic_store_n(&c->slots, c->used + 1, __ATOMIC_RELEASE);
		sc_eng_free(a, (uint64_t)((uint8_t *)c - t->base) + (uint64_t)(c->used + 1) * SC_ENG_NODE_SIZE,
			    (uint64_t)(slots - c->used - 1) * SC_ENG_NODE_SIZE);
	}
	if (t->top != t->stack)
		return;
	sc_eng_free(a, t->stack_off, sc_eng_frames_len(t->stack_cap));
	t->stack_cap = 0;
	__atomic_store_n(&t->stack_off, 0, __ATOMIC_RELEASE);
	t->stack = t->top = t->limit = 0;

	n = t->cs_mask + 1 + SC_ENG_CS_PROBE;
	for (i = j = 0; i < n; i++)
		j += tab[i].callee != 0;
	/* the entries into a block of their own (the whole table then goes
	 * back, in a size the next thread takes), or packed where they are */
	keep = j ? sc_eng_alloc(a, j * sizeof(*tab)) : 0;
	if (keep) {
		struct sc_eng_cs *to = (struct sc_eng_cs *)(t->base + keep);

		for (i = 0; i < n; i++)
			if (tab[i].callee)
				*to++ = tab[i];
		__atomic_store_n(&t->cs_off, keep, __ATOMIC_RELEASE);
		sc_eng_free(a, (uint64_t)((uint8_t *)tab - t->base), n * sizeof(*tab));
	} else {
		for (i = j = 0; i < n; i++) {
			if (!tab[i].callee)
				continue;
			if (i != j)
				tab[j] = tab[i];
			j++;
		}
		keep = (j * sizeof(*tab) + SC_ENG_NODE_SIZE - 1) & ~(uint64_t)(SC_ENG_NODE_SIZE - 1);
		for (i = j; i < keep / sizeof(*tab); i++)
			tab[i].callee = 0;
		sc_eng_free(a, t->cs_off + keep, n * sizeof(*tab) - keep);
	}
	t->cs_tab = 0;
	t->cs_count = j;
	t->flags |= SC_ENG_THREAD_PACKED;
}

/*
 * A frame inherited from another thread's stack (the parent's, in a forked
 * child, at the same addresses): entered at now with its position (cfa, pc) so
 * that the exits still to come balance, but not a new call of func (nor of
 * its call site).
 */
SC_ENG_SLOW void sc_eng_inherit(struct sc_eng_thread *t, uint64_t func, uint64_t site, uint64_t now,
				uint64_t cfa, uint64_t pc)
{
	struct sc_eng_frame *below = t->top;

	sc_eng_enter_slow(t, func, site, sc_eng_now(t, now, 0), 0, pc);
	if (t->top == below + 1 && t->top->node != t->drop_node) {
		t->top->cfa = cfa;
		t->top->node->calls--;
		if (t->top->cs->calls)
			t->top->cs->calls--;
	}
}

#endif
