/*
 * libcall — calls from instrumented code into other modules, as rows of
 * their own (SPEC section 11): the PLT/GOT hooks.
 *
 * A call from an object to a function another object defines goes through
 * a slot of the caller's global offset table: a PLT entry's `jmp *slot`
 * (R_X86_64_JUMP_SLOT), or, built with -fno-plt, `call *slot(%rip)` itself
 * (R_X86_64_GLOB_DAT).  Each such slot of an object we hook gets the
 * address of a stub of its own (patch.h, patch_x86_64.c: the function's
 * address, the real target, two instructions into the shared library-call
 * entry).  The call then runs the entry probe and has its return
 * redirected through the return stack (retstack.c) as a patched
 * function's: one stack for both, with the same care for longjmp,
 * exceptions and signals.  The library-call entry and return trampolines
 * keep only the argument and the return registers (a call into another
 * object may clobber the rest), and their probes do the return stack's
 * work and the probe's fast path in one call: a library call costs about
 * what a compiled-in hook's function probes cost (bench/libcalls.sh).
 *
 * Which objects (STACKCLOCK_LIBCALLS): "program", the objects with probes
 * (hooks compiled in, or patched by a plan); "all", every object but the
 * loader, this runtime and the libraries the runtime itself calls on its
 * probe paths (patch.h's SC_PATCH_NEVER_CALLED: their calls would probe
 * the runtime's own); "none" or absent, nothing.
 *
 * Which slots: those whose target is a function of another object without
 * probes of its own (an instrumented callee already has its row), not this
 * runtime (its wrappers: dlopen, longjmp, the unwinder's), not the loader,
 * and not one of these (never_hooked()):
 *   - functions that return twice or keep their return address (setjmp,
 *     vfork, getcontext: the copy they keep would be the trampoline's);
 *   - the unwinder's entries and the C++ throws (_Unwind_Resume reads its
 *     caller from the stack; a throw's frame would sit above the frames
 *     g++'s cleanups close, one repair per throw);
 *   - what a vfork child calls on its parent's stack and memory (exec*,
 *     _exit: a probe there would change the parent's state);
 *   - functions that act on behalf of their caller's object, found from
 *     their return address (dlsym's RTLD_NEXT and the dependency it adds,
 *     which keeps a dlopen'ed object from being unloaded; dlopen's RUNPATH).  A GLOB_DAT slot is taken only when every reference to it in the
 * object's code is a `call *slot` or `jmp *slot`: a slot also loaded as a
 * pointer (`&memcpy` passed on, compared) must keep the real address.
 *
 * The target: the slot's value, bound by the loader, or, for a slot still
 * lazy (pointing into its own object's PLT), the definition the loader
 * would bind it to at its first call, found here (lazy_target(): the
 * objects' hash tables and version tables, the scope's order; no dlsym(),
 * whose error path calls malloc(), the program's own if it defines one).
 * The program keeps its lazy binding (no LD_BIND_NOW): a slot whose symbol
 * no loaded object defines stays lazy, and the program fails at that call,
 * or never calls it, exactly as without us.  The row's function is the address
 * the defining object gives the name, found in its GNU hash table (an
 * IFUNC's symbol, not the variant the loader picked: memcpy and memmove
 * share a variant but are two rows).
 *
 * Slots already holding one of our stubs (an object seen before, a fork's
 * copy) are left alone, so every dlopen() may rescan all objects.  Read-only
 * slots (full RELRO) are made writable for the store and put back.  Runs
 * under patch.c's lock, from sc_patch_start() and after every dlopen().
 */
#include "runtime/libcall.h"
#include "runtime/dynsym.h"
#include "runtime/patch.h"
#include "runtime/rt.h"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <sys/mman.h>

#define PAGE 4096ul

#define LC_MAX_OBJS     512

int sc_libcall_mode;

/* The names of the rows each hooked object makes, kept here in the shared
 * table's own layout (a forked child publishes them again in its image). */
static struct {
	struct sc_shm_libcalls *tab[SC_SHM_MAX_LIBCALL_TABS];
	int n;
} lc_names;

/* The loaded objects, with what the hooks need of each. */
struct obj {
	struct dl_phdr_info info;           /* its phdrs stay while it is loaded */
	uint64_t lo, hi;                    /* its mapped span */
	int is_main, self, loader, never, probed;
	struct rt_dyn d;
};

