/*
 * instrument — the recorder of the instrumentation method.
 *
 * The target runs with the runtime (build/libstackclock.so) preloaded.
 * Each of its process images keeps its calling-context trees in a shared
 * memory file (src/runtime/shm.h); nothing crosses a pipe while the target
 * runs, so the recorder only waits.  When every descendant has ended (or
 * was killed: the files keep what the probes wrote), the recorder reads the
 * files, writes the data file and removes them.
 *
 * Times: the probes count TSC ticks.  The recorder turns them into
 * CLOCK_MONOTONIC nanoseconds itself, from a (tsc, monotonic) pair taken
 * before the launch and the kernel's TSC rate (perf's mmap page) or, where
 * that is not offered, a second pair taken at the end; so a killed target
 * needs no cooperation.
 */
#include "format/execcheck.h"
#include "format/scdata.h"
#include "record/cct_emit.h"
#include "record/discover.h"
#include "record/record.h"
#include "runtime/calib.h"
#include "runtime/libcall.h"
#include "runtime/patch.h"
#include "runtime/shm.h"
#include "util/util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

/* ---- checks before the launch ----------------------------------------- */

/* Could exec run path?  0, or -1 with errno: as access(X_OK), and
 * EACCES for what is not a regular file (a FIFO, a directory, a device:
 * exec refuses it so, and opening one to read it could block or act). */
static int exec_access(const char *path)
{
	struct stat st;

	if (access(path, X_OK))
		return -1;
	if (!stat(path, &st) && !S_ISREG(st.st_mode)) {
		errno = EACCES;
		return -1;
	}
	return 0;
}

/* Where execvp would find prog: 0 and the path, or -errno. */
int record_find_program(const char *prog, char *out, size_t outlen)
{
	const char *path = getenv("PATH"), *p;
	int err = -ENOENT;

	if (strchr(prog, '/')) {
		snprintf(out, outlen, "%s", prog);
		return exec_access(out) ? -errno : 0;
	}
	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	for (p = path;; ) {
		const char *colon = strchr(p, ':');
		size_t n = colon ? (size_t)(colon - p) : strlen(p);

		snprintf(out, outlen, "%.*s%s%s", (int)n, p, n ? "/" : "", prog);
		if (!exec_access(out))
			return 0;
		if (errno == EACCES)
			err = -EACCES;
		if (!colon)
			break;
		p = colon + 1;
	}
	return err;
}

/* The one below; undef_only: only a reference (an object whose functions
 * call the hooks, not one that defines them, as libc does). */
static int elf_hooks_sym(const char *path, bool undef_only)
{
	Elf *e;
	Elf_Scn *scn = NULL;
	int fd, found = 0;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return -1;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	e = elf_begin(fd, ELF_C_READ, NULL);
	if (!e || elf_kind(e) != ELF_K_ELF) {
		elf_end(e);
		close(fd);
		return -1;
	}
	while (!found && (scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;
		size_t i, n;

		if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM) ||
		    !sh.sh_entsize)
			continue;
		d = elf_getdata(scn, NULL);
		n = sh.sh_size / sh.sh_entsize;
		for (i = 0; d && i < n; i++) {
			GElf_Sym sym;
			const char *name;

			if (!gelf_getsym(d, (int)i, &sym))
				break;
			name = elf_strptr(e, sh.sh_link, sym.st_name);
			if (name && !strcmp(name, "__cyg_profile_func_enter") &&
			    (!undef_only || sym.st_shndx == SHN_UNDEF)) {
				found = 1;
				break;
			}
		}
	}
	elf_end(e);
	close(fd);
	return found;
}

/*
 * Does the ELF file reference or define __cyg_profile_func_enter?
 * 1 yes, 0 no, -1 not an ELF file we can read (a script: let it run).
 */
int record_elf_has_hooks(const char *path)
{
	return elf_hooks_sym(path, false);
}

int record_elf_calls_hooks(const char *path)
{
	return elf_hooks_sym(path, true);
}

/*
 * The AddressSanitizer runtime the program links dynamically (gcc's
 * -fsanitize=address: libasan.so.N; clang's -shared-libsan), into out:
 * 1, or 0 if none.  It insists on coming first in the list of initial
 * libraries, so it is preloaded before ours.
 */
static int elf_asan_runtime(const char *path, char *out, size_t outlen)
{
	Elf *e;
	Elf_Scn *scn = NULL;
	int fd, found = 0;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return 0;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	e = elf_begin(fd, ELF_C_READ, NULL);
	while (e && elf_kind(e) == ELF_K_ELF && !found && (scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;
		size_t i, n;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNAMIC || !sh.sh_entsize)
			continue;
		d = elf_getdata(scn, NULL);
		n = sh.sh_size / sh.sh_entsize;
		for (i = 0; d && i < n; i++) {
			GElf_Dyn dyn;
			const char *name;

			if (!gelf_getdyn(d, (int)i, &dyn) || dyn.d_tag == DT_NULL)
				break;
			if (dyn.d_tag != DT_NEEDED)
				continue;
			name = elf_strptr(e, sh.sh_link, dyn.d_un.d_val);
			if (name && (!strncmp(name, "libasan.so", 10) || !strncmp(name, "libclang_rt.asan", 16))) {
				snprintf(out, outlen, "%s", name);
				found = 1;
				break;
			}
		}
	}
	elf_end(e);
	close(fd);
	return found;
}

/*
 * Why the program at path cannot be recorded (format/execcheck.h), as the
 * runtime judges what a recorded program execs: SC_EXEC_OK, or the reason.
 * A script is judged by its interpreter.
 */
int record_exec_why(const char *path)
{
	uint8_t head[2048];
	struct stat st;
	uid_t ru, eu, su;
	gid_t rg, eg, sg;
	ssize_t n;
	int fd, why;

	for (int depth = 0; depth < 3; depth++) {
		char interp[256];
		size_t i = 2, k = 0;

		/* a regular file only: a FIFO would block the open, a
		 * device could act on it (exec refuses them itself) */
		if (stat(path, &st) || !S_ISREG(st.st_mode))
			return SC_EXEC_OK;
		fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
		if (fd < 0)
			return SC_EXEC_OK;
		n = pread(fd, head, sizeof(head), 0);
		if (n <= 0 || fstat(fd, &st) || !S_ISREG(st.st_mode)) {
			close(fd);
			return SC_EXEC_OK;
		}
		close(fd);
		if (n < 3 || head[0] != '#' || head[1] != '!')
			break;
		while (i < (size_t)n && (head[i] == ' ' || head[i] == '\t'))
			i++;
		while (i < (size_t)n && k + 1 < sizeof(interp) && head[i] != ' ' && head[i] != '\t' && head[i] != '\n')
			interp[k++] = (char)head[i++];
		interp[k] = 0;
		if (!k)
			return SC_EXEC_OK;
		path = strcpy(alloca(k + 1), interp);
	}
	if (head[0] != ELFMAG0)
		return SC_EXEC_OK;
	why = sc_exec_check_elf(head, (size_t)n);
	if (why != SC_EXEC_OK)
		return why;
	if ((st.st_mode & (S_ISUID | S_ISGID)) && !getresuid(&ru, &eu, &su) && !getresgid(&rg, &eg, &sg) &&
	    sc_exec_secure(st.st_mode, st.st_uid, st.st_gid, ru, eu, rg, eg))
		return SC_EXEC_SETID;
	return SC_EXEC_OK;
}

/*
 * --only's names as the runtime wants them (shm.h, STACKCLOCK_TL_ONLY):
 * each function's address in the program's file, decimal, comma-separated.
 * Names are matched in the symbol table (and the dynamic one), as written
 * or demangled-free (a C++ function by its mangled name).  NULL after a
 * one-line error naming what is not there.
 */
static char *only_addrs(const char *prog, const char *name, const char *list)
{
	char *dup = xstrdup(list), *save = NULL, *tok, *out = NULL;
	Elf *e = NULL;
	int fd = -1, ok = 1;

	if (elf_version(EV_CURRENT) == EV_NONE || (fd = open(prog, O_RDONLY | O_CLOEXEC)) < 0 ||
	    !(e = elf_begin(fd, ELF_C_READ, NULL)) || elf_kind(e) != ELF_K_ELF) {
		pr_err("record: --only: cannot read the symbols of '%s' (an ELF program is needed)", name);
		ok = 0;
	}
	for (tok = strtok_r(dup, ",", &save); ok && tok; tok = strtok_r(NULL, ",", &save)) {
		uint64_t addr = 0;
		Elf_Scn *scn = NULL;

		while (!addr && (scn = elf_nextscn(e, scn))) {
			GElf_Shdr sh;
			Elf_Data *d;

			if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM) ||
			    !sh.sh_entsize || !(d = elf_getdata(scn, NULL)))
				continue;
			for (size_t k = 0; k < sh.sh_size / sh.sh_entsize; k++) {
				GElf_Sym sym;
				const char *nm;

				if (!gelf_getsym(d, (int)k, &sym) || GELF_ST_TYPE(sym.st_info) != STT_FUNC ||
				    sym.st_shndx == SHN_UNDEF || !sym.st_value)
					continue;
				nm = elf_strptr(e, sh.sh_link, sym.st_name);
				if (nm && !strcmp(nm, tok)) {
					addr = sym.st_value;
					break;
				}
			}
		}
		if (!addr) {
			pr_err("record: --only: no function '%s' in '%s' (name functions of the program "
			       "itself, as its symbol table spells them)", tok, name);
			ok = 0;
			break;
		}
		if (out) {
			char *more = xasprintf("%s,%" PRIu64, out, addr);

			free(out);
			out = more;
		} else {
			out = xasprintf("%" PRIu64, addr);
		}
	}
	if (e)
		elf_end(e);
	if (fd >= 0)
		close(fd);
	free(dup);
	if (!ok) {
		free(out);
		return NULL;
	}
	return out;
}

