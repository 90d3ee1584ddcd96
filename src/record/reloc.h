/*
 * reloc — moving the first instructions of an x86-64 function out of the
 * way of a 5-byte `jmp rel32`, for patching unmodified binaries at run time
 * (SPEC section 10).
 *
 * A function is patched at its "site": its first byte, or the byte after
 * an `endbr64` (which stays, so indirect calls still land on it).  The jmp
 * there goes to a per-function stub; the stub, after its probe, continues
 * in a trampoline holding the instructions the jmp overwrote, relocated,
 * then a jmp back to site + len, the rest of the original function.
 *
 * rel_entry_build() decides, from the bytes at the function's start, how
 * many whole instructions go (len >= 5) and writes their relocated copy for
 * a trampoline at a given address:
 *  - compiler-made patch sites need nothing displaced: nops of at least 5
 *    bytes (-fpatchable-function-entry, -mfentry -mnop-mcount's nop5) or a
 *    call to a profiling hook (-mfentry's __fentry__: `call hook` to one of
 *    the given addresses, or `call *slot(%rip)` through one of the given
 *    GOT slots) are dropped, and the copy is only the jmp back;
 *  - RIP-relative memory operands get a new displacement; jmp and jcc
 *    (rel8 or rel32) become rel32 forms to the same targets;
 *  - a displaced `call` must be the last displaced instruction: it becomes
 *    `push [rip+lit]; jmp target` with lit = the original return address
 *    (site + len), so the callee returns into the original code and every
 *    unwinder still sees a return address it has CFI for;
 *  - loop/jrcxz/xbegin and other relative forms are refused.
 * Refusals are values of enum patch_reason; the names (patch_reason_name)
 * are the keys of the session's JSON "unpatched" object (SPEC section 10).
 *
 * Position: the copy's outward rel32 fields are listed in fix[] (kind
 * REL_FIX_REL32) and its absolute return addresses too (REL_FIX_ABS64), so
 * a copy built once out of the target, in the object's link-time
 * addresses, is placed at run time by rel_entry_place() with arithmetic
 * only: the runtime needs no decoder.
 *
 * Pure functions: no allocation, no global state; thread-safe.
 */
#ifndef SC_RELOC_H
#define SC_RELOC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/*
 * Why a function is left alone.  The names are the JSON "unpatched" keys;
 * docs/values.md describes each.
 */
enum patch_reason {
	PATCH_OK = 0,
	PATCH_NOT_CODE,          /* "not_code": start outside executable sections */
	PATCH_DYNAMIC_LOADER,    /* "dynamic_loader": ld-linux* is never patched */
	PATCH_PLT_STUB,          /* "plt_stub": .plt/.plt.sec/.plt.got */
	PATCH_RETURNS_TWICE,     /* "returns_twice": setjmp family, vfork, getcontext */
	PATCH_READS_RETURN_ADDRESS, /* "reads_return_address": dlsym & co, or
				    a read of its return address at entry */
	PATCH_JUMP_ONLY,         /* "jump_only": .cold parts, never-called .part
				    parts, unnamed CFI ranges reached by jumps
				    only */
	PATCH_UNREFERENCED,      /* "unreferenced": an unnamed CFI range that
				    nothing calls, jumps to or takes the
				    address of (dead code, or reached in a
				    way the scan cannot see) */
	PATCH_NO_CFI,            /* "no_cfi": no call-frame rule at the start */
	PATCH_NOT_AT_ENTRY,      /* "cfa_not_at_entry": CFA is not rsp+8 with
				    nothing saved (a start inside a function) */
	PATCH_TOO_SHORT,         /* "too_short": fewer than 5 bytes after endbr64 */
	PATCH_LEAVES_FUNCTION,   /* "leaves_function": whole instructions covering
				    5 bytes run past the function's end */
	PATCH_BRANCH_INTO_ENTRY, /* "branch_into_entry": a jump lands inside the
				    bytes the jmp would overwrite */
	PATCH_UNDECODABLE,       /* "undecodable": the decoder rejects the bytes */
	PATCH_UNRELOCATABLE,     /* "unrelocatable": an instruction that cannot
				    move (loop, jrcxz, xbegin, a call not last) */
	PATCH_OUT_OF_REACH,      /* "out_of_reach": a relocated rel32 would not
				    reach its target from the trampoline */
	PATCH_CALL_SITES,        /* "call_sites": too short for the jmp, counted
				    at its direct call sites instead (their
				    rel32 redirected); calls through pointers
				    or by rel8 jumps are not counted */
	PATCH_NREASONS
};

