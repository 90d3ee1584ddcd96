#!/usr/bin/env bash
# san: skip (the runtime and the targets are never sanitized)
# Functions inlined into one host keep their hooks (-finstrument-functions)
# and all pass the host's return address as their call site: no repair
# where nothing unwinds, exact counts (issue 17: a SQLite workload showed
# 2.9 M repairs, all of this kind).
. "$(dirname "$0")/lib.sh"
for cc in gcc clang; do
	$cc -O2 -g -finstrument-functions -o "$TMP/inl_$cc" "$PROGS/e2e_inlined.c" || exit 1
	check "$cc: recorded" -- "$STACKCLOCK" record -m instrument -o "$TMP/$cc.data" -- "$TMP/inl_$cc" 1000
	report_json "$TMP/$cc.data" "$TMP/$cc.json"
	check "$cc: no repair ($(q "$TMP/$cc.json" "s['repairs']")), nothing lost, no open frame" -- \
		q "$TMP/$cc.json" "exit(0 if (s['repairs'], s['lost_events'], s['open_frames']) == (0, 0, 0) else 1)"
	check "$cc: exact counts (host 1000, leaf 240000, in100 1000, in101 1000, inner 80000)" -- \
		q "$TMP/$cc.json" "exit(0 if [row(f)['calls'] for f in ('host', 'leaf', 'in100', 'in101', 'inner')] == [1000, 240000, 1000, 1000, 80000] else 1)"
	report_json "$TMP/$cc.data" "$TMP/${cc}_tree.json" --tree --threshold 0
	check "$cc: the inlined functions are children of host, inner a child of the odd ones" -- \
		q "$TMP/${cc}_tree.json" "exit(0 if node('host', 'in100')['calls'] == 1000 and node('host', 'in101', 'inner')['calls'] == 1000 and node('host', 'in101', 'inner', 'leaf')['calls'] == 1000 else 1)"
done
