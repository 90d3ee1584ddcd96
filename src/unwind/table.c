/*
 * table — one ELF object's call-frame information as sorted, compact rows
 * (see unwind.h).
 *
 * elfutils interprets the CFA programs (dwarf_cfi_addrframe gives the frame
 * state at one pc and the [start, end) range it holds for), but it has no
 * iterator over all rows, so the FDEs are enumerated here with
 * dwarf_next_cfi and their initial locations decoded (.eh_frame encodes
 * them relative to the field, per the CIE's 'R' augmentation).  .eh_frame
 * wins where both sections describe a pc; .debug_frame fills the ranges
 * .eh_frame lacks (objects built with -fno-asynchronous-unwind-tables -g
 * still get .eh_frame FDEs for crt code only).
 *
 * Building is two-level: opening a table only indexes its FDEs (cheap);
 * an FDE's rows are built the first time a pc inside it is looked up, and
 * kept.  A profile touches a few hundred functions of a big binary (cc1plus
 * has half a million rows), so the cost follows the code that runs.
 */
#include "unwind/unwind.h"
#include "unwind/unwind_int.h"
#include "util/util.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DWARF_REG_RBX 3
#define DWARF_REG_RBP 6
#define DWARF_REG_RSP 7
#define DWARF_REG_R12 12
#define DWARF_REG_R15 15
#define DWARF_REG_RIP 16

/* The DWARF numbers of enum unw_reg's registers. */
static const unsigned dwarf_of_reg[UNW_NREGS] = {
	[UNW_REG_RBX] = DWARF_REG_RBX,
	[UNW_REG_R12] = DWARF_REG_R12, [UNW_REG_R13] = DWARF_REG_R12 + 1,
	[UNW_REG_R14] = DWARF_REG_R12 + 2, [UNW_REG_R15] = DWARF_REG_R15,
};

/* The enum unw_reg of DWARF register dw, or -1 if it is not tracked. */
static int reg_of_dwarf(unsigned dw)
{
	if (dw == DWARF_REG_RBX)
		return UNW_REG_RBX;
	if (dw >= DWARF_REG_R12 && dw <= DWARF_REG_R15)
		return UNW_REG_R12 + (int)(dw - DWARF_REG_R12);
	return -1;
}

/* ---- decoding FDE addresses ------------------------------------------ */

/* One LEB128 number at *p (sign-extended if is_signed); false if cut short. */
static bool read_leb128(const uint8_t **p, const uint8_t *end, bool is_signed,
			uint64_t *v)
{
	uint64_t x = 0;
	unsigned shift = 0;

	while (*p < end) {
		uint8_t c = *(*p)++;
		if (shift < 64)
			x |= (uint64_t)(c & 0x7f) << shift;
		shift += 7;
		if (!(c & 0x80)) {
			if (is_signed && shift < 64 && (c & 0x40))
				x |= ~(uint64_t)0 << shift;
			*v = x;
			return true;
		}
	}
	return false;
}

/*
 * Decode one DW_EH_PE-encoded value at *p.  field_addr is the virtual
 * address of *p (for pc-relative values); apply=false decodes the bare
 * value (address ranges).  Indirect and text/func-relative encodings do not
 * occur on x86-64 FDEs; they are refused.
 */
static bool read_encoded(const uint8_t **p, const uint8_t *end, uint8_t enc,
			 uint64_t field_addr, bool apply, uint64_t *out)
{
	const uint8_t *q = *p;
	uint64_t v;
	size_t n;

	if (enc == DW_EH_PE_omit)
		return false;
	switch (enc & 0x0f) {
	case DW_EH_PE_absptr: n = 8; break;
	case DW_EH_PE_udata2: case DW_EH_PE_sdata2: n = 2; break;
	case DW_EH_PE_udata4: case DW_EH_PE_sdata4: n = 4; break;
	case DW_EH_PE_udata8: case DW_EH_PE_sdata8: n = 8; break;
	case DW_EH_PE_uleb128:
	case DW_EH_PE_sleb128:
		if (!read_leb128(&q, end, (enc & 0x0f) == DW_EH_PE_sleb128, &v))
			return false;
		n = 0;
		break;
	default:
		return false;
	}
	if (n) {
		if ((size_t)(end - q) < n)
			return false;
		v = 0;
		memcpy(&v, q, n);         /* little-endian host and file */
		if (n < 8 && (enc & 0x08)) {      /* signed: extend */
			unsigned bits = 8 * n;
			if (v & ((uint64_t)1 << (bits - 1)))
				v |= ~(uint64_t)0 << bits;
		}
		q += n;
	}
	if (apply) {
		switch (enc & 0x70) {
		case DW_EH_PE_absptr:
			break;
		case DW_EH_PE_pcrel:
			v += field_addr;
			break;
		default:
			return false;
		}
		if (enc & DW_EH_PE_indirect)
			return false;
	}
	*p = q;
	*out = v;
	return true;
}

