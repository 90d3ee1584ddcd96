/*
 * patch_x86_64 — the machine code of run-time patching (see patch.h).
 *
 * A patched function's site holds `jmp stub+8`.  Its stub, written at run
 * time within reach of the object:
 *
 *	stub+0:   .quad fn                   the function's address
 *	stub+8:   lea -16(%rsp), %rsp        room below the return address
 *	          mov %rax, (%rsp)           the caller's rax kept
 *	          lea tramp(%rip), %rax
 *	          mov %rax, 8(%rsp)          the trampoline, at CFA-16
 *	          jmp *entry_slot(%rip)      to sc_patch_entry_asm (shared)
 *	stub+35:  tramp: the displaced instructions, relocated, then a jmp
 *	          back into the function (reloc.h)
 *
 * The entry probe so finds the caller's return address at CFA-8 and a word
 * unique to the function at CFA-16, where a compiled-in hook's caller
 * leaves its own return address (the engine's "pc").  The shared entry
 * saves the caller-saved general registers, all of them (-fipa-ra lets a
 * caller keep values in those its callee does not touch, and r10 may be
 * a static chain), and no vector register: its C half, sc_patch_enter()
 * (retstack.c), is built for general registers only and does the probe's
 * fast path and the return stack's entry in one call; its slow paths (a
 * new calling context, the kernel's records, a tail call, a thread's
 * first event) go through sc_rt_vsafe(), which keeps xmm0-15 (arguments,
 * and values -fipa-ra keeps live in any of them).  It then restores and
 * jumps to the trampoline through a `call` placed just before the return
 * trampoline whose pushed address it drops: the processor's return
 * predictor then holds the return trampoline, where the function's own
 * return now goes.
 *
 * The return trampoline keeps the same general registers (rax/rdx hold
 * the return value; xmm0/xmm1 and x87 are never touched on the way),
 * reads the clock as the compiled-in exit hook does, and calls
 * sc_lc_leave(), the library calls' exit (retstack.c: the return stack's
 * entry popped, the original return address at CFA-8, the exit probe);
 * it then returns there through the slot the original occupied, a return
 * the predictor also expects (the caller's own call pushed it).
 */
#include "runtime/patch.h"

/*
 * A return trampoline's clock read, first thing, as __cyg_profile_func_exit
 * reads it (probe.c): rsi = the clock (after an lfence if sc_rt_clk's fence
 * says so; 0 with the TSC off), rdx = the word of sc_rt_clk read, for the
 * C half (sc_lc_leave).  Clobbers rax, rcx, rdx, rsi.
 */
/*
 * The unwind rule of a return trampoline, from the last byte of the `call`
 * before it on (the entry's, whose pushed address is the trampoline: an
 * unwinder looks a return address up less one): a frame returning
 * through the trampoline has its original return address back at CFA-8
 * before any unwinder reads it (retstack.c: the wrappers of the unwinder's
 * entries, and _dl_find_object, which an unwinder entered where no wrapper
 * saw, the C library's thread cancellation, calls to find the trampoline's
 * tables: at its address less one, the call's last byte).  So the
 * trampoline is a frame of no size: CFA = rsp, every other register
 * unchanged, and the return address the word at CFA-8, unless that word
 * is still a trampoline (an unwinder no wrapper saw, that finds tables
 * without _dl_find_object: LLVM's libunwind, an unwinder linked into the
 * program, or one loaded after an attach): then 0, the end of the stack,
 * where it stopped before, rather than the same frame again for ever.
 * A trampoline is told by its first seven bytes (both begin `lea
 * -8(%rsp),%rsp; push %rax; push %rdx`: 48 8d 64 24 f8 50 52), which
 * needs no address in the tables:
 *
 *   DW_CFA_val_expression rip:
 *     breg7 -8; deref            x = [CFA-8]
 *     dup; deref; const8u 2^56-1; and; const8u K; ne
 *     bra +2; drop; lit0         x, or 0 if x's first 7 bytes are K
 */
#define TRAMPOLINE_CFI_START \
	"\t.cfi_startproc\n" \
	"\t.cfi_def_cfa %rsp, 0\n" \
	"\t.cfi_escape 0x16, 0x10, 30, 0x77, 0x78, 0x06, 0x12, 0x06, " \
	"0x0e, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x00, 0x1a, " \
	"0x0e, 0x48, 0x8d, 0x64, 0x24, 0xf8, 0x50, 0x52, 0x00, 0x2e, " \
	"0x28, 0x02, 0x00, 0x13, 0x30\n"

