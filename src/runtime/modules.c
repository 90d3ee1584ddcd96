/*
 * modules — the objects loaded in the process, as the recorder needs them:
 * a new calling context or call site makes sure the image's list of
 * modules (shm.h) holds the object its address is in (rt_newaddr, the
 * engine's callback), found in a table of the objects' address ranges kept
 * here; and the span of the runtime's own code (sc_rt_in_self).
 */
#include "runtime/rt.h"

#include <link.h>
#include <string.h>
#include <sys/mman.h>

void module_add(uint64_t base, const char *path)
{
	struct sc_shm_header *h = rt.hdr;
	uint32_t i, n = __atomic_load_n(&h->nmodules, __ATOMIC_ACQUIRE);
	size_t len = rt_strlen(path);
	uint64_t off;

	if (len >= SC_SHM_PATH_MAX)
		len = SC_SHM_PATH_MAX - 1;
	/* known if the same object is at the same place (a library unloaded
	 * and another loaded at its address is a new one) */
	for (i = 0; i < n && i < SC_SHM_MAX_MODULES; i++)
		if (__atomic_load_n(&h->modules[i].valid, __ATOMIC_ACQUIRE) && h->modules[i].base == base &&
		    h->modules[i].path_len == len &&
		    rt_memeq(rt.arena.base + h->modules[i].path_off, path, len))
			return;
	i = __atomic_fetch_add(&h->nmodules, 1, __ATOMIC_RELAXED);
	off = i < SC_SHM_MAX_MODULES ? sc_eng_alloc(&rt.arena, len + 1) : 0;
	if (!off) {
		__atomic_fetch_add(&h->modules_lost, 1, __ATOMIC_RELAXED);
		return;
	}
	memcpy(rt.arena.base + off, path, len);
	rt.arena.base[off + len] = 0;
	h->modules[i].base = base;
	h->modules[i].path_off = off;
	h->modules[i].path_len = (uint32_t)len;
	__atomic_store_n(&h->modules[i].valid, 1, __ATOMIC_RELEASE);
}

/*
 * The upper halves of the vector registers (AVX, AVX-512 state), kept
 * around a call into the C library from a probe: a program patched at run
 * time may keep 256-bit values live across a call to a function it knows
 * leaves them alone (-fipa-ra), and the library's string functions may be
 * AVX code ending in vzeroupper.  sc_rt_vsafe() keeps xmm0-15 (the stubs' probes
 * reach this only through it, patch_x86_64.c); this keeps
 * the rest, by XSAVE of the enabled components 2 and 5-7 into a per-thread
 * area (none if the processor or the kernel has no XSAVE, or the area would
 * not fit).
 */
static uint64_t rt_xmask = ~0ull;          /* ~0: not known yet */

static uint64_t rt_vec_mask(void)
{
	uint32_t a, b, c, d, lo, hi;

	if (rt_xmask != ~0ull)
		return rt_xmask;
	__asm__ volatile("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d) : "a"(1), "c"(0));
	if (!(c & (1u << 27))) {               /* OSXSAVE */
		rt_xmask = 0;
		return 0;
	}
	__asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
	__asm__ volatile("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d) : "a"(0xd), "c"(0));
	rt_xmask = b + 64 <= RT_XSAVE_MAX ? (((uint64_t)hi << 32 | lo) & 0xe4) : 0;
	return rt_xmask;
}

/* Where the state goes: the thread's rt_tls_ext (none: not kept, m 0). */
static inline struct rt_tls_ext *rt_vec_save(uint64_t *m)
{
	struct rt_tls_ext *x = *m ? rt_ext() : NULL;

	if (!x)
		*m = 0;
	else
		__asm__ volatile("xsave64 %0" : "+m"(x->xarea) : "a"((uint32_t)*m), "d"((uint32_t)(*m >> 32)));
	return x;
}

static inline void rt_vec_restore(const struct rt_tls_ext *x, uint64_t m)
{
	if (m)
		__asm__ volatile("xrstor64 %0" : : "m"(x->xarea), "a"((uint32_t)m), "d"((uint32_t)(m >> 32)));
}

/*
 * The modules' address ranges, kept by the runtime (issue 17: dladdr()
 * looks for the nearest symbol, a scan of the object's whole symbol table,
 * and ran at every new calling context: 94 % of a patched compiler's
 * time).  A table sorted by address, made from dl_iterate_phdr() and made
 * again when the loader's counts of objects added and removed have moved
 * (an address in no known range) or after a dlclose; readers take the
 * published table without a lock (tables are never freed: a reader may be
 * in one; they are remade only when objects come and go).  Each range
 * remembers that its module is in the image's list, so a new calling
 * context costs a binary search.
 */
/* The span of an object's PT_LOAD segments, as link-time addresses. */
void load_span(const struct dl_phdr_info *info, uint64_t *lo, uint64_t *hi)
{
	*lo = UINT64_MAX;
	*hi = 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type != PT_LOAD)
			continue;
		if (ph->p_vaddr < *lo)
			*lo = ph->p_vaddr;
		if (ph->p_vaddr + ph->p_memsz > *hi)
			*hi = ph->p_vaddr + ph->p_memsz;
	}
}