/* The FDE pointer encoding a CIE announces with its 'R' augmentation. */
static uint8_t cie_fde_encoding(const Dwarf_CIE *cie, bool eh_frame)
{
	const uint8_t *p = cie->augmentation_data;
	const uint8_t *end = p ? p + cie->augmentation_data_size : NULL;
	const char *a = cie->augmentation;

	if (!eh_frame || !a || a[0] != 'z' || !p)
		return DW_EH_PE_absptr;
	for (a++; *a && p < end; a++) {
		switch (*a) {
		case 'R':
			return *p;
		case 'L':
			p++;
			break;
		case 'P': {
			uint8_t enc = *p++;
			uint64_t dummy;
			/* The personality pointer's size follows from its
			 * encoding; its value does not matter here. */
			if (!read_encoded(&p, end, enc & 0x0f, 0, false, &dummy))
				return DW_EH_PE_omit;
			break;
		}
		case 'S': case 'B': case 'G':
			break;
		default:
			return DW_EH_PE_omit;
		}
	}
	return DW_EH_PE_absptr;
}

struct cie_enc {
	Dwarf_Off off;
	uint8_t enc;
	bool z;                       /* FDEs carry sized augmentation data */
	bool entry_std;               /* initial rule: CFA = rsp+8, return
					 address at CFA-8, nothing else */
};

/*
 * Is the CIE's initial state that of a function just called, in the exact
 * bytes compilers and assemblers emit for it on x86-64
 * (DW_CFA_def_cfa rsp+8; DW_CFA_offset rip, 1 * -8; then padding)?
 * Anything else (signal frames, PLT rules) is left to libdw.
 */
static bool cie_entry_standard(const Dwarf_CIE *cie)
{
	static const uint8_t std_init[] = { DW_CFA_def_cfa, DWARF_REG_RSP, 8,
					    DW_CFA_offset | DWARF_REG_RIP, 1 };
	const uint8_t *p = cie->initial_instructions;
	size_t n = (size_t)(cie->initial_instructions_end - p);

	if (cie->code_alignment_factor != 1 || cie->data_alignment_factor != -8 ||
	    cie->return_address_register != DWARF_REG_RIP || !p ||
	    n < sizeof(std_init) || memcmp(p, std_init, sizeof(std_init)) ||
	    (cie->augmentation && strchr(cie->augmentation, 'S')))
		return false;
	for (size_t i = sizeof(std_init); i < n; i++)
		if (p[i] != DW_CFA_nop)
			return false;
	return true;
}

/*
 * Does the FDE's program (at p, after its address range) leave the CIE's
 * rule in force at its first byte: no instruction before the first
 * advance?
 */
static bool fde_keeps_initial(const uint8_t *p, const uint8_t *end, bool z)
{
	uint64_t auglen;

	if (z && (!read_leb128(&p, end, false, &auglen) ||
		  auglen > (uint64_t)(end - p)))
		return false;
	if (z)
		p += auglen;
	while (p < end && *p == DW_CFA_nop)
		p++;
	if (p == end)
		return true;
	if ((*p & 0xc0) == DW_CFA_advance_loc)
		return (*p & 0x3f) != 0;
	return *p == DW_CFA_advance_loc1 || *p == DW_CFA_advance_loc2 ||
	       *p == DW_CFA_advance_loc4;
}

static int cmp_cie(const void *a, const void *b)
{
	const struct cie_enc *x = a, *y = b;
	return x->off < y->off ? -1 : x->off > y->off;
}

/* ---- frame state -> row ---------------------------------------------- */

/* reg + off, as DW_OP_bregN or DW_OP_bregx (libdw's CFA form). */
static bool breg_any(const Dwarf_Op *op, unsigned *reg, int64_t *off)
{
	if (op->atom >= DW_OP_breg0 && op->atom <= DW_OP_breg31) {
		*reg = op->atom - DW_OP_breg0;
		*off = (int64_t)op->number;
	} else if (op->atom == DW_OP_bregx) {
		*reg = (unsigned)op->number;
		*off = (int64_t)op->number2;
	} else {
		return false;
	}
	return true;
}

/* rsp + off or rbp + off: the bases a saved register's slot may have. */
static bool breg(const Dwarf_Op *op, unsigned *reg, int64_t *off)
{
	return breg_any(op, reg, off) && (*reg == DWARF_REG_RSP || *reg == DWARF_REG_RBP);
}