/* `call 2f`, the entry's unwind rule ending before its last byte and the
 * trampoline's starting there: the call itself, where a signal may land,
 * keeps the entry's rule (an unwind table may start inside an
 * instruction) */
#define CALL_TO_TRAMPOLINE \
	"\t.byte 0xe8\n" \
	"\t.byte (2f - 5f) & 0xff, ((2f - 5f) >> 8) & 0xff, ((2f - 5f) >> 16) & 0xff\n" \
	"\t.cfi_endproc\n" \
	TRAMPOLINE_CFI_START \
	"\t.byte ((2f - 5f) >> 24) & 0xff\n" \
	"5:\n"
#define RETURN_CLOCK_ASM \
	"\tmovq sc_rt_clk@gottpoff(%rip), %rcx\n" \
	"\tmovq %fs:(%rcx), %rcx\n"      /* fence | off << 32 */ \
	"\txor %esi, %esi\n" \
	"\ttest %rcx, %rcx\n" \
	"\tje 3f\n" \
	"\tcmp $1, %rcx\n" \
	"\tjne 4f\n"                     /* the TSC is off: 0 */ \
	"\tlfence\n" \
	"3:\n" \
	"\trdtsc\n" \
	"\tshl $32, %rdx\n" \
	"\tor %rdx, %rax\n" \
	"\tmov %rax, %rsi\n" \
	"4:\n" \
	"\tmov %rcx, %rdx\n"

