#!/usr/bin/env bash
# Instrumentation: longjmp, recursion, exit() deep in the stack and C++
# exceptions never give negative or runaway times; repairs are counted.
. "$(dirname "$0")/lib.sh"
build e2e_unbalanced e2e_unbalanced.c -O1 -finstrument-functions || exit 1
build e2e_exception e2e_exception.cc -O1 -finstrument-functions || exit 1
D=$TMP/u.data
check "record longjmp+recursion" -- "$STACKCLOCK" record -m instrument -o "$D" -- "$TMP/e2e_unbalanced"
check "report json" -- sh -c "'$STACKCLOCK' report -i '$D' --format json > '$TMP/u.json'"
invariants "$TMP/u.json"
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
check "report json (exit)" -- sh -c "'$STACKCLOCK' report -i '$E' --format json > '$TMP/x.json'"
invariants "$TMP/x.json"
check "exit() three frames deep leaves 3 open frames" -- q "$TMP/x.json" "exit(0 if s['open_frames'] == 3 else 1)"

C=$TMP/c.data
check "record C++ exceptions" -- "$STACKCLOCK" record -m instrument -o "$C" -- "$TMP/e2e_exception"
check "report json (exceptions)" -- sh -c "'$STACKCLOCK' report -i '$C' --format json > '$TMP/c.json'"
invariants "$TMP/c.json"
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
	check "report json (clang exceptions)" -- sh -c "'$STACKCLOCK' report -i '$TMP/cc.data' --format json > '$TMP/cc.json'"
	invariants "$TMP/cc.json"
	check "10 throws skip 2 exits each: 20 repairs ($(q "$TMP/cc.json" "s['repairs']"))" -- \
		q "$TMP/cc.json" "exit(0 if s['repairs'] == 20 and s['open_frames'] == 0 else 1)"
	check "clang: thrower within middle within catcher, 20 calls each" -- \
		q "$TMP/cc.json" "exit(0 if row('thrower(int)')['elapsed_inclusive_ns'] <= row('middle(int)')['elapsed_inclusive_ns'] <= row('catcher(int)')['elapsed_inclusive_ns'] and row('middle(int)')['calls'] == 20 else 1)"
fi
