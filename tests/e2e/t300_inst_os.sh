#!/usr/bin/env bash
# san: skip (its time goes to the runtime and the targets; the tool code it reaches, others reach under the sanitizers)
# serial (compares CPU shares or durations with the clock)
# Instrumentation end to end: Elapsed vs Application time of a sleeping,
# a spinning and an fsync-ing function (SPEC section 2), in both app-time
# modes and with OS events switched off.
. "$(dirname "$0")/lib.sh"
build e2e_os e2e_os.c -O1 -finstrument-functions || exit 1
D=$TMP/os.data
check "record -m instrument succeeds" -- "$STACKCLOCK" record -m instrument -o "$D" -- "$TMP/e2e_os" "$TMP"
report_json "$D" "$TMP/os.json"
ms() { q "$TMP/os.json" "row('$1')['$2'] / 1e6"; }
check "sleeper EI is about 200 ms ($(ms sleeper elapsed_inclusive_ns) ms)" -- \
	q "$TMP/os.json" "exit(0 if 190e6 <= row('sleeper')['elapsed_inclusive_ns'] <= 400e6 else 1)"
check "sleeper Application time is near zero ($(ms sleeper application_inclusive_ns) ms)" -- \
	q "$TMP/os.json" "exit(0 if row('sleeper')['application_inclusive_ns'] <= 0.05 * row('sleeper')['elapsed_inclusive_ns'] else 1)"

# the 100 ms of CPU include the probes' own: their cost is taken out of
# the default values (SPEC section 10), left in with --raw-times
report_json "$D" "$TMP/raw.json" --raw-times
# the checker on raw values (no per-call minimum or maximum there)
check "report --raw-times --check passes" -- "$STACKCLOCK" report -i "$D" --raw-times --check
check "raw times: spinner EI is at least 100 ms ($(q "$TMP/raw.json" "row('spinner')['elapsed_inclusive_ns'] / 1e6") ms)" -- \
	q "$TMP/raw.json" "exit(0 if 99e6 <= row('spinner')['elapsed_inclusive_ns'] <= 1000e6 else 1)"
check "raw times: spinner Application time is about its 100 ms of CPU ($(q "$TMP/raw.json" "row('spinner')['application_inclusive_ns'] / 1e6") ms)" -- \
	q "$TMP/raw.json" "exit(0 if 90e6 <= row('spinner')['application_inclusive_ns'] <= row('spinner')['elapsed_inclusive_ns'] else 1)"
check "spinner's probe cost is taken out: AI $(ms spinner application_inclusive_ns) ms, less than raw" -- \
	q "$TMP/os.json" "exit(0 if 0 < row('spinner')['application_inclusive_ns'] < [r for r in json.load(open('$TMP/raw.json'))['rows'] if r['function'] == 'spinner'][0]['application_inclusive_ns'] else 1)"
check "the cost taken out is the sum over rows of raw EE - EE ($(q "$TMP/os.json" "s['probe_removed_ns']") ns, $(q "$TMP/os.json" "s['probe_cost_ns']") ns per event)" -- \
	q "$TMP/os.json" "exit(0 if s['probe_cost_ns'] > 0 and s['probe_removed_ns'] == sum(r['elapsed_exclusive_ns'] for r in json.load(open('$TMP/raw.json'))['rows']) - sum(r['elapsed_exclusive_ns'] for r in rows) else 1)"
check "step() is exclusive time of its own, spinner's EI >= step's" -- \
	q "$TMP/os.json" "exit(0 if row('step')['calls'] >= 1000 and row('spinner')['elapsed_inclusive_ns'] >= row('step')['elapsed_inclusive_ns'] else 1)"
check "syncer (write+fsync) is OS-bound: AI <= 10% of EI" -- \
	q "$TMP/os.json" "exit(0 if row('syncer')['application_inclusive_ns'] <= 0.1 * row('syncer')['elapsed_inclusive_ns'] else 1)"
check "main is the whole session: EI% = 100" -- \
	q "$TMP/os.json" "exit(0 if abs(row('main')['elapsed_inclusive_pct'] - 100) < 0.01 else 1)"
check "context switches and system calls were observed" -- \
	q "$TMP/os.json" "exit(0 if s['os_events']['switch'] > 0 and s['os_events']['syscall'] > 0 and not s['os_events'].get('not_observed') else 1)"
check "raw times: session EI is close to the duration" -- \
	q "$TMP/raw.json" "exit(0 if 0.8 * s['duration_ns'] <= s['elapsed_inclusive_ns'] <= s['duration_ns'] else 1)"
check "session EI is the raw one less the probe cost taken out" -- \
	q "$TMP/os.json" "exit(0 if s['elapsed_inclusive_ns'] <= json.load(open('$TMP/raw.json'))['session']['elapsed_inclusive_ns'] else 1)"

report_json "$D" "$TMP/exact.json" --app-time=exact
check "exact mode: sleeper's Application time is under 10% of its Elapsed time" -- \
	q "$TMP/exact.json" "exit(0 if row('sleeper')['application_inclusive_ns'] <= 0.1 * row('sleeper')['elapsed_inclusive_ns'] else 1)"
report_json "$D" "$TMP/exact_raw.json" --app-time=exact --raw-times
check "exact mode, raw times: spinner keeps about its 100 ms of CPU as Application time" -- \
	q "$TMP/exact_raw.json" "exit(0 if 90e6 <= row('spinner')['application_inclusive_ns'] <= row('spinner')['elapsed_inclusive_ns'] else 1)"

D2=$TMP/none.data
check "record --os-events=none" -- "$STACKCLOCK" record -m instrument --os-events=none -o "$D2" -- "$TMP/e2e_os" "$TMP"
report_json "$D2" "$TMP/none.json"
check "without OS events Application time equals Elapsed time" -- \
	q "$TMP/none.json" "exit(0 if s['application_inclusive_ns'] == s['elapsed_inclusive_ns'] else 1)"
check "table report fits 80 columns" -- sh -c "'$STACKCLOCK' report -i '$D' | awk 'length > 80 { bad = 1 } END { exit bad }'"
check "csv header has the SPEC names" -- sh -c "'$STACKCLOCK' report -i '$D' --format csv | head -1 | grep -q 'elapsed_inclusive_ns' "
