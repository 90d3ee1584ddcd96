/*
 * test_unwind — the CFI unwinder on real stacks of this very process.
 *
 * This binary is built -O2 (no frame pointers on x86-64), so its own call
 * chains are what the sampler meets.  Each test function records its own
 * return address (__builtin_return_address(0), which the compiler finds
 * without frame pointers), then the innermost one snapshots registers and
 * the stack the way a perf sample does; unw_unwind() must give back exactly
 * those return addresses, in order, and reach the root (_start).
 * Also: a frame with a variable-length array (CFA from rbp), 200 levels of
 * recursion (unwound whole, or flagged truncated when the copy is cut), a
 * signal frame (through __restore_rt), an epilogue after rbp is popped,
 * frames whose CFA is rbx-based (glibc's lazy-binding resolver), table
 * lookups, mapping overlaps.
 */
#include "tap.h"
#include "unwind/unwind.h"
#include "unwind/unwind_int.h"
#include "util/util.h"

#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <signal.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define COPY_MAX 65536
#define MAX_FRAMES 1024

struct snap {
	struct unw_regs regs;
	uint8_t *stack;               /* copy of [sp, sp + size) */
	size_t size;
};

static uint64_t stack_end;        /* end of the [stack] mapping */
static char libc_path[4096];      /* the libc this test runs with */
static struct unw_cache *cache;
static struct unw_space *space;
static struct snap snap;

/* Return addresses recorded by each test function, innermost first. */
static uint64_t ras[512];
static int nras;

static void *volatile keep;       /* defeats sibling calls and inlining */
static volatile uint64_t sink;

/* The executable mappings of this process, as the recorder reads them. */
static void load_self_maps(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[4096];

	space = unw_space_new();
	while (f && fgets(line, sizeof(line), f)) {
		unsigned long long start, end, pgoff;
		char perms[8];
		int at = 0;

		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %n", &start, &end, perms, &pgoff, &at) < 4)
			continue;
		line[strcspn(line, "\n")] = 0;
		if (strstr(line, "[stack]"))
			stack_end = end;
		if (at && strstr(line + at, "/libc.so"))
			snprintf(libc_path, sizeof(libc_path), "%s", line + at);
		if (!strchr(perms, 'x'))
			continue;
		unw_space_add(space, start, end, pgoff,
			      at && (line[at] == '/' || !strcmp(line + at, "[vdso]"))
			      ? unw_cache_module(cache, line + at, NULL, 0) : NULL);
	}
	if (f)
		fclose(f);
}

/* Copy raw stack bytes, redzones included (as the kernel does): not a bug
 * for AddressSanitizer to report. */
__attribute__((no_sanitize_address, noinline))
static void copy_raw(uint8_t *dst, const volatile uint8_t *src, size_t n)
{
	for (size_t i = 0; i < n; i++)
		dst[i] = src[i];
}

/*
 * Snapshot pc, sp, bp, rbx and r12-r15 at one instruction, and the stack
 * above sp.  The callee-saved registers go straight to memory: an output
 * register could be one of them, written before it is read.
 */
__attribute__((noinline)) static void capture(void)
{
	uint64_t ip, sp, bp, cs[UNW_NREGS];

	__asm__ volatile("lea 0(%%rip), %0\n\tmov %%rsp, %1\n\tmov %%rbp, %2\n\t"
			 "mov %%rbx, %3\n\tmov %%r12, %4\n\tmov %%r13, %5\n\t"
			 "mov %%r14, %6\n\tmov %%r15, %7"
			 : "=r"(ip), "=r"(sp), "=r"(bp), "=m"(cs[UNW_REG_RBX]),
			   "=m"(cs[UNW_REG_R12]), "=m"(cs[UNW_REG_R13]),
			   "=m"(cs[UNW_REG_R14]), "=m"(cs[UNW_REG_R15]));
	snap.regs = (struct unw_regs){ .ip = ip, .sp = sp, .bp = bp,
				       .regs_known = (1u << UNW_NREGS) - 1 };
	memcpy(snap.regs.regs, cs, sizeof(cs));
	snap.size = stack_end - sp < COPY_MAX ? stack_end - sp : COPY_MAX;
	copy_raw(snap.stack, (const volatile uint8_t *)sp, snap.size);
	ras[nras++] = (uint64_t)__builtin_return_address(0);
}

__attribute__((noinline)) static void leaf(void)
{
	capture();
	ras[nras++] = (uint64_t)__builtin_return_address(0);
	keep = (void *)leaf;
}

