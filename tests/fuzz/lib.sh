# shellcheck shell=bash
# Shared steps of the fuzz smoke runs (tests/fuzz/run-*.sh source this; its
# name must not match run-*, or tests/run.sh would run it as a test):
#   fuzz_init DIR          cd to the repository, $out=$O/DIR, $secs, $CC;
#                          one "not ok" TAP line and exit if clang cannot
#                          link libFuzzer
#   fuzz_build BIN HARNESS.c SOURCES... LIBS...
#                          build $out/BIN with libFuzzer + ASan + UBSan
#   fuzz_cc ARGS...        compile a plain helper with the same flags
#   fuzz_build_failed WHAT print the build log and the "not ok" line, exit
#   fuzz_run BIN WHAT [LIBFUZZER ARGS...]
#                          run $out/BIN for $secs over $out/corpus and
#                          $out/seeds and print the TAP line (exit 1 on a crash)
# Build output goes to $out/build.log.  FUZZ_SECONDS overrides the duration,
# FUZZ_CC the compiler.

FUZZ_FLAGS="-std=gnu11 -g -O1 -Isrc -D_GNU_SOURCE -Wall -Wno-unused-parameter"

fuzz_init()
{
	cd "$(dirname "${BASH_SOURCE[0]}")/../.." || exit 1
	O=${O:-build}
	out=$O/$1
	secs=${FUZZ_SECONDS:-20}
	CC=${FUZZ_CC:-clang}
	mkdir -p "$out"
	: >"$out/build.log"
	if ! command -v "$CC" >/dev/null 2>&1 ||
	   ! echo 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { return 0; }' |
	     "$CC" -fsanitize=fuzzer -x c - -o "$out/probe" >/dev/null 2>&1; then
		echo "not ok 1 - clang with libFuzzer missing (apt-get install clang libclang-rt-14-dev)"
		exit 1
	fi
	rm -f "$out/probe"
}

fuzz_cc()
{
	# shellcheck disable=SC2086
	"$CC" $FUZZ_FLAGS "$@" >>"$out/build.log" 2>&1
}

fuzz_build()
{
	local bin=$1
	shift
	fuzz_cc -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
		-o "$out/$bin" "$@"
}

fuzz_build_failed()
{
	sed 's/^/# /' "$out/build.log" | head -20
	echo "not ok 1 - $1 does not build"
	exit 1
}

fuzz_run()
{
	local bin=$1 what=$2 log=$out/fuzz.log rc runs
	shift 2
	"$out/$bin" -max_total_time="$secs" -rss_limit_mb=2048 -timeout=10 \
		-artifact_prefix="$out/" "$@" "$out/corpus" "$out/seeds" >"$log" 2>&1
	rc=$?
	runs=$(sed -n 's/^Done \([0-9]*\) runs.*/\1/p' "$log" | tail -1)
	if [ "$rc" -eq 0 ] && [ -n "$runs" ]; then
		echo "ok 1 - fuzz $what $runs runs, no crash"
	else
		grep -E 'ERROR|SUMMARY|runtime error|Test unit written' "$log" | head -10 | sed 's/^/# /'
		echo "not ok 1 - fuzz $what crashed or failed (status $rc, log $log)"
		exit 1
	fi
}
