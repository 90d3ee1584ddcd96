/*
 * discover — the patch plan of one ELF object (see discover.h).
 *
 * Four passes over the file, each linear: symbols (through src/symbols),
 * FDE starts (through src/unwind), one decoder sweep of the executable
 * sections, one pass over relocations and initialized data.  Then every
 * candidate start is decided in address order, which is also the order the
 * unwinder's row cache grows cheapest in.
 */
#include "record/discover.h"
#include "record/plan_file.h"

#include "symbols/symbols.h"
#include "unwind/unwind.h"
#include "util/util.h"

#include <Zydis/Zydis.h>
#include <elfutils/libdwelf.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct u64v {
	uint64_t *v;
	size_t n, alloc;
};

static void u64v_push(struct u64v *a, uint64_t x)
{
	ALLOC_GROW(a->v, a->n + 1, a->alloc);
	a->v[a->n++] = x;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static void u64v_sort(struct u64v *a)
{
	size_t out = 0;

	if (!a->n)
		return;
	qsort(a->v, a->n, sizeof(*a->v), cmp_u64);
	for (size_t i = 0; i < a->n; i++)
		if (!out || a->v[out - 1] != a->v[i])
			a->v[out++] = a->v[i];
	a->n = out;
}

static bool u64v_has(const struct u64v *a, uint64_t x)
{
	size_t lo = 0, hi = a->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (a->v[mid] < x)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < a->n && a->v[lo] == x;
}

/* Names that decide alone. */
#define NAME_RETURNS_TWICE  (1u << 0)
#define NAME_READS_RA       (1u << 1)
#define NAME_COLD           (1u << 2)
#define NAME_PART           (1u << 3)

struct cand {
	uint64_t addr, size;
	char *name;
	unsigned flags;               /* DSC_SYMBOL, DSC_FDE */
	unsigned names;               /* NAME_* of every alias */
};

/*
 * Targets that matter, as the scans find them: calls, jumps and addresses
 * taken that are candidate starts, and any target (or candidate start)
 * landing in the first NEAR_BYTES after a candidate start, where it may
 * refuse that candidate's entry (branch_into_entry).  Filtering through
 * the bitmaps as targets are found keeps the arrays to sort small: python3
 * has 90,000 distinct jump targets, a few thousand of which matter.
 */
struct targets {
	struct u64v calls, jumps, taken, landing;
};

#define NEAR_BYTES 32         /* > endbr64 + the longest displaced run */

enum target_kind { T_CALL, T_JUMP, T_TAKEN };

struct sec {
	uint64_t lo, hi;
	const uint8_t *data;          /* hi - lo bytes */
	bool plt;
	/* Bitmaps over [lo, hi) (sized by bytes the file holds, so a
	 * hostile file cannot ask for more): candidate starts, the bytes
	 * just after them that an entry jump may replace, and the starts
	 * that may be too short for it (whose call sites the scan keeps). */
	uint64_t *starts, *near, *short_starts;
};

/* Shorter than endbr64 and the jmp: maybe too short to patch. */
#define SHORT_BYTES (4 + REL_JMP_LEN)

struct callv {
	struct dsc_call *v;
	size_t n, alloc;
};

struct ctx {
	Elf *elf;
	GElf_Ehdr eh;
	bool is_ldso;
	struct sec *secs;             /* executable sections, by address */
	size_t nsecs, asecs;
	uint64_t text_lo, text_hi;    /* hull of secs */
	uint64_t plt, plt_sec;        /* .plt and .plt.sec addresses, or 0 */
	struct cand *c;
	size_t nc, ac;
	struct targets tg;
	struct callv sites;           /* rel32 branches to maybe-short starts */
	struct u64v hooks;
	struct unw_table *cfi;
	struct dsc_stats st;
};

/* ---- names ------------------------------------------------------------ */

static bool name_in(const char *name, const char *const *list)
{
	while (*name == '_')
		name++;
	for (; *list; list++)
		if (!strcmp(name, *list))
			return true;
	return false;
}

/* Compared with their leading underscores removed. */
static const char *const returns_twice[] = {
	"setjmp", "sigsetjmp", "savectx", "vfork", "libc_vfork", "getcontext",
	NULL
};
static const char *const reads_ra[] = {
	"dlopen", "dlmopen", "dlsym", "dlvsym", "libc_dlsym", "libc_dlvsym",
	"libc_dlopen_mode", "dl_sym", "dl_vsym", NULL
};
static const char *const hook_names[] = {
	"fentry__", "mcount", NULL
};

static bool is_hook(const char *name)
{
	return name && name_in(name, hook_names);
}

static unsigned classify(const char *name)
{
	unsigned k = 0;

	if (name_in(name, returns_twice))
		k |= NAME_RETURNS_TWICE;
	if (name_in(name, reads_ra))
		k |= NAME_READS_RA;
	if (strstr(name, ".cold"))
		k |= NAME_COLD;
	if (strstr(name, ".part."))
		k |= NAME_PART;
	return k;
}

/* Among aliases, the public spelling: fewer leading underscores, shorter. */
static bool better_name(const char *a, const char *b)
{
	size_t ua = strspn(a, "_"), ub = strspn(b, "_");

	if (ua != ub)
		return ua < ub;
	return strlen(a) < strlen(b);
}

static void on_symbol(void *arg, const char *name, uint64_t addr, uint64_t size)
{
	struct ctx *x = arg;
	struct cand *c;

	ALLOC_GROW(x->c, x->nc + 1, x->ac);
	c = &x->c[x->nc++];
	c->addr = addr;
	c->size = size;
	c->name = xstrdup(name);
	c->flags = DSC_SYMBOL;
	c->names = classify(name);
	if (is_hook(name))
		u64v_push(&x->hooks, addr);
}

/* ---- sections ----------------------------------------------------------- */

static int cmp_sec(const void *a, const void *b)
{
	const struct sec *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

static const struct sec *sec_of(const struct ctx *x, uint64_t addr)
{
	size_t lo = 0, hi = x->nsecs;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (x->secs[mid].lo <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || addr >= x->secs[lo - 1].hi)
		return NULL;
	return &x->secs[lo - 1];
}

static bool test_bit(const uint64_t *b, uint64_t i)
{
	return b[i >> 6] >> (i & 63) & 1;
}

static void note(const struct ctx *x, struct targets *o, enum target_kind k,
		 uint64_t t)
{
	const struct sec *sec;

	if (t < x->text_lo || t >= x->text_hi || !(sec = sec_of(x, t)))
		return;
	if (test_bit(sec->starts, t - sec->lo))
		u64v_push(k == T_CALL ? &o->calls : k == T_JUMP ? &o->jumps : &o->taken, t);
	if (test_bit(sec->near, t - sec->lo))
		u64v_push(&o->landing, t);
}

static void read_sections(struct ctx *x)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (elf_getshdrstrndx(x->elf, &shstrndx) != 0)
		return;
	while ((scn = elf_nextscn(x->elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;
		const char *name;
		struct sec *s;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS ||
		    !(sh.sh_flags & SHF_ALLOC) || !(sh.sh_flags & SHF_EXECINSTR) ||
		    !sh.sh_size || !(d = elf_getdata(scn, NULL)) || !d->d_buf ||
		    d->d_size < sh.sh_size)
			continue;
		name = elf_strptr(x->elf, shstrndx, sh.sh_name);
		ALLOC_GROW(x->secs, x->nsecs + 1, x->asecs);
		s = &x->secs[x->nsecs++];
		s->lo = sh.sh_addr;
		s->hi = sh.sh_addr + sh.sh_size;
		s->data = d->d_buf;
		s->plt = name && (!strcmp(name, ".plt") || !strcmp(name, ".plt.sec") ||
				  !strcmp(name, ".plt.got") || !strcmp(name, ".iplt"));
		if (name && !strcmp(name, ".plt"))
			x->plt = sh.sh_addr;
		if (name && !strcmp(name, ".plt.sec"))
			x->plt_sec = sh.sh_addr;
	}
	if (x->nsecs) {
		qsort(x->secs, x->nsecs, sizeof(*x->secs), cmp_sec);
		x->text_lo = x->secs[0].lo;
		x->text_hi = x->secs[x->nsecs - 1].hi;
	}
}

/* ---- the code scan -------------------------------------------------------- */

/*
 * What one sweep over [lo, hi) of a section finds.  The sweeps of one scan
 * run in parallel threads, each into its own vectors.
 */
struct sweep {
	const struct ctx *x;
	const struct sec *sec;
	uint64_t lo, hi;
	struct targets tg;
	struct callv sites;
	size_t insns;
};

/*
 * Decode [lo, hi) from lo; a byte the decoder rejects is stepped over.
 * Minimal mode: lengths, opcodes and raw fields are all this needs.
 */
static void *sweep_run(void *arg)
{
	struct sweep *w = arg;
	const struct ctx *x = w->x;
	const uint8_t *base = w->sec->data + (w->lo - w->sec->lo);
	size_t size = w->hi - w->lo;
	bool exec = x->eh.e_type == ET_EXEC;
	ZydisDecoder dec;
	ZydisDecodedInstruction in;

	ZydisDecoderInit(&dec, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);
	ZydisDecoderEnableMode(&dec, ZYDIS_DECODER_MODE_MINIMAL, ZYAN_TRUE);
	for (size_t off = 0; off < size;) {
		uint64_t next;

		if (!ZYAN_SUCCESS(ZydisDecoderDecodeInstruction(&dec, NULL, base + off,
								 size - off, &in))) {
			off++;
			continue;
		}
		w->insns++;
		off += in.length;
		next = w->lo + off;
		if (in.raw.imm[0].is_relative) {
			uint64_t t = next + (uint64_t)in.raw.imm[0].value.s;
			const struct sec *ts;

			note(x, &w->tg, in.opcode_map == ZYDIS_OPCODE_MAP_DEFAULT &&
					in.opcode == 0xe8 ? T_CALL : T_JUMP, t);
			/* call, jmp, jcc rel32 (the field last): redirectable */
			if (in.raw.imm[0].size == 32 && in.raw.imm[0].offset + 4 == in.length &&
			    in.length <= 6 && (ts = sec_of(x, t)) &&
			    test_bit(ts->short_starts, t - ts->lo)) {
				ALLOC_GROW(w->sites.v, w->sites.n + 1, w->sites.alloc);
				w->sites.v[w->sites.n++] = (struct dsc_call){
					.site = next - in.length, .target = t, .len = in.length };
			}
			continue;
		}
		if (in.opcode_map == ZYDIS_OPCODE_MAP_DEFAULT &&
		    in.opcode == 0x8d && in.raw.modrm.mod == 0 &&
		    in.raw.modrm.rm == 5 && in.raw.disp.size == 32) {
			uint64_t t = next + (uint64_t)in.raw.disp.value;

			note(x, &w->tg, T_TAKEN, t);
			continue;
		}
		/* mov $f, %edi and the like: only where addresses are fixed */
		if (exec && in.raw.imm[0].size >= 32)
			note(x, &w->tg, T_TAKEN, in.raw.imm[0].value.u);
	}
	return NULL;
}

static void u64v_append(struct u64v *a, struct u64v *b)
{
	if (!b->n) {
		free(b->v);
		return;
	}
	ALLOC_GROW(a->v, a->n + b->n, a->alloc);
	memcpy(a->v + a->n, b->v, b->n * sizeof(*b->v));
	a->n += b->n;
	free(b->v);
}

#define SWEEPS_MAX 4

/*
 * Sweep every executable section but the PLTs.  Big sections are cut into
 * up to SWEEPS_MAX pieces at function starts (FDE starts, where
 * instructions certainly begin), decoded in parallel: a sweep of python3's
 * 2.8 MB of code is ~55 ms of CPU in Zydis.
 */
static void scan_code(struct ctx *x)
{
	struct sweep *w = NULL;
	size_t nw = 0, aw = 0;
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	unsigned parts = ncpu < 1 ? 1 : ncpu > SWEEPS_MAX ? SWEEPS_MAX : (unsigned)ncpu;
	pthread_t *tid;
	bool *started;

	for (size_t s = 0; s < x->nsecs; s++) {
		const struct sec *sec = &x->secs[s];
		uint64_t lo = sec->lo;

		if (sec->plt)
			continue;
		for (unsigned k = 1; k <= parts; k++) {
			uint64_t hi = sec->hi, flo, fhi;

			if (k < parts && sec->hi - sec->lo >= (1u << 16)) {
				hi = sec->lo + (sec->hi - sec->lo) / parts * k;
				if (!x->cfi || !unw_table_fde_range(x->cfi, hi, &flo, &fhi) ||
				    flo <= lo)
					continue;
				hi = flo;
			}
			ALLOC_GROW(w, nw + 1, aw);
			w[nw++] = (struct sweep){ .x = x, .sec = sec, .lo = lo, .hi = hi };
			lo = hi;
			if (hi == sec->hi)
				break;
		}
	}
	/* Piece 0 and any piece whose thread would not start run here. */
	tid = xcalloc(nw ? nw : 1, sizeof(*tid));
	started = xcalloc(nw ? nw : 1, sizeof(*started));
	for (size_t i = 1; i < nw; i++)
		started[i] = pthread_create(&tid[i], NULL, sweep_run, &w[i]) == 0;
	for (size_t i = 0; i < nw; i++)
		if (!started[i])
			sweep_run(&w[i]);
	for (size_t i = 0; i < nw; i++) {
		if (started[i])
			pthread_join(tid[i], NULL);
		x->st.insns += w[i].insns;
		u64v_append(&x->tg.calls, &w[i].tg.calls);
		u64v_append(&x->tg.jumps, &w[i].tg.jumps);
		u64v_append(&x->tg.taken, &w[i].tg.taken);
		u64v_append(&x->tg.landing, &w[i].tg.landing);
		if (w[i].sites.n) {
			ALLOC_GROW(x->sites.v, x->sites.n + w[i].sites.n, x->sites.alloc);
			memcpy(x->sites.v + x->sites.n, w[i].sites.v,
			       w[i].sites.n * sizeof(*w[i].sites.v));
			x->sites.n += w[i].sites.n;
		}
		free(w[i].sites.v);
	}
	free(tid);
	free(started);
	free(w);
}

/*
 * Can an initialized data word be a code address without a relocation
 * naming it?  In a fixed-address executable, yes (nothing is relocated).
 * In a position-independent object every such pointer has a RELA
 * relocation, read apart, unless its relative ones are packed as RELR,
 * which keeps the value in the word itself.  Elsewhere a word is only
 * data: a constant in .rodata that happens to equal an address inside a
 * function's first bytes refused that function as branch_into_entry.
 */
static bool data_words_may_point(const struct ctx *x)
{
	Elf_Scn *scn = NULL;

	if (x->eh.e_type != ET_DYN)
		return true;
	while ((scn = elf_nextscn(x->elf, scn))) {
		GElf_Shdr sh;

		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_RELR)
			return true;
	}
	return false;
}

/*
 * Pointers in relocations and in initialized data, and the entry points
 * the ELF headers give (e_entry, DT_INIT, DT_FINI).
 */
static void scan_data(struct ctx *x)
{
	Elf_Scn *scn = NULL;
	bool words = data_words_may_point(x);

	note(x, &x->tg, T_TAKEN, x->eh.e_entry);

	while ((scn = elf_nextscn(x->elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || !(d = elf_getdata(scn, NULL)) ||
		    !d->d_buf)
			continue;
		if (sh.sh_type == SHT_DYNAMIC && sh.sh_entsize) {
			for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
				GElf_Dyn dyn;

				if (!gelf_getdyn(d, (int)i, &dyn) || dyn.d_tag == DT_NULL)
					break;
				if (dyn.d_tag == DT_INIT || dyn.d_tag == DT_FINI)
					note(x, &x->tg, T_TAKEN, dyn.d_un.d_ptr);
			}
			continue;
		}
		if (sh.sh_type == SHT_RELA && sh.sh_entsize) {
			Elf_Data *syms = NULL;
			Elf_Scn *ss = elf_getscn(x->elf, sh.sh_link);
			GElf_Shdr ssh;
			size_t symstr = 0;

			if (ss && sh.sh_link && gelf_getshdr(ss, &ssh)) {
				syms = elf_getdata(ss, NULL);
				symstr = ssh.sh_link;
			}
			for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
				GElf_Rela r;
				GElf_Sym sym;
				unsigned type;
				uint64_t v;

				if (!gelf_getrela(d, (int)i, &r))
					break;
				type = GELF_R_TYPE(r.r_info);
				/*
				 * __fentry__ / mcount: their GOT slot is a hook
				 * (call *slot(%rip)), and so is the PLT stub of a
				 * JUMP_SLOT (i-th of .plt.sec, or (i+1)-th of .plt).
				 */
				if ((type == R_X86_64_GLOB_DAT || type == R_X86_64_JUMP_SLOT) &&
				    syms && gelf_getsym(syms, (int)GELF_R_SYM(r.r_info), &sym) &&
				    is_hook(elf_strptr(x->elf, symstr, sym.st_name))) {
					u64v_push(&x->hooks, r.r_offset);
					if (type == R_X86_64_JUMP_SLOT && (x->plt_sec || x->plt))
						u64v_push(&x->hooks, x->plt_sec ? x->plt_sec + 16 * i
										: x->plt + 16 * (i + 1));
				}
				if (type == R_X86_64_RELATIVE || type == R_X86_64_IRELATIVE) {
					v = (uint64_t)r.r_addend;
				} else if ((type == R_X86_64_64 || type == R_X86_64_GLOB_DAT) &&
					   syms && gelf_getsym(syms, (int)GELF_R_SYM(r.r_info), &sym) &&
					   sym.st_shndx != SHN_UNDEF) {
					v = sym.st_value + (uint64_t)r.r_addend;
				} else {
					continue;
				}
				note(x, &x->tg, T_TAKEN, v);
			}
			continue;
		}
		if (!words || !(sh.sh_flags & SHF_ALLOC) || (sh.sh_flags & SHF_EXECINSTR) ||
		    (sh.sh_type != SHT_PROGBITS && sh.sh_type != SHT_INIT_ARRAY &&
		     sh.sh_type != SHT_FINI_ARRAY && sh.sh_type != SHT_PREINIT_ARRAY))
			continue;
		for (size_t off = (8 - (sh.sh_addr & 7)) & 7; off + 8 <= d->d_size; off += 8) {
			uint64_t v;

			memcpy(&v, (const uint8_t *)d->d_buf + off, 8);
			note(x, &x->tg, T_TAKEN, v);
		}
	}
}

