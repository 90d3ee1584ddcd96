/*
 * The instrumentation recorder and its runtime on real programs: builds
 * tests/progs/inst_basic.c (and inst_lib.c) with -finstrument-functions,
 * records each mode with `stackclock record -m instrument` and checks the
 * data file's records directly (reader of src/format): exact call counts
 * per thread, threads and their names, SIGKILL, fork, exec, dlopen'ed
 * modules, deep stacks, many call paths, unbalanced stacks, OS events, the
 * target's own output, and refusals.  Function addresses come from the
 * program itself ($INST_ADDRS), so nothing here depends on symbolization.
 *
 * Needs gcc; $STACKCLOCK (default build/stackclock) and tests/progs relative
 * to the working directory, as tests/run.sh runs it.
 */
#include "format/scdata.h"
#include "tap.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char tmp[] = "/tmp/sc-test-runtime-XXXXXX";
static const char *sc;
static char progs[1100];

struct addr {
	char name[32];
	uint64_t addr;
	uint32_t pid;
};

struct rec {
	struct sc_rec_session_end end;
	int have_end;
	struct sc_rec_process proc[16];
	char exe[16][256];
	int nproc;
	struct sc_rec_thread thr[80];
	char tname[80][32];
	int nthr;
	struct sc_rec_thread_stats st[80];
	int nst;
	struct sc_rec_module mod[64];
	char mpath[64][256];
	int nmod;
	struct sc_rec_cct_node *node;
	int nnode, anode;
	int ncallsite;
	struct addr addrs[128];
	int naddr;
};

static char *path(const char *name)
{
	static char buf[8][1024];
	static int i;
	char *p = buf[i++ % 8];

	snprintf(p, sizeof(buf[0]), "%s/%s", tmp, name);
	return p;
}

