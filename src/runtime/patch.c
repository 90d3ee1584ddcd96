/*
 * patch — applying patch plans to the objects loaded in this process (see
 * patch.h for the parts and the environment; docs/patching.md for what a
 * plan holds).
 *
 * For each loaded object whose GNU build-id is a plan's (or, for a plan
 * without one, the main program when its device and inode are the
 * recorder's), once:
 *   1. the plan file is mapped and checked (plan_file_check): a plan this
 *      build cannot read, or one that does not match, patches nothing;
 *   2. one region for the stubs is mapped within a rel32 jump of the whole
 *      object (below it first: above the main program is where its heap
 *      grows), each function's stub and relocated entry written there by
 *      arithmetic (rel_entry_place), the region made read+execute;
 *   3. the object's executable segments are made writable, each site gets
 *      its `jmp stub`, the segments get their own protections back.
 * A function whose trampoline cannot reach its targets from the region is
 * counted as out_of_reach and left alone.  Everything is done with system
 * calls: no function the program could define is called (dl_iterate_phdr
 * and dlsym are the loader's).
 */
#include "runtime/patch.h"
#include "runtime/dynsym.h"
#include "runtime/libcall.h"
#include "runtime/shm.h"
#include "runtime/sys.h"
#include "record/plan_file.h"

#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <errno.h>
#include <sys/stat.h>
#include <time.h>

#define HOOK __attribute__((visibility("default")))
#define PAGE 4096ul
#define REACH ((1ull << 31) - (1ull << 20))  /* what a rel32 spans, with room */

void sc_patch_retstack_init(void);

/* A plan file, mapped for the life of the process (read-only, shared
 * with the page cache): an object it is for may be loaded any time. */
struct plan_ref {
	const struct plan_file_header *h;   /* NULL: unusable */
	const struct plan_file_entry *v;
	size_t n;
	uint64_t len;
};

int sc_patch_on __attribute__((used));   /* read by dlopen's assembly */

static struct {
	struct plan_ref plans[SC_PATCH_MAX_PLANS];
	int nplans;
	uint64_t exe_dev, exe_ino;      /* STACKCLOCK_PATCH_EXE, 0 if absent */
	struct { uint64_t lo, hi; } regions[1024];  /* the stub regions */
	int nregions;
	uint64_t patched_base[SC_SHM_MAX_PATCHED];   /* objects patched here */
	int npatched;
	int lock;                       /* dlopens of two threads */
} pt;

/* The object's GNU build-id, from its notes in memory; its length or 0. */
static uint32_t obj_build_id(const struct dl_phdr_info *info, const uint8_t **id)
{
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		const uint8_t *p, *end;

		if (ph->p_type != PT_NOTE)
			continue;
		p = (const uint8_t *)(info->dlpi_addr + ph->p_vaddr);
		end = p + ph->p_memsz;
		while (p + sizeof(ElfW(Nhdr)) <= end) {
			const ElfW(Nhdr) *nh = (const ElfW(Nhdr) *)p;
			const uint8_t *name = p + sizeof(*nh);
			const uint8_t *desc = name + ((nh->n_namesz + 3) & ~3u);

			if (desc + nh->n_descsz > end)
				break;
			if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 && name[0] == 'G' &&
			    name[1] == 'N' && name[2] == 'U' && name[3] == 0) {
				*id = desc;
				return nh->n_descsz;
			}
			p = desc + ((nh->n_descsz + 3) & ~3u);
		}
	}
	return 0;
}

/* Map the plan file at path: its address, or -errno. */
static long plan_map(const char *path, uint64_t *len)
{
	struct stat st;
	long fd = rt_sys4(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC, 0), m;

	if (fd < 0)
		return fd;
	if (rt_sys2(SYS_fstat, fd, &st) || st.st_size <= 0) {
		rt_close((int)fd);
		return -1;
	}
	*len = (uint64_t)st.st_size;
	m = rt_sys6(SYS_mmap, 0, (long)*len, PROT_READ, MAP_PRIVATE, fd, 0);
	rt_close((int)fd);
	return rt_mmap_failed(m) ? -1 : m;
}

/* Is the region [at, at+len) within a rel32 of everything in [lo, hi)? */
static int in_reach(uint64_t at, uint64_t len, uint64_t lo, uint64_t hi)
{
	uint64_t a = at < lo ? at : lo, b = at + len > hi ? at + len : hi;

	return b - a < REACH;
}

