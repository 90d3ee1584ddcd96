/*
 * e2e_unbalanced — exits that never come:
 *   jumper: main -> jump_outer -> jump_mid -> jump_leaf, which longjmps back
 *           into jump_outer (jump_mid and jump_leaf never exit)
 *   recursion: recurse(50) charged once however deep
 *   ender:  "exit" argument: exit() from three frames deep (open frames)
 */
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>

static jmp_buf env;
static volatile unsigned long sink;

__attribute__((noinline)) void jump_leaf(void) { longjmp(env, 1); }
__attribute__((noinline)) void jump_mid(void) { jump_leaf(); sink++; }

__attribute__((noinline)) void jump_outer(void)
{
	for (int i = 0; i < 10; i++)
		if (!setjmp(env))
			jump_mid();
}

__attribute__((noinline)) unsigned long recurse(int n)
{
	return n ? recurse(n - 1) + 1 : 0;
}

__attribute__((noinline)) void exit_deep2(void) { exit(0); }
__attribute__((noinline)) void exit_deep1(void) { exit_deep2(); }

int main(int argc, char **argv)
{
	jump_outer();
	sink += recurse(50);
	if (argc > 1 && !strcmp(argv[1], "exit"))
		exit_deep1();
	return 0;
}
