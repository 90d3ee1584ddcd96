#!/usr/bin/env bash
# Messages that say what happened: the runtime's descriptor cap named as
# such (not "the kernel refused"), report --check failing on a file where
# nothing is readable, and the table's summary lines kept whole when piped.
. "$(dirname "$0")/lib.sh"
build ll e2e_longlived.c -O1 -pthread -finstrument-functions || exit 1

# 8 threads at a time, 4 perf descriptors each; 'ulimit -n 48' caps the
# runtime at 12: some threads go without OS events
(ulimit -n 48; "$STACKCLOCK" record -m instrument -o "$TMP/n.data" -- "$TMP/ll" threads 64) 2>"$TMP/n.err"
ok $? "record 64 threads under 'ulimit -n 48'"
report_json "$TMP/n.data" "$TMP/n.json"
check "every call recorded all the same (work $(q "$TMP/n.json" "row('work')['calls']"))" -- \
	q "$TMP/n.json" "exit(0 if row('work')['calls'] == 192 and s['threads'] == 65 else 1)"
check "the descriptor cap is named, with the limit to raise" -- \
	grep -q "descriptor cap (a quarter of 'ulimit -n', from fd 36 up).*raise 'ulimit -n'" "$TMP/n.err"
check "the same line says the threads' samples are missing too, and no other line blames the kernel" -- \
	sh -c "grep -q 'without OS events or samples.*samples are missing from the shares' '$TMP/n.err' && ! grep -q 'kernel refused to sample' '$TMP/n.err'"
check "the shares cover the threads that were sampled ($(q "$TMP/n.json" "s.get('samples')") samples)" -- \
	q "$TMP/n.json" "exit(0 if s['frequency_hz'] == 999 and 'repairs_by_cause' in s else 1)"

"$STACKCLOCK" record -m instrument -o "$TMP/c.data" -- "$TMP/ll" threads 1 2>/dev/null
head -c 24 "$TMP/c.data" >"$TMP/empty.data"
"$STACKCLOCK" report -i "$TMP/empty.data" --check >/dev/null 2>"$TMP/e.err"
ok $((! $?)) "report --check fails on a file with nothing readable"
check "  ... saying so, with the next step" -- grep -q "nothing in .*empty.data could be read.*record it again" "$TMP/e.err"
"$STACKCLOCK" report -i "$TMP/c.data" --check >/dev/null
ok $? "report --check passes on the whole file"

long=$(printf 'x%.0s' $(seq 120))
"$STACKCLOCK" record -m instrument -o "$TMP/l.data" -- "$TMP/ll" threads 2 "$long" 2>/dev/null
"$STACKCLOCK" report -i "$TMP/l.data" >"$TMP/l.txt"
check "piped, the summary's command line is whole (wrapped, not cut)" -- python3 -c "
import sys
lines = open(sys.argv[1]).read().split('\n')
cmd = [lines[0]] + [x for x in lines[1:] if x.startswith('  ') and x.strip().startswith('x')]
sys.exit(0 if ''.join(cmd).replace(' ', '').endswith('threads2' + sys.argv[2]) else 1)" "$TMP/l.txt" "$long"
# the summary's lines (piped, a table's rows keep whole names: pthread_create
# in a row with the sampled shares takes 81)
check "  ... and every line of the summary fits 80 columns" -- awk '/^EI\/EE/ { exit bad } length > 80 { bad = 1 } END { exit bad }' "$TMP/l.txt"
