/*
 * lazydw — libdw over compressed debug sections, inflating only what the
 * lookups need.
 *
 * Why: dwarf_begin_elf() (elfutils 0.188, check_section) inflates every
 * compressed DWARF section it knows as it opens the file.  Debian's debug
 * packages compress theirs: libc6-dbg's file is 4 MB on disk and 10 MB
 * inflated (.debug_loclists alone 1.4 MB, never used for symbols), ~40 ms of
 * zlib for a report that needs two or three of its 4,000 CUs.
 *
 * How: an ELF image in anonymous memory holds the debug sections libdw is
 * given, at their inflated sizes; pages not yet written cost nothing.
 * libelf hands libdw pointers straight into that image (elf_memory(); byte
 * sections are never copied, which lazydw_open() checks), so what is filled
 * in later is what libdw reads.  Each section is one zlib stream and so can
 * only be inflated as a growing prefix:
 *  - .gnu_debugaltlink (the name of dwz's common file) at once;
 *  - .debug_str, .debug_line_str, .debug_str_offsets, .debug_addr,
 *    .debug_ranges, .debug_rnglists (small; any DIE may point anywhere in
 *    them) whole, when the first CU is made ready;
 *  - .debug_info up to the end of the CU wanted: libdw reaches a CU by
 *    reading the header of every unit before it (__libdw_findcu), and for
 *    DWARF < 5 each earlier unit's root DIE too, so those units' abbreviation
 *    tables are made ready as well;
 *  - .debug_abbrev for those tables, .debug_line for the CU's line program;
 *  - a CU whose abbreviations have a form that can point into another unit
 *    (DW_FORM_ref_addr, ref_sig8, indirect: LTO, type units) has everything
 *    inflated, as libdw would have done.
 * Sections symbolization never asks libdw about (.debug_loc[lists],
 * .debug_macro, .debug_frame, .debug_pubnames, ...) are left out.
 *
 * CUs are found by address through .debug_aranges, parsed here because
 * libdw's dwarf_getaranges() reads every unit header first.  libdwfl (and so
 * perf and eu-addr2line) trusts .debug_aranges the same way.  Without it the
 * caller inflates everything and indexes the CUs itself.
 *
 * The zlib streams are inflated raw (windowBits -15, after checking the
 * two-byte zlib header): a prefix cannot be checked against the stream's
 * Adler-32, and damaged data mostly fails to inflate anyway; what does
 * inflate is only ever read by libdw, which checks its own bounds.
 */
#include "symbols/lazydw.h"

#include <elf.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <zlib.h>

#include <dwarf.h>
#include <elfutils/libdw.h>

#include "util/util.h"

bool sym_lazy_dwarf = true;
unsigned long long sym_stat_inflated;

enum lsec_kind { AT_OPEN, WHOLE, INFO, ABBREV, LINE };

static const struct {
	const char *name;
	enum lsec_kind kind;
} known[] = {
	{ ".debug_info", INFO },
	{ ".debug_abbrev", ABBREV },
	{ ".debug_line", LINE },
	{ ".debug_str", WHOLE },
	{ ".debug_line_str", WHOLE },
	{ ".debug_str_offsets", WHOLE },
	{ ".debug_addr", WHOLE },
	{ ".debug_ranges", WHOLE },
	{ ".debug_rnglists", WHOLE },
	{ ".gnu_debugaltlink", AT_OPEN },   /* read by the caller at once */
};
#define NKNOWN (sizeof(known) / sizeof(known[0]))

struct lsec {
	const char *name;
	enum lsec_kind kind;
	const unsigned char *src;  /* zlib stream or plain bytes, in the file */
	size_t src_len;
	bool compressed;
	unsigned char *dst;        /* in the image */
	size_t size, done;         /* inflated size; bytes ready */
	z_stream zs;
	bool zinit, failed;
};

