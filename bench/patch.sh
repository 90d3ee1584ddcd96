#!/usr/bin/env bash
# Run-time patching (SPEC section 10), side by side in one run (a
# benchmark, not a test).
#
#   bench/patch.sh [N] [RUNS]       (default fib(32), best of 5 runs)
#
# A recursive fib built -O2 -fno-optimize-sibling-calls without hooks runs
#   - alone: the baseline
#   - under `stackclock record -m instrument`: patched at run time
#   - under `uftrace record -P .` (Debian's uftrace, dynamic patching)
# and the same source built with -finstrument-functions runs under
# `stackclock record -m instrument` (our compiled-in hooks).  The cost per
# call is (T - T_baseline) / calls, T the best (minimum) CPU time, user +
# system, of RUNS runs; the ratios compare those costs.  The plan is
# built once before (discovery is cached per build-id).
#
# The same per call without start-up: the slope between fib(START) and
# fib(N) (START=20 by default).
#
# Patching start-up: python3 -c pass under record, the time the runtime
# took to map the plan, write ~6,600 stubs and patch the text (its own
# measure, `stackclock dump`'s patch_ns; best of RUNS).
set -u
cd "$(dirname "$0")/.."
N=${1:-32}
RUNS=${2:-5}
START=${START:-20}
O=${O:-build}
SC=$PWD/$O/stackclock
RT=$PWD/$O/libstackclock.so
[ -x "$SC" ] && [ -f "$RT" ] || { echo "build first: make" >&2; exit 1; }
W=$(mktemp -d /tmp/sc-bench-XXXXXX)
trap 'rm -rf "$W"' EXIT
export STACKCLOCK_CACHE_DIR=$W/cache

cat >"$W/fib.c" <<'EOF'
#include <stdio.h>
#include <stdlib.h>
__attribute__((noinline)) long fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
int main(int argc, char **argv) { printf("%ld\n", fib(argc > 1 ? atoi(argv[1]) : 30)); return 0; }
EOF
CFLAGS="-O2 -fno-optimize-sibling-calls"
gcc $CFLAGS -o "$W/fib_plain" "$W/fib.c"
gcc $CFLAGS -finstrument-functions -o "$W/fib_hooks" "$W/fib.c"
calls_of() { awk -v n="$1" 'BEGIN { a = 1; b = 1; for (i = 2; i <= n; i++) { c = 1 + a + b; a = b; b = c } print b + 1 }'; }
CALLS=$(calls_of "$N")
CALLS0=$(calls_of "$START")

# best_of CMD...: the minimum CPU time (ns, user + system of CMD and what
# it waited for) over RUNS runs
best_of() {
	local best=0 i t
	for ((i = 0; i < RUNS; i++)); do
		t=$( { TIMEFORMAT='%3U %3S'; time "$@" >/dev/null 2>&1 </dev/null; } 2>&1 | tail -1 |
		     awk '{ printf "%.0f", ($1 + $2) * 1e9 }')
		if [ "$best" -eq 0 ] || [ "$t" -lt "$best" ]; then best=$t; fi
	done
	echo "$best"
}

"$SC" record -m instrument -o "$W/warm.data" -- "$W/fib_plain" 5 >/dev/null 2>&1   # the plan, cached
base=$(best_of "$W/fib_plain" "$N")
patched=$(best_of "$SC" record -m instrument -o "$W/p.data" -- "$W/fib_plain" "$N")
hooks=$(best_of "$SC" record -m instrument -o "$W/h.data" -- "$W/fib_hooks" "$N")
# the same at fib(START): the slope between the two leaves out start-up
# (the calibration runs, loading, planning, writing the file)
base0=$(best_of "$W/fib_plain" "$START")
patched0=$(best_of "$SC" record -m instrument -o "$W/p0.data" -- "$W/fib_plain" "$START")
hooks0=$(best_of "$SC" record -m instrument -o "$W/h0.data" -- "$W/fib_hooks" "$START")
uft=0
if command -v uftrace >/dev/null; then
	uft=$(best_of uftrace record -P . -d "$W/uftrace.data" "$W/fib_plain" "$N")
fi
per() { awk -v t="$1" -v b="$base" -v c="$CALLS" 'BEGIN { printf "%.1f", (t - b) / c }'; }
echo "fib($N): $CALLS calls, best CPU time of $RUNS runs"
printf '  %-36s %8.1f ms\n' "baseline (no tool)" "$(awk -v t="$base" 'BEGIN { print t / 1e6 }')"
printf '  %-36s %8s ns/call\n' "stackclock, patched at run time" "$(per "$patched")"
printf '  %-36s %8s ns/call\n' "stackclock, compiled-in hooks" "$(per "$hooks")"
[ "$uft" -gt 0 ] && printf '  %-36s %8s ns/call\n' "uftrace record -P ." "$(per "$uft")"
awk -v p="$patched" -v h="$hooks" -v u="$uft" -v b="$base" 'BEGIN {
	printf "  patched / compiled-in hooks: %.2fx\n", (p - b) / (h - b)
	if (u > 0) printf "  patched / uftrace -P .:      %.2fx\n", (p - b) / (u - b)
}'
slope() { awk -v t="$1" -v t0="$2" -v b="$base" -v b0="$base0" -v c="$CALLS" -v c0="$CALLS0" \
	'BEGIN { printf "%.1f", ((t - t0) - (b - b0)) / (c - c0) }'; }
sp=$(slope "$patched" "$patched0"); sh=$(slope "$hooks" "$hooks0")
echo "  without start-up (slope fib($START)..fib($N)): patched $sp, hooks $sh ns/call," \
	"patched / hooks $(awk -v p="$sp" -v h="$sh" 'BEGIN { printf "%.2f", p / h }')x (target <= 1.5)"

PY=/usr/bin/python3.11   # Debian's (PATH may find a wrapper script first)
if [ -x "$PY" ]; then
	"$SC" record -m instrument --os-events=none -o "$W/py.data" -- "$PY" -c pass >/dev/null 2>&1   # the plan, cached
	for ((i = 0; i < RUNS; i++)); do
		"$SC" record -m instrument --os-events=none -o "$W/py.data" -- "$PY" -c pass >/dev/null 2>&1
		"$SC" dump -i "$W/py.data" | sed -n 's/.* patched=\([0-9]*\) patch_ns=\([0-9]*\).*/\1 \2/p' | head -1
	done | sort -k2 -n | head -1 | awk -v py="$PY" '{
		printf "%s -c pass: patching %d functions at start-up took %.1f ms (best of the runtime'"'"'s own measure)\n",
		       py, $1, $2 / 1e6 }'
fi
