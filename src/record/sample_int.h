/*
 * Internal interfaces of the sampling recorder (record/sample*.c).
 *
 *  sample_perf.c   perf events: opening them (one per CPU per task, all
 *                  output into one ring per CPU), the rings, and the
 *                  time-ordered reading of their records.
 *  sample_model.c  what the records describe: process images, threads,
 *                  mappings, and the deduplicated stacks with their counts;
 *                  unwinds each sample as it arrives; writes the data file.
 *  sample.c        record_sample(): launch or attach, the drain loop,
 *                  signals, the end.
 *
 * Everything runs in the recorder's single thread.
 */
#ifndef SC_SAMPLE_INT_H
#define SC_SAMPLE_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <linux/perf_event.h>
#include <asm/perf_regs.h>

#include "record/record.h"

/* Bytes of user stack copied with each sample (STACKCLOCK_STACK_SIZE). */
#define SMP_STACK_DEFAULT  32768u
#define SMP_STACK_MAX      60000u
/* Most user frames unwound per sample; kernel frames come on top. */
#define SMP_MAX_USER_FRAMES 1024u
#define SMP_MAX_KERNEL_FRAMES 128u

/* ---- sample_perf.c --------------------------------------------------- */

/*
 * The user registers each sample carries, in the kernel's order (by bit):
 * bx, bp, sp, ip, r12, r13, r14, r15.
 */
#define SMP_REGS_USER ((1ULL << PERF_REG_X86_BX) | (1ULL << PERF_REG_X86_BP) | \
		       (1ULL << PERF_REG_X86_SP) | (1ULL << PERF_REG_X86_IP) | \
		       (1ULL << PERF_REG_X86_R12) | (1ULL << PERF_REG_X86_R13) | \
		       (1ULL << PERF_REG_X86_R14) | (1ULL << PERF_REG_X86_R15))
#define SMP_NREGS_USER 8

struct smp_ring {
	int fd;                       /* the event that owns the buffer */
	struct perf_event_mmap_page *meta;
	uint8_t *data;
	uint64_t size;                /* data bytes, a power of two */
	uint64_t head;                /* data_head read at the round's start */
	uint64_t tail;                /* next byte to consume */
};

struct smp_perf_opts {
	unsigned frequency_hz;
	unsigned stack_size;          /* PERF_SAMPLE_STACK_USER bytes */
	bool kernel;                  /* kernel frames too */
	bool enable_on_exec;          /* launched child: start at exec */
};

struct smp_perf {
	struct smp_perf_opts o;
	int ncpus;
	struct smp_ring *rings;       /* [ncpus]; fd -1 until first task */
	int *fds;                     /* every event opened */
	size_t nfds, afds;
	bool no_build_id;             /* the kernel refused attr.build_id */
	bool warned_small;            /* rings smaller than asked, said so */
	size_t ring_bytes;            /* data bytes per ring */
	uint8_t *scratch;             /* a record that wraps around a ring */
	size_t scratch_size;
};

int smp_perf_init(struct smp_perf *p, const struct smp_perf_opts *o);
/*
 * Open one event per CPU on task pid (inherit: its future threads and
 * children follow).  Returns 0 or -errno (-ESRCH: the task is gone).  If
 * kernel samples are refused, falls back to user frames with a warning and
 * clears o.kernel (callers then drop kernel from the model and session).
 */
int smp_perf_open_task(struct smp_perf *p, pid_t pid);
int smp_perf_enable(struct smp_perf *p);
int smp_perf_disable(struct smp_perf *p);
void smp_perf_close(struct smp_perf *p);
/* Print the one-line explanation of a perf_event_open failure. */
void smp_perf_explain(int err, pid_t pid);

/*
 * Read every ring and hand records to fn in time order, up to records
 * stamped at or before limit_ns (CLOCK_MONOTONIC); later ones stay in the
 * rings for the next round.  Returns the number of records handled.
 */
typedef void (*smp_record_fn)(void *ctx, const struct perf_event_header *h);
size_t smp_perf_drain(struct smp_perf *p, uint64_t limit_ns, smp_record_fn fn, void *ctx);
/* Poll fds of the rings (for poll()); n filled. */
int smp_perf_pollfds(const struct smp_perf *p, int *fds, int max);

/* ---- sample_model.c -------------------------------------------------- */

struct smp_model;

struct smp_model_opts {
	unsigned stack_size;
	bool kernel;
	uint64_t timeline_size;       /* --timeline: bytes of samples kept; 0: none */
};

struct smp_model *smp_model_new(const struct smp_model_opts *o);
/* Samples carry kernel call chains (must follow the events' attr). */
void smp_model_set_kernel(struct smp_model *m, bool kernel);
void smp_model_free(struct smp_model *m);

/* The launched child, before exec (its first exec becomes its image). */
void smp_model_add_launched(struct smp_model *m, pid_t pid, uint64_t now);
/* An existing process we attach to: exe, threads, mappings from /proc. */
int smp_model_add_existing(struct smp_model *m, pid_t pid, uint64_t now);

/* Handle one perf record (smp_record_fn). */
void smp_model_record(void *m, const struct perf_event_header *h);

struct smp_session_info {
	unsigned frequency_hz;
	uint32_t flags;               /* SC_SESS_* */
	pid_t target_pid;
	char *const *argv;            /* the command profiled */
	int argc;
	uint64_t start_realtime_ns;
	uint64_t duration_ns;
	int exit_status;              /* wait status, or -1 */
};

/*
 * Write the whole data file (to path.tmp, then renamed over path, so a
 * checkpoint never leaves a half-written file).  Returns 0 or -errno.
 */
int smp_model_write(struct smp_model *m, const char *path,
		    const struct smp_session_info *si);

struct smp_stats {
	uint64_t samples;             /* counted */
	uint64_t lost;                /* PERF_RECORD_LOST(_SAMPLES) */
	uint64_t root;                /* samples whose stack reached the root */
	uint64_t truncated;
	uint64_t stack_fault_ins;     /* samples whose stack copy stopped at a
					 page not present, read in then */
	uint64_t stops[16];           /* per enum unw_stop */
	uint64_t stacks;              /* distinct stacks */
	uint64_t processes, threads;
	uint64_t unwind_ns;           /* time spent unwinding, tables included */
	uint64_t tables, table_fdes, table_rows, table_bytes;
	uint64_t table_ns;            /* time spent building CFI tables */
	uint64_t tl_items, tl_bytes, tl_dropped;   /* --timeline */
};
void smp_model_stats(const struct smp_model *m, struct smp_stats *st);
/* True once something changed since the last smp_model_write(). */
bool smp_model_dirty(const struct smp_model *m);

#endif
