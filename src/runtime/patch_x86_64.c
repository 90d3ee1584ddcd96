/*
 * patch_x86_64 — the machine code of run-time patching (see patch.h).
 *
 * A patched function's site holds `jmp stub+8`.  Its stub, written at run
 * time within reach of the object:
 *
 *	stub+0:   .quad fn                  the function's address
 *	stub+8:   call *entry_slot(%rip)     to sc_patch_entry (shared)
 *	stub+14:  the trampoline: the displaced instructions, relocated,
 *	          then jmp back into the function (reloc.h)
 *
 * The call leaves stub+14 (the trampoline, which also names the function:
 * fn is 14 bytes before it) just below the function's return address, so
 * the entry probe finds the caller's return address at CFA-8 and a word
 * unique to the function at CFA-16, the place where a compiled-in hook's
 * caller leaves its own return address (the engine's "pc").  The shared
 * entry saves every register a caller may expect unchanged (all the
 * caller-saved general registers, as -fipa-ra lets a caller keep values in
 * the ones its callee does not touch, and the vector argument registers
 * xmm0-7, with plain moves: the C path is built without vector code, but
 * its rare slow paths call libc), calls sc_patch_enter(), restores, and
 * returns into the trampoline: a return that matches the stub's call, so
 * the processor's return predictor stays in step.
 *
 * The function's own return then goes to sc_patch_return (its return
 * address was replaced), which keeps rax/rdx and xmm0/xmm1 (the return
 * value registers; x87 is never touched) and the other caller-saved
 * registers, asks sc_patch_leave() for the original return address, and
 * returns there through the slot the original occupied.
 */
#include "runtime/patch.h"

#include <string.h>