static struct {
	struct obj o[LC_MAX_OBJS];
	int n;
	int startup;                        /* objects loaded at the first scan */
	/* the local scope of scope_of (one this scan: reset by each): its
	 * objects' indexes, itself first, then its DT_NEEDED closure */
	const struct obj *scope_of;
	int scope[LC_MAX_OBJS], nscope;
} lc;

static int str_eq(const char *a, const char *b)
{
	while (*a && *a == *b)
		a++, b++;
	return *a == *b;
}

static struct obj *obj_of(uint64_t addr)
{
	for (int i = 0; i < lc.n; i++)
		if (addr >= lc.o[i].lo && addr < lc.o[i].hi)
			return &lc.o[i];
	return NULL;
}

static int collect(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct obj *o;
	uint64_t self = (uint64_t)(uintptr_t)&collect;
	const char *name = info->dlpi_name ? info->dlpi_name : "";

	(void)size;
	(void)arg;
	if (lc.n == LC_MAX_OBJS)
		return 1;
	o = &lc.o[lc.n];
	*o = (struct obj){ .info = *info, .is_main = lc.n == 0 };
	load_span(info, &o->lo, &o->hi);
	if (o->lo >= o->hi)
		return 0;                  /* nothing mapped */
	o->lo += info->dlpi_addr;
	o->hi += info->dlpi_addr;
	o->self = self >= o->lo && self < o->hi;
	o->loader = sc_patch_lib_is(name, SC_PATCH_NEVER_LOADER);
	o->never = sc_patch_never(name);
	o->probed = sc_patch_obj_probed(info);
	rt_dyn_read(info, &o->d);
	lc.n++;
	return 0;
}

/* Functions whose return address must stay the caller's own (see top). */
static int never_hooked(const char *name)
{
	static const char *const names[] = {
		"setjmp", "_setjmp", "__sigsetjmp", "sigsetjmp", "savectx", "getcontext", "vfork", "__vfork",
		"__libc_start_main", "_Unwind_Resume", "_Unwind_RaiseException", "_Unwind_Resume_or_Rethrow",
		"_Unwind_SetIP",
		"_Unwind_ForcedUnwind", "_Unwind_Backtrace", "__cyg_profile_func_enter", "__cyg_profile_func_exit",
		"__tls_get_addr", "__cxa_finalize", "__cxa_throw", "__cxa_rethrow", "execve", "execv", "execvp",
		"execvpe", "execl", "execlp", "execle", "fexecve", "_exit", "_Exit", "dlsym", "dlvsym", "dlopen",
		"dlmopen",
	};

	for (unsigned k = 0; k < sizeof(names) / sizeof(names[0]); k++)
		if (str_eq(name, names[k]))
			return 1;
	return 0;
}

/* A slot to hook: where, what its row is, where it goes. */
struct slot {
	uint64_t *at;
	uint64_t fn, target, stub;
	const char *name;
};

/* Copy table t into the image's arena and list it there. */
static void publish(const struct sc_shm_libcalls *t)
{
	struct sc_shm_header *h = sc_rt_shm_header();
	uint64_t off;
	uint32_t i;

	if (!h)
		return;
	off = sc_rt_alloc(t->len);
	i = __atomic_fetch_add(&h->nlibcall_tabs, 1, __ATOMIC_RELAXED);
	if (!off || i >= SC_SHM_MAX_LIBCALL_TABS) {
		__atomic_fetch_add(&h->libcall_tabs_lost, 1, __ATOMIC_RELAXED);
		return;
	}
	for (uint32_t k = 0; k < t->len; k++)
		((uint8_t *)h)[off + k] = ((const uint8_t *)t)[k];
	__atomic_store_n(&h->libcall_tab[i], off, __ATOMIC_RELEASE);
}