/* ---- candidates ------------------------------------------------------------ */

static int cmp_cand(const void *a, const void *b)
{
	const struct cand *p = a, *q = b;

	if (p->addr != q->addr)
		return p->addr < q->addr ? -1 : 1;
	return (int)(q->flags & DSC_SYMBOL) - (int)(p->flags & DSC_SYMBOL);
}

/* Sort and merge the candidates at one address. */
static void merge_cands(struct ctx *x)
{
	size_t out = 0;

	if (!x->nc)
		return;
	qsort(x->c, x->nc, sizeof(*x->c), cmp_cand);
	for (size_t i = 0; i < x->nc; i++) {
		struct cand *c = &x->c[i], *m = out ? &x->c[out - 1] : NULL;

		if (!m || m->addr != c->addr) {
			x->c[out++] = *c;
			continue;
		}
		m->flags |= c->flags;
		m->names |= c->names;
		if (c->flags & DSC_SYMBOL && c->size > m->size)
			m->size = c->size;
		if (c->name && (!m->name || better_name(c->name, m->name))) {
			free(m->name);
			m->name = c->name;
		} else {
			free(c->name);
		}
	}
	x->nc = out;
}

/*
 * The bitmaps note() filters with; candidate starts inside another's first
 * bytes go straight to the landing addresses.
 */
