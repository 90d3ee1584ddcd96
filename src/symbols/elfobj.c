/*
 * elfobj — one ELF object, read through libelf and libdw.
 *
 * What an object holds, all keyed by link-time virtual address:
 *  - its PT_LOAD segments (to turn a mapping into a load bias and to tell
 *    whether an address belongs to the object at all);
 *  - a sorted function table from .symtab (the object's own, else its debug
 *    file's) or else .dynsym, plus "f@plt" for the PLT stubs;
 *  - DWARF, its own or a separate debug file's (by build-id under the debug
 *    root, else by .gnu_debuglink; dwz common files by build-id too),
 *    indexed lazily: a sorted table of CU address ranges built once, and
 *    per CU a sorted table of subprogram ranges built on the CU's first use.
 *    Compressed DWARF (Debian's debug packages) goes through lazydw.c, which
 *    inflates only the CUs looked up; their ranges then come from
 *    .debug_aranges.
 *    A lookup then only walks the one subprogram's scopes for inlined calls,
 *    never the whole CU, which is what keeps thousands of distinct addresses
 *    cheap (dwarf_getscopes() walks the CU from its root on every call).
 *
 *  - MiniDebugInfo (.gnu_debugdata, an xz-compressed ELF holding the
 *    .symtab entries a stripped file left out of .dynsym), merged with
 *    .dynsym when the object has no .symtab of its own or in a debug file;
 *  - its call-frame information (.eh_frame, .debug_frame), for functions
 *    no symbol names: the FDE holding an address gives its function's
 *    start (obj_function_start, through the unwinder's FDE index).
 *
 * Debug files are looked up where the ecosystem keeps them: by build-id
 * under the debug root, by .gnu_debuglink beside the file, in its .debug/
 * and under the debug root, and last from a debuginfod server when
 * DEBUGINFOD_URLS is set (libdebuginfod, with its own cache; a server that
 * cannot be reached is asked once per report, not once per file).  We do
 * not use libdwfl's search: the debug root must be configurable for tests.
 *
 * The ELF files are mmap'ed by libelf and their descriptors closed at once,
 * so a session with hundreds of libraries holds no file descriptors.
 */
#include "symbols/lazydw.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <dlfcn.h>
#include <dwarf.h>
#include <elfutils/debuginfod.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <lzma.h>
#include <time.h>

#include "unwind/unwind.h"
#include "util/util.h"

unsigned long sym_stat_files_opened;

struct seg {
	uint64_t vaddr, memsz, offset, filesz;
	uint32_t flags;
};

struct esym {
	uint64_t addr, size;
	const char *raw;          /* in the ELF string table (mmap'ed) */
	const char *name;         /* demangled and interned on first use */
	int rank;                 /* which alias to keep at one address */
};

struct range {
	uint64_t lo, hi;
	size_t idx;               /* CU index, or subprogram index */
};

struct cu_info {
	Dwarf_Die die;
	uint64_t off;             /* in .debug_info (lazydw) */
	bool ready, usable;       /* die set, once; it can be read */
	bool scanned;
	struct range *subr;       /* subprogram ranges, sorted by lo */
	size_t nsubr, asubr;
	Dwarf_Die *subs;          /* subprogram DIEs, by subr[].idx */
	size_t nsubs, asubs;
};

struct sym_obj {
	const char *error;        /* NULL if usable */
	Elf *elf;                 /* the object (or its debug file alone) */
	Elf *delf;                /* separate debug file, or NULL */
	Dwarf *dw;
	struct lazydw *lazy;      /* owns dw when set */
	Elf *alt_elf;             /* dwz's shared DWARF (.gnu_debugaltlink) */
	Dwarf *alt_dw;
	uint8_t bid[SYM_BUILD_ID_MAX];
	unsigned bid_len;
	uint16_t e_type;
	bool offsets_valid;       /* false when segments come from a debug file */
	struct seg *segs;
	size_t nsegs;
	struct esym *funcs, *labels;  /* FUNC symbols; NOTYPE ones in code */
	size_t nfuncs, nlabels;
	bool dwarf_indexed;
	struct range *cur;        /* CU ranges, sorted by lo */
	size_t ncur, acur;
	struct cu_info *cus;
	size_t ncus, acus;
	struct sym_intern *strings;
	char *image;              /* an in-memory object's private copy */
	Elf *mini;                /* MiniDebugInfo (.gnu_debugdata), inflated */
	char *mini_image;         /* its bytes, owned */
	size_t image_size;
	const char *path;         /* the file elf was read from (interned) */
	bool cfi_tried;
	struct unw_table *cfi;    /* FDE index, built on first use */
};

static uint64_t page_size(void)
{
	static uint64_t pg;
	if (!pg) {
		long v = sysconf(_SC_PAGESIZE);
		pg = v > 0 ? (uint64_t)v : 4096;
	}
	return pg;
}

/* ---- opening ---------------------------------------------------------- */

static Elf *open_elf(const char *path, const char **err)
{
	Elf *e;
	int fd;

	elf_version(EV_CURRENT);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		*err = strerror(errno);
		return NULL;
	}
	e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!e || elf_kind(e) != ELF_K_ELF) {
		*err = "not an ELF file";
		goto fail;
	}
	/* Read everything in if libelf could not mmap; either way libelf is
	 * done with the descriptor after this. */
	if (elf_cntl(e, ELF_C_FDREAD) != 0) {
		*err = elf_errmsg(-1);
		goto fail;
	}
	close(fd);
	sym_stat_files_opened++;
	return e;
fail:
	elf_end(e);
	close(fd);
	return NULL;
}

static Elf_Scn *find_section(Elf *e, const char *name, GElf_Shdr *shdr)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (elf_getshdrstrndx(e, &shstrndx) != 0)
		return NULL;
	while ((scn = elf_nextscn(e, scn))) {
		const char *n;
		if (!gelf_getshdr(scn, shdr))
			continue;
		n = elf_strptr(e, shstrndx, shdr->sh_name);
		if (n && !strcmp(n, name))
			return scn;
	}
	return NULL;
}

