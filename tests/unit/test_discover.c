/*
 * test_discover — function discovery and entry relocation for patching
 * binaries at run time (record/discover.h, record/reloc.h).
 *
 * tests/progs/patch_lib.c is built here with gcc and clang (-O2), and a
 * stripped copy of the gcc build.  Its asm_* functions have fixed bytes, so
 * each one's decision and reason is checked exactly, under both compilers;
 * the stripped copy must decide every exported function as the original.
 * Then each patched function is run through its relocated entry: the
 * library is dlopen'ed, the trampoline the plan gives (built in link-time
 * addresses) is placed with rel_entry_place() in an executable page mapped
 * within +-2 GiB of the library, and calling the trampoline must give what
 * calling the function gives; the same entry relocated in run-time
 * addresses must give the same bytes.  patch_short.c's functions too short for
 * the entry jmp are counted at their direct call sites, each listed
 * branch a call or jmp rel32 to them.  Last, libc's returns-twice and
 * return-address readers and the dynamic loader are refused by name, and
 * Debian's gzip and python3 give their coverage (diagnostics).
 */
#include "record/discover.h"
#include "record/plan_file.h"
#include "tap.h"

#include <Zydis/Zydis.h>

#include <dlfcn.h>
#include <errno.h>
#include <gnu/libc-version.h>
#include <libgen.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

static char progs[PATH_MAX];
static char tmp[PATH_MAX];

static int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int sh(const char *fmt, ...)
{
	char *cmd;
	va_list ap;
	int rc;

	va_start(ap, fmt);
	if (vasprintf(&cmd, fmt, ap) < 0)
		abort();
	va_end(ap);
	rc = system(cmd);
	if (rc != 0)
		tap_diag("command failed (%d): %s", rc, cmd);
	free(cmd);
	return rc;
}

static void find_progs(void)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	/* build/tests/test_discover -> the checkout's tests/progs */
	if (n > 0) {
		self[n] = '\0';
		snprintf(progs, sizeof(progs), "%s/tests/progs",
			 dirname(dirname(dirname(self))));
	}
	if (n <= 0 || access(progs, R_OK) != 0)
		snprintf(progs, sizeof(progs), "%s", "tests/progs");
	if (realpath(progs, self))
		snprintf(progs, sizeof(progs), "%s", self);
}

static const struct dsc_func *by_name(const struct dsc_plan *p, const char *name)
{
	for (size_t i = 0; i < p->nfuncs; i++)
		if (p->funcs[i].name && !strcmp(p->funcs[i].name, name))
			return &p->funcs[i];
	return NULL;
}

/* ---- exact decisions ------------------------------------------------------ */

struct want {
	const char *name;
	enum patch_reason reason;
	int site_kind;            /* when patched */
	unsigned skip, len, ninsn;
	unsigned nfix;            /* fixups: the jmp back, RIP operands, ... */
};

/* The same under gcc and clang: the bytes are asm. */
static const struct want asm_wants[] = {
	{ "asm_jcc",       PATCH_OK, REL_SITE_DISPLACED, 0, 7, 3, 2 },
	{ "asm_rip",       PATCH_OK, REL_SITE_DISPLACED, 0, 6, 1, 2 },
	{ "asm_back",      PATCH_OK, REL_SITE_DISPLACED, 0, 6, 2, 1 },
	{ "asm_into",      PATCH_BRANCH_INTO_ENTRY, 0, 0, 0, 0, 0 },
	{ "asm_short",     PATCH_TOO_SHORT, 0, 0, 0, 0, 0 },
	{ "asm_leaves",    PATCH_LEAVES_FUNCTION, 0, 0, 0, 0, 0 },
	{ "asm_nops",      PATCH_OK, REL_SITE_NOPS, 0, 5, 1, 1 },
	{ "asm_endbr",     PATCH_OK, REL_SITE_DISPLACED, 4, 5, 2, 1 },
	{ "asm_ra",        PATCH_READS_RETURN_ADDRESS, 0, 0, 0, 0, 0 },
	{ "asm_ra_rbp",    PATCH_READS_RETURN_ADDRESS, 0, 0, 0, 0, 0 },
	{ "asm_jrcxz",     PATCH_UNRELOCATABLE, 0, 0, 0, 0, 0 },
	{ "asm_callfirst", PATCH_OK, REL_SITE_DISPLACED, 0, 5, 1, 2 },
	{ "asm_tail",      PATCH_OK, REL_SITE_DISPLACED, 0, 0, 2, 2 },
	{ "asm_outer",     PATCH_BRANCH_INTO_ENTRY, 0, 0, 0, 0, 0 },
	{ "asm_mid",       PATCH_NOT_AT_ENTRY, 0, 0, 0, 0, 0 },
	{ "asm_nocfi",     PATCH_NO_CFI, 0, 0, 0, 0, 0 },
	{ "getcontext",    PATCH_RETURNS_TWICE, 0, 0, 0, 0, 0 },
	{ "dlsym",         PATCH_READS_RETURN_ADDRESS, 0, 0, 0, 0, 0 },
};