__asm__(".text\n"
	/* xmm0-15 to 0..255(%rsp) and back (sc_rt_vsafe, below) */
	".macro sc_xmm_save\n"
	"\tmovaps %xmm0, 0(%rsp)\n"
	"\tmovaps %xmm1, 16(%rsp)\n"
	"\tmovaps %xmm2, 32(%rsp)\n"
	"\tmovaps %xmm3, 48(%rsp)\n"
	"\tmovaps %xmm4, 64(%rsp)\n"
	"\tmovaps %xmm5, 80(%rsp)\n"
	"\tmovaps %xmm6, 96(%rsp)\n"
	"\tmovaps %xmm7, 112(%rsp)\n"
	"\tmovaps %xmm8, 128(%rsp)\n"
	"\tmovaps %xmm9, 144(%rsp)\n"
	"\tmovaps %xmm10, 160(%rsp)\n"
	"\tmovaps %xmm11, 176(%rsp)\n"
	"\tmovaps %xmm12, 192(%rsp)\n"
	"\tmovaps %xmm13, 208(%rsp)\n"
	"\tmovaps %xmm14, 224(%rsp)\n"
	"\tmovaps %xmm15, 240(%rsp)\n"
	".endm\n"
	".macro sc_xmm_restore\n"
	"\tmovaps 0(%rsp), %xmm0\n"
	"\tmovaps 16(%rsp), %xmm1\n"
	"\tmovaps 32(%rsp), %xmm2\n"
	"\tmovaps 48(%rsp), %xmm3\n"
	"\tmovaps 64(%rsp), %xmm4\n"
	"\tmovaps 80(%rsp), %xmm5\n"
	"\tmovaps 96(%rsp), %xmm6\n"
	"\tmovaps 112(%rsp), %xmm7\n"
	"\tmovaps 128(%rsp), %xmm8\n"
	"\tmovaps 144(%rsp), %xmm9\n"
	"\tmovaps 160(%rsp), %xmm10\n"
	"\tmovaps 176(%rsp), %xmm11\n"
	"\tmovaps 192(%rsp), %xmm12\n"
	"\tmovaps 208(%rsp), %xmm13\n"
	"\tmovaps 224(%rsp), %xmm14\n"
	"\tmovaps 240(%rsp), %xmm15\n"
	".endm\n"
	".globl sc_patch_entry_asm\n"
	".hidden sc_patch_entry_asm\n"
	".type sc_patch_entry_asm, @function\n"
	"sc_patch_entry_asm:\n"
	"\t.cfi_startproc\n"
	/* rsp = CFA-24: [rsp] = the caller's rax, [rsp+8] = the trampoline
	 * (also in rax), [rsp+16] = the return address */
	"\t.cfi_def_cfa_offset 24\n"
	"\tendbr64\n"
	"\tpush %rdi\n"
	"\t.cfi_adjust_cfa_offset 8\n"
	"\tpush %rsi\n"
	"\t.cfi_adjust_cfa_offset 8\n"
	"\tpush %rdx\n"
	"\t.cfi_adjust_cfa_offset 8\n"
	"\tpush %rcx\n"
	"\t.cfi_adjust_cfa_offset 8\n"
	"\tpush %r8\n"
	"\t.cfi_adjust_cfa_offset 8\n"
	"\tpush %r9\n"
	"\t.cfi_adjust_cfa_offset 8\n"
	"\tpush %r10\n"
	"\t.cfi_adjust_cfa_offset 8\n"
	"\tpush %r11\n"                  /* rsp = CFA-88 */
	"\t.cfi_adjust_cfa_offset 8\n"
	/* the C half needs no alignment (its slow paths realign) */
	"\tmov %rax, %rdi\n"             /* the trampoline */
	"\tlea 80(%rsp), %rsi\n"         /* the return address slot (CFA-8) */
	"\tcall sc_patch_enter\n"        /* rax = 1: the return is hooked */
	"\ttest %rax, %rax\n"            /* (the pops keep the flags) */
	"\tpop %r11\n"
	"\t.cfi_adjust_cfa_offset -8\n"
	"\tpop %r10\n"
	"\t.cfi_adjust_cfa_offset -8\n"
	"\tpop %r9\n"
	"\t.cfi_adjust_cfa_offset -8\n"
	"\tpop %r8\n"
	"\t.cfi_adjust_cfa_offset -8\n"
	"\tpop %rcx\n"
	"\t.cfi_adjust_cfa_offset -8\n"
	"\tpop %rdx\n"
	"\t.cfi_adjust_cfa_offset -8\n"
	"\tpop %rsi\n"
	"\t.cfi_adjust_cfa_offset -8\n"
	"\tpop %rdi\n"
	"\t.cfi_adjust_cfa_offset -8\n"
	"\tpop %rax\n"
	"\t.cfi_adjust_cfa_offset -8\n"
	"\tjz 1f\n"                      /* no return hooked: no predictor entry */
	/* rsp = CFA-16, [rsp] = the trampoline.  The call pushes the return
	 * trampoline's address on the processor's return predictor (never
	 * returned to from here), so the function's own return, which now
	 * goes there, is predicted, and so is the trampoline's return to the
	 * caller after it. */
	CALL_TO_TRAMPOLINE
	".size sc_patch_entry_asm, .-sc_patch_entry_asm\n"
	/* rsp = the returned frame's CFA; CFA-8 gets the original return
	 * address (for the unwinder: this frame returns through it) */
	".globl sc_patch_return_asm\n"
	".hidden sc_patch_return_asm\n"
	".type sc_patch_return_asm, @function\n"
	"sc_patch_return_asm:\n"
	"\tlea -8(%rsp), %rsp\n"
	"\t.cfi_adjust_cfa_offset 8\n"
	"\t.cfi_offset %rip, -8\n"
	"\tpush %rax\n"
	"\t.cfi_adjust_cfa_offset 8\n"
	"\tpush %rdx\n"
	"\t.cfi_adjust_cfa_offset 8\n"
	"\tpush %rcx\n"
	"\t.cfi_adjust_cfa_offset 8\n"
	"\tpush %rsi\n"
	"\t.cfi_adjust_cfa_offset 8\n"
	"\tpush %rdi\n"
	"\t.cfi_adjust_cfa_offset 8\n"
	"\tpush %r8\n"
	"\t.cfi_adjust_cfa_offset 8\n"
	"\tpush %r9\n"
	"\t.cfi_adjust_cfa_offset 8\n"
	"\tpush %r10\n"
	"\t.cfi_adjust_cfa_offset 8\n"
	"\tpush %r11\n"                  /* rsp = CFA-80 */
	"\t.cfi_adjust_cfa_offset 8\n"
	RETURN_CLOCK_ASM
	"\tlea 80(%rsp), %rdi\n"         /* CFA */
	"\tcall sc_lc_leave\n"           /* the original now at CFA-8 */
	"\tpop %r11\n"
	"\t.cfi_adjust_cfa_offset -8\n"
	"\tpop %r10\n"
	"\t.cfi_adjust_cfa_offset -8\n"
	"\tpop %r9\n"
	"\t.cfi_adjust_cfa_offset -8\n"
	"\tpop %r8\n"
	"\t.cfi_adjust_cfa_offset -8\n"
	"\tpop %rdi\n"
	"\t.cfi_adjust_cfa_offset -8\n"
	"\tpop %rsi\n"
	"\t.cfi_adjust_cfa_offset -8\n"
	"\tpop %rcx\n"
	"\t.cfi_adjust_cfa_offset -8\n"
	"\tpop %rdx\n"
	"\t.cfi_adjust_cfa_offset -8\n"
	"\tpop %rax\n"
	"\t.cfi_adjust_cfa_offset -8\n"
	"\tret\n"
	"\t.cfi_endproc\n"
	".size sc_patch_return_asm, .-sc_patch_return_asm\n"
	/* the rest of the entry: drop the pushed address, jump to the
	 * trampoline (16 bytes below: inside the red zone, which signal
	 * frames skip) */
	"\t.cfi_startproc\n"
	"\t.cfi_def_cfa_offset 24\n"
	"2:\n"
	"\tlea 16(%rsp), %rsp\n"
	"\t.cfi_def_cfa_offset 8\n"
	"\tjmp *-8(%rsp)\n"
	"\t.cfi_def_cfa_offset 16\n"
	"1:\n"
	"\tlea 8(%rsp), %rsp\n"
	"\t.cfi_def_cfa_offset 8\n"
	"\tjmp *-8(%rsp)\n"
	"\t.cfi_endproc\n");