/* Room a directory must have for the image files: an image's header and
 * first step (SC_SHM_MIN_SIZE), and growth for a short run. */
#define SHM_PROBE_SIZE (1u << 20)

/*
 * Can the runtime keep its images in dir?  A file of SHM_PROBE_SIZE is
 * made there and committed with fallocate, as the runtime commits its
 * memory (image.c): a missing or read-only directory, a full file system
 * and one without fallocate are refused.  Less under a file-size limit
 * ('ulimit -f', which the target shares: explain_no_image names it), so
 * that the check passes no limit of ours.  0 or -errno.
 */
static int shm_dir_check(const char *dir)
{
	char *name = NULL;
	int fd, err = 0;
	off_t size = SHM_PROBE_SIZE;
	struct rlimit lim;

	if (!getrlimit(RLIMIT_FSIZE, &lim) && lim.rlim_cur != RLIM_INFINITY && lim.rlim_cur < (rlim_t)size)
		size = (off_t)(lim.rlim_cur & ~(rlim_t)4095);

	fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd < 0 && (errno == EOPNOTSUPP || errno == EISDIR || errno == EINVAL)) {
		name = xasprintf("%s/.stackclock-check.XXXXXX", dir);
		fd = mkostemp(name, O_CLOEXEC);
		if (fd >= 0)
			unlink(name);
		free(name);
	}
	if (fd < 0)
		return -errno;
	if (size && fallocate(fd, 0, 0, size))
		err = -errno;
	close(fd);
	return err;
}

/*
 * No process image at all: say why if a limit we share with the target
 * explains it (the runtime needs its header and a first step of memory).
 */
static void explain_no_image(const char *prog, const char *dir)
{
	const uint64_t need = SC_SHM_MIN_SIZE;
	struct rlimit lim;
	int err = shm_dir_check(dir);

	if (err)
		pr_warn("nothing recorded: the runtime could not keep its shared memory in %s (%s now; "
			"it was usable at the start): free space there, or set STACKCLOCK_SHM_DIR to a "
			"writable tmpfs", dir, strerror(-err));
	else if (!getrlimit(RLIMIT_FSIZE, &lim) && lim.rlim_cur != RLIM_INFINITY && lim.rlim_cur < need)
		pr_warn("nothing recorded: the file-size limit (ulimit -f %lu) leaves the runtime no room "
			"for its shared memory, which needs %lu KiB (raise 'ulimit -f'; '%s' ran unprofiled)",
			(unsigned long)(lim.rlim_cur / 1024), (unsigned long)(need / 1024), prog);
	else if (!getrlimit(RLIMIT_AS, &lim) && lim.rlim_cur != RLIM_INFINITY && lim.rlim_cur / 16 < need)
		pr_warn("nothing recorded: the address-space limit (ulimit -v %lu) leaves the runtime no room: "
			"it takes at most a sixteenth of it and needs %lu KiB (raise 'ulimit -v'; '%s' ran unprofiled)",
			(unsigned long)(lim.rlim_cur / 1024), (unsigned long)(need / 1024), prog);
	else
		pr_warn("no instrumented function ran in '%s' (was it built with -finstrument-functions?)",
			prog);
}

struct totals {
	uint64_t calls, events, lost, threads, nodes;
	uint64_t *tids;           /* pid << 32 | tid of every thread state: an
				     exec'd image's threads are its process's */
	size_t ntids, atids;
	uint64_t samples, probe_samples;   /* sampled shares (SPEC 14) */
	uint32_t samp_state;      /* SC_SHM_SAMP_* of every image */
	uint32_t os_opened, os_failed;
	uint32_t why;             /* SC_SHM_WHY_* of every image */
	uint32_t why_procs[8];    /* images per SC_SHM_WHY_* bit */
	uint32_t fd_base;
	uint32_t img_failed;      /* images the runtime could not make */
	int img_err;              /* ... the last one's errno */
	bool timeline;
	uint64_t tl_bytes, tl_dropped, tl_filtered;   /* --timeline */
	struct unrec { uint32_t pid, why; char path[sizeof(((struct sc_shm_unrec *)0)->path)]; } *unrec;
	size_t nunrec, aunrec;    /* programs run unrecorded (runtime/exec.c) */
	uint64_t unrec_lost;      /* ... beyond what the images could list */
};

/* What kept the runtime from recording everything, one line per reason. */
static void explain_losses(const struct totals *tot, const char *dir)
{
	struct rlimit lim;
	unsigned long kib;

	/* every process that ran a program we could not follow, by name */
	for (size_t i = 0; i < tot->nunrec; i++)
		pr_warn("process %u ran '%s', which was not recorded: %s: %s", tot->unrec[i].pid,
			tot->unrec[i].path, sc_exec_why_text(tot->unrec[i].why), sc_exec_why_hint(tot->unrec[i].why));
	if (tot->unrec_lost)
		pr_warn("%lu more programs run were not recorded (statically linked, 32-bit or set-ID; "
			"the images could list no more)", (unsigned long)tot->unrec_lost);

	if ((tot->samp_state & SC_SHM_SAMP_FAILED) && !(tot->why & SC_SHM_WHY_FDCAP))
		pr_warn("the kernel refused to sample %s threads' CPU clock: sampled shares cover only the others "
			"(lower kernel.perf_event_paranoid, or record with -F 0)",
			tot->samp_state & SC_SHM_SAMP_OPENED ? "some" : "the");

	if (tot->why & SC_SHM_WHY_FSIZE) {
		kib = !getrlimit(RLIMIT_FSIZE, &lim) && lim.rlim_cur != RLIM_INFINITY ? lim.rlim_cur / 1024 : 0;
		pr_warn("%u process(es) reached the file-size limit (ulimit -f %lu): the runtime's memory could "
			"not grow and later events were lost (%lu lost; raise 'ulimit -f')",
			tot->why_procs[0], kib, (unsigned long)tot->lost);
	}
	if ((tot->why & SC_SHM_WHY_AS) && tot->lost) {
		kib = !getrlimit(RLIMIT_AS, &lim) && lim.rlim_cur != RLIM_INFINITY ? lim.rlim_cur / 1024 : 0;
		pr_warn("the address-space limit (ulimit -v %lu) gave the runtime a sixteenth of it; it ran out "
			"and %lu events were lost (raise 'ulimit -v')", kib, (unsigned long)tot->lost);
	}
	/* full, but what did not fit had a fallback (the arena's free lists) */
	if ((tot->why & SC_SHM_WHY_SPACE) && tot->lost)
		pr_warn("the shared-memory file system is full: %lu events were lost (free space in %s, "
			"or set STACKCLOCK_SHM_DIR to a larger tmpfs)", (unsigned long)tot->lost, dir);
	if (tot->why & SC_SHM_WHY_SECCOMP)
		pr_warn("%u process(es) entered a seccomp sandbox: from then on the runtime made no system call "
			"(new threads, OS events and memory beyond its reserve were given up; %lu events lost)",
			tot->why_procs[3], (unsigned long)tot->lost);
	if (tot->why & SC_SHM_WHY_NOTSC)
		pr_warn("%u process(es) had the time-stamp counter turned off by the kernel (prctl PR_SET_TSC, "
			"or seccomp's strict mode): from then on their calls were counted without times (0 ns)",
			tot->why_procs[6]);
	if (tot->img_failed)
		pr_warn("%u process image(s) could not make their shared memory in %s (%s): their calls are "
			"missing (free space there, or set STACKCLOCK_SHM_DIR to a larger tmpfs)",
			tot->img_failed, dir, strerror(tot->img_err));
	else if (tot->why & SC_SHM_WHY_CHILD)
		pr_warn("%u process(es) forked children that could not be recorded: no descriptor or memory was "
			"left for their profile (a lowered 'ulimit -n' or 'ulimit -v'); their calls are missing",
			tot->why_procs[7]);
	if (tot->why & SC_SHM_WHY_FDCAP)
		pr_warn("the runtime's descriptor cap (a quarter of 'ulimit -n', from fd %u up) left some threads "
			"without OS events%s: their OS time counts as application time%s (raise 'ulimit -n')",
			tot->fd_base, tot->samp_state & SC_SHM_SAMP_FAILED ? " or samples" : "",
			tot->samp_state & SC_SHM_SAMP_FAILED ? ", their samples are missing from the shares" : "");
}

/* The runtime: $STACKCLOCK_RUNTIME, or libstackclock.so beside the tool. */
static int find_runtime(char *out, size_t outlen)
{
	const char *env = getenv("STACKCLOCK_RUNTIME");
	char self[PATH_MAX - 64];
	ssize_t n;
	char *slash;

	if (env && *env) {
		snprintf(out, outlen, "%s", env);
		return access(out, R_OK) ? -errno : 0;
	}
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0)
		return -ENOENT;
	self[n] = 0;
	slash = strrchr(self, '/');
	if (slash)
		*slash = 0;
	snprintf(out, outlen, "%s/libstackclock.so", self);
	if (!access(out, R_OK))
		return 0;
	snprintf(out, outlen, "%s/../lib/stackclock/libstackclock.so", self);
	if (!access(out, R_OK))
		return 0;
	snprintf(out, outlen, "%s/libstackclock.so", self);
	return -ENOENT;
}