/* The table of the n slots hooked (their rows' names), kept and published. */
static void names_add(const struct slot *sl, uint32_t n)
{
	uint64_t len = sizeof(struct sc_shm_libcalls) + n * sizeof(((struct sc_shm_libcalls *)0)->e[0]), at;
	struct sc_shm_libcalls *t;
	long m;

	for (uint32_t i = 0; i < n; i++)
		len += rt_strlen(sl[i].name) + 1;
	len = (len + 7) & ~7ull;
	if (lc_names.n == SC_SHM_MAX_LIBCALL_TABS || len > UINT32_MAX)
		return;
	m = rt_sys6(SYS_mmap, 0, (long)len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (rt_mmap_failed(m))
		return;
	t = (struct sc_shm_libcalls *)m;
	t->n = n;
	t->len = (uint32_t)len;
	at = sizeof(*t) + n * sizeof(t->e[0]);
	for (uint32_t i = 0; i < n; i++) {
		size_t k = rt_strlen(sl[i].name);

		t->e[i].fn = sl[i].fn;
		t->e[i].name = (uint32_t)at;
		t->e[i].name_len = (uint32_t)k;
		for (size_t j = 0; j <= k; j++)
			((char *)t)[at + j] = sl[i].name[j];
		at += k + 1;
	}
	lc_names.tab[lc_names.n++] = t;
	publish(t);
}

void sc_libcall_republish(void)
{
	for (int i = 0; i < lc_names.n; i++)
		publish(lc_names.tab[i]);
}

/*
 * The references to an object's GLOB_DAT slots from its code, found in one
 * pass over it (the slots sorted, each displacement looked up): a slot is
 * hooked only when it is called or jumped through (ff 15 / ff 25 disp32)
 * and never referred to otherwise (a load of the pointer, which may be
 * compared or passed on).  A rip-relative disp32 reaches p + 4 + disp when
 * no immediate follows it, as in loads, calls and jumps through memory.
 */
#define REF_CALL  1
#define REF_OTHER 2

struct refs {
	uint64_t *slot;                 /* sorted */
	uint8_t *seen;                  /* REF_* per slot */
	uint64_t n, cap;
};

static void refs_sort(struct refs *r)
{
	/* shell sort: no libc function (the program may define qsort) */
	for (uint64_t gap = r->n / 2; gap; gap /= 2)
		for (uint64_t i = gap; i < r->n; i++)
			for (uint64_t j = i; j >= gap && r->slot[j - gap] > r->slot[j]; j -= gap) {
				uint64_t t = r->slot[j];

				r->slot[j] = r->slot[j - gap];
				r->slot[j - gap] = t;
			}
}

static int64_t refs_find(const struct refs *r, uint64_t a)
{
	uint64_t lo = 0, hi = r->n;

	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;

		if (r->slot[mid] < a)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < r->n && r->slot[lo] == a ? (int64_t)lo : -1;
}

static void refs_scan(const struct obj *o, struct refs *r)
{
	const struct dl_phdr_info *info = &o->info;

	if (!r->n)
		return;
	refs_sort(r);
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		const uint8_t *p, *end;

		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
			continue;
		p = (const uint8_t *)(info->dlpi_addr + ph->p_vaddr);
		end = p + ph->p_filesz;
		for (p += 2; p + 4 <= end; p++) {
			int32_t d;
			uint64_t to;
			int64_t k;

			__builtin_memcpy(&d, p, 4);
			to = (uint64_t)(uintptr_t)(p + 4) + (uint64_t)(int64_t)d;
			if (to < r->slot[0] || to > r->slot[r->n - 1] || (to & 7) || (k = refs_find(r, to)) < 0)
				continue;
			r->seen[k] |= p[-2] == 0xff && (p[-1] == 0x15 || p[-1] == 0x25) ? REF_CALL : REF_OTHER;
		}
	}
}

/* Is slot called through, and only that? */
static int only_called(const struct refs *r, uint64_t slot)
{
	int64_t k = refs_find(r, slot);

	return k >= 0 && r->seen[k] == REF_CALL;
}

/*
 * A lazily bound slot's target, as the loader will bind it at the first
 * call: the first definition of the symbol, in the version the object asks
 * for, in the global scope (the objects loaded at start, in the loader's
 * order: the program, the preloaded ones, their dependencies) and then in
 * the object's local scope: itself and its dependencies (DT_NEEDED,
 * transitively, breadth first, as the loader lists them), wherever they
 * are in the load order, and last the objects loaded after it (one
 * dlopen()ed RTLD_GLOBAL later; one loaded RTLD_LOCAL by another dlopen
 * that is not its dependency is in no scope of its).  Before, the objects
 * loaded after startup but before o were all skipped, its own
 * dependencies among them when an earlier dlopen() had loaded them (a
 * second plugin linked with the first one's library): those slots stayed
 * lazy, their calls no rows.  An IFUNC's variant is its resolver's answer,
 * as the loader's.  0 if there is none: the slot stays lazy, and the
 * program fails (or not) at that call exactly as it would without us.
 */
/* The vDSO: in dl_iterate_phdr's list, never in a lookup scope (its
 * clock_gettime is not the C library's, which the program asked for). */
