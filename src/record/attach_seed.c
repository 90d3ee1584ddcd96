/*
 * attach_seed — the frames open in a process's threads at the moment its
 * plans are applied (SPEC section 13: calls already running are counted
 * from their first seen event, their frames open at the start).  With every
 * thread stopped, each one is unwound by CFI from its registers and a copy
 * of its stack (the sampler's unwinder, src/unwind), and its instrumented
 * frames are written to the seed file runtime/attach.h describes:
 *  - a function of a patched plan whose entry jump the thread is past
 *    (stopped on the entry itself, it has not entered: its jump will run);
 *  - a function of an object built with the hooks, unless its exit hook
 *    has run (the thread stopped inside libc's no-op exit hook) or it is
 *    start-up code the compiler never instruments (_start and kin).
 * Each with its call site (the return address into its caller) and its
 * canonical frame address (the return address's slot + 8); a patched one
 * with that slot, which the runtime redirects so that its return is seen.
 */
#include "record/attach_seed.h"
#include "record/procmaps.h"
#include "record/record.h"
#include "record/plan_file.h"
#include "runtime/attach.h"
#include "symbols/symbols.h"
#include "unwind/unwind.h"
#include "util/util.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define STACK_MAX   (8u << 20)        /* bytes of a thread's stack read */
#define FRAMES_MAX  4096

/* ---- the patched functions ---------------------------------------------- */

void attach_fns_add(struct attach_fns *fs, uint64_t fn, uint64_t site)
{
	ALLOC_GROW(fs->v, fs->n + 1, fs->alloc);
	fs->v[fs->n].fn = fn;
	fs->v[fs->n].site = site;
	fs->n++;
}

static int fn_cmp(const void *a, const void *b)
{
	const struct attach_fn *x = a, *y = b;

	return x->fn < y->fn ? -1 : x->fn > y->fn;
}

static const struct attach_fn *fns_find(const struct attach_fns *fs, uint64_t fn)
{
	size_t k = UPPER_BOUND(fs->v, fs->n, fn, fn);

	return k && fs->v[k - 1].fn == fn ? &fs->v[k - 1] : NULL;
}

/* ---- the objects mapped, their functions -------------------------------- */

enum { F_CRT = 1, F_EXIT_HOOK = 2, F_UNWINDER = 4 };

struct func {
	uint64_t lo, hi;                  /* link-time [lo, hi) */
	uint8_t flags;
};

struct object {
	char *path;
	int64_t bias;                     /* run-time less link-time address */
	int hooks;                        /* -1: not asked yet */
	struct unw_module *mod;           /* its CFI (for functions without symbols) */
	struct func *f;
	size_t n, alloc;
	int loaded;
};

struct mapping {
	uint64_t lo, hi, off;
	struct object *obj;               /* NULL: anonymous, or not a file */
	int exec, stack;
};

struct seeder {
	pid_t pid;
	int hooks;
	const struct sc_range *r;         /* the entries' bytes after the first, sorted */
	size_t nr;
	struct mapping *m;
	size_t nm, am;
	struct object **objs;
	size_t nobjs, aobjs;
	struct unw_cache *cache;
	struct unw_space *space;
	const struct attach_fns *fns;
};

static const char *const crt_names[] = {
	"_start", "_init", "_fini", "frame_dummy", "register_tm_clones", "deregister_tm_clones",
	"__do_global_dtors_aux", "__libc_csu_init", "__libc_csu_fini", "_dl_relocate_static_pie",
};

static void func_cb(void *arg, const char *name, uint64_t addr, uint64_t size)
{
	struct object *o = arg;
	uint8_t flags = 0;

	if (!size)
		return;
	for (size_t i = 0; i < sizeof(crt_names) / sizeof(crt_names[0]); i++)
		if (!strcmp(name, crt_names[i]))
			flags |= F_CRT;
	if (!strcmp(name, "__cyg_profile_func_exit"))
		flags |= F_EXIT_HOOK;
	if (!strncmp(name, "_Unwind_", 8))
		flags |= F_UNWINDER;
	ALLOC_GROW(o->f, o->n + 1, o->alloc);
	o->f[o->n].lo = addr;
	o->f[o->n].hi = addr + size;
	o->f[o->n].flags = flags;
	o->n++;
}

static int func_cmp(const void *a, const void *b)
{
	const struct func *x = a, *y = b;

	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	return x->hi < y->hi ? -1 : x->hi > y->hi;
}

/* The function of o holding link-time address a (the innermost of
 * overlapping symbols: the last start at or below a whose end is above). */