static uint64_t read_id(const char *path)
{
	char buf[32];
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	return strtoull(buf, NULL, 10);
}

/*
 * Ids of raw_syscalls:sys_enter/sys_exit, mounting tracefs when it is
 * missing and we may.  0 when unknown (syscalls then go unobserved).
 */
static void syscall_tracepoints(uint64_t *enter, uint64_t *exit_id)
{
	static const char *const roots[] = { "/sys/kernel/tracing", "/sys/kernel/debug/tracing" };
	char path[128];
	size_t i;
	int attempt;

	*enter = *exit_id = 0;
	for (attempt = 0; attempt < 2; attempt++) {
		for (i = 0; i < ARRAY_SIZE(roots); i++) {
			snprintf(path, sizeof(path), "%s/events/raw_syscalls/sys_enter/id", roots[i]);
			*enter = read_id(path);
			snprintf(path, sizeof(path), "%s/events/raw_syscalls/sys_exit/id", roots[i]);
			*exit_id = read_id(path);
			if (*enter && *exit_id)
				return;
		}
		if (attempt || geteuid() != 0 ||
		    mount("nodev", "/sys/kernel/tracing", "tracefs", 0, NULL)) {
			pr_debug("no tracefs: system calls will not be observed");
			break;
		}
	}
	*enter = *exit_id = 0;
}

/*
 * Keep one (disabled) event of each syscall tracepoint open for the whole
 * session.  The kernel registers a tracepoint's perf probe when its first
 * event opens and unregisters it, waiting for RCU grace periods (tens of
 * milliseconds), when its last one closes: without a holder every thread of
 * the target would pay that wait when it ends, and so would the recorder.
 * The holder is a detached process (not our descendant, so the wait for the
 * target does not wait for it) that opens the events, says so, and exits
 * when the recorder closes the pipe, paying the final wait on its own.
 * Must run before launch_prepare() makes us a subreaper.  Returns the
 * write end to close when done, or -1.
 */
static int hold_tracepoints(uint64_t enter, uint64_t exit_id)
{
	int keep[2], ready[2];
	pid_t pid;
	char c;

	if (!enter || !exit_id || pipe2(keep, O_CLOEXEC))
		return -1;
	if (pipe2(ready, O_CLOEXEC)) {
		close(keep[0]);
		close(keep[1]);
		return -1;
	}
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		uint64_t ids[2] = { enter, exit_id };
		int i;

		if (fork() != 0)
			_exit(0);
		i = open("/dev/null", O_RDWR);   /* hold no pipe of our caller's */
		if (i >= 0) {
			dup2(i, 0);
			dup2(i, 1);
			dup2(i, 2);
			if (i > 2)
				close(i);
		}
		close(keep[1]);
		close(ready[0]);
		for (i = 0; i < 2; i++) {
			struct perf_event_attr a;

			memset(&a, 0, sizeof(a));
			a.size = sizeof(a);
			a.type = PERF_TYPE_TRACEPOINT;
			a.config = ids[i];
			a.disabled = 1;
			if (syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC) < 0)
				break;
		}
		if (write(ready[1], "r", 1) < 0)
			_exit(1);
		close(ready[1]);
		while (read(keep[0], &c, 1) < 0 && errno == EINTR)
			;
		_exit(0);
	}
	close(keep[0]);
	close(ready[1]);
	if (pid > 0) {
		waitpid(pid, NULL, 0);
		while (read(ready[0], &c, 1) < 0 && errno == EINTR)
			;
	}
	close(ready[0]);
	if (pid < 0) {
		close(keep[1]);
		return -1;
	}
	return keep[1];
}

/* ---- time ------------------------------------------------------------- */

struct clock_pair {
	uint64_t tsc, ns;
};

/* A (tsc, monotonic) pair read as close together as we can. */
static struct clock_pair clock_pair_now(void)
{
	struct clock_pair best = { 0, 0 };
	uint64_t best_gap = UINT64_MAX;
	int i;

	for (i = 0; i < 7; i++) {
		uint64_t a = __rdtsc(), ns = now_ns(), b = __rdtsc();
		if (b - a < best_gap) {
			best_gap = b - a;
			best.tsc = a + (b - a) / 2;
			best.ns = ns;
		}
	}
	return best;
}

/* The kernel's own TSC rate from a perf mmap page, or 0. */
static double kernel_ns_per_tick(void)
{
	struct perf_event_attr a;
	struct perf_event_mmap_page *pg;
	double r = 0;
	long page = sysconf(_SC_PAGESIZE);
	int fd;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_DUMMY;
	a.exclude_kernel = 1;
	a.exclude_hv = 1;
	fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		return 0;
	pg = mmap(NULL, page, PROT_READ, MAP_SHARED, fd, 0);
	if (pg != MAP_FAILED) {
		if (pg->cap_user_time && pg->time_mult)
			r = (double)pg->time_mult / (double)(1ull << pg->time_shift);
		munmap(pg, page);
	}
	close(fd);
	return r;
}

/* ---- reading the images ----------------------------------------------- */

struct image {
	char name[256];           /* file name in the shm directory */
	const char *dir;          /* that directory */
	const struct sc_shm_header *hdr;
	const uint8_t *base;
	uint64_t len;             /* bytes of the arena we may read */
	uint32_t proc_id;
	uint32_t parent;
	uint64_t seq;             /* the <n> of <prefix>.<pid>.<n> */
	bool execed;              /* a later image of the same process: it ended by exec */
};

/*
 * The probes' cost on this machine (runtime/calib.h): the calibration
 * program, next to the runtime, run once with the runtime in calibration
 * mode.  0 with cost[] filled (ticks per interval: EE EX XE XX EXW), or -1 (nothing is taken
 * out then).
 */
static int calibrate(const char *runtime, bool patched, uint32_t cost[5], uint32_t *batches)
{
	char buf[256], prog[PATH_MAX], *envp[4] = { NULL }, *p, *plan = NULL;
	bool hit;
	const char *slash = strrchr(runtime, '/');
	struct pollfd pfd;
	size_t got = 0;
	int fds[2], status, i;
	pid_t pid;

	snprintf(prog, sizeof(prog), "%.*s%s", slash ? (int)(slash - runtime + 1) : 0, runtime,
		 patched ? RT_CALIB_PROG_PATCH : RT_CALIB_PROG);
	if (access(prog, X_OK) || (patched && dsc_plan_cached(prog, &plan, &hit)) || pipe2(fds, O_CLOEXEC)) {
		free(plan);
		return -1;
	}
	envp[0] = xasprintf("LD_PRELOAD=%s", runtime);
	envp[1] = xasprintf("%s=%d", RT_CALIB_ENV, 3);
	if (plan)
		envp[2] = xasprintf("%s=%s", SC_PATCH_ENV, plan);
	free(plan);
	pid = fork();
	if (pid == 0) {
		/* the write end as fd 3, kept across exec */
		if (dup2(fds[1], 3) == 3)
			execve(prog, (char *[]){ prog, NULL }, envp);
		_exit(127);
	}
	close(fds[1]);
	free(envp[0]);
	free(envp[1]);
	free(envp[2]);
	if (pid < 0) {
		close(fds[0]);
		return -1;
	}
	pfd.fd = fds[0];
	pfd.events = POLLIN;
	while (got < sizeof(buf) - 1 && poll(&pfd, 1, 10000) > 0) {
		ssize_t n = read(fds[0], buf + got, sizeof(buf) - 1 - got);

		if (n <= 0)
			break;
		got += (size_t)n;
	}
	close(fds[0]);
	if (got == 0)
		kill(pid, SIGKILL);        /* silent for 10 s: give up on it */
	waitpid(pid, &status, 0);
	buf[got] = 0;
	p = buf;
	for (i = 0; i < 5; i++) {
		unsigned long v = strtoul(p, &p, 10);

		if (v >= (1u << 20))
			return -1;
		cost[i] = (uint32_t)v;
	}
	*batches = (uint32_t)strtoul(p, &p, 10);
	return *p == '\n' && *batches ? 0 : -1;
}

/*
 * calibrate() RT_CALIB_RUNS times, keeping the run whose total is the
 * median: one run in four or five came out 20-50 % high as a whole (every
 * batch of it: a state of the process, such as where its code landed, or
 * work elsewhere on the machine), and a target can be in either state, so
 * neither the lowest nor the highest run stands for it.
 */
#define RT_CALIB_RUNS 3

static int calibrate_median(const char *runtime, bool patched, uint32_t cost[5], uint32_t *batches)
{
	uint32_t c[RT_CALIB_RUNS][5], b[RT_CALIB_RUNS];
	uint64_t sum[RT_CALIB_RUNS];
	int run, i, mid = 0;

	for (run = 0; run < RT_CALIB_RUNS; run++) {
		if (calibrate(runtime, patched, c[run], &b[run]))
			return -1;
		sum[run] = (uint64_t)c[run][0] + c[run][1] + c[run][2] + c[run][3];
	}
	for (run = 0; run < RT_CALIB_RUNS; run++) {
		int below = 0, same = 0;

		for (i = 0; i < RT_CALIB_RUNS; i++) {
			below += sum[i] < sum[run];
			same += sum[i] == sum[run] && i < run;
		}
		if (below + same == RT_CALIB_RUNS / 2)
			mid = run;
	}
	memcpy(cost, c[mid], sizeof(c[mid]));
	*batches = b[mid];
	return 0;
}

