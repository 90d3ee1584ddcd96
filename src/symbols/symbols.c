/*
 * symbols — the session: mappings of every process image, the ELF objects
 * behind them, and a cache of results per (process image, address).
 *
 * Two kinds of mapping come in SC_REC_MODULE records:
 *  - real mappings (/proc/PID/maps, PERF_RECORD_MMAP2): [start, end) at file
 *    offset pgoff; the load bias follows from pgoff and the program headers;
 *  - SC_MOD_BASE: start is dladdr()'s base of the object, the end unknown;
 *    an address belongs to the object of the greatest base <= addr whose
 *    PT_LOAD segments cover it (so a library loaded above the executable
 *    does not swallow the executable's addresses, nor the reverse).
 * Real mappings are searched first.
 *
 * Objects are keyed by path (and, for debug-file stand-ins, by build-id), so
 * a library mapped by a hundred processes is read once; "[vdso]" is our own
 * vdso image, read from memory, or the kernel's unstripped copy of it
 * (/lib/modules/RELEASE/vdso/vdso64.so, STACKCLOCK_VDSO_DIR for tests) when
 * its build-id is the same.  The object of a
 * mapping and its bias are worked out on the mapping's first use; a file that
 * cannot be read gives unknown names and one warning.
 */
#include "symbols/symbols.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "symbols/sym_int.h"
#include "util/util.h"

struct map {
	uint64_t start, end, pgoff;
	uint32_t flags;
	const char *path;         /* interned; " (deleted)" removed */
	uint8_t bid[SYM_BUILD_ID_MAX];
	unsigned bid_len;
	bool is_file;             /* an ELF file we may read (not [vdso]) */
	bool is_vdso;             /* read from our own vdso */
	bool resolved;            /* obj and bias worked out */
	struct sym_obj *obj;      /* NULL: no usable object */
	uint64_t bias;
};

struct proc {
	uint32_t id;
	struct map *ranges;       /* real mappings, sorted by start when used */
	size_t nranges, aranges;
	struct map *bases;        /* SC_MOD_BASE mappings, sorted by start */
	size_t nbases, abases;
	bool sorted;
	uint32_t gen;             /* bumped by each new mapping */
};

struct objent {
	const char *path;         /* interned; NULL for a build-id stand-in */
	uint8_t bid[SYM_BUILD_ID_MAX];
	unsigned bid_len;
	struct sym_obj *obj;
	bool warned;
};

struct centry {
	uint64_t addr;
	uint32_t proc;
	uint8_t used, is_return;
	uint16_t n;
	uint32_t first;           /* index into frames */
	uint32_t gen;             /* the process image's gen when resolved */
};

struct sym_session {
	struct sym_intern strings;
	char *debug_root;
	const char *str_unknown, *str_kernel;

	struct proc **procs;
	size_t nprocs, aprocs;
	uint32_t *proc_slots;     /* hash: proc_id -> index + 1; 0 = empty */
	size_t proc_cap;

	struct objent *objs;
	size_t nobjs, aobjs;

	struct sym_kallsyms *ksyms;
	bool ksyms_loaded;

	struct centry *cache;
	size_t cache_cap, cache_n;
	struct sym_frame *frames;
	size_t nframes, aframes;
};

/* The root of separate debug files: STACKCLOCK_DEBUG_ROOT or /usr/lib/debug. */
static char *debug_root_dup(void)
{
	const char *root = getenv("STACKCLOCK_DEBUG_ROOT");
	char *r = xstrdup(root && *root ? root : "/usr/lib/debug");
	size_t len = strlen(r);

	while (len > 1 && r[len - 1] == '/')
		r[--len] = '\0';
	return r;
}

int sym_file_functions(const char *path, sym_function_cb cb, void *arg)
{
	char *root = debug_root_dup();
	int ret = obj_each_function(path, root, cb, arg);

	free(root);
	return ret;
}

struct sym_session *sym_session_new(void)
{
	struct sym_session *s = xcalloc(1, sizeof(*s));

	s->debug_root = debug_root_dup();
	s->str_unknown = intern_str(&s->strings, "[unknown]");
	s->str_kernel = intern_str(&s->strings, "[kernel]");
	return s;
}