static void mark_candidates(struct ctx *x)
{
	for (size_t i = 0; i < x->nsecs; i++) {
		size_t words = ((x->secs[i].hi - x->secs[i].lo) >> 6) + 1;

		x->secs[i].starts = xcalloc(words, sizeof(uint64_t));
		x->secs[i].near = xcalloc(words, sizeof(uint64_t));
		x->secs[i].short_starts = xcalloc(words, sizeof(uint64_t));
	}
	for (size_t i = 0; i < x->nc; i++) {
		struct sec *sec = (struct sec *)sec_of(x, x->c[i].addr);
		uint64_t a, size, flo, fhi;

		if (!sec)
			continue;
		a = x->c[i].addr - sec->lo;
		size = sec->hi - sec->lo;
		sec->starts[a >> 6] |= 1ULL << (a & 63);
		/* the size decide() takes may be the CFI range's */
		if (x->c[i].size < SHORT_BYTES ||
		    (x->cfi && unw_table_fde_range(x->cfi, x->c[i].addr, &flo, &fhi) &&
		     fhi - x->c[i].addr < SHORT_BYTES))
			sec->short_starts[a >> 6] |= 1ULL << (a & 63);
		for (uint64_t k = a + 1; k < a + NEAR_BYTES && k < size; k++)
			sec->near[k >> 6] |= 1ULL << (k & 63);
	}
	for (size_t i = 0; i < x->nc; i++) {
		const struct sec *sec = sec_of(x, x->c[i].addr);

		if (sec && test_bit(sec->near, x->c[i].addr - sec->lo))
			u64v_push(&x->tg.landing, x->c[i].addr);
	}
}

