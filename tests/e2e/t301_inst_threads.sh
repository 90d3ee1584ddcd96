#!/usr/bin/env bash
# Instrumentation: 8 threads x 200,000 calls at once are all counted.
. "$(dirname "$0")/lib.sh"
build e2e_threads e2e_threads.c -O1 -pthread -finstrument-functions || exit 1
D=$TMP/t.data
check "record 8 threads" -- "$STACKCLOCK" record -m instrument -o "$D" -- "$TMP/e2e_threads" 8 200000
report_json "$D" "$TMP/t.json"
check "work() called exactly 1,600,000 times ($(q "$TMP/t.json" "row('work')['calls']"))" -- \
	q "$TMP/t.json" "exit(0 if row('work')['calls'] == 1600000 else 1)"
check "thread_main() called 8 times" -- q "$TMP/t.json" "exit(0 if row('thread_main')['calls'] == 8 else 1)"
check "no lost events, no repairs" -- q "$TMP/t.json" "exit(0 if s['lost_events'] == 0 and s['repairs'] == 0 else 1)"
check "session counts 9 threads" -- q "$TMP/t.json" "exit(0 if s['threads'] == 9 else 1)"
report_json "$D" "$TMP/th.json" --by thread
check "--by thread has 9 rows with distinct tids" -- \
	q "$TMP/th.json" "exit(0 if len(rows) == 9 and len(set(x['tid'] for x in rows)) == 9 else 1)"
report_json "$D" "$TMP/m.json" --by module
check "--by module names the program" -- q "$TMP/m.json" "exit(0 if any(x['module'].endswith('e2e_threads') for x in rows) else 1)"

# The same with clang's -finstrument-functions.
if command -v clang >/dev/null; then
	clang -g -O1 -pthread -finstrument-functions -o "$TMP/e2e_threads_clang" "$PROGS/e2e_threads.c"
	check "record (clang build)" -- "$STACKCLOCK" record -m instrument -o "$TMP/c.data" -- "$TMP/e2e_threads_clang" 4 50000
	report_json "$TMP/c.data" "$TMP/c.json"
	check "clang build: work() called exactly 200,000 times" -- q "$TMP/c.json" "exit(0 if row('work')['calls'] == 200000 else 1)"
else
	ok 1 "clang is installed (apt-get install clang)"
fi
