#!/usr/bin/env bash
# Instrumentation: a forked child is its own process; an exec'd
# instrumented program keeps being profiled; a SIGKILLed target loses nothing.
. "$(dirname "$0")/lib.sh"
build e2e_procs e2e_procs.c -O1 -finstrument-functions || exit 1
build e2e_exec_target e2e_exec_target.c -O1 -finstrument-functions || exit 1
build e2e_killed e2e_killed.c -O1 -finstrument-functions || exit 1
D=$TMP/p.data
check "record fork+exec" -- "$STACKCLOCK" record -m instrument -o "$D" -- "$TMP/e2e_procs" "$TMP/e2e_exec_target"
report_json "$D" "$TMP/p.json"
for f in parent_work child_work exec_target_work; do
	check "$f called once" -- q "$TMP/p.json" "exit(0 if row('$f')['calls'] == 1 else 1)"
done
report_json "$D" "$TMP/pp.json" --by process
check "the forked child is a process of its own" -- \
	q "$TMP/pp.json" "exit(0 if len(set(x['pid'] for x in rows)) >= 2 else 1)"

K=$TMP/k.data
"$STACKCLOCK" record -m instrument -o "$K" -- "$TMP/e2e_killed" 300000 2>"$TMP/k.err"
rc=$?
[ $rc -eq 137 ]; ok $? "record of a target killed by SIGKILL exits 128 + 9 (got $rc)"
check "the kill is reported" -- grep -qi 'kill' "$TMP/k.err"
report_json "$K" "$TMP/k.json"
check "every call before SIGKILL is kept: work() = 300000 ($(q "$TMP/k.json" "row('work')['calls']"))" -- \
	q "$TMP/k.json" "exit(0 if row('work')['calls'] == 300000 else 1)"
check "frames open at the kill are reported (main, die_now)" -- \
	q "$TMP/k.json" "exit(0 if s['open_frames'] >= 2 else 1)"