/* CFA = rsp + 8, return address at CFA - 8, rbp as the caller left it. */
static bool at_entry(const struct unw_row *r)
{
	return r->cfa == UNW_CFA_RSP && r->cfa_off == 8 &&
	       r->ra == UNW_LOC_CFA && r->ra_off == -8 && r->rbp == UNW_LOC_SAME;
}

/*
 * Does the function read its own return address in its first
 * instructions?  Follows rsp through push/pop/sub/add and rbp through
 * `mov rbp, rsp`, up to the first branch, call or return.
 */
static bool reads_return_address(const ZydisDecoder *dec, const uint8_t *p,
				 size_t n)
{
	ZydisDecodedInstruction in;
	ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
	int64_t depth = 0, rbp_depth = -1;     /* bytes below the RA slot */

	for (unsigned k = 0; k < 16 && n; k++) {
		ZydisDecoderContext ctx;
		unsigned nops = 0;
		bool mem, need;

		if (!ZYAN_SUCCESS(ZydisDecoderDecodeInstruction(dec, &ctx, p, n, &in)))
			return false;
		/* Operands (slow to decode) only where they can matter. */
		mem = (in.attributes & ZYDIS_ATTRIB_HAS_MODRM) && in.raw.modrm.mod != 3;
		need = mem || in.mnemonic == ZYDIS_MNEMONIC_SUB ||
		       in.mnemonic == ZYDIS_MNEMONIC_ADD || in.mnemonic == ZYDIS_MNEMONIC_MOV;
		if (need) {
			if (!ZYAN_SUCCESS(ZydisDecoderDecodeOperands(dec, &ctx, &in, ops,
								      in.operand_count)))
				return false;
			nops = in.operand_count_visible;
		}
		for (unsigned i = 0; i < nops; i++) {
			const ZydisDecodedOperand *o = &ops[i];

			if (o->type != ZYDIS_OPERAND_TYPE_MEMORY ||
			    !(o->actions & ZYDIS_OPERAND_ACTION_MASK_READ) ||
			    o->mem.index != ZYDIS_REGISTER_NONE ||
			    in.mnemonic == ZYDIS_MNEMONIC_LEA)
				continue;
			if (o->mem.base == ZYDIS_REGISTER_RSP &&
			    o->mem.disp.value == depth)
				return true;
			if (o->mem.base == ZYDIS_REGISTER_RBP && rbp_depth >= 0 &&
			    o->mem.disp.value == rbp_depth)
				return true;
		}
		switch (in.mnemonic) {
		case ZYDIS_MNEMONIC_PUSH:
			depth += 8;
			break;
		case ZYDIS_MNEMONIC_POP:
			if (depth == 0)
				return true;
			depth -= 8;
			break;
		case ZYDIS_MNEMONIC_SUB:
		case ZYDIS_MNEMONIC_ADD:
			if (nops >= 2 && ops[0].type == ZYDIS_OPERAND_TYPE_REGISTER &&
			    ops[0].reg.value == ZYDIS_REGISTER_RSP) {
				if (ops[1].type != ZYDIS_OPERAND_TYPE_IMMEDIATE)
					return false;
				depth += in.mnemonic == ZYDIS_MNEMONIC_SUB ?
					 ops[1].imm.value.s : -ops[1].imm.value.s;
			}
			break;
		case ZYDIS_MNEMONIC_MOV:
			if (nops < 2)
				break;
			if (ops[0].type == ZYDIS_OPERAND_TYPE_REGISTER &&
			    ops[0].reg.value == ZYDIS_REGISTER_RBP &&
			    ops[1].type == ZYDIS_OPERAND_TYPE_REGISTER &&
			    ops[1].reg.value == ZYDIS_REGISTER_RSP)
				rbp_depth = depth;
			else if (ops[0].type == ZYDIS_OPERAND_TYPE_REGISTER &&
				 ops[0].reg.value == ZYDIS_REGISTER_RSP)
				return false;
			break;
		default:
			if (in.meta.category == ZYDIS_CATEGORY_CALL ||
			    in.meta.category == ZYDIS_CATEGORY_RET ||
			    in.meta.category == ZYDIS_CATEGORY_COND_BR ||
			    in.meta.category == ZYDIS_CATEGORY_UNCOND_BR)
				return false;
		}
		p += in.length;
		n -= in.length;
	}
	return false;
}