static bool has_dwarf(Elf *e)
{
	GElf_Shdr sh;
	Elf_Scn *scn = find_section(e, ".debug_info", &sh);

	return scn && sh.sh_type != SHT_NOBITS && sh.sh_size > 0;
}

static unsigned read_build_id(Elf *e, uint8_t *out)
{
	const void *p;
	ssize_t n = dwelf_elf_gnu_build_id(e, &p);

	if (n <= 0)
		return 0;
	if (n > SYM_BUILD_ID_MAX)
		n = SYM_BUILD_ID_MAX;
	memcpy(out, p, n);
	return (unsigned)n;
}

unsigned sym_file_build_id(const char *path, uint8_t *out)
{
	const char *err;
	Elf *e = open_elf(path, &err);
	unsigned n = e ? read_build_id(e, out) : 0;

	elf_end(e);
	return n;
}

static int read_segments(struct sym_obj *o)
{
	size_t n;

	if (elf_getphdrnum(o->elf, &n) != 0)
		return -1;
	o->segs = xcalloc(n ? n : 1, sizeof(*o->segs));
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;
		struct seg *s;
		if (!gelf_getphdr(o->elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		s = &o->segs[o->nsegs++];
		s->vaddr = ph.p_vaddr;
		s->memsz = ph.p_memsz;
		s->offset = ph.p_offset;
		s->filesz = ph.p_filesz;
		s->flags = ph.p_flags;
	}
	return o->nsegs ? 0 : -1;
}

/* ---- symbol tables ---------------------------------------------------- */

static int sym_rank(const GElf_Sym *sym, const char *name)
{
	int r = 0;

	switch (GELF_ST_BIND(sym->st_info)) {
	case STB_GLOBAL: r = 3000; break;
	case STB_WEAK:   r = 2000; break;
	default:         r = 1000; break;
	}
	/* Among aliases, the public spelling: fewer leading underscores. */
	while (*name == '_' && r > 0) {
		r -= 100;
		name++;
	}
	return r;
}

static int cmp_esym(const void *a, const void *b)
{
	const struct esym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank > y->rank ? -1 : 1;
	return strcmp(x->raw, y->raw);
}

/* Sort, then keep one symbol per address (the best ranked, largest size). */
static size_t sort_dedup(struct esym *v, size_t n)
{
	size_t out = 0;

	if (!n)
		return 0;
	qsort(v, n, sizeof(*v), cmp_esym);
	for (size_t i = 0; i < n; i++) {
		if (out && v[out - 1].addr == v[i].addr) {
			if (v[i].size > v[out - 1].size)
				v[out - 1].size = v[i].size;
			continue;
		}
		v[out++] = v[i];
	}
	return out;
}

static Elf_Scn *find_symtab(Elf *e, Elf64_Word type)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(e, scn))) {
		if (gelf_getshdr(scn, &sh) && sh.sh_type == type &&
		    sh.sh_size > 0)
			return scn;
	}
	return NULL;
}

/* Add the functions and code labels of one symbol table to o's. */
static void read_symbols(struct sym_obj *o, Elf *e, Elf_Scn *scn)
{
	size_t nf = o->nfuncs, af = o->nfuncs, nl = o->nlabels, al = o->nlabels;
	size_t count;
	struct esym *f = o->funcs, *l = o->labels;
	Elf_Data *data;
	GElf_Shdr sh;

	if (!gelf_getshdr(scn, &sh) || !sh.sh_entsize)
		return;
	data = elf_getdata(scn, NULL);
	if (!data)
		return;
	count = sh.sh_size / sh.sh_entsize;
	for (size_t i = 1; i < count; i++) {
		GElf_Sym sym;
		GElf_Shdr tsh;
		const char *name;
		struct esym *d;
		int type;

		if (!gelf_getsym(data, (int)i, &sym))
			break;
		type = GELF_ST_TYPE(sym.st_info);
		if (sym.st_shndx == SHN_UNDEF || sym.st_shndx >= SHN_LORESERVE ||
		    sym.st_value == 0)
			continue;
		name = elf_strptr(e, sh.sh_link, sym.st_name);
		if (!name || !*name)
			continue;
		if (type == STT_FUNC || type == STT_GNU_IFUNC) {
			ALLOC_GROW(f, nf + 1, af);
			d = &f[nf++];
		} else if (type == STT_NOTYPE && name[0] != '.' &&
			   name[0] != '$') {
			/* Assembly labels: only those placed in code. */
			Elf_Scn *ts = elf_getscn(e, sym.st_shndx);
			if (!ts || !gelf_getshdr(ts, &tsh) ||
			    !(tsh.sh_flags & SHF_EXECINSTR))
				continue;
			ALLOC_GROW(l, nl + 1, al);
			d = &l[nl++];
		} else {
			continue;
		}
		d->addr = sym.st_value;
		d->size = sym.st_size;
		d->raw = name;
		d->name = NULL;
		d->rank = sym_rank(&sym, name);
	}
	o->funcs = f;
	o->nfuncs = sort_dedup(f, nf);
	o->labels = l;
	o->nlabels = sort_dedup(l, nl);
}

/*
 * PLT stubs have no symbols; name them "f@plt" as perf and objdump do, so
 * samples in them are not anonymous.  x86-64 layout: entry i of .rela.plt
 * is .plt.sec's i-th 16-byte stub, or .plt's (i+1)-th (after PLT0).
 */
