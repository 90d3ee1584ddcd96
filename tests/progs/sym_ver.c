/*
 * sym_ver.c — a library whose function is defined with a symbol version
 * (".symver"), so its .symtab name is "sym_versioned@@SYMV_1" as glibc's
 * are; tests/unit/test_symbols.c checks the name shows as "sym_versioned".
 * Link with a version script defining SYMV_1.
 */
int sym_versioned_impl(int x)
{
	return x + 1;
}
__asm__(".symver sym_versioned_impl, sym_versioned@@SYMV_1");