/*
 * Library calls (libcall.c).  A hooked GOT slot points at stub+16 of a
 * stub of its own:
 *
 *	stub+0:   .quad fn                   the row's function
 *	stub+8:   .quad target               where the slot pointed
 *	stub+16:  lea stub(%rip), %r11
 *	          jmp *entry_slot(%rip)      to sc_lc_entry_asm (shared)
 *
 * A call through a GOT slot crosses into another object, so its caller
 * expects every caller-saved register clobbered (-fipa-ra knows nothing of
 * another object's code): the entry keeps only the argument registers
 * (rdi, rsi, rdx, rcx, r8, r9, and rax, the vector count of a variadic
 * call) and the return keeps only the return registers (rax, rdx).  r10
 * and r11 are free (r11 is the PLT's scratch register; r10, a static
 * chain, never goes through a slot).  Vector registers (xmm0-7: float
 * arguments; xmm0-1: float results; x87 st0-1: long double results) are
 * not saved on the way: the C halves (retstack.c) are built for general
 * registers only, and call anything else (a slow path: a new calling
 * context, the kernel's records, a queued signal's events) through
 * sc_rt_vsafe(), which keeps xmm0-15.  No C code of the runtime uses x87.
 *
 * The entry leaves the stub's address at CFA-16, the word unique to the
 * call's function that the engine takes as its "pc", calls sc_lc_enter()
 * (rax = 1 if the return now goes through the trampoline), restores the
 * arguments and jumps to the stub's target, through a `call` whose pushed
 * address (the return trampoline, dropped again) primes the return
 * predictor as the patched entry does.  The return trampoline,
 * sc_lc_return_asm, keeps rax and rdx, reads the clock as the compiled-in
 * exit hook does (an lfence first when sc_rt_clk.fence says so) and calls
 * sc_lc_leave(), which puts the original return address at CFA-8 and runs
 * the exit probe.  Neither C half is called with the stack aligned to 16
 * bytes: they are built for general registers only, and their slow paths
 * go through sc_rt_vsafe(), which aligns it.
 */