/*
 * The CFA's base: rsp, rbp, or a tracked callee-saved register (its enum
 * unw_reg in *tracked); false for any other register.
 */
static bool cfa_base(const Dwarf_Op *op, unsigned *reg, int *tracked, int64_t *off)
{
	if (!breg_any(op, reg, off))
		return false;
	*tracked = reg_of_dwarf(*reg);
	return *reg == DWARF_REG_RSP || *reg == DWARF_REG_RBP || *tracked >= 0;
}

/* A location rule [DW_OP_call_frame_cfa (, DW_OP_plus_uconst N)] or [bregN]. */
static bool loc_rule(Dwarf_Op *ops, size_t nops, uint8_t *kind, int64_t *off)
{
	unsigned reg;

	if (nops == 0) {
		*kind = ops ? UNW_LOC_UNDEF : UNW_LOC_SAME;
		*off = 0;
		return true;
	}
	if (ops[0].atom == DW_OP_call_frame_cfa) {
		if (nops == 1) {
			*kind = UNW_LOC_CFA;
			*off = 0;
			return true;
		}
		if (nops == 2 && ops[1].atom == DW_OP_plus_uconst) {
			*kind = UNW_LOC_CFA;
			*off = (int64_t)ops[1].number;
			return true;
		}
		/* An expression rule: libdw pushes the CFA first, the
		 * expression's own result is what counts. */
		if (nops == 2 && breg(&ops[1], &reg, off)) {
			*kind = reg == DWARF_REG_RSP ? UNW_LOC_RSP : UNW_LOC_RBP;
			return true;
		}
		return false;
	}
	if (nops == 1 && breg(&ops[0], &reg, off)) {
		*kind = reg == DWARF_REG_RSP ? UNW_LOC_RSP : UNW_LOC_RBP;
		return true;
	}
	return false;
}

/*
 * The CFA rule of the .plt entries gcc/binutils emit:
 *   rsp + N + (((rip & 15) >= K) << 3)
 * (after the entry's push, rsp has moved by 8).
 */
static bool plt_rule(Dwarf_Op *ops, size_t nops, int64_t *off, unsigned *k)
{
	static const uint8_t shape[] = {
		DW_OP_breg0 + DWARF_REG_RSP, DW_OP_breg0 + DWARF_REG_RIP,
		DW_OP_lit15, DW_OP_and, 0 /* litK */, DW_OP_ge, DW_OP_lit3,
		DW_OP_shl, DW_OP_plus,
	};

	if (nops != sizeof(shape))
		return false;
	for (size_t i = 0; i < nops; i++)
		if (i != 4 && ops[i].atom != shape[i])
			return false;
	if (ops[4].atom < DW_OP_lit0 || ops[4].atom > DW_OP_lit15 || ops[1].number != 0)
		return false;
	*off = (int64_t)ops[0].number;
	*k = ops[4].atom - DW_OP_lit0;
	return true;
}

static bool fits16(int64_t v) { return v >= INT16_MIN && v <= INT16_MAX; }
static bool fits32(int64_t v) { return v >= INT32_MIN && v <= INT32_MAX; }

