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
 * its family, posix_spawn, and system() and popen(), done here on
 * posix_spawn with an explicit environment, with pclose()): the child's environment is the one the
 * program passes, without any LD_PRELOAD or variable of ours it may hold,
 * with ours added back (LD_PRELOAD: ours, then the child's own).  Unless
 * the program cannot take the runtime (format/execcheck.h: statically
 * linked, 32-bit, set-ID, another machine's): then it gets the
 * environment exactly as the program passed it (no loader error in its
 * stderr), and the image notes it (shm.h, unrec[]) for the recorder to
 * name.
 *
 * The exec wrappers may run in a vfork child or a signal handler: system
 * calls only (memory in the wrapper's frame: see struct exec_job), no
 * lock, no allocation.  Before the constructor (a .preinit_array function that
 * execs) nothing was taken out: the environment passes through as it is.
 */
#include "runtime/rt.h"
#include "runtime/libcall.h"
#include "format/execcheck.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
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
	char store[65536];                /* (see sc_exec_start) */
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
	/* The store holds far more than the recorder ever sets; should a
	 * variable of ours still not fit (or there be more than
	 * EXEC_VARS_MAX), nothing is hidden: environ keeps them all, so the
	 * children still get every one (rather than losing one). */
	for (char **e = envp; *e; e++) {
		size_t len = rt_strlen(*e) + 1;

		if (exec_is_ours(*e) != 1)
			continue;
		if (ex.n == EXEC_VARS_MAX || (size_t)(end - at) < len) {
			ex.n = 0;
			return;
		}
		rt_stpcpy(at, *e, len);
		ex.var[ex.n++] = at;
		at += len;
	}
	/* LD_PRELOAD: ours, then ":" and the user's if there was one */
	plen = rt_strlen(preload);
	ulen = user ? rt_strlen(user) : 0;
	if (user && ulen && (ulen + 1 > plen || preload[plen - ulen - 1] != ':' ||
			     !rt_memeq(preload + plen - ulen, user, ulen))) {
		ex.n = 0;
		return;                   /* changed on the way: leave it all be */
	}
	ex.prefix_len = user && ulen ? plen - ulen - 1 : plen;
	if ((size_t)(end - at) < ex.prefix_len + 1 || ulen + 12 > sizeof(ex.preload0)) {
		ex.n = 0;
		return;                   /* (as above: nothing hidden) */
	}
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
	long fd, n;
	enum sc_exec_why why = SC_EXEC_OK;

	/* Only a regular file is opened and judged: a FIFO would block the
	 * open, a device could act on it; anything else goes to the real
	 * exec untouched, which fails as it would without us (EACCES). */
	if (path ? rt_sys4(SYS_newfstatat, dirfd, path, &st, 0) : rt_sys2(SYS_fstat, dirfd, &st))
		return SC_EXEC_OK;        /* absent: exec says */
	if (!S_ISREG(st.st_mode))
		return SC_EXEC_OK;
	fd = path ? rt_sys4(SYS_openat, dirfd, path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC, 0) : dirfd;
	if (fd < 0)
		return SC_EXEC_OK;        /* execute-only: exec says */
	n = rt_sys4(SYS_pread64, fd, head, sizeof(head), 0);
	if (n > 0 && (rt_sys2(SYS_fstat, fd, &st) || !S_ISREG(st.st_mode)))
		n = 0;                    /* (replaced meanwhile) */
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

/*
 * Memory for one exec, in the wrapper's own stack frame: a vfork child
 * may not allocate, and what it mmaps is the parent's and stays mapped
 * once its exec succeeds (a leak at every vfork+exec).  Only an
 * environment larger than EXEC_STACK (rare) takes mmap'ed memory, which
 * such a child then leaves behind.
 */
#define EXEC_STACK 32768          /* an environment's */
#define EXEC_ARGV_STACK 512       /* an argv's pointers (execl, a script) */
struct exec_mem {
	void *map;                     /* mmap'ed, or NULL */
	size_t len;
};

struct exec_job {
	struct exec_mem m;
	int slot;                      /* unrec_note's, or -1 */
	void *buf[EXEC_STACK / sizeof(void *)];
};

struct exec_argv {
	struct exec_mem m;
	void *buf[EXEC_ARGV_STACK];
};

/* need bytes: buf[cap] (in the caller's frame), else mmap'ed into m;
 * NULL if there is none. */
static void *mem_get(struct exec_mem *m, void *buf, size_t cap, size_t need)
{
	long a;

	m->map = NULL;
	if (need <= cap)
		return buf;
	need = (need + PAGE - 1) & ~(PAGE - 1);
	a = rt_sys6(SYS_mmap, 0, (long)need, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (rt_mmap_failed(a))
		return NULL;
	m->map = (void *)a;
	m->len = need;
	return m->map;
}

static void mem_done(struct exec_mem *m)
{
	if (m->map)
		rt_sys2(SYS_munmap, m->map, (long)m->len);
	m->map = NULL;
}

static void job_done(struct exec_job *j)
{
	mem_done(&j->m);
}

/* The environment for a child that takes the runtime: envp without
 * LD_PRELOAD and ours, then ours; envp itself if there is nothing to do
 * or no memory. */
static char *const *child_env(struct exec_job *j, char *const *envp)
{
	const char *user = NULL;
	size_t n = 0, ulen = 0, need, k = 0;
	char **v, *s;

	if (!ex.on)
		return envp;
	for (char *const *e = envp; e && *e; e++, n++)
		if (exec_is_ours(*e) == 2)
			user = *e + 11;
	if (user)
		ulen = rt_strlen(user);
	need = (n + (size_t)ex.n + 3) * sizeof(char *) + 2 * ulen + ex.prefix_len + 64;
	v = mem_get(&j->m, j->buf, sizeof(j->buf), need);
	if (!v)
		return envp;
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

	j->m.map = NULL;
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
	struct exec_argv a;
	size_t argc = 0;
	char **v;
	long r;

	while (argv && argv[argc])
		argc++;
	v = mem_get(&a.m, a.buf, sizeof(a.buf), (argc + 3) * sizeof(char *));
	if (!v)
		return -ENOMEM;
	v[0] = (char *)"/bin/sh";
	v[1] = (char *)file;
	for (size_t i = 1; i < argc; i++)
		v[i + 1] = argv[i];
	v[argc > 1 ? argc + 1 : 2] = NULL;
	r = exec_raw(AT_FDCWD, "/bin/sh", v, envp, 0);
	mem_done(&a.m);
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
 * execl's arguments (arg, then *ap up to a NULL) as an argv in a's memory
 * (its frame's, or mmap'ed for a very long list: no allocation), and with
 * env, execle's environment after the NULL; NULL if there is no memory.
 */
static char **execl_argv(struct exec_argv *a, const char *arg, va_list *ap, char *const **env)
{
	va_list cp;
	size_t argc = 1;
	char **v;

	va_copy(cp, *ap);
	while (va_arg(cp, char *))
		argc++;
	va_end(cp);
	v = mem_get(&a->m, a->buf, sizeof(a->buf), (argc + 1) * sizeof(char *));
	if (!v)
		return NULL;
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
	struct exec_argv a;
	char *const *env = __environ;
	char **v = execl_argv(&a, arg, ap, with_env ? &env : NULL);
	long r;

	if (!v)
		return set_errno(-ENOMEM);
	r = search ? exec_search(path, v, env) : exec_raw(AT_FDCWD, path, v, env, 0);
	mem_done(&a.m);
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

static void *next_spawn, *next_spawnp;

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
 * system() and popen() run "/bin/sh -c CMD" here, on the C library's
 * posix_spawn with the shell's environment passed explicitly (as glibc's
 * own do, with `environ`): `environ` itself is never changed, so other
 * threads never see our variables nor an array that is given back, and a
 * setenv() meanwhile is kept.  popen's streams are noted (FILE -> pid) for
 * pclose(), which waits for the shell; a stream not ours goes to the C
 * library's pclose.  The C library's functions are reached with dlsym
 * (the runtime imports none of them, t307).  A popen stream closed with
 * fclose() rather than pclose() is not waited for (glibc's would be).
 */
static void *next_pclose, *next_fdopen, *next_fclose, *next_fa_init, *next_fa_destroy, *next_fa_dup2,
	*next_fa_close, *next_attr_init, *next_attr_destroy, *next_attr_flags, *next_attr_sigdef,
	*next_attr_sigmask;

/* The kernel's struct sigaction (x86-64 and arm64 alike). */
struct exec_ksa {
	void *handler;
	unsigned long flags;
	void *restorer;
	uint64_t mask;
};

static int exec_lock_word;

static void exec_lock(void)
{
	while (__atomic_exchange_n(&exec_lock_word, 1, __ATOMIC_ACQUIRE))
		rt_sys0(SYS_sched_yield);
}

static void exec_unlock(void)
{
	__atomic_store_n(&exec_lock_word, 0, __ATOMIC_RELEASE);
}

/* A fork()'s child: the thread that held the lock is not in it. */
void sc_exec_atfork_child(void)
{
	__atomic_store_n(&exec_lock_word, 0, __ATOMIC_RELEASE);
}

/* the shell's spawn: 0 with *pid, or an error number */
static int shell_spawn(pid_t *pid, const char *cmd, const posix_spawn_file_actions_t *fa,
		       const posix_spawnattr_t *attr)
{
	char *argv[] = { (char *)"sh", (char *)"-c", (char *)cmd, NULL };

	return spawn((spawn_fn)exec_next(&next_spawn, "posix_spawn"), pid, "/bin/sh", "/bin/sh", fa, attr,
		     argv, __environ);
}

static long exec_wait(pid_t pid, int *status)
{
	long r;

	do
		r = rt_sys4(SYS_wait4, pid, status, 0, 0);
	while (r == -EINTR);
	return r;
}

/* system() while others run: SIGINT and SIGQUIT ignored from the first
 * one's start to the last one's end (as glibc's) */
static int sys_refs;
static struct exec_ksa sys_int, sys_quit;

static int do_system(const char *cmd)
{
	int (*attr_init)(posix_spawnattr_t *) = exec_next(&next_attr_init, "posix_spawnattr_init");
	int (*attr_destroy)(posix_spawnattr_t *) = exec_next(&next_attr_destroy, "posix_spawnattr_destroy");
	int (*attr_flags)(posix_spawnattr_t *, short) = exec_next(&next_attr_flags, "posix_spawnattr_setflags");
	int (*attr_sigdef)(posix_spawnattr_t *, const sigset_t *) =
		exec_next(&next_attr_sigdef, "posix_spawnattr_setsigdefault");
	int (*attr_sigmask)(posix_spawnattr_t *, const sigset_t *) =
		exec_next(&next_attr_sigmask, "posix_spawnattr_setsigmask");
	struct exec_ksa ign = { .handler = SIG_IGN };
	uint64_t chld = 1ULL << (SIGCHLD - 1);
	sigset_t omask, def;
	posix_spawnattr_t attr;
	pid_t pid;
	int status = 0, r;

	if (!attr_init || !attr_destroy || !attr_flags || !attr_sigdef || !attr_sigmask)
		return -1;
	exec_lock();
	if (sys_refs++ == 0) {
		rt_sys4(SYS_rt_sigaction, SIGINT, &ign, &sys_int, 8);
		rt_sys4(SYS_rt_sigaction, SIGQUIT, &ign, &sys_quit, 8);
	}
	exec_unlock();
	for (size_t i = 0; i < sizeof(omask) / 8; i++)      /* (volatile: no memset call) */
		((volatile uint64_t *)&omask)[i] = ((volatile uint64_t *)&def)[i] = 0;
	rt_sys4(SYS_rt_sigprocmask, SIG_BLOCK, &chld, &omask, 8);
	/* the child: SIGINT and SIGQUIT back to the default unless they
	 * were ignored, the caller's mask */
	if (sys_int.handler != SIG_IGN)
		((uint64_t *)&def)[0] |= 1ULL << (SIGINT - 1);
	if (sys_quit.handler != SIG_IGN)
		((uint64_t *)&def)[0] |= 1ULL << (SIGQUIT - 1);
	attr_init(&attr);
	attr_sigdef(&attr, &def);
	attr_sigmask(&attr, &omask);
	attr_flags(&attr, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
	r = shell_spawn(&pid, cmd, NULL, &attr);
	attr_destroy(&attr);
	if (!r) {
		long w = exec_wait(pid, &status);

		if (w != pid) {
			status = -1;
			r = (int)-w;
		}
	} else {
		status = 127 << 8;        /* the shell could not be run */
	}
	exec_lock();
	if (--sys_refs == 0) {
		rt_sys4(SYS_rt_sigaction, SIGINT, &sys_int, 0, 8);
		rt_sys4(SYS_rt_sigaction, SIGQUIT, &sys_quit, 0, 8);
	}
	exec_unlock();
	rt_sys4(SYS_rt_sigprocmask, SIG_SETMASK, &omask, 0, 8);
	if (status == -1)
		errno = r;
	return status;
}

int system(const char *cmd)
{
	if (!cmd)
		return do_system("exit 0") == 0;     /* is there a shell? */
	return do_system(cmd);
}

/* popen's streams, for pclose */
#define EXEC_POPEN_MAX 1024
static struct {
	FILE *f;
	int pid, fd;
} popen_tab[EXEC_POPEN_MAX];

FILE *popen(const char *cmd, const char *mode)
{
	int (*fa_init)(posix_spawn_file_actions_t *) = exec_next(&next_fa_init, "posix_spawn_file_actions_init");
	int (*fa_destroy)(posix_spawn_file_actions_t *) =
		exec_next(&next_fa_destroy, "posix_spawn_file_actions_destroy");
	int (*fa_dup2)(posix_spawn_file_actions_t *, int, int) =
		exec_next(&next_fa_dup2, "posix_spawn_file_actions_adddup2");
	int (*fa_close)(posix_spawn_file_actions_t *, int) =
		exec_next(&next_fa_close, "posix_spawn_file_actions_addclose");
	FILE *(*fdopen_f)(int, const char *) = exec_next(&next_fdopen, "fdopen");
	int rd = 0, wr = 0, cloexec = 0, fds[2], parent, child, std, r, slot = -1, spawned;
	posix_spawn_file_actions_t fa;
	pid_t pid;
	FILE *f;

	if (!fa_init || !fa_destroy || !fa_dup2 || !fa_close || !fdopen_f)
		return NULL;
	for (const char *m = mode; m && *m; m++) {
		if (*m == 'r')
			rd = 1;
		else if (*m == 'w')
			wr = 1;
		else if (*m == 'e')
			cloexec = 1;
		else
			rd = wr = 1;               /* invalid */
	}
	if (rd == wr) {
		errno = EINVAL;
		return NULL;
	}
	r = (int)rt_sys2(SYS_pipe2, fds, O_CLOEXEC);
	if (r < 0) {
		errno = -r;
		return NULL;
	}
	parent = rd ? fds[0] : fds[1];
	child = rd ? fds[1] : fds[0];
	std = rd ? 1 : 0;
	if (child == std) {                /* (its standard stream was closed) */
		int d = (int)rt_sys3(SYS_fcntl, child, F_DUPFD_CLOEXEC, 3);

		rt_close(child);
		if (d < 0) {
			rt_close(parent);
			errno = -d;
			return NULL;
		}
		child = d;
	}
	fa_init(&fa);
	fa_dup2(&fa, child, std);
	/* under the lock to the end: the streams of other popen()s still
	 * open are closed in the child (POSIX) */
	exec_lock();
	for (int i = 0; i < EXEC_POPEN_MAX; i++) {
		if (popen_tab[i].f)
			fa_close(&fa, popen_tab[i].fd);
		else if (slot < 0)
			slot = i;
	}
	r = slot < 0 ? EMFILE : shell_spawn(&pid, cmd, &fa, NULL);
	spawned = !r;
	fa_destroy(&fa);
	rt_close(child);
	f = NULL;
	if (spawned) {
		if (!cloexec)
			rt_sys3(SYS_fcntl, parent, F_SETFD, 0);
		f = fdopen_f(parent, rd ? "r" : "w");
		if (f) {
			for (int i = 0; i < EXEC_POPEN_MAX; i++)
				if (popen_tab[i].f == f)
					popen_tab[i].f = NULL;     /* fclose'd, not pclose'd */
			popen_tab[slot].pid = pid;
			popen_tab[slot].fd = parent;
			popen_tab[slot].f = f;
		} else {
			r = errno;
		}
	}
	exec_unlock();
	if (!f) {
		int st;

		rt_close(parent);
		if (spawned)
			exec_wait(pid, &st);
		errno = r;
		return NULL;
	}
	return f;
}

HOOK int pclose(FILE *f);

int pclose(FILE *f)
{
	int (*next)(FILE *) = exec_next(&next_pclose, "pclose");
	int (*fclose_f)(FILE *) = exec_next(&next_fclose, "fclose");
	int pid = 0, status = 0;

	exec_lock();
	for (int i = 0; f && i < EXEC_POPEN_MAX; i++)
		if (popen_tab[i].f == f) {
			pid = popen_tab[i].pid;
			popen_tab[i].f = NULL;
			break;
		}
	exec_unlock();
	if (!pid)
		return next ? next(f) : -1;
	if (fclose_f)
		fclose_f(f);
	{
		long w = exec_wait(pid, &status);

		if (w != pid) {
			errno = (int)-w;
			return -1;
		}
	}
	return status;
}
