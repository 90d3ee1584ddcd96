#!/usr/bin/env bash
# report on a real instrumentation recording: every grouping and format,
# --check on each, JSON parsed back, CSV read with Python's csv module,
# exact call counts, recursion charged once, --sort and --top, 80 columns.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/rep_lib.sh"
build rep_calls rep_calls.c -O1 -finstrument-functions || exit 1
D=$TMP/i.data
# the program's own rows (library calls: t319)
check "record -m instrument" -- "$STACKCLOCK" record -m instrument --libcalls=none -o "$D" -- "$TMP/rep_calls" recurse

report_every_format "$D" function module thread process

J=$TMP/function.json
check "work() called exactly 1004 times" -- q "$J" "exit(0 if row('work')['calls'] == 1004 else 1)"
check "rec() called 11 times, charged once: EI equals its outermost call" -- \
	q "$J" "exit(0 if row('rec')['calls'] == 11 and abs(row('rec')['elapsed_inclusive_ns'] - row('rec')['max_elapsed_inclusive_ns']) <= 2 else 1)"
check "nest's EI covers its three work() calls" -- \
	q "$J" "exit(0 if row('nest')['elapsed_inclusive_ns'] >= row('nest')['elapsed_exclusive_ns'] else 1)"
check "driver's EI is exactly the EE of everything below it" -- \
	q "$J" "exit(0 if row('driver')['elapsed_inclusive_ns'] == sum(x['elapsed_exclusive_ns'] for x in rows if x['function'] != 'main') else 1)"
check "EI% of main is 100" -- q "$J" "exit(0 if abs(row('main')['elapsed_inclusive_pct'] - 100) < 1e-6 else 1)"
check "percentages follow SPEC's definitions exactly" -- \
	q "$J" "exit(0 if all(abs(x['elapsed_exclusive_pct'] - 100.0 * x['elapsed_exclusive_ns'] / s['elapsed_inclusive_ns']) < 1e-3 and abs(x['application_exclusive_pct'] - 100.0 * x['application_exclusive_ns'] / max(1, s['application_inclusive_ns'])) < 1e-3 for x in rows) else 1)"
check "per-call mean lies between min and max" -- \
	q "$J" "exit(0 if all(x['min_elapsed_inclusive_ns'] <= x['mean_elapsed_inclusive_ns'] <= x['max_elapsed_inclusive_ns'] for x in rows if x['completed']) else 1)"
check "CSV header is exactly the SPEC column names" -- \
	test "$(head -1 "$TMP/function.csv")" = "function,module,calls,elapsed_inclusive_ns,elapsed_exclusive_ns,application_inclusive_ns,application_exclusive_ns,elapsed_inclusive_pct,elapsed_exclusive_pct,application_inclusive_pct,application_exclusive_pct,sampled_inclusive_pct,sampled_exclusive_pct,below_resolution,min_elapsed_inclusive_ns,max_elapsed_inclusive_ns,mean_elapsed_inclusive_ns,min_elapsed_exclusive_ns,max_elapsed_exclusive_ns,mean_elapsed_exclusive_ns,completed"
check "CSV keeps the long name whole" -- grep -q '^a_function_with_a_rather_long_name_to_shorten_in_tables,' "$TMP/function.csv"
check "table summary names the method, OS events and repairs" -- \
	sh -c "grep -q '^Instrumentation profile of: .*rep_calls recurse' '$TMP/function.table' && grep -q '^OS events:' '$TMP/function.table' && grep -q '^Repairs 0, open frames 0, lost events 0' '$TMP/function.table'"
check "thread and process rows total the session" -- \
	q "$TMP/thread.json" "exit(0 if sum(x['elapsed_inclusive_ns'] for x in rows) == s['elapsed_inclusive_ns'] and rows[0]['tid'] > 0 else 1)"