__asm__(".text\n"
	".globl sc_lc_entry_asm\n"
	".hidden sc_lc_entry_asm\n"
	".type sc_lc_entry_asm, @function\n"
	"sc_lc_entry_asm:\n"
	"\t.cfi_startproc\n"
	"\t.cfi_def_cfa_offset 8\n"
	"\tendbr64\n"
	"\tpush %r11\n"                  /* CFA-16: the stub */
	"\t.cfi_adjust_cfa_offset 8\n"
	"\tpush %rax\n"
	"\t.cfi_adjust_cfa_offset 8\n"
	"\tpush %rdi\n"
	"\t.cfi_adjust_cfa_offset 8\n"
	"\tpush %rsi\n"
	"\t.cfi_adjust_cfa_offset 8\n"
	"\tpush %rdx\n"
	"\t.cfi_adjust_cfa_offset 8\n"
	"\tpush %rcx\n"
	"\t.cfi_adjust_cfa_offset 8\n"
	"\tpush %r8\n"
	"\t.cfi_adjust_cfa_offset 8\n"
	"\tpush %r9\n"
	"\t.cfi_adjust_cfa_offset 8\n"
	/* CFA-72: the C half needs no alignment (its slow paths realign) */
	"\tmov %r11, %rdi\n"
	"\tlea 64(%rsp), %rsi\n"         /* the return address slot, CFA-8 */
	"\tcall sc_lc_enter\n"
	"\tmov %rax, %r10\n"
	"\tpop %r9\n"
	"\t.cfi_adjust_cfa_offset -8\n"
	"\tpop %r8\n"
	"\t.cfi_adjust_cfa_offset -8\n"
	"\tpop %rcx\n"
	"\t.cfi_adjust_cfa_offset -8\n"
	"\tpop %rdx\n"
	"\t.cfi_adjust_cfa_offset -8\n"
	"\tpop %rsi\n"
	"\t.cfi_adjust_cfa_offset -8\n"
	"\tpop %rdi\n"
	"\t.cfi_adjust_cfa_offset -8\n"
	"\tpop %rax\n"
	"\t.cfi_adjust_cfa_offset -8\n"
	"\tpop %r11\n"                   /* the stub; rsp = CFA-8 */
	"\t.cfi_adjust_cfa_offset -8\n"
	"\tmov 8(%r11), %r11\n"          /* its target */
	"\ttest %r10, %r10\n"
	"\tjz 1f\n"
	CALL_TO_TRAMPOLINE                 /* see above: never returned to */
	".size sc_lc_entry_asm, .-sc_lc_entry_asm\n"
	/* rsp = the returned frame's CFA; CFA-8 gets the original return
	 * address (for the unwinder: this frame returns through it) */
	".globl sc_lc_return_asm\n"
	".hidden sc_lc_return_asm\n"
	".type sc_lc_return_asm, @function\n"
	"sc_lc_return_asm:\n"
	"\tlea -8(%rsp), %rsp\n"
	"\t.cfi_adjust_cfa_offset 8\n"
	"\t.cfi_offset %rip, -8\n"
	"\tpush %rax\n"
	"\t.cfi_adjust_cfa_offset 8\n"
	"\tpush %rdx\n"
	"\t.cfi_adjust_cfa_offset 8\n"
	RETURN_CLOCK_ASM
	"\tlea 24(%rsp), %rdi\n"         /* CFA */
	"\tcall sc_lc_leave\n"
	"\tpop %rdx\n"
	"\t.cfi_adjust_cfa_offset -8\n"
	"\tpop %rax\n"
	"\t.cfi_adjust_cfa_offset -8\n"
	"\tret\n"
	"\t.cfi_endproc\n"
	".size sc_lc_return_asm, .-sc_lc_return_asm\n"
	"2:\n"
	"\tlea 8(%rsp), %rsp\n"
	"1:\n"
	"\tjmp *%r11\n"
	/* sc_rt_vsafe(f, a, b, c, d): f(a, b, c, d) with xmm0-15 kept (the
	 * C halves' way to code that may use vector registers) */
	".globl sc_rt_vsafe\n"
	".hidden sc_rt_vsafe\n"
	".type sc_rt_vsafe, @function\n"
	"sc_rt_vsafe:\n"
	"\t.cfi_startproc\n"
	"\tpush %rbp\n"
	"\t.cfi_adjust_cfa_offset 8\n"
	"\t.cfi_offset %rbp, -16\n"
	"\tmov %rsp, %rbp\n"
	"\t.cfi_def_cfa_register %rbp\n"
	"\tand $-16, %rsp\n"
	"\tsub $256, %rsp\n"
	"\tsc_xmm_save\n"
	"\tmov %rdi, %rax\n"
	"\tmov %rsi, %rdi\n"
	"\tmov %rdx, %rsi\n"
	"\tmov %rcx, %rdx\n"
	"\tmov %r8, %rcx\n"
	"\tcall *%rax\n"
	"\tsc_xmm_restore\n"
	"\tmov %rbp, %rsp\n"
	"\tpop %rbp\n"
	"\t.cfi_def_cfa %rsp, 8\n"
	"\tret\n"
	"\t.cfi_endproc\n"
	".size sc_rt_vsafe, .-sc_rt_vsafe\n");

/*
 * _Unwind_Resume, called at the end of a cleanup landing pad: the real one
 * finds the frame to unwind from by its own return address, so this one
 * calls sc_rs_resume() (retstack.c: the originals back into the live
 * frames' slots, from the cleanup's own return address slot up; the real
 * function), given that slot and the exception, and jumps to it, with the
 * argument and the stack as they came.
 */