static enum patch_reason decide(struct ctx *x, const ZydisDecoder *full,
				struct cand *c, struct dsc_func *f)
{
	const struct sec *sec = sec_of(x, c->addr);
	const struct unw_row *row;
	uint64_t lo, hi;
	const uint8_t *bytes;
	size_t nbytes;

	if (!sec)
		return PATCH_NOT_CODE;
	if (x->is_ldso)
		return PATCH_DYNAMIC_LOADER;
	if (sec->plt)
		return PATCH_PLT_STUB;
	if (c->names & NAME_RETURNS_TWICE)
		return PATCH_RETURNS_TWICE;
	if (c->names & NAME_READS_RA)
		return PATCH_READS_RETURN_ADDRESS;
	if ((c->names & NAME_COLD) ||
	    (!((c->flags & DSC_SYMBOL) && !(c->names & NAME_PART)) &&
	     !(f->flags & (DSC_CALLED | DSC_ADDR_TAKEN))))
		return f->flags & (DSC_JUMPED | DSC_SYMBOL) || (c->names & NAME_COLD) ?
		       PATCH_JUMP_ONLY : PATCH_UNREFERENCED;
	if (!x->cfi || !unw_table_fde_range(x->cfi, c->addr, &lo, &hi))
		return PATCH_NO_CFI;
	if (!(c->flags & DSC_SYMBOL) || !c->size || c->addr + c->size > hi)
		f->size = hi - c->addr;
	if (!unw_table_fde_entry_clean(x->cfi, c->addr)) {
		row = unw_table_find(x->cfi, c->addr);
		if (!row)
			return PATCH_NO_CFI;
		if (!at_entry(row))
			return PATCH_NOT_AT_ENTRY;
	}
	bytes = sec->data + (c->addr - sec->lo);
	nbytes = sec->hi - c->addr;
	if (nbytes > f->size)
		nbytes = f->size;
	{
		size_t skip = nbytes >= 4 && bytes[0] == 0xf3 && bytes[1] == 0x0f &&
			      bytes[2] == 0x1e && bytes[3] == 0xfa ? 4 : 0;

		if (reads_return_address(full, bytes + skip, nbytes - skip))
			return PATCH_READS_RETURN_ADDRESS;
	}
	return rel_entry_build(bytes, nbytes, c->addr, c->addr + f->size, c->addr,
			       x->tg.landing.v, x->tg.landing.n, x->hooks.v, x->hooks.n,
			       &f->entry);
}

