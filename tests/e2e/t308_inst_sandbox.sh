#!/usr/bin/env bash
# Instrumentation of a program that enters seccomp (strict mode, or a
# filter that kills on mmap, fallocate, perf_event_open ...) and then needs
# more profile memory: the target runs unchanged, the runtime records from
# the reserve it committed before the sandbox closed, and the user is told.
. "$(dirname "$0")/lib.sh"
build sb e2e_sandbox.c -O1 -finstrument-functions || exit 1
for mode in strict filter; do
	"$STACKCLOCK" record -m instrument -o "$TMP/$mode.data" -- "$TMP/sb" $mode >"$TMP/$mode.out" 2>"$TMP/$mode.err"
	ok $? "$mode: recorded"
	report_json "$TMP/$mode.data" "$TMP/$mode.json"
	check "$mode: the target is not killed (exit status $(q "$TMP/$mode.json" "s['exit_status']")) and ran to its end" -- \
		sh -c "grep -qx sandboxed '$TMP/$mode.out' && python3 '$E2E_DIR/sc.py' query '$TMP/$mode.json' \"exit(0 if s['exit_status'] == 0 else 1)\""
	check "$mode: exact counts inside the sandbox: after 100000, leaf 100101, deep 5000, late 1" -- \
		q "$TMP/$mode.json" "exit(0 if (row('before')['calls'], row('after')['calls'], row('leaf')['calls'], row('deep')['calls'], row('late')['calls'], s['lost_events']) == (100, 100000, 100101, 5000, 1, 0) else 1)"
	check "$mode: the user is told about the sandbox" -- grep -q "entered a seccomp sandbox" "$TMP/$mode.err"
done