/* Translate a frame state; false if a rule cannot be expressed. */
static bool frame_to_row(Dwarf_Frame *f, bool signal, struct unw_row *r)
{
	Dwarf_Op mem[3], *ops;
	size_t nops;
	int64_t off;
	uint8_t kind;
	unsigned k, reg;
	int tracked;

	memset(r, 0, sizeof(*r));
	if (signal)
		r->aux |= UNW_ROW_SIGNAL;

	if (dwarf_frame_register(f, DWARF_REG_RIP, mem, &ops, &nops) < 0 ||
	    !loc_rule(ops, nops, &kind, &off) || kind == UNW_LOC_SAME ||
	    kind == UNW_LOC_RBP || !fits16(off))
		return false;
	r->ra = kind;
	r->ra_off = (int16_t)off;

	if (dwarf_frame_cfa(f, &ops, &nops) < 0)
		return false;
	if ((nops == 1 || (nops == 2 && ops[1].atom == DW_OP_deref)) &&
	    cfa_base(&ops[0], &reg, &tracked, &off)) {
		bool deref = nops == 2;

		if (tracked >= 0) {
			r->cfa = deref ? UNW_CFA_REG_DEREF : UNW_CFA_REG;
			r->cfa_reg = (uint8_t)tracked;
		} else if (reg == DWARF_REG_RSP) {
			r->cfa = deref ? UNW_CFA_RSP_DEREF : UNW_CFA_RSP;
		} else {
			r->cfa = deref ? UNW_CFA_RBP_DEREF : UNW_CFA_RBP;
		}
	} else if (plt_rule(ops, nops, &off, &k)) {
		r->cfa = UNW_CFA_PLT;
		r->aux |= (uint8_t)(k << 4);
	} else if (r->ra == UNW_LOC_UNDEF) {
		/* The outermost frame: its CFA does not matter. */
		r->cfa = UNW_CFA_RSP;
		off = 0;
	} else {
		return false;
	}
	if (!fits32(off))
		return false;
	r->cfa_off = (int32_t)off;

	/* rbp: callee-saved, so a missing rule means "same value". */
	if (dwarf_frame_register(f, DWARF_REG_RBP, mem, &ops, &nops) < 0 ||
	    !loc_rule(ops, nops, &kind, &off) || !fits16(off)) {
		kind = UNW_LOC_UNDEF;
		off = 0;
	}
	r->rbp = kind;
	r->rbp_off = (int16_t)off;

	/*
	 * The other callee-saved registers, alike; a rule that the row
	 * cannot hold makes the caller's value unknown, never wrong.
	 * "Undefined" is taken as "same value": libdw's x86-64 defaults
	 * (backends/x86_64_cfi.c) mark register 0, rax, same-value under
	 * the comment %rbx, so an rbx no FDE mentions comes back undefined;
	 * and no compiler or glibc CFI marks a callee-saved register
	 * undefined (only the return address, in root frames).
	 */
	for (unsigned i = 0; i < UNW_NREGS; i++) {
		if (dwarf_frame_register(f, (int)dwarf_of_reg[i], mem, &ops, &nops) < 0 ||
		    !loc_rule(ops, nops, &kind, &off) || (off & 7) ||
		    off / 8 < INT8_MIN || off / 8 > INT8_MAX) {
			kind = UNW_LOC_UNDEF;
			off = 0;
		} else if (kind == UNW_LOC_UNDEF) {
			kind = UNW_LOC_SAME;
		}
		r->reg_loc |= (uint16_t)(kind << (3 * i));
		r->reg_off8[i] = (int8_t)(off / 8);
	}
	return true;
}

/*
 * The row at vaddr of FDE fde, from libdw (which runs the FDE's program up
 * to vaddr), into *r; false if libdw fails.
 */
/* The [start, end) libdw gives for the row at vaddr; false if it fails. */
static bool row_range(Dwarf_CFI *cfi, uint64_t vaddr, Dwarf_Addr *s, Dwarf_Addr *e)
{
	Dwarf_Frame *f = NULL;
	bool signal, ok;

	if (dwarf_cfi_addrframe(cfi, vaddr, &f) < 0)
		return false;
	ok = dwarf_frame_info(f, s, e, &signal) >= 0;
	free(f);
	return ok;
}

static bool compute_row(struct unw_table *t, const struct unw_fde *fde,
			uint64_t vaddr, struct unw_row *r)
{
	Dwarf_CFI *cfi = fde->debug_frame ? t->debug_cfi : t->eh_cfi;
	Dwarf_Frame *f = NULL;
	Dwarf_Addr s, e, s2, e2;
	bool signal = false, ok;

	if (!cfi || dwarf_cfi_addrframe(cfi, vaddr, &f) < 0)
		return false;
	if (dwarf_frame_info(f, &s, &e, &signal) < 0 || e <= vaddr || s > vaddr) {
		free(f);
		return false;
	}
	ok = frame_to_row(f, signal, r);
	free(f);
	/*
	 * After DW_CFA_restore_state libdw reports the start of the row that
	 * was remembered, not of this one (the epilogue between them has
	 * other rules).  A start is kept only if libdw, asked at it, gives
	 * the same row back.
	 */
	if (s < vaddr && (!row_range(cfi, s, &s2, &e2) || e2 != e))
		s = vaddr;
	if (!ok) {
		memset(r, 0, sizeof(*r));      /* UNW_CFA_NONE */
		t->unsupported++;
	}
	/* Within the FDE, and within what 32-bit offsets can say. */
	if (s < fde->lo)
		s = fde->lo;
	if (e > fde->hi)
		e = fde->hi;
	r->start = (uint32_t)(s - t->base);
	r->end = (uint32_t)(e - t->base);
	return true;
}

