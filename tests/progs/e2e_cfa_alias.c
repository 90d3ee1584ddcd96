/*
 * A hooks build's frames whose sizes make one function's position found
 * in the wrong frame (t317), written in assembly so that the sizes are
 * exactly these:
 *
 *   big   calls the hooks with CFA - sp = 32, and leaf "inlined" into it
 *         (leaf's hooks inside big, with big's return address);
 *   rec   calls the hooks with CFA - sp = 16 and recurses from one call
 *         site; at the bottom, leaf is "inlined" into it.
 *
 * leaf's position in rec(0), taken from its position in big (32 above
 * sp), lands on rec(1)'s return address slot, which holds the same call
 * site as rec(0)'s own: kept per function, the offset closed rec(0) at
 * leaf's entry, a repair in a program that never unwinds.  Kept per call
 * of the hook, it is found by a scan of rec's own frame.
 *
 *   e2e_cfa_alias N     big(), then rec(3), N times
 */
#include <stdlib.h>

void leaf(void);
void big(void);
void rec(int n);

__asm__(
	"	.text\n"
	"	.p2align 4\n"
	"	.globl leaf\n"
	"	.type leaf, @function\n"
	"leaf:\n"                              /* the out-of-line copy: named only */
	"	ret\n"
	"	.size leaf, .-leaf\n"

	"	.p2align 4\n"
	"	.globl big\n"
	"	.type big, @function\n"
	"big:\n"
	"	push %rbx\n"
	"	sub $16, %rsp\n"                 /* CFA - sp = 8 + 8 + 16 = 32 */
	"	lea big(%rip), %rdi\n"
	"	mov 24(%rsp), %rsi\n"
	"	call __cyg_profile_func_enter@PLT\n"
	"	lea leaf(%rip), %rdi\n"
	"	mov 24(%rsp), %rsi\n"
	"	call __cyg_profile_func_enter@PLT\n"
	"	lea leaf(%rip), %rdi\n"
	"	mov 24(%rsp), %rsi\n"
	"	call __cyg_profile_func_exit@PLT\n"
	"	lea big(%rip), %rdi\n"
	"	mov 24(%rsp), %rsi\n"
	"	call __cyg_profile_func_exit@PLT\n"
	"	add $16, %rsp\n"
	"	pop %rbx\n"
	"	ret\n"
	"	.size big, .-big\n"

	"	.p2align 4\n"
	"	.globl rec\n"
	"	.type rec, @function\n"
	"rec:\n"
	"	push %rbx\n"                     /* CFA - sp = 16 */
	"	mov %edi, %ebx\n"
	"	lea rec(%rip), %rdi\n"
	"	mov 8(%rsp), %rsi\n"
	"	call __cyg_profile_func_enter@PLT\n"
	"	test %ebx, %ebx\n"
	"	jz 1f\n"
	"	lea -1(%rbx), %edi\n"
	"	call rec\n"                      /* the one recursive call site */
	"	jmp 2f\n"
	"1:	lea leaf(%rip), %rdi\n"
	"	mov 8(%rsp), %rsi\n"
	"	call __cyg_profile_func_enter@PLT\n"
	"	lea leaf(%rip), %rdi\n"
	"	mov 8(%rsp), %rsi\n"
	"	call __cyg_profile_func_exit@PLT\n"
	"2:	lea rec(%rip), %rdi\n"
	"	mov 8(%rsp), %rsi\n"
	"	call __cyg_profile_func_exit@PLT\n"
	"	pop %rbx\n"
	"	ret\n"
	"	.size rec, .-rec\n");

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 1;

	for (int i = 0; i < n; i++) {
		big();
		rec(3);
	}
	return 0;
}