static int cmp_image(const void *a, const void *b)
{
	const struct image *x = a, *y = b;

	if (x->hdr->start_ns != y->hdr->start_ns)
		return x->hdr->start_ns < y->hdr->start_ns ? -1 : 1;
	if (x->hdr->pid != y->hdr->pid)
		return x->hdr->pid < y->hdr->pid ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int image_map(const char *dir, const char *name, struct image *im)
{
	char path[PATH_MAX];
	struct sc_shm_header h;
	struct stat st;
	uint64_t len;
	void *map;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || pread(fd, &h, sizeof(h), 0) != (ssize_t)sizeof(h) ||
	    h.magic != SC_SHM_MAGIC || h.version != SC_SHM_VERSION) {
		close(fd);
		return -EINVAL;
	}
	len = h.arena.bump;
	if (len > (uint64_t)st.st_size)
		len = (uint64_t)st.st_size;
	if (len > SC_SHM_ARENA_SIZE)
		len = SC_SHM_ARENA_SIZE;
	if (len < sizeof(h)) {
		close(fd);
		return -EINVAL;
	}
	/* populated at once: the emitters read most of it, and a fault per
	 * page costs more than the read on a VM */
	map = mmap(NULL, len, PROT_READ, MAP_SHARED | MAP_POPULATE, fd, 0);
	close(fd);
	if (map == MAP_FAILED)
		return -errno;
	memset(im, 0, sizeof(*im));
	snprintf(im->name, sizeof(im->name), "%s", name);
	im->dir = dir;
	im->base = map;
	im->hdr = map;
	im->len = len;
	im->parent = UINT32_MAX;
	return 0;
}

/* The last image before image i that belongs to process pid, or UINT32_MAX. */
static uint32_t latest_image_of(const struct image *ims, int i, uint32_t pid)
{
	for (int j = i - 1; j >= 0; j--)
		if (ims[j].hdr->pid == pid)
			return (uint32_t)j;
	return UINT32_MAX;
}

/* Which image each image came from: fork (named), exec (same pid, earlier),
 * or the parent process's image live at the time. */
static void link_parents(struct image *ims, int n)
{
	int i, j;

	for (i = 0; i < n; i++) {
		const struct sc_shm_header *h = ims[i].hdr;

		ims[i].proc_id = (uint32_t)i;
		if (h->flags & SC_SHM_FORKED) {
			for (j = 0; j < n; j++)
				if (j != i && !strncmp(ims[j].name, h->parent_file, sizeof(h->parent_file)))
					ims[i].parent = (uint32_t)j;
			if (ims[i].parent != UINT32_MAX)
				continue;
		}
		ims[i].parent = latest_image_of(ims, i, h->pid);
		if (ims[i].parent != UINT32_MAX)
			ims[ims[i].parent].execed = true;
		else
			ims[i].parent = latest_image_of(ims, i, h->ppid);
	}
}


/* The names of the library calls the image's hooks made rows of (shm.h's
 * tables, each checked against the image's bounds). */
static int emit_libcalls(struct sc_writer *w, const struct image *im, const struct sc_shm_header *h)
{
	uint32_t ntab = h->nlibcall_tabs < SC_SHM_MAX_LIBCALL_TABS ? h->nlibcall_tabs : SC_SHM_MAX_LIBCALL_TABS;

	for (uint32_t i = 0; i < ntab; i++) {
		uint64_t off = h->libcall_tab[i];
		const struct sc_shm_libcalls *t;

		if (!off || off > im->len - sizeof(*t))
			continue;
		t = (const struct sc_shm_libcalls *)(im->base + off);
		if (t->len > im->len - off || t->len < sizeof(*t) ||
		    t->n > (t->len - sizeof(*t)) / sizeof(t->e[0]))
			continue;
		for (uint32_t k = 0; k < t->n; k++) {
			struct sc_rec_libcall r = { .proc_id = im->proc_id, .addr = t->e[k].fn };
			const char *name = (const char *)t + t->e[k].name;
			int ret;

			if (t->e[k].name >= t->len || t->e[k].name_len >= t->len - t->e[k].name ||
			    name[t->e[k].name_len] != 0 || !t->e[k].name_len)
				continue;
			ret = sc_writer_add2(w, SC_REC_LIBCALL, &r, sizeof(r), name, t->e[k].name_len + 1);
			if (ret)
				return ret;
		}
	}
	return 0;
}

static int emit_image(struct sc_writer *w, const struct image *im, const struct sc_tick_conv *conv,
		      struct totals *tot)
{
	const struct sc_shm_header *h = im->hdr;
	struct sc_rec_process pr = { 0 };
	char exe[SC_SHM_PATH_MAX];
	uint64_t *offs = NULL, lost, os_lost = 0, last_ns = 0;
	uint32_t i, nmod;
	int nthr, k, ret, fd = -1;

	memcpy(exe, h->exe, sizeof(exe));
	exe[sizeof(exe) - 1] = 0;
	pr.proc_id = im->proc_id;
	pr.pid = h->pid;
	pr.ppid = h->ppid;
	pr.parent_proc_id = im->parent;
	pr.start_ns = h->start_ns;
	pr.end_ns = (h->flags & SC_SHM_ENDED) && h->end_tsc
		? conv->ns0 + (uint64_t)(((double)h->end_tsc - (double)conv->tick0) * conv->ns_per_tick)
		: 0;
	ret = sc_writer_add2(w, SC_REC_PROCESS, &pr, sizeof(pr), exe, strlen(exe) + 1);
	if (ret)
		return ret;

	nmod = h->nmodules < SC_SHM_MAX_MODULES ? h->nmodules : SC_SHM_MAX_MODULES;
	for (i = 0; i < nmod; i++) {
		const struct sc_shm_module *m = &h->modules[i];
		struct sc_rec_module mr = { 0 };
		const char *path;

		if (!m->valid || m->path_off >= im->len || m->path_len >= im->len - m->path_off ||
		    im->base[m->path_off + m->path_len] != 0)
			continue;
		path = (const char *)im->base + m->path_off;
		mr.proc_id = im->proc_id;
		/* an unloaded object's addresses carry its unload tag (shm.h) */
		mr.start = m->base | (m->unloaded <= SC_SHM_MAX_UNLOADS ? m->unloaded << SC_SHM_UNLOAD_SHIFT : 0);
		mr.flags = SC_MOD_BASE | SC_MOD_EXEC;
		ret = sc_writer_add2(w, SC_REC_MODULE, &mr, sizeof(mr), path, m->path_len + 1);
		if (ret)
			return ret;
	}

	ret = emit_libcalls(w, im, h);
	if (ret)
		return ret;

