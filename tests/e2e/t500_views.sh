#!/usr/bin/env bash
# serial (compares CPU shares with the known work split)
# The call-stack views (SPEC sections 6 and 7) on a program of known
# structure (tests/progs/views_prog.c), by both methods: the call tree
# (shares, exact calls, hot path, recursion, threshold, depth, a table
# readable 40 levels deep), callers and callees (the split adds up), an
# unknown name, and diff (matching by function and module file name, new
# and vanished rows, refusing to mix methods).  SPEC's invariants are
# checked on every view by `--check` and independently by sc.py.
. "$(dirname "$0")/lib.sh"

# view NAME DATA [REPORT OPTIONS...]: JSON of a view into $TMP/NAME.json,
# with --check, then sc.py's invariants on it (two TAP lines).
view() {
	local name=$1 data=$2; shift 2
	check "report $* --check" -- _report_into "$TMP/$name.json" -i "$data" --format json --check "$@"
	invariants "$TMP/$name.json"
}
# near FILE EXPR WANT TOL MESSAGE: |eval(EXPR) - WANT| <= TOL
near() {
	local got
	got=$(q "$1" "round($2, 4)")
	check "$5: $got, want $3 +- $4" -- awk -v g="$got" -v w="$3" -v t="$4" 'BEGIN { d = g - w; exit !(d <= t && -d <= t) }'
}

build vi views_prog.c -O2 -fno-inline -fno-optimize-sibling-calls -finstrument-functions || exit 1
mkdir -p "$TMP/v2" && cc -g -O2 -fno-inline -fno-optimize-sibling-calls -finstrument-functions -DVARIANT \
	-o "$TMP/v2/vi" "$PROGS/views_prog.c" || exit 1
# the program's own rows (main's library calls would be more hidden children)
check "record (instrumentation)" -- "$STACKCLOCK" record -m instrument --libcalls=none -o "$TMP/i.data" -- "$TMP/vi" 20000000

# ---- instrumentation: tree ----
# Shares by application time with measured OS time removed: the machine
# may be shared, and elapsed time counts the time other programs ran.
view it "$TMP/i.data" --tree --app-time exact
EI=elapsed_inclusive_ns
AI=application_inclusive_ns
check "calls: work_a 6, its common 6, work_b's common 1, spin under work_a 6" -- q "$TMP/it.json" \
	"exit(0 if (node('main','work_a')['calls'], node('work_a','common')['calls'], node('work_b','common')['calls'], node('work_a','common','spin')['calls']) == (6, 6, 1, 6) else 1)"
near "$TMP/it.json" "node('main','work_a')['$AI'] / node('main')['$AI']" 0.5455 0.05 "work_a's share of main"
near "$TMP/it.json" "node('main','work_b')['$AI'] / node('main')['$AI']" 0.2727 0.05 "work_b's share of main"
near "$TMP/it.json" "node('main','rec')['$AI'] / node('main')['$AI']" 0.1818 0.05 "rec's share of main"
check "hot path (by EI) from main: main, then every child holding half of its parent" -- q "$TMP/it.json" \
	"exit(0 if [n['function'] for n in nodes if n['hot']] == ['main'] + (['work_a','common','spin'] if 2 * node('main','work_a')['$EI'] >= node('main')['$EI'] else []) else 1)"
check "recursion: 6 nested rec nodes, one call each, spin under the innermost" -- q "$TMP/it.json" \
	"exit(0 if node('main','rec','rec','rec','rec','rec','rec','spin')['calls'] == 1 and all(n['calls'] == 1 for n in nodes if n['function'] == 'rec') else 1)"
view it40 "$TMP/i.data" --tree --threshold 40
check "--threshold 40 hides work_b (27%) and rec (18%) under main, says so" -- q "$TMP/it40.json" \
	"exit(0 if node('main')['hidden'] == 2 and [c['function'] for c in node('main')['children']] == ['work_a'] else 1)"
view itd "$TMP/i.data" --tree --depth 2
check "--depth 2: no node below main's children" -- q "$TMP/itd.json" \
	"exit(0 if all(not c['children'] for c in node('main')['children']) and node('main','work_a')['hidden'] == 1 else 1)"
"$STACKCLOCK" report -i "$TMP/i.data" --tree --format csv >"$TMP/it.csv"
check "CSV tree: one line per JSON node, parent ids rebuild it" -- python3 - "$TMP/it.csv" "$TMP/it.json" <<'PY'
import csv, json, sys
sys.path.insert(0, __import__("os").path.dirname(sys.argv[0]) or ".")
rows = list(csv.DictReader(open(sys.argv[1])))
def walk(ns):
    for n in ns:
        yield n
        yield from walk(n["children"])