static void read_plt(struct sym_obj *o, Elf *e)
{
	GElf_Shdr rsh, psh, dsh;
	Elf_Scn *rscn = find_section(e, ".rela.plt", &rsh);
	Elf_Scn *pscn = find_section(e, ".plt.sec", &psh);
	Elf_Data *rel, *dyn;
	uint64_t first;
	size_t n, af = o->nfuncs;
	GElf_Ehdr eh;

	if (!gelf_getehdr(e, &eh) || eh.e_machine != EM_X86_64 || !rscn ||
	    rsh.sh_type != SHT_RELA || !rsh.sh_entsize)
		return;
	if (pscn) {
		first = psh.sh_addr;
	} else if ((pscn = find_section(e, ".plt", &psh))) {
		first = psh.sh_addr + 16;
	} else {
		return;
	}
	rel = elf_getdata(rscn, NULL);
	dyn = elf_getdata(elf_getscn(e, rsh.sh_link), NULL);
	if (!rel || !rel->d_buf || !dyn || !dyn->d_buf ||
	    !gelf_getshdr(elf_getscn(e, rsh.sh_link), &dsh))
		return;
	n = rsh.sh_size / rsh.sh_entsize;
	for (size_t i = 0; i < n; i++) {
		GElf_Rela r;
		GElf_Sym sym;
		const char *name;
		char *full;
		struct esym *d;

		if (first + 16 * (i + 1) > psh.sh_addr + psh.sh_size)
			break;
		if (!gelf_getrela(rel, (int)i, &r) ||
		    GELF_R_TYPE(r.r_info) != R_X86_64_JUMP_SLOT ||
		    !gelf_getsym(dyn, (int)GELF_R_SYM(r.r_info), &sym) ||
		    !(name = elf_strptr(e, dsh.sh_link, sym.st_name)) || !*name)
			continue;
		ALLOC_GROW(o->funcs, o->nfuncs + 1, af);
		d = &o->funcs[o->nfuncs++];
		full = xasprintf("%s@plt", name);
		d->addr = first + 16 * i;
		d->size = 16;
		d->raw = d->name = intern_str(o->strings, full);
		d->rank = 0;
		free(full);
	}
	o->nfuncs = sort_dedup(o->funcs, o->nfuncs);
}

/*
 * MiniDebugInfo: .gnu_debugdata is an xz stream of a small ELF file whose
 * .symtab holds the local functions a stripped file no longer names (the
 * exported ones stay in .dynsym).  Inflated into memory once, on opening.
 */
#define MINI_MAX (256u << 20)      /* refuse to inflate more than this */

static void read_minidebuginfo(struct sym_obj *o)
{
	GElf_Shdr sh;
	Elf_Scn *scn = find_section(o->elf, ".gnu_debugdata", &sh);
	Elf_Data *d;
	lzma_stream z = LZMA_STREAM_INIT;
	size_t cap = 1 << 16;
	char *out;
	lzma_ret r;

	if (!scn || sh.sh_type == SHT_NOBITS || !(d = elf_rawdata(scn, NULL)) ||
	    !d->d_buf || !d->d_size)
		return;
	if (lzma_stream_decoder(&z, MINI_MAX, 0) != LZMA_OK)
		return;
	out = xmalloc(cap);
	z.next_in = d->d_buf;
	z.avail_in = d->d_size;
	z.next_out = (uint8_t *)out;
	z.avail_out = cap;
	for (;;) {
		r = lzma_code(&z, LZMA_FINISH);
		if (r != LZMA_OK || z.avail_out)
			break;
		if (cap >= MINI_MAX) {
			r = LZMA_MEMLIMIT_ERROR;
			break;
		}
		out = xrealloc(out, cap * 2);
		z.next_out = (uint8_t *)out + cap;
		z.avail_out = cap;
		cap *= 2;
	}
	if (r != LZMA_STREAM_END) {
		pr_debug("symbols: .gnu_debugdata does not inflate (xz error %d), ignored",
			 (int)r);
		free(out);
		lzma_end(&z);
		return;
	}
	o->mini_image = out;
	o->mini = elf_memory(out, z.total_out);
	lzma_end(&z);
	if (!o->mini || elf_kind(o->mini) != ELF_K_ELF) {
		pr_debug("symbols: .gnu_debugdata holds no ELF file, ignored");
		elf_end(o->mini);
		o->mini = NULL;
	}
}

/* ---- call-frame information ------------------------------------------- */

/*
 * The FDE index is the unwinder's (unw_table): built on the first address
 * no symbol names, from the file, or from the in-memory image.
 */
bool obj_function_start(struct sym_obj *o, uint64_t vaddr, uint64_t *start)
{
	uint64_t hi;

	if (!o->cfi_tried) {
		o->cfi_tried = true;
		if (o->path)
			unw_table_build_file(o->path, &o->cfi);
		else if (o->image)
			unw_table_build_mem(o->image, o->image_size, &o->cfi);
	}
	return o->cfi && unw_table_fde_range(o->cfi, vaddr, start, &hi);
}

uint64_t obj_module_base(const struct sym_obj *o)
{
	uint64_t lo = UINT64_MAX;

	for (size_t i = 0; i < o->nsegs; i++) {
		if (o->segs[i].vaddr < lo)
			lo = o->segs[i].vaddr;
	}
	return o->nsegs ? lo & ~(page_size() - 1) : 0;
}

static struct esym *find_in(struct esym *v, size_t n, uint64_t addr)
{
	/* Greatest symbol start <= addr. */
	size_t lo = UPPER_BOUND(v, n, addr, addr);

	if (!lo)
		return NULL;
	for (size_t i = lo, back = 0; i-- > 0 && back < 8; back++) {
		struct esym *s = &v[i];
		if (s->size) {
			if (addr < s->addr + s->size)
				return s;
		} else if (i == lo - 1) {
			/* Unsized: runs up to the next symbol. */
			return s;
		}
	}
	return NULL;
}

static const struct seg *seg_of(const struct sym_obj *o, uint64_t vaddr)
{
	for (size_t i = 0; i < o->nsegs; i++) {
		const struct seg *s = &o->segs[i];
		if (vaddr >= s->vaddr && vaddr - s->vaddr < s->memsz)
			return s;
	}
	return NULL;
}

static struct esym *find_symbol(struct sym_obj *o, uint64_t addr)
{
	struct esym *s = find_in(o->funcs, o->nfuncs, addr);

	if (!s)
		s = find_in(o->labels, o->nlabels, addr);
	/* An unsized symbol runs to the next one, but not across segments. */
	if (s && !s->size && seg_of(o, s->addr) != seg_of(o, addr))
		return NULL;
	return s;
}

