/*
 * patch_short — functions too short for the entry jmp of run-time patching
 * (docs/patching.md, "call_sites"), counted at their direct call sites.
 *
 * Each of nothing() (ret, or endbr64; ret), ident() (mov %edi, %eax; ret)
 * and zero() (asm: xor %eax, %eax; ret) is called directly a known number
 * of times, zero() also by tail jumps (jmp rel32, from tail_zero and
 * tail_zero2), and
 * each once more through a function pointer, which the patched run does
 * not count; only_by_pointer() is only called through one.  Prints "expect NAME CALLS" on stderr for
 * the direct calls, and its result on stdout.
 */
#include <stdio.h>
#include <stdlib.h>

#ifdef __clang__
#define NOINL __attribute__((noinline))
#else
#define NOINL __attribute__((noinline, noclone))
#endif

NOINL void nothing(void)
{
	__asm__ volatile("");
}

NOINL int ident(int x)
{
	__asm__("" : "+r"(x));        /* no value for the caller to assume */
	return x;
}

long zero(void);              /* 3 bytes, hand-written: xor; ret */
long tail_zero(void);         /* a tail jump to zero among the bytes its
				 entry jmp replaces: in its trampoline */
long tail_zero2(void);        /* one after them: in place */
__asm__(".text\n"
	".globl zero\n.type zero, @function\n"
	"zero:\n"
	"\t.cfi_startproc\n"
	"\txor %eax, %eax\n"
	"\tret\n"
	"\t.cfi_endproc\n"
	".size zero, .-zero\n"
	".globl tail_zero\n.type tail_zero, @function\n"
	"tail_zero:\n"
	"\t.cfi_startproc\n"
	"\tnopl 0(%rax)\n"
	"\t.byte 0xe9\n"
	"\t.long zero - . - 4\n"
	"\t.cfi_endproc\n"
	".size tail_zero, .-tail_zero\n"
	".globl tail_zero2\n.type tail_zero2, @function\n"
	"tail_zero2:\n"
	"\t.cfi_startproc\n"
	"\tmov %rdi, %rax\n"
	"\tmov %rsi, %rax\n"
	"\t.byte 0xe9\n"
	"\t.long zero - . - 4\n"
	"\t.cfi_endproc\n"
	".size tail_zero2, .-tail_zero2\n");

/* never called directly: no call site to count it at */
NOINL int only_by_pointer(int x)
{
	__asm__("" : "+r"(x));
	return x;
}

static void (*volatile p_nothing)(void) = nothing;
static int (*volatile p_only)(int) = only_by_pointer;
static int (*volatile p_ident)(int) = ident;
static long (*volatile p_zero)(void) = zero;

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 100;
	long sum = 0;

	for (int i = 0; i < n; i++) {
		nothing();
		sum += ident(i);
		sum += zero();
		if (i % 2)
			sum += tail_zero();
		if (i % 4 == 0)
			sum += tail_zero2();
	}
	p_nothing();
	sum += p_ident(7) + p_zero() + p_only(1);
	printf("sum %ld\n", sum);
	fprintf(stderr, "expect nothing %d\nexpect ident %d\nexpect zero %d\n"
		"expect tail_zero %d\nexpect tail_zero2 %d\n",
		n, n, n + n / 2 + (n + 3) / 4, n / 2, (n + 3) / 4);
	return 0;
}
