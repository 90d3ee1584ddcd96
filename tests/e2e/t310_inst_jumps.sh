#!/usr/bin/env bash
# san: skip (its time goes to the runtime and the targets; the tool code it reaches, others reach under the sanitizers)
# Instrumentation, frames left without an exit (SPEC section 2, stack
# positions): 2 million longjmps out of an interpreter-style loop, and C++
# exceptions under clang (no exit probes while unwinding).  Each skipped
# frame is closed by the next entry at or above its position: exact calls
# and repairs, nothing lost, the shadow stack bounded, and no skipped frame
# holds the time that follows.  Recorded without library-call rows: with
# them (clock_gettime under after_work) the cost main's repaired children
# could not give is taken from after_work whole (its 20 ms came out 0;
# left open, issue 18's notes).
. "$(dirname "$0")/lib.sh"
for cc in gcc clang; do
	command -v $cc >/dev/null || continue
	$cc -g -O1 -finstrument-functions -o "$TMP/jumps_$cc" "$PROGS/e2e_jumps.c" || exit 1
	check "$cc: record 2,000,000 longjmps" -- \
		"$STACKCLOCK" record -m instrument --libcalls=none -o "$TMP/j.data" -- "$TMP/jumps_$cc" 2000000
	report_json "$TMP/j.data" "$TMP/j.json"
	check "$cc: step, op, fail 2,000,000 calls each, nothing lost ($(q "$TMP/j.json" "(row('step')['calls'], row('fail')['calls'], s['lost_events'])"))" -- \
		q "$TMP/j.json" "exit(0 if (row('step')['calls'], row('op')['calls'], row('fail')['calls'], s['lost_events']) == (2000000, 2000000, 2000000, 0) else 1)"
	check "$cc: 6,000,000 repairs (3 per jump), all by longjmp, no open frame ($(q "$TMP/j.json" "(s['repairs'], s['repairs_by_cause'], s['open_frames'])"))" -- \
		q "$TMP/j.json" "exit(0 if s['repairs'] == 6000000 == s['repairs_by_cause']['longjmp'] and s['open_frames'] == 0 else 1)"
	check "$cc: the skipped frames do not hold after_work's time (fail EI $(q "$TMP/j.json" "row('fail')['elapsed_inclusive_ns']") ns)" -- \
		q "$TMP/j.json" "exit(0 if row('step')['elapsed_inclusive_ns'] + row('after_work')['elapsed_inclusive_ns'] <= row('main')['elapsed_inclusive_ns'] and row('after_work')['elapsed_inclusive_ns'] >= 19000000 else 1)"
	check "$cc: main keeps its one call and is never closed early" -- \
		q "$TMP/j.json" "exit(0 if row('main')['calls'] == 1 and row('main')['completed'] == 1 and row('main')['elapsed_inclusive_ns'] >= row('after_work')['elapsed_inclusive_ns'] else 1)"
done

for cxx in g++ clang++; do
	command -v $cxx >/dev/null || continue
	$cxx -g -O1 -finstrument-functions -o "$TMP/throws" "$PROGS/e2e_throws.cc" || exit 1
	check "$cxx: record 2000 exceptions" -- "$STACKCLOCK" record -m instrument -o "$TMP/t.data" -- "$TMP/throws" 2000
	report_json "$TMP/t.data" "$TMP/t.json"
	# g++ calls exit probes from the unwinder's cleanups: nothing to repair;
	# clang++ does not: thrower and middle are closed by handled()'s entry
	want=0; [ $cxx = clang++ ] && want=4000
	check "$cxx: $want repairs, all by the exceptions ($(q "$TMP/t.json" "(s['repairs'], s['repairs_by_cause'])")), no open frame, 2000 calls each" -- \
		q "$TMP/t.json" "exit(0 if s['repairs'] == $want == s['repairs_by_cause']['exception'] and s['open_frames'] == 0 and [row(f + '(int)')['calls'] for f in ('catcher', 'middle', 'thrower')] == [2000] * 3 and row('handled()')['calls'] == 2000 else 1)"
	check "$cxx: the handler's time is not charged to the frames the throw skipped" -- \
		q "$TMP/t.json" "exit(0 if row('middle(int)')['elapsed_inclusive_ns'] + row('handled()')['elapsed_inclusive_ns'] <= row('catcher(int)')['elapsed_inclusive_ns'] else 1)"
done