struct lazydw {
	unsigned char *image;
	size_t image_len;
	Elf *elf;                  /* over image */
	Dwarf *dw;
	struct lsec sec[NKNOWN];
	struct lsec *info, *abbrev, *line;
	bool whole_ready, all_ready, broken;
	uint64_t walked;           /* .debug_info units walked below this */
	struct sym_arange *ar;     /* from .debug_aranges, sorted by lo */
	size_t nar;
	uint64_t *units;           /* distinct CU offsets, sorted */
	size_t nunits;
};

/* ---- filling the image ------------------------------------------------ */

#define FILL_GRAIN 16384

static bool fill(struct lsec *s, size_t want)
{
	if (!s || s->done >= want)
		return s != NULL;
	if (s->failed)
		return false;
	/* In steps, not byte by byte as the parsers below ask. */
	want = (want + FILL_GRAIN - 1) / FILL_GRAIN * FILL_GRAIN;
	if (want > s->size)
		want = s->size;
	if (!s->compressed) {
		memcpy(s->dst + s->done, s->src + s->done, want - s->done);
		s->done = want;
		return true;
	}
	if (!s->zinit) {
		const unsigned char *p = s->src;
		/* zlib header: deflate, no preset dictionary, valid check. */
		if (s->src_len < 2 || (p[0] & 0x0f) != 8 || (p[1] & 0x20) ||
		    ((p[0] << 8) | p[1]) % 31 != 0 ||
		    inflateInit2(&s->zs, -15) != Z_OK)
			goto fail;
		s->zinit = true;
		s->zs.next_in = (Bytef *)(uintptr_t)(p + 2);
		s->zs.avail_in = (uInt)(s->src_len - 2);
	}
	s->zs.next_out = s->dst + s->done;
	s->zs.avail_out = (uInt)(want - s->done);
	while (s->zs.avail_out) {
		int rc = inflate(&s->zs, Z_SYNC_FLUSH);
		size_t got = (size_t)(s->zs.next_out - (s->dst + s->done));

		sym_stat_inflated += got;
		s->done += got;
		if (rc == Z_STREAM_END) {
			if (s->done != s->size)
				goto fail;
			break;
		}
		if (rc != Z_OK)
			goto fail;
	}
	if (s->done == s->size) {
		inflateEnd(&s->zs);
		s->zinit = false;
	}
	return true;
fail:
	pr_debug("symbols: %s does not inflate", s->name);
	s->failed = true;
	return false;
}

static bool fill_all(struct lazydw *l, bool whole_only)
{
	bool ok = true;

	for (size_t i = 0; i < NKNOWN; i++) {
		struct lsec *s = &l->sec[i];
		if (s->size && (!whole_only || s->kind == WHOLE))
			ok &= fill(s, s->size);
	}
	return ok;
}

/* ---- reading the filled bytes ----------------------------------------- */

struct rd {
	struct lsec *s;
	size_t pos;
	bool bad;
};

/* Make n more bytes at the read position ready; false past the end. */
static bool rd_need(struct rd *r, size_t n)
{
	if (r->bad || r->pos + n > r->s->size || r->pos + n < r->pos ||
	    !fill(r->s, r->pos + n)) {
		r->bad = true;
		return false;
	}
	return true;
}

static uint64_t rd_fixed(struct rd *r, unsigned n)
{
	uint64_t v = 0;

	if (!rd_need(r, n))
		return 0;
	for (unsigned i = 0; i < n; i++)   /* little-endian only */
		v |= (uint64_t)r->s->dst[r->pos + i] << (8 * i);
	r->pos += n;
	return v;
}

static uint64_t rd_uleb(struct rd *r)
{
	uint64_t v = 0;

	for (unsigned shift = 0; rd_need(r, 1); shift += 7) {
		unsigned char b = r->s->dst[r->pos++];
		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return v;
	}
	return 0;
}

/*
 * Make the abbreviation table at off ready (it ends at a zero code).
 * *cross is set when it has a form that can refer outside its unit.
 */