/* A region of len bytes within reach of [lo, hi): below the object first,
 * then above it; 0 if none. */
static uint64_t region_near(uint64_t len, uint64_t lo, uint64_t hi)
{
	static const long flags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE;
	uint64_t step = 1ull << 20;

	for (uint64_t d = 0; d < (1ull << 30); d += step) {
		uint64_t want[2] = { ((lo - len) & ~(PAGE - 1)) - d, ((hi + PAGE - 1) & ~(PAGE - 1)) + step + d };

		for (int k = 0; k < 2; k++) {
			long m;

			if (want[k] < (1ull << 16) || want[k] + len > (1ull << 47) || (k == 0 && want[k] > lo))
				continue;
			m = rt_sys6(SYS_mmap, (long)want[k], (long)len, PROT_READ | PROT_WRITE, flags, -1, 0);
			if (rt_mmap_failed(m))
				continue;
			if ((uint64_t)m == want[k] && in_reach((uint64_t)m, len, lo, hi))
				return (uint64_t)m;
			rt_sys2(SYS_munmap, m, (long)len);
		}
	}
	return 0;
}

static int prot_of(uint32_t pf)
{
	return (pf & PF_R ? PROT_READ : 0) | (pf & PF_W ? PROT_WRITE : 0) | (pf & PF_X ? PROT_EXEC : 0);
}

/* Make the executable segments writable (0: back to their own).  Where
 * the system refuses writable code, the main program's text may go
 * without execute meanwhile (nothing runs there while it is patched); a
 * library's may not (this code may be calling into it). */
static int text_prot(const struct dl_phdr_info *info, int writable, int is_main)
{
	int ret = 0;

	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uint64_t a, b;
		int prot;

		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
			continue;
		a = (info->dlpi_addr + ph->p_vaddr) & ~(PAGE - 1);
		b = (info->dlpi_addr + ph->p_vaddr + ph->p_memsz + PAGE - 1) & ~(PAGE - 1);
		prot = prot_of(ph->p_flags);
		if (writable) {
			if (rt_sys3(SYS_mprotect, a, b - a, prot | PROT_WRITE) &&
			    (!is_main || rt_sys3(SYS_mprotect, a, b - a, (prot & ~PROT_EXEC) | PROT_WRITE)))
				ret = -1;
			else
				rt_sys3(SYS_madvise, a, b - a, MADV_POPULATE_WRITE);
		} else {
			rt_sys3(SYS_mprotect, a, b - a, prot);
		}
	}
	return ret;
}

/* Is [a, a+len) inside an executable segment of the object? */
static int in_text(const struct dl_phdr_info *info, uint64_t a, uint64_t len)
{
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uint64_t lo = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X) && a >= lo && a + len <= lo + ph->p_filesz)
			return 1;
	}
	return 0;
}

/* Write n <= 8 bytes of code (a jump, a call's rel32): one 8-byte store
 * when they share an aligned word (a thread running by sees old or new
 * bytes, never a mix); else last byte first (a jump's opcode goes last). */
static void write_code(uint64_t at, const uint8_t *j, int n)
{
	uint8_t *p = (uint8_t *)at;

	if ((int)(at & 7) <= 8 - n) {
		uint64_t *w = (uint64_t *)(at & ~7ul), v = *w;
		unsigned sh = (unsigned)(at & 7) * 8;

		for (int i = 0; i < n; i++) {
			v &= ~(0xffull << (sh + 8 * i));
			v |= (uint64_t)j[i] << (sh + 8 * i);
		}
		__atomic_store_n(w, v, __ATOMIC_RELEASE);
		return;
	}
	for (int i = n - 1; i >= 0; i--)
		p[i] = j[i];
}

static uint64_t stub_size(const struct rel_entry *e)
{
	return (SC_PATCH_STUB_LEN + e->code_len + 15) & ~15ull;
}

/* List the object in this image's header (what the session reports). */
static void publish(const struct sc_shm_patched *o)
{
	struct sc_shm_header *h = sc_rt_shm_header();
	uint32_t i;

	if (!h)
		return;
	i = __atomic_fetch_add(&h->npatched, 1, __ATOMIC_RELAXED);
	if (i >= SC_SHM_MAX_PATCHED)
		return;
	for (unsigned k = 0; k < sizeof(o->build_id); k++)
		h->patched[i].build_id[k] = o->build_id[k];
	h->patched[i].build_id_len = o->build_id_len;
	h->patched[i].base = o->base;
	h->patched[i].patched = o->patched;
	h->patched[i].patch_ns = o->patch_ns;
	for (unsigned k = 0; k < 32; k++)
		h->patched[i].unpatched[k] = o->unpatched[k];
	__atomic_store_n(&h->patched[i].valid, 1, __ATOMIC_RELEASE);
}