static int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int sh(const char *fmt, ...)
{
	char cmd[4096];
	va_list ap;
	int st;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	st = system(cmd);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static void load_addrs(struct rec *r)
{
	FILE *f = fopen(path("addrs"), "r");
	char name[32];
	unsigned long long a;
	unsigned pid;

	r->naddr = 0;
	if (!f)
		return;
	while (r->naddr < 128 && fscanf(f, "%31s %llx %u", name, &a, &pid) == 3) {
		snprintf(r->addrs[r->naddr].name, sizeof(r->addrs[0].name), "%s", name);
		r->addrs[r->naddr].addr = a;
		r->addrs[r->naddr].pid = pid;
		r->naddr++;
	}
	fclose(f);
}

static uint64_t addr_of(const struct rec *r, const char *name)
{
	for (int i = 0; i < r->naddr; i++)
		if (!strcmp(r->addrs[i].name, name))
			return r->addrs[i].addr;
	return 0;
}

/* Record `inst_basic ARGS` into rec.data; returns record's exit status. */
static int record(const char *opts, const char *args, struct rec *r)
{
	struct sc_reader *rd;
	struct sc_record x;
	char err[256];
	int st, ret;

	free(r->node);
	memset(r, 0, sizeof(*r));
	unlink(path("addrs"));
	unlink(path("rec.data"));
	if (!strcmp(args, "nopie"))     /* the same program, position-dependent */
		st = sh("cd %s && INST_ADDRS=%s %s record -m instrument %s -o %s -- ./inst_nopie print "
			">%s 2>%s", tmp, path("addrs"), sc, opts, path("rec.data"),
			path("out"), path("err"));
	else
		st = sh("cd %s && INST_ADDRS=%s %s record -m instrument %s -o %s -- ./inst_basic %s "
			">%s 2>%s", tmp, path("addrs"), sc, opts, path("rec.data"), args,
			path("out"), path("err"));
	load_addrs(r);
	if (sc_reader_open(path("rec.data"), &rd, err, sizeof(err))) {
		printf("# %s\n", err);
		return st ? st : -1;
	}
	while ((ret = sc_reader_next(rd, &x)) == SC_READ_OK) {
		if (sc_record_check(&x))
			continue;
		switch (x.type) {
		case SC_REC_SESSION_END:
			memcpy(&r->end, x.data, sizeof(r->end));
			r->have_end = 1;
			break;
		case SC_REC_PROCESS:
			if (r->nproc < 16) {
				memcpy(&r->proc[r->nproc], x.data, sizeof(r->proc[0]));
				snprintf(r->exe[r->nproc], 256, "%s",
					 (const char *)x.data + sizeof(struct sc_rec_process));
				r->nproc++;
			}
			break;
		case SC_REC_THREAD:
			if (r->nthr < 80) {
				memcpy(&r->thr[r->nthr], x.data, sizeof(r->thr[0]));
				snprintf(r->tname[r->nthr], 32, "%s",
					 (const char *)x.data + sizeof(struct sc_rec_thread));
				r->nthr++;
			}
			break;
		case SC_REC_THREAD_STATS:
			if (r->nst < 80)
				memcpy(&r->st[r->nst++], x.data, sizeof(r->st[0]));
			break;
		case SC_REC_MODULE:
			if (r->nmod < 64) {
				memcpy(&r->mod[r->nmod], x.data, sizeof(r->mod[0]));
				snprintf(r->mpath[r->nmod], 256, "%s",
					 (const char *)x.data + sizeof(struct sc_rec_module));
				r->nmod++;
			}
			break;
		case SC_REC_CCT_NODE:
			if (r->nnode == r->anode) {
				r->anode = r->anode ? r->anode * 2 : 1024;
				r->node = realloc(r->node, r->anode * sizeof(*r->node));
			}
			memcpy(&r->node[r->nnode++], x.data, sizeof(*r->node));
			break;
		case SC_REC_CALLSITE:
			r->ncallsite++;
			break;
		default:
			break;
		}
	}
	if (ret != SC_READ_EOF)
		printf("# reading rec.data: %s\n", sc_reader_damage(rd));
	sc_reader_close(rd);
	return st;
}

/* Calls of func (all threads of images whose pid is pid, or all if 0). */
static uint64_t calls(const struct rec *r, uint64_t func, uint32_t proc_id)
{
	uint64_t n = 0;

	for (int i = 0; i < r->nnode; i++)
		if (r->node[i].func == func && (proc_id == UINT32_MAX || r->node[i].proc_id == proc_id))
			n += r->node[i].calls;
	return n;
}

static uint64_t sum_stats(const struct rec *r, size_t field_off, uint32_t proc_id)
{
	uint64_t n = 0;

	for (int i = 0; i < r->nst; i++)
		if (proc_id == UINT32_MAX || r->st[i].proc_id == proc_id)
			n += *(const uint64_t *)((const char *)&r->st[i] + field_off);
	return n;
}
#define STAT(r, f, p) sum_stats(r, offsetof(struct sc_rec_thread_stats, f), p)

/* No value can be "negative" (huge) or longer than the session. */
static int times_sane(const struct rec *r)
{
	uint64_t d = r->end.duration_ns;

	for (int i = 0; i < r->nnode; i++) {
		const struct sc_rec_cct_node *n = &r->node[i];
		if (n->elapsed_excl > d || n->app_excl > n->elapsed_excl ||
		    n->app_excl_exact > n->elapsed_excl || n->incl_max > d ||
		    n->excl_max > n->incl_max || n->completed > n->calls ||
		    n->incl_sum < n->excl_sum) {
			printf("# node %u of tid %u: ee %lu ae %lu incl_max %lu (duration %lu)\n",
			       n->id, n->tid, n->elapsed_excl, n->app_excl, n->incl_max, d);
			return 0;
		}
	}
	return 1;
}

static int file_is(const char *p, const char *want)
{
	char buf[4096];
	int fd = open(p, O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n < 0)
		return 0;
	buf[n] = 0;
	if (strcmp(buf, want))
		printf("# %s is '%s'\n", p, buf);
	return !strcmp(buf, want);
}

/* How many lines the file at p has (0 if unreadable). */
static int file_lines(const char *p)
{
	FILE *f = fopen(p, "r");
	int c, n = 0;

	if (!f)
		return 0;
	while ((c = fgetc(f)) != EOF)
		n += c == '\n';
	fclose(f);
	return n;
}

static int file_has(const char *p, const char *needle)
{
	char buf[8192];
	int fd = open(p, O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n > 0 ? n : 0] = 0;
	if (!strstr(buf, needle))
		printf("# %s: '%s'\n", p, buf);
	return strstr(buf, needle) != NULL;
}

static void test_threads(struct rec *r)
{
	uint64_t work;
	int named = 0, i;

	/* the runtime's own events only: library calls are t319's */
	is_u64(record("--libcalls=none", "threads 8 200000", r), 0, "threads: recorded");
	work = addr_of(r, "work");
	is_u64(calls(r, work, UINT32_MAX), 1600000, "8 threads x 200,000 calls: exactly 1,600,000 of work()");
	is_u64(r->nthr, 9, "9 THREAD records");
	is_u64(r->nst, 9, "9 THREAD_STATS records");
	for (i = 0; i < r->nthr; i++)
		named += !strncmp(r->tname[i], "worker-", 7);
	is_u64(named, 8, "thread names set by the program are recorded");
	for (i = 0; i < r->nst; i++) {
		uint64_t n = 0;
		for (int j = 0; j < r->nnode; j++)
			if (r->node[j].tid == r->st[i].tid && r->node[j].func == work)
				n += r->node[j].calls;
		if (n && n != 200000)
			break;
	}
	ok(i == r->nst, "each worker thread has its own 200,000 calls");
	is_u64(STAT(r, lost_events, UINT32_MAX) + r->end.lost_events, 0, "nothing lost");
	is_u64(STAT(r, repairs, UINT32_MAX), 0, "no repairs");
	/* main, 8 workers, 1,600,000 work(), 3 note() */
	is_u64(STAT(r, events, UINT32_MAX), 2 * (1600000 + 8 + 1 + 3), "events: an entry and an exit per call");
	ok(times_sane(r), "threads: times are sane");
}

static void test_kill(struct rec *r)
{
	int st = record("", "kill 50000", r);

	is_u64(st, 137, "SIGKILLed target: record exits 128 + 9 and writes the data");
	ok(file_has(path("err"), "killed by signal 9"), "the kill is reported on stderr");
	ok(r->have_end && WIFSIGNALED(r->end.exit_status) && WTERMSIG(r->end.exit_status) == 9,
	   "session end has the kill status");
	is_u64(calls(r, addr_of(r, "tick"), UINT32_MAX), 50000, "every call before the SIGKILL is kept");
	is_u64(calls(r, addr_of(r, "die_inner"), UINT32_MAX), 1, "the call that killed is kept");
	is_u64(STAT(r, open_frames, UINT32_MAX), 4,
	       "main, die_outer, die_inner and the library call to kill() are open frames");
	is_u64(STAT(r, repairs, UINT32_MAX), 0, "open frames are not repairs");
	ok(r->nproc == 1 && r->proc[0].end_ns == 0, "the killed image has no end time");
	ok(times_sane(r), "killed: times are sane");
}

/* The indexes of the first image (no parent) and of the one made from it. */
static bool two_images(const struct rec *r, int *first, int *second)
{
	*first = *second = -1;
	for (int i = 0; i < r->nproc; i++) {
		if (r->proc[i].parent_proc_id == UINT32_MAX)
			*first = i;
		else
			*second = i;
	}
	return *first >= 0 && *second >= 0;
}

static int has_node(const struct rec *r, uint64_t func, uint32_t proc)
{
	for (int i = 0; i < r->nnode; i++)
		if (r->node[i].func == func && r->node[i].proc_id == proc)
			return 1;
	return 0;
}

static void test_fork(struct rec *r)
{
	int parent, child;

	is_u64(record("", "fork", r), 0, "fork: recorded");
	is_u64(r->nproc, 2, "two process images");
	if (!ok(two_images(r, &parent, &child), "one parent, one child"))
		return;
	is_u64(r->proc[child].parent_proc_id, r->proc[parent].proc_id, "the child's parent is the parent image");
	is_u64(r->proc[child].ppid, r->proc[parent].pid, "the child's ppid is the parent's pid");
	is_u64(calls(r, addr_of(r, "child_work"), r->proc[child].proc_id), 100, "child_work() 100 times in the child");
	is_u64(calls(r, addr_of(r, "child_work"), r->proc[parent].proc_id), 0, "and never in the parent");
	is_u64(calls(r, addr_of(r, "parent_work"), r->proc[parent].proc_id), 10, "parent_work() 10 times in the parent");
	is_u64(STAT(r, repairs, r->proc[child].proc_id), 0,
	       "the child returns through inherited frames without repairs");
	is_u64(STAT(r, open_frames, UINT32_MAX), 0, "no frame left open in either");
	is_u64(calls(r, addr_of(r, "do_fork"), r->proc[child].proc_id), 0,
	       "inherited frames are not new calls in the child");
	ok(has_node(r, addr_of(r, "do_fork"), r->proc[child].proc_id),
	   "the child's stack was rebuilt (do_fork is on it)");
	ok(times_sane(r), "fork: times are sane");
}

static void test_exec(struct rec *r)
{
	int first, second;

	is_u64(record("", "exec ./inst_basic", r), 0, "exec: recorded");
	is_u64(r->nproc, 2, "two process images");
	if (!ok(two_images(r, &first, &second), "the exec'd image has a parent"))
		return;
	is_u64(r->proc[second].pid, r->proc[first].pid, "same pid across exec");
	is_u64(r->proc[second].parent_proc_id, r->proc[first].proc_id, "exec'd image points at the first");
	is_u64(calls(r, addr_of(r, "after_exec"), r->proc[second].proc_id), 5, "after_exec() 5 times after exec");
	is_u64(STAT(r, open_frames, r->proc[first].proc_id), 2, "main and exec_from are open at the exec");
	ok(times_sane(r), "exec: times are sane");
}

static void test_deep_and_paths(struct rec *r)
{
	uint64_t total = 0, funcs[16];
	int i;

	is_u64(record("", "deep 20000", r), 0, "deep: recorded");
	is_u64(calls(r, addr_of(r, "deep"), UINT32_MAX), 20001, "20,001 nested calls all counted");
	is_u64(STAT(r, lost_events, UINT32_MAX), 0, "a 20,000-deep stack loses nothing");
	is_u64(STAT(r, repairs, UINT32_MAX), 0, "and needs no repair");

	is_u64(record("", "paths", r), 0, "paths: recorded");
	for (i = 0; i < 16; i++) {
		char name[16];
		snprintf(name, sizeof(name), "path%d", i);
		funcs[i] = addr_of(r, name);
		total += calls(r, funcs[i], UINT32_MAX);
	}
	is_u64(total, (1u << 13) - 1, "every call of 8,191 kept across thousands of nodes");
	ok(r->nnode > 1000, "a calling-context tree of %d nodes (several chunks)", r->nnode);
	ok(r->ncallsite >= 32, "call sites recorded (%d)", r->ncallsite);
	is_u64(STAT(r, lost_events, UINT32_MAX), 0, "nothing lost");
	ok(times_sane(r), "paths: times are sane");
}

static void test_modules(struct rec *r)
{
	uint64_t lib_fn;
	int exe_mod = 0, lib_mod = -1, i;

	is_u64(record("", "dlopen ./libinst.so", r), 0, "dlopen: recorded");
	lib_fn = addr_of(r, "lib_fn");
	is_u64(calls(r, lib_fn, UINT32_MAX), 10, "lib_fn() of the dlopened library 10 times");
	for (i = 0; i < r->nmod; i++) {
		if (!(r->mod[i].flags & SC_MOD_BASE))
			continue;
		if (strstr(r->mpath[i], "inst_basic"))
			exe_mod++;
		if (strstr(r->mpath[i], "libinst.so"))
			lib_mod = i;
	}
	is_u64(exe_mod, 1, "one module record for the executable");
	for (i = 0; i < r->nmod; i++)
		if (strstr(r->mpath[i], "inst_basic"))
			ok(r->mpath[i][0] == '/', "the executable's module path is absolute (%s)", r->mpath[i]);
	ok(lib_mod >= 0 && r->mod[lib_mod].start <= lib_fn && r->mod[lib_mod].start > addr_of(r, "main"),
	   "the library's module record has a base below lib_fn and above the executable");
	ok(r->nproc == 1 && strstr(r->exe[0], "inst_basic"), "the process record names the executable");
	for (i = 0, lib_mod = 0; i < r->nmod; i++)
		lib_mod += (r->mod[i].flags & SC_MOD_BASE) && strstr(r->mpath[i], "/libc.so") != NULL;
	is_u64(lib_mod, 1, "libc has a module record: main's call site is in it (no function of it ran)");

	/* a position-dependent executable: base 0x400000, the path absolute */
	is_u64(record("", "nopie", r), 0, "non-PIE executable: recorded");
	for (i = 0, exe_mod = 0; i < r->nmod; i++)
		exe_mod += strstr(r->mpath[i], "inst_nopie") && r->mpath[i][0] == '/' &&
			   r->mod[i].start <= addr_of(r, "main");
	is_u64(exe_mod, 1, "non-PIE: the executable's module record (absolute path, base below main)");
}

static void test_unbalanced(struct rec *r)
{
	is_u64(record("", "unbalanced", r), 0, "longjmp and exit(): recorded");
	is_u64(STAT(r, repairs, UINT32_MAX), 2, "longjmp over jump_mid and jump_leaf: 2 repairs");
	is_u64(STAT(r, open_frames, UINT32_MAX), 4, "exit() three frames deep: 3 open frames and exit's own");
	is_u64(calls(r, addr_of(r, "jump_leaf"), UINT32_MAX), 1, "jump_leaf called once");
	ok(times_sane(r), "unbalanced: no negative or runaway times");

	is_u64(record("", "pexit", r), 0, "pthread_exit: recorded");
	is_u64(STAT(r, open_frames, UINT32_MAX), 3,
	       "pthread_exit two frames deep: 2 open frames and pthread_exit's own");
	is_u64(STAT(r, repairs, UINT32_MAX), 0, "and no repair");
	ok(times_sane(r), "pthread_exit: times are sane");
}

/* A program that closes every fd it did not open: the runtime's file and
 * perf events go, the numbers are reused; the program must not notice. */
static void test_closeall(struct rec *r)
{
	char args[1200];

	snprintf(args, sizeof(args), "closeall %s", tmp);
	is_u64(record("", args, r), 0, "closeall: recorded");
	ok(r->have_end && WIFEXITED(r->end.exit_status) && WEXITSTATUS(r->end.exit_status) == 0,
	   "the program's own files were not disturbed (status %d)", r->end.exit_status);
	is_u64(calls(r, addr_of(r, "work"), UINT32_MAX), 1000, "the thread started after it is recorded");
	is_u64(r->nproc, 2, "and so is its child");
	is_u64(STAT(r, lost_events, UINT32_MAX), 0, "nothing lost: the runtime reopened its file");
}

static void test_os(struct rec *r)
{
	uint64_t sleeper, spinner, ee = 0, ae = 0, sp_ee = 0, sp_ae = 0;

	/* the sleep in sleeper's own time: no library-call rows */
	is_u64(record("--libcalls=none", "sleep", r), 0, "sleep: recorded");
	sleeper = addr_of(r, "sleeper");
	spinner = addr_of(r, "spinner");
	for (int i = 0; i < r->nnode; i++) {
		if (r->node[i].func == sleeper) {
			ee += r->node[i].elapsed_excl;
			ae += r->node[i].app_excl;
		}
		if (r->node[i].func == spinner) {
			sp_ee += r->node[i].elapsed_excl;
			sp_ae += r->node[i].app_excl_exact;
		}
	}
	is_u64(r->end.os_observed, SC_OS_ALL, "switches, system calls and faults observed");
	ok(STAT(r, os_count[SC_OS_SWITCH], UINT32_MAX) > 0, "context switches counted");
	ok(STAT(r, os_count[SC_OS_SYSCALL], UINT32_MAX) > 0, "system calls counted");
	ok(ee >= 55000000 && ee < 1000000000, "sleeper: about 60 ms elapsed (%lu ns)", ee);
	ok(ae == 0, "sleeper: no application time (interval rule) (%lu ns)", ae);
	/* its 30 ms of CPU time (a few system calls aside) stay application
	 * time however long the machine's load makes it wait */
	ok(sp_ee >= 29000000 && sp_ae >= 26000000 && sp_ae <= sp_ee,
	   "spinner: its CPU time is application time in exact mode (%lu of %lu ns)", sp_ae, sp_ee);

	is_u64(record("--os-events=none", "sleep", r), 0, "--os-events=none: recorded");
	is_u64(r->end.os_observed, 0, "no category observed");
	is_u64(STAT(r, os_count[SC_OS_SWITCH], UINT32_MAX) + STAT(r, os_count[SC_OS_SYSCALL], UINT32_MAX) +
	       STAT(r, os_count[SC_OS_FAULT], UINT32_MAX), 0, "no OS event counted");
	ae = ee = 0;
	for (int i = 0; i < r->nnode; i++) {
		ee += r->node[i].elapsed_excl;
		ae += r->node[i].app_excl;
	}
	ok(ee > 0 && ae == ee, "application time is elapsed time");
}

static void test_output_and_errors(struct rec *r)
{
	is_u64(record("--libcalls=none", "print", r), 0, "print: recorded");
	ok(file_is(path("out"), "hello from the target\n"), "the target's stdout is untouched");
	ok(file_has(path("err"), "target stderr\nstackclock: 2 calls (4 events, 0 lost), 1 thread in 1 "
		    "process; ") && file_lines(path("err")) == 2,
	   "the target's stderr is untouched, then our summary line alone");

	/* built without hooks: patched at run time (SPEC section 10) */
	is_u64(sh("%s record -m instrument -o %s -- %s/inst_plain >%s 2>%s", sc, path("x.data"),
		  tmp, path("out"), path("err")), 5,
	   "uninstrumented program: patched and recorded, record exits with its status 5");
	ok(file_has(path("err"), "exited with status 5"),
	   "uninstrumented program: its own exit status reported");
	is_u64(sh("%s record -m instrument -o %s -- %s/nonexistent >%s 2>%s", sc, path("x.data"),
		  tmp, path("out"), path("err")), 127, "missing program: status 127");
	ok(file_has(path("err"), "no such program"), "missing program: one line saying so");
	is_u64(sh("cd %s && printf '#!/bin/sh\\nexec ./inst_basic threads 2 1000\\n' > wrap.sh && chmod +x wrap.sh && "
		  "%s record -m instrument -o %s -- ./wrap.sh >%s 2>&1", tmp, sc, path("w.data"), path("out")), 0,
	   "a script that execs an instrumented program: recorded");
	is_u64(sh("STACKCLOCK_RUNTIME=/nonexistent/lib.so %s record -m instrument -o %s -- %s/inst_basic >%s 2>%s",
		  sc, path("x.data"), tmp, path("out"), path("err")), 125, "runtime not found: status 125");
	ok(file_has(path("err"), "STACKCLOCK_RUNTIME"), "runtime not found: says how to fix it");
}

int main(void)
{
	static struct rec r;
	char cwd[1000];

	if (!mkdtemp(tmp) || !getcwd(cwd, sizeof(cwd)))
		return 1;
	sc = getenv("STACKCLOCK");
	if (!sc) {
		static char def[1100];
		snprintf(def, sizeof(def), "%s/build/stackclock", cwd);
		sc = def;
	}
	snprintf(progs, sizeof(progs), "%s/tests/progs", cwd);
	if (!ok(sh("gcc -O1 -g -pthread -finstrument-functions -o %s/inst_basic %s/inst_basic.c -ldl && "
		   "gcc -O1 -g -fPIC -shared -finstrument-functions -o %s/libinst.so %s/inst_lib.c && "
		   "gcc -O1 -no-pie -pthread -finstrument-functions -o %s/inst_nopie %s/inst_basic.c -ldl && "
		   "gcc -O1 -o %s/inst_plain %s/inst_lib.c -Dlib_fn=main",
		   tmp, progs, tmp, progs, tmp, progs, tmp, progs) == 0, "test programs built"))
		return tap_done();

	test_threads(&r);
	test_kill(&r);
	test_fork(&r);
	test_exec(&r);
	test_deep_and_paths(&r);
	test_modules(&r);
	test_unbalanced(&r);
	test_closeall(&r);
	test_os(&r);
	test_output_and_errors(&r);

	free(r.node);
	sh("rm -rf %s", tmp);
	return tap_done();
}