/* What either compiler makes of patch_lib's C: all patched. */
static const char *const c_funcs[] = {
	"c_rip", "c_tail", "c_call", "c_cold", "c_setjmp", "c_loop",
};

static void check_decisions(const struct dsc_plan *p, const char *what)
{
	unsigned sum = 0;
	bool cold_seen = false;

	for (size_t i = 0; i < ARRAY_LEN(asm_wants); i++) {
		const struct want *w = &asm_wants[i];
		const struct dsc_func *f = by_name(p, w->name);

		if (!ok(f, "%s: %s is a candidate", what, w->name))
			continue;
		is_str(patch_reason_name(f->reason), patch_reason_name(w->reason),
		       "%s: %s decided", what, w->name);
		if (w->reason != PATCH_OK || f->reason != PATCH_OK)
			continue;
		/* asm_tail: gcc's as may pick jmp rel8 or rel32 for the tail jmp */
		ok(f->entry.site_kind == w->site_kind && f->entry.skip == w->skip &&
		   (!w->len || f->entry.len == w->len) && f->entry.ninsn == w->ninsn &&
		   f->entry.nfix == w->nfix,
		   "%s: %s entry: kind %u skip %u len %u insns %u fixups %u", what,
		   w->name, f->entry.site_kind, f->entry.skip, f->entry.len,
		   f->entry.ninsn, f->entry.nfix);
	}
	for (size_t i = 0; i < ARRAY_LEN(c_funcs); i++) {
		const struct dsc_func *f = by_name(p, c_funcs[i]);

		ok(f && f->reason == PATCH_OK, "%s: %s patched (%s)", what, c_funcs[i],
		   f ? patch_reason_name(f->reason) : "no candidate");
	}
	/* A jump back to the entry is allowed, and said. */
	{
		const struct dsc_func *f = by_name(p, "asm_back");
		ok(f && (f->flags & DSC_JUMPED), "%s: asm_back's jump back to its entry seen", what);
	}
	for (size_t i = 0; i < p->nfuncs; i++) {
		const struct dsc_func *f = &p->funcs[i];

		if (f->name && strstr(f->name, ".cold")) {
			cold_seen = true;
			ok(f->reason == PATCH_JUMP_ONLY, "%s: %s refused as jump_only (%s)",
			   what, f->name, patch_reason_name(f->reason));
		}
	}
	for (unsigned r = 0; r < PATCH_NREASONS; r++)
		sum += p->count[r];
	is_u64(sum, p->nfuncs, "%s: every candidate counted once", what);
	if (!cold_seen)
		tap_diag("%s: no .cold part (clang does not split functions)", what);
}

/* The stripped copy decides every exported function as the original. */
static void check_stripped(const struct dsc_plan *full, const struct dsc_plan *strip)
{
	unsigned same = 0, exported = 0;

	for (size_t i = 0; i < strip->nfuncs; i++) {
		const struct dsc_func *s = &strip->funcs[i], *f;

		if (!s->name)
			continue;
		exported++;
		f = dsc_plan_find(full, s->addr);
		if (f && f->reason == s->reason &&
		    (s->reason != PATCH_OK ||
		     (f->entry.len == s->entry.len && f->entry.code_len == s->entry.code_len &&
		      !memcmp(f->entry.code, s->entry.code, s->entry.code_len))))
			same++;
		else
			tap_diag("stripped: %s decided %s, unstripped %s", s->name,
				 patch_reason_name(s->reason),
				 f ? patch_reason_name(f->reason) : "(no candidate)");
	}
	ok(exported >= ARRAY_LEN(asm_wants) - 2 + ARRAY_LEN(c_funcs),
	   "stripped: %u exported functions still named (.dynsym)", exported);
	is_u64(same, exported, "stripped: exported functions decided as unstripped");
	/* The local names are gone: their starts are FDE starts nothing calls. */
	ok(!by_name(strip, "getcontext") && !by_name(strip, "dlsym"),
	   "stripped: local names gone");
	ok(strip->count[PATCH_UNREFERENCED] >= 2,
	   "stripped: unnamed starts nothing references are unreferenced (%u)",
	   strip->count[PATCH_UNREFERENCED]);
}

/* ---- running the relocated entries ---------------------------------------- */

