/*
 * A library function that ends in a tail call into its caller's code
 * (t319): lib_then(f, x) jumps to f(x), leaving no frame of its own, as
 * libstdc++'s std::string constructors jump to the program's own copy of
 * _M_construct.  Written in assembly so that the jump is there whatever
 * the compiler.
 */
void lib_then(void (*f)(int), int x);

__asm__(
	"	.text\n"
	"	.globl lib_then\n"
	"	.type lib_then, @function\n"
	"lib_then:\n"
	"	mov %rdi, %rax\n"
	"	mov %esi, %edi\n"
	"	jmp *%rax\n"
	"	.size lib_then, .-lib_then\n");
