/*
 * attach — the runtime loaded into a process already running (attach.h has
 * the protocol with the recorder): its entry, its own thread (the
 * watchdog), the log of every byte patched while attached, and the way
 * back: the code as it was, the return addresses as they were, the
 * threads' perf events closed, the runtime off.
 *
 * Putting code back while threads may run it (the recorder gone, or a
 * fork child's code): each site's instruction gets an int3 on its first
 * byte, then its other bytes, then its first byte, with every core's
 * instruction stream synchronised in between (membarrier's SYNC_CORE) — the
 * order the kernel writes live text in.  A thread that meets the int3
 * meanwhile gets a SIGTRAP whose handler does what the instruction does in
 * either form (jump or call to its stub, which stays mapped; a conditional
 * jump by the flags).  With the threads stopped by the recorder, nobody
 * meets it; the same code serves both.
 */
#include "runtime/rt.h"

#include "runtime/attach.h"
#include "runtime/dynsym.h"

#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/ucontext.h>
#include <time.h>
#include <linux/membarrier.h>

#define HOOK __attribute__((visibility("default")))

#define ENV_MAX   64
#define CFG_MAX   (64u << 10)

enum { K_JMP, K_CALL, K_JCC, K_GOT };

/* One place written while attached: [at, at + n) of the instruction at
 * insn (insn_len bytes; its first byte op0 before anything was written),
 * which goes to dest once written.  K_GOT: an 8-byte GOT slot. */
struct att_site {
	uint64_t at, insn, dest;
	uint8_t n, insn_len, kind, op0;
	uint8_t old[8], new[8];
};

static struct {
	char cfg[CFG_MAX];
	char cfg_path[SC_PATCH_PATH_MAX], ctl_path[SC_PATCH_PATH_MAX];
	char *envp[ENV_MAX + 1];
	struct sc_attach_ctl *ctl;
	int ctl_fd;                    /* the recorder holds a lock on it while it lives */
	struct att_site *sites;        /* sorted by insn before a restore */
	size_t nsites, cap, map_len;
	struct { uint64_t lo, hi; int prot; } text[64];   /* objects' code written */
	int ntext;
	struct rt_ksigaction old_trap;
	struct dl_phdr_info objs[512]; /* the loaded objects, taken at the entry */
	int nobjs, snap;
	int restoring;                 /* the SIGTRAP handler is ours */
	pthread_t watchdog;
} at;

/* The frames open at the attach (attach.h), read at PATCH: the seed file's
 * threads and frames, in one mapping with a state byte per frame. */
enum { SEED_BAD, SEED_OPEN, SEED_REDIRECTED };
static struct {
	const struct sc_attach_seed_thread *th;
	const struct sc_attach_seed_frame *f;
	uint8_t *state;                /* per frame: SEED_* */
	uint8_t *taken;                /* per thread: 1 engine frames, 2 return stack */
	uint32_t nth;
	uint64_t nf;
	void *map;
	uint64_t map_len;
} sd;

static uint64_t seed_restore(void);
static void seed_free(void);

int sc_attach_logging;

/* Byte loops of our own: a program may define memcpy or memcmp (t307). */
static void bytes_copy(void *to, const void *from, size_t n)
{
	volatile uint8_t *d = to;
	const uint8_t *f = from;

	for (size_t i = 0; i < n; i++)
		d[i] = f[i];
}

static int bytes_differ(const void *a, const void *b, size_t n)
{
	const uint8_t *x = a, *y = b;

	for (size_t i = 0; i < n; i++)
		if (x[i] != y[i])
			return 1;
	return 0;
}

static int str_eq(const char *a, const char *b)
{
	while (*a && *a == *b)
		a++, b++;
	return *a == *b;
}