	nthr = sc_cct_threads(im->base, im->len, NULL, 0);
	if (nthr < 0) {
		pr_warn("process %u: damaged thread list in the runtime's memory; some threads are missing",
			h->pid);
		nthr = 0;
	}
	if (nthr > 0) {
		offs = xcalloc((size_t)nthr, sizeof(*offs));
		nthr = sc_cct_threads(im->base, im->len, offs, nthr);
	}
	lost = h->arena.lost;
	/* the timelines are read from the file (sc_cct_emit_thread_fd) */
	if (nthr > 0 && im->dir) {
		char path[PATH_MAX];

		snprintf(path, sizeof(path), "%s/%s", im->dir, im->name);
		fd = open(path, O_RDONLY | O_CLOEXEC);
	}
	for (k = 0; k < nthr; k++) {
		struct sc_eng_thread t;
		struct sc_rec_thread tr = { 0 };
		struct sc_cct_totals ct;
		char name[sizeof(t.name) + 1];

		memcpy(&t, im->base + offs[k], sizeof(t));
		memcpy(name, t.name, sizeof(t.name));
		name[sizeof(t.name)] = 0;
		tr.proc_id = im->proc_id;
		tr.tid = t.tid;
		tr.start_ns = conv->ns0 + (uint64_t)(((double)t.first - (double)conv->tick0) * conv->ns_per_tick);
		tr.end_ns = conv->ns0 + (uint64_t)(((double)t.last_raw - (double)conv->tick0) * conv->ns_per_tick);
		ret = sc_writer_add2(w, SC_REC_THREAD, &tr, sizeof(tr), name, strlen(name) + 1);
		if (ret)
			break;
		ret = sc_cct_emit_thread_fd(w, im->base, im->len, fd, offs[k], im->proc_id, conv, &ct);
		if (ret == -EINVAL) {
			pr_warn("process %u thread %u: damaged profile in the runtime's memory; kept what was readable",
				h->pid, t.tid);
			ret = 0;
		}
		if (ret)
			break;
		{
			/* frames left open: how the image ended (or the thread); an
			 * exec ends it (its destructors never run), as exit does; a
			 * detach leaves it running */
			struct sc_rec_thread_more tm = { 0 };
			int ended = (h->flags & SC_SHM_ENDED) || (t.flags & SC_ENG_THREAD_RETIRED) || im->execed;
			int detached = (h->flags & SC_SHM_DETACHED) && !(t.flags & SC_ENG_THREAD_RETIRED) &&
				       !im->execed;

			tm.proc_id = im->proc_id;
			tm.tid = t.tid;
			tm.samples = ct.samples;
			tm.probe_samples = ct.probe_samples;
			for (int c = 0; c < 4; c++)
				tm.repairs[c] = ct.repair_by[c];
			tm.repairs[detached ? SC_REPAIR_DETACH : ended ? SC_REPAIR_EXIT : SC_REPAIR_KILL] =
				ct.open_frames;
			ret = sc_writer_add(w, SC_REC_THREAD_MORE, &tm, sizeof(tm));
			if (ret)
				break;
			tot->samples += ct.samples;
			tot->probe_samples += ct.probe_samples;
			tot->tl_bytes += ct.tl_bytes;
			tot->tl_dropped += ct.tl_dropped;
			tot->tl_filtered += ct.tl_filtered;
		}
		tot->calls += ct.calls;
		tot->events += ct.events;
		tot->lost += ct.lost_events;
		os_lost += ct.os_lost;
		tot->nodes += ct.nodes;
		tot->threads++;
		ALLOC_GROW(tot->tids, tot->ntids + 1, tot->atids);
		tot->tids[tot->ntids++] = (uint64_t)h->pid << 32 | t.tid;
		if (ct.last_ns > last_ns)
			last_ns = ct.last_ns;
	}
	free(offs);
	if (fd >= 0)
		close(fd);
	if (ret)
		return ret;
	if (lost) {
		struct sc_rec_lost lr = { SC_LOST_EVENTS, im->proc_id, lost };
		ret = sc_writer_add(w, SC_REC_LOST, &lr, sizeof(lr));
		tot->lost += lost;
	}
	if (!ret && os_lost) {
		struct sc_rec_lost lr = { SC_LOST_OS_RECORDS, im->proc_id, os_lost };
		ret = sc_writer_add(w, SC_REC_LOST, &lr, sizeof(lr));
	}
	if (!ret && h->patch_unhooked) {
		struct sc_rec_lost lr = { SC_LOST_UNHOOKED, im->proc_id, h->patch_unhooked };
		ret = sc_writer_add(w, SC_REC_LOST, &lr, sizeof(lr));
	}
	for (i = 0; !ret && i < h->npatched && i < SC_SHM_MAX_PATCHED; i++) {
		const struct sc_shm_patched *o = &h->patched[i];
		struct sc_rec_patched pr2 = { 0 };

		if (!o->valid || o->build_id_len > sizeof(o->build_id))
			continue;
		pr2.proc_id = im->proc_id;
		pr2.build_id_len = o->build_id_len;
		memcpy(pr2.build_id, o->build_id, sizeof(pr2.build_id));
		pr2.patched = o->patched;
		memcpy(pr2.unpatched, o->unpatched, sizeof(pr2.unpatched));
		pr2.base = o->base;
		pr2.patch_ns = o->patch_ns;
		ret = sc_writer_add(w, SC_REC_PATCHED, &pr2, sizeof(pr2));
	}
	for (i = 0; !ret && i < h->nunrec && i < SC_SHM_MAX_UNREC; i++) {
		const struct sc_shm_unrec *u = &h->unrec[i];
		struct sc_rec_unrecorded ur = { .proc_id = im->proc_id, .pid = u->pid, .reason = u->why };
		struct unrec *t;

		if (!__atomic_load_n(&u->valid, __ATOMIC_ACQUIRE) || u->why == SC_EXEC_OK || u->why >= SC_EXEC_NWHY)
			continue;
		ALLOC_GROW(tot->unrec, tot->nunrec + 1, tot->aunrec);
		t = &tot->unrec[tot->nunrec++];
		t->pid = u->pid;
		t->why = u->why;
		memcpy(t->path, u->path, sizeof(t->path));
		t->path[sizeof(t->path) - 1] = 0;
		ret = sc_writer_add2(w, SC_REC_UNRECORDED, &ur, sizeof(ur), t->path, strlen(t->path) + 1);
	}
	tot->unrec_lost += h->unrec_lost;
	tot->os_opened |= h->os_opened;
	tot->os_failed |= h->os_failed;
	tot->samp_state |= h->samp_state;
	tot->why |= h->lost_why;
	for (i = 0; i < ARRAY_SIZE(tot->why_procs); i++)
		if (h->lost_why & (1u << i))
			tot->why_procs[i]++;
	if (h->fd_base > tot->fd_base)
		tot->fd_base = h->fd_base;
	return ret;
}

/* ---- what the recorder says -------------------------------------------- */