/*
 * Call sites (plan_file.h): one stub per function too short to patch, laid
 * out as a patched function's (patch.h) with a trampoline that only jumps
 * to the function; each direct branch to it gets the stub's code as its
 * new rel32 target, so the call pushes its return address as usual and
 * the entry probe sees the caller exactly as for a patched function.
 */
#define CALL_STUB_SIZE ((SC_PATCH_STUB_LEN + REL_JMP_LEN + 15) & ~15ull)

/* The target of the rel32 branch of c at bias (its current bytes). */
static uint64_t call_dest(const struct plan_file_call *c, uint64_t bias)
{
	int32_t d;

	__builtin_memcpy(&d, (const uint8_t *)(c->site + bias + c->rel_off), 4);
	return c->site + bias + c->len + (uint64_t)(int64_t)d;
}

/* The index of target among the ngroups sorted targets of calls, or -1. */
static long call_group(const uint64_t *targets, size_t ngroups, uint64_t target)
{
	size_t lo = 0, hi = ngroups;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (targets[mid] < target)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < ngroups && targets[lo] == target ? (long)lo : -1;
}

/*
 * A call or jump to a call_sites function among a trampoline's displaced
 * instructions (its original bytes are under the entry jmp) goes to the
 * function's stub too.  A rel32 fixup preceded by e9 or 0f 8x is a jmp or
 * jcc (a RIP-relative operand's ModRM byte is never one of those), its
 * target the end of the field plus the field.
 */
static void tramp_redirect(const struct rel_entry *e, uint8_t *code, const uint64_t *targets,
			   const uint64_t *stubs, size_t ngroups, uint64_t bias)
{
	for (unsigned i = 0; i < e->nfix; i++) {
		unsigned off = e->fix[i].off;
		uint8_t *p = code + off;
		uint64_t end = (uint64_t)(uintptr_t)p + 4, to;
		int32_t d;
		long g;

		if (e->fix[i].kind != REL_FIX_REL32 || off < 1 ||
		    !(p[-1] == 0xe9 || (off >= 2 && p[-2] == 0x0f && (p[-1] & 0xf0) == 0x80)))
			continue;
		__builtin_memcpy(&d, p, 4);
		to = end + (uint64_t)(int64_t)d;
		g = call_group(targets, ngroups, to - bias);
		if (g < 0 || !stubs[g])
			continue;
		d = (int32_t)(int64_t)(stubs[g] + SC_PATCH_STUB_CODE - end);
		if ((int64_t)d == (int64_t)(stubs[g] + SC_PATCH_STUB_CODE - end))
			__builtin_memcpy(p, &d, 4);
	}
}