void sym_session_free(struct sym_session *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->nprocs; i++) {
		free(s->procs[i]->ranges);
		free(s->procs[i]->bases);
		free(s->procs[i]);
	}
	free(s->procs);
	free(s->proc_slots);
	for (size_t i = 0; i < s->nobjs; i++)
		obj_free(s->objs[i].obj);
	free(s->objs);
	kallsyms_free(s->ksyms);
	free(s->cache);
	free(s->frames);
	intern_release(&s->strings);
	free(s->debug_root);
	free(s);
}

/* ---- process images --------------------------------------------------- */

static void proc_rehash(struct sym_session *s)
{
	size_t cap = s->proc_cap ? s->proc_cap * 2 : 64;

	free(s->proc_slots);
	s->proc_slots = xcalloc(cap, sizeof(*s->proc_slots));
	s->proc_cap = cap;
	for (size_t i = 0; i < s->nprocs; i++) {
		size_t j = hash_u64(s->procs[i]->id) & (cap - 1);
		while (s->proc_slots[j])
			j = (j + 1) & (cap - 1);
		s->proc_slots[j] = (uint32_t)i + 1;
	}
}

static struct proc *find_proc(struct sym_session *s, uint32_t id, bool create)
{
	struct proc *p;
	size_t j;

	if (s->proc_cap) {
		j = hash_u64(id) & (s->proc_cap - 1);
		for (; s->proc_slots[j]; j = (j + 1) & (s->proc_cap - 1)) {
			p = s->procs[s->proc_slots[j] - 1];
			if (p->id == id)
				return p;
		}
	}
	if (!create)
		return NULL;
	p = xcalloc(1, sizeof(*p));
	p->id = id;
	ALLOC_GROW(s->procs, s->nprocs + 1, s->aprocs);
	s->procs[s->nprocs++] = p;
	if (2 * s->nprocs > s->proc_cap) {
		proc_rehash(s);
	} else {
		j = hash_u64(id) & (s->proc_cap - 1);
		while (s->proc_slots[j])
			j = (j + 1) & (s->proc_cap - 1);
		s->proc_slots[j] = (uint32_t)s->nprocs;
	}
	return p;
}

/* Files we can read symbols from, as opposed to [vdso], //anon, memfd. */
static bool path_is_file(const char *p)
{
	return p[0] == '/' && strncmp(p, "//anon", 6) &&
	       strncmp(p, "/memfd:", 7) && strncmp(p, "/dev/", 5) &&
	       strncmp(p, "/SYSV", 5);
}

void sym_add_module(struct sym_session *s, const struct sc_rec_module *m,
		    const char *path)
{
	static const char deleted[] = " (deleted)";
	struct proc *p = find_proc(s, m->proc_id, true);
	struct map *mp;
	size_t len;

	if (!path)
		path = "";
	len = strlen(path);
	if (len > sizeof(deleted) - 1 &&
	    !strcmp(path + len - (sizeof(deleted) - 1), deleted))
		len -= sizeof(deleted) - 1;

	if (m->flags & SC_MOD_BASE) {
		ALLOC_GROW(p->bases, p->nbases + 1, p->abases);
		mp = &p->bases[p->nbases++];
	} else {
		if (m->end <= m->start)
			return;
		ALLOC_GROW(p->ranges, p->nranges + 1, p->aranges);
		mp = &p->ranges[p->nranges++];
	}
	memset(mp, 0, sizeof(*mp));
	mp->start = m->start;
	mp->end = m->end;
	mp->pgoff = m->pgoff;
	mp->flags = m->flags;
	mp->path = len ? intern_strn(&s->strings, path, len) : s->str_unknown;
	mp->is_file = len && path_is_file(path);
	mp->is_vdso = len == 6 && !memcmp(path, "[vdso]", 6);
	mp->bid_len = m->build_id_len > SYM_BUILD_ID_MAX ? SYM_BUILD_ID_MAX
							 : m->build_id_len;
	memcpy(mp->bid, m->build_id, mp->bid_len);
	p->sorted = false;
	/* Addresses of this image resolved before may now resolve differently:
	 * their cache entries no longer match its generation. */
	p->gen++;
}

