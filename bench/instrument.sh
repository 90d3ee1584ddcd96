#!/usr/bin/env bash
# Instrumentation overhead, side by side in one run (a benchmark, not a test).
#
#   bench/instrument.sh [N] [RUNS]       (default fib(33), best of 5 runs)
#
# A recursive fib built with -O2 -fno-optimize-sibling-calls
# -finstrument-functions is run
#   - uninstrumented (the same source without -finstrument-functions): baseline
#   - under `stackclock record -m instrument`
#   - under `uftrace record --no-libcall` (Debian's uftrace)
#   - with bench/floor.c preloaded: hooks that only store {rdtsc, fn},
#     unordered and with an lfence before the exit's read (as ours)
#   - under `stackclock record -m instrument` built from BASE (a git
#     revision, default the one before issue 10's probe-cost compensation,
#     0fceda8^: "today's" cost the issue's 1.5x limit is about), built
#     here in a temporary worktree; BASE= skips it
# and the overhead per call is (T_tool - T_uninstrumented) / calls, T being
# the best (minimum) CPU time of RUNS runs of each (wall times are shown
# too).  The per-call cost without start-up (the calibration runs, loading,
# writing the file) is the slope between fib(N) and fib(START), default 20:
# (T(N) - T(START) - (P(N) - P(START))) / (C(N) - C(START)).  Also printed: the data file's bytes per event (an event is an entry
# or an exit), ours and uftrace's, and
# the time of `stackclock report` against `uftrace report` on recordings of
# the same program (skipped if report does not work yet).
set -u
cd "$(dirname "$0")/.."
N=${1:-33}
RUNS=${2:-5}
START=${START:-20}
BASE=${BASE-0fceda8^}
O=${O:-build}
SC=$PWD/$O/stackclock
[ -x "$SC" ] && [ -f "$O/libstackclock.so" ] || { echo "build first: make" >&2; exit 1; }
W=$(mktemp -d /tmp/sc-bench-XXXXXX)
trap 'git worktree remove --force "$W/base" >/dev/null 2>&1; rm -rf "$W"' EXIT

cat >"$W/fib.c" <<'EOF'
#include <stdio.h>
#include <stdlib.h>
long fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
int main(int argc, char **argv) { printf("%ld\n", fib(argc > 1 ? atoi(argv[1]) : 30)); return 0; }
EOF
CFLAGS="-O2 -fno-optimize-sibling-calls"
gcc $CFLAGS -finstrument-functions -o "$W/fib" "$W/fib.c"
gcc $CFLAGS -o "$W/fib_plain" "$W/fib.c"
gcc -O2 -fPIC -shared -o "$W/floor.so" bench/floor.c
gcc -O2 -fPIC -shared -DFLOOR_ORDERED -o "$W/floor_ordered.so" bench/floor.c

# Calls of fib(N): C(n) = 1 + C(n-1) + C(n-2), C(0) = C(1) = 1; plus main.
calls_of() { awk -v n="$1" 'BEGIN { a = 1; b = 1; for (i = 2; i <= n; i++) { c = 1 + a + b; a = b; b = c } print b + 1 }'; }
CALLS=$(calls_of "$N")
CALLS0=$(calls_of "$START")

# the base revision's recorder and runtime, built apart
SC_BASE=""
if [ -n "$BASE" ] && git rev-parse -q --verify "$BASE^{commit}" >/dev/null 2>&1; then
	git worktree add -q --detach "$W/base" "$BASE" 2>/dev/null &&
		make -s -C "$W/base" -j"$(nproc)" >/dev/null 2>&1 && SC_BASE=$W/base/build/stackclock
	[ -n "$SC_BASE" ] || echo "base $BASE: could not build it: skipped" >&2
fi
EVENTS=$((CALLS * 2))

# best_of CMD...: the minimum over RUNS runs of the CPU time (user + system,
# in ns) of CMD and everything it waited for.  CPU time rather than wall
# time: on a small shared machine, wall time measures the neighbours.  The
# best wall time (ns) is left in $W/wall (best_of runs in a subshell).
best_of() {
	local best=0 wbest=0 i t w out
	for ((i = 0; i < RUNS; i++)); do
		out=$( { TIMEFORMAT='%3R %3U %3S'; time "$@" >/dev/null 2>&1 </dev/null; } 2>&1 | tail -1)
		t=$(awk '{ printf "%.0f", ($2 + $3) * 1e9 }' <<<"$out")
		w=$(awk '{ printf "%.0f", $1 * 1e9 }' <<<"$out")
		if [ "$best" -eq 0 ] || [ "$t" -lt "$best" ]; then best=$t; fi
		if [ "$wbest" -eq 0 ] || [ "$w" -lt "$wbest" ]; then wbest=$w; fi
	done
	echo "$wbest" >"$W/wall"
	echo "$best"
}

