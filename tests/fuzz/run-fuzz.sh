#!/usr/bin/env bash
# Fuzz the data-file reader for a short while (libFuzzer + ASan + UBSan).
# Builds tests/fuzz/fuzz_reader.c directly from the src/format and src/util
# sources with clang, seeds the corpus with valid files from make_seeds.c,
# runs ~20 s and prints one TAP line.  FUZZ_SECONDS overrides the duration.
set -u
cd "$(dirname "$0")/../.."
O=${O:-build}
out=$O/fuzz
secs=${FUZZ_SECONDS:-20}
mkdir -p "$out"

CC=${FUZZ_CC:-clang}
if ! command -v "$CC" >/dev/null 2>&1 ||
   ! echo 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { return 0; }' |
     "$CC" -fsanitize=fuzzer -x c - -o "$out/probe" >/dev/null 2>&1; then
	echo "not ok 1 - clang with libFuzzer missing (apt-get install clang libclang-rt-14-dev)"
	exit 1
fi
rm -f "$out/probe"

srcs="src/format/*.c src/util/*.c"
libs="-lzstd -lz -lpthread -lm"
flags="-std=gnu11 -g -O1 -Isrc -D_GNU_SOURCE -Wall -Wno-unused-parameter"
# shellcheck disable=SC2086
if ! "$CC" $flags -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
	-o "$out/fuzz_reader" tests/fuzz/fuzz_reader.c $srcs $libs >"$out/build.log" 2>&1 ||
   ! "$CC" $flags -o "$out/make_seeds" tests/fuzz/make_seeds.c $srcs $libs >>"$out/build.log" 2>&1; then
	sed 's/^/# /' "$out/build.log" | head -20
	echo "not ok 1 - fuzz harness does not build"
	exit 1
fi

rm -rf "$out/seeds"
mkdir -p "$out/seeds" "$out/corpus"
if ! "$out/make_seeds" "$out/seeds"; then
	echo "not ok 1 - fuzz seed files could not be written"
	exit 1
fi

log=$out/fuzz.log
"$out/fuzz_reader" -max_total_time="$secs" -rss_limit_mb=2048 -timeout=10 \
	-artifact_prefix="$out/" "$out/corpus" "$out/seeds" >"$log" 2>&1
rc=$?
runs=$(sed -n 's/^Done \([0-9]*\) runs.*/\1/p' "$log" | tail -1)
if [ "$rc" -eq 0 ] && [ -n "$runs" ]; then
	echo "ok 1 - fuzz data-file reader $runs runs, no crash"
else
	grep -E 'ERROR|SUMMARY|runtime error|Test unit written' "$log" | head -10 | sed 's/^/# /'
	echo "not ok 1 - fuzz data-file reader crashed or failed (status $rc, log $log)"
	exit 1
fi