/* Apply the plan h (len bytes) to the object; tally in *o. */
static void plan_apply(const struct dl_phdr_info *info, int is_main, const struct plan_file_header *h,
		       uint64_t len, struct sc_shm_patched *o)
{
	const struct plan_file_entry *v;
	const struct plan_file_call *calls;
	uint64_t lo = UINT64_MAX, hi = 0, need = 16, region, at, bias = info->dlpi_addr;
	uint64_t *targets, *stubs;
	size_t n, nc, ngroups = 0, written = 0;
	uint8_t *ok;

	v = plan_file_check(h, len, &n);
	if (!v)
		return;
	calls = plan_file_calls(h);
	nc = h->ncalls;
	for (size_t i = 0; i < nc; i++)
		ngroups += !i || calls[i].target != calls[i - 1].target;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type != PT_LOAD)
			continue;
		if (info->dlpi_addr + ph->p_vaddr < lo)
			lo = info->dlpi_addr + ph->p_vaddr;
		if (info->dlpi_addr + ph->p_vaddr + ph->p_memsz > hi)
			hi = info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
	}
	for (size_t i = 0; i < n; i++)
		need += stub_size(&v[i].entry);
	need += ngroups * CALL_STUB_SIZE;
	need += ngroups * 16;            /* per group: its target, its stub (0: none) */
	need += n;                       /* one byte per entry: placed or not */
	need = (need + PAGE - 1) & ~(PAGE - 1);
	region = n || ngroups ? region_near(need, lo, hi) : 0;
	for (unsigned r = 0; r < PATCH_NREASONS && r < 32; r++)
		o->unpatched[r] += h->count[r];
	if (!region) {
		o->unpatched[PATCH_OUT_OF_REACH] += n + ngroups;
		o->unpatched[PATCH_CALL_SITES] -= (uint32_t)ngroups;
		return;
	}
	*(uint64_t *)region = sc_patch_arch_entry();
	sc_patch_region_add(region, region + need);
	ok = (uint8_t *)(region + need - n);
	stubs = (uint64_t *)((region + need - n - ngroups * 8) & ~7ull);
	targets = stubs - ngroups;
	at = region + 16;
	for (size_t i = 0, g = 0; i < nc; i++) {
		uint64_t fn = calls[i].target + bias;

		if (i && calls[i].target == calls[i - 1].target)
			continue;
		targets[g] = calls[i].target;
		stubs[g] = 0;
		if (in_text(info, fn, 1)) {
			sc_patch_arch_stub((uint8_t *)at, fn, (const uint64_t *)region);
			if (rel_jmp((uint8_t *)at + SC_PATCH_STUB_LEN, at + SC_PATCH_STUB_LEN, fn))
				stubs[g] = at;
		}
		at += CALL_STUB_SIZE;
		g++;
	}
	for (size_t i = 0; i < n; i++) {
		const struct rel_entry *e = &v[i].entry;
		uint64_t fn = v[i].addr + bias, site = e->site + bias;

		ok[i] = 0;
		if (!in_text(info, site, e->len) || site < fn || site + REL_JMP_LEN > fn + 64) {
			o->unpatched[PATCH_NOT_CODE]++;
			continue;
		}
		sc_patch_arch_stub((uint8_t *)at, fn, (const uint64_t *)region);
		if (!rel_entry_place(e, (uint8_t *)at + SC_PATCH_STUB_LEN, at + SC_PATCH_STUB_LEN, bias)) {
			o->unpatched[PATCH_OUT_OF_REACH]++;
			continue;
		}
		if (ngroups)
			tramp_redirect(e, (uint8_t *)at + SC_PATCH_STUB_LEN, targets, stubs, ngroups, bias);
		ok[i] = 1;
		at += stub_size(e);
	}
	rt_sys3(SYS_mprotect, region, need - n, PROT_READ | PROT_EXEC);
	if (text_prot(info, 1, is_main)) {
		text_prot(info, 0, is_main);
		for (size_t i = 0; i < n; i++)
			o->unpatched[PATCH_NOT_CODE] += ok[i];
		o->unpatched[PATCH_NOT_CODE] += ngroups;
		o->unpatched[PATCH_CALL_SITES] -= (uint32_t)ngroups;
		return;
	}
	at = region + 16 + ngroups * CALL_STUB_SIZE;
	for (size_t i = 0; i < n; i++) {
		const struct rel_entry *e = &v[i].entry;
		uint8_t j[REL_JMP_LEN];

		if (!ok[i])
			continue;
		if (rel_jmp(j, e->site + bias, at + SC_PATCH_STUB_CODE)) {
			if (sc_attach_logging)
				sc_attach_log(e->site + bias, REL_JMP_LEN, e->site + bias, REL_JMP_LEN,
					      at + SC_PATCH_STUB_CODE);
			write_code(e->site + bias, j, REL_JMP_LEN);
			o->patched++;
		} else {
			o->unpatched[PATCH_OUT_OF_REACH]++;
		}
		at += stub_size(e);
	}
	/* a function none of whose sites could be written is counted as not
	 * reached (no stub) or not code (its sites were not as planned) */
	for (size_t i = 0, g = 0; i < nc; i++) {
		const struct plan_file_call *c = &calls[i];
		uint64_t end = c->site + bias + c->len;
		int64_t d = stubs[g] ? (int64_t)(stubs[g] + SC_PATCH_STUB_CODE - end) : 0;
		int32_t d32 = (int32_t)d;

		if (stubs[g] && d == d32 && in_text(info, c->site + bias, c->len) &&
		    call_dest(c, bias) == c->target + bias) {
			if (sc_attach_logging)
				sc_attach_log(c->site + bias + c->rel_off, 4, c->site + bias, c->len,
					      stubs[g] + SC_PATCH_STUB_CODE);
			write_code(c->site + bias + c->rel_off, (const uint8_t *)&d32, 4);
			written++;
		}
		if (i + 1 == nc || calls[i + 1].target != c->target) {
			if (!written) {
				o->unpatched[PATCH_CALL_SITES]--;
				o->unpatched[stubs[g] ? PATCH_NOT_CODE : PATCH_OUT_OF_REACH]++;
			}
			written = 0;
			g++;
		}
	}
	text_prot(info, 0, is_main);
}