static void decide_all(struct ctx *x, struct dsc_plan *p)
{
	ZydisDecoder full;

	ZydisDecoderInit(&full, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);
	p->funcs = xcalloc(x->nc ? x->nc : 1, sizeof(*p->funcs));
	for (size_t i = 0; i < x->nc; i++) {
		struct cand *c = &x->c[i];
		struct dsc_func *f = &p->funcs[p->nfuncs++];

		f->addr = c->addr;
		f->size = c->size;
		f->name = c->name;
		c->name = NULL;
		f->flags = c->flags;
		if (u64v_has(&x->tg.calls, c->addr))
			f->flags |= DSC_CALLED;
		if (u64v_has(&x->tg.taken, c->addr))
			f->flags |= DSC_ADDR_TAKEN;
		if (u64v_has(&x->tg.jumps, c->addr))
			f->flags |= DSC_JUMPED;
		f->reason = decide(x, &full, c, f);
		if (f->reason != PATCH_OK)
			memset(&f->entry, 0, sizeof(f->entry));
		p->count[f->reason]++;
	}
}

/* ---- call sites of functions too short to patch ------------------------ */

static int cmp_call(const void *a, const void *b)
{
	const struct dsc_call *p = a, *q = b;

	if (p->target != q->target)
		return p->target < q->target ? -1 : 1;
	return p->site < q->site ? -1 : p->site > q->site;
}

/*
 * Is an instruction at site, decoding its CFI range from the start?  The
 * sweep decodes whole sections and steps over what it cannot decode, so
 * its instructions may be out of step for a while after data in the code;
 * a rel32 rewritten there would corrupt the program.
 */
static bool at_boundary(const struct ctx *x, const ZydisDecoder *dec, uint64_t site)
{
	const struct sec *sec = sec_of(x, site);
	ZydisDecodedInstruction in;
	uint64_t lo, hi, a;

	if (!sec || !x->cfi || !unw_table_fde_range(x->cfi, site, &lo, &hi) || lo < sec->lo ||
	    hi > sec->hi)
		return false;
	for (a = lo; a < site; a += in.length)
		if (!ZYAN_SUCCESS(ZydisDecoderDecodeInstruction(dec, NULL, sec->data + (a - sec->lo),
								 hi - a, &in)))
			return false;
	return a == site;
}

/* Does [site, site + len) overlap the bytes an entry jmp replaces? */
static bool in_entry_bytes(const struct dsc_plan *p, uint64_t site, uint64_t len)
{
	size_t lo = 0, hi = p->nfuncs;

	while (lo < hi) {             /* first function starting at or past the end */
		size_t mid = lo + (hi - lo) / 2;
		if (p->funcs[mid].addr < site + len)
			lo = mid + 1;
		else
			hi = mid;
	}
	while (lo-- > 0 && p->funcs[lo].addr + NEAR_BYTES > site) {
		const struct rel_entry *e = &p->funcs[lo].entry;

		if (p->funcs[lo].reason == PATCH_OK && site < e->site + e->len && site + len > e->site)
			return true;
	}
	return false;
}

/*
 * The functions refused as too_short that have direct call sites become
 * call_sites, their branches listed in p->calls.  Runs after decide_all.
 */
static void plan_call_sites(struct ctx *x, struct dsc_plan *p)
{
	ZydisDecoder dec;

	ZydisDecoderInit(&dec, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);
	ZydisDecoderEnableMode(&dec, ZYDIS_DECODER_MODE_MINIMAL, ZYAN_TRUE);
	if (x->sites.n)
		qsort(x->sites.v, x->sites.n, sizeof(*x->sites.v), cmp_call);
	p->calls = xcalloc(x->sites.n ? x->sites.n : 1, sizeof(*p->calls));
	for (size_t i = 0; i < x->sites.n; i++) {
		const struct dsc_call *c = &x->sites.v[i];
		struct dsc_func *f = (struct dsc_func *)dsc_plan_find(p, c->target);

		if (!f || f->reason != PATCH_TOO_SHORT || in_entry_bytes(p, c->site, c->len) ||
		    !at_boundary(x, &dec, c->site))
			continue;
		p->calls[p->ncalls++] = *c;
		f->ncall_sites++;
	}
	for (size_t i = 0; i < p->nfuncs; i++) {
		if (!p->funcs[i].ncall_sites)
			continue;
		p->count[PATCH_TOO_SHORT]--;
		p->count[PATCH_CALL_SITES]++;
		p->funcs[i].reason = PATCH_CALL_SITES;
	}
}

/* ---- the plan ---------------------------------------------------------- */

static uint64_t cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static bool is_dynamic_loader(const char *path)
{
	char *real = realpath(path, NULL);
	const char *base = strrchr(real ? real : path, '/');
	bool r;

	base = base ? base + 1 : (real ? real : path);
	r = !strncmp(base, "ld-linux", 8) || !strncmp(base, "ld64.so", 7);
	free(real);
	return r;
}