/* The object holding this runtime: its span, once. */
static int self_range(struct dl_phdr_info *info, size_t size, void *arg)
{
	uint64_t me = (uint64_t)(uintptr_t)arg, lo, hi;

	(void)size;
	load_span(info, &lo, &hi);
	if (me < info->dlpi_addr + lo || me >= info->dlpi_addr + hi)
		return 0;
	rt.self_lo = info->dlpi_addr + lo;
	__atomic_store_n(&rt.self_hi, info->dlpi_addr + hi, __ATOMIC_RELEASE);
	return 1;
}

/* Is pc in this runtime (its probes, its wrappers)?  For the sampled
 * shares' probe samples and for hiding our frames from backtrace(). */
int sc_rt_in_self(uint64_t pc)
{
	if (!__atomic_load_n(&rt.self_hi, __ATOMIC_ACQUIRE))
		dl_iterate_phdr(self_range, (void *)(uintptr_t)sc_rt_in_self);
	return pc >= rt.self_lo && pc < rt.self_hi;
}

struct rt_modrange {
	uint64_t lo, hi;               /* mapped [lo, hi) */
	uint64_t base;                 /* where its first page is (dli_fbase) */
	const char *name;              /* dlpi_name: "" for the program */
	uint32_t listed;               /* module_add() done for this image */
};
struct rt_modtab {
	uint64_t adds, subs;           /* the loader's counts when made */
	uint32_t n, cap;
	size_t map_len;
	struct rt_modrange r[];
};
static struct rt_modtab *rt_mods;
static int rt_mods_lock;
int rt_mods_stale;

static int modtab_add(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct rt_modtab *m = arg;
	uint64_t lo, hi;
	struct rt_modrange *x;
	uint32_t i;

	(void)size;
	m->adds = info->dlpi_adds;
	m->subs = info->dlpi_subs;
	load_span(info, &lo, &hi);
	if (hi <= lo || m->n >= m->cap)
		return 0;
	/* sorted insertion: objects are few */
	for (i = m->n; i > 0 && m->r[i - 1].lo > info->dlpi_addr + lo; i--)
		m->r[i] = m->r[i - 1];
	x = &m->r[i];
	x->lo = info->dlpi_addr + (lo & ~(PAGE - 1));
	x->hi = info->dlpi_addr + hi;
	x->base = x->lo;
	x->name = info->dlpi_name ? info->dlpi_name : "";
	x->listed = 0;
	m->n++;
	return 0;
}