/* A variable-length array makes gcc keep a frame pointer here: CFA = rbp+16. */
__attribute__((noinline)) static void with_vla(int n)
{
	volatile char buf[n];

	buf[0] = 1;
	leaf();
	ras[nras++] = (uint64_t)__builtin_return_address(0);
	sink += buf[0];
}

__attribute__((noinline)) static void middle(int n)
{
	with_vla(n);
	ras[nras++] = (uint64_t)__builtin_return_address(0);
	keep = (void *)middle;
}

__attribute__((noinline)) static void recurse(int depth)
{
	volatile uint64_t pad[2] = { (uint64_t)depth, 0 };

	if (depth > 0)
		recurse(depth - 1);
	else
		leaf();
	ras[nras++] = (uint64_t)__builtin_return_address(0);
	sink += pad[0];
}

/* The unwinder's output must start with the recorded return addresses. */
static bool matches_ras(const uint64_t *ips, unsigned n)
{
	if (n < (unsigned)nras + 1)
		return false;
	for (int i = 0; i < nras; i++)
		if (ips[i + 1] != ras[i])
			return false;
	return true;
}

static void unwind_snap(size_t size, bool full, uint64_t *ips, struct unw_result *res)
{
	struct unw_stack st = {
		.data = snap.stack, .start = snap.regs.sp,
		.size = size < snap.size ? size : snap.size, .full = full,
	};

	unw_unwind(space, &snap.regs, &st, ips, MAX_FRAMES, res);
}

/*
 * unw_unwind_slots(): the same frames, and for each return address the
 * stack slot it was read from (attaching redirects those slots): inside
 * the copy, holding that very address, each caller's above its callee's.
 */
static void check_slots(const char *what)
{
	uint64_t ips[MAX_FRAMES], ips2[MAX_FRAMES], slots[MAX_FRAMES];
	struct unw_result res, res2;
	struct unw_stack st = { .data = snap.stack, .start = snap.regs.sp, .size = snap.size };
	unsigned bad = 0;

	unw_unwind(space, &snap.regs, &st, ips, MAX_FRAMES, &res);
	unw_unwind_slots(space, &snap.regs, &st, ips2, slots, MAX_FRAMES, &res2);
	ok(res.nframes == res2.nframes && !memcmp(ips, ips2, res.nframes * sizeof(ips[0])) &&
	   res.flags == res2.flags, "%s: unw_unwind_slots gives unw_unwind's %u frames", what, res.nframes);
	for (unsigned i = 1; i < res2.nframes; i++) {
		uint64_t v;

		if (slots[i] < st.start || slots[i] + 8 > st.start + st.size ||
		    (i > 1 && slots[i] <= slots[i - 1])) {
			bad++;
			continue;
		}
		memcpy(&v, snap.stack + (slots[i] - st.start), 8);
		bad += v != ips2[i];
	}
	ok(slots[0] == 0 && res2.nframes > 3 && bad == 0,
	   "%s: each return address's slot holds it, callers' above callees' (%u of %u wrong)", what, bad,
	   res2.nframes - 1);
}

static void test_chain(void)
{
	uint64_t ips[MAX_FRAMES];
	struct unw_result res;

	nras = 0;
	middle(40);
	unwind_snap(COPY_MAX, false, ips, &res);
	ok(res.flags & UNW_ROOT, "chain through a VLA frame reaches the root (stop: %s, %u frames)",
	   unw_stop_name(res.stop), res.nframes);
	ok(matches_ras(ips, res.nframes), "frames are capture, leaf, with_vla, middle, caller (%d checked)", nras);
	ok(ips[0] == snap.regs.ip, "frame 0 is the sampled pc");
	check_slots("chain");
}