nodes = list(walk(json.load(open(sys.argv[2]))["tree"]))
ids = {r["id"]: r for r in rows}
ok = len(rows) == len(nodes) and all(r["parent"] == "" or r["parent"] in ids for r in rows)
ok = ok and [r["function"] for r in rows] == [n["function"] for n in nodes]
ok = ok and all(int(r["elapsed_inclusive_ns"]) == n["elapsed_inclusive_ns"] for r, n in zip(rows, nodes))
sys.exit(0 if ok else 1)
PY

# ---- instrumentation: callers and callees ----
view ic "$TMP/i.data" --caller-callee common --app-time exact
check "callers of common: work_a 6 calls, work_b 1; callee spin 7 calls" -- q "$TMP/ic.json" \
	"exit(0 if sorted((c['function'], c['calls']) for c in callers) == [('work_a', 6), ('work_b', 1)] and [(c['function'], c['calls']) for c in callees] == [('spin', 7)] else 1)"
near "$TMP/ic.json" "[c for c in callers if c['function'] == 'work_a'][0]['$AI'] / fn['$AI']" 0.857 0.05 "work_a's share of common"
view ir "$TMP/i.data" --caller-callee rec
check "rec: callers main (1 call, all the time) and rec (5 calls, no time: not outermost)" -- q "$TMP/ir.json" \
	"exit(0 if [(c['function'], c['calls']) for c in callers] == [('main', 1), ('rec', 5)] and callers[0]['$EI'] == fn['$EI'] and callers[1]['$EI'] == 0 else 1)"
check "rec: callees spin (1 call, all but rec's own time) and rec (5 calls, no time: not innermost)" -- q "$TMP/ir.json" \
	"exit(0 if [(c['function'], c['calls']) for c in callees] == [('spin', 1), ('rec', 5)] and callees[0]['$EI'] == fn['$EI'] - fn['elapsed_exclusive_ns'] and callees[1]['$EI'] == 0 else 1)"
"$STACKCLOCK" report -i "$TMP/i.data" --caller-callee comon >/dev/null 2>"$TMP/err"
rc=$?
check "an unknown name fails in one line suggesting the closest ($(cat "$TMP/err"))" -- \
	sh -c "[ $rc -eq 1 ] && [ \$(wc -l <'$TMP/err') -eq 1 ] && grep -q \"closest names: common\" '$TMP/err'"

# ---- a table 40 levels deep ----
check "record 40 nested calls" -- "$STACKCLOCK" record -m instrument -o "$TMP/d.data" -- "$TMP/vi" 400000 40
"$STACKCLOCK" report -i "$TMP/d.data" --tree --threshold 0 --width 80 >"$TMP/deep.txt"
check "deep tree table: every line within 80 columns, rec at depth 42 shown" -- sh -c \
	"awk 'length > 80 { exit 1 }' '$TMP/deep.txt' || exit 1; grep -qE ' 42[ ~].* > rec\$' '$TMP/deep.txt'"
check "an only child keeps its parent's column (the rec chain does not drift right)" -- sh -c \
	"[ \$(grep -E '> rec\$' '$TMP/deep.txt' | sed 's/> rec\$//' | awk '{ print length }' | sort -u | wc -l) -eq 1 ]"

# ---- diff ----
check "record the variant build (rec replaced by extra)" -- \
	"$STACKCLOCK" record -m instrument -o "$TMP/i2.data" -- "$TMP/v2/vi" 4000000
"$STACKCLOCK" diff "$TMP/i.data" "$TMP/i2.data" --format json >"$TMP/diff.json"
ok $? "diff of two builds in different directories"
check "rows match by function and module file name; rec vanished, extra new" -- q "$TMP/diff.json" \
	"exit(0 if {x['function']: x['status'] for x in rows if x['function'] in ('work_a','rec','extra')} == {'work_a': 'both', 'rec': 'vanished', 'extra': 'new'} else 1)"
check "delta = new - base; a vanished row counts 0 on the new side" -- q "$TMP/diff.json" \
	"exit(0 if all(x['delta_calls'] == x['new_calls'] - x['base_calls'] and x['delta_$EI'] == x['new_$EI'] - x['base_$EI'] for x in rows) and [x for x in rows if x['function'] == 'rec'][0]['new_calls'] == 0 else 1)"
check "default sort: largest |delta of EE%| first" -- q "$TMP/diff.json" \
	"exit(0 if [abs(x['delta_elapsed_exclusive_pct']) for x in rows] == sorted([abs(x['delta_elapsed_exclusive_pct']) for x in rows], reverse=True) else 1)"
