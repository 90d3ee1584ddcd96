/*
 * exec — the program sees its environment as it was given, and the
 * programs it runs are recorded too.
 *
 * The recorder hands the runtime its settings in the environment
 * (shm.h's list) and preloads it with LD_PRELOAD.  At start (the
 * constructor, once the settings are read) the runtime copies those
 * variables into its own memory and takes them out of `environ`: the
 * array is compacted in place (no allocation), and a user's own
 * LD_PRELOAD, which the recorder put after ours and named in
 * STACKCLOCK_PRELOAD0, gets its original value back in its original
 * place.  /proc/self/environ still shows the block the kernel was given
 * (docs/instrumentation.md says so).
 *
 * Every way to exec a program goes through a wrapper here (execve and
 * its family, posix_spawn, and system() and popen(), which reach glibc's
 * spawn internally with `environ`): the child's environment is the one the
 * program passes, without any LD_PRELOAD or variable of ours it may hold,
 * with ours added back (LD_PRELOAD: ours, then the child's own).  Unless
 * the program cannot take the runtime (format/execcheck.h: statically
 * linked, 32-bit, set-ID, another machine's): then it gets the
 * environment exactly as the program passed it (no loader error in its
 * stderr), and the image notes it (shm.h, unrec[]) for the recorder to
 * name.
 *
 * The exec wrappers may run in a vfork child or a signal handler: system
 * calls only (memory from mmap, given back if the exec fails), no lock,
 * no allocation.  Before the constructor (a .preinit_array function that
 * execs) nothing was taken out: the environment passes through as it is.
 */
#include "runtime/rt.h"
#include "runtime/libcall.h"
#include "format/execcheck.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define EXEC_ENV_PRELOAD0 "STACKCLOCK_PRELOAD0"
#define EXEC_VARS_MAX 32
#define EXEC_HEAD 2048            /* bytes of a file read to judge it */
#define EXEC_PATH_MAX 4096

/* Our variables, "NAME=value", and the LD_PRELOAD entries that come first
 * in a child's (ours; a user's follows): set once by sc_exec_start(). */
static struct {
	int on;                           /* taken out of environ */
	int n;
	const char *var[EXEC_VARS_MAX];
	char store[16384];
	const char *prefix;               /* LD_PRELOAD's value up to the user's */
	size_t prefix_len;
	char runtime[EXEC_PATH_MAX];      /* this runtime's file (the list's last) */
	char preload0[8192];              /* "LD_PRELOAD=<the user's>" */
} ex;

static const char *const exec_names[] = {
	SC_SHM_ENV_PREFIX, SC_SHM_ENV_OS, SC_SHM_ENV_TP, SC_SHM_ENV_CLOCK0, SC_SHM_ENV_COST,
	SC_SHM_ENV_SAMPLE_HZ, SC_SHM_ENV_TIMELINE, SC_SHM_ENV_TL_ONLY, SC_PATCH_ENV, SC_PATCH_ENV_EXE,
	SC_PATCH_ENV_PLANNER, SC_PATCH_ENV_CACHE, SC_PATCH_ENV_NAMES, SC_LIBCALL_ENV, EXEC_ENV_PRELOAD0,
};

/* e is "NAME=..." for NAME one of ours (or LD_PRELOAD: 2)?  1, 2, or 0. */
static int exec_is_ours(const char *e)
{
	static const char preload[] = "LD_PRELOAD=";
	size_t i;

	for (i = 0; i < sizeof(preload) - 1 && e[i] == preload[i]; i++)
		;
	if (i == sizeof(preload) - 1)
		return 2;
	for (unsigned k = 0; k < sizeof(exec_names) / sizeof(exec_names[0]); k++) {
		const char *n = exec_names[k];

		for (i = 0; n[i] && e[i] == n[i]; i++)
			;
		if (!n[i] && e[i] == '=')
			return 1;
	}
	return 0;
}

