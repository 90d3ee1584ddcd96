/*
 * reloc — relocating a function's first instructions into a trampoline
 * (see reloc.h).  Decoding is Zydis's (lengths, relative operands, ModRM);
 * the rewriting is ours and small: only the forms below are rewritten,
 * everything relative that is not one of them is refused.
 */
#include "record/reloc.h"

#include <Zydis/Zydis.h>

static const char *const reason_names[PATCH_NREASONS] = {
	[PATCH_OK]                   = "patched",
	[PATCH_NOT_CODE]             = "not_code",
	[PATCH_DYNAMIC_LOADER]       = "dynamic_loader",
	[PATCH_PLT_STUB]             = "plt_stub",
	[PATCH_RETURNS_TWICE]        = "returns_twice",
	[PATCH_READS_RETURN_ADDRESS] = "reads_return_address",
	[PATCH_JUMP_ONLY]            = "jump_only",
	[PATCH_UNREFERENCED]         = "unreferenced",
	[PATCH_NO_CFI]               = "no_cfi",
	[PATCH_NOT_AT_ENTRY]         = "cfa_not_at_entry",
	[PATCH_TOO_SHORT]            = "too_short",
	[PATCH_LEAVES_FUNCTION]      = "leaves_function",
	[PATCH_BRANCH_INTO_ENTRY]    = "branch_into_entry",
	[PATCH_UNDECODABLE]          = "undecodable",
	[PATCH_UNRELOCATABLE]        = "unrelocatable",
	[PATCH_OUT_OF_REACH]         = "out_of_reach",
	[PATCH_CALL_SITES]           = "call_sites",
};

const char *patch_reason_name(enum patch_reason r)
{
	return (unsigned)r < PATCH_NREASONS ? reason_names[r] : "unknown";
}

static const uint8_t endbr64[4] = { 0xf3, 0x0f, 0x1e, 0xfa };

/* Is there an element of the sorted array v in the open interval (lo, hi)? */
static bool any_inside(const uint64_t *v, size_t n, uint64_t lo, uint64_t hi)
{
	size_t a = 0, b = n;

	while (a < b) {               /* first element > lo */
		size_t mid = a + (b - a) / 2;
		if (v[mid] <= lo)
			a = mid + 1;
		else
			b = mid;
	}
	return a < n && v[a] < hi;
}

static bool contains(const uint64_t *v, size_t n, uint64_t x)
{
	return any_inside(v, n, x - 1, x + 1);
}

/* The code being written: bounds and fixups checked in one place. */
struct out_code {
	struct rel_entry *e;
	bool full;                    /* ran out of room */
	bool far;                     /* a rel32 out of reach */
};

static void put(struct out_code *c, const void *p, size_t n)
{
	struct rel_entry *e = c->e;

	if (e->code_len + n > REL_CODE_MAX) {
		c->full = true;
		return;
	}
	memcpy(e->code + e->code_len, p, n);
	e->code_len += (uint8_t)n;
}

static void add_fix(struct out_code *c, size_t off, enum rel_fix_kind kind)
{
	struct rel_entry *e = c->e;

	if (e->nfix == REL_FIX_MAX) {
		c->full = true;
		return;
	}
	e->fix[e->nfix].off = (uint8_t)off;
	e->fix[e->nfix].kind = (uint8_t)kind;
	e->nfix++;
}

/* A rel32 at code offset field_off, for an instruction ending at end_off. */
static void put_rel32(struct out_code *c, uint64_t target, size_t end_off)
{
	struct rel_entry *e = c->e;
	int64_t d = (int64_t)(target - (e->tramp + end_off));
	int32_t v = (int32_t)d;

	if (d < INT32_MIN || d > INT32_MAX)
		c->far = true;
	add_fix(c, e->code_len, REL_FIX_REL32);
	put(c, &v, 4);
}

