#!/usr/bin/env bash
# Fuzz the data-file reader for a short while (libFuzzer + ASan + UBSan).
# Builds tests/fuzz/fuzz_reader.c directly from the src/format and src/util
# sources with clang, seeds the corpus with valid files from make_seeds.c,
# runs ~20 s and prints one TAP line.  FUZZ_SECONDS overrides the duration.
set -u
# shellcheck source=tests/fuzz/lib.sh
. "$(dirname "$0")/lib.sh"
fuzz_init fuzz

srcs=(src/format/*.c src/util/*.c)
libs=(-lzstd -lz -lpthread -lm)
if ! fuzz_build fuzz_reader tests/fuzz/fuzz_reader.c "${srcs[@]}" "${libs[@]}" ||
   ! fuzz_cc -o "$out/make_seeds" tests/fuzz/make_seeds.c "${srcs[@]}" "${libs[@]}"; then
	fuzz_build_failed "fuzz harness"
fi

rm -rf "$out/seeds"
mkdir -p "$out/seeds" "$out/corpus"
if ! "$out/make_seeds" "$out/seeds"; then
	echo "not ok 1 - fuzz seed files could not be written"
	exit 1
fi

fuzz_run fuzz_reader "data-file reader"