void sc_exec_start(char **envp)
{
	const char *preload = rt_getenv(envp, "LD_PRELOAD"), *user = rt_getenv(envp, EXEC_ENV_PRELOAD0);
	char *at = ex.store, *end = ex.store + sizeof(ex.store);
	size_t plen, ulen, r = 0, w = 0;

	if (ex.on || !envp || !rt_getenv(envp, SC_SHM_ENV_PREFIX) || !preload)
		return;
	for (char **e = envp; *e; e++) {
		size_t len = rt_strlen(*e) + 1;

		if (exec_is_ours(*e) != 1 || ex.n == EXEC_VARS_MAX || (size_t)(end - at) < len)
			continue;
		rt_stpcpy(at, *e, len);
		ex.var[ex.n++] = at;
		at += len;
	}
	/* LD_PRELOAD: ours, then ":" and the user's if there was one */
	plen = rt_strlen(preload);
	ulen = user ? rt_strlen(user) : 0;
	if (user && ulen && (ulen + 1 > plen || preload[plen - ulen - 1] != ':' ||
			     !rt_memeq(preload + plen - ulen, user, ulen)))
		return;                   /* changed on the way: leave it all be */
	ex.prefix_len = user && ulen ? plen - ulen - 1 : plen;
	if ((size_t)(end - at) < ex.prefix_len + 1 || ulen + 12 > sizeof(ex.preload0))
		return;
	rt_stpcpy(at, preload, ex.prefix_len + 1);
	ex.prefix = at;
	for (const char *p = ex.prefix; *p;) {       /* ours is the list's last */
		const char *c = p;

		while (*c && *c != ':')
			c++;
		if (!*c)
			rt_stpcpy(ex.runtime, p, sizeof(ex.runtime));
		p = *c ? c + 1 : c;
	}
	if (user)
		rt_stpcpy(rt_stpcpy(ex.preload0, "LD_PRELOAD=", sizeof(ex.preload0)), user, sizeof(ex.preload0) - 11);
	/* environ in place: ours out, a user's LD_PRELOAD back */
	for (; envp[r]; r++) {
		int k = exec_is_ours(envp[r]);

		if (k == 1)
			continue;
		if (k == 2) {
			if (!user)
				continue;
			envp[w++] = ex.preload0;
			continue;
		}
		envp[w++] = envp[r];
	}
	while (w < r)
		envp[w++] = NULL;
	ex.on = 1;
}

/* ---- judging the program about to run ------------------------------------ */

/* The reason file (at dirfd, or fd itself if path is NULL) cannot be
 * recorded; a script's interpreter is judged in its place. */
static enum sc_exec_why exec_why(int dirfd, const char *path, int depth)
{
	uint8_t head[EXEC_HEAD];
	struct stat st;
	long fd = path ? rt_sys4(SYS_openat, dirfd, path, O_RDONLY | O_CLOEXEC, 0) : dirfd, n;
	enum sc_exec_why why = SC_EXEC_OK;

	if (fd < 0)
		return SC_EXEC_OK;        /* execute-only, or absent: exec says */
	n = rt_sys4(SYS_pread64, fd, head, sizeof(head), 0);
	if (n > 0 && rt_sys2(SYS_fstat, fd, &st))
		n = 0;
	if (path)
		rt_close((int)fd);
	if (n <= 0)
		return SC_EXEC_OK;
	if (n > 2 && head[0] == '#' && head[1] == '!' && depth < 2) {
		char interp[256];
		long i = 2, k = 0;

		while (i < n && (head[i] == ' ' || head[i] == '\t'))
			i++;
		while (i < n && k + 1 < (long)sizeof(interp) && head[i] != ' ' && head[i] != '\t' && head[i] != '\n')
			interp[k++] = (char)head[i++];
		interp[k] = 0;
		return k ? exec_why(AT_FDCWD, interp, depth + 1) : SC_EXEC_OK;
	}
	why = sc_exec_check_elf(head, (size_t)n);
	if (why == SC_EXEC_OK && head[0] == ELFMAG0 && (st.st_mode & (S_ISUID | S_ISGID))) {
		uint32_t ids[3][3] = { { 0 } };

		rt_sys3(SYS_getresuid, &ids[0][0], &ids[0][1], &ids[0][2]);
		rt_sys3(SYS_getresgid, &ids[1][0], &ids[1][1], &ids[1][2]);
		if (sc_exec_secure(st.st_mode, st.st_uid, st.st_gid, ids[0][0], ids[0][1], ids[1][0], ids[1][1]))
			why = SC_EXEC_SETID;
	}
	if (why == SC_EXEC_OK && head[0] == ELFMAG0 && ex.runtime[0] &&
	    rt_sys4(SYS_faccessat, AT_FDCWD, ex.runtime, R_OK, 0))
		why = SC_EXEC_NOLOAD;     /* a chroot without it */
	return why;
}