const char *patch_reason_name(enum patch_reason r);

#define REL_JMP_LEN   5
#define REL_CODE_MAX  64
#define REL_FIX_MAX   8

enum rel_site {
	REL_SITE_DISPLACED = 0,  /* ordinary code moved to the trampoline */
	REL_SITE_NOPS,           /* compiler nops: nothing to move */
	REL_SITE_HOOK_CALL,      /* call __fentry__ (or another hook): dropped */
};

enum rel_fix_kind {
	REL_FIX_REL32 = 0,       /* int32 at off: a target outside the copy */
	REL_FIX_ABS64,           /* uint64 at off: an address in the object */
};

struct rel_fix {
	uint8_t off;             /* in code[] */
	uint8_t kind;            /* enum rel_fix_kind */
};

struct rel_entry {
	uint64_t site;           /* where the jmp goes: function + skip */
	uint64_t tramp;          /* the address code[] was built for */
	uint8_t  skip;           /* endbr64 bytes left in place: 0 or 4 */
	uint8_t  len;            /* bytes the jmp replaces: whole instructions */
	uint8_t  ninsn;          /* how many instructions those are */
	uint8_t  site_kind;      /* enum rel_site */
	uint8_t  code_len;       /* bytes of code[] used */
	uint8_t  nfix;
	struct rel_fix fix[REL_FIX_MAX];
	uint8_t  code[REL_CODE_MAX]; /* the trampoline: displaced instructions
					relocated, then jmp site + len */
};

/*
 * Plan the entry patch of the function [func, func_end), whose first bytes
 * are bytes[0 .. nbytes) (nbytes may stop short of func_end, never past
 * what is readable), for a trampoline at tramp.  targets: the sorted
 * addresses where code may enter (direct jump and call targets, addresses
 * taken, other function starts); one strictly inside the replaced bytes
 * refuses the function, one at the site itself (a jump back to the entry)
 * does not.  hooks: sorted addresses of profiling hooks and of the GOT
 * slots that hold them, whose call at the site is a compiler-made patch
 * site (may be NULL).  Returns PATCH_OK with *out filled, or the reason.
 */
enum patch_reason rel_entry_build(const uint8_t *bytes, size_t nbytes,
				  uint64_t func, uint64_t func_end,
				  uint64_t tramp,
				  const uint64_t *targets, size_t ntargets,
				  const uint64_t *hooks, size_t nhooks,
				  struct rel_entry *out);

/*
 * Write e's trampoline into dst, which will execute at dst_addr, for the
 * object loaded with bias (run-time address minus link-time address, when
 * e was built in link-time addresses; 0 when it was built in run-time
 * ones).  Returns false, writing nothing, when a rel32 cannot reach its
 * target from there (place the trampoline nearer).  Header-only so the
 * injected runtime can use it without the decoder.
 */
static inline bool rel_entry_place(const struct rel_entry *e, uint8_t *dst,
				   uint64_t dst_addr, uint64_t bias)
{
	int64_t move = (int64_t)(e->tramp + bias - dst_addr);
	uint8_t tmp[REL_CODE_MAX];

	memcpy(tmp, e->code, e->code_len);
	for (unsigned i = 0; i < e->nfix; i++) {
		uint8_t *p = tmp + e->fix[i].off;

		if (e->fix[i].kind == REL_FIX_REL32) {
			int32_t v;
			int64_t w;

			memcpy(&v, p, 4);
			w = (int64_t)v + move;
			if (w < INT32_MIN || w > INT32_MAX)
				return false;
			v = (int32_t)w;
			memcpy(p, &v, 4);
		} else {
			uint64_t a;

			memcpy(&a, p, 8);
			a += bias;
			memcpy(p, &a, 8);
		}
	}
	memcpy(dst, tmp, e->code_len);
	return true;
}

/* The 5 bytes of `jmp to` placed at address from. False if out of reach. */
static inline bool rel_jmp(uint8_t out[REL_JMP_LEN], uint64_t from, uint64_t to)
{
	int64_t d = (int64_t)(to - (from + REL_JMP_LEN));
	int32_t v = (int32_t)d;

	if (d < INT32_MIN || d > INT32_MAX)
		return false;
	out[0] = 0xe9;
	memcpy(out + 1, &v, 4);
	return true;
}

#endif
