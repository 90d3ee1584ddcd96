/*
 * scdata — the stackclock data file (default name "stackclock.data").
 *
 * One file per recording session.  Layout (all little-endian, full
 * description in docs/data-format.md):
 *
 *   file header   struct sc_file_header (magic, version, min_version, features)
 *   chunk*        struct sc_chunk_header + payload
 *
 * A chunk's payload is a sequence of records, optionally zstd-compressed as a
 * whole; the header carries the payload's CRC32 (over the stored bytes) so
 * damage is detected per chunk.  A record is struct sc_rec_header (type,
 * size) followed by size bytes of payload; records never span chunks.
 * Readers skip record types they do not know, so new kinds (a later method,
 * a later export) are added without breaking old readers; a reader refuses a
 * file whose min_version is above its own version.
 *
 * Every struct below is the on-disk layout, its size pinned by a
 * static_assert beside it: changing one is a format change (see the
 * compatibility rules in docs/data-format.md).
 *
 * Damage policy: a truncated or corrupt chunk ends reading at that point with
 * sc_reader_next() returning SC_READ_DAMAGED once (the caller prints a
 * warning and keeps what it read); a bad file header is refused with a
 * negative errno and a message in the caller's buffer.  Never a crash: every
 * size in the file is validated before use.
 *
 * Ownership: the writer and reader own their buffers; a record pointer
 * returned by sc_reader_next() stays valid until the next call.  Neither
 * object is thread-safe.
 */
#ifndef SC_SCDATA_H
#define SC_SCDATA_H

#include <assert.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SC_FILE_MAGIC      "STKCLOCK"    /* 8 bytes, no NUL stored */
#define SC_FILE_VERSION    1
#define SC_FILE_MIN_VERSION 1
#define SC_CHUNK_MAGIC     0x4b4e4843u   /* "CHNK" */

/* Feature bits in sc_file_header.features. */
#define SC_FEAT_ZSTD       (1u << 0)     /* some chunks are zstd-compressed */
#define SC_FEAT_INSTRUMENT (1u << 1)     /* holds calling-context records */
#define SC_FEAT_SAMPLE     (1u << 2)     /* holds stack/sample records */

struct sc_file_header {
	char     magic[8];
	uint16_t version;
	uint16_t min_version;
	uint32_t features;
	uint64_t reserved;
};
static_assert(sizeof(struct sc_file_header) == 24, "file header size");

#define SC_CHUNK_ZSTD      (1u << 0)

struct sc_chunk_header {
	uint32_t magic;          /* SC_CHUNK_MAGIC */
	uint32_t flags;          /* SC_CHUNK_* */
	uint32_t stored_size;    /* bytes that follow this header */
	uint32_t raw_size;       /* bytes of records after decompression */
	uint32_t crc32;          /* zlib crc32 of the stored bytes */
	uint32_t nrecords;
};
static_assert(sizeof(struct sc_chunk_header) == 24, "chunk header size");

#define SC_CHUNK_MAX_RAW   (16u << 20)   /* readers refuse larger chunks */

struct sc_rec_header {
	uint16_t type;           /* enum sc_rec_type */
	uint16_t reserved;
	uint32_t size;           /* payload bytes following this header */
};
static_assert(sizeof(struct sc_rec_header) == 8, "record header size");
/*
 * The payload is followed by zero padding up to a multiple of 8, so every
 * record header and payload starts 8-byte aligned in a chunk; size does not
 * count the padding.
 */
#define SC_REC_PAD(size)   (((size_t)(size) + 7) & ~(size_t)7)

