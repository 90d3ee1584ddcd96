#!/usr/bin/env bash
# Run the whole suite: unit tests (build/tests/test_*), end-to-end scripts
# (tests/e2e/t*.sh), the fuzz smoke runs, and with SAN_O set the unit and
# end-to-end tests again on the sanitizer build.  Every one speaks TAP; this
# counts "ok"/"not ok" lines.  A program that exits non-zero without a
# failing line, or prints no TAP line at all, counts as one failure.
# Last line: "N passed, N failed".
#
#   O=build tests/run.sh [PATTERN]     (PATTERN filters test names)
#
# Tests run JOBS at a time (default: the number of CPUs, at most 4), but
# a script whose header has a line "# serial" (it compares times with the
# machine's own: accuracy, scaling) runs alone, after the others.
set -u
cd "$(dirname "$0")/.."
O=${O:-build}
export SC_BUILD=$PWD/$O
export STACKCLOCK=$PWD/$O/stackclock
# the interpreter "python3" names, asked once for every script (lib.sh)
SC_PYTHON=$(python3 -c 'import sys; print(sys.executable)' 2>/dev/null) && export SC_PYTHON
pattern=${1:-}
log=$O/test-logs
mkdir -p "$log"
rm -f "$log"/*.res
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 2)}
[ "$JOBS" -gt 4 ] && JOBS=4

# run_one NAME CMD...: run, count, print one line (and the failures); the
# counts go to $log/NAME.res for the total.
run_one() {
	local name=$1; shift
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
	echo "$p $f" >"$log/$name.res"
	if [ "$f" -ne 0 ]; then
		printf 'FAIL %-32s %3d passed %3d failed (%ds)\n%s\n' "$name" "$p" "$f" $((SECONDS - start)) \
			"$(grep -B2 -A4 '^not ok' "$out" | sed 's/^/     /' | head -40)"
	else
		printf 'ok   %-32s %3d passed (%ds)\n' "$name" "$p" $((SECONDS - start))
	fi
}

# queue NAME CMD...: run in the background, at most JOBS at a time.
queue() {
	[ -n "$pattern" ] && [[ "$1" != *$pattern* ]] && return
	while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do
		wait -n
	done
	run_one "$@" &
}

serial=()
e2e() {   # e2e PREFIX: every end-to-end script, the serial ones kept for later
	local t
	for t in tests/e2e/t*.sh; do
		[ -f "$t" ] || continue
		[ -n "${SAN_O:-}" ] && [ "$1" = san- ] && grep -q '^# san: skip' "$t" && continue
		if grep -q '^# serial' "$t"; then
			serial+=("$1$(basename "$t" .sh)" "$STACKCLOCK" "$t")
		else
			queue "$1$(basename "$t" .sh)" env STACKCLOCK="$STACKCLOCK" SC_BUILD="$SC_BUILD" bash "$t"
		fi
	done
}

for t in "$O"/tests/test_*; do
	[ -x "$t" ] && queue "$(basename "$t")" "$t"
done
e2e ""
# SAN_O: the same unit and end-to-end tests again on the ASan+UBSan build
# (the injected runtime itself is never sanitized, see Makefile).  A script
# whose header says "# san: skip" spends its time in the (never sanitized)
# runtime or in the targets themselves; the tool's code it reaches is
# reached by the others too.
if [ -n "${SAN_O:-}" ]; then
	for t in "$SAN_O"/tests/test_*; do
		[ -x "$t" ] && queue "san-$(basename "$t")" "$t"
	done
	SC_BUILD=$PWD/$SAN_O STACKCLOCK=$PWD/$SAN_O/stackclock e2e san-
fi
wait
# the timing-sensitive scripts, one at a time
for ((i = 0; i < ${#serial[@]}; i += 3)); do
	name=${serial[i]}
	[ -n "$pattern" ] && [[ "$name" != *$pattern* ]] && continue
	sc=${serial[i + 1]}
	run_one "$name" env STACKCLOCK="$sc" SC_BUILD="$(dirname "$sc")" bash "${serial[i + 2]}"
done
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
cat "$log"/*.res 2>/dev/null | awk '{ p += $1; f += $2 } END { printf "%d passed, %d failed\n", p, f; exit f != 0 }'