static uint64_t now_ns(void)
{
	struct timespec ts = { 0, 0 };

	rt_sys2(SYS_clock_gettime, CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void say(const char *msg)
{
	if (at.ctl)
		rt_stpcpy(at.ctl->msg, msg, sizeof(at.ctl->msg));
}

/* ---- the objects -------------------------------------------------------- */

static int snap_one(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	(void)arg;
	if (at.nobjs < (int)(sizeof(at.objs) / sizeof(at.objs[0])))
		at.objs[at.nobjs++] = *info;
	return 0;
}

int sc_phdr_each(int (*cb)(struct dl_phdr_info *, size_t, void *), void *arg)
{
	int r = 0;

	if (!at.snap)
		return dl_iterate_phdr(cb, arg);
	for (int i = 0; i < at.nobjs && !r; i++)
		r = cb(&at.objs[i], sizeof(at.objs[i]), arg);
	return r;
}

/* ---- the log ------------------------------------------------------------ */

static struct att_site *site_new(void)
{
	if (at.nsites == at.cap) {
		size_t cap = at.cap ? at.cap * 2 : 4096;
		size_t len = (cap * sizeof(struct att_site) + PAGE - 1) & ~(PAGE - 1);
		long m = rt_sys6(SYS_mmap, 0, (long)len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (rt_mmap_failed(m))
			return NULL;
		if (at.sites) {
			bytes_copy((void *)m, at.sites, at.nsites * sizeof(struct att_site));
			rt_sys2(SYS_munmap, at.sites, (long)at.map_len);
		}
		at.sites = (struct att_site *)m;
		at.cap = cap;
		at.map_len = len;
	}
	return &at.sites[at.nsites++];
}

/* The executable mapping holding a (from /proc/self/maps' view: the
 * loader's segments), noted once so that a restore can make it writable. */
static int text_of(struct dl_phdr_info *info, size_t size, void *arg)
{
	uint64_t a = *(uint64_t *)arg;

	(void)size;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uint64_t lo = (info->dlpi_addr + ph->p_vaddr) & ~(PAGE - 1);
		uint64_t hi = (info->dlpi_addr + ph->p_vaddr + ph->p_memsz + PAGE - 1) & ~(PAGE - 1);

		if (ph->p_type != PT_LOAD || a < lo || a >= hi)
			continue;
		if (at.ntext < (int)(sizeof(at.text) / sizeof(at.text[0]))) {
			at.text[at.ntext].lo = lo;
			at.text[at.ntext].hi = hi;
			at.text[at.ntext].prot = (ph->p_flags & PF_R ? PROT_READ : 0) |
						 (ph->p_flags & PF_W ? PROT_WRITE : 0) |
						 (ph->p_flags & PF_X ? PROT_EXEC : 0);
			at.ntext++;
		}
		return 1;
	}
	return 0;
}

static void text_note(uint64_t a)
{
	for (int i = 0; i < at.ntext; i++)
		if (a >= at.text[i].lo && a < at.text[i].hi)
			return;
	sc_phdr_each(text_of, &a);
}

/* Before patch.c writes n bytes at a (their old content still there). */
void sc_attach_log(uint64_t a, int n, uint64_t insn, uint32_t insn_len, uint64_t dest)
{
	const uint8_t *p = (const uint8_t *)insn;
	struct att_site *s = site_new();

	if (!s)
		return;
	s->at = a;
	s->n = (uint8_t)n;
	s->insn = insn;
	s->insn_len = (uint8_t)insn_len;
	s->dest = dest;
	s->op0 = p[0];
	s->kind = a == insn ? K_JMP : p[0] == 0xe8 ? K_CALL : p[0] == 0xe9 ? K_JMP : K_JCC;
	bytes_copy(s->old, (const void *)a, (size_t)n);
	text_note(insn);
}

/* ---- GOT slots: a hooks build's probes, the wrappers ------------------- */

static void got_write(const struct att_site *s, uint64_t v)
{
	uint64_t page = s->at & ~(PAGE - 1);

	if (s->op0)
		rt_sys3(SYS_mprotect, page, PAGE, PROT_READ | PROT_WRITE);
	__atomic_store_n((uint64_t *)s->at, v, __ATOMIC_RELEASE);
	if (s->op0)
		rt_sys3(SYS_mprotect, page, PAGE, PROT_READ);
}

/* Every GOT slot of the object bound to name: pointed at to (the old
 * value logged).  Full RELRO makes the slots read-only: written through a
 * writable window. */
static void got_hook(const struct dl_phdr_info *info, const char *name, uint64_t to)
{
	struct rt_dyn d;
	const ElfW(Rela) *tabs[2];
	uint64_t sizes[2], relro_lo = 0, relro_hi = 0;

	for (int i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_GNU_RELRO) {
			relro_lo = (info->dlpi_addr + info->dlpi_phdr[i].p_vaddr) & ~(PAGE - 1);
			relro_hi = (info->dlpi_addr + info->dlpi_phdr[i].p_vaddr + info->dlpi_phdr[i].p_memsz) & ~(PAGE - 1);
		}
	rt_dyn_read(info, &d);
	if (!d.symtab || !d.strtab)
		return;
	tabs[0] = d.jmprel;
	sizes[0] = d.jmprel_sz;
	tabs[1] = d.rela;
	sizes[1] = d.rela_sz;
	for (int t = 0; t < 2; t++) {
		for (uint64_t i = 0; tabs[t] && i < sizes[t] / sizeof(ElfW(Rela)); i++) {
			const ElfW(Rela) *r = &tabs[t][i];
			uint32_t type = ELF64_R_TYPE(r->r_info), sym = ELF64_R_SYM(r->r_info);
			uint64_t slot = d.base + r->r_offset, page = slot & ~(PAGE - 1);
			struct att_site *s;

			if ((type != R_X86_64_JUMP_SLOT && type != R_X86_64_GLOB_DAT) || !sym ||
			    d.symtab[sym].st_name >= d.strsz || !str_eq(d.strtab + d.symtab[sym].st_name, name))
				continue;
			s = site_new();
			if (!s)
				return;
			/* op0: the page is read-only (RELRO), writable meanwhile */
			*s = (struct att_site){ .at = slot, .insn = slot, .n = 8, .kind = K_GOT,
						.op0 = page >= relro_lo && page < relro_hi };
			bytes_copy(s->old, (const void *)slot, 8);
			got_write(s, to);
			at.ctl->got_slots++;
		}
	}
}

/* A GOT slot another part of the runtime is about to point elsewhere
 * (libcall.c): logged, put back at the detach; ro: its page is read-only
 * (RELRO). */
void sc_attach_log_got(uint64_t slot, int ro)
{
	struct att_site *s = site_new();

	if (!s)
		return;
	*s = (struct att_site){ .at = slot, .insn = slot, .n = 8, .kind = K_GOT, .op0 = (uint8_t)!!ro };
	bytes_copy(s->old, (const void *)slot, 8);
	at.ctl->got_slots++;
}

void sc_patch_retstack_init(void);
/* probe.c's hooks, by names that are never preempted (this runtime came
 * after libc, which has no-op hooks of the same names) */
extern char sc_hook_enter[], sc_hook_exit[];

static int hook_obj(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct rt_dyn d;

	(void)size;
	(void)arg;
	/* (the unwinder's own library is never patched, but its lookups of
	 * unwind tables go through the wrapper: _dl_find_object) */
	if (sc_patch_never(info->dlpi_name) && !sc_patch_lib_is(info->dlpi_name, "libgcc_s"))
		return 0;
	rt_dyn_read(info, &d);
	/* the readers of return addresses: our wrappers, which put the
	 * originals back first (retstack.c) */
	for (const struct sc_patch_wrap *w = sc_patch_wraps; w->name; w++)
		if (rt_dyn_imports(&d, w->name))
			got_hook(info, w->name, (uint64_t)(uintptr_t)w->fn);
	if (!at.ctl->hooks || !rt_dyn_imports(&d, "__cyg_profile_func_enter"))
		return 0;
	got_hook(info, "__cyg_profile_func_enter", (uint64_t)(uintptr_t)sc_hook_enter);
	got_hook(info, "__cyg_profile_func_exit", (uint64_t)(uintptr_t)sc_hook_exit);
	return 0;
}

/* ---- putting code back -------------------------------------------------- */

static int cmp_site(const void *a, const void *b)
{
	const struct att_site *x = a, *y = b;

	return x->insn < y->insn ? -1 : x->insn > y->insn;
}

/* By insn, in place (qsort may call malloc, whose lock a stopped thread may
 * hold). */
static void sift(struct att_site *a, size_t i, size_t n)
{
	for (;;) {
		size_t c = 2 * i + 1;
		struct att_site tmp;

		if (c >= n)
			return;
		if (c + 1 < n && cmp_site(&a[c], &a[c + 1]) < 0)
			c++;
		if (cmp_site(&a[i], &a[c]) >= 0)
			return;
		tmp = a[i];
		a[i] = a[c];
		a[c] = tmp;
		i = c;
	}
}

static void sites_sort(struct att_site *a, size_t n)
{
	for (size_t i = n / 2; i-- > 0;)
		sift(a, i, n);
	for (size_t k = n; k-- > 1;) {
		struct att_site tmp = a[0];

		a[0] = a[k];
		a[k] = tmp;
		sift(a, 0, k);
	}
}

static const struct att_site *site_at(uint64_t insn)
{
	size_t lo = 0, hi = at.nsites;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (at.sites[mid].insn < insn)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < at.nsites && at.sites[lo].insn == insn; lo++)
		if (at.sites[lo].kind != K_GOT)
			return &at.sites[lo];
	return NULL;
}

/* Is the condition of jcc opcode cc (0x0f 0x80 + cc) true in flags? */
static int cond_true(unsigned cc, uint64_t f)
{
	int cf = f & 1, zf = (f >> 6) & 1, sf = (f >> 7) & 1, of = (f >> 11) & 1, pf = (f >> 2) & 1, r;

	switch (cc >> 1) {
	case 0: r = of; break;
	case 1: r = cf; break;
	case 2: r = zf; break;
	case 3: r = cf || zf; break;
	case 4: r = sf; break;
	case 5: r = pf; break;
	case 6: r = sf != of; break;
	default: r = zf || sf != of; break;
	}
	return (cc & 1) ? !r : r;
}

/*
 * A SIGTRAP that is not ours (the program's own int3, a SIGTRAP sent to
 * it) goes to the program's handler, once, from this one: the disposition
 * is not touched while sites may trap (putting the program's back here
 * left the next thread that met a site's int3 to the program's handler,
 * which then went on inside a half-written jump).  The handler is run as
 * the kernel would have run it: its mask added, reset to the default
 * first if it asked for that (SA_RESETHAND).  With no handler, the default
 * action: the program's disposition back and the trap again (an int3 is
 * run again; a sent SIGTRAP is sent again).
 */
static void trap_not_ours(int sig, siginfo_t *si, ucontext_t *uc)
{
	struct rt_ksigaction old = at.old_trap;
	uint64_t mask = old.mask, was;

	if (old.handler == SIG_IGN)
		return;
	if (old.handler == SIG_DFL) {
		rt_sys4(SYS_rt_sigaction, SIGTRAP, &old, 0, 8);
		if (si->si_code == SI_KERNEL)
			uc->uc_mcontext.gregs[REG_RIP]--;
		else
			rt_sys3(SYS_tgkill, rt_getpid(), rt_gettid(), SIGTRAP);
		return;
	}
	if (old.flags & SA_RESETHAND)
		at.old_trap.handler = SIG_DFL;
	if (!(old.flags & SA_NODEFER))
		mask |= 1ull << (SIGTRAP - 1);
	rt_sys4(SYS_rt_sigprocmask, SIG_BLOCK, &mask, &was, 8);
	if (old.flags & SA_SIGINFO)
		((void (*)(int, siginfo_t *, void *))old.handler)(sig, si, uc);
	else
		((void (*)(int))old.handler)(sig);
	rt_sys4(SYS_rt_sigprocmask, SIG_SETMASK, &was, 0, 8);
}

/* A thread met the int3 of a site being put back: what the instruction
 * does, in its patched form (its stub stays). */
static void on_trap(int sig, siginfo_t *si, void *ucv)
{
	ucontext_t *uc = ucv;
	greg_t *g = uc->uc_mcontext.gregs;
	uint64_t ip = (uint64_t)g[REG_RIP] - 1;
	const struct att_site *s = at.restoring && si->si_code == SI_KERNEL ? site_at(ip) : NULL;

	if (!s) {
		trap_not_ours(sig, si, uc);
		return;
	}
	switch (s->kind) {
	case K_CALL:
		g[REG_RSP] -= 8;
		*(uint64_t *)g[REG_RSP] = s->insn + s->insn_len;
		g[REG_RIP] = (greg_t)s->dest;
		break;
	case K_JCC:
		g[REG_RIP] = (greg_t)(cond_true(((const uint8_t *)s->insn)[1] & 0xf, (uint64_t)g[REG_EFL]) ?
				      s->dest : s->insn + s->insn_len);
		break;
	default:
		g[REG_RIP] = (greg_t)s->dest;
		break;
	}
}

static void sync_cores(void)
{
	if (rt_sys3(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED_SYNC_CORE, 0, 0)) {
		struct timespec ts = { 0, 2000000 };  /* without it: every core has
							 rescheduled by then, near enough */
		rt_sys2(SYS_nanosleep, &ts, NULL);
	}
}

static void text_writable(int on)
{
	for (int i = 0; i < at.ntext; i++)
		rt_sys3(SYS_mprotect, at.text[i].lo, at.text[i].hi - at.text[i].lo,
			on ? at.text[i].prot | PROT_WRITE : at.text[i].prot);
}

/* Does the site still hold what we wrote (not put back, not rewritten by
 * the program since)? */
static int site_ours(const struct att_site *s)
{
	return bytes_differ((const void *)s->at, s->old, s->n);
}

/*
 * Every site back to what it held.  live: threads may run (the recorder
 * is gone, or a fork child with threads of its own); else they are
 * stopped and the protocol costs three synchronisations only.
 */
static uint64_t restore_all(int live)
{
	struct rt_ksigaction sa = { (void *)on_trap, SA_SIGINFO | SA_RESTART | SA_NODEFER | SA_RESTORER,
				    sc_rt_sigreturn, ~0ull };
	uint64_t put = 0;
	size_t i;

	if (!at.nsites)
		return 0;
	/* GOT slots: one aligned word each, last written first (a slot a
	 * library call's stub took and then an unwinder's wrapper ends with
	 * what it held before either) */
	for (i = at.nsites; i-- > 0;) {
		struct att_site *s = &at.sites[i];
		uint64_t v;

		if (s->kind != K_GOT)
			continue;
		bytes_copy(&v, s->old, 8);
		got_write(s, v);
		put++;
	}
	sites_sort(at.sites, at.nsites);
	rt_sys3(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_SYNC_CORE, 0, 0);
	at.restoring = 1;
	rt_sys4(SYS_rt_sigaction, SIGTRAP, 0, &at.old_trap, 8);
	sa.flags |= at.old_trap.flags & SA_ONSTACK;    /* the program's handler may need its stack */
	rt_sys4(SYS_rt_sigaction, SIGTRAP, &sa, 0, 8);
	text_writable(1);
	for (i = 0; i < at.nsites; i++) {
		struct att_site *s = &at.sites[i];

		if (s->kind == K_GOT || !site_ours(s))
			continue;
		__atomic_store_n((uint8_t *)s->insn, 0xcc, __ATOMIC_RELEASE);
	}
	sync_cores();
	for (i = 0; i < at.nsites; i++) {
		struct att_site *s = &at.sites[i];

		if (s->kind == K_GOT || ((const uint8_t *)s->insn)[0] != 0xcc)
			continue;
		for (int k = 0; k < s->n; k++)
			if (s->at + (uint64_t)k != s->insn)
				((volatile uint8_t *)s->at)[k] = s->old[k];
	}
	sync_cores();
	for (i = 0; i < at.nsites; i++) {
		struct att_site *s = &at.sites[i];

		if (s->kind == K_GOT || ((const uint8_t *)s->insn)[0] != 0xcc)
			continue;
		__atomic_store_n((uint8_t *)s->insn, s->op0, __ATOMIC_RELEASE);
		put++;
	}
	sync_cores();
	text_writable(0);
	if (live) {
		/* a trap taken before the last byte went back is being handled */
		struct timespec ts = { 0, 20000000 };

		rt_sys2(SYS_nanosleep, &ts, NULL);
	}
	at.restoring = 0;
	/* the program's disposition back, unless it wrote one of its own
	 * meanwhile (which stays) */
	{
		struct rt_ksigaction now;

		if (!rt_sys4(SYS_rt_sigaction, SIGTRAP, 0, &now, 8) && now.handler == (void *)on_trap)
			rt_sys4(SYS_rt_sigaction, SIGTRAP, &at.old_trap, 0, 8);
	}
	return put;
}

/* ---- leaving ------------------------------------------------------------ */

/* Every thread's perf events closed and its ring unmapped, its return
 * addresses back (the threads stopped); the count put back. */
static uint64_t threads_release(int stopped)
{
	uint64_t put = 0;

	for (int i = 0; i < RT_EXT_MAX; i++) {
		struct rt_tls_ext *x = __atomic_load_n(&rt_exts[i], __ATOMIC_ACQUIRE);

		if (!x || x == tls.x)
			continue;
		at.ctl->threads_seen += x->t != NULL;
		if (!stopped)
			continue;
		if (x->rs)
			put += sc_patch_unhook_stack(x->rs);
		if (x->t)
			close_events(x->t);
		if (x->ring.pg)
			rt_sys2(SYS_munmap, x->ring.pg, (long)x->ring.map_len);
		memset(&x->ring, 0, sizeof(x->ring));
	}
	return put;
}

/* The image is whole: what rt_fini notes at a process's end, and that it
 * goes on (its open frames are not an exit's). */
static void image_end(void)
{
	if (!rt.hdr)
		return;
	rt.hdr->end_tsc = rt_clock();
	__atomic_fetch_or(&rt.hdr->flags, SC_SHM_ENDED | SC_SHM_DETACHED, __ATOMIC_RELEASE);
}

static void runtime_off(void)
{
	rt.state = RT_OFF;
	pthread_key_delete(rt.key);    /* no thread-exit destructor of ours */
}

/*
 * Nothing of ours runs any more (no patched byte, no redirected return
 * address or GOT slot, no thread-exit key): the memory goes back.  The
 * threads' thread-local words still point at it, and nothing reads them.
 */
static void memory_release(void)
{
	for (int i = 0; i < RT_EXT_MAX; i++) {
		struct rt_tls_ext *x = __atomic_load_n(&rt_exts[i], __ATOMIC_ACQUIRE);

		if (!x || x == tls.x)
			continue;
		if (x->rs)
			rt_sys2(SYS_munmap, x->rs, (long)sc_patch_stack_len(x->rs));
		rt_ext_unmap(x);
	}
	if (rt.hdr)
		rt_sys2(SYS_munmap, rt.hdr, (long)rt.cap);
	rt.hdr = NULL;
	if (rt.fd >= 0)
		rt_close(rt.fd);
	if (rt.dirfd >= 0)
		rt_close(rt.dirfd);
	rt.fd = rt.dirfd = -1;
	if (at.sites)
		rt_sys2(SYS_munmap, at.sites, (long)at.map_len);
	at.sites = NULL;
	at.nsites = at.cap = 0;
}

/* Is the recorder alive (holding the other threads stopped when it asks
 * for a detach)?  It holds an open file description lock on the control
 * file for its whole life, which the kernel drops when it ends however it
 * ends: a test that needs no pid, so it holds in a pid namespace where the
 * recorder's pid is not seen (pidfd_open of it failed there: "the
 * recorder is gone", or worse, a pidfd of another process with that
 * number inside the namespace). */
static int recorder_alive(void)
{
	struct flock l = { .l_type = F_WRLCK, .l_whence = SEEK_SET };

	return at.ctl_fd >= 0 && rt_sys3(SYS_fcntl, at.ctl_fd, F_OFD_GETLK, &l) == 0 && l.l_type != F_UNLCK;
}

/* The recorder stopped every other thread and asks to go: everything back. */
static void detach(void)
{
	uint64_t t0 = now_ns();
	int n = sc_patch_nregions();

	at.ctl->sites_restored = restore_all(0);
	if (!recorder_alive()) {
		/* the threads may run again: their return addresses and the
		 * stubs stay as they are, as when abandoned */
		threads_release(0);
		runtime_off();
		__atomic_store_n(&at.ctl->state, SC_ATT_ABANDONED, __ATOMIC_RELEASE);
		return;
	}
	at.ctl->frames_restored = threads_release(1) + seed_restore();
	image_end();
	runtime_off();
	sc_patch_retstack_fini();
	for (int i = 0; i < n; i++) {
		uint64_t lo, hi;

		sc_patch_region(i, &lo, &hi);
		rt_sys2(SYS_munmap, lo, (long)(hi - lo));
	}
	sc_patch_forget();
	memory_release();
	seed_free();
	at.ctl->restore_ns = now_ns() - t0;
	__atomic_store_n(&at.ctl->state, SC_ATT_DETACHED, __ATOMIC_RELEASE);
}

/* The recorder went away: the code back with the threads running; the
 * stubs and trampolines stay (returns in flight), the probes off. */
static void abandon(void)
{
	uint64_t t0 = now_ns();

	/* nobody will read them: the image, and the recorder's files */
	if (rt.dirfd >= 0 && rt.name[0])
		rt_sys3(SYS_unlinkat, rt.dirfd, rt.name, 0);
	rt_sys3(SYS_unlinkat, AT_FDCWD, at.cfg_path, 0);
	rt_sys3(SYS_unlinkat, AT_FDCWD, at.ctl_path, 0);
	if (rt_getenv(at.envp, SC_ATTACH_ENV_SEED))
		rt_sys3(SYS_unlinkat, AT_FDCWD, rt_getenv(at.envp, SC_ATTACH_ENV_SEED), 0);
	/* the session's private directory, empty now (or another process's
	 * image is still in it: left to the next recorder's clean-up) */
	if (rt.dir[0])
		rt_sys3(SYS_unlinkat, AT_FDCWD, rt.dir, AT_REMOVEDIR);
	at.ctl->sites_restored = restore_all(1);
	threads_release(0);
	runtime_off();
	at.ctl->restore_ns = now_ns() - t0;
	__atomic_store_n(&at.ctl->state, SC_ATT_ABANDONED, __ATOMIC_RELEASE);
}

void sc_attach_child(void)
{
	tls.t = NULL;
	tls.t_notsc = NULL;
	rt.state = RT_OFF;
	tls.state = RT_OFF;
	at.ctl = NULL;
	restore_all(0);                /* (one thread: the one fork returned in) */
}

/* ---- the frames open at the attach ------------------------------------- */

/* Read 8 bytes of our own memory that may not be mapped (the recorder's
 * word for it): 0, or -1 without a fault. */
static int peek(uint64_t addr, uint64_t *val)
{
	struct iovec l = { val, 8 }, r = { (void *)(uintptr_t)addr, 8 };

	return rt_sys6(SYS_process_vm_readv, rt_getpid(), (long)&l, 1, (long)&r, 1, 0) == 8 ? 0 : -1;
}

static int poke(uint64_t addr, uint64_t val)
{
	struct iovec l = { &val, 8 }, r = { (void *)(uintptr_t)addr, 8 };

	return rt_sys6(SYS_process_vm_writev, rt_getpid(), (long)&l, 1, (long)&r, 1, 0) == 8 ? 0 : -1;
}

/*
 * At PATCH, the threads stopped and the plans applied: the seed file in,
 * checked (a slot must hold the call site the recorder read there), and
 * each patched frame's return address pointed at the return trampoline.
 */
static void seed_load(void)
{
	const char *path = rt_getenv(at.envp, SC_ATTACH_ENV_SEED);
	const struct sc_attach_seed_hdr *h;
	uint64_t size, len, tramp = sc_patch_arch_return();
	struct stat st;
	long fd, m;

	if (!path || (fd = rt_sys4(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC, 0)) < 0)
		return;
	if (rt_sys2(SYS_fstat, fd, &st) || (uint64_t)st.st_size < sizeof(*h) ||
	    (uint64_t)st.st_size > sizeof(*h) + (uint64_t)SC_ATTACH_SEED_MAX * 64) {
		rt_close((int)fd);
		return;
	}
	size = (uint64_t)st.st_size;
	/* and a state byte per frame (32 bytes each) and thread (16) */
	len = (size + size / 8 + PAGE) & ~(uint64_t)(PAGE - 1);
	m = rt_sys6(SYS_mmap, 0, (long)len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (rt_mmap_failed(m)) {
		rt_close((int)fd);
		return;
	}
	for (uint64_t got = 0; got < size;) {
		long n = rt_sys4(SYS_pread64, fd, (char *)m + got, (long)(size - got), (long)got);

		if (n <= 0) {
			size = got;
			break;
		}
		got += (uint64_t)n;
	}
	rt_close((int)fd);
	h = (const struct sc_attach_seed_hdr *)m;
	if (size < sizeof(*h) || h->magic != SC_ATTACH_SEED_MAGIC || h->nframes > SC_ATTACH_SEED_MAX ||
	    h->nthreads > SC_ATTACH_SEED_MAX ||
	    size != sizeof(*h) + (uint64_t)h->nthreads * sizeof(*sd.th) + h->nframes * sizeof(*sd.f)) {
		rt_sys2(SYS_munmap, m, (long)len);
		return;
	}
	/* every thread's frames inside the file, or none taken */
	for (uint32_t i = 0; i < h->nthreads; i++) {
		const struct sc_attach_seed_thread *t = (const struct sc_attach_seed_thread *)(h + 1) + i;

		if (t->first > h->nframes || t->nframes > h->nframes - t->first) {
			rt_sys2(SYS_munmap, m, (long)len);
			return;
		}
	}
	sd.map = (void *)m;
	sd.map_len = len;
	sd.nth = h->nthreads;
	sd.nf = h->nframes;
	sd.th = (const struct sc_attach_seed_thread *)(h + 1);
	sd.f = (const struct sc_attach_seed_frame *)(sd.th + sd.nth);
	sd.state = (uint8_t *)m + size;
	sd.taken = sd.state + sd.nf;
	for (uint32_t i = 0; i < sd.nth; i++) {
		const struct sc_attach_seed_thread *t = &sd.th[i];

		at.ctl->seed_threads++;
		for (uint64_t k = t->first; k < t->first + t->nframes; k++) {
			const struct sc_attach_seed_frame *f = &sd.f[k];
			uint64_t v;

			if (!f->slot) {
				sd.state[k] = SEED_OPEN;
			} else if ((f->slot & 7) || f->cfa != f->slot + 8 || peek(f->slot, &v) || v != f->site ||
				   !tramp || poke(f->slot, tramp)) {
				continue;          /* not the frame the recorder saw: left alone */
			} else {
				sd.state[k] = SEED_REDIRECTED;
				at.ctl->seed_redirected++;
			}
			at.ctl->seed_frames++;
		}
	}
}

/* This thread's seed, or -1. */
static long seed_of_me(void)
{
	uint32_t tid;

	if (!sd.map)
		return -1;
	tid = (uint32_t)rt_gettid();
	for (uint32_t i = 0; i < sd.nth; i++)
		if (sd.th[i].tid == tid)
			return i;
	return -1;
}

/* A thread's first event (process.c's thread_start): its frames open at
 * the attach, open from now on (inherited: not new calls). */
void sc_attach_seed_engine(struct sc_eng_thread *t, uint64_t now)
{
	long i = seed_of_me();

	if (i < 0 || (sd.taken[i] & 1))
		return;
	sd.taken[i] |= 1;
	for (uint64_t k = sd.th[i].first; k < sd.th[i].first + sd.th[i].nframes; k++)
		if (sd.state[k] != SEED_BAD)
			sc_eng_inherit(t, sd.f[k].fn, sd.f[k].site, now, sd.f[k].cfa, 0);
}

/* A thread's new return stack (retstack.c): the returns redirected at
 * the attach, outermost first. */
void sc_attach_seed_rs(void (*push)(uint64_t *slot, uint64_t orig, uint64_t site, uint64_t fn))
{
	long i = seed_of_me();

	if (i < 0 || (sd.taken[i] & 2))
		return;
	sd.taken[i] |= 2;
	for (uint64_t k = sd.th[i].first; k < sd.th[i].first + sd.th[i].nframes; k++)
		if (sd.state[k] == SEED_REDIRECTED)
			push((uint64_t *)(uintptr_t)sd.f[k].slot, sd.f[k].site, sd.f[k].site, sd.f[k].fn);
}

/* At DETACH (the threads stopped): the redirected returns of the threads
 * that had no event put back; the threads that had one counted.  The
 * others went onto their return stacks, which threads_release puts back. */
static uint64_t seed_restore(void)
{
	uint64_t put = 0, tramp = sc_patch_arch_return();

	for (uint32_t i = 0; i < sd.nth; i++) {
		if (sd.taken[i])
			at.ctl->seed_used++;
		if (sd.taken[i] & 2)
			continue;
		for (uint64_t k = sd.th[i].first; k < sd.th[i].first + sd.th[i].nframes; k++) {
			uint64_t v;

			if (sd.state[k] == SEED_REDIRECTED && !peek(sd.f[k].slot, &v) && v == tramp &&
			    !poke(sd.f[k].slot, sd.f[k].site))
				put++;
		}
	}
	return put;
}

static void seed_free(void)
{
	if (sd.map)
		rt_sys2(SYS_munmap, sd.map, (long)sd.map_len);
	memset(&sd, 0, sizeof(sd));
}

/* ---- the watchdog ------------------------------------------------------- */

static void ranges_publish(void)
{
	int n = sc_patch_nregions(), k = 0;

	sc_rt_in_self(0);
	at.ctl->ranges[k].lo = rt.self_lo;
	at.ctl->ranges[k++].hi = rt.self_hi;
	for (int i = 0; i < n && k < SC_ATTACH_RANGES; i++, k++)
		sc_patch_region(i, &at.ctl->ranges[k].lo, &at.ctl->ranges[k].hi);
	at.ctl->nranges = (uint32_t)k;
}

static void do_patch(void)
{
	uint64_t t0 = now_ns();

	sc_attach_logging = 1;
	sc_patch_start(at.envp);
	sc_phdr_each(hook_obj, NULL);
	sc_attach_logging = 0;
	seed_load();
	at.ctl->sites = at.nsites;
	ranges_publish();
	at.ctl->patch_ns = now_ns() - t0;
	__atomic_store_n(&at.ctl->state, SC_ATT_PATCHED, __ATOMIC_RELEASE);
}

static void *watchdog(void *arg)
{
	struct timespec tick = { 0, 10000000 };

	(void)arg;
	tls.state = RT_SELF;           /* never the program's */
	__atomic_store_n(&at.ctl->watchdog_tid, (uint32_t)rt_gettid(), __ATOMIC_RELEASE);
	for (;;) {
		uint32_t cmd = __atomic_load_n(&at.ctl->cmd, __ATOMIC_ACQUIRE);
		uint32_t state = __atomic_load_n(&at.ctl->state, __ATOMIC_ACQUIRE);

		if (cmd == SC_ATT_CMD_PATCH && state == SC_ATT_LOADED) {
			do_patch();
			continue;
		}
		if (cmd == SC_ATT_CMD_DETACH) {
			detach();
			break;
		}
		if (!recorder_alive()) {
			abandon();
			break;
		}
		rt_sys2(SYS_nanosleep, &tick, NULL);
	}
	rt_close(at.ctl_fd);
	at.ctl_fd = -1;
	/* (the recorder keeps its own mapping of the control file) */
	rt_sys2(SYS_munmap, at.ctl, (long)((sizeof(struct sc_attach_ctl) + PAGE - 1) & ~(PAGE - 1)));
	at.ctl = NULL;
	return NULL;
}

/* ---- the entry ---------------------------------------------------------- */

static int cfg_read(const char *path)
{
	long fd = rt_sys4(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC, 0), n;
	size_t got = 0, ne = 0;

	if (fd < 0)
		return -1;
	while (got < sizeof(at.cfg) - 1 && (n = rt_sys3(SYS_read, fd, at.cfg + got, sizeof(at.cfg) - 1 - got)) > 0)
		got += (size_t)n;
	rt_close((int)fd);
	at.cfg[got] = 0;
	for (char *p = at.cfg; p < at.cfg + got && ne < ENV_MAX; p += rt_strlen(p) + 1)
		if (*p)
			at.envp[ne++] = p;
	at.envp[ne] = NULL;
	return ne ? 0 : -1;
}

/* This copy of the runtime called again (it is set up once; each attach
 * loads a copy of its own, record/attach.c): said in the new control
 * file. */
static int refuse_again(const char *config)
{
	static char buf[CFG_MAX];
	char *envp[ENV_MAX + 1];
	const char *ctl_path;
	long fd, m, n, got = 0;
	size_t ne = 0, len = (sizeof(struct sc_attach_ctl) + PAGE - 1) & ~(PAGE - 1);

	fd = rt_sys4(SYS_openat, AT_FDCWD, config, O_RDONLY | O_CLOEXEC, 0);
	if (fd < 0)
		return -EALREADY;
	while (got < (long)sizeof(buf) - 1 && (n = rt_sys3(SYS_read, fd, buf + got, sizeof(buf) - 1 - (size_t)got)) > 0)
		got += n;
	rt_close((int)fd);
	buf[got] = 0;
	for (char *p = buf; p < buf + got && ne < ENV_MAX; p += rt_strlen(p) + 1)
		envp[ne++] = p;
	envp[ne] = NULL;
	ctl_path = rt_getenv(envp, SC_ATTACH_ENV_CTL);
	fd = ctl_path ? rt_sys4(SYS_openat, AT_FDCWD, ctl_path, O_RDWR | O_CLOEXEC, 0) : -1;
	if (fd < 0)
		return -EALREADY;
	m = rt_sys6(SYS_mmap, 0, (long)len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	rt_close((int)fd);
	if (rt_mmap_failed(m))
		return -EALREADY;
	rt_stpcpy(((struct sc_attach_ctl *)m)->msg,
		  "this copy of the stackclock runtime ran in this process already (each attach "
		  "needs a copy of its own; the recorder did not see this one in /proc/PID/maps)",
		  sizeof(((struct sc_attach_ctl *)m)->msg));
	rt_sys2(SYS_munmap, m, (long)len);
	return -EALREADY;
}

HOOK int sc_rt_attach(const char *config)
{
	const char *ctl_path;
	uint64_t all = ~0ull, old = 0;
	uint64_t t0 = now_ns();
	long fd, m;
	int err;

	if (at.ctl || rt.state != RT_NEW)
		return refuse_again(config);
	if (cfg_read(config))
		return -ENOENT;
	ctl_path = rt_getenv(at.envp, SC_ATTACH_ENV_CTL);
	if (!ctl_path)
		return -EINVAL;
	rt_stpcpy(at.cfg_path, config, sizeof(at.cfg_path));
	rt_stpcpy(at.ctl_path, ctl_path, sizeof(at.ctl_path));
	fd = rt_sys4(SYS_openat, AT_FDCWD, ctl_path, O_RDWR | O_CLOEXEC, 0);
	if (fd < 0)
		return (int)fd;
	m = rt_sys6(SYS_mmap, 0, (long)((sizeof(struct sc_attach_ctl) + PAGE - 1) & ~(PAGE - 1)),
		    PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (rt_mmap_failed(m)) {
		rt_close((int)fd);
		return -ENOMEM;
	}
	at.ctl_fd = fd_high((int)fd);
	at.ctl = (struct sc_attach_ctl *)m;
	if (at.ctl->magic != SC_ATTACH_MAGIC || at.ctl->version != SC_ATTACH_VERSION) {
		say("the control file is not this runtime's version");
		return -EINVAL;
	}
	if (rt_attach_init(at.envp)) {
		say("the runtime could not set up its image (see the recorder's messages)");
		__atomic_store_n(&at.ctl->state, SC_ATT_FAILED, __ATOMIC_RELEASE);
		return -EIO;
	}
	if (!recorder_alive()) {
		say("the recorder is gone (it holds no lock on the control file)");
		if (rt.dirfd >= 0 && rt.name[0])
			rt_sys3(SYS_unlinkat, rt.dirfd, rt.name, 0);
		runtime_off();
		__atomic_store_n(&at.ctl->state, SC_ATT_FAILED, __ATOMIC_RELEASE);
		return -ESRCH;
	}
	/* every signal blocked in the watchdog: the program's are not for it */
	rt_sys4(SYS_rt_sigprocmask, SIG_SETMASK, &all, &old, 8);
	err = pthread_create(&at.watchdog, NULL, watchdog, NULL);
	rt_sys4(SYS_rt_sigprocmask, SIG_SETMASK, &old, 0, 8);
	if (err) {
		say("cannot start the runtime's thread (pthread_create failed)");
		__atomic_store_n(&at.ctl->state, SC_ATT_FAILED, __ATOMIC_RELEASE);
		return -err;
	}
	pthread_detach(at.watchdog);
	/* its tid known before we return: the recorder leaves it running */
	for (int i = 0; i < 2000 && !__atomic_load_n(&at.ctl->watchdog_tid, __ATOMIC_ACQUIRE); i++) {
		struct timespec ms = { 0, 1000000 };

		rt_sys2(SYS_nanosleep, &ms, NULL);
	}
	/* what takes the loader's lock, done now, with the threads running */
	sc_rt_in_self(0);
	/* the unwinder the C library loads for thread cancellation and exit
	 * (and keeps): loaded now, so that its lookups of unwind tables go
	 * through this runtime's wrapper once its GOT is hooked, as they do
	 * preloaded (retstack.c's _dl_find_object: a cancelled thread's
	 * cleanup handlers run).  Left loaded at the detach, as the C
	 * library would have left it. */
	dlopen("libgcc_s.so.1", RTLD_NOW);
	sc_patch_retstack_init();
	dl_iterate_phdr(snap_one, NULL);
	at.snap = 1;
	at.ctl->setup_ns = now_ns() - t0;
	__atomic_store_n(&at.ctl->state, SC_ATT_LOADED, __ATOMIC_RELEASE);
	return 0;
}
