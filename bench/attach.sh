#!/usr/bin/env bash
# bench/attach.sh — attaching to a running process (SPEC section 13): the
# cost per call while attached against the patched cost of a launched
# recording, and attach/detach times on python3.
#
#   bench/attach.sh [RUNS]          (default 3; run as root: ptrace)
#
# Calls: tests/progs/e2e_attach.c (3 threads; an iteration = step() + two
# tick() calls), built without hooks; its iterations per second from its
# counter file over 1 s: alone, attached (once its code is patched: the
# text differs from the file), after the detach, and under a launched
# `record -m instrument` (patched at start).  Cost per call =
# (1/rate - 1/rate alone) / 3 calls.  python3: the recorder's own summary
# line (attach = load + set up + patch with the threads stopped; detach =
# stop, put back, release), python3.11 running a loop of Python calls.
set -u
RUNS=${1:-3}
HERE=$(cd "$(dirname "$0")" && pwd)
O=${O:-$HERE/../build}
SC=$O/stackclock
PY=${PYTHON:-/usr/bin/python3.11}
AT="$PY $HERE/../tests/e2e/att_check.py"
W=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$W"' EXIT
gcc -O2 -pthread -o "$W/plain" "$HERE/../tests/progs/e2e_attach.c" || exit 1

rate() {	# rate PID: iterations per CPU second of PID over the next second
	local a b
	a=$($AT counts "$W/cnt" "$1")
	sleep 1
	b=$($AT counts "$W/cnt" "$1")
	echo "$a $b" | awk '{ print ($3 - $1) / ($4 - $2) }'
}
ns_per_call() { awk -v a="$1" -v b="$2" 'BEGIN { print (1e9 / a - 1e9 / b) / 3 }'; }

printf '%-4s %12s %12s %12s %12s %10s %10s %10s\n' run alone/cpu-s attached after launched att_ns launch_ns after_ns
for ((r = 1; r <= RUNS; r++)); do
	"$W/plain" "$W/cnt" >/dev/null & pid=$!
	sleep 0.5
	r0=$(rate $pid)
	"$SC" record -m instrument -p "$pid" --duration 3 -o "$W/a.data" 2>"$W/a.err" & rec=$!
	for _ in $(seq 100); do $AT text "$pid" "$W/plain" >/dev/null || break; sleep 0.05; done
	ra=$(rate $pid)
	wait "$rec"
	rd=$(rate $pid)
	kill -TERM "$pid"; wait "$pid"
	"$SC" record -m instrument -o "$W/l.data" -- "$W/plain" "$W/cnt" >/dev/null 2>&1 & rec=$!
	sleep 2
	rl=$(rate "$(pgrep -n -f "$W/plain")")
	pkill -TERM -P "$rec" 2>/dev/null; kill -TERM $(pgrep -f "$W/plain") 2>/dev/null; wait "$rec"
	printf '%-4s %12.0f %12.0f %12.0f %12.0f %10.1f %10.1f %10.1f\n' "$r" "$r0" "$ra" "$rd" "$rl" \
		"$(ns_per_call "$ra" "$r0")" "$(ns_per_call "$rl" "$r0")" "$(ns_per_call "$rd" "$r0")"
done

cat >"$W/loop.py" <<'PY'
import sys, time
def f(n):
    s = 0
    for i in range(n):
        s += i * i % 7
    return s
end = time.time() + float(sys.argv[1])
while time.time() < end:
    f(2000)
PY
echo
echo "python3 ($PY): attach and detach as the recorder reports them"
for ((r = 1; r <= RUNS; r++)); do
	"$PY" "$W/loop.py" 30 & pid=$!
	sleep 1
	"$SC" record -m instrument -p "$pid" --duration 2 -o "$W/p.data" 2>&1 | grep -o "attached to .*" | sed "s/^/run $r: /"
	kill "$pid"; wait "$pid" 2>/dev/null
done