/* ---- debug files ------------------------------------------------------ */

static Elf *try_debug_file(const char *path, const uint8_t *bid,
			   unsigned bid_len, bool check_crc, GElf_Word crc)
{
	const char *err;
	uint8_t dbid[SYM_BUILD_ID_MAX];
	unsigned dlen;
	Elf *e;

	if (access(path, R_OK) != 0)
		return NULL;
	e = open_elf(path, &err);
	if (!e)
		return NULL;
	if (!has_dwarf(e))
		goto reject;
	dlen = read_build_id(e, dbid);
	if (bid_len && dlen) {
		if (dlen != bid_len || memcmp(dbid, bid, dlen))
			goto reject;
	} else if (check_crc) {
		/* Build-ids cannot be compared: the debuglink CRC decides. */
		size_t size;
		const char *img = elf_rawfile(e, &size);
		if (!img || (GElf_Word)crc32(0, (const Bytef *)img, size) != crc)
			goto reject;
	}
	pr_debug("symbols: using debug file %s", path);
	return e;
reject:
	pr_debug("symbols: %s does not match, ignored", path);
	elf_end(e);
	return NULL;
}

static char *build_id_path(const char *root, const uint8_t *bid, unsigned len)
{
	char hex[2 * SYM_BUILD_ID_MAX + 1];

	for (unsigned i = 0; i < len && i < SYM_BUILD_ID_MAX; i++)
		snprintf(hex + 2 * i, 3, "%02x", bid[i]);
	return xasprintf("%s/.build-id/%.2s/%s.debug", root, hex, hex + 2);
}

/*
 * A debuginfod server (DEBUGINFOD_URLS), last: libdebuginfod keeps its own
 * cache (DEBUGINFOD_CACHE_PATH), also of misses.  One client per process.
 * A server that is unreachable (any error but "not found") is not asked
 * again, and no lookup may hold a report up for longer than
 * DEBUGINFOD_BUDGET_S seconds in all.
 */
#define DEBUGINFOD_BUDGET_S 30

/*
 * libdebuginfod is loaded when a server is first asked, not linked: it
 * brings libcurl and some thirty libraries whose loading took 18 ms of
 * every command's start on this VM.
 */
static struct {
	debuginfod_client *client;
	bool off;                 /* no URLs, or the server failed */
	struct timespec deadline;
	debuginfod_client *(*begin)(void);
	void (*set_progressfn)(debuginfod_client *, debuginfod_progressfn_t);
	int (*find_debuginfo)(debuginfod_client *, const unsigned char *, int, char **);
} dfod;

static bool dfod_load(void)
{
	void *h = dlopen("libdebuginfod.so.1", RTLD_NOW | RTLD_LOCAL);

	if (h) {
		dfod.begin = (debuginfod_client *(*)(void))dlsym(h, "debuginfod_begin");
		dfod.set_progressfn = (void (*)(debuginfod_client *, debuginfod_progressfn_t))
			dlsym(h, "debuginfod_set_progressfn");
		dfod.find_debuginfo = (int (*)(debuginfod_client *, const unsigned char *, int, char **))
			dlsym(h, "debuginfod_find_debuginfo");
	}
	if (!h || !dfod.begin || !dfod.set_progressfn || !dfod.find_debuginfo) {
		pr_warn("DEBUGINFOD_URLS is set but libdebuginfod.so.1 cannot be loaded (%s): "
			"install libdebuginfod1 to fetch debug files", h ? "symbols missing" : dlerror());
		return false;
	}
	return true;
}

static int dfod_progress(debuginfod_client *c, long a, long b)
{
	struct timespec now;

	(void)c, (void)a, (void)b;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return now.tv_sec > dfod.deadline.tv_sec;   /* non-zero: give up */
}

static Elf *debuginfod_file(const uint8_t *bid, unsigned bid_len)
{
	const char *urls = getenv("DEBUGINFOD_URLS");
	char *path = NULL;
	Elf *e = NULL;
	int fd;

	if (dfod.off || !bid_len || !urls || !*urls)
		return NULL;
	if (!dfod.client) {
		dfod.client = dfod_load() ? dfod.begin() : NULL;
		if (!dfod.client) {
			dfod.off = true;
			return NULL;
		}
		dfod.set_progressfn(dfod.client, dfod_progress);
		clock_gettime(CLOCK_MONOTONIC, &dfod.deadline);
		dfod.deadline.tv_sec += DEBUGINFOD_BUDGET_S;
	}
	fd = dfod.find_debuginfo(dfod.client, bid, (int)bid_len, &path);
	if (fd < 0) {
		if (fd != -ENOENT) {
			pr_warn("debuginfod (DEBUGINFOD_URLS=%s): %s; not asked again",
				urls, strerror(-fd));
			dfod.off = true;
		}
		return NULL;
	}
	close(fd);
	e = try_debug_file(path, bid, bid_len, false, 0);
	free(path);
	return e;
}

static Elf *find_debug_file(Elf *e, const char *path, const char *root,
			    const uint8_t *bid, unsigned bid_len)
{
	const char *link;
	GElf_Word crc = 0;
	Elf *d = NULL;
	const char *slash;
	char *dir, *cand;
	struct stat self, st;

	if (bid_len) {
		cand = build_id_path(root, bid, bid_len);
		d = try_debug_file(cand, bid, bid_len, false, 0);
		free(cand);
		if (d)
			return d;
	}
	link = dwelf_elf_gnu_debuglink(e, &crc);
	if (!link || !*link || strchr(link, '/') || !path)
		return debuginfod_file(bid, bid_len);
	slash = strrchr(path, '/');
	dir = slash ? xasprintf("%.*s", (int)(slash - path), path) : xstrdup(".");
	if (stat(path, &self) != 0)
		memset(&self, 0, sizeof(self));

	const char *fmts[] = { "%s/%s", "%s/.debug/%s", NULL };
	for (int i = 0; fmts[i] && !d; i++) {
		cand = xasprintf(fmts[i], dir, link);
		if (stat(cand, &st) == 0 &&
		    !(st.st_dev == self.st_dev && st.st_ino == self.st_ino))
			d = try_debug_file(cand, bid, bid_len, true, crc);
		free(cand);
	}
	if (!d) {
		cand = xasprintf("%s%s%s/%s", root, dir[0] == '/' ? "" : "/",
				 dir, link);
		d = try_debug_file(cand, bid, bid_len, true, crc);
		free(cand);
	}
	free(dir);
	return d ? d : debuginfod_file(bid, bid_len);
}