static int cmp_map(const void *a, const void *b)
{
	const struct map *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return 0;
}

static void proc_sort(struct proc *p)
{
	if (p->sorted)
		return;
	/* Results of earlier lookups are cached by address, not by map, so
	 * moving the maps here is harmless. */
	if (p->nranges > 1)
		qsort(p->ranges, p->nranges, sizeof(*p->ranges), cmp_map);
	if (p->nbases > 1)
		qsort(p->bases, p->nbases, sizeof(*p->bases), cmp_map);
	p->sorted = true;
}

/* ---- objects ---------------------------------------------------------- */

/*
 * The vdso is no file: every process under one kernel maps the same image,
 * so ours stands for the recorded one when their build-ids agree (checked
 * by the caller, as for files).
 */
static struct sym_obj *open_vdso(struct sym_session *s)
{
	size_t size = 0;
	const void *image = vdso_image(&size);
	struct sym_obj *o = obj_open_memory(image, size, s->debug_root,
					    &s->strings);
	const char *dir = getenv("STACKCLOCK_VDSO_DIR");
	const uint8_t *bid, *dbid;
	unsigned len, dlen;
	struct utsname u;
	struct sym_obj *d;
	char *path;

	if (!image)
		pr_debug("symbols: this process has no vdso to read");
	/*
	 * The kernel's build keeps the vdso unstripped, with its local
	 * functions (the clock readers), under /lib/modules/RELEASE/vdso/:
	 * better names than offsets when it is the same image.
	 */
	if (dir && *dir)
		path = xasprintf("%s/vdso64.so", dir);
	else if (uname(&u) == 0)
		path = xasprintf("/lib/modules/%s/vdso/vdso64.so", u.release);
	else
		return o;
	len = obj_build_id(o, &bid);
	d = access(path, R_OK) == 0 ? obj_open(path, s->debug_root, &s->strings) : NULL;
	if (d && !obj_error(d) && len && (dlen = obj_build_id(d, &dbid)) == len &&
	    !memcmp(bid, dbid, len)) {
		pr_debug("symbols: vdso symbols from %s", path);
		obj_free(o);
		o = d;
	} else {
		if (d)
			pr_debug("symbols: %s is not this kernel's vdso, ignored", path);
		obj_free(d);
	}
	free(path);
	return o;
}

/* The object of a file, or of "[vdso]" (vdso set), opened once. */
static struct objent *file_obj(struct sym_session *s, const char *path,
			       bool vdso)
{
	struct objent *e;

	for (size_t i = 0; i < s->nobjs; i++) {
		if (s->objs[i].path == path)
			return &s->objs[i];
	}
	ALLOC_GROW(s->objs, s->nobjs + 1, s->aobjs);
	e = &s->objs[s->nobjs++];
	memset(e, 0, sizeof(*e));
	e->path = path;
	e->obj = vdso ? open_vdso(s) : obj_open(path, s->debug_root, &s->strings);
	return e;
}

static struct objent *build_id_obj(struct sym_session *s, const uint8_t *bid,
				   unsigned len)
{
	struct objent *e;

	for (size_t i = 0; i < s->nobjs; i++) {
		e = &s->objs[i];
		if (!e->path && e->bid_len == len && !memcmp(e->bid, bid, len))
			return e;
	}
	ALLOC_GROW(s->objs, s->nobjs + 1, s->aobjs);
	e = &s->objs[s->nobjs++];
	memset(e, 0, sizeof(*e));
	memcpy(e->bid, bid, len);
	e->bid_len = len;
	e->obj = obj_open_build_id(bid, len, s->debug_root, &s->strings);
	return e;
}

