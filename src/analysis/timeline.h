/*
 * timeline — a recording's events in order (SPEC section 12): what
 * `record --timeline` kept, decoded, named and filtered, for `replay`,
 * `export --format chrome` and the HTML report's lanes.
 *
 * Built from a loaded profile (an_profile_load keeps the SC_REC_TIMELINE
 * records as they are: those stored uncompressed stay in the data file and
 * are read back with pread when decoded, here).  an_timeline_build decodes
 * it all into memory (the HTML report); an_timeline_stream reads it as a
 * stream in bounded memory (replay, the chrome export).  Per thread, items are
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
 * which must outlive it (and keeps the data file open for the stream).
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

struct an_tl_tstream;           /* an_timeline_stream: private */
struct an_tl_stream;

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
	uint64_t first_ns;        /* an_timeline_stream: the first item's start */
	struct an_tl_tstream *ts; /* an_timeline_stream: private */
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
	struct an_tl_stream *stream;    /* an_timeline_stream: private */
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
 * The same timeline read as a stream (replay, export --format chrome),
 * in memory bounded whatever its length: the threads with their counts
 * (nitems, calls: after the filters) and no items; an_tl_begin(tl, i)
 * then an_tl_next(tl, &it) give thread i's items, the very items
 * an_timeline_build gives, in its order, for the threads the filter's tid
 * selects (the others have none).  A sample's frames are in tl->frames
 * until the next call of an_tl_next.  window: calls decoded at once (0:
 * the default; tests make it small).  One thread is read at a time; a
 * thread can be read again.  an_timeline_check does not apply.
 */
int an_timeline_stream(struct an_profile *p, const struct an_tl_filter *f, size_t window,
		       struct an_timeline **out, char *err, size_t errlen);
void an_tl_begin(struct an_timeline *tl, size_t thread);
int an_tl_next(struct an_timeline *tl, struct an_tl_item *it);     /* 1, or 0 at the end */

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
