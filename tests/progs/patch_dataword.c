/*
 * patch_dataword — for tests/unit/test_discover.c: a constant in .rodata
 * that equals an address inside a function's first bytes, without being a
 * pointer (issue 16: one of 100,000 generated functions of a -O1 build was
 * refused as branch_into_entry for it).
 *
 * Built twice at test time: with WORD 0, to learn where dw_small lands,
 * then with WORD that address + 3 (inside its 6-byte lea, the bytes the
 * entry jump replaces).  Only a value changes, so the layout is the same.
 * dw_small is 9 bytes and dw_next follows it at once, as in the -O1 build.
 */
#ifndef WORD
#define WORD 0
#endif

__asm__(
	"	.text\n"
	"	.globl dw_small\n	.type dw_small,@function\n"
	"dw_small:\n	.cfi_startproc\n"
	"	lea 0x1042(%rdi), %eax\n"        /* 6 bytes: displaced */
	"	add %edi, %eax\n"
	"	ret\n"
	"	.cfi_endproc\n	.size dw_small, .-dw_small\n"
	"	.globl dw_next\n	.type dw_next,@function\n"
	"dw_next:\n	.cfi_startproc\n"
	"	mov $0x1042, %eax\n"
	"	add %edi, %eax\n"
	"	ret\n"
	"	.cfi_endproc\n	.size dw_next, .-dw_next\n");

int dw_small(int a);
int dw_next(int a);

/* what a table of random constants held */
static const unsigned long dw_words[2] __attribute__((used, aligned(8))) = { WORD, 406405 };

int main(int argc, char **argv)
{
	(void)argv;
	return (dw_small(argc) + dw_next(argc) + (int)dw_words[argc & 1]) & 1;
}