enum sc_rec_type {
	SC_REC_SESSION      = 1,   /* struct sc_rec_session + argv strings */
	SC_REC_SESSION_END  = 2,   /* struct sc_rec_session_end */
	SC_REC_PROCESS      = 3,   /* struct sc_rec_process + exe path */
	SC_REC_THREAD       = 4,   /* struct sc_rec_thread + name */
	SC_REC_MODULE       = 5,   /* struct sc_rec_module + path */
	SC_REC_CCT_NODE     = 6,   /* struct sc_rec_cct_node */
	SC_REC_CALLSITE     = 7,   /* struct sc_rec_callsite */
	SC_REC_THREAD_STATS = 8,   /* struct sc_rec_thread_stats */
	SC_REC_STACK        = 9,   /* struct sc_rec_stack + ip[nframes] */
	SC_REC_SAMPLES      = 10,  /* struct sc_rec_samples */
	SC_REC_LOST         = 11,  /* struct sc_rec_lost */
	SC_REC_PATCHED      = 12,  /* struct sc_rec_patched */
	SC_REC_PROBE_COST   = 13,  /* struct sc_rec_probe_cost */
	SC_REC_CCT_REMOVED  = 14,  /* struct sc_rec_cct_removed */
	SC_REC_CCT_SAMPLES  = 15,  /* struct sc_rec_cct_samples */
	SC_REC_THREAD_MORE  = 16,  /* struct sc_rec_thread_more */
	SC_REC_LIBCALL      = 17,  /* struct sc_rec_libcall + name */
	SC_REC_TIMELINE     = 18,  /* struct sc_rec_timeline + coded items */
	SC_REC_UNRECORDED   = 19,  /* struct sc_rec_unrecorded + program path */
	SC_REC_MAX
};

enum sc_method {
	SC_METHOD_INSTRUMENT = 1,
	SC_METHOD_SAMPLE     = 2,
};

/* OS-event categories (instrumentation); bit i = category i. */
enum sc_os_cat {
	SC_OS_SWITCH  = 0,
	SC_OS_SYSCALL = 1,
	SC_OS_FAULT   = 2,
	SC_OS_NCAT
};
#define SC_OS_BIT(c) (1u << (c))
#define SC_OS_ALL    (SC_OS_BIT(SC_OS_SWITCH) | SC_OS_BIT(SC_OS_SYSCALL) | SC_OS_BIT(SC_OS_FAULT))
/*
 * A category's name as the command line (--os-events), `dump` and the
 * report spell it: "switch", "syscall", "fault"; NULL past SC_OS_NCAT.
 */
const char *sc_os_cat_name(unsigned cat);

/*
 * Process images: every exec gives a new proc_id (a small integer the
 * recorder assigns), so addresses are always resolved against the right
 * mappings; pid is the operating system's.
 */

struct sc_rec_session {
	uint32_t method;          /* enum sc_method */
	uint32_t frequency_hz;    /* sampling rate asked for; for instrument,
	                             of its sampled shares (SPEC section 14),
	                             0 if they were turned off */
	uint32_t os_requested;    /* SC_OS_BIT mask selected with --os-events */
	uint32_t flags;           /* SC_SESS_* */
	uint64_t start_realtime_ns;
	uint32_t argc;
	uint32_t target_pid;      /* first process, or the attached one */
	/* followed by argc NUL-terminated strings (the profiled command) */
};
static_assert(sizeof(struct sc_rec_session) == 32, "session size");
#define SC_SESS_ATTACHED   (1u << 0)  /* record -p */
#define SC_SESS_KERNEL     (1u << 1)  /* --kernel */

struct sc_rec_session_end {
	uint64_t duration_ns;     /* wall clock of the recording */
	int32_t  exit_status;     /* of the target: wait status, or -1 */
	uint32_t os_observed;     /* SC_OS_BIT mask the kernel let us observe */
	uint64_t lost_events;     /* instrumentation events lost in total */
	uint64_t lost_samples;    /* sampling records lost in total */
};
static_assert(sizeof(struct sc_rec_session_end) == 32, "session_end size");

struct sc_rec_process {
	uint32_t proc_id;
	uint32_t pid;
	uint32_t ppid;
	uint32_t parent_proc_id;  /* UINT32_MAX if none */
	uint64_t start_ns;        /* CLOCK_MONOTONIC */
	uint64_t end_ns;          /* 0 if unknown */
	/* followed by the executable path, NUL-terminated */
};
static_assert(sizeof(struct sc_rec_process) == 32, "process size");

struct sc_rec_thread {
	uint32_t proc_id;
	uint32_t tid;
	uint64_t start_ns;
	uint64_t end_ns;
	/* followed by the thread's name (comm), NUL-terminated */
};
static_assert(sizeof(struct sc_rec_thread) == 24, "thread size");

