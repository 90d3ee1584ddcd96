#!/usr/bin/env bash
# serial (compares times with the machine's own)
# Instrumentation of long-lived programs: 10,000 short threads recorded in
# a 20 MiB shared-memory file system (an ended thread gives its spare
# memory back: about 1.3 KB stays per thread, 35 MB would not fit; with
# 16 MiB a CI run once lost 8 events to a full file system, which 4 runs
# by hand did not repeat: the margin was thin), and a program that
# re-execs itself 3000 times: every image kept,
# exact counts, and no slowdown that grows with the number of images (the
# last thousand execs take about as long as the first).
# san: skip (the runtime's memory over 10,000 threads and 3000 execs)
. "$(dirname "$0")/lib.sh"
build ll e2e_longlived.c -O1 -pthread -finstrument-functions || exit 1

if [ "$(id -u)" = 0 ] && mkdir -p "$TMP/shm" && mount -t tmpfs -o size=20m tmpfs "$TMP/shm" 2>/dev/null; then
	trap 'umount "$TMP/shm"; rm -rf "$TMP"' EXIT
	STACKCLOCK_SHM_DIR=$TMP/shm "$STACKCLOCK" record -m instrument -o "$TMP/t.data" -- "$TMP/ll" threads 10000 2>"$TMP/t.err"
	ok $? "record 10,000 threads with a 20 MiB /dev/shm"
	report_json "$TMP/t.data" "$TMP/t.json"
	check "10,001 threads, worker 10,000 calls, work 30,000, nothing lost ($(q "$TMP/t.json" "(s['threads'], row('work')['calls'], s['lost_events'])"))" -- \
		q "$TMP/t.json" "exit(0 if (s['threads'], row('worker')['calls'], row('work')['calls'], s['lost_events']) == (10001, 10000, 30000, 0) else 1)"
	check "no warning about a full file system" -- sh -c "! grep -q 'is full' '$TMP/t.err'"
fi

"$STACKCLOCK" record -m instrument -o "$TMP/r.data" -- "$TMP/ll" reexec 3000 "$TMP/times" 2>"$TMP/r.err"
ok $? "record a program that re-execs itself 3000 times"
report_json "$TMP/r.data" "$TMP/r.json"
check "1 process of 3001 images (an exec keeps the process and its thread), main and work 3001 calls each ($(q "$TMP/r.json" "(s['processes'], s['images'], s['threads'], row('work')['calls'])"))" -- \
	q "$TMP/r.json" "exit(0 if (s['processes'], s['images'], s['threads'], row('main')['calls'], row('work')['calls'], s['exit_status']) == (1, 3001, 1, 3001, 3001, 0) else 1)"
check "the table says it: 1 process (3001 images: execs), 1 thread" -- \
	sh -c "'$STACKCLOCK' report -i '$TMP/r.data' | grep -q '1 process (3,\\?001 images: execs), 1 thread'"
# times: "N ns" at N = 3000, 2000, 1000, 0
first=$(awk 'NR == 1 { a = $2 } NR == 2 { printf "%.0f", $2 - a }' "$TMP/times")
last=$(awk 'NR == 3 { a = $2 } NR == 4 { printf "%.0f", $2 - a }' "$TMP/times")
# a slowdown that grows with the images would make it about 5 times
check "the last 1000 execs take at most 2.5 times the first 1000 ($((first / 1000000)) ms, $((last / 1000000)) ms)" -- \
	test "$((last * 10))" -le "$((first * 25))"