/* ---- construction ----------------------------------------------------- */

static struct sym_obj *obj_new(struct sym_intern *strings)
{
	struct sym_obj *o = xcalloc(1, sizeof(*o));
	o->strings = strings;
	return o;
}

/*
 * Debug files made smaller by dwz point into a shared file by build-id.
 * libdw looks for it under /usr/lib/debug only; look under our root first.
 */
static void attach_alt(struct sym_obj *o, const char *debug_root)
{
	const char *name, *err;
	const void *bid;
	ssize_t len = dwelf_dwarf_gnu_debugaltlink(o->dw, &name, &bid);
	char *path;

	if (len <= 0 || len > SYM_BUILD_ID_MAX)
		return;
	path = build_id_path(debug_root, bid, (unsigned)len);
	o->alt_elf = access(path, R_OK) == 0 ? open_elf(path, &err) : NULL;
	free(path);
	if (o->alt_elf)
		o->alt_dw = dwarf_begin_elf(o->alt_elf, DWARF_C_READ, NULL);
	if (o->alt_dw)
		dwarf_setalt(o->dw, o->alt_dw);
}

static void obj_finish(struct sym_obj *o, const char *debug_root)
{
	Elf *dwelf = o->delf ? o->delf : o->elf;
	Elf_Scn *scn;

	scn = find_symtab(o->elf, SHT_SYMTAB);
	if (scn) {
		read_symbols(o, o->elf, scn);
	} else if (o->delf && (scn = find_symtab(o->delf, SHT_SYMTAB))) {
		read_symbols(o, o->delf, scn);
	} else {
		if ((scn = find_symtab(o->elf, SHT_DYNSYM)))
			read_symbols(o, o->elf, scn);
		read_minidebuginfo(o);
		if (o->mini && (scn = find_symtab(o->mini, SHT_SYMTAB)))
			read_symbols(o, o->mini, scn);
	}
	read_plt(o, o->elf);
	if (has_dwarf(dwelf)) {
		o->lazy = lazydw_open(dwelf);
		o->dw = o->lazy ? lazydw_dwarf(o->lazy)
				: dwarf_begin_elf(dwelf, DWARF_C_READ, NULL);
	}
	if (o->dw)
		attach_alt(o, debug_root);
}

/*
 * The rest of opening a mapped program image once o->elf is set (a file at
 * path, or an in-memory copy with path NULL): headers, segments, build-id,
 * the separate debug file when the image has no DWARF, symbols.
 */
/*
 * ELF header, segments and build-id of o->elf; false (with o->error set to
 * error) if it has no usable program headers.
 */
static bool obj_read_headers(struct sym_obj *o, const char *error)
{
	GElf_Ehdr eh;

	if (!gelf_getehdr(o->elf, &eh) || read_segments(o) != 0) {
		o->error = error;
		return false;
	}
	o->e_type = eh.e_type;
	o->bid_len = read_build_id(o->elf, o->bid);
	return true;
}

static struct sym_obj *obj_load_image(struct sym_obj *o, const char *path,
				      const char *debug_root)
{
	if (!obj_read_headers(o, "no program headers (damaged or not a program)"))
		return o;
	o->offsets_valid = true;
	if (!has_dwarf(o->elf))
		o->delf = find_debug_file(o->elf, path, debug_root, o->bid,
					  o->bid_len);
	obj_finish(o, debug_root);
	pr_debug("symbols: %s: %zu functions, %s", path ? path : "(image in memory)",
		 o->nfuncs, o->dw ? "DWARF" : "no DWARF");
	return o;
}

struct sym_obj *obj_open(const char *path, const char *debug_root,
			 struct sym_intern *strings)
{
	struct sym_obj *o = obj_new(strings);
	const char *err = NULL;

	o->elf = open_elf(path, &err);
	if (!o->elf) {
		o->error = intern_str(strings, err);
		return o;
	}
	o->path = intern_str(strings, path);
	return obj_load_image(o, path, debug_root);
}

struct sym_obj *obj_open_build_id(const uint8_t *bid, unsigned bid_len,
				  const char *debug_root,
				  struct sym_intern *strings)
{
	struct sym_obj *o = obj_new(strings);
	char *path = build_id_path(debug_root, bid, bid_len);

	o->elf = try_debug_file(path, bid, bid_len, false, 0);
	if (o->elf)
		o->path = intern_str(strings, path);
	free(path);
	if (!o->elf)
		o->elf = debuginfod_file(bid, bid_len);
	if (!o->elf) {
		o->error = "no debug file for its build-id";
		return o;
	}
	if (!obj_read_headers(o, "debug file without program headers"))
		return o;
	o->offsets_valid = false;
	obj_finish(o, debug_root);
	return o;
}

struct sym_obj *obj_open_memory(const void *image, size_t size,
				const char *debug_root,
				struct sym_intern *strings)
{
	struct sym_obj *o = obj_new(strings);

	if (!image || !size) {
		o->error = "no image";
		return o;
	}
	elf_version(EV_CURRENT);
	/* libelf reads the bytes in place, and may write to them: a copy. */
	o->image = xmalloc(size);
	o->image_size = size;
	memcpy(o->image, image, size);
	o->elf = elf_memory(o->image, size);
	if (!o->elf || elf_kind(o->elf) != ELF_K_ELF) {
		o->error = "not an ELF image";
		return o;
	}
	return obj_load_image(o, NULL, debug_root);
}