/* One mapping of an ELF object into a process image. */
struct sc_rec_module {
	uint32_t proc_id;
	uint32_t build_id_len;    /* 0 if unknown */
	uint64_t start;           /* mapped address range [start, end) */
	uint64_t end;
	uint64_t pgoff;           /* file offset of start */
	uint8_t  build_id[20];
	uint32_t flags;           /* SC_MOD_* */
	/* followed by the path, NUL-terminated ("[vdso]", "[kernel]" ok) */
};
static_assert(sizeof(struct sc_rec_module) == 56, "module size");
#define SC_MOD_EXEC        (1u << 0)  /* executable mapping */
#define SC_MOD_BASE        (1u << 1)  /* start is the load bias (dladdr base),
                                         end unknown: resolve by nearest base */

/*
 * Instrumentation: one node of a thread's calling-context tree.  Node 0 of
 * each thread is the root (func 0); every other node is a call path from the
 * root, keyed by function.  All times in nanoseconds.  Exclusive values are
 * stored; inclusive values are derived at report time (sum over the
 * outermost occurrence of a function on each path, see SPEC section 2).
 */
struct sc_rec_cct_node {
	uint32_t proc_id;
	uint32_t tid;
	uint32_t id;
	uint32_t parent;          /* UINT32_MAX for the root */
	uint64_t func;            /* runtime address of the function */
	uint64_t calls;           /* entries */
	uint64_t elapsed_excl;    /* EE: intervals with this node on top */
	uint64_t app_excl;        /* AE: the same, not OS-bound (interval rule) */
	uint64_t app_excl_exact;  /* the same with only measured OS time removed */
	uint64_t completed;       /* calls that returned: count of the stats below */
	uint64_t incl_min, incl_max, incl_sum;   /* per call elapsed inclusive */
	uint64_t excl_min, excl_max, excl_sum;   /* per call elapsed exclusive */
};
static_assert(sizeof(struct sc_rec_cct_node) == 112, "cct node size");

/*
 * Instrumentation: the probes' cost, calibrated at record start (SPEC
 * section 10), taken out of every interval that was not OS-bound, by the
 * kinds of the events at its two ends.  Absent: nothing was taken out.
 */
#define SC_PROBE_COST_PATCHED 1u   /* measured on the probes of run-time patching */
struct sc_rec_probe_cost {
	uint32_t flags;           /* SC_PROBE_COST_* */
	uint32_t samples;         /* calibration batches measured */
	uint64_t cost_ps[4];      /* picoseconds per interval: enter->enter,
	                             enter->exit, exit->enter, exit->exit */
	uint64_t enter_exit_work_ps; /* enter->exit in a function that computes */
};
static_assert(sizeof(struct sc_rec_probe_cost) == 48, "probe_cost size");

/*
 * Instrumentation: what compensation took out of one CCT node (ns), to add
 * back for the raw values (report --raw-times): to its EE, AE, exact AE
 * and per-call sums.  Written after the thread's nodes, only for nodes
 * with something taken out; per-call minimum and maximum have no raw form.
 */
struct sc_rec_cct_removed {
	uint32_t proc_id;
	uint32_t tid;
	uint32_t id;
	uint32_t reserved;
	uint64_t elapsed_excl;
	uint64_t app_excl;
	uint64_t app_excl_exact;
	uint64_t incl_sum;        /* over the completed calls' subtrees */
	uint64_t excl_sum;
};
static_assert(sizeof(struct sc_rec_cct_removed) == 56, "cct_removed size");

/*
 * Instrumentation, sampled shares (SPEC section 14): the thread's CPU-clock
 * samples that found CCT node `id` on top of its stack of open calls (id 0,
 * the root: no instrumented call open).  Written after the thread's nodes,
 * only for nodes with samples.  Samples inside the probes' own code are
 * not here: sc_rec_thread_more.probe_samples.
 */
struct sc_rec_cct_samples {
	uint32_t proc_id;
	uint32_t tid;
	uint32_t id;
	uint32_t reserved;
	uint64_t samples;
};
static_assert(sizeof(struct sc_rec_cct_samples) == 24, "cct_samples size");