static void test_recursion(void)
{
	uint64_t ips[MAX_FRAMES];
	struct unw_result res;
	size_t used;

	nras = 0;
	recurse(200);
	unwind_snap(COPY_MAX, false, ips, &res);
	ok(res.flags & UNW_ROOT, "200 levels of recursion reach the root (stop: %s, %u frames)",
	   unw_stop_name(res.stop), res.nframes);
	ok(matches_ras(ips, res.nframes), "every recursive frame is there (%d return addresses)", nras);
	check_slots("recursion");

	/* The same stack copied only in part: flagged, never silently cut. */
	used = 2048;
	unwind_snap(used, true, ips, &res);
	ok(res.flags & UNW_TRUNCATED, "a copy cut at %zu bytes gives a truncated stack (stop: %s)",
	   used, unw_stop_name(res.stop));
	ok(!(res.flags & UNW_ROOT) && res.nframes > 10 && res.nframes < 200,
	   "truncated stack keeps the %u frames inside the copy", res.nframes);

	/*
	 * A copy that ended before its capacity (the stack's end, or a page
	 * the kernel could not read) is not "deeper": a failed walk, which
	 * says so, for the recorder to read the missing pages in.
	 */
	unwind_snap(used, false, ips, &res);
	ok(!(res.flags & (UNW_TRUNCATED | UNW_ROOT)) && res.stop == UNW_STOP_SHORT_COPY,
	   "reading past a short copy is a failed walk, not truncation (stop: %s)",
	   unw_stop_name(res.stop));

	/* The caller's array is full: truncated too. */
	{
		struct unw_stack st = { .data = snap.stack, .start = snap.regs.sp, .size = snap.size };
		unw_unwind(space, &snap.regs, &st, ips, 50, &res);
		ok(res.nframes == 50 && (res.flags & UNW_TRUNCATED),
		   "more frames than room: 50 frames, truncated (stop: %s)", unw_stop_name(res.stop));
	}
}

static volatile sig_atomic_t in_handler;

static void on_signal(int sig)
{
	in_handler = 1;
	capture();
	keep = (void *)on_signal;
}

__attribute__((noinline)) static void raise_here(void)
{
	raise(SIGUSR1);
	ras[0] = (uint64_t)__builtin_return_address(0);
	keep = (void *)raise_here;
}

static void test_signal_frame(void)
{
	uint64_t ips[MAX_FRAMES];
	struct unw_result res;
	bool found = false;

	signal(SIGUSR1, on_signal);
	nras = 0;
	raise_here();
	ok(in_handler, "signal handler ran");
	unwind_snap(COPY_MAX, false, ips, &res);
	for (unsigned i = 0; i < res.nframes; i++)
		found |= ips[i] == ras[0];
	ok(res.flags & UNW_ROOT, "unwinding from a signal handler reaches the root (stop: %s, %u frames)",
	   unw_stop_name(res.stop), res.nframes);
	ok(found, "through __restore_rt into the interrupted code and its caller");
	signal(SIGUSR1, SIG_DFL);
}

static void test_tables(void)
{
	struct unw_module *self = unw_cache_module(cache, "/proc/self/exe", NULL, 0);
	struct unw_module *vdso = unw_cache_module(cache, "[vdso]", NULL, 0);
	struct unw_table *t = unw_module_table(self);
	const uint8_t *id;
	struct unw_table *bad;
	size_t built;

	ok(t && unw_table_nfdes(t) > 10, "a table for this binary (%zu FDEs)", t ? unw_table_nfdes(t) : 0);
	ok(unw_module_table(self) == t, "opened once, then cached");
	ok(unw_cache_module(cache, "/proc/self/exe", NULL, 0) == self, "one cache entry per path");
	ok(unw_module_table(vdso) && unw_table_nfdes(unw_module_table(vdso)) > 0,
	   "a table for the vdso, from the recorder's own image");
	built = t ? unw_table_nrows(t) : 0;
	if (t)
		unw_table_build_all(t);
	ok(t && built < unw_table_nrows(t) / 2,
	   "rows are built on demand: %zu of %zu after the walks above",
	   built, t ? unw_table_nrows(t) : 0);
	ok(unw_module_build_id(self, &id) == 20, "build-id read from the file");
	is_u64(unw_table_build_file("/nonexistent/x", &bad), -ENOENT, "missing file: -ENOENT");

	/* A file its path no longer leads to, read through a descriptor. */
	{
		const uint8_t *fid;
		struct unw_module *gone = unw_cache_module_fd(cache, "/gone/self",
							      open("/proc/self/exe", O_RDONLY));
		struct unw_module *again = unw_cache_module_fd(cache, "/gone/self",
							       open("/proc/self/exe", O_RDONLY));
		struct unw_table *gt = unw_module_table(gone);

		ok(gt && unw_table_nfdes(gt) == unw_table_nfdes(t),
		   "a module read through a descriptor: same table as the file's");
		ok(unw_module_build_id(gone, &fid) == 20 && !memcmp(fid, id, 20) &&
		   !strcmp(unw_module_path(gone), "/gone/self"),
		   "it keeps its path and the file's build-id");
		ok(again == gone, "the same file again: one entry (by build-id)");
		ok(unw_cache_module(cache, "/gone/self", id, 20) == gone,
		   "and a mapping record of that path and build-id shares it");
	}
	is_u64(unw_table_build_file("/proc/self/status", &bad), -ENOEXEC, "not ELF: -ENOEXEC");

	/* At capture()'s first instruction, found through the mapping of the
	 * running code: CFA = rsp+8, the return address at [rsp]. */
	{
		uint64_t ips[4];
		struct unw_result res;
		uint8_t fake[64] = { 0 };
		uint64_t ret = (uint64_t)(uintptr_t)leaf + 1;
		struct unw_regs regs = { .ip = (uint64_t)(uintptr_t)capture, .sp = 0x1000, .bp = 0 };
		struct unw_stack st = { .data = fake, .start = 0x1000, .size = sizeof(fake) };

		memcpy(fake, &ret, 8);
		unw_unwind(space, &regs, &st, ips, 2, &res);
		ok(res.nframes == 2 && ips[1] == ret,
		   "synthetic entry state: return address read at [rsp]");
	}
}

