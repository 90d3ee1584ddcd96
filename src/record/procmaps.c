/*
 * procmaps — /proc/PID/maps, parsed once for every reader (procmaps.h).
 */
#include "record/procmaps.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

int proc_maps_each(pid_t pid, int (*fn)(void *arg, const struct proc_map *m), void *arg)
{
	char path[64], line[PATH_MAX + 128];
	int ret = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (!ret && fgets(line, sizeof(line), f)) {
		unsigned long long lo, hi, off;
		struct proc_map m;
		char *p;
		int pos = 0;

		if (sscanf(line, "%llx-%llx %4s %llx %*s %*s%n", &lo, &hi, m.perms, &off, &pos) < 4 || !pos)
			continue;
		p = line + pos;
		p += strspn(p, " \t");
		p[strcspn(p, "\n")] = 0;
		m.lo = lo;
		m.hi = hi;
		m.off = off;
		m.path = p;
		ret = fn(arg, &m);
	}
	fclose(f);
	return ret;
}
