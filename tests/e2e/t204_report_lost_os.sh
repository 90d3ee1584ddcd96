#!/usr/bin/env bash
# OS-event records the kernel drops (its per-thread ring overflows inside
# one interval): the report shows how many (lost_os_records, a table line),
# and the interval that lost them counts as OS time in both modes instead
# of passing for application time in the exact mode.
. "$(dirname "$0")/lib.sh"
build rep_lost rep_lost.c -O1 -finstrument-functions || exit 1
D=$TMP/l.data
check "record -m instrument" -- "$STACKCLOCK" record -m instrument -o "$D" -- "$TMP/rep_lost"
check "report --format json --check" -- sh -c "'$STACKCLOCK' report -i '$D' --format json --check > '$TMP/i.json'"
check "report --app-time=exact --format json --check" -- \
	sh -c "'$STACKCLOCK' report -i '$D' --app-time=exact --format json --check > '$TMP/x.json'"
invariants "$TMP/i.json"
invariants "$TMP/x.json"
if q "$TMP/i.json" "exit(0 if s['os_events']['syscall'] is not None or s['os_events']['fault'] is not None else 1)" >/dev/null; then
	check "records were lost and are counted (lost_os_records > 0)" -- \
		q "$TMP/i.json" "exit(0 if s['lost_os_records'] > 0 else 1)"
	check "flood(): no application time, interval rule" -- \
		q "$TMP/i.json" "exit(0 if row('flood')['application_exclusive_ns'] == 0 and row('flood')['elapsed_exclusive_ns'] > 0 else 1)"
	check "flood(): no application time in the exact mode either (its OS time could not be measured)" -- \
		q "$TMP/x.json" "exit(0 if row('flood')['application_exclusive_ns'] == 0 else 1)"
	check "few() (no overflow): the exact mode keeps its user time as application" -- \
		q "$TMP/x.json" "exit(0 if 0 < row('few')['application_exclusive_ns'] < row('few')['elapsed_exclusive_ns'] else 1)"
	check "the table says how many were lost and what it means" -- \
		sh -c "'$STACKCLOCK' report -i '$D' > '$TMP/t.txt' && grep -q '^  OS records lost by the kernel: [1-9]' '$TMP/t.txt' && grep -q 'intervals that lost them count as OS' '$TMP/t.txt' && awk 'length > 80 { bad = 1 } END { exit bad }' '$TMP/t.txt'"
else
	echo "# neither system calls nor page faults observable here: nothing can overflow"
fi
D3=$TMP/b.data
check "record a burst of 2000 system calls in one interval" -- "$STACKCLOCK" record -m instrument -o "$D3" -- "$TMP/rep_lost" burst
check "report --format json --check (burst)" -- sh -c "'$STACKCLOCK' report -i '$D3' --format json --check > '$TMP/b.json'"
invariants "$TMP/b.json"
if q "$TMP/b.json" "exit(0 if s['os_events']['syscall'] is not None else 1)" >/dev/null; then
	check "  ... the main thread's ring holds them: nothing lost, all 2000 counted" -- \
		q "$TMP/b.json" "exit(0 if s['lost_os_records'] == 0 and s['os_events']['syscall'] >= 2000 else 1)"
	check "  ... burst() has no application time (interval rule)" -- \
		q "$TMP/b.json" "exit(0 if row('burst')['application_exclusive_ns'] == 0 and row('burst')['elapsed_exclusive_ns'] > 0 else 1)"
fi
D2=$TMP/n.data
check "record with --os-events=none" -- "$STACKCLOCK" record -m instrument --os-events=none -o "$D2" -- "$TMP/rep_lost"
check "  ... nothing lost, no table line about it" -- \
	sh -c "'$STACKCLOCK' report -i '$D2' --format json | grep -q '\"lost_os_records\": 0,' && ! '$STACKCLOCK' report -i '$D2' | grep -q 'OS records lost'"
echo "1..$_n"