/*
 * Instrumentation: repairs by cause.  The first four split
 * sc_rec_thread_stats.repairs (frames closed by repair, and exits without
 * an entry: "other"); the last three split its open_frames by how the
 * image ended: exit (the runtime saw it end: exit(), the last thread's
 * return, pthread_exit), kill (it did not: a signal's default action,
 * SIGKILL) or detach (it did not end: an attached recording stopped while
 * the image goes on; files older than this cause count those as exit).
 */
enum sc_repair_cause {
	SC_REPAIR_LONGJMP   = 0,   /* closed by a longjmp/siglongjmp up the stack */
	SC_REPAIR_EXCEPTION = 1,   /* unwound by an exception (_Unwind_RaiseException) */
	SC_REPAIR_SIGNAL    = 2,   /* a jump out of a signal handler that interrupted a probe */
	SC_REPAIR_OTHER     = 3,   /* anything else, exits without an entry included */
	SC_REPAIR_EXIT      = 4,   /* open at the end, the image ended by exit */
	SC_REPAIR_KILL      = 5,   /* open at the end, the image was killed */
	SC_REPAIR_DETACH    = 6,   /* open at the detach, the image goes on */
	SC_REPAIR_NCAUSE    = 7
};
/* "longjmp", "exception", "signal", "other", "exit", "kill", "detach";
 * NULL past the end */
const char *sc_repair_cause_name(unsigned cause);

/* Instrumentation: per thread, what sc_rec_thread_stats does not hold. */
struct sc_rec_thread_more {
	uint32_t proc_id;
	uint32_t tid;
	uint64_t samples;         /* CPU-clock samples of the thread, all */
	uint64_t probe_samples;   /* of those, inside the probes' own code */
	uint64_t repairs[SC_REPAIR_NCAUSE];   /* older files: the first 6 (72 bytes) */
};
static_assert(sizeof(struct sc_rec_thread_more) == 80, "thread_more size");

/* Instrumentation: calls of one callee from one call site of a thread. */
struct sc_rec_callsite {
	uint32_t proc_id;
	uint32_t tid;
	uint64_t site;            /* return address in the caller */
	uint64_t callee;          /* function address */
	uint64_t calls;
	uint64_t elapsed_incl;    /* outermost calls only (recursion once) */
	uint64_t elapsed_excl;
	uint64_t app_incl;
	uint64_t app_excl;
};
static_assert(sizeof(struct sc_rec_callsite) == 64, "callsite size");

struct sc_rec_thread_stats {
	uint32_t proc_id;
	uint32_t tid;
	uint64_t events;          /* enter + exit events processed */
	uint64_t lost_events;     /* events dropped (tree full, stack too deep) */
	uint64_t repairs;         /* frames closed by repair + stray exits */
	uint64_t open_frames;     /* frames open at the thread's last event */
	uint64_t os_count[SC_OS_NCAT]; /* OS events observed per category */
	uint64_t first_ns;        /* time of the first and last event */
	uint64_t last_ns;
};
static_assert(sizeof(struct sc_rec_thread_stats) == 80, "thread_stats size");

/* Sampling: one distinct call stack, leaf first. */
struct sc_rec_stack {
	uint32_t id;
	uint16_t nframes;
	uint16_t flags;           /* SC_STACK_* */
	/* followed by uint64_t ip[nframes]; ip[0] is the sampled pc, the rest
	 * are return addresses (resolve them at ip - 1) */
};
static_assert(sizeof(struct sc_rec_stack) == 8, "stack size");
#define SC_STACK_ROOT      (1u << 0)  /* unwinding reached the thread's root */
#define SC_STACK_TRUNCATED (1u << 1)  /* stopped at the end of the copied stack */
#define SC_STACK_KERNEL    (1u << 2)  /* ip[] starts with kernel frames */

/* Sampling: how many samples of one thread had one stack. */
struct sc_rec_samples {
	uint32_t proc_id;
	uint32_t tid;
	uint32_t stack_id;
	uint32_t reserved;
	uint64_t count;
};
static_assert(sizeof(struct sc_rec_samples) == 24, "samples size");