static const struct func *func_at(struct object *o, uint64_t a)
{
	size_t lo;

	if (!o->loaded) {
		o->loaded = 1;
		sym_file_functions(o->path, func_cb, o);
		if (o->n)
			qsort(o->f, o->n, sizeof(*o->f), func_cmp);
	}
	lo = UPPER_BOUND(o->f, o->n, lo, a);
	for (size_t i = lo; i-- > 0 && lo - i <= 8;)
		if (o->f[i].lo <= a && a < o->f[i].hi)
			return &o->f[i];
	return NULL;
}

/* The load bias of the file mapped at lo from file offset off: its
 * PT_LOAD holding that offset gives the link-time address there. */
int64_t attach_file_bias(const char *path, uint64_t lo, uint64_t off)
{
	Elf64_Ehdr eh;
	Elf64_Phdr ph;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	int64_t bias = INT64_MIN;

	if (fd < 0)
		return bias;
	if (pread(fd, &eh, sizeof(eh), 0) == (ssize_t)sizeof(eh) && !memcmp(eh.e_ident, ELFMAG, SELFMAG) &&
	    eh.e_ident[EI_CLASS] == ELFCLASS64 && eh.e_phentsize == sizeof(ph)) {
		for (unsigned i = 0; i < eh.e_phnum; i++) {
			if (pread(fd, &ph, sizeof(ph), (off_t)(eh.e_phoff + i * sizeof(ph))) != (ssize_t)sizeof(ph))
				break;
			if (ph.p_type != PT_LOAD)
				continue;
			if ((ph.p_offset & ~4095ull) <= off && off < ph.p_offset + ph.p_filesz) {
				bias = (int64_t)(lo - ((ph.p_vaddr & ~4095ull) + (off - (ph.p_offset & ~4095ull))));
				break;
			}
		}
	}
	close(fd);
	return bias;
}

static struct object *object_of(struct seeder *s, const char *path, uint64_t lo, uint64_t off)
{
	struct object *o;

	for (size_t i = 0; i < s->nobjs; i++)
		if (!strcmp(s->objs[i]->path, path))
			return s->objs[i];
	o = xcalloc(1, sizeof(*o));
	o->path = xstrdup(path);
	o->bias = attach_file_bias(path, lo, off);
	o->hooks = -1;
	ALLOC_GROW(s->objs, s->nobjs + 1, s->aobjs);
	s->objs[s->nobjs++] = o;
	return o;
}

static int map_load(void *arg, const struct proc_map *pm)
{
	struct seeder *s = arg;
	struct mapping *m;

	ALLOC_GROW(s->m, s->nm + 1, s->am);
	m = &s->m[s->nm++];
	memset(m, 0, sizeof(*m));
	m->lo = pm->lo;
	m->hi = pm->hi;
	m->off = pm->off;
	m->exec = pm->perms[2] == 'x';
	m->stack = pm->perms[0] == 'r' && pm->perms[1] == 'w';
	if (pm->path[0] == '/' && !strstr(pm->path, " (deleted)")) {
		struct object *o = object_of(s, pm->path, pm->lo, pm->off);

		m->obj = o;
		if (m->exec && o->bias != INT64_MIN) {
			o->mod = unw_cache_module(s->cache, pm->path, NULL, 0);
			unw_space_add(s->space, pm->lo, pm->hi, pm->off, o->mod);
		}
	} else if (m->exec && !strcmp(pm->path, "[vdso]")) {
		unw_space_add(s->space, pm->lo, pm->hi, 0, unw_cache_module(s->cache, "[vdso]", NULL, 0));
	} else if (m->exec) {
		unw_space_add(s->space, pm->lo, pm->hi, 0, NULL);   /* code without a file */
	}
	return 0;
}

static const struct mapping *mapping_at(const struct seeder *s, uint64_t a)
{
	for (size_t i = 0; i < s->nm; i++)
		if (s->m[i].lo <= a && a < s->m[i].hi)
			return &s->m[i];
	return NULL;
}

