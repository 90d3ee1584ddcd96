#!/usr/bin/env bash
# san: skip (its time goes to the runtime and the targets; the tool code it reaches, others reach under the sanitizers)
# Instrumentation: longjmp, recursion, exit() deep in the stack and C++
# exceptions never give negative or runaway times; repairs are counted.
. "$(dirname "$0")/lib.sh"
build e2e_unbalanced e2e_unbalanced.c -O1 -finstrument-functions || exit 1
build e2e_exception e2e_exception.cc -O1 -finstrument-functions || exit 1
D=$TMP/u.data
check "record longjmp+recursion" -- "$STACKCLOCK" record -m instrument -o "$D" -- "$TMP/e2e_unbalanced"
report_json "$D" "$TMP/u.json"
check "jump_leaf/jump_mid entered 10 times each" -- \
	q "$TMP/u.json" "exit(0 if row('jump_leaf')['calls'] == 10 and row('jump_mid')['calls'] == 10 else 1)"
check "the 20 frames left by longjmp are repaired ($(q "$TMP/u.json" "s['repairs']"))" -- \
	q "$TMP/u.json" "exit(0 if s['repairs'] == 20 else 1)"
check "jump_mid is charged within jump_outer" -- \
	q "$TMP/u.json" "exit(0 if row('jump_mid')['elapsed_inclusive_ns'] <= row('jump_outer')['elapsed_inclusive_ns'] else 1)"
check "recurse() 51 calls" -- q "$TMP/u.json" "exit(0 if row('recurse')['calls'] == 51 else 1)"
check "recursion charged once: recurse EI equals its outermost call" -- \
	q "$TMP/u.json" "exit(0 if abs(row('recurse')['elapsed_inclusive_ns'] - row('recurse')['max_elapsed_inclusive_ns']) <= 100 + 0.01 * row('recurse')['elapsed_inclusive_ns'] else 1)"
check "no open frames after a normal return" -- q "$TMP/u.json" "exit(0 if s['open_frames'] == 0 else 1)"

E=$TMP/x.data
check "record exit() deep" -- "$STACKCLOCK" record -m instrument -o "$E" -- "$TMP/e2e_unbalanced" exit
report_json "$E" "$TMP/x.json"
check "exit() three frames deep leaves 3 open frames, and exit's own (SPEC 11) ($(q "$TMP/x.json" "s['open_frames']"))" -- q "$TMP/x.json" "exit(0 if s['open_frames'] == 4 and row('exit')['calls'] == 1 else 1)"

C=$TMP/c.data
check "record C++ exceptions" -- "$STACKCLOCK" record -m instrument -o "$C" -- "$TMP/e2e_exception"
report_json "$C" "$TMP/c.json"
check "thrower and catcher called 20 times" -- \
	q "$TMP/c.json" "exit(0 if row('thrower(int)')['calls'] == 20 and row('catcher(int)')['calls'] == 20 else 1)"
# gcc's -finstrument-functions calls the exit probe from the cleanup the
# unwinder runs, so a throw leaves the stack balanced: no repair needed.
check "exceptions leave a balanced stack: no repairs, no open frames" -- \
	q "$TMP/c.json" "exit(0 if s['repairs'] == 0 and s['open_frames'] == 0 else 1)"
check "thrower within middle within catcher" -- \
	q "$TMP/c.json" "exit(0 if row('thrower(int)')['elapsed_inclusive_ns'] <= row('middle(int)')['elapsed_inclusive_ns'] <= row('catcher(int)')['elapsed_inclusive_ns'] else 1)"
check "C++ names are demangled" -- q "$TMP/c.json" "exit(0 if any(x['function'] == 'demo::Box<int>::get() const' for x in rows) else 1)"