check "--sort calls orders by calls" -- sh -c "'$STACKCLOCK' report -i '$D' --format json --sort calls > '$TMP/sc.json'"
check "  ... descending" -- q "$TMP/sc.json" "exit(0 if [x['calls'] for x in rows] == sorted((x['calls'] for x in rows), reverse=True) and rows[0]['function'] == 'work' else 1)"
check "--sort function orders names ascending" -- sh -c "'$STACKCLOCK' report -i '$D' --format json --sort function > '$TMP/sf.json'"
check "  ... ascending" -- q "$TMP/sf.json" "exit(0 if [x['function'] for x in rows] == sorted(x['function'] for x in rows) else 1)"
check "--sort ae (alias) and --top 3" -- sh -c "'$STACKCLOCK' report -i '$D' --format json --sort ae --top 3 > '$TMP/st.json'"
check "  ... 3 rows, AE descending, rows_total counts them all" -- \
	q "$TMP/st.json" "exit(0 if len(rows) == 3 and rows[0]['application_exclusive_ns'] >= rows[2]['application_exclusive_ns'] and s['rows_total'] > 3 else 1)"
check "--top 2 in a table" -- sh -c "'$STACKCLOCK' report -i '$D' --top 2 | grep -q '(2 of'"
check "--app-time=exact --check" -- sh -c "'$STACKCLOCK' report -i '$D' --app-time=exact --format json --check > '$TMP/ex.json'"
invariants "$TMP/ex.json"
check "  ... says so in the session" -- q "$TMP/ex.json" "exit(0 if s['app_time'] == 'exact' else 1)"

# call sites, on a run without recursion
D2=$TMP/n.data
check "record without recursion" -- "$STACKCLOCK" record -m instrument -o "$D2" -- "$TMP/rep_calls"
check "report --by callsite --check" -- sh -c "'$STACKCLOCK' report -i '$D2' --by callsite --format json --check > '$TMP/cs.json'"
invariants "$TMP/cs.json"
check "call sites name caller, callee and the caller's line" -- \
	q "$TMP/cs.json" "exit(0 if len(set(x['line'] for x in rows if x['function'] == 'nest' and x['callee'] == 'work' and x['calls'] == 1 and x['file'].endswith('rep_calls.c'))) == 3 else 1)"
check "work() called from five lines: 1000 + 1 + 1 + 1 + 1" -- \
	q "$TMP/cs.json" "exit(0 if sorted(x['calls'] for x in rows if x['callee'] == 'work') == [1, 1, 1, 1, 1000] else 1)"
check "callsite table of --width 80 fits 80 columns" -- sh -c "'$STACKCLOCK' report -i '$D2' --by callsite --width 80 | awk 'length > 80 { bad = 1 } END { exit bad }'"
# which thread left frames open (pthread_exit two frames deep) or needed repairs
build inst_basic inst_basic.c -O1 -pthread -finstrument-functions -ldl || exit 1
D3=$TMP/u.data
check "record a thread that ends in pthread_exit" -- "$STACKCLOCK" record -m instrument -o "$D3" -- "$TMP/inst_basic" pexit
check "report --by thread --format json --check" -- \
	sh -c "'$STACKCLOCK' report -i '$D3' --by thread --format json --check > '$TMP/ut.json'"
check "thread rows: the exiting thread has 3 open frames (2 and pthread_exit's, SPEC 11), main none; they add up to the session's" -- \
	q "$TMP/ut.json" "exit(0 if sorted(x['open_frames'] for x in rows) == [0, 3] and sum(x['open_frames'] for x in rows) == s['open_frames'] and sum(x['repairs'] for x in rows) == s['repairs'] == 0 else 1)"
check "process rows carry them too" -- \
	sh -c "'$STACKCLOCK' report -i '$D3' --by process --format csv | python3 -c 'import csv, sys; r = list(csv.DictReader(sys.stdin)); sys.exit(0 if [(x[\"open_frames\"], x[\"repairs\"]) for x in r] == [(\"3\", \"0\")] else 1)'"
echo "1..$_n"