static uint64_t now_ns(void)
{
	struct timespec ts = { 0, 0 };

	rt_sys2(SYS_clock_gettime, CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Does the function at site already jump into one of our regions (an
 * object seen before, or a fork's copy)? */
static int already_patched(uint64_t site)
{
	const uint8_t *p = (const uint8_t *)site;
	int32_t d;
	uint64_t to;

	if (p[0] != 0xe9)
		return 0;
	d = (int32_t)((uint32_t)p[1] | (uint32_t)p[2] << 8 | (uint32_t)p[3] << 16 | (uint32_t)p[4] << 24);
	to = site + REL_JMP_LEN + (uint64_t)(int64_t)d;
	for (int i = 0; i < pt.nregions; i++)
		if (to >= pt.regions[i].lo && to < pt.regions[i].hi)
			return 1;
	return 0;
}

/* Does the first call site of a plan already go into one of our regions? */
static int call_redirected(const struct dl_phdr_info *info, const struct plan_file_call *c)
{
	uint64_t to;

	if (!in_text(info, c->site + info->dlpi_addr, c->len))
		return 0;
	to = call_dest(c, info->dlpi_addr);

	for (int i = 0; i < pt.nregions; i++)
		if (to >= pt.regions[i].lo && to < pt.regions[i].hi)
			return 1;
	return 0;
}

static int plan_for_lib(const struct dl_phdr_info *info);

/* The plan for the object, applied if there is one and the object is not
 * patched yet. */
static void obj_patch(const struct dl_phdr_info *info, int is_main)
{
	uint64_t t0 = now_ns();
	const uint8_t *id = NULL;
	uint32_t id_len = obj_build_id(info, &id);

	for (int k = 0; k < pt.nplans; k++) {
		const struct plan_ref *p = &pt.plans[k];
		struct sc_shm_patched o;
		struct stat st;
		int match;

		if (!p->h || p->h->build_id_len != id_len)
			continue;
		match = 1;
		for (uint32_t i = 0; match && i < id_len; i++)
			match = p->h->build_id[i] == id[i];
		if (match && !id_len)
			match = is_main && pt.exe_ino && !rt_sys2(SYS_stat, "/proc/self/exe", &st) &&
				st.st_dev == pt.exe_dev && st.st_ino == pt.exe_ino;
		if (!match)
			continue;
		if (p->n ? already_patched(p->v[0].entry.site + info->dlpi_addr) :
		    p->h->ncalls && call_redirected(info, plan_file_calls(p->h)))
			return;
		o = (struct sc_shm_patched){ .base = info->dlpi_addr, .build_id_len = id_len };
		for (uint32_t i = 0; i < id_len && i < sizeof(o.build_id); i++)
			o.build_id[i] = id[i];
		plan_apply(info, is_main, p->h, p->len, &o);
		if (o.patched && pt.npatched < SC_SHM_MAX_PATCHED)
			pt.patched_base[pt.npatched++] = info->dlpi_addr;
		o.patch_ns = now_ns() - t0;
		publish(&o);
		return;
	}
	/* one --patch named (or all) that no plan was made for: loaded later
	 * by a program the recorder did not see, such as a wrapper's */
	if (!is_main && plan_for_lib(info))
		obj_patch(info, is_main);
}

static int each_obj(struct dl_phdr_info *info, size_t size, void *arg)
{
	int *index = arg;
	int is_main = (*index)++ == 0;

	(void)size;
	obj_patch(info, is_main);
	return 0;
}

void sc_patch_loaded(void)
{
	int index = 0;

	if (!sc_patch_on)
		return;
	while (__atomic_exchange_n(&pt.lock, 1, __ATOMIC_ACQUIRE))
		rt_sys0(SYS_sched_yield);
	sc_phdr_each(each_obj, &index);
	sc_libcall_loaded();
	__atomic_store_n(&pt.lock, 0, __ATOMIC_RELEASE);
}

/* Map the plan file at path[0 .. len) into *p (left unusable if it is not
 * a plan this build reads). */
static void plan_open(struct plan_ref *p, const char *path, size_t len)
{
	char buf[SC_PATCH_PATH_MAX];
	uint64_t size = 0;
	long m;

	p->h = NULL;
	if (len >= sizeof(buf))
		return;
	rt_stpcpy(buf, path, len + 1);     /* (a loop gcc could make a memcpy) */
	m = plan_map(buf, &size);
	if (rt_mmap_failed(m))
		return;
	p->v = plan_file_check((const void *)m, size, &p->n);
	if (!p->v || ((const struct plan_file_header *)m)->build_id_len > 20) {
		rt_sys2(SYS_munmap, m, (long)size);
		return;
	}
	p->h = (const struct plan_file_header *)m;
	p->len = size;
}

/* Does the object import __cyg_profile_func_enter (hooks compiled in)? */
static int obj_has_hooks(const struct dl_phdr_info *info)
{
	struct rt_dyn d;

	rt_dyn_read(info, &d);
	return rt_dyn_imports(&d, "__cyg_profile_func_enter");
}

/* Is the main program compiled with hooks, or one of the plans' own? */
static int main_covered(const struct dl_phdr_info *info)
{
	const uint8_t *id = NULL;
	uint32_t id_len = obj_build_id(info, &id);
	struct stat st;

	if (obj_has_hooks(info))
		return 1;
	for (int k = 0; k < pt.nplans; k++) {
		const struct plan_ref *p = &pt.plans[k];
		int match = p->h && p->h->build_id_len == id_len && id_len;

		for (uint32_t i = 0; match && i < id_len; i++)
			match = p->h->build_id[i] == id[i];
		if (match)
			return 1;
	}
	return !id_len && pt.exe_ino && !rt_sys2(SYS_stat, "/proc/self/exe", &st) &&
	       st.st_dev == pt.exe_dev && st.st_ino == pt.exe_ino;
}

static int first_obj(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	*(int *)arg = main_covered(info);
	return 1;
}

/* The planner and what the runtime may ask it for (patch.h), copied at
 * start: the environment may change, and a dlopen has none at hand. */
static struct {
	char path[SC_PATCH_PATH_MAX];     /* the recorder's binary, or "" */
	char cache_env[SC_PATCH_PATH_MAX]; /* "STACKCLOCK_CACHE_DIR=...", or "" */
	char names[1024];                 /* --patch names, ','-separated */
	int all;                          /* --patch all */
	uint64_t refused[64];             /* bases of the objects asked for */
	int nrefused;
} planner;

/*
 * Ask the planner (patch.h) for the plan of the file at path: "PLANNER cmd
 * path", into out[cap]: the plan's path, or "" (hooks compiled in, cannot
 * be patched, no planner, a sandbox).  Raw system calls; the planner runs
 * with an environment of its own (no LD_PRELOAD: it is never profiled) and
 * its output on a pipe; we wait for it.
 */
static void ask_planner(const char *cmd, const char *path, char *out, size_t cap)
{
	size_t got = 0;
	int p[2], status = 0;
	long pid, n;

	out[0] = 0;
	if (!planner.path[0] || rt_sys1(SYS_prctl, PR_GET_SECCOMP) != 0)
		return;
	if (rt_sys2(SYS_pipe2, p, O_CLOEXEC))
		return;
	pid = rt_sys6(SYS_clone, SIGCHLD, 0, 0, 0, 0, 0);
	if (pid == 0) {
		const char *argv[] = { planner.path, cmd, path, NULL };
		const char *env[] = { planner.cache_env[0] ? planner.cache_env : NULL, NULL };
		long nul = rt_sys3(SYS_open, "/dev/null", O_RDWR, 0);

		rt_sys2(SYS_dup2, p[1], 1);
		if (nul >= 0) {
			rt_sys2(SYS_dup2, nul, 0);
			rt_sys2(SYS_dup2, nul, 2);
		}
		rt_sys3(SYS_execve, planner.path, argv, env);
		rt_sys1(SYS_exit_group, 127);
	}
	rt_sys1(SYS_close, p[1]);
	while (pid > 0 && got + 1 < cap) {
		n = rt_sys3(SYS_read, p[0], out + got, cap - 1 - got);
		if (n == -EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	rt_sys1(SYS_close, p[0]);
	while (pid > 0 && rt_sys4(SYS_wait4, pid, &status, 0, 0) == -EINTR)
		;
	out[got] = 0;
	if (pid <= 0 || got == 0 || out[got - 1] != '\n' || !WIFEXITED(status) || WEXITSTATUS(status)) {
		out[0] = 0;
		return;
	}
	out[got - 1] = 0;
}

/* Open the plan at path as one more of ours; 1 if it is usable. */
static int plan_add(const char *path)
{
	if (!path[0] || pt.nplans >= SC_PATCH_MAX_PLANS)
		return 0;
	plan_open(&pt.plans[pt.nplans], path, rt_strlen(path));
	if (!pt.plans[pt.nplans].h)
		return 0;
	pt.nplans++;
	return 1;
}

/* Does the library file at path answer to name ("libz.so.1", "libz")? */
static int lib_is(const char *path, const char *name, size_t len)
{
	const char *base = path;
	size_t i;

	for (const char *c = path; *c; c++)
		if (*c == '/')
			base = c + 1;
	for (i = 0; i < len && base[i] == name[i]; i++)
		;
	return i == len && (base[i] == 0 || base[i] == '.');
}

int sc_patch_lib_is(const char *path, const char *name)
{
	return lib_is(path, name, rt_strlen(name));
}

int sc_patch_never(const char *path)
{
	static const char *const never[] = { SC_PATCH_NEVER_LOADER, SC_PATCH_NEVER_RUNTIME,
					     SC_PATCH_NEVER_CALLED };

	for (unsigned i = 0; i < sizeof(never) / sizeof(never[0]); i++)
		if (sc_patch_lib_is(path, never[i]))
			return 1;
	return 0;
}

/* Is the object at path one --patch asked for (by name, or all), and not
 * one never patched (the loader, the runtime, what the runtime calls)? */
static int wanted(const char *path)
{
	const char *s = planner.names;

	if (!path || path[0] != '/' || sc_patch_never(path))
		return 0;
	if (planner.all)
		return 1;
	while (*s) {
		const char *c = s;

		while (*c && *c != ',')
			c++;
		if (c > s && lib_is(path, s, (size_t)(c - s)))
			return 1;
		s = *c ? c + 1 : c;
	}
	return 0;
}

/*
 * A library loaded later that --patch asked for (by name or all) and no
 * plan is for: its plan from the planner, once per object.  1 if there is
 * a plan to apply now.
 */
static int plan_for_lib(const struct dl_phdr_info *info)
{
	char asked[SC_PATCH_PATH_MAX];

	if (!wanted(info->dlpi_name))
		return 0;
	for (int i = 0; i < planner.nrefused; i++)
		if (planner.refused[i] == info->dlpi_addr)
			return 0;
	/* asked once per object, whatever the answer */
	if (planner.nrefused == (int)(sizeof(planner.refused) / sizeof(planner.refused[0])))
		return 0;
	planner.refused[planner.nrefused++] = info->dlpi_addr;
	ask_planner(SC_PATCH_PLAN_LIB_CMD, info->dlpi_name, asked, sizeof(asked));
	return plan_add(asked);
}

void sc_patch_start(char **envp)
{
	const char *s = rt_getenv(envp, SC_PATCH_ENV), *e;
	char asked[SC_PATCH_PATH_MAX];
	int covered = 1;

	if (sc_patch_on)
		return;
	while (s && *s && pt.nplans < SC_PATCH_MAX_PLANS) {
		const char *c = s;

		while (*c && *c != ':')
			c++;
		if (c > s)
			plan_open(&pt.plans[pt.nplans++], s, (size_t)(c - s));
		s = *c ? c + 1 : c;
	}
	s = rt_getenv(envp, SC_PATCH_ENV_EXE);
	if (s) {
		pt.exe_dev = rt_atou(s, &e);
		pt.exe_ino = *e == ',' ? rt_atou(e + 1, NULL) : 0;
	}
	s = rt_getenv(envp, SC_PATCH_ENV_PLANNER);
	if (s)
		rt_stpcpy(planner.path, s, sizeof(planner.path));
	s = rt_getenv(envp, SC_PATCH_ENV_CACHE);
	if (s)
		rt_stpcpy(rt_stpcpy(planner.cache_env, "STACKCLOCK_CACHE_DIR=", sizeof(planner.cache_env)), s,
			  sizeof(planner.cache_env) - 21);
	s = rt_getenv(envp, SC_PATCH_ENV_NAMES);
	if (s) {
		rt_stpcpy(planner.names, s, sizeof(planner.names));
		planner.all = s[0] == 'a' && s[1] == 'l' && s[2] == 'l' && (s[3] == 0 || s[3] == ',');
	}
	/* a program exec'd later, such as what a wrapper script runs */
	sc_phdr_each(first_obj, &covered);
	if (!covered) {
		char exe[SC_PATCH_PATH_MAX];
		long n = rt_sys3(SYS_readlink, "/proc/self/exe", exe, sizeof(exe) - 1);
		struct stat st;

		if (n > 0) {
			exe[n] = 0;
			ask_planner(SC_PATCH_PLAN_CMD, exe, asked, sizeof(asked));
			if (plan_add(asked) && !rt_sys2(SYS_stat, "/proc/self/exe", &st)) {
				pt.exe_dev = st.st_dev;
				pt.exe_ino = st.st_ino;
			}
		}
	}
	sc_libcall_start(envp);
	if (!pt.nplans && !planner.names[0] && sc_libcall_mode == SC_LIBCALL_NONE)
		return;
	sc_patch_retstack_init();
	sc_patch_on = 1;
	sc_patch_loaded();
}

/*
 * dlopen(): an object it loads is patched before dlopen returns (its
 * constructors have run by then).  The C library's dlopen looks up a bare
 * name along its caller's RUNPATH, found from the return address: when
 * nothing is patched this one is a plain jump to it (the caller stays the
 * program's); when patching, the caller it sees is this runtime.
 */
static void *(*real_dlopen)(const char *, int);
void *sc_patch_dlopen(const char *file, int mode);

__asm__(".text\n"
	".globl dlopen\n"
	".type dlopen, @function\n"
	"dlopen:\n"
	"\tendbr64\n"
	"\tcmpl $0, sc_patch_on(%rip)\n"
	"\tjne sc_patch_dlopen\n"
	"\tmov real_dlopen(%rip), %rax\n"
	"\ttest %rax, %rax\n"
	"\tje sc_patch_dlopen\n"
	"\tjmp *%rax\n"
	".size dlopen, .-dlopen\n");

void *sc_patch_dlopen(const char *file, int mode)
{
	void *h;

	if (!real_dlopen)     /* the C library's: always global, dlsym() finds it */
		real_dlopen = (void *(*)(const char *, int))dlsym(RTLD_NEXT, "dlopen");
	if (!real_dlopen)
		return NULL;
	h = real_dlopen(file, mode);
	if (h && sc_patch_on)
		sc_patch_loaded();
	return h;
}

void sc_patch_region_add(uint64_t lo, uint64_t hi)
{
	int n = pt.nregions;

	if (n == (int)(sizeof(pt.regions) / sizeof(pt.regions[0])))
		return;
	pt.regions[n].lo = lo;
	pt.regions[n].hi = hi;
	__atomic_store_n(&pt.nregions, n + 1, __ATOMIC_RELEASE);
}

int sc_patch_obj_probed(const struct dl_phdr_info *info)
{
	for (int i = 0; i < pt.npatched; i++)
		if (pt.patched_base[i] == info->dlpi_addr)
			return 1;
	return obj_has_hooks(info);
}

int sc_patch_nregions(void)
{
	return __atomic_load_n(&pt.nregions, __ATOMIC_ACQUIRE);
}

void sc_patch_region(int i, uint64_t *lo, uint64_t *hi)
{
	*lo = pt.regions[i].lo;
	*hi = pt.regions[i].hi;
}

void sc_patch_forget(void)
{
	for (int k = 0; k < pt.nplans; k++)
		if (pt.plans[k].h)
			rt_sys2(SYS_munmap, pt.plans[k].h, (long)pt.plans[k].len);
	pt.nplans = 0;
	sc_patch_on = 0;
	__atomic_store_n(&pt.nregions, 0, __ATOMIC_RELEASE);
	pt.npatched = 0;
}

int sc_patch_in_stubs(uint64_t ip)
{
	int n = __atomic_load_n(&pt.nregions, __ATOMIC_ACQUIRE);

	for (int i = 0; i < n; i++)
		if (ip >= pt.regions[i].lo && ip < pt.regions[i].hi)
			return 1;
	return 0;
}
