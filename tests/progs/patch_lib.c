/*
 * patch_lib — a shared object for tests/unit/test_discover.c: one function
 * per rule of function discovery and entry relocation (record/discover.h,
 * record/reloc.h).  Built at test time with gcc and with clang, -O2.
 *
 * The asm_* functions fix their bytes whatever the compiler, so their
 * decisions are checked exactly; every function here takes an int and
 * returns an int, so the test can call any of them through a trampoline
 * and compare with the original.  The c_* functions are what compilers make
 * of ordinary C.
 */
#include <setjmp.h>
#include <stdio.h>

#define EXPORT __attribute__((visibility("default")))

/* ---- fixed bytes ------------------------------------------------------- */

#define FUNC(name)                                                           \
	"	.globl " #name "\n	.type " #name ",@function\n" #name ":\n"  \
	"	.cfi_startproc\n"
#define END(name)                                                            \
	"	.cfi_endproc\n	.size " #name ", .-" #name "\n"

__asm__(
	"	.data\n"
	"asm_data: .long 100\n"
	"	.text\n"

	/* a jcc in the first bytes: test(2) jz rel8(2) lea(3) move */
	FUNC(asm_jcc)
	"	test %edi, %edi\n"
	"	jz 1f\n"
	"	lea 1(%rdi), %eax\n"
	"	ret\n"
	"1:	mov $-1, %eax\n"
	"	ret\n"
	END(asm_jcc)

	/* a RIP-relative prologue: mov asm_data(%rip) (6) moves */
	FUNC(asm_rip)
	"	mov asm_data(%rip), %eax\n"
	"	add %edi, %eax\n"
	"	ret\n"
	END(asm_rip)

	/* a jump back to the entry: allowed (the patched jmp is the entry) */
	FUNC(asm_back)
	".Lasm_back:\n"          /* not the global name: that goes by the PLT */
	"	lea -1(%rdi), %eax\n"
	"	cmp $100, %edi\n"
	"	mov %eax, %edi\n"
	"	jg .Lasm_back\n"
	"	ret\n"
	END(asm_back)

	/* a jump into the bytes the jmp would overwrite: refused */
	FUNC(asm_into)
	"	xor %eax, %eax\n"
	"1:	add %edi, %eax\n"
	"	sub $1, %edi\n"
	"	jg 1b\n"
	"	ret\n"
	END(asm_into)

	/* under 5 bytes: refused */
	FUNC(asm_short)
	"	mov %edi, %eax\n"
	"	ret\n"
	END(asm_short)

	/* a symbol size that stops inside the second instruction */
	FUNC(asm_leaves)
	"	add $1, %edi\n"
	"	lea 1000(%rdi), %eax\n"
	"	ret\n"
	"	.cfi_endproc\n	.size asm_leaves, 5\n"

	/* a compiler-made patch site (nop5): nothing displaced */
	FUNC(asm_nops)
	"	.byte 0x0f, 0x1f, 0x44, 0x00, 0x00\n"
	"	lea 2(%rdi), %eax\n"
	"	ret\n"
	END(asm_nops)

	/* endbr64 stays; the 5 bytes after it move */
	FUNC(asm_endbr)
	"	endbr64\n"
	"	mov %edi, %eax\n"
	"	add $3, %eax\n"
	"	ret\n"
	END(asm_endbr)

	/* reads its return address at entry */
	FUNC(asm_ra)
	"	mov (%rsp), %rax\n"
	"	ret\n"
	END(asm_ra)

	/* reads its return address through rbp */
	FUNC(asm_ra_rbp)
	"	push %rbp\n"
	"	.cfi_def_cfa_offset 16\n"
	"	.cfi_offset %rbp, -16\n"
	"	mov %rsp, %rbp\n"
	"	.cfi_def_cfa_register %rbp\n"
	"	mov 8(%rbp), %rax\n"
	"	pop %rbp\n"
	"	.cfi_def_cfa %rsp, 8\n"
	"	ret\n"
	END(asm_ra_rbp)

	/* jrcxz cannot be widened: refused */
	FUNC(asm_jrcxz)
	"	jrcxz 1f\n"
	"	mov %edi, %eax\n"
	"	ret\n"
	"1:	xor %eax, %eax\n"
	"	ret\n"
	END(asm_jrcxz)

	/* a call as the first instruction: re-expressed as push + jmp */
	FUNC(asm_callfirst)
	"	call asm_helper40\n"
	"	add %edi, %eax\n"
	"	ret\n"
	END(asm_callfirst)

	"	.hidden asm_helper40\n"
	FUNC(asm_helper40)
	"	mov $40, %eax\n"
	"	ret\n"
	END(asm_helper40)

	/* a tail call among the displaced bytes */
	FUNC(asm_tail)
	"	add $1, %edi\n"
	"	jmp asm_target\n"
	END(asm_tail)

	"	.hidden asm_target\n"
	FUNC(asm_target)
	"	lea 10(%rdi), %eax\n"
	"	add %eax, %eax\n"
	"	ret\n"
	END(asm_target)

	/* a symbol inside another function, after a push: CFA is rsp+16 */
	FUNC(asm_outer)
	"	push %rbx\n"
	"	.cfi_def_cfa_offset 16\n"
	"	.cfi_offset %rbx, -16\n"
	"	.globl asm_mid\n	.type asm_mid,@function\n"
	"asm_mid:\n"
	"	mov %edi, %eax\n"
	"	add $2, %eax\n"
	"	pop %rbx\n"
	"	.cfi_def_cfa_offset 8\n"
	"	ret\n"
	"	.cfi_endproc\n"
	"	.size asm_mid, .-asm_mid\n"
	"	.size asm_outer, .-asm_outer\n"

	/* no call-frame information at all */
	"	.globl asm_nocfi\n	.type asm_nocfi,@function\n"
	"asm_nocfi:\n"
	"	mov %edi, %eax\n"
	"	add $6, %eax\n"
	"	ret\n"
	"	.size asm_nocfi, .-asm_nocfi\n"

	/* names that decide alone (local: they must not interpose libc's) */
	"	.type getcontext,@function\n"
	"getcontext:\n"
	"	.cfi_startproc\n"
	"	mov %edi, %eax\n"
	"	add $4, %eax\n"
	"	ret\n"
	END(getcontext)
	"	.type dlsym,@function\n"
	"dlsym:\n"
	"	.cfi_startproc\n"
	"	mov %edi, %eax\n"
	"	add $5, %eax\n"
	"	ret\n"
	END(dlsym)
);

/* ---- ordinary C ---------------------------------------------------------- */

static volatile int base = 5;

EXPORT int c_rip(int x)
{
	return base + x;
}

static __attribute__((noinline)) int leaf(int x)
{
	return x * 7 + base;
}

EXPORT int c_tail(int x)
{
	return leaf(x + 2);
}

EXPORT int c_call(int x)
{
	return leaf(x) + leaf(x + 1) * 3;
}

static __attribute__((cold, noinline)) void complain(int x)
{
	fprintf(stderr, "patch_lib: negative %d\n", x);
}

EXPORT int c_cold(int x)
{
	if (__builtin_expect(x < 0, 0)) {
		complain(x);
		complain(x - 1);
		return -x * 2;
	}
	return x + base;
}

EXPORT int c_setjmp(int x)
{
	jmp_buf b;
	volatile int r = x;

	if (setjmp(b))
		return r + 100;
	if (x == 7)
		longjmp(b, 1);
	return r + 1;
}

EXPORT int c_loop(int x)
{
	int s = 0;

	for (int i = 0; i < x; i++)
		s += i * i + base;
	return s;
}
