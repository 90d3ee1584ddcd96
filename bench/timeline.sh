#!/usr/bin/env bash
# bench/timeline.sh — the timeline (SPEC section 12, record --timeline):
# its size per event, what it adds to a recording, and how fast replay
# is, side by side with uftrace in the same run.
#
#   bench/timeline.sh [N] [RUNS]     fib(N) (default 32: 7.05 M calls,
#                                    14.1 M events), RUNS alternating runs
#                                    (default 5)
#
# One program (fib.c below, -O2 -finstrument-functions: both tools read
# its hooks).  CPU time (perf stat's task-clock of every process the
# command makes: recorder, target, calibration) of:
#   plain      the program alone
#   agg        record -m instrument -F 0 (the aggregated profile only)
#   tl         record -m instrument -F 0 --timeline
#   uftrace    uftrace record (its default: every entry and exit)
#   tl_base    with BASE=/path/to/an/older/build/stackclock: its record
#              --timeline, in the same runs (before/after a change)
# Cost of the timeline: (tl - plain) / (agg - plain).  Bytes per event: the
# data file with a timeline less the one without, over the events (2 per
# call); uftrace's: its data directory over the same events.
# Replay: stackclock replay against uftrace replay of fib(N - 2) (same
# calls in both), to /dev/null and to a file, CPU and wall time.
# Medians of RUNS.
set -u
N=${1:-32}
RUNS=${2:-5}
HERE=$(cd "$(dirname "$0")" && pwd)
O=${O:-$HERE/../build}
SC=$O/stackclock
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
cat >"$W/fib.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
int main(int argc, char **argv) { printf("%d\n", fib(argc > 1 ? atoi(argv[1]) : 32)); return 0; }
C
gcc -O2 -g -finstrument-functions -o "$W/fib" "$W/fib.c" || exit 1
command -v uftrace >/dev/null || { echo "uftrace is needed (apt-get install uftrace)"; exit 1; }

# CPU of every process the command makes (perf stat's task-clock: time(1)
# left some of the recorder's out), in seconds
cpu() { perf stat -x, -e task-clock -o "$W/ps" -- "$@" >/dev/null 2>&1; awk -F, '/task-clock/ { printf "%.3f\n", $1 / 1000 }' "$W/ps"; }
cpu_t() { /usr/bin/time -f '%U %S %e' -o "$W/t" "$@" >/dev/null 2>&1; awk '{ print $1 + $2 }' "$W/t"; }
wall() { awk '{ print $3 }' "$W/t"; }
med() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
declare -A T
for ((r = 0; r < RUNS; r++)); do
	T[plain]+=" $(cpu "$W/fib" "$N")"
	T[agg]+=" $(cpu "$SC" record -m instrument -F 0 -o "$W/agg.data" -- "$W/fib" "$N")"
	T[tl]+=" $(cpu "$SC" record -m instrument -F 0 --timeline -o "$W/tl.data" -- "$W/fib" "$N")"
	[ -n "${BASE:-}" ] && T[tl_base]+=" $(cpu "$BASE" record -m instrument -F 0 --timeline -o "$W/tlb.data" -- "$W/fib" "$N")"
	rm -rf "$W/ut"
	T[uftrace]+=" $(cpu uftrace record -d "$W/ut" "$W/fib" "$N")"
done
calls=$("$SC" report -i "$W/agg.data" --format json | python3 -c "import json,sys; print(sum(r['calls'] for r in json.load(sys.stdin)['rows']))")
events=$((2 * calls))
a=$(stat -c %s "$W/agg.data"); t=$(stat -c %s "$W/tl.data"); u=$(du -sb "$W/ut" | cut -f1)
declare -A M
KEYS="plain agg tl uftrace${BASE:+ tl_base}"
for k in $KEYS; do M[$k]=$(echo "${T[$k]}" | med); done
echo "fib($N): $calls calls, $events events; CPU seconds, median of $RUNS (recorder and target)"
for k in $KEYS; do printf '  %-8s %6.2f s   (%s)\n' "$k" "${M[$k]}" "${T[$k]# }"; done
python3 - "${M[plain]}" "${M[agg]}" "${M[tl]}" "${M[uftrace]}" "$a" "$t" "$u" "$events" <<'PY'
import sys
p, a, t, u = map(float, sys.argv[1:5])
fa, ft, fu, ev = map(int, sys.argv[5:9])
print("  timeline cost: %.2fx the aggregated recording's (%.2f s over plain against %.2f s)" % ((t - p) / (a - p), t - p, a - p))
print("  uftrace record: %.2fx ours with a timeline" % ((u - p) / (t - p)))
print("  bytes per event: ours %.2f (data file %d - %d bytes), uftrace %.2f (%d bytes)" % ((ft - fa) / ev, ft, fa, fu / ev, fu))
PY
if [ -n "${BASE:-}" ]; then
	python3 -c "import sys; p, a, b, t = map(float, sys.argv[1:]); print('  BASE timeline cost: %.2fx (ours %.2fx); its file %.2f bytes per event' % ((b - p) / (a - p), (t - p) / (a - p), $(stat -c %s "$W/tlb.data") / $events))" \
		"${M[plain]}" "${M[agg]}" "${M[tl_base]}" "${M[tl]}"
fi

# replay: the same calls, a smaller fib
R=$((N - 2))
"$SC" record -m instrument -F 0 --timeline -o "$W/r.data" -- "$W/fib" "$R" >/dev/null 2>&1
rm -rf "$W/ur"; uftrace record -d "$W/ur" "$W/fib" "$R" >/dev/null 2>&1
declare -A RC RW
for ((r = 0; r < RUNS; r++)); do
	RC[ours]+=" $(cpu_t "$SC" replay -i "$W/r.data")"; RW[ours]+=" $(wall)"
	RC[uftrace]+=" $(cpu_t uftrace replay -d "$W/ur")"; RW[uftrace]+=" $(wall)"
	RC[ours_f]+=" $(/usr/bin/time -f '%U %S %e' -o "$W/t" sh -c "'$SC' replay -i '$W/r.data' >'$W/o.txt'"; awk '{ print $1 + $2 }' "$W/t")"; RW[ours_f]+=" $(wall)"
	RC[uftrace_f]+=" $(/usr/bin/time -f '%U %S %e' -o "$W/t" sh -c "uftrace replay -d '$W/ur' >'$W/u.txt'"; awk '{ print $1 + $2 }' "$W/t")"; RW[uftrace_f]+=" $(wall)"
done
lines_o=$(wc -l <"$W/o.txt"); lines_u=$(wc -l <"$W/u.txt")
echo "replay of fib($R) ($lines_o lines ours, $lines_u uftrace's); median of $RUNS"
for k in ours uftrace ours_f uftrace_f; do
	printf '  %-10s CPU %6.2f s  wall %6.2f s\n' "$k" "$(echo "${RC[$k]}" | med)" "$(echo "${RW[$k]}" | med)"
done
python3 - "$(echo "${RC[ours]}" | med)" "$(echo "${RC[uftrace]}" | med)" "$(echo "${RW[ours_f]}" | med)" "$(echo "${RW[uftrace_f]}" | med)" <<'PY'
import sys
oc, uc, ow, uw = map(float, sys.argv[1:])
print("  replay speed: uftrace / ours = %.1fx (CPU, to /dev/null), %.1fx (wall, to a file)" % (uc / oc, uw / ow))
PY
