/*
 * patchenv — what `record -m instrument` does for a program built without
 * hooks (SPEC section 10): it checks that the program can be patched at
 * run time at all, has the plan of its functions built or taken from the
 * cache (discover.h), and passes the plan to the runtime in the
 * environment (runtime/patch.h).  The plans of the libraries named by
 * --patch are passed alongside: found among those the program loads at
 * start (the loader's own listing, as ldd shows it), else, for one it
 * dlopens later, in the system's library directories; the runtime patches
 * each when it is loaded.
 */
#include "record/discover.h"
#include "record/record.h"
#include "runtime/patch.h"
#include "util/util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* Why the ELF file cannot be patched, or NULL if it can be tried; a
 * program (is_program) must also be dynamically linked. */
static const char *cannot_patch(const char *path, bool is_program)
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
		if (!interp && is_program)
			why = "is statically linked: the runtime cannot be preloaded into it";
	}
	elf_end(e);
	close(fd);
	return why;
}

/* The shared libraries the loader maps for prog (its LD_TRACE_LOADED_OBJECTS
 * listing, as ldd shows it), as malloc'ed paths; their number. */
static size_t program_libs(const char *prog, char ***out)
{
	char **v = NULL, line[4096];
	size_t n = 0, cap = 0;
	int p[2], status;
	pid_t pid;
	FILE *f;

	*out = NULL;
	if (pipe2(p, O_CLOEXEC))
		return 0;
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		int devnull = open("/dev/null", O_RDWR);

		dup2(p[1], 1);
		if (devnull >= 0)
			dup2(devnull, 0);
		setenv("LD_TRACE_LOADED_OBJECTS", "1", 1);
		unsetenv("LD_PRELOAD");
		execl(prog, prog, (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	if (pid < 0) {
		close(p[0]);
		return 0;
	}
	f = fdopen(p[0], "r");
	while (f && fgets(line, sizeof(line), f)) {
		char *a = strstr(line, "=> "), *b;

		if (!a || a[3] != '/' || !(b = strstr(a, " (")))
			continue;
		*b = 0;
		if (n == cap)
			v = xrealloc(v, (cap = cap ? 2 * cap : 16) * sizeof(*v));
		v[n++] = xstrdup(a + 3);
	}
	if (f)
		fclose(f);
	else
		close(p[0]);
	waitpid(pid, &status, 0);
	*out = v;
	return n;
}

/* Does the library file named path answer to name ("libz.so.1", "libz")? */
static bool lib_is(const char *path, const char *name)
{
	const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	size_t len = strlen(name);

	return !strcmp(base, name) || (!strncmp(base, name, len) && base[len] == '.');
}

/* A library the program does not load at start (dlopen'ed later): in the
 * system's library directories; malloc'ed, or NULL. */
static char *system_lib(const char *name)
{
	static const char *const dirs[] = {
		"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/usr/local/lib", "/usr/lib", "/lib",
	};

	for (size_t i = 0; i < ARRAY_SIZE(dirs); i++) {
		DIR *d = opendir(dirs[i]);
		struct dirent *e;
		char *found = NULL;

		while (d && !found && (e = readdir(d)))
			if (lib_is(e->d_name, name) && strstr(e->d_name, ".so"))
				found = xasprintf("%s/%s", dirs[i], e->d_name);
		if (d)
			closedir(d);
		if (found)
			return found;
	}
	return NULL;
}

/*
 * Never patched: the loader (discovery refuses it whole), the runtime, and
 * the libraries the runtime itself calls on its probe paths (the C
 * library's dladdr and pthread functions, the unwinder its hooks call):
 * patched, they would probe the runtime's own calls.  Why, or NULL.
 */
static const char *never_patched(const char *path)
{
	static const char *const own[] = { SC_PATCH_NEVER_CALLED };
	const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;

	if (lib_is(base, SC_PATCH_NEVER_LOADER))
		return "is the dynamic loader";
	if (lib_is(base, SC_PATCH_NEVER_RUNTIME))
		return "is stackclock's runtime";
	for (size_t i = 0; i < ARRAY_SIZE(own); i++)
		if (lib_is(base, own[i]))
			return "is called by stackclock's runtime itself";
	return NULL;
}

/* Append the plan of the ELF object at path to *list (':'-separated). */
static int add_plan(char **list, const char *path, const char *what)
{
	char *plan = NULL, *joined;
	bool hit;
	int ret = dsc_plan_cached(path, &plan, &hit);

	if (ret) {
		if (ret != -EPERM)     /* a cache not private: said already */
			pr_err("%s cannot be planned for patching: %s (record it by sampling: omit -m "
			       "instrument)", what, strerror(-ret));
		return -1;
	}
	if (strchr(plan, ':')) {
		pr_err("the patch plan's path '%s' holds a ':' (set STACKCLOCK_CACHE_DIR to a directory "
		       "without one)", plan);
		free(plan);
		return -1;
	}
	pr_debug("patch plan of %s: %s (%s)", path, plan, hit ? "cached" : "built");
	if (*list && strstr(*list, plan)) {
		free(plan);
		return 0;
	}
	joined = *list ? xasprintf("%s:%s", *list, plan) : xstrdup(plan);
	free(*list);
	free(plan);
	*list = joined;
	return 0;
}

/* The plans of the libraries --patch names; 0 or -1 (said why).  A name
 * no library matches is left to the runtime when the program is a script
 * (script: what it runs may load it; runtime/patch.h). */
static int add_libs(char **list, const char *prog, const char *patch, bool script)
{
	char **libs, *dup = xstrdup(patch), *save = NULL, *tok, what[4200];
	size_t n = program_libs(prog, &libs), i;
	int ret = 0;

	for (tok = strtok_r(dup, ",", &save); tok && !ret; tok = strtok_r(NULL, ",", &save)) {
		bool found = false;

		if (!strcmp(tok, "all")) {
			for (i = 0; i < n && !ret; i++) {
				if (never_patched(libs[i]))
					continue;
				snprintf(what, sizeof(what), "--patch all: '%s'", libs[i]);
				ret = add_plan(list, libs[i], what);
			}
			continue;
		}
		snprintf(what, sizeof(what), "--patch: '%s'", tok);
		if (never_patched(tok)) {
			pr_err("--patch: '%s' %s and cannot be patched (profile it by sampling: omit -m "
			       "instrument)", tok, never_patched(tok));
			ret = -1;
			continue;
		}
		if (strchr(tok, '/')) {
			if (access(tok, R_OK)) {
				pr_err("--patch: cannot read '%s': %s (give the path of a shared library)", tok,
				       strerror(errno));
				ret = -1;
			} else {
				ret = add_plan(list, tok, what);
			}
			continue;
		}
		for (i = 0; i < n && !ret; i++) {
			if (lib_is(libs[i], tok) && !never_patched(libs[i])) {
				found = true;
				ret = add_plan(list, libs[i], what);
			}
		}
		if (!found && !ret) {
			char *path = system_lib(tok);

			if (!path && script) {
				pr_debug("--patch: '%s' not loaded by '%s' itself: planned when a program it "
					 "runs loads it", tok, prog);
			} else if (!path) {
				pr_err("--patch: no library '%s' among those '%s' loads nor in the system's "
				       "library directories (give its path)", tok, prog);
				ret = -1;
			} else {
				ret = add_plan(list, path, what);
				free(path);
			}
		}
	}
	for (i = 0; i < n; i++)
		free(libs[i]);
	free(libs);
	free(dup);
	return ret;
}

/* The plan of elf on stdout, for the runtime that asked: 0, or 1. */
static int print_plan(const char *elf)
{
	char *plan = NULL;
	bool hit;

	if (dsc_plan_cached(elf, &plan, &hit))
		return 1;
	printf("%s\n", plan);
	free(plan);
	return fflush(stdout) ? 1 : 0;
}

int record_plan_lib(const char *lib)
{
	return never_patched(lib) || cannot_patch(lib, false) ? 1 : print_plan(lib);
}

int record_plan_exe(const char *exe)
{
	if (record_elf_has_hooks(exe) != 0 || cannot_patch(exe, true) || never_patched(exe))
		return 1;
	return print_plan(exe);
}

int record_patch_env(const char *prog, const char *name, bool with_exe, const char *patch,
		     char **env_plan, char **env_exe, char **env_names)
{
	/* only the program itself must be patchable: one with hooks, or a
	 * script, runs as it is (what it execs is planned on request) */
	const char *why = with_exe ? cannot_patch(prog, true) : NULL;
	struct stat st;
	char *list = NULL, what[4200];

	*env_plan = *env_exe = *env_names = NULL;
	if (why) {
		pr_err("'%s' %s%s (record it by sampling: omit -m instrument)", name,
		       with_exe ? "has no instrumentation and " : "", why);
		return -1;
	}
	snprintf(what, sizeof(what), "'%s' has no instrumentation and its functions", name);
	if ((with_exe && add_plan(&list, prog, what)) ||
	    (patch && add_libs(&list, prog, patch, record_elf_has_hooks(prog) < 0))) {
		free(list);
		return -1;
	}
	/* the names (not paths) and "all", for libraries loaded later */
	if (patch) {
		char *dup = xstrdup(patch), *save = NULL, *tok, *names = NULL;

		for (tok = strtok_r(dup, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
			char *joined;

			if (strchr(tok, '/'))
				continue;
			joined = names ? xasprintf("%s,%s", names, tok) : xstrdup(tok);
			free(names);
			names = joined;
		}
		if (names)
			*env_names = xasprintf("%s=%s", SC_PATCH_ENV_NAMES, names);
		free(names);
		free(dup);
	}
	if (!list)
		return 0;
	*env_plan = xasprintf("%s=%s", SC_PATCH_ENV, list);
	free(list);
	if (with_exe && !stat(prog, &st))
		*env_exe = xasprintf("%s=%lu,%lu", SC_PATCH_ENV_EXE, (unsigned long)st.st_dev,
				     (unsigned long)st.st_ino);
	return 0;
}
