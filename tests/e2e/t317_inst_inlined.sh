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

# One function inlined into host and called out of line from it through a
# pointer (e2e_inl_mixed.c, g++'s std::__relocate_a in vector growth): one
# calling-context node, two frame shapes; the offset learned from the first
# placed the other's frame too low and its own callee closed it (102 repairs
# a run of 1000, t317 before the fix).
for cc in gcc clang; do
	$cc -O2 -g -finstrument-functions -o "$TMP/mixed_$cc" "$PROGS/e2e_inl_mixed.c" || exit 1
	"$STACKCLOCK" record -m instrument -o "$TMP/mx_$cc.data" -- "$TMP/mixed_$cc" 1000 >/dev/null 2>&1
	report_json "$TMP/mx_$cc.data" "$TMP/mx_$cc.json"
	check "$cc: a function inlined and called out of line: no repair ($(q "$TMP/mx_$cc.json" "s['repairs']")), exact counts (host 1000, step, leaf, other 2000)" -- \
		q "$TMP/mx_$cc.json" "exit(0 if s['repairs'] == 0 and [row(f)['calls'] for f in ('host', 'step', 'leaf', 'other')] == [1000, 2000, 2000, 2000] else 1)"
done

# A function's position from the hook's own call (e2e_cfa_alias.c, the
# frames' sizes fixed in assembly): leaf inlined into big, whose frame is
# twice rec's, then into rec recursing from one call site.  Kept per
# function, leaf's offset from big found rec(1)'s return address slot, the
# same call site as rec(0)'s, and closed rec(0): 2 repairs a round.
gcc -O1 -g -o "$TMP/cfa_alias" "$PROGS/e2e_cfa_alias.c" || exit 1
"$STACKCLOCK" record -m instrument -o "$TMP/ca.data" -- "$TMP/cfa_alias" 5 >/dev/null 2>&1
report_json "$TMP/ca.data" "$TMP/ca.json"
report_json "$TMP/ca.data" "$TMP/ca_tree.json" --tree --threshold 0
check "leaf inlined into a recursion from one call site: no repair ($(q "$TMP/ca.json" "s['repairs']")), exact counts (big 5, rec 20, leaf 10)" -- \
	q "$TMP/ca.json" "exit(0 if s['repairs'] == 0 and [row(f)['calls'] for f in ('big', 'rec', 'leaf')] == [5, 20, 10] else 1)"
check "leaf a child of rec(0) (5 calls at depth 5) and of big (5)" -- \
	q "$TMP/ca_tree.json" "exit(0 if node('rec', 'rec', 'rec', 'rec', 'leaf')['calls'] == 5 and node('big', 'leaf')['calls'] == 5 else 1)"

# SPEC section 14: the session's resolution (the probe cost removed from one
# call) and the rows under it marked in every view: leaf (a few ns a call)
# is, main (the whole run in one call) is not
data=$TMP/gcc.data json=$TMP/gcc.json
check "resolution_ns is twice the probe cost per event ($(q "$json" "s['resolution_ns']") ns)" -- \
	q "$json" "exit(0 if s['resolution_ns'] == int(2 * s['probe_cost_ns'] + 0.5) > 0 else 1)"
# leaf takes a few ns a call on a quiet machine; under a CPU hog the
# preemptions that land in its intervals can lift its mean over the line
# (seen in CI): the views are then checked on the flagged row with the most
# calls, and the message says which
low=$(q "$json" "next(iter(sorted((x for x in rows if x['below_resolution']), key=lambda x: (x['function'] != 'leaf', -x['calls']))), {'function': ''})['function']")
check "JSON: the flag is EE per call < resolution on every row; main not flagged; '$low' flagged (leaf: $(q "$json" "round(row('leaf')['elapsed_exclusive_ns'] / row('leaf')['calls'], 1)") ns a call)" -- \
	q "$json" "exit(0 if '$low' and not row('main')['below_resolution'] and all(x['below_resolution'] == (x['calls'] > 0 and x['elapsed_exclusive_ns'] < x['calls'] * s['resolution_ns']) for x in rows) else 1)"
"$STACKCLOCK" report -i "$data" --format csv >"$TMP/r.csv"
check "CSV: a below_resolution column, true for $low and false for main" -- \
	python3 -c "import csv,sys; r={x['function']: x for x in csv.DictReader(open('$TMP/r.csv'))}; sys.exit(0 if (r['$low']['below_resolution'], r['main']['below_resolution']) == ('true', 'false') else 1)"
"$STACKCLOCK" report -i "$data" --top 0 >"$TMP/r.txt"
check "table: '~' before $low, not before main, and the note says what it means" -- \
	sh -c "grep -qE ' ~$low\$' '$TMP/r.txt' && grep -qE '  main\$' '$TMP/r.txt' && grep -q '^~ below the resolution' '$TMP/r.txt'"
"$STACKCLOCK" report -i "$data" --tree --threshold 0 >"$TMP/t.txt"
check "tree: $low's nodes marked '~', main's not" -- \
	sh -c "grep -qE '^ +[0-9.]+.* [0-9]+~. +.*$low\$' '$TMP/t.txt' && grep -qE '^ .* +1 \\* main\$' '$TMP/t.txt'"
if command -v chromium >/dev/null; then
	"$STACKCLOCK" export -i "$data" --format html -o "$TMP/r.html"
	timeout 120 chromium --headless --no-sandbox --disable-gpu --disable-background-networking \
		--disable-component-update --disable-sync --no-first-run --user-data-dir="$TMP/chr" \
		--dump-dom "file://$TMP/r.html" >"$TMP/dom.html" 2>/dev/null
	check "HTML: $low's table cell marked below the resolution, main's not" -- \
		sh -c "grep -q 'class=\"text name below-res\"[^>]*>$low<' '$TMP/dom.html' && grep -q 'class=\"text name\"[^>]*>main<' '$TMP/dom.html'"
else
	echo "ok # skip HTML check: no chromium"
fi
