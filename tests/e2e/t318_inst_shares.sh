#!/usr/bin/env bash
# Sampled shares inside instrumentation (SPEC section 14) and repairs by
# cause, recorded from real runs, gcc and clang hooks and patched:
#  - heavy() and light() spin 3 and 1 units of CPU time per call; tiny()
#    is called 20,000 times a round.  heavy's part of heavy + light in the
#    sampled inclusive shares is the program's own measure of their CPU
#    times' within 5 points (at 4999 Hz, ~1,600 samples of the program's
#    own: the sampling error of that part is ~1 point); samples land in
#    the probes' code in the call-dense part; the thread's samples add up
#    to its CPU time at the rate asked for.  Shares are of CPU time: they
#    hold on a loaded machine.
#  - -F 0: no samples, no shares.
#  - frames left open at exit() and at SIGKILL: repairs_by_cause's exit
#    and kill (main, deep, deep2, deep3, and the library call to exit or
#    kill).
# san: skip (the runtime and the targets are never sanitized)
. "$(dirname "$0")/lib.sh"

for v in "${BUILD_VARIANTS[@]}"; do
	IFS=: read -r name cc flags <<<"$v"
	$cc -g -O1 $flags -o "$TMP/sh_$name" "$PROGS/e2e_sampled.c" || exit 1
	"$STACKCLOCK" record -m instrument -F 4999 -o "$TMP/sh.data" -- "$TMP/sh_$name" 200 400 >"$TMP/sh.out" 2>"$TMP/sh.err"
	check "$name: recorded at 4999 Hz (status $?)" -- test -s "$TMP/sh.data"
	report_json "$TMP/sh.data" "$TMP/sh.json"
	invariants "$TMP/sh.json"
	read -r h l t total <"$TMP/sh.out"
	si() { q "$TMP/sh.json" "round(row('$1')['sampled_inclusive_pct'], 1)"; }
	check "$name: heavy's part of heavy + light, sampled $(q "$TMP/sh.json" "round(100 * row('heavy')['sampled_inclusive_pct'] / (row('heavy')['sampled_inclusive_pct'] + row('light')['sampled_inclusive_pct']), 1)") %, measured by the program $(( 100 * h / (h + l) )) % (+-5)" -- \
		q "$TMP/sh.json" "exit(0 if abs(100 * row('heavy')['sampled_inclusive_pct'] / (row('heavy')['sampled_inclusive_pct'] + row('light')['sampled_inclusive_pct']) - 100 * $h / ($h + $l)) <= 5 else 1)"
	# the rest is main's loop around tiny(), itself slowed by tiny's probes
	check "$name: heavy $(si heavy) % + light $(si light) % hold most of the program's own samples (tiny's own work is small)" -- \
		q "$TMP/sh.json" "exit(0 if row('heavy')['sampled_inclusive_pct'] + row('light')['sampled_inclusive_pct'] >= 70 else 1)"
	check "$name: heavy's own share is nothing, its callees' is all ($(q "$TMP/sh.json" "round(row('heavy')['sampled_exclusive_pct'], 1)") %)" -- \
		q "$TMP/sh.json" "exit(0 if row('heavy')['sampled_exclusive_pct'] <= 2 and row('spin')['sampled_inclusive_pct'] >= row('heavy')['sampled_inclusive_pct'] else 1)"
	check "$name: samples in the probes' code ($(q "$TMP/sh.json" "s['probe_samples']") of $(q "$TMP/sh.json" "s['samples'] + s['probe_samples']"))" -- \
		q "$TMP/sh.json" "exit(0 if s['probe_samples'] > 10 else 1)"
	check "$name: the samples add up to the program's CPU time at 4999 Hz ($(q "$TMP/sh.json" "s['samples'] + s['probe_samples']") for $(( total / 1000000 )) ms)" -- \
		q "$TMP/sh.json" "exit(0 if 0.6 <= (s['samples'] + s['probe_samples']) / ($total * 4999e-9) <= 1.3 else 1)"
done

# -F 0: the shares are off
"$STACKCLOCK" record -m instrument -F 0 -o "$TMP/f0.data" -- "$TMP/sh_gcc" 1 20 >/dev/null 2>&1
report_json "$TMP/f0.data" "$TMP/f0.json"
check "-F 0: no samples and no shares in the report" -- \
	q "$TMP/f0.json" "exit(0 if 'samples' not in s and all('sampled_exclusive_pct' not in x for x in rows) and row('heavy')['calls'] == 20 else 1)"
"$STACKCLOCK" report -i "$TMP/f0.data" >"$TMP/f0.txt"
check "-F 0: no sampled columns in the table" -- sh -c "! grep -q 'SE%' '$TMP/f0.txt'"

# frames left open: exit() and SIGKILL
for v in "${BUILD_VARIANTS[@]}"; do
	IFS=: read -r name cc flags <<<"$v"
	for how in exit kill; do
		rec "$TMP/ek.data" "$TMP/ek.out" "$TMP/ek.err" "$TMP/sh_$name" 1 2 $how
		report_json "$TMP/ek.data" "$TMP/ek.json"
		other=kill; [ $how = kill ] && other=exit
		# the library call that never returned (exit(), or kill() of
		# itself) is the fifth (SPEC section 11)
		check "$name $how: 5 frames open (main, deep, deep2, deep3, the call to $how), counted as '$how' ($(q "$TMP/ek.json" "(s['open_frames'], s['repairs_by_cause'])"))" -- \
			q "$TMP/ek.json" "exit(0 if s['open_frames'] == 5 == s['repairs_by_cause']['$how'] and s['repairs_by_cause']['$other'] == 0 and s['repairs'] == 0 and row('$how')['calls'] == 1 and row('$how')['module'].endswith('libc.so.6') else 1)"
	done
done