static void put_jmp(struct out_code *c, uint64_t target)
{
	uint8_t op = 0xe9;

	put(c, &op, 1);
	put_rel32(c, target, c->e->code_len + 4);
}

static bool is_jcc(const ZydisDecodedInstruction *in, unsigned *cc)
{
	if (in->opcode_map == ZYDIS_OPCODE_MAP_DEFAULT &&
	    in->opcode >= 0x70 && in->opcode <= 0x7f) {
		*cc = in->opcode & 0xf;
		return true;
	}
	if (in->opcode_map == ZYDIS_OPCODE_MAP_0F &&
	    in->opcode >= 0x80 && in->opcode <= 0x8f) {
		*cc = in->opcode & 0xf;
		return true;
	}
	return false;
}

/*
 * Append the relocated form of instruction in, found at address a (its
 * bytes at p).  last: it is the last displaced one.
 */
static enum patch_reason relocate_one(struct out_code *c,
				      const ZydisDecodedInstruction *in,
				      const uint8_t *p, uint64_t a, bool last)
{
	uint64_t next = a + in->length;
	/* mod 00, r/m 101, no SIB: RIP-relative (EIP-relative with 0x67) */
	bool rip = (in->attributes & ZYDIS_ATTRIB_HAS_MODRM) &&
		   in->raw.modrm.mod == 0 && in->raw.modrm.rm == 5;
	unsigned cc;

	if (!rip && !(in->attributes & ZYDIS_ATTRIB_IS_RELATIVE) &&
	    !in->raw.imm[0].is_relative) {
		put(c, p, in->length);
		return PATCH_OK;
	}
	if (in->raw.imm[0].is_relative) {
		uint64_t target = next + (uint64_t)in->raw.imm[0].value.s;

		if (in->opcode_map == ZYDIS_OPCODE_MAP_DEFAULT &&
		    (in->opcode == 0xe9 || in->opcode == 0xeb)) {
			put_jmp(c, target);
			return PATCH_OK;
		}
		if (is_jcc(in, &cc)) {
			uint8_t op[2] = { 0x0f, (uint8_t)(0x80 | cc) };

			put(c, op, 2);
			put_rel32(c, target, c->e->code_len + 4);
			return PATCH_OK;
		}
		if (in->opcode_map == ZYDIS_OPCODE_MAP_DEFAULT &&
		    in->opcode == 0xe8 && last) {
			/* push [rip+5]; jmp target; .quad return address */
			static const uint8_t push[6] = { 0xff, 0x35, 5, 0, 0, 0 };
			size_t lit;

			put(c, push, sizeof(push));
			put_jmp(c, target);
			lit = c->e->code_len;
			put(c, &next, 8);
			add_fix(c, lit, REL_FIX_ABS64);
			return PATCH_OK;
		}
		return PATCH_UNRELOCATABLE;
	}
	if (rip && in->raw.disp.size == 32 && in->address_width == 64) {
		uint64_t target = next + (uint64_t)in->raw.disp.value;
		size_t start = c->e->code_len;
		int64_t d;
		int32_t v;

		put(c, p, in->length);
		if (c->full)
			return PATCH_UNRELOCATABLE;
		d = (int64_t)(target - (c->e->tramp + start + in->length));
		if (d < INT32_MIN || d > INT32_MAX)
			c->far = true;
		v = (int32_t)d;
		memcpy(c->e->code + start + in->raw.disp.offset, &v, 4);
		add_fix(c, start + in->raw.disp.offset, REL_FIX_REL32);
		return PATCH_OK;
	}
	return PATCH_UNRELOCATABLE;
}

enum patch_reason rel_entry_build(const uint8_t *bytes, size_t nbytes,
				  uint64_t func, uint64_t func_end,
				  uint64_t tramp,
				  const uint64_t *targets, size_t ntargets,
				  const uint64_t *hooks, size_t nhooks,
				  struct rel_entry *out)
{
	ZydisDecoder dec;
	ZydisDecodedInstruction in;
	struct out_code c = { .e = out };
	uint64_t size = func_end > func ? func_end - func : 0;
	size_t off, nops = 0;
	bool displaced_call = false;