static int obj_is_vdso(const struct obj *o)
{
	const char *n = o->info.dlpi_name, *v = "linux-vdso";

	while (n && *v && *n == *v)
		n++, v++;
	return n && !*v;
}

/* The object DT_NEEDED name `needed` loaded: the first that answers to it
 * in load order, or -1. */
static int obj_needed(const char *needed)
{
	for (int j = 0; j < lc.n; j++)
		if (!obj_is_vdso(&lc.o[j]) && rt_dyn_is_needed(&lc.o[j].d, lc.o[j].info.dlpi_name, needed))
			return j;
	return -1;
}

/* lc.scope: o, then its dependencies breadth first, each once. */
static void local_scope(const struct obj *o)
{
	static unsigned char in[LC_MAX_OBJS];

	if (lc.scope_of == o)
		return;
	for (int i = 0; i < lc.n; i++)
		in[i] = 0;
	lc.scope_of = o;
	lc.nscope = 0;
	lc.scope[lc.nscope++] = (int)(o - lc.o);
	in[o - lc.o] = 1;
	for (int q = 0; q < lc.nscope; q++) {
		const struct obj *x = &lc.o[lc.scope[q]];
		const char *name;

		for (int i = 0; i < 4096 && (name = rt_dyn_needed(&x->d, i)); i++) {
			int j = obj_needed(name);

			if (j >= 0 && !in[j] && lc.nscope < LC_MAX_OBJS) {
				in[j] = 1;
				lc.scope[lc.nscope++] = j;
			}
		}
	}
}

/* Does def define name (in version ver) for a lookup? its symbol index */
static uint32_t defines_for(const struct obj *def, const char *name, const char *ver, int not_self)
{
	if ((not_self && def->self) || obj_is_vdso(def))
		return 0;
	return rt_dyn_lookup_ver(&def->d, name, ver);
}

static const struct obj *definer(const struct obj *o, uint32_t symidx, const char *name, int not_self,
				 const ElfW(Sym) **sym)
{
	const char *ver = rt_dyn_import_version(&o->d, symidx);
	int k = (int)(o - lc.o);
	uint32_t j;

	for (int i = 0; i < lc.n; i++) {
		const struct obj *def = &lc.o[i];

		if (i >= lc.startup && i < k)
			continue;          /* searched below: only o's own */
		if (i == k && k >= lc.startup) {
			/* o's local scope: o, its dependencies */
			local_scope(o);
			for (int q = 0; q < lc.nscope; q++) {
				def = &lc.o[lc.scope[q]];
				if (lc.scope[q] >= lc.startup && (j = defines_for(def, name, ver, not_self))) {
					*sym = &def->d.symtab[j];
					return def;
				}
			}
			continue;
		}
		if (i > k && k >= lc.startup && lc.scope_of == o) {
			int seen = 0;

			for (int q = 0; q < lc.nscope && !seen; q++)
				seen = lc.scope[q] == i;
			if (seen)
				continue;  /* searched with o's scope */
		}
		if (!(j = defines_for(def, name, ver, not_self)))
			continue;
		*sym = &def->d.symtab[j];
		return def;
	}
	return NULL;
}

static uint64_t lazy_target(const struct obj *o, uint32_t symidx, const char *name)
{
	const ElfW(Sym) *sym;
	const struct obj *def = definer(o, symidx, name, 0, &sym);
	uint64_t a;

	if (!def)
		return 0;
	a = def->d.base + sym->st_value;
	if (ELF64_ST_TYPE(sym->st_info) == STT_GNU_IFUNC)
		a = ((uint64_t (*)(void))(uintptr_t)a)();
	return a;
}

/* Functions that run a program, which this runtime wraps (exec.c) and
 * which were rows before it did: their rows stay the C library's. */
static int wrapped_row(const char *name)
{
	return str_eq(name, "posix_spawn") || str_eq(name, "posix_spawnp") || str_eq(name, "system") ||
	       str_eq(name, "popen") || str_eq(name, "pclose") || str_eq(name, "makecontext");    /* ctx.c's */
}

/* Decide on the relocation r of object o; 1 with *s filled to hook it. */
static int slot_of(const struct obj *o, const ElfW(Rela) *r, int glob_dat, const struct refs *refs,
		   struct slot *s)
{
	uint64_t i = ELF64_R_SYM(r->r_info), v;
	const ElfW(Sym) *sym;
	const char *name;
	const struct obj *def;