__asm__(".text\n"
	".globl sc_patch_entry_asm\n"
	".hidden sc_patch_entry_asm\n"
	".type sc_patch_entry_asm, @function\n"
	"sc_patch_entry_asm:\n"
	"\t.cfi_startproc\n"
	/* rsp = CFA-16: [rsp] = the trampoline, [rsp+8] = return address */
	"\t.cfi_def_cfa_offset 16\n"
	"\tendbr64\n"
	"\tpush %rdi\n"
	"\t.cfi_adjust_cfa_offset 8\n"
	"\tpush %rsi\n"
	"\t.cfi_adjust_cfa_offset 8\n"
	"\tpush %rdx\n"
	"\t.cfi_adjust_cfa_offset 8\n"
	"\tpush %rcx\n"
	"\t.cfi_adjust_cfa_offset 8\n"
	"\tpush %rax\n"
	"\t.cfi_adjust_cfa_offset 8\n"
	"\tpush %r8\n"
	"\t.cfi_adjust_cfa_offset 8\n"
	"\tpush %r9\n"
	"\t.cfi_adjust_cfa_offset 8\n"
	"\tpush %r10\n"
	"\t.cfi_adjust_cfa_offset 8\n"
	"\tpush %r11\n"
	"\t.cfi_adjust_cfa_offset 8\n"
	"\tpush %rbp\n"                  /* rsp = CFA-96 */
	"\t.cfi_def_cfa_offset 96\n"
	"\t.cfi_offset %rbp, -96\n"
	"\tmov %rsp, %rbp\n"
	"\t.cfi_def_cfa_register %rbp\n"
	"\tand $-16, %rsp\n"
	"\tsub $128, %rsp\n"
	"\tmovaps %xmm0, 0(%rsp)\n"
	"\tmovaps %xmm1, 16(%rsp)\n"
	"\tmovaps %xmm2, 32(%rsp)\n"
	"\tmovaps %xmm3, 48(%rsp)\n"
	"\tmovaps %xmm4, 64(%rsp)\n"
	"\tmovaps %xmm5, 80(%rsp)\n"
	"\tmovaps %xmm6, 96(%rsp)\n"
	"\tmovaps %xmm7, 112(%rsp)\n"
	"\tmov 80(%rbp), %rdi\n"         /* the trampoline (CFA-16) */
	"\tlea 88(%rbp), %rsi\n"         /* the return address slot (CFA-8) */
	"\tcall sc_patch_enter\n"
	"\tmovaps 0(%rsp), %xmm0\n"
	"\tmovaps 16(%rsp), %xmm1\n"
	"\tmovaps 32(%rsp), %xmm2\n"
	"\tmovaps 48(%rsp), %xmm3\n"
	"\tmovaps 64(%rsp), %xmm4\n"
	"\tmovaps 80(%rsp), %xmm5\n"
	"\tmovaps 96(%rsp), %xmm6\n"
	"\tmovaps 112(%rsp), %xmm7\n"
	"\tmov %rbp, %rsp\n"
	"\tpop %rbp\n"
	"\t.cfi_def_cfa %rsp, 88\n"
	"\t.cfi_restore %rbp\n"
	"\tpop %r11\n"
	"\t.cfi_adjust_cfa_offset -8\n"
	"\tpop %r10\n"
	"\t.cfi_adjust_cfa_offset -8\n"
	"\tpop %r9\n"
	"\t.cfi_adjust_cfa_offset -8\n"
	"\tpop %r8\n"
	"\t.cfi_adjust_cfa_offset -8\n"
	"\tpop %rax\n"
	"\t.cfi_adjust_cfa_offset -8\n"
	"\tpop %rcx\n"
	"\t.cfi_adjust_cfa_offset -8\n"
	"\tpop %rdx\n"
	"\t.cfi_adjust_cfa_offset -8\n"
	"\tpop %rsi\n"
	"\t.cfi_adjust_cfa_offset -8\n"
	"\tpop %rdi\n"
	"\t.cfi_adjust_cfa_offset -8\n"
	"\tret\n"                        /* into the trampoline */
	"\t.cfi_endproc\n"
	".size sc_patch_entry_asm, .-sc_patch_entry_asm\n"

	".globl sc_patch_return_asm\n"
	".hidden sc_patch_return_asm\n"
	".type sc_patch_return_asm, @function\n"
	/* a byte before the label: unwinders look up return address - 1 */
	"\tnop\n"
	"sc_patch_return_asm:\n"
	/* rsp = the returned frame's CFA; the slot below gets the original */
	"\tpush %rax\n"
	"\tpush %rdi\n"
	"\tpush %rsi\n"
	"\tpush %rdx\n"
	"\tpush %rcx\n"
	"\tpush %rax\n"
	"\tpush %r8\n"
	"\tpush %r9\n"
	"\tpush %r10\n"
	"\tpush %r11\n"
	"\tpush %rbp\n"                  /* rsp = CFA-88 */
	"\tmov %rsp, %rbp\n"
	"\tand $-16, %rsp\n"
	"\tsub $32, %rsp\n"
	"\tmovaps %xmm0, 0(%rsp)\n"
	"\tmovaps %xmm1, 16(%rsp)\n"
	"\tlea 88(%rbp), %rdi\n"         /* CFA */
	"\tcall sc_patch_leave\n"
	"\tmov %rax, 80(%rbp)\n"         /* CFA-8: where to return */
	"\tmovaps 0(%rsp), %xmm0\n"
	"\tmovaps 16(%rsp), %xmm1\n"
	"\tmov %rbp, %rsp\n"
	"\tpop %rbp\n"
	"\tpop %r11\n"
	"\tpop %r10\n"
	"\tpop %r9\n"
	"\tpop %r8\n"
	"\tpop %rax\n"
	"\tpop %rcx\n"
	"\tpop %rdx\n"
	"\tpop %rsi\n"
	"\tpop %rdi\n"
	"\tret\n"
	".size sc_patch_return_asm, .-sc_patch_return_asm\n");

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
	uint64_t next = (uint64_t)(uintptr_t)stub + SC_PATCH_STUB_LEN;
	int32_t disp = (int32_t)((int64_t)(uintptr_t)slot - (int64_t)next);
	uint8_t *p = stub;

	for (int i = 0; i < 8; i++)
		*p++ = (uint8_t)(fn >> (8 * i));
	*p++ = 0xff;                    /* call *disp32(%rip) */
	*p++ = 0x15;
	for (int i = 0; i < 4; i++)
		*p++ = (uint8_t)((uint32_t)disp >> (8 * i));
}