/* Find the object of a mapping and its load bias, once. */
static void map_resolve(struct sym_session *s, struct map *m)
{
	struct sym_obj *o;
	const char *why;
	size_t fi;

	if (m->resolved)
		return;
	m->resolved = true;
	if (!m->is_file && !m->is_vdso)
		return;
	fi = file_obj(s, m->path, m->is_vdso) - s->objs;
	o = s->objs[fi].obj;
	why = obj_error(o);
	if (!why && m->bid_len) {
		const uint8_t *bid;
		unsigned len = obj_build_id(o, &bid);
		if (len && (len != m->bid_len || memcmp(bid, m->bid, len)))
			why = m->is_vdso
			      ? "recorded under another kernel (build-id differs)"
			      : "the file changed since the recording (build-id differs)";
	}
	if (why && m->bid_len) {
		/* The file is gone or replaced: its debug file still knows. */
		struct objent *be = build_id_obj(s, m->bid, m->bid_len);
		if (!obj_error(be->obj)) {
			o = be->obj;
			why = NULL;
		}
	}
	if (why) {
		if (!s->objs[fi].warned)
			pr_warn("cannot read symbols of %s: %s", m->path, why);
		s->objs[fi].warned = true;
		return;
	}
	m->obj = o;
	if (m->flags & SC_MOD_BASE)
		m->bias = obj_bias_for_base(o, m->start);
	else
		m->bias = obj_bias_for_mapping(o, m->start, m->pgoff);
}

static struct map *find_map(struct sym_session *s, struct proc *p,
			    uint64_t addr)
{
	struct map *fallback = NULL;
	size_t i, top;

	proc_sort(p);
	i = UPPER_BOUND(p->ranges, p->nranges, start, addr);
	for (size_t back = 0; i-- > 0 && back < 8; back++) {
		if (addr < p->ranges[i].end)
			return &p->ranges[i];
	}

	top = i = UPPER_BOUND(p->bases, p->nbases, start, addr);
	while (i-- > 0) {
		struct map *m = &p->bases[i];
		map_resolve(s, m);
		if (m->obj && obj_covers(m->obj, addr - m->bias))
			return m;
		/* Unreadable, its extent unknown: it takes the address only
		 * if it is the nearest base and nothing below claims it. */
		if (!m->obj && i == top - 1)
			fallback = m;
	}
	return fallback;
}

/* ---- resolution ------------------------------------------------------- */

static const char *hex_name(struct sym_session *s, uint64_t addr)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "0x%" PRIx64, addr);
	return intern_str(&s->strings, buf);
}

/* "gzip+0x4330": offset in the module whose path is given (docs/values.md, "Code without symbols"). */
static const char *offset_name(struct sym_session *s, const char *path,
			       uint64_t off)
{
	const char *slash = strrchr(path, '/');
	char *name = xasprintf("%s+0x%" PRIx64, slash ? slash + 1 : path, off);
	const char *interned = intern_str(&s->strings, name);

	free(name);
	return interned;
}

/*
 * Can the kernel have code at addr?  On x86-64 only its text mapping and the
 * module space do (Documentation/arch/x86/x86_64/mm.rst: 0xffffffff80000000
 * up to the fixmap at 0xffffffffff000000).  Anything else in the upper half
 * is a broken unwind's garbage (0xffffffffffffff80, ...), not worth reading
 * /proc/kallsyms for: that takes the kernel ~70 ms.
 */
static bool kernel_code(uint64_t addr)
{
#if defined(__x86_64__)
	return addr >= 0xffffffff80000000ULL && addr < 0xffffffffff000000ULL;
#else
	(void)addr;
	return true;
#endif
}

static int resolve_kernel(struct sym_session *s, uint64_t addr, uint64_t look,
			  struct sym_frame *out)
{
	const char *name;

	out->module_offset = addr;
	if (!kernel_code(look)) {
		out->function = hex_name(s, addr);
		out->module = s->str_unknown;
		return 1;
	}
	if (!s->ksyms_loaded) {
		s->ksyms = kallsyms_load(getenv("STACKCLOCK_KALLSYMS"),
					 &s->strings);
		s->ksyms_loaded = true;
	}
	name = kallsyms_lookup(s->ksyms, look);
	out->function = name ? name : hex_name(s, addr);
	out->module = kallsyms_usable(s->ksyms) ? s->str_kernel : s->str_unknown;
	return 1;
}

static int resolve_uncached(struct sym_session *s, uint32_t proc_id,
			    uint64_t addr, bool is_return,
			    struct sym_frame *out)
{
	uint64_t look = is_return && addr ? addr - 1 : addr;
	struct proc *p;
	struct map *m = NULL;
	uint64_t base;
	int n;