/*
 * Every function symbol of one table, aliases and local ones included (no
 * dedup: callers that judge functions by name need every spelling).
 */
static void each_function(Elf *e, Elf64_Word type, sym_function_cb cb, void *arg)
{
	Elf_Scn *scn = find_symtab(e, type);
	Elf_Data *data;
	GElf_Shdr sh;

	if (!scn || !gelf_getshdr(scn, &sh) || !sh.sh_entsize ||
	    !(data = elf_getdata(scn, NULL)))
		return;
	for (size_t i = 1; i < sh.sh_size / sh.sh_entsize; i++) {
		GElf_Sym sym;
		const char *name;
		int t;

		if (!gelf_getsym(data, (int)i, &sym))
			break;
		t = GELF_ST_TYPE(sym.st_info);
		if ((t != STT_FUNC && t != STT_GNU_IFUNC) ||
		    sym.st_shndx == SHN_UNDEF || sym.st_shndx >= SHN_LORESERVE ||
		    sym.st_value == 0)
			continue;
		name = elf_strptr(e, sh.sh_link, sym.st_name);
		if (name && *name)
			cb(arg, name, sym.st_value, sym.st_size);
	}
}

int obj_each_function(const char *path, const char *debug_root,
		      sym_function_cb cb, void *arg)
{
	struct sym_obj *o = obj_new(NULL);
	const char *err = NULL;
	int ret = 0;

	errno = 0;
	o->elf = open_elf(path, &err);
	if (!o->elf) {
		ret = errno ? -errno : -ENOEXEC;
		goto out;
	}
	o->bid_len = read_build_id(o->elf, o->bid);
	each_function(o->elf, SHT_SYMTAB, cb, arg);
	each_function(o->elf, SHT_DYNSYM, cb, arg);
	if (!find_symtab(o->elf, SHT_SYMTAB)) {
		o->delf = find_debug_file(o->elf, path, debug_root, o->bid,
					  o->bid_len);
		if (o->delf)
			each_function(o->delf, SHT_SYMTAB, cb, arg);
		read_minidebuginfo(o);
		if (o->mini)
			each_function(o->mini, SHT_SYMTAB, cb, arg);
	}
out:
	obj_free(o);
	return ret;
}

void obj_free(struct sym_obj *o)
{
	if (!o)
		return;
	for (size_t i = 0; i < o->ncus; i++) {
		free(o->cus[i].subr);
		free(o->cus[i].subs);
	}
	free(o->cus);
	free(o->cur);
	unw_table_free(o->cfi);
	if (o->lazy)
		lazydw_free(o->lazy);
	else if (o->dw)
		dwarf_end(o->dw);
	if (o->alt_dw)
		dwarf_end(o->alt_dw);
	if (o->alt_elf)
		elf_end(o->alt_elf);
	if (o->delf)
		elf_end(o->delf);
	if (o->elf)
		elf_end(o->elf);
	if (o->mini)
		elf_end(o->mini);
	free(o->mini_image);
	free(o->image);
	free(o->funcs);
	free(o->labels);
	free(o->segs);
	free(o);
}

const char *obj_error(const struct sym_obj *o)
{
	return o->error;
}

unsigned obj_build_id(const struct sym_obj *o, const uint8_t **bid)
{
	*bid = o->bid;
	return o->bid_len;
}

bool obj_is_exec(const struct sym_obj *o)
{
	return o->e_type == ET_EXEC;
}

bool obj_covers(const struct sym_obj *o, uint64_t vaddr)
{
	return seg_of(o, vaddr) != NULL;
}

uint64_t obj_bias_for_mapping(const struct sym_obj *o, uint64_t start,
			      uint64_t pgoff)
{
	uint64_t mask = ~(page_size() - 1);

	if (o->e_type == ET_EXEC || !o->nsegs)
		return 0;
	if (o->offsets_valid) {
		/*
		 * The segment the mapping starts in.  Neighbouring segments
		 * can share a file page; code is what we resolve, so the
		 * executable segments are tried first.
		 */
		for (int pass = 0; pass < 2; pass++) {
			for (size_t i = 0; i < o->nsegs; i++) {
				const struct seg *s = &o->segs[i];
				if (pass == 0 && !(s->flags & PF_X))
					continue;
				if (pgoff >= (s->offset & mask) &&
				    pgoff < s->offset + (s->filesz ? s->filesz : 1))
					return start - s->vaddr - pgoff + s->offset;
			}
		}
	}
	/* A debug file's offsets are not the original's: assume the mapping
	 * is the code segment's, from its first page. */
	for (size_t i = 0; i < o->nsegs; i++) {
		if (o->segs[i].flags & PF_X)
			return start - (o->segs[i].vaddr & mask);
	}
	return start - (o->segs[0].vaddr & mask);
}

uint64_t obj_bias_for_base(const struct sym_obj *o, uint64_t base)
{
	if (o->e_type == ET_EXEC || !o->nsegs)
		return 0;
	/* dladdr's dli_fbase is where the first PT_LOAD's page is mapped. */
	return base - (o->segs[0].vaddr & ~(page_size() - 1));
}

/* ---- DWARF index ------------------------------------------------------ */

static int cmp_range(const void *a, const void *b)
{
	const struct range *x = a, *y = b;

	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	/* Larger first, so inner ranges sort after the ones holding them. */
	if (x->hi != y->hi)
		return x->hi > y->hi ? -1 : 1;
	return 0;
}

static void add_ranges(Dwarf_Die *die, struct range **v, size_t *n,
		       size_t *alloc, size_t idx)
{
	Dwarf_Addr base, lo, hi;
	ptrdiff_t off = 0;

	while ((off = dwarf_ranges(die, off, &base, &lo, &hi)) > 0) {
		/* lo 0: a function the linker discarded (--gc-sections). */
		if (lo == 0 || lo >= hi)
			continue;
		ALLOC_GROW(*v, *n + 1, *alloc);
		(*v)[*n].lo = lo;
		(*v)[*n].hi = hi;
		(*v)[*n].idx = idx;
		(*n)++;
	}
}