__asm__(".text\n"
	".globl _Unwind_Resume\n"
	".type _Unwind_Resume, @function\n"
	".globl sc_rs_w_resume\n"
	".hidden sc_rs_w_resume\n"
	"_Unwind_Resume:\n"
	"sc_rs_w_resume:\n"
	"\t.cfi_startproc\n"
	"\tendbr64\n"
	"\tpush %rdi\n"                  /* the stack aligned to 16 bytes */
	"\t.cfi_adjust_cfa_offset 8\n"
	"\tmov %rdi, %rsi\n"             /* the exception */
	"\tlea 8(%rsp), %rdi\n"          /* the return address slot */
	"\tcall sc_rs_resume\n"
	"\tmov %rax, %r11\n"
	"\tpop %rdi\n"
	"\t.cfi_adjust_cfa_offset -8\n"
	"\tjmp *%r11\n"
	"\t.cfi_endproc\n"
	".size _Unwind_Resume, .-_Unwind_Resume\n");

extern char sc_lc_entry_asm[], sc_lc_return_asm[];

uint64_t sc_patch_arch_lc_entry(void)
{
	return (uint64_t)(uintptr_t)sc_lc_entry_asm;
}

uint64_t sc_patch_arch_lc_return(void)
{
	return (uint64_t)(uintptr_t)sc_lc_return_asm;
}

void sc_patch_arch_lc_stub(uint8_t *stub, uint64_t fn, uint64_t target, const uint64_t *slot)
{
	static const uint8_t code[] = {
		0x4c, 0x8d, 0x1d, 0xe9, 0xff, 0xff, 0xff,   /* lea -23(%rip), %r11: the stub */
		0xff, 0x25, 0, 0, 0, 0,                     /* jmp *slot(%rip) */
		0xcc, 0xcc, 0xcc,
	};
	uint8_t *p = stub + SC_LC_STUB_CODE;
	int32_t d;

	_Static_assert(SC_LC_STUB_CODE + sizeof(code) == SC_LC_STUB_SIZE, "library-call stub layout");
	for (int i = 0; i < 8; i++) {
		stub[SC_LC_STUB_FN + i] = (uint8_t)(fn >> (8 * i));
		stub[SC_LC_STUB_TARGET + i] = (uint8_t)(target >> (8 * i));
	}
	for (unsigned i = 0; i < sizeof(code); i++)
		p[i] = code[i];
	d = (int32_t)((int64_t)(uintptr_t)slot - (int64_t)((uintptr_t)p + 13));
	for (int i = 0; i < 4; i++)
		p[9 + i] = (uint8_t)((uint32_t)d >> (8 * i));
}

extern char sc_patch_entry_asm[], sc_patch_return_asm[];

uint64_t sc_patch_arch_entry(void)
{
	return (uint64_t)(uintptr_t)sc_patch_entry_asm;
}

uint64_t sc_patch_arch_return(void)
{
	return (uint64_t)(uintptr_t)sc_patch_return_asm;
}

void sc_patch_arch_stub(uint8_t *stub, uint64_t fn, const uint64_t *slot)
{
	uint64_t tramp = (uint64_t)(uintptr_t)stub + SC_PATCH_STUB_LEN;
	static const uint8_t code[] = {
		0x48, 0x8d, 0x64, 0x24, 0xf0,         /* lea -16(%rsp), %rsp */
		0x48, 0x89, 0x04, 0x24,               /* mov %rax, (%rsp) */
		0x48, 0x8d, 0x05, 0, 0, 0, 0,         /* lea tramp(%rip), %rax */
		0x48, 0x89, 0x44, 0x24, 0x08,         /* mov %rax, 8(%rsp) */
		0xff, 0x25, 0, 0, 0, 0,               /* jmp *slot(%rip) */
	};
	uint8_t *p = stub + SC_PATCH_STUB_CODE;
	int32_t d;

	_Static_assert(SC_PATCH_STUB_CODE + sizeof(code) == SC_PATCH_STUB_LEN, "stub layout");
	for (int i = 0; i < 8; i++)
		stub[SC_PATCH_STUB_FN + i] = (uint8_t)(fn >> (8 * i));
	for (unsigned i = 0; i < sizeof(code); i++)
		p[i] = code[i];
	d = (int32_t)((int64_t)tramp - (int64_t)((uintptr_t)p + 16));
	for (int i = 0; i < 4; i++)
		p[12 + i] = (uint8_t)((uint32_t)d >> (8 * i));
	d = (int32_t)((int64_t)(uintptr_t)slot - (int64_t)((uintptr_t)p + sizeof(code)));
	for (int i = 0; i < 4; i++)
		p[23 + i] = (uint8_t)((uint32_t)d >> (8 * i));
}