static const char *plural(uint64_t n, const char *one, const char *many)
{
	return n == 1 ? one : many;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The distinct values of v[n] (sorted in place). */
static uint64_t count_distinct(uint64_t *v, size_t n)
{
	uint64_t d = 0;

	qsort(v, n, sizeof(*v), cmp_u64);
	for (size_t i = 0; i < n; i++)
		d += !i || v[i] != v[i - 1];
	return d;
}

/* Processes by pid: an exec is another image of the same process. */
static int count_processes(const struct image *ims, int nims)
{
	uint64_t *pids = xcalloc((size_t)nims + 1, sizeof(*pids));
	int procs;

	for (int i = 0; i < nims; i++)
		pids[i] = ims[i].hdr->pid;
	procs = (int)count_distinct(pids, (size_t)nims);
	free(pids);
	return procs;
}

/* The last line, as sampling's: "stackclock: 21 calls (42 events, 0 lost), ...". */
static void print_summary(const char *output, struct totals *tot, int procs, int nims)
{
	struct stat sb;
	/* threads by (pid, tid): an exec goes on in the thread that made it */
	uint64_t threads = count_distinct(tot->tids, tot->ntids);

	fprintf(stderr, "stackclock: %llu %s (%llu events, %llu lost), %llu %s in %d %s",
		(unsigned long long)tot->calls, plural(tot->calls, "call", "calls"),
		(unsigned long long)tot->events, (unsigned long long)tot->lost,
		(unsigned long long)threads, plural(threads, "thread", "threads"),
		procs, plural((uint64_t)procs, "process", "processes"));
	if (nims > procs)
		fprintf(stderr, " (%d images: execs)", nims);
	if (!stat(output, &sb) && S_ISREG(sb.st_mode))
		fprintf(stderr, "; %s (%lld KB)\n", output, (long long)(sb.st_size + 1023) / 1024);
	else
		fprintf(stderr, "; %s\n", output);
	if (tot->timeline) {
		fprintf(stderr, "stackclock: timeline: %.1f MB of events in order (%.2f bytes a call before "
			"compression)", (double)tot->tl_bytes / 1e6,
			tot->calls ? (double)tot->tl_bytes / (double)tot->calls : 0.0);
		if (tot->tl_filtered)
			fprintf(stderr, ", %llu calls left out by --min-time/--depth/--only",
				(unsigned long long)tot->tl_filtered);
		if (tot->tl_dropped)
			fprintf(stderr, ", %llu DROPPED: the --timeline size was reached in some process "
				"(raise it with --timeline=SIZE)", (unsigned long long)tot->tl_dropped);
		fputc('\n', stderr);
	}
}

/*
 * A line on the terminal, rewritten every PROGRESS_MS while the target
 * runs: the time so far, the process images made and the memory their
 * profiles take (the shared memory files: the probes keep no count the
 * recorder could read without walking their trees).  Only when stderr is
 * a terminal; a thread of its own, as the recorder sleeps in waitpid().
 */
#define PROGRESS_MS 2000

struct progress {
	pthread_t thread;
	int stop[2];              /* closing stop[1] ends the thread */
	bool running;
	bool shown;               /* a line is on the terminal */
	const char *dir, *stem, *prog;
	uint64_t t0;
};

static int progress_line(char *buf, size_t len, const char *prog, double secs,
			 unsigned procs, uint64_t bytes)
{
	unsigned s = (unsigned)secs;

	return snprintf(buf, len, "stackclock: recording '%s': %u:%02u elapsed, %u %s, "
			"%.1f MB of profile so far", prog, s / 60, s % 60, procs,
			plural(procs, "process", "processes"), (double)bytes / 1e6);
}

static void *progress_run(void *arg)
{
	struct progress *p = arg;
	struct pollfd pfd = { .fd = p->stop[0], .events = POLLIN };
	char line[512];

	while (poll(&pfd, 1, PROGRESS_MS) == 0) {
		size_t len = strlen(p->stem);
		uint64_t bytes = 0;
		unsigned procs = 0;
		struct dirent *de;
		DIR *d = opendir(p->dir);

		while (d && (de = readdir(d))) {
			struct stat st;

			/* empty: the image file a process made ahead for a child
			 * (runtime/image.c, spare_make), not a process yet */
			if (strncmp(de->d_name, p->stem, len) || de->d_name[len] != '.' ||
			    fstatat(dirfd(d), de->d_name, &st, 0) || !st.st_size)
				continue;
			procs++;
			bytes += (uint64_t)st.st_blocks * 512;
		}
		if (d)
			closedir(d);
		progress_line(line, sizeof(line), p->prog, (double)(now_ns() - p->t0) / 1e9,
			      procs, bytes);
		fprintf(stderr, "\r%s\033[K", line);
		p->shown = true;
	}
	return NULL;
}

static void progress_start(struct progress *p, const char *dir, const char *stem, const char *prog)
{
	*p = (struct progress){ .dir = dir, .stem = stem, .prog = prog, .t0 = now_ns() };
	if (!isatty(STDERR_FILENO) || pipe2(p->stop, O_CLOEXEC))
		return;
	p->running = !pthread_create(&p->thread, NULL, progress_run, p);
	if (!p->running) {
		close(p->stop[0]);
		close(p->stop[1]);
	}
}

/* End the thread, and take its line off the terminal. */
static void progress_stop(struct progress *p)
{
	if (!p->running)
		return;
	close(p->stop[1]);
	pthread_join(p->thread, NULL);
	close(p->stop[0]);
	p->running = false;
	if (p->shown)
		fputs("\r\033[K", stderr);
}

/*
 * The recording was stopped by a signal (the user's, or timeout(1)'s):
 * say what is true of the processes then.  Those the signal ended may not
 * be reaped yet: they are given STOP_GRACE_MS.  Still running after that:
 * a daemon that left the process group, or a process that ignores the
 * signal; they are named.  Otherwise, how many images did not end on their
 * own (no exit seen, and no exec into a later image): their profiles stop
 * at the signal.
 */
#define STOP_GRACE_MS 500

static void explain_stop(const char *prog, int sig, const struct image *ims, int nims)
{
	int kids[64], n, alive = 0, detached = 0, unfinished = 0;
	char pids[160] = "";
	size_t pl = 0;

	for (int t = 0; t < STOP_GRACE_MS / 20; t++) {
		while (waitpid(-1, NULL, WNOHANG) > 0)
			;
		n = proc_children((int)getpid(), kids, (int)ARRAY_SIZE(kids));
		alive = 0;
		for (int i = 0; i < n && i < (int)ARRAY_SIZE(kids); i++)
			alive += proc_running(kids[i]);
		if (!alive)
			break;
		usleep(20000);
	}
	if (alive) {
		n = proc_children((int)getpid(), kids, (int)ARRAY_SIZE(kids));
		alive = 0;
		for (int i = 0; i < n && i < (int)ARRAY_SIZE(kids); i++) {
			if (!proc_running(kids[i]))
				continue;
			alive++;
			detached += getpgid(kids[i]) != getpgrp() && getsid(kids[i]) != getsid(0);
			if (pl < sizeof(pids) - 16)
				pl += (size_t)snprintf(pids + pl, sizeof(pids) - pl, "%s%d", pl ? " " : "",
						       kids[i]);
		}
	}
	if (alive) {
		pr_warn("stopped by %s: %d process%s of '%s'%s still run%s, unrecorded from here "
			"(pid %s; stop them yourself with kill)", strsignal(sig), alive,
			alive == 1 ? "" : "es", prog,
			detached == alive ? " that left its process group (daemons)" : "",
			alive == 1 ? "s" : "", pids);
		return;
	}
	for (int i = 0; i < nims; i++) {
		bool exec_later = false;

		for (int j = i + 1; j < nims && !exec_later; j++)
			exec_later = ims[j].hdr->pid == ims[i].hdr->pid;
		unfinished += !(ims[i].hdr->flags & SC_SHM_ENDED) && !exec_later;
	}
	if (unfinished)
		pr_warn("stopped by %s: no process of '%s' still runs; %d of its %d had not ended on "
			"their own, and their profiles end at the stop", strsignal(sig), prog, unfinished,
			nims);
}

/* ---- the driver -------------------------------------------------------- */

static struct launch_stop stop;

/* SIGINT/SIGTERM: the wait forwards the first and gives up at the second;
 * a third one ends the recorder (default action restored). */
static void on_signal(int sig, siginfo_t *si, void *uc)
{
	struct sigaction dfl;

	(void)uc;
	stop.sig = sig;
	stop.to_us_only = si && si->si_code == SI_USER;
	if (++stop.count >= 2) {
		memset(&dfl, 0, sizeof(dfl));
		dfl.sa_handler = SIG_DFL;
		sigaction(SIGINT, &dfl, NULL);
		sigaction(SIGTERM, &dfl, NULL);
	}
}

/*
 * The private directories shm_dir() made in base for recorders that were
 * killed before they could remove them ("stackclock-shm-PID-XXXXXX", PID
 * gone): removed with the image files in them.
 */
static void unlink_matching(const char *dir, bool (*doom)(const char *name, const void *arg),
			    const void *arg);

static bool is_stale_fallback(const char *name, const void *arg)
{
	int pid;

	(void)arg;
	return sscanf(name, "stackclock-shm-%d-", &pid) == 1 && pid > 0 && kill(pid, 0) && errno == ESRCH;
}

static void remove_stale_dirs(const char *base)
{
	unlink_matching(base, is_stale_fallback, NULL);
}

/*
 * The directory of the image files: STACKCLOCK_SHM_DIR, else /dev/shm,
 * if shm_dir_check() accepts it; else a private directory made under
 * $XDG_RUNTIME_DIR or /tmp (*made set: the caller removes it), the user
 * told in one line.  NULL, with one line of error, if none will do.
 */
static char *shm_dir(bool *made)
{
	const char *env = getenv("STACKCLOCK_SHM_DIR"), *want = env && *env ? env : "/dev/shm";
	const char *bases[] = { getenv("XDG_RUNTIME_DIR"), "/tmp" };
	char *d, *why = NULL, *more;
	int err, first;
	size_t i;

	*made = false;
	first = shm_dir_check(want);
	if (!first)
		return xstrdup(want);
	why = xasprintf("%s: %s", want, strerror(-first));
	for (i = 0; i < sizeof(bases) / sizeof(bases[0]); i++) {
		if (!bases[i] || bases[i][0] != '/')
			continue;
		remove_stale_dirs(bases[i]);
		d = xasprintf("%s/stackclock-shm-%d-XXXXXX", bases[i], (int)getpid());
		if (!mkdtemp(d)) {
			more = xasprintf("%s; %s: %s", why, bases[i], strerror(errno));
		} else if (geteuid() == 0 && chmod(d, 0711)) {
			/* (root's: processes of other users reach the session's
			 * directory in it) */
			more = xasprintf("%s; %s: %s", why, d, strerror(errno));
			rmdir(d);
		} else if ((err = shm_dir_check(d))) {
			rmdir(d);
			more = xasprintf("%s; %s: %s", why, bases[i], strerror(-err));
		} else {
			pr_warn("%s cannot hold the runtime's shared memory (%s): recording with %s instead",
				want, strerror(-first), d);
			free(why);
			*made = true;
			return d;
		}
		free(d);
		free(why);
		why = more;
	}
	pr_err("no directory can hold the runtime's shared memory (%s): free %u KiB in one, or set "
	       "STACKCLOCK_SHM_DIR to a writable tmpfs", why, SHM_PROBE_SIZE / 1024);
	free(why);
	return NULL;
}

/*
 * Map every image file of this session, oldest first; *n images.  The
 * runtime's marks of images it could not make ("<stem>.<pid>.E<errno>",
 * runtime/image.c) are counted in *failed, the last one's error in
 * *fail_err.
 */
static struct image *collect_images(const char *dir, const char *stem, int *n, uint32_t *failed,
				    int *fail_err)
{
	struct image *ims = NULL;
	size_t alloc = 0, len = strlen(stem);
	struct dirent *de;
	DIR *d = opendir(dir);

	*n = 0;
	if (!d)
		return NULL;
	while ((de = readdir(d))) {
		struct image im;
		const char *dot;

		if (strncmp(de->d_name, stem, len) || de->d_name[len] != '.')
			continue;
		dot = strrchr(de->d_name, '.');
		if (dot && dot[1] == 'E') {
			(*failed)++;
			*fail_err = atoi(dot + 2);
			continue;            /* removed with the images */
		}
		if (image_map(dir, de->d_name, &im)) {
			char path[PATH_MAX];
			snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
			unlink(path);
			continue;
		}
		im.seq = dot ? strtoull(dot + 1, NULL, 10) : 0;
		ALLOC_GROW(ims, (size_t)*n + 1, alloc);
		ims[(*n)++] = im;
	}
	closedir(d);
	if (*n > 1)
		qsort(ims, (size_t)*n, sizeof(*ims), cmp_image);
	return ims;
}

/*
 * Empty the directory open as dfd (depth levels of directories at most: a
 * fallback directory holds a session's), by descriptor, never following a
 * link; only directories of ours are entered.
 */
static void empty_dir(int dfd, int depth)
{
	DIR *d = fdopendir(dfd);
	struct dirent *e;

	if (!d) {
		close(dfd);
		return;
	}
	while ((e = readdir(d))) {
		struct stat st;
		int sub;

		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") ||
		    fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW))
			continue;
		if (!S_ISDIR(st.st_mode)) {
			unlinkat(dirfd(d), e->d_name, 0);
			continue;
		}
		if (depth <= 0 || st.st_uid != geteuid())
			continue;
		sub = openat(dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (sub >= 0) {
			empty_dir(sub, depth - 1);
			unlinkat(dirfd(d), e->d_name, AT_REMOVEDIR);
		}
	}
	closedir(d);
}

/*
 * Unlink every file of dir whose name doom() accepts; a directory so named
 * (a session's, session_dir, or a fallback's, shm_dir) is emptied and
 * removed when it is ours: everything by descriptor, never following a
 * link someone put there.
 */
static void unlink_matching(const char *dir, bool (*doom)(const char *name, const void *arg),
			    const void *arg)
{
	struct dirent *de;
	DIR *d = opendir(dir);

	if (!d)
		return;
	while ((de = readdir(d))) {
		struct stat st;
		int fd;

		if (!doom(de->d_name, arg) || fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW))
			continue;
		if (!S_ISDIR(st.st_mode)) {
			unlinkat(dirfd(d), de->d_name, 0);
			continue;
		}
		if (st.st_uid != geteuid())      /* a stale one of ours only */
			continue;
		fd = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			continue;
		empty_dir(fd, 1);
		unlinkat(dirfd(d), de->d_name, AT_REMOVEDIR);
	}
	closedir(d);
}