static void ctx_release(struct ctx *x)
{
	for (size_t i = 0; i < x->nc; i++)
		free(x->c[i].name);
	free(x->c);
	for (size_t i = 0; i < x->nsecs; i++) {
		free(x->secs[i].starts);
		free(x->secs[i].near);
		free(x->secs[i].short_starts);
	}
	free(x->secs);
	free(x->tg.calls.v);
	free(x->tg.jumps.v);
	free(x->tg.taken.v);
	free(x->tg.landing.v);
	free(x->sites.v);
	free(x->hooks.v);
	unw_table_free(x->cfi);
	if (x->elf)
		elf_end(x->elf);
}

int dsc_plan_build(const char *path, struct dsc_plan **out)
{
	struct ctx x = { 0 };
	struct dsc_plan *p = NULL;
	uint64_t t0 = now_ns(), c0 = cpu_ns(), t;
	int fd, ret = 0;

	*out = NULL;
	elf_version(EV_CURRENT);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	x.elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!x.elf || elf_kind(x.elf) != ELF_K_ELF || !gelf_getehdr(x.elf, &x.eh) ||
	    elf_cntl(x.elf, ELF_C_FDREAD) != 0) {
		ret = -ENOEXEC;
		goto out;
	}
	if (x.eh.e_machine != EM_X86_64 || x.eh.e_ident[EI_CLASS] != ELFCLASS64) {
		ret = -EPROTONOSUPPORT;
		goto out;
	}
	x.is_ldso = is_dynamic_loader(path);
	read_sections(&x);

	t = now_ns();
	sym_file_functions(path, on_symbol, &x);
	x.st.symbols_ns = now_ns() - t;

	t = now_ns();
	if (unw_table_build_file(path, &x.cfi) == 0) {
		uint64_t lo, hi;

		for (size_t i = 0; unw_table_fde(x.cfi, i, &lo, &hi); i++) {
			struct cand *c;

			ALLOC_GROW(x.c, x.nc + 1, x.ac);
			c = &x.c[x.nc++];
			*c = (struct cand){ .addr = lo, .size = hi - lo, .flags = DSC_FDE };
		}
	}
	x.st.cfi_ns = now_ns() - t;

	t = now_ns();
	merge_cands(&x);
	mark_candidates(&x);
	scan_code(&x);
	scan_data(&x);
	u64v_sort(&x.tg.calls);
	u64v_sort(&x.tg.jumps);
	u64v_sort(&x.tg.taken);
	u64v_sort(&x.tg.landing);
	u64v_sort(&x.hooks);
	x.st.calls = x.tg.calls.n;
	x.st.jumps = x.tg.jumps.n;
	x.st.taken = x.tg.taken.n;
	x.st.scan_ns = now_ns() - t;

	t = now_ns();
	p = xcalloc(1, sizeof(*p));
	decide_all(&x, p);
	plan_call_sites(&x, p);
	x.st.decide_ns = now_ns() - t;
	{
		const uint8_t *id;
		size_t n = x.cfi ? unw_table_build_id(x.cfi, &id) : 0;

		if (n > sizeof(p->build_id))
			n = sizeof(p->build_id);
		if (n)
			memcpy(p->build_id, id, n);
		p->build_id_len = n;
	}
	x.st.total_ns = now_ns() - t0;
	x.st.cpu_ns = cpu_ns() - c0;
	p->stats = x.st;
	*out = p;
out:
	ctx_release(&x);
	close(fd);
	return ret;
}

void dsc_plan_free(struct dsc_plan *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->nfuncs; i++)
		free((char *)p->funcs[i].name);
	free(p->funcs);
	free(p->calls);
	free(p);
}

