/*
 * timeline — a recording's events in order (SPEC section 12): what
 * `record --timeline` kept, decoded, named and filtered, for `replay`,
 * `export --format chrome` and the HTML report's lanes.
 *
 * Built from a loaded profile (an_profile_load keeps the SC_REC_TIMELINE
 * records as they are; decoding happens here).  Per thread, items are
 * sorted by start, an enclosing call before what it encloses (calls nest
 * properly within a thread: a call's children start no earlier and end no
 * later than it).  Times are nanoseconds since the timeline's origin
 * (t0_ns: the earliest item of the recording, CLOCK_MONOTONIC), so every
 * view of one recording shares one axis.
 *
 *	struct an_tl_filter f = AN_TL_FILTER_ALL;
 *	struct an_timeline *tl;
 *	if (an_timeline_build(p, &f, &tl, err, sizeof(err)) < 0) ...
 *	for (i = 0; i < tl->nthreads; i++)
 *		for (j = 0; j < tl->threads[i].nitems; j++) {
 *			const struct an_tl_item *it = &tl->threads[i].items[j];
 *			an_tl_name(tl, it->func) ...
 *		}
 *	an_timeline_free(tl);
 *
 * A recording without a timeline gives -ENOENT and a one-line message
 * saying to record with --timeline.  A damaged item ends its record's
 * items (counted in damaged_items: the items lost when the record says
 * how many it holds, else 1), never a crash.
 *
 * Ownership: the timeline owns its arrays; names point into the profile,
 * which must outlive it.
 */
#ifndef SC_ANALYSIS_TIMELINE_H
#define SC_ANALYSIS_TIMELINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analysis/analysis.h"

enum an_tl_kind {
	AN_TL_CALL,               /* a function call (library calls too) */
	AN_TL_OS,                 /* the OS working for the thread */
	AN_TL_SAMPLE,             /* a sample of the thread's stack */
};

/* an_tl_item.flags */
#define AN_TL_OPEN      (1u << 0)   /* call had not returned at the thread's end */
#define AN_TL_REPAIRED  (1u << 1)   /* call closed by a repair (SPEC section 2) */
#define AN_TL_LIBCALL   (1u << 2)   /* call into another module (SPEC section 11) */

struct an_tl_item {              /* 32 bytes: a replay holds millions */
	uint64_t start_ns;        /* since t0_ns */
	uint64_t dur_ns;          /* calls and OS events; 0 for samples */
	uint32_t func;            /* calls: function (an_tl_name); samples: its
				     innermost function; OS: UINT32_MAX */
	uint32_t depth;           /* calls: 0 = outermost; OS events and
				     samples: the depth of the innermost call
				     around them + 1 (0 if none) */
	uint32_t kind : 2;        /* enum an_tl_kind */
	uint32_t flags : 6;       /* AN_TL_* */
	uint32_t os_cat : 4;      /* OS: enum sc_os_cat */
	uint32_t nstack : 20;     /* samples: frames [stack, stack + nstack) of
				     an_timeline.frames, innermost first */
	union {
		int32_t sysno;    /* OS system call: its number, -1 unknown */
		uint32_t stack;   /* samples: see nstack */
	};
};
_Static_assert(sizeof(struct an_tl_item) == 32, "timeline item size");

/* A calling-context node, for an_tl_citem_get: its function, its distance
 * from the root (calls at it are depth - 1 deep), its parent, whether it
 * is a library call's. */
struct an_tl_node {
	uint32_t func, depth, parent;
	uint32_t libcall;
};

/* An item of an_timeline_build_linked, 16 bytes: a call as it is most
 * often (an_tl_citem_get makes the whole item), else an index in wide. */
struct an_tl_citem {
	uint64_t start_ns;        /* absolute: CLOCK_MONOTONIC */
	uint32_t dur;             /* a call's duration (ns), or the index in wide */
	uint32_t ref;             /* AN_TL_C_* flags, node id << 4 */
};
#define AN_TL_C_WIDE      1u  /* the item is wide[dur] */
#define AN_TL_C_OPEN      4u
#define AN_TL_C_REPAIRED  8u
#define AN_TL_C_NODE_MAX  0x0fffffffu