/* An executable page within +-2 GiB of near, or NULL. */
static uint8_t *page_near(uint64_t near, size_t size)
{
	for (int64_t step = 1; step <= 64; step *= 2) {
		for (int sign = -1; sign <= 1; sign += 2) {
			uint64_t hint = (near & ~0xfffULL) + (uint64_t)(sign * step * (16 << 20));
			void *p = mmap((void *)hint, size, PROT_READ | PROT_WRITE,
				       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			int64_t d;

			if (p == MAP_FAILED)
				continue;
			d = (int64_t)((uint64_t)p - near);
			if (d > -(1LL << 31) + (1 << 24) && d < (1LL << 31) - (1 << 24))
				return p;
			munmap(p, size);
		}
	}
	return NULL;
}

static const int args[] = { -3, 0, 1, 5, 7, 99, 150 };

static void run_entries(const char *lib, const struct dsc_plan *p, const char *what)
{
	void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	const size_t page = 1 << 16;
	uint8_t *code;
	unsigned run = 0, same = 0, rebuilt = 0, patched = 0;
	size_t used = 0;

	if (!ok(h, "%s: dlopen: %s", what, h ? "" : dlerror()))
		return;
	code = page_near((uint64_t)dlsym(h, "asm_jcc"), page);
	if (!ok(code, "%s: a page within 2 GiB of the library", what)) {
		dlclose(h);
		return;
	}
	for (size_t i = 0; i < p->nfuncs; i++) {
		const struct dsc_func *f = &p->funcs[i];
		int (*orig)(int), (*tramp)(int);
		struct rel_entry e;
		uint64_t rt, bias;
		enum patch_reason r;
		bool all = true;

		if (f->reason != PATCH_OK || !f->name ||
		    (strncmp(f->name, "asm_", 4) && strncmp(f->name, "c_", 2)))
			continue;
		patched++;
		orig = (int (*)(int))dlsym(h, f->name);
		if (!orig)
			continue;              /* hidden helpers: reached through others */
		rt = (uint64_t)orig;
		bias = rt - f->addr;
		if (used + REL_CODE_MAX > page)
			break;
		if (!rel_entry_place(&f->entry, code + used, (uint64_t)(code + used), bias)) {
			ok(0, "%s: %s placed near the library", what, f->name);
			continue;
		}
		/* The same relocation done directly in run-time addresses. */
		r = rel_entry_build((const uint8_t *)rt, f->size, rt, rt + f->size,
				    (uint64_t)(code + used), NULL, 0, NULL, 0, &e);
		if (r == PATCH_OK && e.code_len == f->entry.code_len &&
		    !memcmp(e.code, code + used, e.code_len))
			rebuilt++;
		else
			tap_diag("%s: %s rebuilt at run time differs (%s)", what, f->name,
				 patch_reason_name(r));
		tramp = (int (*)(int))(void *)(code + used);
		used += (f->entry.code_len + 15) & ~15u;
		if (mprotect(code, page, PROT_READ | PROT_EXEC) != 0) {
			ok(0, "mprotect: %s", strerror(errno));
			break;
		}
		run++;
		for (size_t k = 0; k < ARRAY_LEN(args); k++) {
			int want = orig(args[k]), got = tramp(args[k]);

			if (want != got) {
				all = false;
				tap_diag("%s: %s(%d): original %d, through the trampoline %d",
					 what, f->name, args[k], want, got);
			}
		}
		same += all;
		if (mprotect(code, page, PROT_READ | PROT_WRITE) != 0)
			break;
	}
	ok(run >= 10, "%s: %u of %u patched functions run through their trampolines", what,
	   run, patched);
	is_u64(same, run, "%s: trampolines give the originals' results", what);
	is_u64(rebuilt, run, "%s: placed (link-time plan) == built at run time", what);

	/* Out of reach: a trampoline 8 GiB away. */
	{
		const struct dsc_func *f = by_name(p, "asm_rip");
		uint8_t buf[REL_CODE_MAX];
		struct rel_entry e;
		uint64_t rt = (uint64_t)dlsym(h, "asm_rip");

		if (f && f->reason == PATCH_OK && rt) {
			ok(!rel_entry_place(&f->entry, buf, rt + (8ULL << 30), rt - f->addr),
			   "%s: a trampoline 8 GiB away is refused by rel_entry_place", what);
			is_str(patch_reason_name(rel_entry_build((const uint8_t *)rt, f->size, rt,
							 rt + f->size, rt + (8ULL << 30),
							 NULL, 0, NULL, 0, &e)),
			       "out_of_reach", "%s: ... and by rel_entry_build", what);
		}
	}
	munmap(code, page);
	dlclose(h);
}

/* ---- relocation forms, byte for byte ------------------------------------ */

static void test_forms(void)
{
	/* jz rel8 first: widened to 0f 84 rel32 for a trampoline 0x1000 higher */
	static const uint8_t jz[] = { 0x74, 0x10, 0x89, 0xf8, 0x83, 0xc0, 0x01, 0xc3 };
	/* call rel32 first: push [rip+5]; jmp target; .quad return address */
	static const uint8_t call[] = { 0xe8, 0xfb, 0x0f, 0x00, 0x00, 0xc3 };
	/* a branch target at +2 */
	uint64_t inside[] = { 0x4002 }, at_start[] = { 0x4000 };
	struct rel_entry e;

	is_u64(rel_entry_build(jz, sizeof(jz), 0x4000, 0x4000 + sizeof(jz), 0x5000,
			       NULL, 0, NULL, 0, &e), PATCH_OK, "jz rel8 relocates");
	{
		/* 0f 84 <0x4012 - 0x5006>, 89 f8, 83 c0 01, e9 <0x4007 - 0x5010> */
		static const uint8_t want[] = { 0x0f, 0x84, 0x0c, 0xf0, 0xff, 0xff,
						0x89, 0xf8, 0x83, 0xc0, 0x01,
						0xe9, 0xf7, 0xef, 0xff, 0xff };
		ok(e.code_len == sizeof(want) && !memcmp(e.code, want, sizeof(want)) &&
		   e.len == 7 && e.ninsn == 3,
		   "jz rel8 widened to rel32, then the jmp back to site + 7");
	}
	is_u64(rel_entry_build(jz, sizeof(jz), 0x4000, 0x4000 + sizeof(jz), 0x5000,
			       inside, 1, NULL, 0, &e), PATCH_BRANCH_INTO_ENTRY,
	       "a target inside the replaced bytes refuses");
	is_u64(rel_entry_build(jz, sizeof(jz), 0x4000, 0x4000 + sizeof(jz), 0x5000,
			       at_start, 1, NULL, 0, &e), PATCH_OK,
	       "a target at the entry itself does not");
	is_u64(rel_entry_build(call, sizeof(call), 0x4000, 0x4000 + sizeof(call), 0x5000,
			       NULL, 0, NULL, 0, &e), PATCH_OK, "a call first relocates");
	{
		static const uint8_t want[] = { 0xff, 0x35, 0x05, 0x00, 0x00, 0x00,
						0xe9, 0xf5, 0xff, 0xff, 0xff,
						0x05, 0x40, 0, 0, 0, 0, 0, 0 };
		ok(e.code_len == sizeof(want) && !memcmp(e.code, want, sizeof(want)) &&
		   e.nfix == 2 && e.fix[1].kind == REL_FIX_ABS64 && e.fix[1].off == 11,
		   "call: push [rip+5]; jmp 0x5000; .quad 0x4005 (absolute, fixed up)");
	}
	/* The call target is a hook (-mfentry's __fentry__): nothing displaced. */
	{
		uint64_t hook[] = { 0x5000 };

		is_u64(rel_entry_build(call, sizeof(call), 0x4000, 0x4000 + sizeof(call),
				       0x6000, NULL, 0, hook, 1, &e), PATCH_OK,
		       "call __fentry__ at the entry");
		ok(e.site_kind == REL_SITE_HOOK_CALL && e.len == 5 && e.code_len == 5 &&
		   e.code[0] == 0xe9, "... is a compiler-made site: only the jmp back");
	}
	is_u64(rel_entry_build(jz, 4, 0x4000, 0x4004, 0x5000, NULL, 0, NULL, 0, &e),
	       PATCH_TOO_SHORT, "4 bytes: too short");
	is_str(patch_reason_name(PATCH_BRANCH_INTO_ENTRY), "branch_into_entry",
	       "reason names are snake_case JSON keys");
}

/* ---- data that looks like an address ------------------------------------ */

/* The address of name in the program at path, from nm; 0 if none. */
static uint64_t nm_addr(const char *path, const char *name)
{
	char cmd[PATH_MAX * 2], line[256];
	unsigned long long a = 0;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "nm %s", path);
	f = popen(cmd, "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		char sym[128];

		if (sscanf(line, "%llx %*s %127s", &a, sym) == 2 && !strcmp(sym, name))
			break;
		a = 0;
	}
	pclose(f);
	return a;
}