cd "$W"
t_plain=$(best_of ./fib_plain "$N")
t_empty=$(best_of ./fib "$N")
t_floor=$(best_of env LD_PRELOAD="$W/floor.so" ./fib "$N"); w_floor=$(cat "$W/wall")
t_floor_o=$(best_of env LD_PRELOAD="$W/floor_ordered.so" ./fib "$N"); w_floor_o=$(cat "$W/wall")
t_ours=$(best_of "$SC" record -m instrument -o "$W/sc.data" -- ./fib "$N"); w_ours=$(cat "$W/wall")
# the slopes: ours and the base's at START, alternated with N so that a
# slow spell of the machine falls on both
s_plain0=$(best_of ./fib_plain "$START")
s_ours0=$(best_of "$SC" record -m instrument -o "$W/sc0.data" -- ./fib "$START")
if [ -n "$SC_BASE" ]; then
	t_base=$(best_of "$SC_BASE" record -m instrument -o "$W/base.data" -- ./fib "$N"); w_base=$(cat "$W/wall")
	s_base0=$(best_of "$SC_BASE" record -m instrument -o "$W/base0.data" -- ./fib "$START")
fi
have_uftrace=0
if command -v uftrace >/dev/null; then
	have_uftrace=1
	t_uft=$(best_of uftrace record --no-libcall -d "$W/uftrace.data" ./fib "$N"); w_uft=$(cat "$W/wall")
fi

per_call() { awk -v t="$1" -v b="${2:-$t_plain}" -v c="$CALLS" 'BEGIN { printf "%.1f", (t - b) / c }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "n/a" }'; }

ours=$(per_call "$t_ours")
slope() { awk -v t="$1" -v t0="$2" -v p="$t_plain" -v p0="$s_plain0" -v c="$CALLS" -v c0="$CALLS0" \
	'BEGIN { printf "%.1f", ((t - t0) - (p - p0)) / (c - c0) }'; }
floor=$(per_call "$t_floor")
echo "fib($N): $CALLS calls, $EVENTS events; CPU time, best of $RUNS runs"
echo "baselines: uninstrumented $((t_plain / 1000000)) ms, instrumented with empty hooks $((t_empty / 1000000)) ms"
printf '%-34s %16s %16s\n' "ns per call over:" "uninstrumented" "empty hooks"
row() { printf '%-34s %16s %16s  (cpu %d ms, wall %d ms)\n' "$1" "$(per_call "$2")" "$(per_call "$2" "$t_empty")" $(($2 / 1000000)) $(($3 / 1000000)); }
row "stackclock record -m instrument" "$t_ours" "$w_ours"
[ -n "$SC_BASE" ] && row "  the same at $BASE" "$t_base" "$w_base"
row "floor (bench/floor.c)" "$t_floor" "$w_floor"
row "floor, exit ordered (lfence)" "$t_floor_o" "$w_floor_o"
if [ $have_uftrace = 1 ]; then
	row "uftrace record --no-libcall" "$t_uft" "$w_uft"
	echo "ours / uftrace: $(ratio "$ours" "$(per_call "$t_uft")") / $(ratio "$(per_call "$t_ours" "$t_empty")" "$(per_call "$t_uft" "$t_empty")")   (target <= 0.20)"
fi
echo "per call without start-up (slope fib($START)..fib($N)): ours $(slope "$t_ours" "$s_ours0") ns${SC_BASE:+, at $BASE $(slope "$t_base" "$s_base0") ns, ratio $(ratio "$(slope "$t_ours" "$s_ours0")" "$(slope "$t_base" "$s_base0")") (target <= 1.50)}"
echo "ours / floor:   $(ratio "$ours" "$floor") / $(ratio "$(per_call "$t_ours" "$t_empty")" "$(per_call "$t_floor" "$t_empty")")"
echo "ours / ordered floor: $(ratio "$ours" "$(per_call "$t_floor_o")") / $(ratio "$(per_call "$t_ours" "$t_empty")" "$(per_call "$t_floor_o" "$t_empty")")   (target <= 1.50)"

sc_bytes=$(stat -c %s "$W/sc.data")
echo "data file: stackclock $sc_bytes bytes, $(awk -v s="$sc_bytes" -v e="$EVENTS" 'BEGIN { printf "%.6f", s / e }') bytes/event (target <= 8)"
if [ $have_uftrace = 1 ]; then
	u_bytes=$(du -sb "$W/uftrace.data" | cut -f1)
	echo "data file: uftrace $u_bytes bytes, $(awk -v s="$u_bytes" -v e="$EVENTS" 'BEGIN { printf "%.2f", s / e }') bytes/event"
fi

if "$SC" report -i "$W/sc.data" >/dev/null 2>&1; then
	t_rep=$(best_of "$SC" report -i "$W/sc.data")
	printf 'report: stackclock %d ms cpu' $((t_rep / 1000000))
	if [ $have_uftrace = 1 ]; then
		t_urep=$(best_of uftrace report -d "$W/uftrace.data")
		printf ', uftrace %d ms cpu, speed-up %sx (target >= 5)' $((t_urep / 1000000)) "$(ratio "$t_urep" "$t_rep")"
	fi
	echo
else
	echo "report: skipped ('stackclock report' does not work yet)"
fi