static Elf_Scn *find_section(Elf *elf, const char *name, GElf_Shdr *shdr)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;

	if (elf_getshdrstrndx(elf, &shstrndx) < 0)
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *n;
		if (!gelf_getshdr(scn, shdr) || shdr->sh_type == SHT_NOBITS)
			continue;
		n = elf_strptr(elf, shstrndx, shdr->sh_name);
		if (n && !strcmp(n, name))
			return scn;
	}
	return NULL;
}

/* Does [lo, hi) overlap one of the first n FDEs (sorted by lo)? */
static bool overlaps(const struct unw_fde *fdes, size_t n, uint64_t lo, uint64_t hi)
{
	size_t l = 0, h = n;

	/* the first with hi > lo */
	while (l < h) {
		size_t m = (l + h) / 2;
		if (fdes[m].hi <= lo)
			l = m + 1;
		else
			h = m;
	}
	return l < n && fdes[l].lo < hi;
}

static int cmp_fde(const void *a, const void *b)
{
	const struct unw_fde *x = a, *y = b;

	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	return x->debug_frame - y->debug_frame;
}

/*
 * The CFI entry at *off, or the next well-formed one after damage (*off
 * moves to it); false at the end of the section or when damage leaves no
 * way forward.  *next is where the entry after it starts.
 */
static bool next_cfi_entry(const unsigned char *ident, Elf_Data *data, bool eh_frame,
			   Dwarf_Off *off, Dwarf_Off *next, Dwarf_CFI_Entry *ent)
{
	while (*off != (Dwarf_Off)-1) {
		int rc = dwarf_next_cfi(ident, data, eh_frame, *off, next, ent);

		if (rc == 0)
			return true;
		if (rc > 0 || *next == (Dwarf_Off)-1 || *next <= *off)
			return false;
		*off = *next;
	}
	return false;
}

/*
 * Index the FDEs of one CFI section.  .eh_frame is scanned first; a
 * .debug_frame FDE that overlaps one of its FDEs (neh of them, sorted) is
 * left out.
 */
static void scan_section(struct unw_table *t, Elf *elf, const char *name,
			 bool eh_frame, size_t neh)
{
	const unsigned char *ident = (const unsigned char *)elf_getident(elf, NULL);
	struct cie_enc *cies = NULL;
	size_t ncies = 0, cie_alloc = 0;
	GElf_Shdr shdr;
	Elf_Scn *scn = find_section(elf, name, &shdr);
	Elf_Data *data;
	Dwarf_Off off, next;
	Dwarf_CFI_Entry ent;

	if (!scn || !ident)
		return;
	if ((shdr.sh_flags & SHF_COMPRESSED) && elf_compress(scn, 0, 0) < 0)
		return;
	data = elf_getdata(scn, NULL);
	if (!data || !data->d_buf || !data->d_size)
		return;

	/* Pass 1: the CIEs' pointer encodings. */
	for (off = 0; next_cfi_entry(ident, data, eh_frame, &off, &next, &ent); off = next) {
		if (dwarf_cfi_cie_p(&ent)) {
			ALLOC_GROW(cies, ncies + 1, cie_alloc);
			cies[ncies].off = off;
			cies[ncies].z = ent.cie.augmentation &&
					ent.cie.augmentation[0] == 'z';
			cies[ncies].entry_std = cie_entry_standard(&ent.cie);
			cies[ncies++].enc = cie_fde_encoding(&ent.cie, eh_frame);
		}
	}
	if (ncies > 1)
		qsort(cies, ncies, sizeof(*cies), cmp_cie);

	/* Pass 2: the FDEs. */
	for (off = 0; next_cfi_entry(ident, data, eh_frame, &off, &next, &ent); off = next) {
		struct cie_enc key, *c;
		const uint8_t *p, *end;
		uint64_t lo, len;
		uint8_t enc;

		if (dwarf_cfi_cie_p(&ent))
			continue;
		key.off = ent.fde.CIE_pointer;
		c = ncies ? bsearch(&key, cies, ncies, sizeof(*cies), cmp_cie) : NULL;
		if (!c)
			continue;
		enc = eh_frame ? c->enc : DW_EH_PE_absptr;
		p = ent.fde.start;
		end = ent.fde.end;
		if (!read_encoded(&p, end, enc,
				  shdr.sh_addr + (uint64_t)(p - (const uint8_t *)data->d_buf),
				  true, &lo) ||
		    !read_encoded(&p, end, enc & 0x0f, 0, false, &len) ||
		    len == 0 || lo + len < lo)
			continue;
		if (!eh_frame && overlaps(t->fdes, neh, lo, lo + len))
			continue;
		ALLOC_GROW(t->fdes, t->nfdes + 1, t->fdes_alloc);
		t->fdes[t->nfdes++] = (struct unw_fde){
			.lo = lo, .hi = lo + len, .debug_frame = !eh_frame,
			.entry_std = c->entry_std && fde_keeps_initial(p, end, c->z),
		};
	}
	free(cies);
}