static bool need_abbrevs(struct lazydw *l, uint64_t off, bool *cross)
{
	struct rd r = { .s = l->abbrev, .pos = off };

	*cross = false;
	if (!r.s)
		return false;
	while (!r.bad) {
		if (rd_uleb(&r) == 0)          /* end of the table */
			return !r.bad;
		rd_uleb(&r);                   /* tag */
		rd_fixed(&r, 1);               /* has children */
		while (!r.bad) {
			uint64_t name = rd_uleb(&r), form = rd_uleb(&r);
			if (!name && !form)
				break;
			if (form == DW_FORM_implicit_const)
				rd_uleb(&r);   /* the value (SLEB128) */
			if (form == DW_FORM_ref_addr ||
			    form == DW_FORM_ref_sig8 ||
			    form == DW_FORM_indirect)
				*cross = true;
		}
	}
	return false;
}

struct unit_hdr {
	uint64_t end, abbrev;
	unsigned version;
};

static bool read_unit(struct lazydw *l, uint64_t off, struct unit_hdr *h)
{
	struct rd r = { .s = l->info, .pos = off };
	uint64_t len = rd_fixed(&r, 4);
	unsigned osz = 4;

	if (len == 0xffffffff) {
		len = rd_fixed(&r, 8);
		osz = 8;
	} else if (len >= 0xfffffff0) {
		return false;
	}
	if (r.bad || len > l->info->size - r.pos || len < 7)
		return false;
	h->end = r.pos + len;
	h->version = (unsigned)rd_fixed(&r, 2);
	if (h->version >= 5)
		rd_fixed(&r, 2);               /* unit type, address size */
	h->abbrev = rd_fixed(&r, osz);
	return !r.bad && h->version >= 2 && h->version <= 5 &&
	       fill(l->info, h->end);
}

/* ---- opening ---------------------------------------------------------- */

static int cmp_arange(const void *a, const void *b)
{
	const struct sym_arange *x = a, *y = b;

	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	if (x->hi != y->hi)
		return x->hi > y->hi ? -1 : 1;
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	const uint64_t *x = a, *y = b;

	return *x < *y ? -1 : *x > *y;
}