/*
 * Epilogues: after "pop %rbp" the CFI still says rbp is saved at CFA-N
 * (compilers mark no restores), a slot now below sp and outside the copy.
 * The walk must take rbp as restored, not fail.  Such a row is looked up
 * in this binary's own table and run on a synthetic stack.
 */
/*
 * Frames whose CFA is not rsp/rbp-based, as glibc's lazy-binding resolver
 * (_dl_runtime_resolve_xsavec: push %rbx; mov %rsp,%rbx; and $-64,%rsp,
 * then the CFA is rbx+N).  Hand-written, CFI included:
 *   rbx_frame(fn)    the same shape (CFA = rbx+16), calls fn(); stores its
 *                    own return address in rbx_frame_ra
 *   clobber_rbx(fn)  saves rbx (CFA-16), puts junk in it, calls fn(): the
 *                    walk must take rbx_frame's rbx from the save slot
 *   rcx_frame(fn)    CFA = rcx+16: a register the walk does not track
 * *_call labels the call instruction, *_ret the return address after it.
 */
uint64_t rbx_frame_ra;
void rbx_frame(void (*fn)(void));
void clobber_rbx(void (*fn)(void));
void rcx_frame(void (*fn)(void));
extern const char rbx_frame_call[], rbx_frame_ret[], clobber_rbx_call[], clobber_rbx_ret[],
	rcx_frame_call[];
__asm__(
	".text\n"
	".globl rbx_frame\n.type rbx_frame, @function\n"
	"rbx_frame:\n"
	"	.cfi_startproc\n"
	"	mov (%rsp), %rax\n"
	"	mov %rax, rbx_frame_ra(%rip)\n"
	"	push %rbx\n"
	"	.cfi_def_cfa_offset 16\n"
	"	.cfi_offset %rbx, -16\n"
	"	mov %rsp, %rbx\n"
	"	.cfi_def_cfa_register %rbx\n"
	"	and $-64, %rsp\n"
	"	sub $64, %rsp\n"
	".globl rbx_frame_call\n"
	"rbx_frame_call:\n"
	"	call *%rdi\n"
	".globl rbx_frame_ret\n"
	"rbx_frame_ret:\n"
	"	mov %rbx, %rsp\n"
	"	.cfi_def_cfa_register %rsp\n"
	"	pop %rbx\n"
	"	.cfi_restore %rbx\n"
	"	.cfi_def_cfa_offset 8\n"
	"	ret\n"
	"	.cfi_endproc\n"
	".size rbx_frame, .-rbx_frame\n"

	".globl clobber_rbx\n.type clobber_rbx, @function\n"
	"clobber_rbx:\n"
	"	.cfi_startproc\n"
	"	push %rbx\n"
	"	.cfi_def_cfa_offset 16\n"
	"	.cfi_offset %rbx, -16\n"
	"	movabs $0x5a5a5a5a5a5a5a5a, %rbx\n"
	".globl clobber_rbx_call\n"
	"clobber_rbx_call:\n"
	"	call *%rdi\n"
	".globl clobber_rbx_ret\n"
	"clobber_rbx_ret:\n"
	"	pop %rbx\n"
	"	.cfi_restore %rbx\n"
	"	.cfi_def_cfa_offset 8\n"
	"	ret\n"
	"	.cfi_endproc\n"
	".size clobber_rbx, .-clobber_rbx\n"

	".globl rcx_frame\n.type rcx_frame, @function\n"
	"rcx_frame:\n"
	"	.cfi_startproc\n"
	"	push %rbx\n"
	"	.cfi_def_cfa_offset 16\n"
	"	.cfi_offset %rbx, -16\n"
	"	mov %rsp, %rcx\n"
	"	.cfi_def_cfa_register %rcx\n"
	".globl rcx_frame_call\n"
	"rcx_frame_call:\n"
	"	call *%rdi\n"
	"	.cfi_def_cfa_register %rsp\n"
	"	pop %rbx\n"
	"	.cfi_restore %rbx\n"
	"	.cfi_def_cfa_offset 8\n"
	"	ret\n"
	"	.cfi_endproc\n"
	".size rcx_frame, .-rcx_frame\n");