/* Collect the subprograms with code of a scope (namespaces, classes, ...). */
static void scan_scope(struct cu_info *ci, Dwarf_Die *parent, int depth)
{
	Dwarf_Die child, next;

	if (depth > 64 || dwarf_child(parent, &child) != 0)
		return;
	for (;;) {
		switch (dwarf_tag(&child)) {
		case DW_TAG_subprogram:
			ALLOC_GROW(ci->subs, ci->nsubs + 1, ci->asubs);
			ci->subs[ci->nsubs] = child;
			add_ranges(&child, &ci->subr, &ci->nsubr, &ci->asubr,
				   ci->nsubs);
			ci->nsubs++;
			/* Local classes' methods, GNU nested functions. */
			scan_scope(ci, &child, depth + 1);
			break;
		case DW_TAG_namespace:
		case DW_TAG_class_type:
		case DW_TAG_structure_type:
		case DW_TAG_union_type:
		case DW_TAG_lexical_block:
		case DW_TAG_module:
			scan_scope(ci, &child, depth + 1);
			break;
		default:
			break;
		}
		if (dwarf_siblingof(&child, &next) != 0)
			break;
		child = next;
	}
}

static void scan_cu(struct cu_info *ci)
{
	if (ci->scanned)
		return;
	ci->scanned = true;
	scan_scope(ci, &ci->die, 0);
	if (ci->nsubr > 1)
		qsort(ci->subr, ci->nsubr, sizeof(*ci->subr), cmp_range);
}

/* Lazily read DWARF: CUs by address from .debug_aranges, read on use. */
static bool index_aranges(struct sym_obj *o)
{
	const struct sym_arange *ar;
	const uint64_t *units;
	size_t nunits, n = lazydw_aranges(o->lazy, &ar, &units, &nunits);

	if (!n)
		return false;
	o->cus = xcalloc(nunits, sizeof(*o->cus));
	o->ncus = o->acus = nunits;
	for (size_t i = 0; i < nunits; i++)
		o->cus[i].off = units[i];
	o->cur = xmalloc(n * sizeof(*o->cur));
	o->ncur = o->acur = n;
	for (size_t i = 0; i < n; i++) {
		o->cur[i].lo = ar[i].lo;
		o->cur[i].hi = ar[i].hi;
		o->cur[i].idx = ar[i].unit;
	}
	return true;
}

static bool cu_ready(struct sym_obj *o, struct cu_info *ci)
{
	if (!ci->ready) {
		ci->ready = true;
		ci->usable = lazydw_need_cu(o->lazy, ci->off, &ci->die) == 0;
	}
	return ci->usable;
}

static void index_dwarf(struct sym_obj *o)
{
	Dwarf_CU *cu = NULL;
	Dwarf_Die cudie, subdie;
	Dwarf_Half version;
	uint8_t unit_type;

	o->dwarf_indexed = true;
	if (o->lazy && (index_aranges(o) || !lazydw_need_all(o->lazy)))
		return;
	while (dwarf_get_units(o->dw, cu, &cu, &version, &unit_type, &cudie,
			       &subdie) == 0) {
		struct cu_info *ci;
		size_t before = o->ncur;

		if (unit_type != DW_UT_compile && unit_type != DW_UT_skeleton)
			continue;
		ALLOC_GROW(o->cus, o->ncus + 1, o->acus);
		ci = &o->cus[o->ncus];
		memset(ci, 0, sizeof(*ci));
		ci->die = cudie;
		ci->ready = ci->usable = true;
		add_ranges(&cudie, &o->cur, &o->ncur, &o->acur, o->ncus);
		if (o->ncur == before) {
			/* No CU ranges: its functions' ranges stand in. */
			scan_cu(ci);
			for (size_t i = 0; i < ci->nsubr; i++) {
				ALLOC_GROW(o->cur, o->ncur + 1, o->acur);
				o->cur[o->ncur] = ci->subr[i];
				o->cur[o->ncur++].idx = o->ncus;
			}
		}
		o->ncus++;
	}
	if (o->ncur > 1)
		qsort(o->cur, o->ncur, sizeof(*o->cur), cmp_range);
}

/* The smallest range holding addr; ranges sorted by lo, larger first. */
static const struct range *find_range(const struct range *v, size_t n,
				      uint64_t addr)
{
	const struct range *best = NULL;
	size_t lo = UPPER_BOUND(v, n, lo, addr);

	for (size_t i = lo, back = 0; i-- > 0 && back < 16; back++) {
		if (addr < v[i].hi &&
		    (!best || v[i].hi - v[i].lo < best->hi - best->lo))
			best = &v[i];
	}
	return best;
}

/* ---- DWARF lookups ---------------------------------------------------- */

/* A DIE's mangled (linkage) name, interned, or NULL for C functions. */
static const char *die_system_name(struct sym_obj *o, Dwarf_Die *die)
{
	Dwarf_Attribute a;
	const char *s;

	if ((dwarf_attr_integrate(die, DW_AT_linkage_name, &a) ||
	     dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &a)) &&
	    (s = dwarf_formstring(&a)) && s[0] == '_' && (s[1] == 'Z' || s[1] == 'R'))
		return intern_str(o->strings, s);
	return NULL;
}

static const char *die_name(struct sym_obj *o, Dwarf_Die *die)
{
	Dwarf_Attribute a;
	const char *s;

	/* C++ and Rust: the mangled name carries the scope (C++ also the
	 * parameters); one the demangler refuses is no better than the bare
	 * name.  A C function's linkage name is only an asm alias (glibc's
	 * __GI_*). */
	if ((dwarf_attr_integrate(die, DW_AT_linkage_name, &a) ||
	     dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &a)) &&
	    (s = dwarf_formstring(&a)) && s[0] == '_' && (s[1] == 'Z' || s[1] == 'R')) {
		const char *d = intern_demangled(o->strings, s);
		if (s[1] == 'Z' || strcmp(d, s))
			return d;
	}
	if (dwarf_attr_integrate(die, DW_AT_name, &a) &&
	    (s = dwarf_formstring(&a)))
		return intern_str(o->strings, s);
	return NULL;
}

