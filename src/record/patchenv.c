/*
 * patchenv — what `record -m instrument` does for a program built without
 * hooks (SPEC section 10): it checks that the program can be patched at
 * run time at all, has the plan of its functions built or taken from the
 * cache (discover.h), and passes the plan to the runtime in the
 * environment (runtime/patch.h).  The plans of the modules named by
 * --patch are passed alongside.
 */
#include "record/discover.h"
#include "record/record.h"
#include "runtime/patch.h"
#include "util/util.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Why the ELF file cannot be patched, or NULL if it can be tried. */
static const char *cannot_patch(const char *path)
{
	const char *why = NULL;
	struct stat st;
	GElf_Ehdr eh;
	size_t i, n;
	Elf *e;
	int fd, interp = 0;

	if (stat(path, &st))
		return NULL;              /* exec reports it */
	if (((st.st_mode & S_ISUID) && st.st_uid != geteuid()) ||
	    ((st.st_mode & S_ISGID) && st.st_gid != getegid()))
		return "is setuid or setgid: the loader refuses to preload the runtime into it";
	elf_version(EV_CURRENT);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	e = elf_begin(fd, ELF_C_READ, NULL);
	if (!e || elf_kind(e) != ELF_K_ELF || !gelf_getehdr(e, &eh)) {
		why = "is not an ELF executable";
	} else if (eh.e_machine != EM_X86_64) {
		why = "is not an x86-64 program: only x86-64 code is patched";
	} else if (!elf_getphdrnum(e, &n)) {
		for (i = 0; i < n; i++) {
			GElf_Phdr ph;

			if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_INTERP)
				interp = 1;
		}
		if (!interp)
			why = "is statically linked: the runtime cannot be preloaded into it";
	}
	elf_end(e);
	close(fd);
	return why;
}

int record_patch_env(const char *prog, const char *name, char **env_plan, char **env_exe)
{
	const char *why = cannot_patch(prog);
	struct stat st;
	char *plan = NULL;
	bool hit;
	int ret;

	*env_plan = *env_exe = NULL;
	if (why) {
		pr_err("'%s' has no instrumentation and %s (record it by sampling: omit -m instrument)",
		       name, why);
		return -1;
	}
	ret = dsc_plan_cached(prog, &plan, &hit);
	if (ret) {
		pr_err("'%s' has no instrumentation and its functions cannot be planned for patching: %s "
		       "(record it by sampling: omit -m instrument)", name, strerror(-ret));
		return -1;
	}
	if (strchr(plan, ':')) {
		pr_err("the patch plan's path '%s' holds a ':' (set STACKCLOCK_CACHE_DIR to a directory "
		       "without one)", plan);
		free(plan);
		return -1;
	}
	pr_debug("patch plan of %s: %s (%s)", prog, plan, hit ? "cached" : "built");
	*env_plan = xasprintf("%s=%s", SC_PATCH_ENV, plan);
	if (!stat(prog, &st))
		*env_exe = xasprintf("%s=%lu,%lu", SC_PATCH_ENV_EXE, (unsigned long)st.st_dev,
				     (unsigned long)st.st_ino);
	free(plan);
	return 0;
}