/* Called by rbx_frame: clobber_rbx -> leaf -> capture. */
__attribute__((noinline)) static void via_clobber(void)
{
	clobber_rbx(leaf);
	keep = (void *)via_clobber;
}

/* Is x at some ips[i], i >= from?  Its index, or -1. */
static int index_of(const uint64_t *ips, unsigned n, unsigned from, uint64_t x)
{
	for (unsigned i = from; i < n; i++)
		if (ips[i] == x)
			return (int)i;
	return -1;
}

/*
 * A real chain through rbx_frame, sampled in capture(): the walk follows
 * the CFA from rbx, taking rbx_frame's rbx from clobber_rbx's save slot
 * (rbx holds junk there), on to the root.  Then synthetic stacks: one step
 * of the CFA rule rbx+16 with known values; rbx restored from a callee's
 * slot; rbx unknown, and a CFA from rcx (untracked): a clean stop, no
 * frame read through a guess.
 */
static void test_cfa_from_rbx(void)
{
	uint64_t ips[MAX_FRAMES];
	struct unw_result res;
	uint64_t ret = (uint64_t)(uintptr_t)leaf + 1;
	int i_clobber, i_rbx;

	nras = 0;
	rbx_frame(via_clobber);
	unwind_snap(COPY_MAX, false, ips, &res);
	ok(res.flags & UNW_ROOT, "a chain through a frame whose CFA is rbx+16 reaches the root "
	   "(stop: %s, %u frames)", unw_stop_name(res.stop), res.nframes);
	i_clobber = index_of(ips, res.nframes, 1, (uint64_t)(uintptr_t)clobber_rbx_ret);
	i_rbx = index_of(ips, res.nframes, 1, (uint64_t)(uintptr_t)rbx_frame_ret);
	ok(nras == 2 && ips[1] == ras[0] && ips[2] == ras[1] && i_clobber == 2 && i_rbx == 4 &&
	   ips[5] == rbx_frame_ra,
	   "frames: capture, leaf, clobber_rbx, via_clobber, rbx_frame, its caller "
	   "(clobber_rbx at %d, rbx_frame at %d)", i_clobber, i_rbx);

	/* One step by the rule, synthetic: CFA = rbx + 16, return address at CFA - 8. */
	{
		uint8_t fake[256] = { 0 };
		struct unw_regs regs = { .ip = (uint64_t)(uintptr_t)rbx_frame_call, .sp = 0x10000,
					 .bp = 0, .regs = { [UNW_REG_RBX] = 0x10000 + 96 },
					 .regs_known = 1u << UNW_REG_RBX };
		struct unw_stack st = { .data = fake, .start = 0x10000, .size = sizeof(fake) };

		memcpy(fake + 96 + 8, &ret, 8);
		unw_unwind(space, &regs, &st, ips, 2, &res);
		ok(res.nframes == 2 && ips[1] == ret,
		   "synthetic rbx_frame: return address read at rbx+8 (%u frames, stop: %s)",
		   res.nframes, unw_stop_name(res.stop));

		/* rbx not sampled: no rule can be applied, no frame guessed. */
		regs.regs_known = 0;
		memset(ips, 0, 2 * sizeof(ips[0]));
		unw_unwind(space, &regs, &st, ips, 2, &res);
		ok(res.nframes == 1 && !(res.flags & (UNW_ROOT | UNW_TRUNCATED)),
		   "rbx unknown: the walk stops cleanly after the sampled pc (%u frames, stop: %s)",
		   res.nframes, unw_stop_name(res.stop));
	}

	/*
	 * Sampled in clobber_rbx (rbx = junk, the caller's at [sp]), which
	 * rbx_frame called: rbx_frame's CFA comes from the restored rbx.
	 */
	{
		uint8_t fake[512] = { 0 };
		uint64_t saved_rbx = 0x10000 + 256, r1 = (uint64_t)(uintptr_t)rbx_frame_ret;
		struct unw_regs regs = { .ip = (uint64_t)(uintptr_t)clobber_rbx_call, .sp = 0x10000,
					 .bp = 0, .regs = { [UNW_REG_RBX] = 0x5a5a5a5a5a5a5a5aULL },
					 .regs_known = (1u << UNW_NREGS) - 1 };
		struct unw_stack st = { .data = fake, .start = 0x10000, .size = sizeof(fake) };

		memcpy(fake, &saved_rbx, 8);            /* CFA - 16 */
		memcpy(fake + 8, &r1, 8);               /* CFA - 8 */
		memcpy(fake + 256 + 8, &ret, 8);        /* rbx_frame's CFA - 8 */
		memset(ips, 0, 3 * sizeof(ips[0]));
		unw_unwind(space, &regs, &st, ips, 3, &res);
		ok(res.nframes == 3 && ips[1] == r1 && ips[2] == ret,
		   "rbx restored from the callee's save slot, then the CFA from it (%u frames, stop: %s)",
		   res.nframes, unw_stop_name(res.stop));
	}

	/* CFA = rcx + 16: rcx is not tracked, the row counts as no CFI. */
	{
		uint8_t fake[256] = { 0 };
		struct unw_regs regs = { .ip = (uint64_t)(uintptr_t)rcx_frame_call, .sp = 0x10000,
					 .bp = 0, .regs_known = (1u << UNW_NREGS) - 1 };
		struct unw_stack st = { .data = fake, .start = 0x10000, .size = sizeof(fake) };

		memcpy(fake + 8, &ret, 8);
		memset(ips, 0, 2 * sizeof(ips[0]));
		unw_unwind(space, &regs, &st, ips, 2, &res);
		ok(res.nframes == 1 && ips[1] == 0 && !(res.flags & (UNW_ROOT | UNW_TRUNCATED)),
		   "CFA from rcx (not tracked): a clean stop (%u frames, stop: %s)",
		   res.nframes, unw_stop_name(res.stop));
	}
}

