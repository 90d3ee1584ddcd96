/*
 * procmaps — the mappings of a process, from /proc/PID/maps, one callback
 * each (the attach's recorder reads them for several reasons: its plans'
 * load biases, the runtimes loaded, the stacks and code to unwind).
 */
#ifndef SC_RECORD_PROCMAPS_H
#define SC_RECORD_PROCMAPS_H

#include <stdint.h>
#include <sys/types.h>

struct proc_map {
	uint64_t lo, hi, off;
	char perms[5];                /* "r-xp" */
	const char *path;             /* a file's path, "[stack]" and kin, "" for
					 anonymous memory; valid during the call */
};

/* fn for each mapping, in address order, until it returns non-zero (that
 * value is returned).  0 at the end, or -errno if the file cannot be read. */
int proc_maps_each(pid_t pid, int (*fn)(void *arg, const struct proc_map *m), void *arg);

#endif