check "diff --sort delta_calls --top 2 --format csv" -- sh -c \
	"'$STACKCLOCK' diff '$TMP/i.data' '$TMP/i2.data' --sort delta_calls --top 2 --format csv | awk -F, 'NR == 1 && /delta_elapsed_exclusive_pct/ { h = 1 } END { exit !(h && NR == 3) }'"
"$STACKCLOCK" diff "$TMP/i.data" "$TMP/i2.data" --sort calls >"$TMP/diff_calls.txt"
ok $? "diff --sort calls (table)"
check "... the table shows the calls it is sorted by: header, then base, new and delta of each row as in JSON" -- \
	python3 - "$TMP/diff_calls.txt" "$TMP/diff.json" <<'PY'
import json, sys
lines = open(sys.argv[1]).read().split("\n")
assert any("rows by |delta calls|" in l for l in lines), lines[:8]
head = next(i for i, l in enumerate(lines) if l.rstrip().endswith("calls") and "exclusive" in l)
rows = {x["function"]: x for x in json.load(open(sys.argv[2]))["rows"]}
def count(v):   # the table's count format, 6 digits at most
    return str(v) if v < 10**6 else "%.1fM" % (v / 1e6)
seen = 0
for l in lines[head + 2:]:
    f = l.split()
    if len(f) < 7 or f[-1] not in rows:
        continue
    x = rows[f[-1]]
    d = x["delta_calls"]
    want = [count(x["base_calls"]) if x["status"] != "new" else "-",
            count(x["new_calls"]) if x["status"] != "vanished" else "-",
            ("+" if d > 0 else "-" if d < 0 else "") + count(abs(d))]
    assert f[3:6] == want, (l, want)
    seen += 1
assert seen == len(rows), (seen, len(rows))
PY

# ---- sampling ----
build vs views_prog.c -O2 -fno-inline -fno-optimize-sibling-calls || exit 1
check "record (sampling)" -- "$STACKCLOCK" record -F 999 -o "$TMP/s.data" -- "$TMP/vs" 60000000
view st "$TMP/s.data" --tree
IS=inclusive_samples
near "$TMP/st.json" "node('main','work_a')['$IS'] / node('main')['$IS']" 0.5455 0.06 "sampling: work_a's share of main"
near "$TMP/st.json" "node('main','rec')['$IS'] / node('main')['$IS']" 0.1818 0.06 "sampling: rec's share of main"
check "sampling: main > work_a > common > spin on the hot path, 6 nested rec" -- q "$TMP/st.json" \
	"exit(0 if all(node(*p)['hot'] for p in (('main',), ('main','work_a'), ('work_a','common'), ('work_a','common','spin'))) and not node('main','work_b')['hot'] and node('main','rec','rec','rec','rec','rec','rec','spin') else 1)"
view sth "$TMP/s.data" --tree --by thread
check "sampling: --by thread: one root per thread, main below it, the roots sum to the samples" -- q "$TMP/sth.json" \
	"exit(0 if [x['tid'] for x in r['tree']] and all(x['function'] is None for x in r['tree']) and sum(x['inclusive_samples'] for x in r['tree']) == s['samples'] and node('main')['hot'] else 1)"
view sc "$TMP/s.data" --caller-callee common
near "$TMP/sc.json" "[c for c in callers if c['function'] == 'work_a'][0]['$IS'] / fn['$IS']" 0.857 0.06 "sampling: work_a's share of common"
check "record (sampling) again" -- "$STACKCLOCK" record -F 999 -o "$TMP/s2.data" -- "$TMP/vs" 60000000
"$STACKCLOCK" diff "$TMP/s.data" "$TMP/s2.data" --format json >"$TMP/sdiff.json"
ok $? "diff of two sampling runs"
check "sampling diff: work_a in both, its base equals the base report's row" -- python3 - "$TMP/sdiff.json" "$TMP/st.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
row = [x for x in d["rows"] if x["function"] == "work_a"][0]
sys.exit(0 if row["status"] == "both" and row["base_inclusive_samples"] > 0 and d["base"]["samples"] == json.load(open(sys.argv[2]))["session"]["samples"] else 1)
PY
"$STACKCLOCK" diff "$TMP/i.data" "$TMP/s.data" >/dev/null 2>"$TMP/err"
rc=$?
check "diff refuses instrumentation against sampling in one line ($(cat "$TMP/err"))" -- \
	sh -c "[ $rc -eq 1 ] && [ \$(wc -l <'$TMP/err') -eq 1 ] && grep -q 'same method' '$TMP/err'"