static int find_bias(struct dl_phdr_info *info, size_t size, void *data)
{
	*(uint64_t *)data = info->dlpi_addr;   /* the first object: us */
	return 1;
}

static void test_epilogue(void)
{
	struct unw_module *self = unw_cache_module(cache, "/proc/self/exe", NULL, 0);
	struct unw_table *t = unw_module_table(self);
	const struct unw_row *row = NULL;
	uint64_t bias = 0, ips[2], ret = (uint64_t)(uintptr_t)leaf + 1;
	uint8_t fake[256] = { 0 };
	struct unw_result res;

	if (t)
		unw_table_build_all(t);
	for (size_t i = 0; t && i < t->nrows && !row; i++) {
		const struct unw_row *r = &t->rows[i];
		if (r->cfa == UNW_CFA_RSP && r->ra == UNW_LOC_CFA && r->rbp == UNW_LOC_CFA &&
		    r->cfa_off + r->rbp_off < 0 && r->cfa_off < (int)sizeof(fake))
			row = r;
	}
	if (!ok(row, "an epilogue row (rbp popped, slot below sp) in this binary"))
		return;
	dl_iterate_phdr(find_bias, &bias);
	{
		struct unw_regs regs = { .ip = bias + t->base + row->start, .sp = 0x10000, .bp = 0x4242 };
		struct unw_stack st = { .data = fake, .start = 0x10000, .size = sizeof(fake) };

		memcpy(fake + row->cfa_off + row->ra_off, &ret, 8);
		unw_unwind(space, &regs, &st, ips, 2, &res);
		ok(res.nframes == 2 && ips[1] == ret,
		   "unwound out of an epilogue (stop: %s, %u frames)", unw_stop_name(res.stop), res.nframes);
	}
}

/*
 * A walk that goes astray reads a return address from the wrong slot: once
 * (before the DW_CFA_restore_state fix) glibc's msort epilogue rows gave
 * 0x4, 0x6, 0xffffffffffffff80.  Such a value is in no executable mapping;
 * it must end the stack as a failed walk (neither root nor truncated),
 * never be stored as a frame.  Zero too: outside a root function it is a
 * zeroed slot, not the end of the chain (Rust binaries linked by lld once
 * had 2-4 % of their samples counted as reaching the root that way, from
 * rows of the wrong function).  Two cases on synthetic stacks: at capture()'s
 * first instruction (the return address at [rsp] is junk), and one real
 * step out of capture() into leaf() whose own return slot holds junk.
 */