static bool has_pc_attrs(Dwarf_Die *die)
{
	return dwarf_hasattr(die, DW_AT_low_pc) ||
	       dwarf_hasattr(die, DW_AT_ranges);
}

/*
 * Append to chain the inlined_subroutine DIEs holding addr below scope,
 * outermost first.  Returns the new count.
 */
static int find_inlines(Dwarf_Die *scope, uint64_t addr, Dwarf_Die *chain,
			int n, int max, int depth)
{
	Dwarf_Die child, next;

	if (depth > 128 || dwarf_child(scope, &child) != 0)
		return n;
	for (;;) {
		switch (dwarf_tag(&child)) {
		case DW_TAG_inlined_subroutine:
			if (dwarf_haspc(&child, addr) > 0) {
				if (n < max)
					chain[n++] = child;
				return find_inlines(&child, addr, chain, n,
						    max, depth + 1);
			}
			break;
		case DW_TAG_lexical_block:
		case DW_TAG_try_block:
		case DW_TAG_catch_block:
			if (!has_pc_attrs(&child)) {
				int m = find_inlines(&child, addr, chain, n,
						     max, depth + 1);
				if (m > n)
					return m;
			} else if (dwarf_haspc(&child, addr) > 0) {
				return find_inlines(&child, addr, chain, n,
						    max, depth + 1);
			}
			break;
		default:
			break;
		}
		if (dwarf_siblingof(&child, &next) != 0)
			break;
		child = next;
	}
	return n;
}

static void call_site(struct sym_obj *o, struct cu_info *ci, Dwarf_Die *inl,
		      struct sym_frame *f)
{
	Dwarf_Attribute a;
	Dwarf_Word w;
	Dwarf_Files *files;
	size_t nfiles;

	f->file = NULL;
	f->line = 0;
	if (dwarf_formudata(dwarf_attr(inl, DW_AT_call_line, &a), &w) == 0)
		f->line = (unsigned)w;
	if (dwarf_formudata(dwarf_attr(inl, DW_AT_call_file, &a), &w) == 0 &&
	    dwarf_getsrcfiles(&ci->die, &files, &nfiles) == 0 && w < nfiles) {
		const char *s = dwarf_filesrc(files, w, NULL, NULL);
		if (s)
			f->file = intern_str(o->strings, s);
	}
}

static void line_at(struct sym_obj *o, struct cu_info *ci, uint64_t addr,
		    struct sym_frame *f)
{
	Dwarf_Line *line = dwarf_getsrc_die(&ci->die, addr);
	const char *s;
	int n = 0;

	f->file = NULL;
	f->line = 0;
	if (!line)
		return;
	s = dwarf_linesrc(line, NULL, NULL);
	if (s)
		f->file = intern_str(o->strings, s);
	if (dwarf_lineno(line, &n) == 0 && n > 0)
		f->line = (unsigned)n;
}

/*
 * A symbol's name for people: without the version that newer linkers append
 * in .symtab ("__libc_start_main@@GLIBC_2.34"), demangled.
 */
static const char *symbol_name(struct sym_obj *o, const char *raw)
{
	const char *at = strchr(raw, '@');

	if (at && at > raw)
		raw = intern_strn(o->strings, raw, at - raw);
	return intern_demangled(o->strings, raw);
}

/* A compiler-made part of a function: "f.cold", "f.isra.0", "f(int) [clone
 * .constprop.0]" (the original may be named by an alias: "__GI_f.cold"). */
static bool is_clone(const char *sym)
{
	return strchr(sym, '.') &&
	       (strstr(sym, " [clone .") || !strchr(sym, '('));
}

int obj_lookup(struct sym_obj *o, uint64_t vaddr, struct sym_frame *out,
	       int max)
{
	Dwarf_Die chain[SYM_MAX_FRAMES];
	struct cu_info *ci = NULL;
	Dwarf_Die *sub = NULL;
	struct esym *sym;
	struct sym_frame outer = { 0 };
	int n = 0, k = 0;

	if (max <= 0)
		return 0;
	if (o->dw) {
		const struct range *r;
		if (!o->dwarf_indexed)
			index_dwarf(o);
		r = find_range(o->cur, o->ncur, vaddr);
		if (r && cu_ready(o, &o->cus[r->idx])) {
			ci = &o->cus[r->idx];
			scan_cu(ci);
			r = find_range(ci->subr, ci->nsubr, vaddr);
			if (r)
				sub = &ci->subs[r->idx];
		}
	}
	if (sub)
		k = find_inlines(sub, vaddr, chain, 0,
				 (max < SYM_MAX_FRAMES ? max : SYM_MAX_FRAMES) - 1, 0);

	/* Innermost first: the inlined frames, each at the line inside it. */
	for (int i = k - 1; i >= 0; i--) {
		struct sym_frame *f = &out[n++];
		*f = (struct sym_frame){ .function = die_name(o, &chain[i]),
					 .system_name = die_system_name(o, &chain[i]),
					 .inlined = true };
		if (i == k - 1)
			line_at(o, ci, vaddr, f);
		else
			call_site(o, ci, &chain[i + 1], f);
	}

	sym = find_symbol(o, vaddr);
	if (sym) {
		if (!sym->name)
			sym->name = symbol_name(o, sym->raw);
		outer.function = sym->name;
		outer.system_name = intern_strn(o->strings, sym->raw,
						strcspn(sym->raw, "@"));
	}
	if (sub) {
		/* Clones and split parts are the function DWARF names: one
		 * row per source function, as addr2line shows. */
		const char *dn = die_name(o, sub);
		if (dn && (!sym || is_clone(sym->name))) {
			outer.function = dn;
			outer.system_name = die_system_name(o, sub);
		}
	}
	if (ci) {
		if (k)
			call_site(o, ci, &chain[0], &outer);
		else
			line_at(o, ci, vaddr, &outer);
	}
	out[n++] = outer;
	return n;
}
