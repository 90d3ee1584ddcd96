/*
 * attach_seed — the frames open in a stopped process's threads when an
 * attach applies its plans (SPEC section 13), written for the runtime in
 * the seed file runtime/attach.h describes.
 */
#ifndef SC_RECORD_ATTACH_SEED_H
#define SC_RECORD_ATTACH_SEED_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "record/tracee.h"

/* A patched function: its run-time address (what its stub passes) and
 * its entry jump's first byte. */
struct attach_fn {
	uint64_t fn, site;
};

struct attach_fns {
	struct attach_fn *v;
	size_t n, alloc;
};

void attach_fns_add(struct attach_fns *fs, uint64_t fn, uint64_t site);

struct attach_seed_stats {
	uint64_t threads;          /* threads unwound */
	uint64_t partial;          /* of them, walks that stopped short of the root */
	uint64_t seeded_threads;   /* threads with an instrumented frame open */
	uint64_t frames;           /* instrumented frames open, all threads */
	uint64_t unsafe;           /* threads with a frame to resume inside r, or
				      in an exception's unwinding (no frames kept) */
};

/*
 * The frames' finder for process pid: its objects' functions and CFI are
 * read here, while its threads still run.  fns (sorted here) are the
 * patched functions; hooks: the objects built with the hooks count too.
 */
struct attach_seeder;
struct attach_seeder *attach_seeder_new(pid_t pid, struct attach_fns *fns, int hooks);
void attach_seeder_free(struct attach_seeder *s);      /* accepts NULL */

/*
 * Every thread of t but skip (the runtime's own) must be stopped.  Unwind
 * each, keep its instrumented frames, and write them to path.  Threads
 * that would resume inside one of the nr ranges r (the bytes the entry
 * jumps replace) further up their stack than their own instruction
 * pointer (a signal handler's interrupted instruction, a return address),
 * and threads inside the unwinder (_Unwind_*: an exception in flight reads
 * return addresses) are counted in st->unsafe: not to be patched under.
 * 0, or -errno (the file cannot be written; /proc/PID/maps unreadable).
 */
int attach_seed_write(struct attach_seeder *s, struct sc_tracee *t, pid_t skip,
		      const struct sc_range *r, size_t nr, const char *path,
		      struct attach_seed_stats *st);

/* The load bias of the ELF file at path mapped at lo from file offset off
 * (run-time less link-time address), or INT64_MIN. */
int64_t attach_file_bias(const char *path, uint64_t lo, uint64_t off);

#endif