# clang's -finstrument-functions does not call exit probes while unwinding:
# the frames a throw skips are closed by the catcher's exit, as repairs.
if command -v clang++ >/dev/null; then
	clang++ -g -O1 -finstrument-functions -o "$TMP/e2e_exception_clang" "$PROGS/e2e_exception.cc"
	check "record C++ exceptions (clang build)" -- "$STACKCLOCK" record -m instrument -o "$TMP/cc.data" -- "$TMP/e2e_exception_clang"
	report_json "$TMP/cc.data" "$TMP/cc.json"
	check "10 throws skip 2 exits each: 20 repairs ($(q "$TMP/cc.json" "s['repairs']"))" -- \
		q "$TMP/cc.json" "exit(0 if s['repairs'] == 20 and s['open_frames'] == 0 else 1)"
	check "clang: thrower within middle within catcher, 20 calls each" -- \
		q "$TMP/cc.json" "exit(0 if row('thrower(int)')['elapsed_inclusive_ns'] <= row('middle(int)')['elapsed_inclusive_ns'] <= row('catcher(int)')['elapsed_inclusive_ns'] and row('middle(int)')['calls'] == 20 else 1)"
fi

build e2e_unbalanced_mt e2e_unbalanced.c -O1 -pthread -finstrument-functions || exit 1
G=$TMP/g.data
check "record signal handlers" -- "$STACKCLOCK" record -m instrument -o "$G" -- "$TMP/e2e_unbalanced_mt" signal
report_json "$G" "$TMP/g.json"
check "the handler ran 20 times on top of the interrupted frames" -- \
	q "$TMP/g.json" "exit(0 if row('on_alarm')['calls'] == 20 and row('on_alarm')['elapsed_inclusive_ns'] <= row('wait_ticks')['elapsed_inclusive_ns'] else 1)"
# siglongjmp from on_alarm_jump skips the exits of on_alarm_jump, busy (if
# it was interrupted inside), spin_forever and jump_spin: jump_out_of_handler's
# exit closes them.
check "siglongjmp out of a handler: 3 or 4 repairs ($(q "$TMP/g.json" "s['repairs']"))" -- \
	q "$TMP/g.json" "exit(0 if 3 <= s['repairs'] <= 4 and s['open_frames'] == 0 else 1)"
P=$TMP/pe.data
check "record pthread_exit" -- "$STACKCLOCK" record -m instrument -o "$P" -- "$TMP/e2e_unbalanced_mt" thread
report_json "$P" "$TMP/pe.json"
check "pthread_exit three frames deep leaves 3 open frames, and pthread_exit's own ($(q "$TMP/pe.json" "s['open_frames']"))" -- \
	q "$TMP/pe.json" "exit(0 if s['open_frames'] == 4 and s['repairs'] == 0 and row('pthread_exit')['calls'] == 1 else 1)"
check "pexit_inner's time ends at the thread's last event (no runaway)" -- \
	q "$TMP/pe.json" "exit(0 if row('pexit_thread')['elapsed_inclusive_ns'] <= s['duration_ns'] else 1)"

# clang's -finstrument-functions calls no exit hook in an unwound frame:
# those frames are repairs, the exception's.  Through cleanups (a
# destructor's events after each landing end the throw's state there) the
# unwinding goes on at _Unwind_Resume, still the throw's: before, all 3,000
# of 1,000 rethrows were counted as "other".  (A forced unwind's
# _Unwind_Resume, which the exception's stop function tells, is not.)
if command -v clang++ >/dev/null; then
	clang++ -O2 -g -finstrument-functions -o "$TMP/throw_cleanup" "$PROGS/e2e_throw_cleanup.cc" || exit 1
	check "clang++: record 1000 exceptions through cleanups" -- \
		"$STACKCLOCK" record -m instrument -o "$TMP/tc.data" -- "$TMP/throw_cleanup" 1000
	report_json "$TMP/tc.data" "$TMP/tc.json"
	check "clang++: leaf, mid, mid2 closed by 3,000 repairs, all the exception's ($(q "$TMP/tc.json" "s['repairs_by_cause']"))" -- \
		q "$TMP/tc.json" "exit(0 if [row(f)['calls'] for f in ('leaf(int)', 'mid(int)', 'mid2(int)', 'top(int)')] == [1000] * 4 and (s['repairs'], s['repairs_by_cause']['exception'], s['open_frames']) == (3000, 3000, 0) else 1)"
else
	echo "ok 1 # skip no clang++ on PATH"
fi