/*
 * tests/progs/patch_dataword.c: a .rodata word equal to dw_small + 3,
 * inside the 6 bytes its entry jump replaces.  In a position-independent
 * program a pointer would carry a relocation and this word has none: it is
 * a constant, and dw_small is patched (issue 16: refused as
 * branch_into_entry before).  In a fixed-address program the same word may
 * be a jump table's entry, so it still refuses.
 */
static void test_data_words(void)
{
	static const struct {
		const char *flags;
		enum patch_reason want;
	} builds[] = {
		{ "-pie", PATCH_OK },
		{ "-no-pie", PATCH_BRANCH_INTO_ENTRY },
	};

	for (size_t i = 0; i < ARRAY_LEN(builds); i++) {
		const char *fl = builds[i].flags;
		char exe[PATH_MAX + 32];
		struct dsc_plan *p = NULL;
		const struct dsc_func *f;
		uint64_t a0, a1;

		snprintf(exe, sizeof(exe), "%s/dataword%s", tmp, fl);
		if (!ok(sh("gcc -O1 %s -fPIE -o %s %s/patch_dataword.c", fl, exe, progs) == 0,
			"%s: build patch_dataword", fl))
			continue;
		a0 = nm_addr(exe, "dw_small");
		if (!ok(a0 && sh("gcc -O1 %s -fPIE -DWORD=%#llxUL -o %s %s/patch_dataword.c", fl,
				 (unsigned long long)a0 + 3, exe, progs) == 0,
			"%s: rebuild with the word dw_small + 3 = %#llx", fl,
			(unsigned long long)a0 + 3))
			continue;
		a1 = nm_addr(exe, "dw_small");
		is_u64(a1, a0, "%s: dw_small stays where it was", fl);
		is_u64(nm_addr(exe, "dw_next"), a0 + 9, "%s: dw_next follows it at +9", fl);
		if (!ok(dsc_plan_build(exe, &p) == 0, "%s: plan built", fl))
			continue;
		f = by_name(p, "dw_small");
		if (ok(f, "%s: dw_small is a candidate", fl)) {
			is_str(patch_reason_name(f->reason), patch_reason_name(builds[i].want),
			       "%s: dw_small decided", fl);
			if (builds[i].want == PATCH_OK)
				ok(f->entry.site_kind == REL_SITE_DISPLACED && f->entry.len == 6 &&
				   !(f->flags & DSC_ADDR_TAKEN),
				   "%s: dw_small's lea displaced (len %u), no address taken", fl,
				   f->entry.len);
		}
		f = by_name(p, "dw_next");
		ok(f && f->reason == PATCH_OK, "%s: dw_next patched (%s)", fl,
		   f ? patch_reason_name(f->reason) : "no candidate");
		dsc_plan_free(p);
	}
}