/*
 * The session's own directory in the shared memory directory: the images,
 * and when attaching, the files the runtime reads, are made in it.  Made
 * by mkdtemp (0700, a name no one chose before), so no one else can plant
 * a link or an image there.  When attaching to a process of another user
 * (whose runtime writes in it), or launched by root (the program may drop
 * its privileges, as a daemon's workers do, and still make images after
 * that: a fork, an exec), it is 1733 and stays ours, as /dev/shm
 * itself is but no one else can list it, and the images' names start
 * with a stem no one else sees (64 bits of the clock); images are created
 * O_EXCL and read without following links.  NULL after a one-line error.
 */
static char *session_dir(const char *shm, pid_t attach_pid)
{
	char *priv = xasprintf("%s/stackclock-%d-XXXXXX", shm, (int)getpid());
	uid_t uid;
	gid_t gid;
	bool other;

	if (!mkdtemp(priv)) {
		pr_err("cannot create the session's directory in %s: %s (set STACKCLOCK_SHM_DIR to a "
		       "writable tmpfs)", shm, strerror(errno));
		free(priv);
		return NULL;
	}
	/* others must make files in it: a process of another user we attach
	 * to, or one that drops root after we launched it; the directory
	 * stays ours (never given away: we work in it by name, and its owner
	 * could put a link in its place), sticky, and unlistable */
	other = attach_pid > 0 ? !proc_owner(attach_pid, &uid, &gid) && (uid != geteuid() || gid != getegid())
			       : geteuid() == 0;
	if (other && chmod(priv, 01733)) {
		pr_err("cannot set the mode of the session's directory %s: %s", priv, strerror(errno));
		rmdir(priv);
		free(priv);
		return NULL;
	}
	return priv;
}

/* A file of a recorder that was killed before it could clean up. */
static bool is_stale(const char *name, const void *arg)
{
	int pid;

	return sscanf(name, "stackclock-%d-", &pid) == 1 && pid > 0 &&
	       kill(pid, 0) && errno == ESRCH;
}

/* An image file of this session: "<stem>.<n>". */
static bool is_image_of(const char *name, const void *stem)
{
	size_t len = strlen(stem);

	return !strncmp(name, stem, len) && name[len] == '.';
}

/* The data file could not be created or written (a bad -o path, a full disk). */
static void data_file_error(const char *path, int err)
{
	pr_err("cannot write the data file '%s': %s (free some space on its disk, "
	       "or choose another file with -o FILE)", path, outfile_strerror(err));
}

static int write_session(const struct record_opts *opts, struct image *ims, int nims,
			 const struct sc_tick_conv *conv, uint64_t start_real, uint64_t duration_ns,
			 int status, pid_t target, struct totals *tot, const struct sc_rec_probe_cost *pc)
{
	struct sc_writer *w;
	struct sc_rec_session s = { 0 };
	struct sc_rec_session_end e = { 0 };
	size_t argl = 0;
	char *args, *p;
	int i, ret;

	ret = sc_writer_open(opts->output, SC_FEAT_INSTRUMENT, &w);
	if (ret) {
		data_file_error(opts->output, ret);
		return ret;
	}
	for (i = 0; i < opts->argc; i++)
		argl += strlen(opts->argv[i]) + 1;
	args = p = xmalloc(argl + 1);
	for (i = 0; i < opts->argc; i++) {
		size_t l = strlen(opts->argv[i]) + 1;
		memcpy(p, opts->argv[i], l);
		p += l;
	}
	s.method = SC_METHOD_INSTRUMENT;
	s.frequency_hz = opts->frequency_hz;
	s.os_requested = opts->os_events;
	s.start_realtime_ns = start_real;
	s.argc = (uint32_t)opts->argc;
	s.target_pid = (uint32_t)target;
	if (opts->attach_pid)
		s.flags |= SC_SESS_ATTACHED;
	ret = sc_writer_add2(w, SC_REC_SESSION, &s, sizeof(s), args, argl);
	free(args);
	if (!ret && pc->samples)
		ret = sc_writer_add(w, SC_REC_PROBE_COST, pc, sizeof(*pc));
	for (i = 0; !ret && i < nims; i++)
		ret = emit_image(w, &ims[i], conv, tot);
	if (!ret) {
		e.duration_ns = duration_ns;
		e.exit_status = status;
		e.os_observed = nims ? (tot->os_opened & ~tot->os_failed & opts->os_events) : 0;
		e.lost_events = tot->lost;
		ret = sc_writer_add(w, SC_REC_SESSION_END, &e, sizeof(e));
	}
	if (ret) {
		data_file_error(opts->output, ret);
		sc_writer_discard(w);
		return ret;
	}
	ret = sc_writer_close(w);
	if (ret)
		data_file_error(opts->output, ret);
	return ret;
}

/* What attaching took and left (SPEC section 13). */
static void attach_summary(pid_t pid, const struct record_attach_times *a)
{
	if (a->target_ended) {
		fprintf(stderr, "stackclock: process %d ended while attached: its profile up to its end is "
			"recorded\n", (int)pid);
	} else {
		fprintf(stderr, "stackclock: attached to process %d in %.1f ms (%" PRIu64 " code sites, %" PRIu64
			" GOT slots; %.1f ms with its threads stopped); detached in %.1f ms (%" PRIu64
			" sites and %" PRIu64 " return addresses put back)\n",
			(int)pid, (double)a->attach_ns / 1e6, a->sites, a->got_slots, (double)a->held_ns / 1e6,
			(double)a->detach_ns / 1e6, a->sites_restored, a->frames_restored);
	}
	if (a->seed_frames)
		fprintf(stderr, "stackclock: %" PRIu64 " calls were running at the attach in %" PRIu64
			" thread%s: counted from each thread's first event%s (their frames open at the start)\n",
			a->seed_frames, a->seed_threads, a->seed_threads == 1 ? "" : "s",
			a->seed_partial ? ", except frames beyond a stack that could not be unwound" : "");
}

