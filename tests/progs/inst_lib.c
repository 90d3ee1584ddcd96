/* inst_lib — an instrumented shared library that inst_basic dlopens. */
__attribute__((noinline)) int lib_leaf(int x) { return x * 3 + 1; }
int lib_fn(int x) { return lib_leaf(x) + 1; }