struct sc_rec_lost {
	uint32_t kind;            /* SC_LOST_* */
	uint32_t proc_id;         /* UINT32_MAX if not known */
	uint64_t count;
};
static_assert(sizeof(struct sc_rec_lost) == 16, "lost size");
enum { SC_LOST_SAMPLES = 1, SC_LOST_EVENTS = 2, SC_LOST_UNWIND = 3,
       SC_LOST_OS_RECORDS = 4,
       SC_LOST_UNHOOKED = 5 };    /* run-time patching: frames whose return
                                     was not hooked (their exits are
                                     inferred) */  /* OS-event records the kernel dropped
                                     (instrumentation: exact OS time and
                                     counts are short by these) */

/*
 * An object a process image patched at run time (SPEC section 10): how many
 * of its functions were patched, and how many were left alone per reason
 * (index: enum patch_reason of record/reloc.h, whose order the plan files
 * pin too).  An object patched in several images (exec of the same
 * program) is listed by each.
 */
struct sc_rec_patched {
	uint32_t proc_id;
	uint32_t build_id_len;    /* 0 if the object has none */
	uint8_t  build_id[20];
	uint32_t patched;
	uint32_t unpatched[32];
	uint64_t base;            /* load bias in that image */
	uint64_t patch_ns;        /* what patching it took, start to end */
};
static_assert(sizeof(struct sc_rec_patched) == 176, "patched size");

/*
 * A function of another module that instrumented code calls (SPEC section
 * 11): its CCT nodes' function address in that process, and the name the
 * call used, which names its row (an IFUNC's name rather than the variant
 * the loader picked, the alias called rather than another at the same
 * address).  Followed by the name, NUL-terminated.
 */
struct sc_rec_libcall {
	uint32_t proc_id;
	uint32_t flags;           /* 0 */
	uint64_t addr;
};
static_assert(sizeof(struct sc_rec_libcall) == 16, "libcall size");

/*
 * A process that ran a program the recording could not follow (statically
 * linked, 32-bit, set-ID: enum sc_exec_why of format/execcheck.h), noted
 * by the image that exec'd or spawned it (proc_id; pid is the process that
 * ran the program).  Followed by the program's path, NUL-terminated.
 */
struct sc_rec_unrecorded {
	uint32_t proc_id;
	uint32_t pid;
	uint32_t reason;          /* enum sc_exec_why */
	uint32_t flags;           /* 0 */
};
static_assert(sizeof(struct sc_rec_unrecorded) == 16, "unrecorded size");

/*
 * The timeline (SPEC section 12, record --timeline): one thread's events in
 * the order they were kept, as coded items (a thread's items may span
 * several records, in order; each record codes its first items against
 * its bases).  An item starts with a varint
 *
 *	zigzag(t - t_prev) << 2 | kind
 *
 * where t is the item's reference time, t_prev the previous item's (the
 * record's base for the first), varints unsigned LEB128, zigzag
 * (x << 1) ^ (x >> 63).  Then, by kind:
 *
 *	SC_TL_CALL    t = the call's end; varint dur; varint (node << 2 |
 *	              SC_TL_F_*): node is the thread's CCT node id (its function
 *	              and its callers), the call began at t - dur.  Calls are
 *	              kept when they end, so in the order of their ends.
 *	SC_TL_OS      t = the OS event's start; varint dur; varint (cat |
 *	              (sysno + 1) << 2): enum sc_os_cat, sysno the system call's
 *	              number or -1.
 *	SC_TL_SAMPLE  t = the sample's time; varint stack: sampling, the id of
 *	              its SC_REC_STACK; instrumentation, the CCT node on top.
 *	3             reserved (a reader stops at it).
 *
 * Clocks.  Without SC_TL_TICKS (sampling) every time is CLOCK_MONOTONIC ns
 * and t_prev is the previous item's, of any kind, base_ns the first's.
 * With SC_TL_TICKS (instrumentation: the probes' clock, copied as the
 * runtime wrote it), calls count in ticks of the time-stamp counter and OS
 * events in ns, each kind against its own previous item (base_tick,
 * base_ns); a tick time T is ns0 + (T - tick0) * ns_per_tick ns, a tick
 * duration D is D * ns_per_tick ns.
 *
 * With SC_TL_NODEREL (the runtime's call items; always with SC_TL_TICKS)
 * the head's two low bits are a tag instead of the kind, which lets most
 * call items leave their node out:
 *
 *	SC_TL_N_SAME, SC_TL_N_PARENT, SC_TL_N_NODE  a call; head = (t - t_prev)
 *	              << 2 | tag (unsigned: a thread's ticks never go back);
 *	              varint dur; its node is the previous call item's of the
 *	              same record (SC_TL_N_SAME), that node's parent
 *	              (SC_TL_N_PARENT), or a varint (node << 2 | SC_TL_F_*)
 *	              that follows (SC_TL_N_NODE; the only way to carry flags).
 *	              A record's first call item is SC_TL_N_NODE.
 *	SC_TL_N_OTHER head = (zigzag(t - t_prev) << 1 | x) << 2 | SC_TL_N_OTHER,
 *	              x SC_TL_X_OS or SC_TL_X_SAMPLE; then as their kind above.
 *
 * Calls still open at the thread's end are kept with SC_TL_F_OPEN and the
 * thread's last event as their end.  dropped counts the events the size
 * limit kept out, filtered the calls the record-time filters did (both
 * cumulative for the thread, the last record's count is the total).
 */