struct an_tl_thread {
	uint32_t proc_id, pid, tid;
	const char *name;         /* thread name (comm), or NULL */
	const char *exe;          /* its process's executable, or NULL */
	struct an_tl_item *items;
	size_t nitems;
	uint64_t dropped;         /* events the size limit kept out */
	uint64_t filtered;        /* calls the record-time filters kept out */
	uint64_t calls;           /* AN_TL_CALL items here (after filters) */
	size_t items_alloc;       /* private: items' allocation (util.h, big_grow) */
	/* an_timeline_build_linked only (NULL otherwise): items is NULL,
	 * citems the items in the order recorded (with wide and nodes: see
	 * an_tl_citem_get), order[0 .. nitems) the kept ones in order */
	uint32_t *order;
	struct an_tl_citem *citems;
	struct an_tl_item *wide;  /* items that do not fit a citem */
	struct an_tl_node *nodes; /* by node id */
	size_t order_alloc, citems_alloc, wide_alloc;     /* private */
};

struct an_timeline {
	struct an_profile *profile;
	enum sc_method method;
	uint64_t t0_ns;           /* CLOCK_MONOTONIC of time 0 */
	uint64_t end_ns;          /* latest item end, since t0_ns */
	struct an_tl_thread *threads;   /* by process, then first item */
	size_t nthreads;
	uint32_t *frames;         /* sample stacks: function ids */
	size_t nframes;
	uint64_t items;           /* all threads, after filters */
	uint64_t dropped, filtered;     /* all threads, at record time */
	uint64_t damaged_items;   /* items not decoded: damaged records */
	bool linked;              /* an_timeline_build_linked */
};

/* View-time filters (replay's options); record-time ones are in the file. */
struct an_tl_filter {
	uint32_t tid;             /* 0: all threads */
	uint64_t since_ns;        /* items that end at or after it ... */
	uint64_t until_ns;        /* ... and start at or before it */
	uint64_t min_ns;          /* calls and OS events at least this long */
	uint32_t max_depth;       /* calls at depth < max_depth; 0: all */
};
#define AN_TL_FILTER_ALL ((struct an_tl_filter){ 0, 0, UINT64_MAX, 0, 0 })

int an_timeline_build(struct an_profile *p, const struct an_tl_filter *f,
		      struct an_timeline **out, char *err, size_t errlen);
void an_timeline_free(struct an_timeline *tl);       /* accepts NULL */

/*
 * The same timeline for one pass over it in order (replay), built with
 * less work and memory: each thread's items are decoded once into 16-byte
 * citems and stay where they were decoded, in the order recorded, with
 * their starts absolute (CLOCK_MONOTONIC: less t0_ns for the values of
 * an_timeline_build), and order[] says the order:
 *
 *	for (k = 0; k < th->nitems; k++) {
 *		struct an_tl_item it;
 *		an_tl_citem_get(th, &th->citems[th->order[k]], &it);
 *		...
 *	}
 *
 * visits the items an_timeline_build gives, in its order, with the same
 * values otherwise, for the threads the filter's tid selects (the others
 * have no items to visit); an_timeline_check does not apply.
 */
int an_timeline_build_linked(struct an_profile *p, const struct an_tl_filter *f,
			     struct an_timeline **out, char *err, size_t errlen);

/* The whole item of citem c of thread th (an_timeline_build_linked). */
static inline void an_tl_citem_get(const struct an_tl_thread *th, const struct an_tl_citem *c,
				   struct an_tl_item *it)
{
	const struct an_tl_node *nd;

	if (c->ref & AN_TL_C_WIDE) {
		*it = th->wide[c->dur];
		it->start_ns = c->start_ns;
		return;
	}
	nd = &th->nodes[c->ref >> 4];
	it->start_ns = c->start_ns;
	it->dur_ns = c->dur;
	it->func = nd->func;
	it->depth = nd->depth - 1;
	it->kind = AN_TL_CALL;
	it->flags = (c->ref & AN_TL_C_OPEN ? AN_TL_OPEN : 0) |
		    (c->ref & AN_TL_C_REPAIRED ? AN_TL_REPAIRED : 0) |
		    (nd->libcall ? AN_TL_LIBCALL : 0);
	it->os_cat = 0;
	it->nstack = 0;
	it->sysno = -1;
}

/* A function's name and module (dense function id of an item). */
const char *an_tl_name(const struct an_timeline *tl, uint32_t func);
const char *an_tl_module(const struct an_timeline *tl, uint32_t func);
/* A system call's name on this machine's architecture ("read"), or NULL. */
const char *an_tl_syscall_name(int32_t sysno);

/*
 * Check the timeline's invariants: items sorted by start; calls of a
 * thread properly nested (a call at depth d > 0 lies within the latest
 * call at depth d - 1 that started before it); every function id valid.
 * 0, or -EINVAL with the first violation in why.
 */
int an_timeline_check(const struct an_timeline *tl, char *why, size_t whylen);

#endif
