#!/usr/bin/env bash
# serial (compares CPU shares or durations with the clock)
# report on a real sampling recording (-O2, no frame pointers): every
# grouping and format with --check, JSON parsed back, CSV read with
# Python's csv module, the inlined function as a frame of its own, line
# and address rows, shares that follow the program's 3:1 split.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/rep_lib.sh"
build rep_sample rep_sample.c -O2 -fomit-frame-pointer || exit 1
D=$TMP/s.data
check "record (sampling)" -- "$STACKCLOCK" record -o "$D" -- "$TMP/rep_sample" 600

GROUPINGS="function module thread process line address"
report_every_format "$D" $GROUPINGS
for by in $GROUPINGS; do
	check "by $by: CSV ends with the sample columns" -- python3 - "$TMP/$by.csv" <<'PY'
import csv, sys
header = next(csv.reader(open(sys.argv[1], newline="")))
assert header[-4:] == ["inclusive_samples", "exclusive_samples", "inclusive_pct", "exclusive_pct"], header
PY
done

J=$TMP/function.json
n=$(q "$J" "s['samples']")
# how many samples 600 ms of CPU gives is the sampler's test (t400); here
# only enough of them for the shares below to mean something
check "enough samples for shares: $n" -- q "$J" "exit(0 if s['samples'] >= 100 else 1)"
check "session has frequency, lost samples, root share" -- \
	q "$J" "exit(0 if s['method'] == 'sampling' and s['frequency_hz'] == 999 and s['lost_samples'] >= 0 and 0 <= s['root_reached_pct'] <= 100 else 1)"
check "outer's inclusive equals hot's plus cold's (within 2%)" -- \
	q "$J" "exit(0 if abs(row('outer')['inclusive_samples'] - row('hot')['inclusive_samples'] - row('cold')['inclusive_samples']) <= 0.02 * row('outer')['inclusive_samples'] + 2 else 1)"
check "hot:cold follows the 3:1 work split ($(q "$J" "round(row('hot')['inclusive_samples'] / max(1, row('cold')['inclusive_samples']), 2)"))" -- \
	q "$J" "exit(0 if 1.8 <= row('hot')['inclusive_samples'] / max(1, row('cold')['inclusive_samples']) <= 5 else 1)"
check "the inlined mix() is a frame of its own, inside hot" -- \
	q "$J" "exit(0 if row('mix')['exclusive_samples'] > 0 and row('mix')['inclusive_samples'] <= row('hot')['inclusive_samples'] else 1)"
check "exclusive samples sum to the total" -- q "$J" "exit(0 if sum(x['exclusive_samples'] for x in rows) == s['samples'] else 1)"
check "line rows of rep_sample.c: mix's line exclusive, outer's call lines inclusive" -- \
	q "$TMP/line.json" "exit(0 if any(x['function'] == 'mix' and x['exclusive_samples'] > 0 for x in rows) and any(x['function'] == 'outer' and x['exclusive_samples'] == 0 and x['inclusive_samples'] > 0 and str(x['file']).endswith('rep_sample.c') and x['line'] > 0 for x in rows) else 1)"
check "address rows carry hex addresses" -- \
	q "$TMP/address.json" "exit(0 if all(x['address'].startswith('0x') and int(x['address'], 16) > 0 for x in rows) else 1)"
check "thread rows carry tid and pid" -- q "$TMP/thread.json" "exit(0 if all(x['tid'] > 0 and x['pid'] > 0 for x in rows) else 1)"
check "table summary: method, samples, root share" -- \
	sh -c "grep -q '^Sampling profile of: .*rep_sample 600' '$TMP/function.table' && grep -q '^Samples [0-9]* at 999 Hz, lost samples' '$TMP/function.table' && grep -q '^Stacks reaching the root' '$TMP/function.table'"
check "--sort exclusive --top 1: the hottest leaf" -- \
	sh -c "'$STACKCLOCK' report -i '$D' --sort exclusive --top 1 --format json > '$TMP/top.json'"
check "  ... is mix" -- q "$TMP/top.json" "exit(0 if len(rows) == 1 and rows[0]['function'] == 'mix' else 1)"
echo "1..$_n"