	if (!i)
		return 0;
	sym = &o->d.symtab[i];
	if (sym->st_shndx != SHN_UNDEF || sym->st_name >= o->d.strsz)
		return 0;                  /* defined here: not a call out */
	if (glob_dat && ELF64_ST_TYPE(sym->st_info) != STT_FUNC && ELF64_ST_TYPE(sym->st_info) != STT_NOTYPE)
		return 0;
	name = o->d.strtab + sym->st_name;
	if (!*name || never_hooked(name))
		return 0;
	s->at = (uint64_t *)(o->d.base + r->r_offset);
	if ((uint64_t)(uintptr_t)s->at < o->lo || (uint64_t)(uintptr_t)s->at + 8 > o->hi)
		return 0;
	v = *s->at;
	if (!v || sc_patch_in_stubs(v))
		return 0;                  /* weak and absent, or done before */
	if (v >= o->lo && v < o->hi && (glob_dat || !(v = lazy_target(o, (uint32_t)i, name))))
		return 0;                  /* not bound, and not found (see the top) */
	def = obj_of(v);
	if (def && def->self && wrapped_row(name)) {
		/* the call goes to our wrapper; its row is the function of
		 * the object the wrapper passes it on to */
		const ElfW(Sym) *nsym;
		const struct obj *next = definer(o, (uint32_t)i, name, 1, &nsym);

		if (!next || next == o || next->loader || next->probed ||
		    (glob_dat && refs && !only_called(refs, (uint64_t)(uintptr_t)s->at)))
			return 0;
		s->target = v;
		s->name = name;
		s->fn = next->d.base + nsym->st_value;
		return 1;
	}
	if (!def || def == o || def->self || def->loader || def->probed)
		return 0;
	if (glob_dat && refs && !only_called(refs, (uint64_t)(uintptr_t)s->at))
		return 0;
	s->target = v;
	s->name = name;
	i = rt_dyn_lookup(&def->d, name);
	s->fn = i ? def->d.base + def->d.symtab[i].st_value : v;
	return 1;
}

/* Was the page of at writable before we touched it? */
static int page_writable(const struct obj *o, uint64_t at)
{
	const struct dl_phdr_info *info = &o->info;
	int w = 0;

	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uint64_t a = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type == PT_LOAD && at >= a && at < a + ph->p_memsz)
			w = !!(ph->p_flags & PF_W);
	}
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uint64_t a = (info->dlpi_addr + ph->p_vaddr) & ~(PAGE - 1);
		uint64_t b = (info->dlpi_addr + ph->p_vaddr + ph->p_memsz) & ~(PAGE - 1);

		if (ph->p_type == PT_GNU_RELRO && at >= a && at < b)
			w = 0;
	}
	return w;
}

