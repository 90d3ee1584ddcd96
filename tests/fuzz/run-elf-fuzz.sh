#!/usr/bin/env bash
# Fuzz the ELF/DWARF readers (CFI tables, symbolization, the patcher's
# function discovery) for a short while
# (libFuzzer + ASan + UBSan).  Builds tests/fuzz/fuzz_elf.c with clang from
# the src/unwind, src/symbols, src/format and src/util sources, seeds the
# corpus with small -O2 programs built here (.eh_frame, .debug_frame alone,
# zlib- and zstd-compressed DWARF, DWARF 5 from clang, stripped), runs ~20 s
# and prints one TAP line.  FUZZ_SECONDS overrides the duration.
set -u
# shellcheck source=tests/fuzz/lib.sh
. "$(dirname "$0")/lib.sh"
fuzz_init fuzz-elf

srcs=(src/unwind/*.c src/symbols/*.c src/format/*.c src/util/*.c
      src/record/discover.c src/record/reloc.c)
libs=(-lZydis -ldw -lelf -liberty -ldebuginfod -llzma -lzstd -lz -lstdc++ -lpthread -lm)
fuzz_build fuzz_elf tests/fuzz/fuzz_elf.c "${srcs[@]}" "${libs[@]}" ||
	fuzz_build_failed "ELF fuzz harness"

# Seeds: one small program, several ways.
rm -rf "$out/seeds"
mkdir -p "$out/seeds" "$out/corpus"
# inputs that once crashed the readers, run first as seeds
cp "$(dirname "$0")"/regress-elf/* "$out/seeds/" 2>/dev/null || true
cat >"$out/seed.c" <<'EOF'
#include <stdlib.h>
static inline int sq(int x) { return x * x; }
__attribute__((noinline)) int leaf(int x) { return sq(x) + 1; }
__attribute__((noinline)) int rec(int n) { return n < 2 ? leaf(n) : rec(n - 1) + rec(n - 2); }
int main(int argc, char **argv) { return rec(argc > 1 ? atoi(argv[1]) : 3) & 1; }
EOF
seed() { local name=$1; shift; "$@" -o "$out/seeds/$name" "$out/seed.c" 2>/dev/null; }
seed eh_frame gcc -O2 -g
seed debug_frame gcc -O2 -g -fno-asynchronous-unwind-tables
seed gz_zlib gcc -O2 -g -gz=zlib
seed gz_zstd gcc -O2 -g -gz=zstd
seed clang_dwarf5 clang -O2 -g
seed stripped gcc -O2 -s
seed shared gcc -O2 -g -shared -fPIC
[ -s "$out/seeds/eh_frame" ] && [ -s "$out/seeds/gz_zlib" ] || {
	echo "not ok 1 - ELF fuzz seeds could not be built (gcc)"
	exit 1
}
# The same compressed ones read by libdw eagerly (e_ident[15] bit 0).
for f in gz_zlib gz_zstd; do
	[ -s "$out/seeds/$f" ] || continue
	cp "$out/seeds/$f" "$out/seeds/$f.eager"
	printf '\001' | dd of="$out/seeds/$f.eager" bs=1 seek=15 conv=notrunc 2>/dev/null
done

# -close_fd_mask=2: the readers warn once per damaged file on stderr (every
# input); sanitizer reports still reach the log.
fuzz_run fuzz_elf "ELF/DWARF readers" -close_fd_mask=2