enum { SC_TL_CALL = 0, SC_TL_OS = 1, SC_TL_SAMPLE = 2 };
#define SC_TL_F_OPEN      1u     /* had not returned when the thread ended */
#define SC_TL_F_REPAIRED  2u     /* closed by a repair (SPEC section 2) */
#define SC_TL_TICKS       1u     /* sc_rec_timeline.flags: calls in ticks */
#define SC_TL_NODEREL     2u     /* sc_rec_timeline.flags: heads carry SC_TL_N_* */
enum { SC_TL_N_SAME = 0, SC_TL_N_PARENT = 1, SC_TL_N_NODE = 2, SC_TL_N_OTHER = 3 };
enum { SC_TL_X_OS = 0, SC_TL_X_SAMPLE = 1 };
#define SC_TL_ALL         UINT32_MAX   /* sc_rec_timeline.nitems: up to its end */

struct sc_rec_timeline {
	uint32_t proc_id;
	uint32_t tid;
	uint64_t base_ns;         /* what the first (OS) item codes against */
	uint32_t nitems;          /* items in this record; SC_TL_ALL: as many
	                             as its bytes hold */
	uint32_t flags;           /* SC_TL_TICKS, SC_TL_NODEREL */
	uint64_t dropped;         /* events kept out by the size limit, so far */
	uint64_t filtered;        /* calls kept out by --min-time/--depth/--only */
	/* SC_TL_TICKS only */
	uint64_t base_tick;       /* what the first call item codes against */
	uint64_t tick0, ns0;      /* a tick time and its CLOCK_MONOTONIC ns */
	double ns_per_tick;
	/* followed by the coded items */
};
static_assert(sizeof(struct sc_rec_timeline) == 72, "timeline size");

/* ---- writer ---------------------------------------------------------- */

struct sc_writer;

/*
 * Start writing path: into a temporary file beside it that sc_writer_close()
 * renames over it once complete and on disk (util.h, outfile), so a failed
 * or interrupted write leaves what path held before.  Returns 0 or -errno.
 */
int sc_writer_open(const char *path, uint32_t features, struct sc_writer **out);
/* Append one record; buffered into the current chunk.  0 or -errno. */
int sc_writer_add(struct sc_writer *w, enum sc_rec_type type,
		  const void *payload, size_t size);
/* Same, payload given as a fixed part and a variable tail (string, ips). */
int sc_writer_add2(struct sc_writer *w, enum sc_rec_type type,
		   const void *fixed, size_t fixed_size,
		   const void *tail, size_t tail_size);
/*
 * Same, as a chunk of its own stored uncompressed, the tail written from
 * where it is (no copy): for a few large records (a timeline's chunks)
 * whose compression would cost more than it saves.  fixed_size <= 128.
 */
int sc_writer_add_stored(struct sc_writer *w, enum sc_rec_type type,
			 const void *fixed, size_t fixed_size,
			 const void *tail, size_t tail_size);