/* A new table, published; NULL if memory is refused. */
static struct rt_modtab *modtab_make(void)
{
	uint32_t cap = 1024;
	size_t len = (sizeof(struct rt_modtab) + cap * sizeof(struct rt_modrange) + PAGE - 1) & ~(PAGE - 1);
	long map = rt_sys6(SYS_mmap, 0, (long)len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct rt_modtab *m;
	struct rt_tls_ext *x;
	uint64_t v = rt_vec_mask();

	if (rt_mmap_failed(map))
		return NULL;
	m = (struct rt_modtab *)map;
	m->cap = cap;
	m->map_len = len;
	x = rt_vec_save(&v);
	dl_iterate_phdr(modtab_add, m);
	rt_vec_restore(x, v);
	__atomic_store_n(&rt_mods, m, __ATOMIC_RELEASE);
	return m;
}

static struct rt_modrange *modtab_find(struct rt_modtab *m, uint64_t addr)
{
	uint32_t lo = 0, hi = m ? m->n : 0;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (addr < m->r[mid].lo)
			hi = mid;
		else if (addr >= m->r[mid].hi)
			lo = mid + 1;
		else
			return &m->r[mid];
	}
	return NULL;
}

/* The range holding addr, from a table made again if objects came or went. */
static struct rt_modrange *module_range(uint64_t addr)
{
	struct rt_modtab *m = __atomic_load_n(&rt_mods, __ATOMIC_ACQUIRE);
	struct rt_modrange *x = __atomic_load_n(&rt_mods_stale, __ATOMIC_ACQUIRE) ? NULL : modtab_find(m, addr);

	if (x)
		return x;
	if (rt.sandboxed)           /* no mmap now: the table made before it closed */
		return modtab_find(m, addr);
	if (__atomic_exchange_n(&rt_mods_lock, 1, __ATOMIC_ACQUIRE)) {
		/* another thread remakes it (rare, and short): wait for its
		 * table, a while at most (never this thread: a signal handler's
		 * probes are queued, not run inside ours) */
		for (int i = 0; i < 10000 && __atomic_load_n(&rt_mods_lock, __ATOMIC_ACQUIRE); i++)
			rt_sys0(SYS_sched_yield);
		return modtab_find(__atomic_load_n(&rt_mods, __ATOMIC_ACQUIRE), addr);
	}
	__atomic_store_n(&rt_mods_stale, 0, __ATOMIC_RELEASE);
	m = modtab_make();
	__atomic_store_n(&rt_mods_lock, 0, __ATOMIC_RELEASE);
	return modtab_find(m, addr);
}

static int rt_has_slash(const char *s)
{
	while (*s && *s != '/')
		s++;
	return *s == '/';
}

/* The module table made now, if it is not (a sandbox about to close). */
void sc_modules_prepare(void)
{
	module_range((uint64_t)(uintptr_t)sc_modules_prepare);
}

/* A new calling context or call site: make sure the recorder will know the
 * module holding addr. */
void rt_newaddr(struct sc_eng_arena *a, uint64_t addr)
{
	struct rt_modrange *x;
	const char *name;

	(void)a;
	if (rt.rebuilding)
		return;
	x = module_range(addr);
	if (!x || __atomic_load_n(&x->listed, __ATOMIC_ACQUIRE))
		return;
	/* the main program's entry has no name (and a name may be relative):
	 * its path is /proc/self/exe's */
	name = x->name;
	if (name[0] && name[0] != '/' && rt_has_slash(name) && !rt.sandboxed) {
		/* dlopen'ed by a relative path: made absolute with the current
		 * directory, so that the report finds the file from anywhere */
		char abs[SC_SHM_PATH_MAX];
		const char *rel = name;
		long n = rt_sys2(SYS_getcwd, abs, sizeof(abs) - 2);

		while (rel[0] == '.' && rel[1] == '/')
			rel += 2;
		if (n > 0 && (size_t)n + rt_strlen(rel) + 1 < sizeof(abs)) {
			char *p = abs + rt_strlen(abs);

			*p++ = '/';
			rt_stpcpy(p, rel, sizeof(abs) - (size_t)(p - abs));
			module_add(x->base, abs);
			__atomic_store_n(&x->listed, 1, __ATOMIC_RELEASE);
			return;
		}
	}
	module_add(x->base, name[0] ? name : rt.hdr->exe);
	__atomic_store_n(&x->listed, 1, __ATOMIC_RELEASE);
}