/* ---- the table ------------------------------------------------------- */

/* Sort the index and drop FDEs overlapping an earlier one. */
static int finish_index(struct unw_table *t)
{
	size_t n = 0;

	if (t->nfdes > 1)
		qsort(t->fdes, t->nfdes, sizeof(*t->fdes), cmp_fde);
	for (size_t i = 0; i < t->nfdes; i++) {
		if (n && t->fdes[i].lo < t->fdes[n - 1].hi)
			continue;
		if (t->fdes[i].hi - t->fdes[0].lo > UINT32_MAX)
			break;                       /* not one object: stop here */
		t->fdes[n++] = t->fdes[i];
	}
	t->nfdes = n;
	t->base = n ? t->fdes[0].lo : 0;
	return n ? 0 : -ENODATA;
}

/*
 * The outermost functions of a thread's stack.  Go's (statically linked,
 * its own clone) are those its linker marks TOPFRAME, where Go's own
 * tracebacks stop and whose CFI (Go 1.19) does not end the chain: a
 * goroutine's stack starts at goexit, the main thread's at rt0_go (jumped
 * to: what lies above it is no return address), every other thread's at
 * runtime.clone, which calls mstart (".abi0": the assembly ABI's name).
 */
static const char *const root_names[] = {
	"_start", "__clone", "clone", "__clone3", "clone3", "thread_start",
	"runtime.goexit.abi0", "runtime.rt0_go.abi0", "runtime.mstart.abi0",
	"runtime.clone.abi0", "runtime.goexit", "runtime.rt0_go", "runtime.mstart", "runtime.clone",
};

static void scan_roots(struct unw_table *t, Elf *elf)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr shdr;

	while ((scn = elf_nextscn(elf, scn))) {
		Elf_Data *data;
		size_t count;

		if (!gelf_getshdr(scn, &shdr) ||
		    (shdr.sh_type != SHT_SYMTAB && shdr.sh_type != SHT_DYNSYM) ||
		    !shdr.sh_entsize)
			continue;
		data = elf_getdata(scn, NULL);
		if (!data)
			continue;
		count = shdr.sh_size / shdr.sh_entsize;
		for (size_t i = 0; i < count; i++) {
			GElf_Sym sym;
			const char *name;

			if (!gelf_getsym(data, (int)i, &sym) ||
			    GELF_ST_TYPE(sym.st_info) != STT_FUNC || !sym.st_value)
				continue;
			name = elf_strptr(elf, shdr.sh_link, sym.st_name);
			if (!name)
				continue;
			for (size_t j = 0; j < ARRAY_SIZE(root_names); j++) {
				if (strcmp(name, root_names[j]))
					continue;
				ALLOC_GROW(t->roots, t->nroots + 1, t->roots_alloc);
				t->roots[t->nroots].lo = sym.st_value;
				t->roots[t->nroots].hi = sym.st_value + (sym.st_size ? sym.st_size : 1);
				t->nroots++;
				break;
			}
		}
	}
}

static size_t elf_build_id(Elf *elf, uint8_t *id, size_t max)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr shdr;

	while ((scn = elf_nextscn(elf, scn))) {
		Elf_Data *data;
		GElf_Nhdr nh;
		size_t off = 0, name_off, desc_off;

		if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != SHT_NOTE)
			continue;
		data = elf_getdata(scn, NULL);
		if (!data)
			continue;
		while ((off = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0) {
			if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
			    !memcmp((char *)data->d_buf + name_off, "GNU", 4) &&
			    nh.n_descsz > 0 && nh.n_descsz <= max) {
				memcpy(id, (char *)data->d_buf + desc_off, nh.n_descsz);
				return nh.n_descsz;
			}
		}
	}
	return 0;
}

size_t unw_read_build_id(const char *path, uint8_t *id, size_t max)
{
	Elf *elf;
	size_t n = 0;
	int fd;

	elf_version(EV_CURRENT);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (elf && elf_kind(elf) == ELF_K_ELF)
		n = elf_build_id(elf, id, max);
	elf_end(elf);
	close(fd);
	return n;
}