const struct dsc_func *dsc_plan_find(const struct dsc_plan *p, uint64_t addr)
{
	size_t lo = 0, hi = p->nfuncs;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (p->funcs[mid].addr < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < p->nfuncs && p->funcs[lo].addr == addr ? &p->funcs[lo] : NULL;
}

/* ---- plan files ----------------------------------------------------------- */

int dsc_plan_write(const struct dsc_plan *p, const char *path)
{
	struct plan_file_header h = { .version = PLAN_FILE_VERSION };
	struct plan_file_entry *v;
	struct plan_file_call *c;
	char *tmp = xasprintf("%s.XXXXXX", path);
	size_t n = 0;
	FILE *f = NULL;
	int ret = 0, fd;

	memcpy(h.magic, PLAN_FILE_MAGIC, 8);
	h.header_size = sizeof(h);
	h.entry_size = sizeof(*v);
	for (unsigned r = 0; r < PATCH_NREASONS; r++)
		h.count[r] = p->count[r];
	memcpy(h.build_id, p->build_id, p->build_id_len);
	h.build_id_len = (uint32_t)p->build_id_len;
	v = xcalloc(p->count[PATCH_OK] + 1, sizeof(*v));
	for (size_t i = 0; i < p->nfuncs; i++) {
		if (p->funcs[i].reason != PATCH_OK)
			continue;
		v[n].addr = p->funcs[i].addr;
		v[n++].entry = p->funcs[i].entry;
	}
	h.nentries = (uint32_t)n;
	h.call_size = sizeof(*c);
	h.ncalls = (uint32_t)p->ncalls;
	c = xcalloc(p->ncalls + 1, sizeof(*c));
	for (size_t i = 0; i < p->ncalls; i++)
		c[i] = (struct plan_file_call){ .site = p->calls[i].site, .target = p->calls[i].target,
						.len = p->calls[i].len,
						.rel_off = (uint8_t)(p->calls[i].len - 4) };
	errno = 0;
	fd = mkostemp(tmp, O_CLOEXEC);      /* 0600, never a file that was there */
	if (fd >= 0 && !(f = fdopen(fd, "wb")))
		close(fd);
	if (!f ||
	    fwrite(&h, sizeof(h), 1, f) != 1 ||
	    (n && fwrite(v, sizeof(*v), n, f) != n) ||
	    (h.ncalls && fwrite(c, sizeof(*c), h.ncalls, f) != h.ncalls))
		ret = errno ? -errno : -EIO;
	if (f && fclose(f) != 0 && !ret)
		ret = -errno;
	if (!ret && rename(tmp, path) != 0)
		ret = -errno;
	if (ret)
		unlink(tmp);
	free(tmp);
	free(v);
	free(c);
	return ret;
}

/*
 * mkdir -p of dir's components, private (0700); errors show up when the
 * file is written.
 */
static void make_dirs(char *dir)
{
	for (char *s = dir + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		mkdir(dir, 0700);
		*s = '/';
	}
	mkdir(dir, 0700);
}

/*
 * The cache holds plans the runtime patches code by: a plan someone else
 * could write is code they choose run in the program.  So the cache
 * directory and its root must be ours, real directories (not links), and
 * writable by nobody else; ours and open to others (an older cache, 0755)
 * is made 0700.  0, or -EPERM after a one-line error.
 */
static int cache_dir_private(const char *dir)
{
	struct stat st;

	if (lstat(dir, &st))
		return -errno;
	if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 022)) {
		pr_err("the plan cache %s is not private (%s): set STACKCLOCK_CACHE_DIR to a directory of "
		       "your own", dir, !S_ISDIR(st.st_mode) ? "not a directory" :
		       st.st_uid != geteuid() ? "another user owns it" : "others can write in it");
		return -EPERM;
	}
	if ((st.st_mode & 077) && chmod(dir, 0700))
		return -errno;
	return 0;
}

char *dsc_cache_root(void)
{
	const char *d = getenv("STACKCLOCK_CACHE_DIR");
	const char *xdg = getenv("XDG_CACHE_HOME");
	const char *home = getenv("HOME");

	if (d && *d)
		return xstrdup(d);
	if (xdg && *xdg)
		return xasprintf("%s/stackclock", xdg);
	if (home && *home)
		return xasprintf("%s/.cache/stackclock", home);
	return xasprintf("/tmp/stackclock-cache-%u", (unsigned)geteuid());
}

static char *cache_dir(void)
{
	char *root = dsc_cache_root(), *dir = xasprintf("%s/plans", root);

	free(root);
	return dir;
}

/* The cache key of the object: its build-id, else path, size and mtime. */
static char *cache_key(const char *elf)
{
	char hex[41] = "";
	const void *id = NULL;
	ssize_t n = -1;
	struct stat st;
	int fd = open(elf, O_RDONLY | O_CLOEXEC);
	Elf *e;

	if (fd < 0)
		return NULL;
	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (e)
		n = dwelf_elf_gnu_build_id(e, &id);
	for (ssize_t i = 0; i < n && i < 20; i++)
		snprintf(hex + 2 * i, 3, "%02x", ((const uint8_t *)id)[i]);
	if (e)
		elf_end(e);
	if (n <= 0 && fstat(fd, &st) == 0) {
		uint64_t h = hash_u64((uint64_t)st.st_size ^ hash_u64((uint64_t)st.st_mtime));
		char *real = realpath(elf, NULL);

		for (const char *c = real ? real : elf; *c; c++)
			h = hash_u64(h ^ (unsigned char)*c);
		free(real);
		snprintf(hex, sizeof(hex), "file-%016llx", (unsigned long long)h);
	}
	close(fd);
	return *hex ? xstrdup(hex) : NULL;
}

static bool plan_file_usable(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	void *m;
	size_t n;
	bool ok = false;

	if (fd < 0)
		return false;
	if (fstat(fd, &st) == 0 && st.st_size > 0 &&
	    (m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0)) != MAP_FAILED) {
		ok = plan_file_check(m, (size_t)st.st_size, &n) != NULL;
		munmap(m, (size_t)st.st_size);
	}
	close(fd);
	return ok;
}

int dsc_plan_cached(const char *elf, char **path, bool *hit)
{
	char *dir, *key = cache_key(elf), *file;
	struct dsc_plan *p;
	int ret;

	*path = NULL;
	*hit = false;
	if (!key) {
		ret = errno;
		return ret ? -ret : -ENOENT;
	}
	dir = cache_dir();
	file = xasprintf("%s/%s.plan", dir, key);
	free(key);
	{
		/* the root first: nothing is made through it before it is
		 * known to be ours (a link planted at /tmp/stackclock-cache-UID) */
		char *root = dsc_cache_root();

		make_dirs(root);
		ret = cache_dir_private(root);
		free(root);
	}
	if (!ret) {
		mkdir(dir, 0700);
		ret = cache_dir_private(dir);
	}
	if (!ret && plan_file_usable(file)) {
		*hit = true;
		*path = file;
		free(dir);
		return 0;
	}
	if (!ret)
		ret = dsc_plan_build(elf, &p);
	if (!ret) {
		ret = dsc_plan_write(p, file);
		dsc_plan_free(p);
	}
	free(dir);
	if (ret) {
		free(file);
		return ret;
	}
	*path = file;
	return 0;
}