static void obj_hook(struct obj *o)
{
	const ElfW(Rela) *sets[2] = { o->d.jmprel, o->d.rela };
	uint64_t lens[2] = { o->d.jmprel_sz, o->d.rela_sz }, want = 0, len, region, at, rlen = 0;
	struct refs refs = { 0 };
	struct slot s, *done;
	uint32_t ndone = 0;

	if (!o->d.jmprel && !o->d.rela)
		return;
	/* the GLOB_DAT slots that could be hooked, and their references */
	for (uint64_t i = 0; o->d.rela && i < o->d.rela_sz / sizeof(ElfW(Rela)); i++)
		if (ELF64_R_TYPE(o->d.rela[i].r_info) == R_X86_64_GLOB_DAT && slot_of(o, &o->d.rela[i], 1, NULL, &s))
			refs.cap++;
	if (refs.cap) {
		long m;

		rlen = (refs.cap * 9 + PAGE - 1) & ~(PAGE - 1);
		m = rt_sys6(SYS_mmap, 0, (long)rlen, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (rt_mmap_failed(m)) {
			refs.cap = 0;           /* no GLOB_DAT slot hooked */
		} else {
			refs.slot = (uint64_t *)m;
			refs.seen = (uint8_t *)(refs.slot + refs.cap);
			for (uint64_t i = 0; i < o->d.rela_sz / sizeof(ElfW(Rela)) && refs.n < refs.cap; i++)
				if (ELF64_R_TYPE(o->d.rela[i].r_info) == R_X86_64_GLOB_DAT &&
				    slot_of(o, &o->d.rela[i], 1, NULL, &s))
					refs.slot[refs.n++] = (uint64_t)(uintptr_t)s.at;
			refs_scan(o, &refs);
		}
	}
	for (int k = 0; k < 2; k++)
		for (uint64_t i = 0; sets[k] && i < lens[k] / sizeof(ElfW(Rela)); i++) {
			uint32_t type = ELF64_R_TYPE(sets[k][i].r_info);

			if ((type == R_X86_64_JUMP_SLOT || (type == R_X86_64_GLOB_DAT && refs.n)) &&
			    slot_of(o, &sets[k][i], type == R_X86_64_GLOB_DAT, &refs, &s))
				want++;
		}
	if (!want)
		goto out;
	len = (16 + want * SC_LC_STUB_SIZE + want * sizeof(struct slot) + PAGE - 1) & ~(PAGE - 1);
	region = (uint64_t)rt_sys6(SYS_mmap, 0, (long)len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
				   -1, 0);
	if (rt_mmap_failed((long)region))
		goto out;
	*(uint64_t *)region = sc_patch_arch_lc_entry();
	/* the slots to hook, at the region's end: the stubs are all written
	 * and executable before the first slot points to one (a function
	 * called meanwhile may go through any slot of the object: a
	 * sanitizer's runtime linked into the program interposes libc's
	 * functions and calls the real ones through them) */
	done = (struct slot *)(region + len - want * sizeof(struct slot));
	at = region + 16;
	for (int k = 0; k < 2; k++)
		for (uint64_t i = 0; sets[k] && i < lens[k] / sizeof(ElfW(Rela)) && ndone < want; i++) {
			uint32_t type = ELF64_R_TYPE(sets[k][i].r_info);
			uint8_t *p = (uint8_t *)at;

			if ((type != R_X86_64_JUMP_SLOT && (type != R_X86_64_GLOB_DAT || !refs.n)) ||
			    !slot_of(o, &sets[k][i], type == R_X86_64_GLOB_DAT, &refs, &s))
				continue;
			sc_patch_arch_lc_stub(p, s.fn, s.target, (const uint64_t *)region);
			s.stub = at + SC_LC_STUB_CODE;
			done[ndone++] = s;
			at += SC_LC_STUB_SIZE;
		}
	names_add(done, ndone);
	if (rt_sys3(SYS_mprotect, region, len, PROT_READ | PROT_EXEC)) {
		rt_sys2(SYS_munmap, region, len);
		goto out;
	}
	sc_patch_region_add(region, region + len);
	for (uint32_t i = 0; i < ndone; i++) {
		const struct slot *d = &done[i];

		if (sc_attach_logging)         /* attached: put back at the detach */
			sc_attach_log_got((uint64_t)(uintptr_t)d->at,
					  !page_writable(o, (uint64_t)(uintptr_t)d->at));
		if (!page_writable(o, (uint64_t)(uintptr_t)d->at)) {
			/* full RELRO: read-only once the loader is done */
			uint64_t page = (uint64_t)(uintptr_t)d->at & ~(PAGE - 1);

			if (rt_sys3(SYS_mprotect, page, PAGE, PROT_READ | PROT_WRITE))
				continue;
			__atomic_store_n(d->at, d->stub, __ATOMIC_RELEASE);
			rt_sys3(SYS_mprotect, page, PAGE, PROT_READ);
		} else {
			__atomic_store_n(d->at, d->stub, __ATOMIC_RELEASE);
		}
	}
out:
	if (rlen)
		rt_sys2(SYS_munmap, refs.slot, rlen);
}

void sc_libcall_start(char **envp)
{
	const char *s = rt_getenv(envp, SC_LIBCALL_ENV);

	sc_libcall_mode = SC_LIBCALL_NONE;
	if (s && str_eq(s, "program"))
		sc_libcall_mode = SC_LIBCALL_PROGRAM;
	else if (s && str_eq(s, "all"))
		sc_libcall_mode = SC_LIBCALL_ALL;
}

void sc_libcall_loaded(void)
{
	if (sc_libcall_mode == SC_LIBCALL_NONE)
		return;
	lc.n = 0;
	lc.scope_of = NULL;
	dl_iterate_phdr(collect, NULL);
	if (!lc.startup)
		lc.startup = lc.n;
	for (int i = 0; i < lc.n; i++) {
		struct obj *o = &lc.o[i];

		if (o->self || o->loader || (!o->is_main && !(o->info.dlpi_name && o->info.dlpi_name[0])))
			continue;          /* an object without a name: not a file */
		if (sc_libcall_mode == SC_LIBCALL_PROGRAM ? !o->probed : o->never)
			continue;
		obj_hook(o);
	}
	lc.n = 0;                      /* the infos are the loader's, valid only now */
}
