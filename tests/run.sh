#!/usr/bin/env bash
# Run the whole suite: unit tests (build/tests/test_*), end-to-end scripts
# (tests/e2e/t*.sh), the fuzz smoke runs, and with SAN_O set the unit and
# end-to-end tests again on the sanitizer build.  Every one speaks TAP; this
# counts "ok"/"not ok" lines.  A program that exits non-zero without a
# failing line, or prints no TAP line at all, counts as one failure.
# Last line: "N passed, N failed".
#
#   O=build tests/run.sh [PATTERN]     (PATTERN filters test names)
set -u
cd "$(dirname "$0")/.."
O=${O:-build}
export SC_BUILD=$PWD/$O
export STACKCLOCK=$PWD/$O/stackclock
pattern=${1:-}
pass=0
fail=0
log=$O/test-logs
mkdir -p "$log"

run_one() {
	local name=$1; shift
	[ -n "$pattern" ] && [[ "$name" != *$pattern* ]] && return
	local out=$log/$name.log
	local start=$SECONDS
	timeout 300 "$@" >"$out" 2>&1
	local rc=$?
	local p f
	p=$(grep -c '^ok ' "$out")
	f=$(grep -c '^not ok ' "$out")
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		f=1
		echo "not ok - $name exited with status $rc" >>"$out"
	elif [ "$p" -eq 0 ] && [ "$f" -eq 0 ]; then
		f=1
		echo "not ok - $name checked nothing (no TAP line)" >>"$out"
	fi
	pass=$((pass + p))
	fail=$((fail + f))
	if [ "$f" -ne 0 ]; then
		printf 'FAIL %-32s %3d passed %3d failed (%ds)\n' "$name" "$p" "$f" $((SECONDS - start))
		grep -B2 -A4 '^not ok' "$out" | sed 's/^/     /' | head -40
	else
		printf 'ok   %-32s %3d passed (%ds)\n' "$name" "$p" $((SECONDS - start))
	fi
}

for t in "$O"/tests/test_*; do
	[ -x "$t" ] && run_one "$(basename "$t")" "$t"
done
for t in tests/e2e/t*.sh; do
	[ -f "$t" ] && run_one "$(basename "$t" .sh)" bash "$t"
done
# SAN_O: the same unit and end-to-end tests again on the ASan+UBSan build
# (the injected runtime itself is never sanitized, see Makefile).
if [ -n "${SAN_O:-}" ]; then
	for t in "$SAN_O"/tests/test_*; do
		[ -x "$t" ] && run_one "san-$(basename "$t")" "$t"
	done
	export SC_BUILD=$PWD/$SAN_O STACKCLOCK=$PWD/$SAN_O/stackclock
	# A script whose header says "# san: skip" spends its time in the
	# (never sanitized) runtime or in the targets themselves; the tool's
	# code it reaches is reached by the others too.
	for t in tests/e2e/t*.sh; do
		[ -f "$t" ] && ! grep -q '^# san: skip' "$t" &&
			run_one "san-$(basename "$t" .sh)" bash "$t"
	done
fi
# The fuzzers side by side (CPU only, nothing timed): each its own log.
fuzz=()
for t in tests/fuzz/run-*.sh; do
	[ -n "$pattern" ] && [[ "$(basename "$t" .sh)" != *$pattern* ]] && continue
	[ -f "$t" ] && fuzz+=("$t")
done
for t in ${fuzz[@]+"${fuzz[@]}"}; do
	f=$log/$(basename "$t" .sh).fuzz
	(timeout 300 bash "$t" >"$f.out" 2>&1; echo $? >"$f.rc") &
done
wait
for t in ${fuzz[@]+"${fuzz[@]}"}; do
	f=$log/$(basename "$t" .sh).fuzz
	run_one "$(basename "$t" .sh)" sh -c 'cat "$1.out"; exit "$(cat "$1.rc")"' sh "$f"
done
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
