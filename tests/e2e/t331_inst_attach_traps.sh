#!/usr/bin/env bash
# san: skip (the runtime is loaded into a running program; no tool code the sanitizers watch runs there)
# Attaching instrumentation to a program that traps on purpose (issue 30,
# point 6): e2e_attach_traps.c raises int3, ud2 and a faulting load in a
# loop in two threads and steps over each in its own handlers, which it
# reinstalls all the time; a signal it did not raise ends it (status 3).
# Attached to again and again (hooks by gcc and clang, patched): the
# program lives through every attach, and at its end each kind was handled
# exactly as often as raised.  Before: killed by SIGSEGV at the first
# attach (the loader's call given to a thread whose own fault was pending,
# delivered at the blob's address).  Then the recorder killed while
# attached, three times: the runtime puts the code back with the traps
# going on, and the counts are still exact.
. "$(dirname "$0")/lib.sh"
ATTACHES=${ATTACHES:-5}

for v in "${BUILD_VARIANTS[@]}"; do
	IFS=: read -r name cc flags <<<"$v"
	# shellcheck disable=SC2086
	$cc -g -O2 -pthread $flags -o "$TMP/traps_$name" "$PROGS/e2e_attach_traps.c" 2>/dev/null ||
		{ ok 1 "$name: build e2e_attach_traps.c"; continue; }
	rm -f "$TMP/ready"
	"$TMP/traps_$name" "$TMP/ready" >"$TMP/$name.out" 2>"$TMP/$name.err" &
	pid=$!
	for _ in $(seq 100); do [ -s "$TMP/ready" ] && break; sleep 0.05; done
	fails=0 dead=0
	for i in $(seq "$ATTACHES"); do
		"$STACKCLOCK" record -m instrument -p "$pid" --duration 0.5 -o "$TMP/$name.data" \
			2>"$TMP/$name.rec" || { fails=$((fails + 1)); sed 's/^/#   /' "$TMP/$name.rec"; }
		kill -0 "$pid" 2>/dev/null || { dead=$i; break; }
	done
	ok $(( fails == 0 && dead == 0 ? 0 : 1 )) \
		"$name: $ATTACHES attaches of 0.5 s, each status 0, the program alive after each (failed $fails, dead at attach ${dead/#0/none})"
	report_json "$TMP/$name.data" "$TMP/$name.json"
	c=$(q "$TMP/$name.json" "(row('trap_int3')['calls'], row('trap_ud2')['calls'], row('trap_load')['calls'])")
	ok $(python3 -c "import sys; c = $c; sys.exit(0 if min(c) > 0 and max(c) - min(c) <= 4 else 1)"; echo $?) \
		"$name: the traps' functions counted while attached, within the edges' 4 of each other ($c)"
	# the recorder killed while attached: the runtime puts everything back itself
	# (each time once the copy of the runtime it loads is removed from the
	# disk: killed before, the recorder leaves it there)
	copies() { grep -o 'libstackclock\.attach-[^ ]* (deleted)' "/proc/$pid/maps" | sort -u | wc -l; }
	for k in 1 2 3; do
		n0=$(copies)
		"$STACKCLOCK" record -m instrument -p "$pid" --duration 10 -o "$TMP/$name.k.data" 2>/dev/null &
		rec=$!
		for _ in $(seq 250); do [ "$(copies)" -gt "$n0" ] && break; sleep 0.02; done
		sleep "0.$((k * 2))"
		kill -KILL "$rec"
		wait "$rec" 2>/dev/null
	done
	sleep 0.5
	check "$name: the code bytes equal the file's after the recorder was killed 3 times" -- \
		python3 "$E2E_DIR/att_check.py" text "$pid" "$TMP/traps_$name"
	kill -TERM "$pid" 2>/dev/null
	wait "$pid"
	rc=$?
	read -r _ rt ri rs _ ht hi hs <"$TMP/$name.out"
	ok $(( rc == 0 ? 0 : 1 )) "$name: the program ends with status 0 ($rc; $(head -c 200 "$TMP/$name.err"))"
	ok $(( ${rt:-0} > 0 && ${ri:-0} > 0 && ${rs:-0} > 0 ? 0 : 1 )) "$name: each kind raised ($(cat "$TMP/$name.out"))"
	ok $(( ${rt:-0} == ${ht:--1} && ${ri:-0} == ${hi:--1} && ${rs:-0} == ${hs:--1} ? 0 : 1 )) \
		"$name: handled = raised for int3, ud2 and the faulting load ($rt $ri $rs; $ht $hi $hs)"
	ok $([ ! -s "$TMP/$name.err" ]; echo $?) "$name: no signal the program did not raise reached it"
done
left=$(ls "$(dirname "$STACKCLOCK")" 2>/dev/null | grep -c '^libstackclock\.attach-' || true)
ok $(( left == 0 ? 0 : 1 )) "no copy of the runtime left on disk beside it ($left)"
echo "1..$_n"
