# Helpers of the sampling end-to-end scripts (t1xx_sample_*.sh), sourced
# after lib.sh: builds smp_folded (tests/progs/smp_folded.c, the raw stack
# printer) into $TMP/folded against the libcore.a under test, sanitized or
# not.
SRC=$E2E_DIR/../../src
SC_BUILD=${SC_BUILD:-$(dirname "$STACKCLOCK")}
folded_libs="$SC_BUILD/libcore.a -ldw -lelf -ldebuginfod -llzma -lzstd -lz -lstdc++ -lpthread -lm"
if nm "$SC_BUILD/libcore.a" 2>/dev/null | grep -q __asan_; then
	folded_libs="-fsanitize=address,undefined $folded_libs"
fi
cc -O2 -I"$SRC" -D_GNU_SOURCE -o "$TMP/folded" "$PROGS/smp_folded.c" $folded_libs || exit 1

# atleast A B: succeeds if the number A >= B.
atleast() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a >= b) }'; }