/* Note a program exec'd unrecorded in this image; the slot, or -1. */
static int unrec_note(int pid, enum sc_exec_why why, int dirfd, const char *path)
{
	struct sc_shm_header *h = rt.hdr;
	struct sc_shm_unrec *u;
	uint32_t i;
	char *p;

	if (rt.state != RT_ON || !h)
		return -1;
	i = __atomic_fetch_add(&h->nunrec, 1, __ATOMIC_RELAXED);
	if (i >= SC_SHM_MAX_UNREC) {
		__atomic_fetch_add(&h->unrec_lost, 1, __ATOMIC_RELAXED);
		return -1;
	}
	u = &h->unrec[i];
	u->pid = (uint32_t)pid;
	u->why = why;
	p = u->path;
	while (path && path[0] == '.' && path[1] == '/')
		path += 2;
	if (path && path[0] != '/' && dirfd == AT_FDCWD) {
		long n = rt_sys2(SYS_getcwd, u->path, sizeof(u->path) - 2);

		if (n > 1) {
			p = u->path + rt_strlen(u->path);
			*p++ = '/';
		}
	}
	rt_stpcpy(p, path ? path : "(a descriptor)", sizeof(u->path) - (size_t)(p - u->path));
	__atomic_store_n(&u->valid, 1, __ATOMIC_RELEASE);
	return (int)i;
}

static void unrec_retract(int slot)
{
	if (slot >= 0 && rt.hdr)
		__atomic_store_n(&rt.hdr->unrec[slot].valid, 0, __ATOMIC_RELEASE);
}

/* ---- the child's environment ---------------------------------------------- */

/* Memory for one exec: mmap'ed (a vfork child may not allocate). */
struct exec_job {
	void *map;
	size_t len;
	int slot;                      /* unrec_note's, or -1 */
};

static void job_done(struct exec_job *j)
{
	if (j->map)
		rt_sys2(SYS_munmap, j->map, (long)j->len);
	j->map = NULL;
}

/* The environment for a child that takes the runtime: envp without
 * LD_PRELOAD and ours, then ours; envp itself if there is nothing to do
 * or no memory. */