static void test_junk_return(void)
{
	static const uint64_t junk[] = {
		0xffffffffffffff80ULL, 0x4, 0x6,
		0x10040,                   /* the (fake) stack itself: not code */
		0,                         /* a zeroed local: the end of the
					      chain only in a root function */
	};
	struct unw_module *self = unw_cache_module(cache, "/proc/self/exe", NULL, 0);
	struct unw_table *t = unw_module_table(self);
	const struct unw_row *row;
	uint64_t bias = 0, ret_in_leaf, ips[8];
	struct unw_result res;

	nras = 0;
	leaf();
	ret_in_leaf = ras[0];               /* capture()'s return address */
	dl_iterate_phdr(find_bias, &bias);
	row = t ? unw_table_find(t, ret_in_leaf - 1 - bias) : NULL;
	if (!ok(row && (row->cfa == UNW_CFA_RSP || row->cfa == UNW_CFA_RBP) &&
		row->ra == UNW_LOC_CFA && row->cfa_off + row->ra_off >= 0 &&
		row->cfa_off + row->ra_off <= 128,
		"leaf()'s row after its call: CFA from rsp or rbp, return address saved"))
		return;
	for (size_t i = 0; i < ARRAY_SIZE(junk); i++) {
		uint8_t fake[256] = { 0 };
		/* rbp is unchanged at capture()'s entry: leaf()'s frame base
		 * if leaf() keeps one (sanitizer builds). */
		struct unw_regs regs = { .ip = (uint64_t)(uintptr_t)capture, .sp = 0x10000,
					 .bp = 0x10000 + 64 };
		struct unw_stack st = { .data = fake, .start = 0x10000, .size = sizeof(fake) };
		uint64_t cfa = (row->cfa == UNW_CFA_RSP ? regs.sp + 8 : regs.bp) + row->cfa_off;
		bool clean;

		memcpy(fake, &junk[i], 8);
		memset(ips, 0, sizeof(ips));
		unw_unwind(space, &regs, &st, ips, ARRAY_SIZE(ips), &res);
		clean = res.nframes == 1 && ips[1] == 0 && res.stop == UNW_STOP_NO_MAP &&
			!(res.flags & (UNW_ROOT | UNW_TRUNCATED));
		ok(clean, "return address 0x%llx at the leaf: stack ends (%u frames, stop: %s)",
		   (unsigned long long)junk[i], res.nframes, unw_stop_name(res.stop));

		/* [sp] returns into leaf(), whose return slot holds the junk. */
		memset(fake, 0, sizeof(fake));
		memcpy(fake, &ret_in_leaf, 8);
		memcpy(fake + (cfa + row->ra_off - st.start), &junk[i], 8);
		memset(ips, 0, sizeof(ips));
		unw_unwind(space, &regs, &st, ips, ARRAY_SIZE(ips), &res);
		clean = res.nframes == 2 && ips[1] == ret_in_leaf && ips[2] == 0 &&
			res.stop == UNW_STOP_NO_MAP && !(res.flags & (UNW_ROOT | UNW_TRUNCATED));
		ok(clean, "return address 0x%llx one frame up: stack ends after leaf (%u frames, stop: %s)",
		   (unsigned long long)junk[i], res.nframes, unw_stop_name(res.stop));
	}
}

/*
 * Rows are computed on demand, in whatever order samples come.  Order must
 * not matter: libdw reports a wrong row start after DW_CFA_restore_state
 * (glibc's epilogues use it), which once let a body row shadow an
 * epilogue.  Random lookups over libc and this binary are compared with a
 * sequential walk of fresh tables.
 */
static bool same_row(const struct unw_row *a, const struct unw_row *b)
{
	if (!a || !b)
		return a == b;
	return a->cfa == b->cfa && a->cfa_off == b->cfa_off && a->ra == b->ra &&
	       a->ra_off == b->ra_off && a->rbp == b->rbp && a->rbp_off == b->rbp_off &&
	       a->aux == b->aux && a->cfa_reg == b->cfa_reg && a->reg_loc == b->reg_loc &&
	       !memcmp(a->reg_off8, b->reg_off8, sizeof(a->reg_off8));
}