	memset(out, 0, sizeof(*out));
	if (look >= SYM_KERNEL_START)
		return resolve_kernel(s, addr, look, out);
	p = find_proc(s, proc_id, false);
	if (p)
		m = find_map(s, p, look);
	if (!m) {
		/* Anonymous or unknown code: only the absolute address. */
		out->function = hex_name(s, addr);
		out->module = s->str_unknown;
		out->module_offset = addr;
		return 1;
	}
	map_resolve(s, m);
	if (!m->obj) {
		/* An unreadable file: its offset stands for the address. */
		out->module_offset = addr - m->start + m->pgoff;
		out->function = offset_name(s, m->path, out->module_offset);
		out->module = m->path;
		out->unnamed = true;
		return 1;
	}
	base = obj_module_base(m->obj);
	n = obj_lookup(m->obj, look - m->bias, out, SYM_MAX_FRAMES);
	for (int i = 0; i < n; i++) {
		out[i].module = m->path;
		out[i].module_offset = addr - m->bias - base;
		if (!out[i].function && i < n - 1) {
			/* An inlined frame whose DWARF has no name (damaged). */
			out[i].function = offset_name(s, m->path, out[i].module_offset);
			out[i].unnamed = true;
		}
	}
	if (!out[n - 1].function) {
		/* No symbol: the function whose CFI range holds the address,
		 * else the address itself, both relative to the module. */
		uint64_t start;
		struct sym_frame *f = &out[n - 1];

		if (obj_function_start(m->obj, look - m->bias, &start))
			f->function = offset_name(s, m->path, start - base);
		else
			f->function = offset_name(s, m->path, f->module_offset);
		f->unnamed = true;
	}
	return n;
}

static void cache_grow(struct sym_session *s)
{
	size_t cap = s->cache_cap ? s->cache_cap * 2 : 4096;
	struct centry *c = xcalloc(cap, sizeof(*c));

	for (size_t i = 0; i < s->cache_cap; i++) {
		struct centry *e = &s->cache[i];
		size_t j;
		if (!e->used)
			continue;
		j = hash_u64(e->addr ^ ((uint64_t)e->proc << 32) ^ e->is_return) &
		    (cap - 1);
		while (c[j].used)
			j = (j + 1) & (cap - 1);
		c[j] = *e;
	}
	free(s->cache);
	s->cache = c;
	s->cache_cap = cap;
}

int sym_resolve(struct sym_session *s, uint32_t proc_id, uint64_t addr,
		bool is_return, struct sym_frame *out, int max)
{
	struct sym_frame tmp[SYM_MAX_FRAMES];
	struct centry *e;
	size_t j;
	int n;

	struct proc *p;
	uint32_t gen;

	if (!s || max <= 0)
		return 0;
	p = find_proc(s, proc_id, false);
	gen = p ? p->gen : 0;
	is_return = is_return && addr;
	if (2 * (s->cache_n + 1) > s->cache_cap)
		cache_grow(s);
	j = hash_u64(addr ^ ((uint64_t)proc_id << 32) ^ is_return) &
	    (s->cache_cap - 1);
	for (;; j = (j + 1) & (s->cache_cap - 1)) {
		e = &s->cache[j];
		if (!e->used)
			break;
		if (e->addr == addr && e->proc == proc_id &&
		    e->is_return == is_return) {
			if (e->gen == gen)
				goto hit;
			s->cache_n--;   /* stale: resolved again in place */
			break;
		}
	}
	n = resolve_uncached(s, proc_id, addr, is_return, tmp);
	ALLOC_GROW(s->frames, s->nframes + n, s->aframes);
	memcpy(s->frames + s->nframes, tmp, n * sizeof(*tmp));
	e->used = 1;
	e->addr = addr;
	e->proc = proc_id;
	e->is_return = is_return;
	e->n = (uint16_t)n;
	e->first = (uint32_t)s->nframes;
	e->gen = gen;
	s->nframes += n;
	s->cache_n++;
hit:
	n = e->n < max ? e->n : max;
	memcpy(out, s->frames + e->first, n * sizeof(*out));
	return n;
}
