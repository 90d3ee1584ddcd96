#!/usr/bin/env bash
# Loading a library into a running program (src/record/tracee.h): the
# wall time of seize, call and release (build/tests/tracee_cli call) on a
# python3 running a loop, RUNS fresh interpreters, two calls each (the
# first dlopens tests/progs/attach_lib.c's library, the second finds it
# loaded).  Each gives seize, call and release wall times and the
# tracer's whole CPU time (user + system), in microseconds.
# A benchmark, not a test.
#
#   bench/tracee_call.sh [RUNS] [PYTHON]      (default 5, python3.11 or python3)
set -u
cd "$(dirname "$0")/.."
RUNS=${1:-5}
PY=${2:-$(command -v python3.11 || command -v python3)}
PY=$("$PY" -c 'import sys; print(sys.executable)')   # past a version manager's shim
CLI=$PWD/${O:-build}/tests/tracee_cli
TMP=$(mktemp -d /tmp/sc-bench.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
gcc -O2 -shared -fPIC -o "$TMP/libattach.so" tests/progs/attach_lib.c || exit 1
echo "# $PY, $RUNS runs; microseconds: seize call release tracer-cpu (first call | second call)"
for r in $(seq "$RUNS"); do
	"$PY" -c 'i = 0
while True: i += 1' &
	P=$!
	sleep 0.3
	first=$("$CLI" call $P "$TMP/libattach.so" sc_test_entry "$TMP/out" 2>&1)
	second=$("$CLI" call $P "$TMP/libattach.so" sc_test_entry "$TMP/out" 2>&1)
	kill $P
	wait $P 2>/dev/null
	f=$(echo "$first" | sed -n 's/^times //p')
	s=$(echo "$second" | sed -n 's/^times //p')
	echo "run $r: $f | $s | $(grep -c . "$TMP/out") lines written"
	rm -f "$TMP/out"
done
echo "# load average: $(cut -d' ' -f1-3 /proc/loadavg)"