/* ---- plan files and the cache ---------------------------------------------- */

static void *map_file(const char *path, size_t *size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	void *m = MAP_FAILED;

	*size = 0;
	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) == 0 && st.st_size > 0)
		m = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	close(fd);
	if (m == MAP_FAILED)
		return NULL;
	*size = (size_t)st.st_size;
	return m;
}

static double ms_since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - t0->tv_sec) * 1e3 + (t.tv_nsec - t0->tv_nsec) / 1e6;
}

static void test_plan_file(const char *lib, const struct dsc_plan *p)
{
	char *path = NULL, *again = NULL;
	bool hit = true;
	const struct plan_file_entry *v;
	struct plan_file_header *h;
	size_t size, n, same = 0, k = 0;
	uint8_t *m;

	int rc = dsc_plan_cached(lib, &path, &hit);

	if (!ok(rc == 0 && !hit, "plan cache: first use builds (%s)", path ? path : "-"))
		return;
	ok(!strncmp(path, tmp, strlen(tmp)), "plan cache: under STACKCLOCK_CACHE_DIR");
	ok(dsc_plan_cached(lib, &again, &hit) == 0 && hit && !strcmp(again, path),
	   "plan cache: second use hits");
	m = map_file(path, &size);
	if (!ok(m, "plan file maps"))
		goto out;
	v = plan_file_check(m, size, &n);
	is_u64(n, p->count[PATCH_OK], "plan file: one entry per patched function");
	h = (struct plan_file_header *)m;
	is_u64(h->count[PATCH_TOO_SHORT], p->count[PATCH_TOO_SHORT],
	       "plan file: refusals counted by reason");
	for (size_t i = 0; v && i < p->nfuncs; i++) {
		const struct dsc_func *f = &p->funcs[i];

		if (f->reason != PATCH_OK)
			continue;
		if (k < n && v[k].addr == f->addr &&
		    !memcmp(&v[k].entry, &f->entry, sizeof(f->entry)))
			same++;
		k++;
	}
	is_u64(same, n, "plan file: entries as built");
	/* Damage is refused, never patched with. */
	ok(!plan_file_check(m, size - 1, &n) && n == 0, "plan file: truncated refused");
	if (v && n == 0 && size > sizeof(*h) + sizeof(*v)) {
		struct plan_file_entry *w = (struct plan_file_entry *)(h + 1);
		uint8_t keep = w[0].entry.fix[0].off;

		w[0].entry.fix[0].off = REL_CODE_MAX;
		ok(!plan_file_check(m, size, &n), "plan file: a fixup outside its code refused");
		w[0].entry.fix[0].off = keep;
		h->version++;
		ok(!plan_file_check(m, size, &n), "plan file: a newer version refused");
	}
	munmap(m, size);
out:
	free(path);
	free(again);
}

/*
 * Call sites (issue 18): patch_short.c's functions too short for the entry
 * jmp that are called directly become call_sites, each direct rel32 branch
 * listed once (tail_zero's jmp, among the bytes its own entry jmp
 * replaces, is left to the runtime's trampoline); the one called only
 * through a pointer stays too_short.  Every listed branch is a call or jmp
 * whose rel32 ends it and lands on the function; the plan file keeps them
 * and refuses one damaged.
 */