static char *const *child_env(struct exec_job *j, char *const *envp)
{
	const char *user = NULL;
	size_t n = 0, ulen = 0, need, k = 0;
	char **v, *s;
	long m;

	if (!ex.on)
		return envp;
	for (char *const *e = envp; e && *e; e++, n++)
		if (exec_is_ours(*e) == 2)
			user = *e + 11;
	if (user)
		ulen = rt_strlen(user);
	need = (n + (size_t)ex.n + 3) * sizeof(char *) + 2 * ulen + ex.prefix_len + 64;
	need = (need + PAGE - 1) & ~(PAGE - 1);
	m = rt_sys6(SYS_mmap, 0, (long)need, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (rt_mmap_failed(m))
		return envp;
	j->map = (void *)m;
	j->len = need;
	v = (char **)m;
	s = (char *)(v + n + ex.n + 3);
	for (char *const *e = envp; e && *e; e++)
		if (!exec_is_ours(*e))
			v[k++] = *e;
	for (int i = 0; i < ex.n; i++)
		v[k++] = (char *)ex.var[i];
	v[k++] = s;
	s = rt_stpcpy(s, "LD_PRELOAD=", 12);
	s = rt_stpcpy(s, ex.prefix, ex.prefix_len + 1);
	if (user && *user) {
		*s++ = ':';
		s = rt_stpcpy(s, user, ulen + 1);
	}
	s++;
	if (user) {
		v[k++] = s;
		s = rt_stpcpy(s, EXEC_ENV_PRELOAD0 "=", sizeof(EXEC_ENV_PRELOAD0) + 1);
		rt_stpcpy(s, user, ulen + 1);
	}
	v[k] = NULL;
	return v;
}

/* The environment for the program at (dirfd, path) (fd itself if path is
 * NULL) run by process pid (0: this one, known later): the child's, or
 * envp as it is for one that cannot take the runtime (noted). */
static char *const *exec_env(struct exec_job *j, int pid, int dirfd, const char *path, char *const *envp)
{
	enum sc_exec_why why;

	j->map = NULL;
	j->slot = -1;
	if (!ex.on)
		return envp;
	why = exec_why(dirfd, path, 0);
	if (why != SC_EXEC_OK) {
		j->slot = pid >= 0 ? unrec_note(pid ? pid : rt_getpid(), why, dirfd, path) : -1;
		return envp;
	}
	return child_env(j, envp);
}

static int set_errno(long r)
{
	if (r < 0 && r > -4096) {
		errno = (int)-r;
		return -1;
	}
	return (int)r;
}

/* execveat(2) with the environment handled; -errno. */
static long exec_raw(int dirfd, const char *path, char *const argv[], char *const envp[], int flags)
{
	struct exec_job j;
	char *const *env;
	long r;

	if (flags & AT_EMPTY_PATH && path && !*path)
		env = exec_env(&j, 0, dirfd, NULL, envp);
	else
		env = exec_env(&j, 0, dirfd, path, envp);
	r = rt_sys5(SYS_execveat, dirfd, path, argv, env, flags);
	if (r == -ENOSYS && dirfd == AT_FDCWD && !flags)
		r = rt_sys3(SYS_execve, path, argv, env);
	unrec_retract(j.slot);
	job_done(&j);
	return r;
}

/* A file exec refused as not executable (ENOEXEC): a shell script without
 * "#!", run by /bin/sh as execvp does. */
static long exec_script(const char *file, char *const argv[], char *const envp[])
{
	size_t argc = 0, len;
	char **v;
	long m, r;

	while (argv && argv[argc])
		argc++;
	len = ((argc + 3) * sizeof(char *) + PAGE - 1) & ~(PAGE - 1);
	m = rt_sys6(SYS_mmap, 0, (long)len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (rt_mmap_failed(m))
		return -ENOMEM;
	v = (char **)m;
	v[0] = (char *)"/bin/sh";
	v[1] = (char *)file;
	for (size_t i = 1; i < argc; i++)
		v[i + 1] = argv[i];
	v[argc > 1 ? argc + 1 : 2] = NULL;
	r = exec_raw(AT_FDCWD, "/bin/sh", v, envp, 0);
	rt_sys2(SYS_munmap, m, (long)len);
	return r;
}

/*
 * The next candidate of a PATH search for file, into buf[cap]: *dirs is
 * where the search is in PATH (NULL when it is over); NULL when there is
 * none left.  A directory too long for buf is passed over.
 */
static const char *path_next(const char **dirs, const char *file, char *buf, size_t cap)
{
	size_t fl = rt_strlen(file);

	while (*dirs) {
		const char *p = *dirs, *c = p;
		size_t dl;

		while (*c && *c != ':')
			c++;
		*dirs = *c ? c + 1 : NULL;
		dl = (size_t)(c - p);
		if (dl + fl + 2 <= cap) {
			char *q = buf;

			for (size_t i = 0; i < dl; i++)
				*q++ = p[i];
			if (dl)
				*q++ = '/';
			rt_stpcpy(q, file, fl + 1);
			return buf;
		}
	}
	return NULL;
}

static int has_slash(const char *s)
{
	while (*s && *s != '/')
		s++;
	return *s == '/';
}

static const char *path_dirs(void)
{
	const char *path = rt_getenv(__environ, "PATH");

	return path ? path : "/bin:/usr/bin";
}

/* execvpe(): the PATH search of glibc's (its errors, its fallback to sh). */
static long exec_search(const char *file, char *const argv[], char *const envp[])
{
	const char *dirs = path_dirs(), *cand;
	char buf[EXEC_PATH_MAX];
	long r, err = -ENOENT;
	int eacces = 0;

	if (!file || !*file)
		return -ENOENT;
	if (has_slash(file)) {
		r = exec_raw(AT_FDCWD, file, argv, envp, 0);
		return r == -ENOEXEC ? exec_script(file, argv, envp) : r;
	}
	while ((cand = path_next(&dirs, file, buf, sizeof(buf)))) {
		r = exec_raw(AT_FDCWD, cand, argv, envp, 0);
		if (r == -ENOEXEC)
			r = exec_script(cand, argv, envp);
		switch (r) {
		case -EACCES:
			eacces = 1;
			/* fall through */
		case -ENOENT: case -ESTALE: case -ENOTDIR: case -ENODEV: case -ETIMEDOUT:
			err = r;
			break;
		default:
			return r;
		}
	}
	return eacces ? -EACCES : err;
}

/* ---- the wrappers --------------------------------------------------------- */

HOOK int execve(const char *path, char *const argv[], char *const envp[]);
HOOK int execv(const char *path, char *const argv[]);
HOOK int execvp(const char *file, char *const argv[]);
HOOK int execvpe(const char *file, char *const argv[], char *const envp[]);
HOOK int execveat(int dirfd, const char *path, char *const argv[], char *const envp[], int flags);
HOOK int fexecve(int fd, char *const argv[], char *const envp[]);
HOOK int execl(const char *path, const char *arg, ...);
HOOK int execlp(const char *file, const char *arg, ...);
HOOK int execle(const char *path, const char *arg, ...);
HOOK int posix_spawn(pid_t *pid, const char *path, const posix_spawn_file_actions_t *fa,
		     const posix_spawnattr_t *attr, char *const argv[], char *const envp[]);
HOOK int posix_spawnp(pid_t *pid, const char *file, const posix_spawn_file_actions_t *fa,
		      const posix_spawnattr_t *attr, char *const argv[], char *const envp[]);
HOOK int system(const char *cmd);
HOOK FILE *popen(const char *cmd, const char *mode);

int execve(const char *path, char *const argv[], char *const envp[])
{
	return set_errno(exec_raw(AT_FDCWD, path, argv, envp, 0));
}

int execv(const char *path, char *const argv[])
{
	return set_errno(exec_raw(AT_FDCWD, path, argv, __environ, 0));
}

int execvp(const char *file, char *const argv[])
{
	return set_errno(exec_search(file, argv, __environ));
}

int execvpe(const char *file, char *const argv[], char *const envp[])
{
	return set_errno(exec_search(file, argv, envp));
}

int execveat(int dirfd, const char *path, char *const argv[], char *const envp[], int flags)
{
	return set_errno(exec_raw(dirfd, path, argv, envp, flags));
}

int fexecve(int fd, char *const argv[], char *const envp[])
{
	long r = exec_raw(fd, "", argv, envp, AT_EMPTY_PATH);

	if (r == -ENOSYS) {
		char p[32] = "/proc/self/fd/";

		rt_utoa(p + 14, (uint64_t)fd, sizeof(p) - 14);
		r = exec_raw(AT_FDCWD, p, argv, envp, 0);
	}
	return set_errno(r);
}

/*
 * execl's arguments (arg, then *ap up to a NULL) as an argv in memory of
 * its own (mmap'ed: no allocation; *len to unmap), and with env, execle's
 * environment after the NULL; NULL if there is no memory.
 */
static char **execl_argv(const char *arg, va_list *ap, size_t *len, char *const **env)
{
	va_list cp;
	size_t argc = 1;
	char **v;
	long m;

	va_copy(cp, *ap);
	while (va_arg(cp, char *))
		argc++;
	va_end(cp);
	*len = ((argc + 1) * sizeof(char *) + PAGE - 1) & ~(PAGE - 1);
	m = rt_sys6(SYS_mmap, 0, (long)*len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (rt_mmap_failed(m))
		return NULL;
	v = (char **)m;
	v[0] = (char *)arg;
	for (size_t i = 1; i < argc; i++)
		v[i] = va_arg(*ap, char *);
	v[argc] = NULL;
	if (env) {
		(void)va_arg(*ap, char *);
		*env = va_arg(*ap, char *const *);
	}
	return v;
}

/* The execl family: by path, along PATH (search), with an environment
 * after the arguments (with_env). */
static int execl_common(const char *path, const char *arg, va_list *ap, int search, int with_env)
{
	char *const *env = __environ;
	size_t len;
	char **v = execl_argv(arg, ap, &len, with_env ? &env : NULL);
	long r;

	if (!v)
		return set_errno(-ENOMEM);
	r = search ? exec_search(path, v, env) : exec_raw(AT_FDCWD, path, v, env, 0);
	rt_sys2(SYS_munmap, v, (long)len);
	return set_errno(r);
}

int execl(const char *path, const char *arg, ...)
{
	va_list ap;
	int r;

	va_start(ap, arg);
	r = execl_common(path, arg, &ap, 0, 0);
	va_end(ap);
	return r;
}

int execlp(const char *file, const char *arg, ...)
{
	va_list ap;
	int r;

	va_start(ap, arg);
	r = execl_common(file, arg, &ap, 1, 0);
	va_end(ap);
	return r;
}

int execle(const char *path, const char *arg, ...)
{
	va_list ap;
	int r;

	va_start(ap, arg);
	r = execl_common(path, arg, &ap, 0, 1);
	va_end(ap);
	return r;
}

/* The C library's function name, the one after us: always in the global
 * scope, where dlsym() finds it (unlike the unwinder's, retstack.c's
 * rs_sym); each caller checks for NULL. */
static void *exec_next(void **cache, const char *name)
{
	void *f = __atomic_load_n(cache, __ATOMIC_ACQUIRE);

	if (!f) {
		f = dlsym(RTLD_NEXT, name);
		__atomic_store_n(cache, f, __ATOMIC_RELEASE);
	}
	return f;
}

static void *next_spawn, *next_spawnp, *next_system, *next_popen;

/* The program file posix_spawnp would run: file, or found along PATH. */
static const char *spawn_find(const char *file, char *buf, size_t cap)
{
	const char *dirs = path_dirs(), *cand;

	if (!*file || has_slash(file))
		return file;
	while ((cand = path_next(&dirs, file, buf, cap)))
		if (!rt_sys4(SYS_faccessat, AT_FDCWD, cand, X_OK, 0))
			return cand;
	return file;
}

typedef int (*spawn_fn)(pid_t *, const char *, const posix_spawn_file_actions_t *, const posix_spawnattr_t *,
			char *const[], char *const[]);

static int spawn(spawn_fn f, pid_t *pid, const char *file, const char *prog,
		 const posix_spawn_file_actions_t *fa, const posix_spawnattr_t *attr, char *const argv[],
		 char *const envp[])
{
	struct exec_job j;
	char *const *env;
	pid_t got = 0;
	int r;

	if (!f)
		return ENOSYS;
	env = exec_env(&j, -1, AT_FDCWD, prog, envp);   /* noted once the pid is known */
	r = f(&got, file, fa, attr, argv, env);
	if (!r && env == envp && ex.on) {
		enum sc_exec_why why = exec_why(AT_FDCWD, prog, 0);

		if (why != SC_EXEC_OK)
			unrec_note(got, why, AT_FDCWD, prog);
	}
	job_done(&j);
	if (pid)
		*pid = got;
	return r;
}

int posix_spawn(pid_t *pid, const char *path, const posix_spawn_file_actions_t *fa,
		const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
	return spawn((spawn_fn)exec_next(&next_spawn, "posix_spawn"), pid, path, path, fa, attr, argv, envp);
}

int posix_spawnp(pid_t *pid, const char *file, const posix_spawn_file_actions_t *fa,
		 const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
	char buf[EXEC_PATH_MAX];

	return spawn((spawn_fn)exec_next(&next_spawnp, "posix_spawnp"), pid, file,
		     spawn_find(file, buf, sizeof(buf)), fa, attr, argv, envp);
}

/*
 * system() and popen() run /bin/sh through glibc's own spawn, which takes
 * `environ`: for the call, environ is the shell's environment with ours
 * added, then the program's again (a setenv() by another thread meanwhile
 * would be lost: a program that changes its environment while another
 * thread runs a command has a race of its own).
 */
int system(const char *cmd)
{
	int (*f)(const char *) = (int (*)(const char *))exec_next(&next_system, "system");
	struct exec_job j;
	char **saved = __environ, **env;
	int r;

	if (!f)
		return -1;
	if (!cmd)
		return f(cmd);
	env = (char **)exec_env(&j, -1, AT_FDCWD, "/bin/sh", saved);
	__environ = env;
	r = f(cmd);
	if (__environ == env)
		__environ = saved;
	job_done(&j);
	return r;
}

FILE *popen(const char *cmd, const char *mode)
{
	FILE *(*f)(const char *, const char *) =
		(FILE *(*)(const char *, const char *))exec_next(&next_popen, "popen");
	struct exec_job j;
	char **saved = __environ, **env;
	FILE *r;

	if (!f)
		return NULL;
	env = (char **)exec_env(&j, -1, AT_FDCWD, "/bin/sh", saved);
	__environ = env;
	r = f(cmd, mode);
	if (__environ == env)
		__environ = saved;
	job_done(&j);
	return r;
}
