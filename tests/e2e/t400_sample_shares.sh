#!/usr/bin/env bash
# serial (compares CPU shares or durations with the clock)
# Sampling end to end on -O2 code without frame pointers: known CPU shares
# (50/30/20 below a middle function), complete stacks, per-thread counts
# that follow CPU time, a forked child, attaching to a running process.
# san: skip (sampling accuracy of the targets; the sanitized recorder runs in t100-t107)
. "$(dirname "$0")/lib.sh"
build e2e_shares e2e_shares.c -O2 -fomit-frame-pointer || exit 1
D=$TMP/s.data
check "record (sampling, default method)" -- "$STACKCLOCK" record -F 999 -o "$D" -- "$TMP/e2e_shares" 4000
report_json "$D" "$TMP/s.json"
n=$(q "$TMP/s.json" "s['samples']")
check "999 Hz for 4 s of CPU: $n samples" -- q "$TMP/s.json" "exit(0 if 3400 <= s['samples'] <= 4600 else 1)"
pct() { q "$TMP/s.json" "round(100.0 * row('$1')['exclusive_samples'] / sum(row(f)['exclusive_samples'] for f in ('part_a','part_b','part_c')), 1)"; }
for f in "part_a 50" "part_b 30" "part_c 20"; do
	set -- $f
	check "$1 exclusive share $(pct "$1")% within 3 points of $2%" -- \
		q "$TMP/s.json" "exit(0 if abs(100.0 * row('$1')['exclusive_samples'] / sum(row(f)['exclusive_samples'] for f in ('part_a','part_b','part_c')) - $2) <= 3 else 1)"
done
check "middle's inclusive samples equal its children's (within 1%)" -- \
	q "$TMP/s.json" "exit(0 if abs(row('middle')['inclusive_samples'] - sum(row(f)['inclusive_samples'] for f in ('part_a','part_b','part_c'))) <= 0.01 * row('middle')['inclusive_samples'] + 2 else 1)"
check "main is near 100% inclusive ($(q "$TMP/s.json" "row('main')['inclusive_pct']")%)" -- \
	q "$TMP/s.json" "exit(0 if row('main')['inclusive_pct'] >= 97 else 1)"
check "stacks reach the root: $(q "$TMP/s.json" "s['root_reached_pct']")% >= 95%" -- \
	q "$TMP/s.json" "exit(0 if s['root_reached_pct'] >= 95 else 1)"
report_json "$D" "$TMP/l.json" --by line
check "line rows carry file and line of e2e_shares.c" -- \
	q "$TMP/l.json" "exit(0 if any(str(x.get('file','')).endswith('e2e_shares.c') and x['line'] > 0 for x in rows) else 1)"
for by in module thread process address; do
	report_json "$D" "$TMP/$by.json" --by $by
done

build e2e_cputhreads e2e_cputhreads.c -O2 -fomit-frame-pointer -pthread || exit 1
T=$TMP/t.data
check "record threads + fork" -- sh -c "'$STACKCLOCK' record -o '$T' -- '$TMP/e2e_cputhreads' > '$TMP/cpu.txt'"
report_json "$T" "$TMP/th.json" --by thread
check "per-thread samples follow per-thread CPU time (within 15%)" -- python3 - "$TMP/th.json" "$TMP/cpu.txt" <<'PY'
import json, sys
rows = {x["tid"]: x for x in json.load(open(sys.argv[1]))["rows"]}
bad = 0
for line in open(sys.argv[2]):
    tid, cpu = map(int, line.split())
    expect = cpu / 1e9 * 999
    got = rows.get(tid, {}).get("exclusive_samples", 0)
    print("# tid %d: %d samples for %.0f expected" % (tid, got, expect))
    bad |= abs(got - expect) > 0.15 * expect
sys.exit(bad)
PY
report_json "$T" "$TMP/pr.json" --by process
check "the forked child is a process of its own" -- q "$TMP/pr.json" "exit(0 if len(set(x['pid'] for x in rows)) >= 2 else 1)"
check "child_spin is found in the child" -- sh -c "'$STACKCLOCK' report -i '$T' --format csv | grep -q child_spin"

"$TMP/e2e_shares" 3000 &
pid=$!
sleep 0.3
check "attach with -p for 1 s" -- "$STACKCLOCK" record -p "$pid" --duration 1 -o "$TMP/a.data"
kill -0 "$pid" 2>/dev/null
ok $? "the attached process is still running after record"
wait "$pid"
report_json "$TMP/a.data" "$TMP/a.json"
check "attach: at most 1 s of samples ($(q "$TMP/a.json" "s['samples']")), middle on the stacks" -- \
	q "$TMP/a.json" "exit(0 if 200 <= s['samples'] <= 1100 and row('middle')['inclusive_pct'] > 90 else 1)"