static void test_call_sites(void)
{
	static const struct { const char *name; enum patch_reason reason; unsigned nsites; } wants[] = {
		{ "nothing", PATCH_CALL_SITES, 1 }, { "ident", PATCH_CALL_SITES, 1 },
		{ "zero", PATCH_CALL_SITES, 2 }, { "only_by_pointer", PATCH_TOO_SHORT, 0 },
	};
	static const char *const cc[] = { "gcc", "clang" };

	for (int k = 0; k < 2; k++) {
		char exe[PATH_MAX + 32], *path = NULL;
		struct dsc_plan *p = NULL;
		size_t good = 0, size, n;
		uint8_t *m, *code;
		bool hit;

		snprintf(exe, sizeof(exe), "%s/short_%s", tmp, cc[k]);
		if (!ok(sh("%s -O2 -g -o %s %s/patch_short.c 2>/dev/null", cc[k], exe, progs) == 0,
			"build patch_short with %s", cc[k]) ||
		    !ok(dsc_plan_build(exe, &p) == 0, "%s: patch_short planned", cc[k]))
			continue;
		for (size_t i = 0; i < ARRAY_LEN(wants); i++) {
			const struct dsc_func *f = by_name(p, wants[i].name);

			ok(f && f->reason == wants[i].reason && f->ncall_sites == wants[i].nsites,
			   "%s: %s %s at %u sites (%s, %u)", cc[k], wants[i].name,
			   patch_reason_name(wants[i].reason), wants[i].nsites,
			   f ? patch_reason_name(f->reason) : "-", f ? f->ncall_sites : 0);
		}
		is_u64(p->count[PATCH_CALL_SITES], 3, "%s: 3 functions counted at call sites", cc[k]);
		m = map_file(exe, &size);
		for (size_t i = 0; m && i < p->ncalls; i++) {
			const struct dsc_call *c = &p->calls[i];
			int32_t d;

			/* a PIE's text is at its file offset in these small programs */
			if (c->site + c->len > size)
				continue;
			code = m + c->site;
			memcpy(&d, code + c->len - 4, 4);
			good += c->len == 5 && (code[0] == 0xe8 || code[0] == 0xe9) &&
				c->site + c->len + (uint64_t)(int64_t)d == c->target;
		}
		is_u64(good, p->ncalls, "%s: every listed branch is a call or jmp rel32 to its function",
		       cc[k]);
		if (m)
			munmap(m, size);
		if (ok(dsc_plan_cached(exe, &path, &hit) == 0 && (m = map_file(path, &size)),
		       "%s: plan file of patch_short", cc[k])) {
			struct plan_file_header *h = (struct plan_file_header *)m;
			struct plan_file_call *c = (struct plan_file_call *)plan_file_calls(h);

			ok(plan_file_check(m, size, &n) && h->ncalls == p->ncalls &&
			   h->count[PATCH_CALL_SITES] == 3 && c[0].site == p->calls[0].site &&
			   c[0].target == p->calls[0].target && c[0].rel_off == c[0].len - 4,
			   "%s: plan file lists the %zu call sites", cc[k], p->ncalls);
			c[0].rel_off = 0;
			ok(!plan_file_check(m, size, &n), "%s: plan file: a damaged call site refused",
			   cc[k]);
			munmap(m, size);
		}
		free(path);
		dsc_plan_free(p);
	}
}

/*
 * The patching start-up of python3, the parts done out of the runtime: the
 * plan built (first run) or read from the cache (later runs), then every
 * trampoline placed.  Printed, not asserted: the machine's load decides.
 */