static size_t find_unit(const struct lazydw *l, uint64_t off)
{
	size_t lo = 0, hi = l->nunits;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (l->units[mid] < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* .debug_aranges (DWARF 2-5): sets of (address, length) per unit. */
static void parse_aranges(struct lazydw *l, struct lsec *s)
{
	size_t aar = 0, aun = 0, n = 0;
	struct rd r = { .s = s };

	s->dst = xmalloc(s->size ? s->size : 1);
	if (!fill(s, s->size))
		return;
	while (r.pos + 4 <= s->size) {
		size_t start = r.pos, end;
		uint64_t len = rd_fixed(&r, 4), cu;
		unsigned osz = 4, asz, seg;

		if (len == 0xffffffff) {
			len = rd_fixed(&r, 8);
			osz = 8;
		}
		if (r.bad || len > s->size - r.pos)
			break;
		end = r.pos + len;
		rd_fixed(&r, 2);               /* version */
		cu = rd_fixed(&r, osz);
		asz = (unsigned)rd_fixed(&r, 1);
		seg = (unsigned)rd_fixed(&r, 1);
		if (r.bad || (asz != 4 && asz != 8) || seg) {
			r.pos = end;
			continue;
		}
		/* Tuples are aligned to twice the address size from the set. */
		r.pos = start + (r.pos - start + 2 * asz - 1) / (2 * asz) * (2 * asz);
		while (r.pos + 2 * asz <= end) {
			uint64_t lo = rd_fixed(&r, asz), sz = rd_fixed(&r, asz);
			if (!lo && !sz)
				break;
			/* lo 0: a function the linker discarded. */
			if (!lo || !sz || lo + sz < lo)
				continue;
			ALLOC_GROW(l->ar, n + 1, aar);
			l->ar[n].lo = lo;
			l->ar[n].hi = lo + sz;
			l->ar[n].unit = cu;
			n++;
		}
		r.pos = end;
	}
	l->nar = n;
	for (size_t i = 0; i < n; i++) {
		ALLOC_GROW(l->units, l->nunits + 1, aun);
		l->units[l->nunits++] = l->ar[i].unit;
	}
	if (l->nunits > 1)
		qsort(l->units, l->nunits, sizeof(*l->units), cmp_u64);
	n = 0;
	for (size_t i = 0; i < l->nunits; i++) {
		if (!n || l->units[n - 1] != l->units[i])
			l->units[n++] = l->units[i];
	}
	l->nunits = n;
	n = l->nar;
	/* From here on a range's unit is its index in units[]. */
	for (size_t i = 0; i < n; i++)
		l->ar[i].unit = find_unit(l, l->ar[i].unit);
	if (n > 1)
		qsort(l->ar, n, sizeof(*l->ar), cmp_arange);
	l->nar = n;
}

/* Where a section's bytes are, compressed or not; false if unusable. */
static bool section_source(Elf_Scn *scn, const GElf_Shdr *sh, struct lsec *s)
{
	Elf_Data *raw = elf_rawdata(scn, NULL);

	if (!raw || !raw->d_buf || raw->d_size != sh->sh_size)
		return false;
	s->src = raw->d_buf;
	s->src_len = raw->d_size;
	s->size = raw->d_size;
	s->compressed = (sh->sh_flags & SHF_COMPRESSED) != 0;
	if (s->compressed) {
		Elf64_Chdr ch;
		if (s->src_len < sizeof(ch))
			return false;
		memcpy(&ch, s->src, sizeof(ch));
		if (ch.ch_type != ELFCOMPRESS_ZLIB)
			return false;
		s->src += sizeof(ch);
		s->src_len -= sizeof(ch);
		/* deflate cannot expand more than 1032:1: a larger claimed size
		 * is a damaged header (and would be allocated whole) */
		if (ch.ch_size / 1032 > s->src_len + 1)
			return false;
		s->size = ch.ch_size;
	}
	return true;
}

static bool is_native_elf64(Elf *e)
{
	const char *id = elf_getident(e, NULL);

	/* The image is written, and read back by rd_fixed(), little-endian. */
	return __BYTE_ORDER == __LITTLE_ENDIAN && id &&
	       id[EI_CLASS] == ELFCLASS64 && id[EI_DATA] == ELFDATA2LSB;
}

struct lazydw *lazydw_open(Elf *e)
{
	struct lsec aranges = { .name = ".debug_aranges" };
	struct lazydw *l;
	bool zinfo = false, unhandled = false, have_ar = false;
	size_t shstrndx, nsec = 0, strsz = 1, off;
	Elf_Scn *scn = NULL;
	GElf_Ehdr eh;
	Elf64_Ehdr *ehdr;
	Elf64_Shdr *shdr;
	char *strtab;

	if (!sym_lazy_dwarf || !is_native_elf64(e) || !gelf_getehdr(e, &eh) ||
	    elf_getshdrstrndx(e, &shstrndx) != 0)
		return NULL;
	l = xcalloc(1, sizeof(*l));
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		const char *name;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS ||
		    (sh.sh_flags & SHF_GROUP) ||
		    !(name = elf_strptr(e, shstrndx, sh.sh_name)))
			continue;
		/* Type units of DWARF 4, GNU-style compression: libdw alone. */
		if (!strcmp(name, ".debug_types") || !strncmp(name, ".zdebug", 7))
			unhandled = true;
		if (!strcmp(name, ".debug_aranges") && !aranges.src)
			have_ar = section_source(scn, &sh, &aranges);
		for (size_t i = 0; i < NKNOWN; i++) {
			struct lsec *s = &l->sec[i];
			if (strcmp(name, known[i].name) || s->src)
				continue;
			if (!section_source(scn, &sh, s)) {
				/* libdw would not read it either. */
				memset(s, 0, sizeof(*s));
				break;
			}
			s->name = known[i].name;
			s->kind = known[i].kind;
			if (s->kind == INFO)
				zinfo = s->compressed;
			if (s->size) {
				nsec++;
				strsz += strlen(s->name) + 1;
			}
		}
	}
	/* Plain sections are mmap'ed already: nothing to gain. */
	if (!zinfo || unhandled || !l->sec[0].size) {
		free(l);
		return NULL;
	}

	/* Ehdr, Shdrs (null, ours, .shstrtab), names, then each section on
	 * its own pages. */
	off = sizeof(Elf64_Ehdr) + (nsec + 2) * sizeof(Elf64_Shdr) + strsz;
	for (size_t i = 0; i < NKNOWN; i++) {
		struct lsec *s = &l->sec[i];
		off = (off + 4095) & ~(size_t)4095;
		s->done = 0;
		s->dst = (unsigned char *)(uintptr_t)off;   /* offset for now */
		off += s->size;
	}
	l->image_len = off;
	l->image = mmap(NULL, off, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (l->image == MAP_FAILED) {
		free(l);
		return NULL;
	}
	ehdr = (Elf64_Ehdr *)l->image;
	memcpy(ehdr->e_ident, ELFMAG, SELFMAG);
	ehdr->e_ident[EI_CLASS] = ELFCLASS64;
	ehdr->e_ident[EI_DATA] = ELFDATA2LSB;
	ehdr->e_ident[EI_VERSION] = EV_CURRENT;
	ehdr->e_ident[EI_OSABI] = eh.e_ident[EI_OSABI];
	ehdr->e_type = eh.e_type;
	ehdr->e_machine = eh.e_machine;
	ehdr->e_version = EV_CURRENT;
	ehdr->e_ehsize = sizeof(Elf64_Ehdr);
	ehdr->e_shentsize = sizeof(Elf64_Shdr);
	ehdr->e_shoff = sizeof(Elf64_Ehdr);
	ehdr->e_shnum = (Elf64_Half)(nsec + 2);
	ehdr->e_shstrndx = (Elf64_Half)(nsec + 1);
	shdr = (Elf64_Shdr *)(l->image + sizeof(Elf64_Ehdr));
	strtab = (char *)(shdr + nsec + 2);
	strsz = 1;
	for (size_t i = 0, k = 1; i < NKNOWN; i++) {
		struct lsec *s = &l->sec[i];
		size_t at = (size_t)(uintptr_t)s->dst;
		s->dst = l->image + at;
		if (!s->size)
			continue;
		shdr[k].sh_name = (Elf64_Word)strsz;
		strcpy(strtab + strsz, s->name);
		strsz += strlen(s->name) + 1;
		shdr[k].sh_type = SHT_PROGBITS;
		shdr[k].sh_offset = at;
		shdr[k].sh_size = s->size;
		shdr[k].sh_addralign = 1;
		k++;
	}
	shdr[nsec + 1].sh_name = (Elf64_Word)strsz;
	strcpy(strtab + strsz, ".shstrtab");
	shdr[nsec + 1].sh_type = SHT_STRTAB;
	shdr[nsec + 1].sh_offset = (char *)strtab - (char *)l->image;
	shdr[nsec + 1].sh_size = strsz + sizeof(".shstrtab");
	shdr[nsec + 1].sh_addralign = 1;
	for (size_t i = 0; i < NKNOWN; i++) {
		if (l->sec[i].kind == INFO && l->sec[i].size)
			l->info = &l->sec[i];
		if (l->sec[i].kind == ABBREV && l->sec[i].size)
			l->abbrev = &l->sec[i];
		if (l->sec[i].kind == LINE && l->sec[i].size)
			l->line = &l->sec[i];
	}

	l->elf = elf_memory((char *)l->image, l->image_len);
	/* libdw must read our pages, not a copy made before they are filled. */
	scn = NULL;
	for (size_t k = 1; l->elf && (scn = elf_nextscn(l->elf, scn)); k++) {
		Elf_Data *d = elf_getdata(scn, NULL);
		if (k <= nsec && (!d || d->d_buf != l->image + shdr[k].sh_offset)) {
			pr_debug("symbols: libelf copies section data; "
				 "inflating all DWARF at once");
			goto fail;
		}
	}
	for (size_t i = 0; i < NKNOWN; i++) {
		if (l->sec[i].kind == AT_OPEN && !fill(&l->sec[i], l->sec[i].size))
			goto fail;
	}
	if (!l->elf || !(l->dw = dwarf_begin_elf(l->elf, DWARF_C_READ, NULL)))
		goto fail;
	if (have_ar)
		parse_aranges(l, &aranges);
	if (aranges.zinit)
		inflateEnd(&aranges.zs);
	free(aranges.dst);
	return l;
fail:
	if (aranges.zinit)
		inflateEnd(&aranges.zs);
	lazydw_free(l);
	return NULL;
}

Dwarf *lazydw_dwarf(struct lazydw *l)
{
	return l->dw;
}

size_t lazydw_aranges(struct lazydw *l, const struct sym_arange **v,
		      const uint64_t **units, size_t *nunits)
{
	*v = l->ar;
	*units = l->units;
	*nunits = l->nunits;
	return l->nar;
}

bool lazydw_need_all(struct lazydw *l)
{
	if (!l->all_ready && !l->broken) {
		l->all_ready = fill_all(l, false);
		l->broken = !l->all_ready;
	}
	return l->all_ready;
}

int lazydw_need_cu(struct lazydw *l, uint64_t cu_off, Dwarf_Die *cudie)
{
	struct unit_hdr h;
	Dwarf_Attribute a;
	Dwarf_Word stmt;
	Dwarf_Off next;
	size_t hsize;
	bool cross;

	if (l->broken || !l->info || cu_off >= l->info->size)
		return -1;
	if (!l->whole_ready && !(l->whole_ready = fill_all(l, true)))
		goto broken;
	/* Every unit up to this one: their headers, and for DWARF < 5 their
	 * root DIEs, are read by libdw on its way to this one. */
	while (!l->all_ready && l->walked <= cu_off) {
		/* Damaged: libdw cannot get past it either. */
		if (!read_unit(l, l->walked, &h) ||
		    (h.version < 5 && !need_abbrevs(l, h.abbrev, &cross)))
			return -1;
		l->walked = h.end;
	}
	if (!l->all_ready) {
		if (!read_unit(l, cu_off, &h) ||
		    !need_abbrevs(l, h.abbrev, &cross))
			return -1;
		if (cross && !lazydw_need_all(l))
			return -1;
	}
	if (dwarf_next_unit(l->dw, cu_off, &next, &hsize, NULL, NULL, NULL,
			    NULL, NULL, NULL) != 0 ||
	    !dwarf_offdie(l->dw, cu_off + hsize, cudie) ||
	    dwarf_tag(cudie) != DW_TAG_compile_unit)
		return -1;
	if (!l->all_ready && l->line &&
	    dwarf_formudata(dwarf_attr(cudie, DW_AT_stmt_list, &a), &stmt) == 0) {
		struct rd r = { .s = l->line, .pos = stmt };
		uint64_t len = rd_fixed(&r, 4);
		if (len == 0xffffffff)
			len = rd_fixed(&r, 8);
		/* A damaged length: the rest of the section, libdw checks. */
		if (r.bad || len > l->line->size - r.pos)
			len = l->line->size - (r.bad ? 0 : r.pos);
		if (!fill(l->line, r.pos + len))
			return -1;
	}
	return 0;
broken:
	l->broken = true;
	return -1;
}

void lazydw_free(struct lazydw *l)
{
	if (!l)
		return;
	pr_debug("symbols: inflated %zu of %zu KB of .debug_info, %zu of %zu KB "
		 "of .debug_abbrev, %zu of %zu KB of .debug_line",
		 l->info ? l->info->done >> 10 : 0, l->info ? l->info->size >> 10 : 0,
		 l->abbrev ? l->abbrev->done >> 10 : 0, l->abbrev ? l->abbrev->size >> 10 : 0,
		 l->line ? l->line->done >> 10 : 0, l->line ? l->line->size >> 10 : 0);
	if (l->dw)
		dwarf_end(l->dw);
	if (l->elf)
		elf_end(l->elf);
	for (size_t i = 0; i < NKNOWN; i++) {
		if (l->sec[i].zinit)
			inflateEnd(&l->sec[i].zs);
	}
	if (l->image)
		munmap(l->image, l->image_len);
	free(l->ar);
	free(l->units);
	free(l);
}