static int scan_segments(struct unw_table *t, Elf *elf)
{
	size_t phnum;

	if (elf_getphdrnum(elf, &phnum) < 0)
		return -ENOEXEC;
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		ALLOC_GROW(t->segs, t->nsegs + 1, t->segs_alloc);
		t->segs[t->nsegs].offset = ph.p_offset;
		t->segs[t->nsegs].filesz = ph.p_filesz;
		t->segs[t->nsegs].vaddr = ph.p_vaddr;
		t->segs[t->nsegs].align = ph.p_align > 1 ? ph.p_align : 1;
		t->segs[t->nsegs].exec = ph.p_flags & PF_X;
		t->nsegs++;
	}
	return 0;
}

/*
 * The entry point is a root too: the dynamic linker's _start and
 * _dl_start_user carry no CFI at all.  Its range runs to the end of its
 * FDE, or to the start of the next FDE.
 */
static void add_entry_root(struct unw_table *t, uint64_t entry)
{
	uint64_t hi = entry + 4096;

	if (!entry)
		return;
	for (size_t i = 0; i < t->nfdes; i++) {
		if (t->fdes[i].lo > entry) {
			hi = t->fdes[i].lo < hi ? t->fdes[i].lo : hi;
			break;
		}
		if (entry < t->fdes[i].hi) {
			hi = t->fdes[i].hi;
			break;
		}
	}
	ALLOC_GROW(t->roots, t->nroots + 1, t->roots_alloc);
	t->roots[t->nroots].lo = entry;
	t->roots[t->nroots].hi = hi;
	t->nroots++;
}

/*
 * Index the object's FDEs.  The table takes elf (and fd, image) over: it
 * keeps them open to build rows later, and releases them when freed, or
 * here on failure.
 */
static int build_from_elf(Elf *elf, int fd, char *image, struct unw_table **out)
{
	struct unw_table *t = xcalloc(1, sizeof(*t));
	GElf_Ehdr eh;
	GElf_Shdr shdr;
	size_t neh;
	int ret;

	t->elf = elf;
	t->fd = fd;
	t->image = image;
	if (elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &eh) ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_machine != EM_X86_64) {
		ret = -ENOEXEC;
		goto fail;
	}
	ret = scan_segments(t, elf);
	if (ret)
		goto fail;
	t->build_id_len = elf_build_id(elf, t->build_id, sizeof(t->build_id));
	scan_roots(t, elf);

	t->eh_cfi = dwarf_getcfi_elf(elf);
	if (t->eh_cfi)
		scan_section(t, elf, ".eh_frame", true, 0);
	neh = t->nfdes;
	if (neh > 1)
		qsort(t->fdes, neh, sizeof(*t->fdes), cmp_fde);
	/* libdw's Dwarf decompresses every debug section it opens: only
	 * when there is a .debug_frame to read. */
	if (find_section(elf, ".debug_frame", &shdr)) {
		t->dwarf = dwarf_begin_elf(elf, DWARF_C_READ, NULL);
		t->debug_cfi = t->dwarf ? dwarf_getcfi(t->dwarf) : NULL;
		if (t->debug_cfi)
			scan_section(t, elf, ".debug_frame", false, neh);
	}
	ret = finish_index(t);
	if (ret)
		goto fail;
	add_entry_root(t, eh.e_entry);
	*out = t;
	return 0;
fail:
	unw_table_free(t);
	return ret;
}

int unw_table_build_file(const char *path, struct unw_table **out)
{
	Elf *elf;
	int fd;

	elf_version(EV_CURRENT);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf) {
		close(fd);
		return -ENOEXEC;
	}
	return build_from_elf(elf, fd, NULL, out);
}

int unw_table_build_mem(const void *image, size_t size, struct unw_table **out)
{
	/* elf_memory wants a writable buffer; work on a private copy. */
	char *copy = xmalloc(size);
	Elf *elf;

	elf_version(EV_CURRENT);
	memcpy(copy, image, size);
	elf = elf_memory(copy, size);
	if (!elf) {
		free(copy);
		return -ENOEXEC;
	}
	return build_from_elf(elf, -1, copy, out);
}

void unw_table_free(struct unw_table *t)
{
	if (!t)
		return;
	if (t->dwarf)
		dwarf_end(t->dwarf);
	if (t->eh_cfi)
		dwarf_cfi_end(t->eh_cfi);
	if (t->elf)
		elf_end(t->elf);
	if (t->fd >= 0)
		close(t->fd);
	free(t->image);
	free(t->fdes);
	free(t->rows);
	free(t->segs);
	free(t->roots);
	free(t);
}

/* The FDE holding vaddr, or NULL. */
static const struct unw_fde *find_fde(const struct unw_table *t, uint64_t vaddr)
{
	size_t lo = 0, hi = t->nfdes;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (t->fdes[mid].lo <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || vaddr >= t->fdes[lo - 1].hi)
		return NULL;
	return &t->fdes[lo - 1];
}