static void startup_python3(void)
{
	const char *bin = "/usr/bin/python3.11";
	struct timespec t0;
	char *path = NULL;
	bool hit;
	double cold, warm, place;
	size_t size, n;
	uint8_t *m, *code;
	const struct plan_file_entry *v;
	unsigned placed = 0;

	if (access(bin, R_OK) != 0)
		return;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (dsc_plan_cached(bin, &path, &hit) != 0)
		return;
	cold = ms_since(&t0);
	free(path);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (!ok(dsc_plan_cached(bin, &path, &hit) == 0 && hit, "python3: plan cached"))
		return;
	m = map_file(path, &size);
	v = m ? plan_file_check(m, size, &n) : NULL;
	warm = ms_since(&t0);
	code = mmap(NULL, (n + 1) * 80, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (size_t i = 0; v && code != MAP_FAILED && i < n; i++)
		placed += rel_entry_place(&v[i].entry, code + 80 * i,
					  v[i].entry.tramp + (1u << 20), 0);
	place = ms_since(&t0);
	is_u64(placed, n, "python3: every planned trampoline placed 1 MiB from its function");
	tap_diag("python3 start-up: plan built %.1f ms (first run), read from the cache "
		 "%.1f ms, %zu trampolines placed %.2f ms", cold, warm, n, place);
	if (code != MAP_FAILED)
		munmap(code, (n + 1) * 80);
	if (m)
		munmap(m, size);
	free(path);
}

/* ---- every entry of a big library, checked by decoding ---------------------- */

/* The absolute target of in's relative operand (branch or RIP memory). */
static bool abs_target(const ZydisDecodedInstruction *in, const ZydisDecodedOperand *ops,
		       uint64_t at, uint64_t *t)
{
	for (unsigned i = 0; i < in->operand_count_visible; i++) {
		const ZydisDecodedOperand *o = &ops[i];

		if ((o->type == ZYDIS_OPERAND_TYPE_IMMEDIATE && o->imm.is_relative) ||
		    (o->type == ZYDIS_OPERAND_TYPE_MEMORY && o->mem.base == ZYDIS_REGISTER_RIP))
			return ZYAN_SUCCESS(ZydisCalcAbsoluteAddress(in, o, at, t));
	}
	return false;
}

/*
 * Does the trampoline code (at tramp) do what the displaced instructions
 * at orig did?  Decoded side by side: same mnemonics, same absolute
 * targets for relative operands, same bytes otherwise; a call becomes
 * push of its return address + jmp to its target; then a jmp back.
 */
static bool same_meaning(const struct rel_entry *e, const uint8_t *orig, uint64_t site,
			 const uint8_t *code, uint64_t tramp)
{
	ZydisDecoder d;
	ZydisDecodedInstruction a, b;
	ZydisDecodedOperand oa[ZYDIS_MAX_OPERAND_COUNT], ob[ZYDIS_MAX_OPERAND_COUNT];
	size_t i = 0, j = 0;
	uint64_t ta, tb;

	ZydisDecoderInit(&d, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);
	if (e->site_kind != REL_SITE_DISPLACED)
		i = e->len;
	while (i < e->len) {
		if (!ZYAN_SUCCESS(ZydisDecoderDecodeFull(&d, orig + i, 16, &a, oa)) ||
		    !ZYAN_SUCCESS(ZydisDecoderDecodeFull(&d, code + j, e->code_len - j, &b, ob)))
			return false;
		if (a.mnemonic == ZYDIS_MNEMONIC_CALL && abs_target(&a, oa, site + i, &ta)) {
			uint64_t lit;

			/* push [rip+5]; jmp target; .quad return address */
			if (b.mnemonic != ZYDIS_MNEMONIC_PUSH ||
			    !abs_target(&b, ob, tramp + j, &tb) || tb < tramp ||
			    tb + 8 > tramp + e->code_len)
				return false;
			memcpy(&lit, code + (tb - tramp), 8);
			if (lit != site + i + a.length)
				return false;
			j += b.length;
			if (!ZYAN_SUCCESS(ZydisDecoderDecodeFull(&d, code + j, e->code_len - j, &b, ob)) ||
			    b.mnemonic != ZYDIS_MNEMONIC_JMP || !abs_target(&b, ob, tramp + j, &tb) ||
			    tb != ta)
				return false;
			return i + a.length == e->len;    /* the call is last */
		}
		if (a.mnemonic != b.mnemonic)
			return false;
		if (abs_target(&a, oa, site + i, &ta)) {
			if (!abs_target(&b, ob, tramp + j, &tb) || ta != tb)
				return false;
		} else if (a.length != b.length || memcmp(orig + i, code + j, a.length)) {
			return false;
		}
		i += a.length;
		j += b.length;
	}
	return ZYAN_SUCCESS(ZydisDecoderDecodeFull(&d, code + j, e->code_len - j, &b, ob)) &&
	       b.mnemonic == ZYDIS_MNEMONIC_JMP && abs_target(&b, ob, tramp + j, &tb) &&
	       tb == site + e->len && j + b.length == e->code_len;
}

/*
 * Every patched entry of a library this process has loaded (at bias),
 * placed 1 MiB above its function and decoded against the original.
 */
static void check_all_entries(const struct dsc_plan *p, uint64_t bias, const char *what)
{
	unsigned n = 0, good = 0;

	for (size_t i = 0; i < p->nfuncs; i++) {
		const struct dsc_func *f = &p->funcs[i];
		uint8_t code[REL_CODE_MAX];
		uint64_t rt = f->addr + bias, tramp = rt + (1u << 20);

		if (f->reason != PATCH_OK)
			continue;
		n++;
		if (!rel_entry_place(&f->entry, code, tramp, bias))
			continue;
		if (same_meaning(&f->entry, (const uint8_t *)rt + f->entry.skip,
				 rt + f->entry.skip, code, tramp))
			good++;
		else if (n - good <= 5)
			tap_diag("%s: %s (0x%" PRIx64 ") relocated differently", what,
				 f->name ? f->name : "?", f->addr);
	}
	ok(n > 1000, "%s: %u entries planned", what, n);
	is_u64(good, n, "%s: every relocated entry decodes to the same instructions, "
	       "targets and jmp back", what);
}

/* ---- libc, ld.so, Debian's binaries --------------------------------------- */

static void test_system(void)
{
	static const char *const twice[] = { "_setjmp", "__sigsetjmp", "setjmp", "vfork",
					     "getcontext" };
	static const char *const ra[] = { "dlsym", "dlvsym", "dlopen" };
	Dl_info di;
	struct dsc_plan *p;

	/* Not printf: the sanitizers' runtime replaces it. */
	if (!dladdr((void *)gnu_get_libc_version, &di) || !di.dli_fname) {
		ok(0, "find libc");
		return;
	}
	if (!ok(dsc_plan_build(di.dli_fname, &p) == 0, "plan of %s", di.dli_fname))
		return;
	for (size_t i = 0; i < ARRAY_LEN(twice); i++) {
		const struct dsc_func *f = by_name(p, twice[i]);
		/* by_name gives the best-ranked alias; look the address up too */
		void *a = dlsym(RTLD_DEFAULT, twice[i]);
		const struct dsc_func *g = a ? dsc_plan_find(p, (uint64_t)a -
							      ((uint64_t)di.dli_fbase)) : NULL;
		if (!f)
			f = g;
		ok(f && f->reason == PATCH_RETURNS_TWICE, "libc %s: returns_twice (%s)",
		   twice[i], f ? patch_reason_name(f->reason) : "not found");
	}
	for (size_t i = 0; i < ARRAY_LEN(ra); i++) {
		const struct dsc_func *f = by_name(p, ra[i]);

		ok(f && f->reason == PATCH_READS_RETURN_ADDRESS,
		   "libc %s: reads_return_address (%s)", ra[i],
		   f ? patch_reason_name(f->reason) : "not found");
	}
	tap_diag("libc: %zu candidates, %u patched, %.1f ms", p->nfuncs, p->count[PATCH_OK],
		 p->stats.total_ns / 1e6);
	check_all_entries(p, (uint64_t)di.dli_fbase, "libc");
	dsc_plan_free(p);

	if (dsc_plan_build("/lib64/ld-linux-x86-64.so.2", &p) == 0) {
		is_u64(p->count[PATCH_DYNAMIC_LOADER], p->nfuncs - p->count[PATCH_NOT_CODE],
		       "the dynamic loader: nothing patched");
		dsc_plan_free(p);
	}
	is_u64(-dsc_plan_build("/nonexistent/prog", &p), ENOENT, "a missing file: -ENOENT");
	is_u64(-dsc_plan_build("/etc/passwd", &p), ENOEXEC, "not ELF: -ENOEXEC");

	for (int k = 0; k < 2; k++) {
		const char *bin = k ? "/usr/bin/python3.11" : "/usr/bin/gzip";
		unsigned real;

		if (access(bin, R_OK) != 0 || dsc_plan_build(bin, &p) != 0) {
			tap_diag("%s: not here", bin);
			continue;
		}
		/* Functions that are entries at all: not .cold parts, dead code or PLT. */
		real = (unsigned)p->nfuncs - p->count[PATCH_JUMP_ONLY] -
		       p->count[PATCH_UNREFERENCED] - p->count[PATCH_PLT_STUB];
		tap_diag("%s: %zu candidates, %u patched (%.1f%% of %u entries), %.1f ms",
			 bin, p->nfuncs, p->count[PATCH_OK], 100.0 * p->count[PATCH_OK] / real,
			 real, p->stats.total_ns / 1e6);
		for (unsigned r = 1; r < PATCH_NREASONS; r++)
			if (p->count[r])
				tap_diag("  %s %u", patch_reason_name(r), p->count[r]);
		ok(p->count[PATCH_OK] >= real * 9 / 10,
		   "%s: at least 90%% of its entries patched (%u of %u)", bin,
		   p->count[PATCH_OK], real);
		dsc_plan_free(p);
	}
}

int main(void)
{
	char templ[] = "/tmp/sc-dsc.XXXXXX";
	static const char *const cc[] = { "gcc", "clang" };
	struct dsc_plan *plans[2] = { NULL, NULL }, *strip = NULL;
	char lib[2][PATH_MAX + 32], stripped[PATH_MAX + 32];

	setvbuf(stdout, NULL, _IOLBF, 0);
	unsetenv("STACKCLOCK_DEBUG_ROOT");
	test_forms();
	find_progs();
	if (!mkdtemp(templ) || !realpath(templ, tmp)) {
		ok(0, "make a temporary directory: %s", strerror(errno));
		return tap_done();
	}
	for (int k = 0; k < 2; k++) {
		snprintf(lib[k], sizeof(lib[k]), "%s/patch_%s.so", tmp, cc[k]);
		if (!ok(sh("%s -O2 -g -shared -fPIC -fvisibility=hidden %s/patch_lib.c -o %s",
			   cc[k], progs, lib[k]) == 0, "build patch_lib with %s", cc[k]))
			continue;
		if (!ok(dsc_plan_build(lib[k], &plans[k]) == 0, "%s: plan built", cc[k]))
			continue;
		check_decisions(plans[k], cc[k]);
		run_entries(lib[k], plans[k], cc[k]);
	}
	test_data_words();
	{
		char cache[PATH_MAX + 16];

		snprintf(cache, sizeof(cache), "%s/cache", tmp);
		setenv("STACKCLOCK_CACHE_DIR", cache, 1);
	}
	if (plans[0])
		test_plan_file(lib[0], plans[0]);
	test_call_sites();
	startup_python3();
	snprintf(stripped, sizeof(stripped), "%s/patch_stripped.so", tmp);
	if (plans[0] && ok(sh("strip -o %s %s", stripped, lib[0]) == 0, "strip a copy") &&
	    ok(dsc_plan_build(stripped, &strip) == 0, "stripped: plan built"))
		check_stripped(plans[0], strip);
	dsc_plan_free(plans[0]);
	dsc_plan_free(plans[1]);
	dsc_plan_free(strip);
	test_system();
	sh("rm -rf %s", tmp);
	return tap_done();
}