/* Write out the current chunk now (records so far survive a crash). */
int sc_writer_flush(struct sc_writer *w);
/* Flush, close, put in place, free.  Accepts NULL.  Returns 0, or -errno
 * with the temporary file removed and path untouched. */
int sc_writer_close(struct sc_writer *w);
/* Give up: remove the temporary file, free.  Accepts NULL. */
void sc_writer_discard(struct sc_writer *w);

/* ---- reader ---------------------------------------------------------- */

struct sc_reader;

struct sc_record {
	enum sc_rec_type type;
	uint32_t size;
	const void *data;         /* valid until the next sc_reader_next() */
};

enum {
	SC_READ_OK      = 1,      /* *rec filled */
	SC_READ_EOF     = 0,
	SC_READ_DAMAGED = 2,      /* damage found; reading stopped there */
};

/*
 * Open a data file.  Returns 0, or -errno with a one-line reason in err
 * (for example "not a stackclock data file (bad magic)").  err does not
 * name the file: callers print "<path>: <err>".
 */
int sc_reader_open(const char *path, struct sc_reader **out,
		   char *err, size_t errlen);
/* Same on a memory buffer (for the fuzz harness); buf must outlive it. */
int sc_reader_open_mem(const void *buf, size_t len, struct sc_reader **out,
		       char *err, size_t errlen);
/*
 * Next record: SC_READ_OK, SC_READ_EOF, or SC_READ_DAMAGED (once; then EOF)
 * with sc_reader_damage() describing what and where.
 */
int sc_reader_next(struct sc_reader *r, struct sc_record *rec);
const char *sc_reader_damage(const struct sc_reader *r);
/*
 * Where the payload of rec, the record sc_reader_next() returned last,
 * lies in the file as it is (a file reader, an uncompressed chunk): its
 * byte offset, or -1 (a memory reader, a compressed chunk).  Lets a
 * caller leave a large payload in the file and pread() it when needed.
 */
int64_t sc_reader_payload_offset(const struct sc_reader *r, const struct sc_record *rec);
uint32_t sc_reader_features(const struct sc_reader *r);
/* The reader's descriptor, when it reads a regular file (one pread can
 * read again: not a pipe), else -1.  The reader keeps it. */
int sc_reader_file_fd(const struct sc_reader *r);
unsigned sc_reader_version(const struct sc_reader *r);
void sc_reader_close(struct sc_reader *r);   /* accepts NULL */

/* The file header as read (for `stackclock dump`). */
const struct sc_file_header *sc_reader_header(const struct sc_reader *r);

/* The chunk holding the record last returned, or NULL before the first. */
struct sc_chunk_info {
	uint64_t offset;          /* file offset of its struct sc_chunk_header */
	uint64_t index;           /* 0 for the first chunk of the file */
	uint32_t flags;           /* the header's fields, as stored */
	uint32_t stored_size;
	uint32_t raw_size;
	uint32_t crc32;
	uint32_t nrecords;
};
const struct sc_chunk_info *sc_reader_chunk(const struct sc_reader *r);

/*
 * Also return records of unknown types (for `stackclock dump`); by default
 * sc_reader_next() skips them.
 */
void sc_reader_keep_unknown(struct sc_reader *r, int keep);

/* Name of a record type for `stackclock dump`, or NULL if unknown. */
const char *sc_rec_type_name(unsigned type);
/*
 * Validate the fixed part of a record (size at least the struct, strings
 * NUL-terminated inside the record, nframes fitting).  Returns 0 or -EINVAL.
 * Readers of typed records call this before casting.  A fixed-size record
 * may be shorter than its struct (an older file's, from before its last
 * fields: rule 2 of docs/data-format.md); read it through sc_record_whole.
 */
int sc_record_check(const struct sc_record *rec);

/* The largest fixed-size record struct (room for sc_record_whole). */
#define SC_REC_WHOLE_MAX 256
/*
 * A checked record's payload as its whole struct: rec->data itself, or for
 * an older, shorter record a copy in buf (SC_REC_WHOLE_MAX bytes) with the
 * fields it lacks 0.
 */
const void *sc_record_whole(const struct sc_record *rec, void *buf);

#endif