/* The row covering vaddr, computed and kept if new; NULL outside FDEs. */
static const struct unw_row *lookup_row(struct unw_table *t, uint64_t vaddr)
{
	const struct unw_fde *fde;
	struct unw_row r;
	size_t lo = 0, hi = t->nrows;
	uint32_t rel;
	uint64_t t0;

	if (vaddr < t->base || vaddr - t->base > UINT32_MAX)
		return NULL;
	rel = (uint32_t)(vaddr - t->base);
	/* the last row with start <= rel */
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (t->rows[mid].start <= rel)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo && rel < t->rows[lo - 1].end)
		return &t->rows[lo - 1];
	fde = find_fde(t, vaddr);
	if (!fde)
		return NULL;
	t0 = now_ns();
	if (!compute_row(t, fde, vaddr, &r)) {
		/* Keep the failure too, as a one-byte unsupported row. */
		memset(&r, 0, sizeof(r));
		r.start = rel;
		r.end = rel + 1;
	}
	/* Rows stay disjoint whatever libdw says. */
	if (lo && r.start < t->rows[lo - 1].end)
		r.start = t->rows[lo - 1].end;
	if (lo < t->nrows && r.end > t->rows[lo].start)
		r.end = t->rows[lo].start;
	t->build_ns += now_ns() - t0;
	ALLOC_GROW(t->rows, t->nrows + 1, t->rows_alloc);
	memmove(&t->rows[lo + 1], &t->rows[lo], (t->nrows - lo) * sizeof(*t->rows));
	t->rows[lo] = r;
	t->nrows++;
	return &t->rows[lo];
}

bool unw_table_fde_range(const struct unw_table *t, uint64_t vaddr,
			 uint64_t *lo, uint64_t *hi)
{
	const struct unw_fde *f = find_fde(t, vaddr);

	if (!f)
		return false;
	*lo = f->lo;
	*hi = f->hi;
	return true;
}

bool unw_table_fde(const struct unw_table *t, size_t i, uint64_t *lo,
		   uint64_t *hi)
{
	if (i >= t->nfdes)
		return false;
	*lo = t->fdes[i].lo;
	*hi = t->fdes[i].hi;
	return true;
}

bool unw_table_fde_entry_clean(const struct unw_table *t, uint64_t vaddr)
{
	const struct unw_fde *f = find_fde(t, vaddr);

	return f && f->lo == vaddr && f->entry_std;
}

const struct unw_row *unw_table_find(struct unw_table *t, uint64_t vaddr)
{
	const struct unw_row *r = lookup_row(t, vaddr);

	return r && r->cfa != UNW_CFA_NONE ? r : NULL;
}

void unw_table_build_all(struct unw_table *t)
{
	for (size_t i = 0; i < t->nfdes; i++) {
		uint64_t addr = t->fdes[i].lo;

		while (addr < t->fdes[i].hi) {
			const struct unw_row *r = lookup_row(t, addr);
			if (!r)
				break;
			addr = t->base + r->end;
		}
	}
}

size_t unw_table_nrows(const struct unw_table *t) { return t->nrows; }
size_t unw_table_nfdes(const struct unw_table *t) { return t->nfdes; }
size_t unw_table_bytes(const struct unw_table *t)
{
	return t->nrows * sizeof(*t->rows) + t->nfdes * sizeof(*t->fdes);
}

bool unw_table_off_to_vaddr(const struct unw_table *t, uint64_t off, uint64_t *vaddr)
{
	/*
	 * Neighbouring segments can share a file page (lld starts the code
	 * segment in the page that ends the read-only one, at another
	 * vaddr): the mappings asked about are executable, so the
	 * executable segments are tried first.
	 */
	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < t->nsegs; i++) {
			const struct unw_seg *s = &t->segs[i];
			/* The kernel maps from the page holding p_offset. */
			uint64_t lo = s->offset & ~(uint64_t)(4096 - 1);

			if (s->exec != (pass == 0))
				continue;
			if (off >= lo && off < s->offset + s->filesz) {
				*vaddr = off - s->offset + s->vaddr;
				return true;
			}
		}
	}
	return false;
}

bool unw_table_is_root(const struct unw_table *t, uint64_t vaddr)
{
	for (size_t i = 0; i < t->nroots; i++)
		if (vaddr >= t->roots[i].lo && vaddr < t->roots[i].hi)
			return true;
	return false;
}

size_t unw_table_build_id(const struct unw_table *t, const uint8_t **id)
{
	*id = t->build_id;
	return t->build_id_len;
}