static int range_cmp(const void *a, const void *b)
{
	const struct sc_range *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* Is a inside one of the sorted ranges (which do not overlap)? */
static int in_ranges(const struct seeder *s, uint64_t a)
{
	size_t k = UPPER_BOUND(s->r, s->nr, lo, a);

	return k && a < s->r[k - 1].hi;
}

/* The object whose code holds run-time address pc (NULL if none), and
 * the function symbol there in *fn (NULL if none). */
static struct object *object_at(const struct seeder *s, uint64_t pc, const struct func **fn)
{
	const struct mapping *m = mapping_at(s, pc);

	*fn = NULL;
	if (!m || !m->exec || !m->obj || m->obj->bias == INT64_MIN)
		return NULL;
	*fn = func_at(m->obj, pc - (uint64_t)m->obj->bias);
	return m->obj;
}

/* The patched function holding pc in o: by its symbol, else (a stripped
 * program: the patcher found its functions without symbols) by the CFI's
 * FDE holding pc, which starts where the function does. */
static const struct attach_fn *patched_at(const struct seeder *s, struct object *o,
					  const struct func *fn, uint64_t pc)
{
	const struct attach_fn *pf = fn ? fns_find(s->fns, fn->lo + (uint64_t)o->bias) : NULL;
	struct unw_table *t;
	uint64_t lo, hi;

	if (!pf && s->fns->n && o->mod && (t = unw_module_table(o->mod)) &&
	    unw_table_fde_range(t, pc - (uint64_t)o->bias, &lo, &hi))
		pf = fns_find(s->fns, lo + (uint64_t)o->bias);
	return pf;
}

/* ---- one thread --------------------------------------------------------- */

struct frames {
	struct sc_attach_seed_frame *v;
	size_t n, alloc;
};

/*
 * Thread i's instrumented frames, appended outermost first to fr; how many.
 * ips[k] is frame k's pc (k = 0: where the thread stopped; then return
 * addresses), slots[k + 1] where frame k's return address lives.
 */
static void thread_frames(struct seeder *s, struct sc_tracee *t, int i, int hooks_any,
			  struct frames *fr, struct attach_seed_stats *st)
{
	uint64_t ip, sp, bp, saved[5], ips[FRAMES_MAX], slots[FRAMES_MAX];
	const struct mapping *sm;
	struct unw_regs regs;
	struct unw_stack stk;
	struct unw_result res;
	struct sc_attach_seed_frame mine[FRAMES_MAX];
	unsigned nmine = 0;
	uint8_t *buf;
	size_t len;

	if (sc_tracee_regs(t, i, &ip, &sp, &bp, saved))
		return;
	sm = mapping_at(s, sp);
	if (!sm || !sm->stack)
		return;
	len = sm->hi - sp < STACK_MAX ? (size_t)(sm->hi - sp) : STACK_MAX;
	buf = xmalloc(len);
	if (sc_tracee_read(t, sp, buf, len)) {
		free(buf);
		return;
	}
	regs = (struct unw_regs){
		.ip = ip, .sp = sp, .bp = bp,
		.regs = { [UNW_REG_RBX] = saved[0], [UNW_REG_R12] = saved[1],
			  [UNW_REG_R13] = saved[2], [UNW_REG_R14] = saved[3],
			  [UNW_REG_R15] = saved[4] },
		.regs_known = (1u << UNW_NREGS) - 1,
	};
	stk = (struct unw_stack){ .data = buf, .start = sp, .size = len, .full = len == STACK_MAX };
	unw_unwind_slots(s->space, &regs, &stk, ips, slots, FRAMES_MAX, &res);
	free(buf);
	st->threads++;
	if (!(res.flags & UNW_ROOT))
		st->partial++;
	/*
	 * A frame that would resume inside bytes about to be rewritten: the
	 * interrupted instruction of a signal handler's frame, or a return
	 * address there.  (Frame 0, the thread's own instruction pointer, was
	 * moved out already.)
	 */
	for (unsigned k = 1; k < res.nframes; k++)
		if (in_ranges(s, ips[k])) {
			st->unsafe++;
			return;
		}
	for (unsigned k = 0; k + 1 < res.nframes; k++) {
		uint64_t pc = k ? ips[k] - 1 : ips[k];
		const struct attach_fn *pf;
		const struct func *fn;
		struct object *o = object_at(s, pc, &fn);

		if (!o)
			continue;
		/*
		 * An exception's unwinding in flight (or a backtrace) reads the
		 * return addresses up the stack without the runtime's wrappers,
		 * which only the next throw goes through: a frame's return
		 * pointed at the trampoline now would end it (seen: SIGSEGV).
		 * Not now, then.
		 */
		if (fn && (fn->flags & F_UNWINDER)) {
			st->unsafe++;
			return;
		}
		if (k == 0 && fn && (fn->flags & F_EXIT_HOOK)) {
			k++;               /* its caller's exit hook has run: not open */
			continue;
		}
		pf = patched_at(s, o, fn, pc);
		if (pf) {
			if (k == 0 && ip <= pf->site)
				continue;  /* on its entry: the patched jump runs next */
			mine[nmine++] = (struct sc_attach_seed_frame){
				.fn = pf->fn, .site = ips[k + 1], .cfa = slots[k + 1] + 8,
				.slot = slots[k + 1] };
			continue;
		}
		if (!fn || !hooks_any || (fn->flags & F_CRT))
			continue;
		if (o->hooks < 0)
			o->hooks = record_elf_calls_hooks(o->path) == 1;
		if (o->hooks)
			mine[nmine++] = (struct sc_attach_seed_frame){
				.fn = fn->lo + (uint64_t)o->bias, .site = ips[k + 1], .cfa = slots[k + 1] + 8 };
	}
	while (nmine) {                    /* outermost first */
		ALLOC_GROW(fr->v, fr->n + 1, fr->alloc);
		fr->v[fr->n++] = mine[--nmine];
	}
}

struct attach_seeder *attach_seeder_new(pid_t pid, struct attach_fns *fns, int hooks)
{
	struct seeder *s = xcalloc(1, sizeof(*s));

	s->pid = pid;
	s->fns = fns;
	s->hooks = hooks;
	if (fns->n)
		qsort(fns->v, fns->n, sizeof(*fns->v), fn_cmp);
	s->cache = unw_cache_new();
	s->space = unw_space_new();
	/* what takes time, while the threads still run: the objects'
	 * functions (a separate debug file, MiniDebugInfo) and their CFI */
	proc_maps_each(pid, map_load, s);
	for (size_t i = 0; i < s->nm; i++)
		if (s->m[i].exec && s->m[i].obj && s->m[i].obj->bias != INT64_MIN)
			func_at(s->m[i].obj, 0);
	for (size_t i = 0; i < unw_space_count(s->space); i++) {
		struct unw_mapping um;

		unw_space_get(s->space, i, &um);
		if (um.mod)
			unw_module_table(um.mod);
	}
	return (struct attach_seeder *)s;
}

void attach_seeder_free(struct attach_seeder *as)
{
	struct seeder *s = (struct seeder *)as;

	if (!s)
		return;
	for (size_t i = 0; i < s->nobjs; i++) {
		free(s->objs[i]->path);
		free(s->objs[i]->f);
		free(s->objs[i]);
	}
	free(s->objs);
	free(s->m);
	unw_space_free(s->space);
	unw_cache_free(s->cache);
	free(s);
}

int attach_seed_write(struct attach_seeder *as, struct sc_tracee *t, pid_t skip,
		      const struct sc_range *r, size_t nr, const char *path, struct attach_seed_stats *st)
{
	struct seeder *s = (struct seeder *)as;
	struct sc_range *sorted = nr ? xmalloc(nr * sizeof(*sorted)) : NULL;
	struct sc_attach_seed_thread *th = NULL;
	struct frames fr = { 0 };
	struct sc_attach_seed_hdr h = { .magic = SC_ATTACH_SEED_MAGIC };
	size_t nth = 0, ath = 0;
	int ret, fd;
	FILE *f;

	memset(st, 0, sizeof(*st));
	if (nr) {
		memcpy(sorted, r, nr * sizeof(*sorted));
		qsort(sorted, nr, sizeof(*sorted), range_cmp);
	}
	s->r = sorted;
	s->nr = nr;
	/* the mappings now (new threads' stacks); the objects as loaded */
	s->nm = 0;
	unw_space_free(s->space);
	s->space = unw_space_new();
	ret = proc_maps_each(s->pid, map_load, s);
	for (int i = 0; !ret && i < sc_tracee_nthreads(t); i++) {
		size_t before = fr.n;

		if (sc_tracee_tid(t, i) == skip)
			continue;
		thread_frames(s, t, i, s->hooks, &fr, st);
		if (fr.n == before)
			continue;
		if (fr.n > SC_ATTACH_SEED_MAX) {
			fr.n = before;
			break;
		}
		ALLOC_GROW(th, nth + 1, ath);
		/* as the runtime will ask for it (gettid: its pid namespace's) */
		th[nth].tid = (uint32_t)sc_tracee_inner_tid(t, sc_tracee_tid(t, i));
		th[nth].nframes = (uint32_t)(fr.n - before);
		th[nth].first = before;
		nth++;
	}
	st->seeded_threads = nth;
	st->frames = fr.n;
	h.nthreads = (uint32_t)nth;
	h.nframes = fr.n;
	if (!ret) {
		/* in the session's private directory, the target's own */
		unlink(path);          /* (a second try's) */
		fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd >= 0 && give_to_proc_owner(fd, sc_tracee_pid(t))) {
			close(fd);
			fd = -1;
		}
		f = fd >= 0 ? fdopen(fd, "w") : NULL;
		if (!f) {
			ret = -errno;
			if (fd >= 0)
				close(fd);
		} else {
			fwrite(&h, sizeof(h), 1, f);
			if (nth)
				fwrite(th, sizeof(*th), nth, f);
			if (fr.n)
				fwrite(fr.v, sizeof(*fr.v), fr.n, f);
			if (fclose(f))
				ret = -EIO;
		}
	}
	s->r = NULL;
	s->nr = 0;
	free(sorted);
	free(th);
	free(fr.v);
	return ret;
}