static void test_lookup_order(const char *path)
{
	struct unw_table *seq, *rnd;
	uint64_t x = 88172645463325252ULL;
	unsigned bad = 0, n = 0;

	if (unw_table_build_file(path, &seq) || unw_table_build_file(path, &rnd)) {
		ok(0, "tables of %s", path);
		return;
	}
	unw_table_build_all(seq);
	for (int i = 0; i < 200000; i++) {
		const struct unw_fde *f;
		uint64_t vaddr;

		x ^= x << 13; x ^= x >> 7; x ^= x << 17;          /* xorshift */
		f = &rnd->fdes[x % rnd->nfdes];
		vaddr = f->lo + (x >> 32) % (f->hi - f->lo);
		n++;
		bad += !same_row(unw_table_find(rnd, vaddr), unw_table_find(seq, vaddr));
	}
	ok(bad == 0, "%s: random-order lookups agree with a sequential walk (%u of %u differ)",
	   path, bad, n);
	unw_table_free(seq);
	unw_table_free(rnd);
}

/*
 * lld starts the code segment in the file page that ends the read-only
 * one, at the next page of addresses (here the layout of a Rust binary:
 * R at offset 0, 0x15690 bytes; R E at offset 0x15690, vaddr 0x16690).
 * The executable mapping starts at file offset 0x15000, which both
 * segments hold: it is the code segment's page, vaddr 0x16000.
 */
static void test_shared_page(void)
{
	struct unw_seg segs[] = {
		{ .offset = 0, .filesz = 0x15690, .vaddr = 0, .align = 0x1000 },
		{ .offset = 0x15690, .filesz = 0x41a00, .vaddr = 0x16690, .align = 0x1000, .exec = true },
		{ .offset = 0x57090, .filesz = 0x2c38, .vaddr = 0x59090, .align = 0x1000 },
	};
	struct unw_table t = { .segs = segs, .nsegs = ARRAY_SIZE(segs) };
	static const struct { uint64_t off, vaddr; const char *what; } cases[] = {
		{ 0x15000, 0x16000, "the page the read-only and code segments share: the code's" },
		{ 0x1000, 0x1000, "a page only the read-only segment holds: its own" },
		{ 0x57000, 0x58000, "the page the code and data segments share: the code's" },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		uint64_t vaddr = 0;
		bool found = unw_table_off_to_vaddr(&t, cases[i].off, &vaddr);

		ok(found && vaddr == cases[i].vaddr, "file offset 0x%llx, %s (vaddr 0x%llx, want 0x%llx)",
		   (unsigned long long)cases[i].off, cases[i].what, (unsigned long long)vaddr,
		   (unsigned long long)cases[i].vaddr);
	}
}

static void test_space(void)
{
	struct unw_space *s = unw_space_new(), *c;
	struct unw_mapping m;

	unw_space_add(s, 0x1000, 0x5000, 0, NULL);
	unw_space_add(s, 0x8000, 0x9000, 0, NULL);
	unw_space_add(s, 0x2000, 0x3000, 0x10000, NULL);    /* splits the first */
	is_u64(unw_space_count(s), 4, "a mapping inside another splits it");
	unw_space_get(s, 2, &m);
	ok(m.start == 0x3000 && m.end == 0x5000 && m.pgoff == 0x2000,
	   "the right part keeps its file offset (0x%llx-0x%llx @0x%llx)",
	   (unsigned long long)m.start, (unsigned long long)m.end, (unsigned long long)m.pgoff);
	unw_space_add(s, 0x0, 0x8800, 0, NULL);              /* covers three, cuts one */
	is_u64(unw_space_count(s), 2, "a covering mapping replaces what it covers");
	unw_space_get(s, 1, &m);
	ok(m.start == 0x8800 && m.end == 0x9000 && m.pgoff == 0x800, "and trims what it overlaps");
	c = unw_space_clone(s);
	unw_space_add(s, 0x20000, 0x21000, 0, NULL);
	ok(unw_space_count(c) == 2 && unw_space_count(s) == 3, "a clone is independent");
	unw_space_free(c);
	unw_space_free(s);
}

int main(void)
{
	cache = unw_cache_new();
	snap.stack = xmalloc(COPY_MAX);
	load_self_maps();
	ok(stack_end && unw_space_count(space) >= 3, "own mappings read (%zu executable)",
	   unw_space_count(space));

	test_chain();
	test_recursion();
	test_signal_frame();
	test_cfa_from_rbx();
	test_tables();
	test_epilogue();
	test_junk_return();
	test_lookup_order("/proc/self/exe");
	if (libc_path[0])
		test_lookup_order(libc_path);
	test_shared_page();
	test_space();

	unw_space_free(space);
	unw_cache_free(cache);
	free(snap.stack);
	return tap_done();
}