static void report_status(const char *prog, int status)
{
	if (status == -1)
		return;
	if (WIFEXITED(status) && WEXITSTATUS(status))
		pr_warn("'%s' exited with status %d (its profile is recorded)", prog, WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		pr_warn("'%s' was killed by signal %d (%s); its profile up to then is recorded",
			prog, WTERMSIG(status), strsignal(WTERMSIG(status)));
}

int record_instrument(const struct record_opts *opts)
{
	char prog[PATH_MAX], runtime[PATH_MAX], stem[64], tp[64], asan[128];
	char *env[22] = { NULL }, *dir = NULL, *shm = NULL, *only = NULL, *patch_env[3] = { NULL, NULL, NULL }, self[PATH_MAX], *cache;
	struct sc_rec_probe_cost pc = { 0 };
	uint32_t cost[5] = { 0 };
	const char *old_preload = getenv("LD_PRELOAD");
	struct sigaction sa, old_int, old_term;
	struct clock_pair c0, c1;
	struct sc_tick_conv conv;
	struct image *ims = NULL;
	struct totals tot = { .timeline = opts->timeline };
	struct launch l;
	uint64_t tp_enter, tp_exit, start_real;
	struct timespec rt;
	double rate;
	int ret, status = -1, nims = 0, nprocs = 0, i, rc = RECORD_EXIT_FAILED, tp_hold, left = 0, has_hooks;
	bool dir_made = false;     /* dir is a private one of ours (shm_dir) */
	struct progress prog_line = { 0 };
	struct record_attach_times att = { 0 };
	const bool attach = opts->attach_pid > 0;
	struct record_opts o = *opts;
	char *attach_argv[2] = { NULL, NULL }, *prefix = NULL;
	const char *name = opts->argv ? opts->argv[0] : NULL;
	enum sc_exec_why why;

	if (attach) {
		if (record_attach_exe(opts->attach_pid, prog, sizeof(prog)))
			return RECORD_EXIT_FAILED;
		attach_argv[0] = prog;
		name = prog;
		o.argv = attach_argv;
		o.argc = 1;
		opts = &o;
	} else {
		ret = record_find_program(opts->argv[0], prog, sizeof(prog));
		if (ret)
			return launch_report_exec_error(opts->argv[0], -ret);
	}
	/* built without hooks: patched at run time (patchenv.c), and so are
	 * the libraries --patch names */
	has_hooks = record_elf_has_hooks(prog);
	if ((has_hooks == 0 || opts->patch) &&
	    record_patch_env(prog, name, has_hooks == 0, opts->patch, &patch_env[0],
			     &patch_env[1], &patch_env[2]))
		return RECORD_EXIT_FAILED;
	if (opts->timeline && opts->tl_only && !(only = only_addrs(prog, name, opts->tl_only))) {
		free(patch_env[0]);
		free(patch_env[1]);
		free(patch_env[2]);
		return RECORD_EXIT_FAILED;
	}
	why = record_exec_why(prog);
	if (why == SC_EXEC_SETID && attach)
		why = SC_EXEC_OK;          /* running already: its credentials are set */
	if (why != SC_EXEC_OK) {
		pr_err("'%s' cannot be recorded by instrumentation: %s: %s", name, sc_exec_why_text(why),
		       sc_exec_why_hint(why));
		free(patch_env[0]);
		free(patch_env[1]);
		free(patch_env[2]);
		free(only);
		return RECORD_EXIT_FAILED;
	}
	if (find_runtime(runtime, sizeof(runtime))) {
		pr_err("cannot find the runtime %s (build it with 'make', or set STACKCLOCK_RUNTIME)",
		       runtime);
		free(patch_env[0]);
		free(patch_env[1]);
		free(patch_env[2]);
		return RECORD_EXIT_FAILED;
	}
	shm = shm_dir(&dir_made);
	if (shm) {
		unlink_matching(shm, is_stale, NULL);
		dir = session_dir(shm, attach ? opts->attach_pid : 0);
	}
	if (!dir) {
		if (shm && dir_made)
			rmdir(shm);
		free(shm);
		free(patch_env[0]);
		free(patch_env[1]);
		free(patch_env[2]);
		free(only);
		return RECORD_EXIT_FAILED;
	}
	syscall_tracepoints(&tp_enter, &tp_exit);
	tp_hold = hold_tracepoints(tp_enter, tp_exit);
	snprintf(stem, sizeof(stem), "stackclock-%d-%lx", (int)getpid(), (unsigned long)now_ns());
	/* first in the list, as ASan insists; elf_asan_runtime leaves room */
	if (elf_asan_runtime(prog, asan, sizeof(asan) - 1)) {
		size_t n = strlen(asan);

		asan[n] = ':';
		asan[n + 1] = 0;
	} else {
		asan[0] = 0;
	}
	env[0] = xasprintf("LD_PRELOAD=%s%s%s%s", asan, runtime, old_preload && *old_preload ? ":" : "",
			   old_preload ? old_preload : "");
	env[1] = xasprintf("%s=%s/%s", SC_SHM_ENV_PREFIX, dir, stem);
	prefix = xasprintf("%s/%s", dir, stem);
	env[2] = xasprintf("%s=%u", SC_SHM_ENV_OS, opts->os_events);
	snprintf(tp, sizeof(tp), "%lu,%lu", (unsigned long)tp_enter, (unsigned long)tp_exit);
	c0 = clock_pair_now();
	env[3] = xasprintf("%s=%lu,%lu", SC_SHM_ENV_CLOCK0, (unsigned long)c0.tsc, (unsigned long)c0.ns);
	i = 4;
	/* the user's own, which the runtime puts back (runtime/exec.c) */
	if (old_preload)
		env[i++] = xasprintf("STACKCLOCK_PRELOAD0=%s", old_preload);
	if (tp_enter)
		env[i++] = xasprintf("%s=%s", SC_SHM_ENV_TP, tp);
	if (opts->frequency_hz)
		env[i++] = xasprintf("%s=%u", SC_SHM_ENV_SAMPLE_HZ, opts->frequency_hz);
	env[i++] = xasprintf("%s=%s", SC_LIBCALL_ENV, opts->libcalls ? opts->libcalls : "program");
	if (opts->timeline) {
		env[i++] = xasprintf("%s=%" PRIu64 ",%" PRIu64 ",%u", SC_SHM_ENV_TIMELINE, opts->tl_size,
				     opts->tl_min_ns, opts->tl_depth);
		if (only)
			env[i++] = xasprintf("%s=%s", SC_SHM_ENV_TL_ONLY, only);
	}
	if (patch_env[0])
		env[i++] = patch_env[0];
	if (patch_env[1])
		env[i++] = patch_env[1];
	if (patch_env[2])
		env[i++] = patch_env[2];
	/* programs exec'd later (a wrapper's interpreter, what it runs) are
	 * planned on request by this binary (runtime/patch.h) */
	ret = (int)readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (ret > 0) {
		self[ret] = 0;
		cache = dsc_cache_root();
		env[i++] = xasprintf("%s=%s", SC_PATCH_ENV_PLANNER, self);
		env[i++] = xasprintf("%s=%s", SC_PATCH_ENV_CACHE, cache);
		free(cache);
	}
	/* the cost of the compiled-in hooks, or, for a program patched at run
	 * time (or a script: what it runs mostly is), of the patched probes,
	 * which cost more (docs/accuracy.md) */
	if (has_hooks != 1)
		pc.flags |= SC_PROBE_COST_PATCHED;
	if (!calibrate_median(runtime, has_hooks != 1, cost, &pc.samples))
		env[i++] = xasprintf("%s=%u,%u,%u,%u,%u", SC_SHM_ENV_COST, cost[0], cost[1], cost[2], cost[3],
				     cost[4]);
	else
		pr_warn("could not measure the probes' cost: times include it (see 'stackclock report --raw-times')");

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_signal;  /* no SA_RESTART: the wait must see it */
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);

	/* the session starts here, after the calibration (on a loaded
	 * machine it took long enough to pass a fifth of a short run's
	 * duration, which the session's EI is checked against) */
	c0 = clock_pair_now();
	free(env[3]);
	env[3] = xasprintf("%s=%lu,%lu", SC_SHM_ENV_CLOCK0, (unsigned long)c0.tsc, (unsigned long)c0.ns);
	clock_gettime(CLOCK_REALTIME, &rt);
	start_real = (uint64_t)rt.tv_sec * 1000000000u + (uint64_t)rt.tv_nsec;
	if (attach) {
		progress_start(&prog_line, dir, stem, name);
		ret = record_attach_run(opts, runtime, prefix, env, has_hooks, &stop, &att);
		progress_stop(&prog_line);
		if (ret) {
			unlink_matching(dir, is_image_of, stem);
			goto out;
		}
		l.pid = opts->attach_pid;
		goto recorded;
	}
	/*
	 * A signal ignored when we started (a script's background job, nohup)
	 * is ignored in the target too, as without us: the child is made with
	 * it ignored, which exec keeps (a handler of ours would be reset to
	 * the default there, and Ctrl-C would end a program that ignores it).
	 * We keep our handler: a SIGINT sent to us still stops the recording.
	 */
	if (old_int.sa_handler == SIG_IGN)
		sigaction(SIGINT, &old_int, NULL);
	if (old_term.sa_handler == SIG_IGN)
		sigaction(SIGTERM, &old_term, NULL);
	ret = launch_prepare(&l, opts->argv, env);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	if (ret) {
		pr_err("cannot start '%s': %s (fork or pipe failed: free memory, raise "
		       "'ulimit -u' or 'ulimit -n', then retry)", name, strerror(-ret));
		goto out;
	}
	ret = launch_go(&l);
	if (ret) {
		rc = launch_report_exec_error(name, -ret);
		unlink_matching(dir, is_image_of, stem);
		goto out;
	}
	progress_start(&prog_line, dir, stem, name);
	ret = launch_wait_all(&l, &status, &stop, &left);
	progress_stop(&prog_line);
	if (ret)
		pr_warn("waiting for '%s': %s", name, strerror(-ret));
recorded:
	c1 = clock_pair_now();

	rate = kernel_ns_per_tick();
	if (rate <= 0 && c1.tsc > c0.tsc)
		rate = (double)(c1.ns - c0.ns) / (double)(c1.tsc - c0.tsc);
	conv.tick0 = c0.tsc;
	conv.ns0 = c0.ns;
	conv.ns_per_tick = rate > 0 ? rate : 1.0;

	ims = collect_images(dir, stem, &nims, &tot.img_failed, &tot.img_err);
	link_parents(ims, nims);
	report_status(name, status);
	if (stop.count && !attach)
		explain_stop(name, stop.sig, ims, nims);
	if (!nims && !tot.img_failed)
		explain_no_image(name, shm);
	/* under 'ulimit -f' a write past the limit fails (EFBIG, reported)
	 * instead of killing us; the target has its own disposition */
	signal(SIGXFSZ, SIG_IGN);
	for (i = 0; i < 4; i++)
		pc.cost_ps[i] = (uint64_t)llround((double)cost[i] * conv.ns_per_tick * 1000.0);
	pc.enter_exit_work_ps = (uint64_t)llround((double)cost[4] * conv.ns_per_tick * 1000.0);
	if (attach && att.window_ns) {
		start_real = att.window_real_ns;     /* the window the probes were in */
		ret = write_session(opts, ims, nims, &conv, start_real, att.window_ns, status, l.pid, &tot, &pc);
	} else {
		ret = write_session(opts, ims, nims, &conv, start_real, c1.ns - c0.ns, status, l.pid, &tot, &pc);
	}
	signal(SIGXFSZ, SIG_DFL);
	explain_losses(&tot, shm);
	nprocs = count_processes(ims, nims);    /* (the headers are in the images) */
	for (i = 0; i < nims; i++)
		munmap((void *)ims[i].base, ims[i].len);
	unlink_matching(dir, is_image_of, stem);
	if (!ret) {
		/* told twice to stop before the target ended: as a shell would say */
		rc = attach ? 0 : status == -1 && stop.count ? 128 + stop.sig : record_exit_status(status);
		print_summary(opts->output, &tot, nprocs, nims);
		if (attach)
			attach_summary(opts->attach_pid, &att);
	}
out:
	if (tp_hold >= 0)
		close(tp_hold);
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	free(ims);
	free(tot.tids);
	free(tot.unrec);
	for (i = 0; i < (int)(sizeof(env) / sizeof(env[0])); i++)
		free(env[i]);
	if (dir) {
		unlink_matching(dir, is_image_of, stem);
		rmdir(dir);
	}
	if (dir_made)
		rmdir(shm);          /* the fallback made for this session (shm_dir) */
	free(shm);
	free(dir);
	free(only);
	free(prefix);
	return rc;
}
