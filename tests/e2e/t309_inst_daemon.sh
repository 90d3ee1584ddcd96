#!/usr/bin/env bash
# record and signals: SIGTERM to the recorder reaches the target and its
# workers; a daemon that left the process group does not hold the recorder
# (stopped, what it has is written, the user told); a second SIGINT ends the
# wait at once.  Times have generous tolerances (the machine is shared).
. "$(dirname "$0")/lib.sh"
build dm e2e_daemon.c -O1 -finstrument-functions || exit 1
build tc e2e_thread_child.c -O1 -pthread -finstrument-functions || exit 1

# start MODE: record in the background, wait for the target's pid file
start() {
	rm -f "$TMP/pid"
	"$STACKCLOCK" record -m instrument -o "$TMP/$1.data" -- "$TMP/dm" "$1" "$TMP/pid" 2>"$TMP/$1.err" &
	R=$!
	for _ in $(seq 100); do [ -s "$TMP/pid" ] && break; sleep 0.1; done
	sleep 0.3
}
# stopped SECONDS: did the recorder end within SECONDS?  (its status in $RC)
stopped() {
	for _ in $(seq $(($1 * 10))); do kill -0 $R 2>/dev/null || break; sleep 0.1; done
	if kill -0 $R 2>/dev/null; then kill -KILL $R; wait $R; return 1; fi
	wait $R; RC=$?; return 0
}

start daemon
kill -INT $R
stopped 5; ok $? "daemon: SIGINT ends the recorder although the daemon lives on"
[ "$RC" -eq 0 ]; ok $? "daemon: record exits 0, the target's own status (got $RC)"
D=$(cat "$TMP/pid"); kill -0 "$D" 2>/dev/null; ok $? "the daemon itself was left running"; kill "$D" 2>/dev/null
report_json "$TMP/daemon.data" "$TMP/daemon.json"
check "daemon: what it recorded is written: parent_work 10, main 1, tick $(q "$TMP/daemon.json" "row('tick')['calls']") > 0" -- \
	q "$TMP/daemon.json" "exit(0 if row('parent_work')['calls'] == 10 and row('main')['calls'] == 1 and row('tick')['calls'] > 0 and s['processes'] == 3 else 1)"
check "daemon: the user is told the daemon still runs" -- grep -q "left its process group (daemons) still run" "$TMP/daemon.err"

start busy
kill -TERM $R
stopped 5; ok $? "busy: SIGTERM to the recorder alone ends target and worker, then the recorder"
[ "$RC" -eq 143 ]; ok $? "busy: record exits 128 + 15, as SIGTERM ended the target (got $RC)"
report_json "$TMP/busy.data" "$TMP/busy.json"
check "busy: the target died of the forwarded SIGTERM, both processes recorded" -- \
	q "$TMP/busy.json" "exit(0 if s['processes'] == 2 and row('tick')['calls'] > 0 and s['exit_status'] & 0x7f == 15 else 1)"
check "busy: nothing is left running" -- sh -c "! pgrep -f '$TMP/dm [b]usy' >/dev/null"

start stubborn
kill -INT $R
sleep 1
kill -0 $R 2>/dev/null; ok $? "stubborn: the first SIGINT is forwarded; the target ignores it, the recorder waits"
kill -INT $R
stopped 5; ok $? "stubborn: a second SIGINT ends the recorder at once"
[ "$RC" -eq 130 ]; ok $? "stubborn: record exits 128 + 2, told twice by SIGINT before the target ended (got $RC)"
kill "$(cat "$TMP/pid")" 2>/dev/null
report_json "$TMP/stubborn.data" "$TMP/stubborn.json"
check "stubborn: what it recorded is written (tick $(q "$TMP/stubborn.json" "row('tick')['calls']"))" -- \
	q "$TMP/stubborn.json" "exit(0 if row('tick')['calls'] > 100 and row('main')['calls'] == 1 else 1)"

# a child forked by a thread other than the main one (in its thread's
# children list, not the main thread's: before, it never got the SIGINT,
# and the recorder waited on for it)
"$STACKCLOCK" record -m instrument -o "$TMP/tc.data" -- "$TMP/tc" "$TMP/tc.st" 2>"$TMP/tc.err" &
R=$!
for _ in $(seq 100); do [ -s "$TMP/tc.st" ] && break; sleep 0.1; done
kid=$(for p in $(cat "/proc/$R/task/$R/children"); do cat /proc/"$p"/task/*/children; done)
kill -INT $R
stopped 5; ok $? "SIGINT to the recorder alone reaches a child forked by a second thread; the recorder ends"
ok $([ "$(cat "$TMP/tc.st")" = "child SIGINT" ]; echo $?) "the child got the SIGINT ($(cat "$TMP/tc.st"))"
kill -KILL $kid 2>/dev/null
true