	memset(out, 0, sizeof(*out));
	out->tramp = tramp;
	if (nbytes > size)
		nbytes = size;
	if (nbytes >= 4 && !memcmp(bytes, endbr64, 4))
		out->skip = 4;
	out->site = func + out->skip;
	if (size < out->skip + (uint64_t)REL_JMP_LEN)
		return PATCH_TOO_SHORT;
	ZydisDecoderInit(&dec, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);

	/* Compiler-made sites first: nops, or a call to a hook. */
	off = out->skip;
	while (nops < REL_JMP_LEN &&
	       ZYAN_SUCCESS(ZydisDecoderDecodeInstruction(&dec, NULL, bytes + off,
							   nbytes - off, &in)) &&
	       in.mnemonic == ZYDIS_MNEMONIC_NOP) {
		nops += in.length;
		off += in.length;
		out->ninsn++;
	}
	if (nops >= REL_JMP_LEN) {
		out->site_kind = REL_SITE_NOPS;
		out->len = (uint8_t)nops;
		goto finish;
	}
	off = out->skip;
	out->ninsn = 0;
	if (nhooks && ZYAN_SUCCESS(ZydisDecoderDecodeInstruction(&dec, NULL, bytes + off,
								  nbytes - off, &in)) &&
	    in.opcode_map == ZYDIS_OPCODE_MAP_DEFAULT &&
	    off + in.length <= size && in.length >= REL_JMP_LEN) {
		uint64_t next = out->site + in.length;
		/* call hook, or call *hook@GOTPCREL(%rip) (-fno-plt, PIC -pg) */
		bool hook = in.opcode == 0xe8 ?
			contains(hooks, nhooks, next + (uint64_t)in.raw.imm[0].value.s) :
			in.opcode == 0xff && in.raw.modrm.reg == 2 &&
			in.raw.modrm.mod == 0 && in.raw.modrm.rm == 5 &&
			contains(hooks, nhooks, next + (uint64_t)in.raw.disp.value);

		if (hook) {
			out->site_kind = REL_SITE_HOOK_CALL;
			out->len = in.length;
			out->ninsn = 1;
			goto finish;
		}
	}

	/* Ordinary code: whole instructions until 5 bytes are free. */
	while (off - out->skip < REL_JMP_LEN) {
		enum patch_reason r;

		if (off >= nbytes)
			return PATCH_LEAVES_FUNCTION;
		if (!ZYAN_SUCCESS(ZydisDecoderDecodeInstruction(&dec, NULL, bytes + off,
								 nbytes - off, &in)))
			return nbytes < size ? PATCH_UNDECODABLE : PATCH_LEAVES_FUNCTION;
		if (off + in.length > size)
			return PATCH_LEAVES_FUNCTION;
		if (displaced_call)
			return PATCH_UNRELOCATABLE;
		r = relocate_one(&c, &in, bytes + off, func + off,
				 off + in.length - out->skip >= REL_JMP_LEN);
		if (r != PATCH_OK)
			return r;
		displaced_call = in.opcode_map == ZYDIS_OPCODE_MAP_DEFAULT &&
				 in.opcode == 0xe8;
		off += in.length;
		out->ninsn++;
	}
	out->site_kind = REL_SITE_DISPLACED;
	out->len = (uint8_t)(off - out->skip);
finish:
	if (any_inside(targets, ntargets, out->site, out->site + out->len))
		return PATCH_BRANCH_INTO_ENTRY;
	/* A displaced call returns to site + len itself: nothing follows it. */
	if (!displaced_call)
		put_jmp(&c, out->site + out->len);
	if (c.full)
		return PATCH_UNRELOCATABLE;
	if (c.far)
		return PATCH_OUT_OF_REACH;
	return PATCH_OK;
}
