#!/usr/bin/env bash
# san: skip (its time goes to the runtime and the targets; the tool code it reaches, others reach under the sanitizers)
# serial (compares CPU shares or durations with the clock)
# Sampling follows every thread and child process of the target (inherit),
# gives each exec a process image of its own, and leaves the target's own
# behaviour alone: stdout, stderr, exit status, SIGKILL, Ctrl-C.
. "$(dirname "$0")/lib.sh"
. "$E2E_DIR/smp_lib.sh"

# Threads and a forked child.
build cputhreads e2e_cputhreads.c -O2 -fomit-frame-pointer -pthread || exit 1
check "record threads and a fork" -- sh -c "'$STACKCLOCK' record -o '$TMP/t.data' -- '$TMP/cputhreads' > '$TMP/cpu.txt'"
sc_stacks "$TMP/t.data" >"$TMP/t.folded"
while read -r tid cpu; do
	got=$(awk -v t="$tid" '$3 == t { n += $4 } END { print n + 0 }' "$TMP/t.folded")
	want=$(awk -v c="$cpu" 'BEGIN { printf "%d", c / 1e9 * 999 }')
	awk -v g="$got" -v w="$want" 'BEGIN { exit !(g >= 0.85 * w && g <= 1.15 * w) }'
	ok $? "thread $tid: $got samples for $want expected from its CPU time (within 15%)"
done <"$TMP/cpu.txt"
tshare=$(awk '$5 ~ /^clone3;start_thread;heavy;/ { m += $4 } $5 ~ /heavy/ { n += $4 } END { printf "%.1f", n ? 100 * m / n : 0 }' "$TMP/t.folded")
atleast "$tshare" 95; ok $? "$tshare% of thread stacks reach their root, clone3 (>= 95%)"
pids=$(awk '{ print $2 }' "$TMP/t.folded" | sort -u | wc -l)
ok $(( pids == 2 ? 0 : 1 )) "the forked child is sampled as a process of its own ($pids pids)"
nproc=$("$STACKCLOCK" dump -i "$TMP/t.data" | grep -c '^  process ')
ok $(( nproc == 2 ? 0 : 1 )) "two PROCESS records ($nproc)"

# exec: a new process image (proc_id) for the same pid.
build procs e2e_procs.c -O2 || exit 1
build exec_target e2e_exec_target.c -O2 || exit 1
check "record fork + exec" -- "$STACKCLOCK" record -o "$TMP/e.data" -- "$TMP/procs" "$TMP/exec_target"
"$STACKCLOCK" dump -i "$TMP/e.data" | grep '^  process ' >"$TMP/procs.txt"
python3 - "$TMP/procs.txt" <<'PY'
import re, sys
procs = [dict(re.findall(r'(\w+)=("[^"]*"|\S+)', l)) for l in open(sys.argv[1])]
first = procs[0]
execd = [p for p in procs if p["pid"] == first["pid"] and p["exe"].endswith('exec_target"')]
forked = [p for p in procs if p["pid"] != first["pid"]]
ok = (len(procs) == 3 and len(execd) == 1 and execd[0]["parent_proc_id"] == first["proc_id"]
      and execd[0]["proc_id"] != first["proc_id"] and len(forked) == 1
      and forked[0]["parent_proc_id"] == first["proc_id"])
if not ok:
    print("#   processes: %r" % procs)
sys.exit(0 if ok else 1)
PY
ok $? "exec gives a new proc_id whose parent is the image it replaced; the fork a proc of its own"

# The target's stdout, stderr and exit status are its own.
build behave smp_behave.c -O2 -fomit-frame-pointer || exit 1
"$STACKCLOCK" record -o "$TMP/b.data" -- "$TMP/behave" 300 3 exit >"$TMP/out" 2>"$TMP/err"
rc=$?
[ $rc -eq 3 ]; ok $? "record exits with the program's status 3 (got $rc)"
[ "$(cat "$TMP/out")" = "out line" ]; ok $? "stdout untouched"
grep -qx "err line" "$TMP/err"; ok $? "stderr carries the program's line"
"$STACKCLOCK" dump -i "$TMP/b.data" | grep -q 'session_end .*exit_status=768'
ok $? "exit status 3 recorded"

# A target killed by SIGKILL keeps its samples.
"$STACKCLOCK" record -o "$TMP/k.data" -- "$TMP/behave" 300 0 kill >/dev/null 2>&1
rc=$?
[ $rc -eq 137 ]; ok $? "record exits 128 + 9 when SIGKILL ends the program (got $rc)"
n=$(sc_stacks "$TMP/k.data" | awk '$5 ~ /;spin$/ { n += $4 } END { print n + 0 }')
ok $(( n > 100 ? 0 : 1 )) "samples before the SIGKILL kept ($n in spin)"

# SIGINT sent to the recorder reaches the target, which ends on its own.
"$STACKCLOCK" record -o "$TMP/i.data" -- "$TMP/behave" 100 0 sigint >"$TMP/iout" 2>/dev/null &
rec=$!
sleep 0.6
kill -INT $rec
wait $rec
ok $? "record exits 0 after SIGINT, as the program did"
grep -qx interrupted "$TMP/iout"; ok $? "the program got the SIGINT"
n=$(sc_stacks "$TMP/i.data" | awk '{ n += $4 } END { print n + 0 }')
# (0.6 s of a program's CPU; with two CPU hogs beside the suite it got
# 96 samples once)
ok $(( n > 20 ? 0 : 1 )) "samples written ($n)"
