#!/usr/bin/env bash
# san: skip (its time goes to the runtime and the targets; the tool code it reaches, others reach under the sanitizers)
# Instrumentation under resource limits, with the program's descriptors in
# view, and the messages that name what went wrong: no SIGXFSZ under
# 'ulimit -f', exact counts under 'ulimit -v', a named limit when memory
# runs out, descriptors far above the program's (never 0-2), a static
# binary refused with the next step.
. "$(dirname "$0")/lib.sh"
build lim e2e_limits.c -O1 -pthread -finstrument-functions || exit 1
P=$TMP/lim

exact() {	# exact JSON N: main 1, mid N, leaf 2N, nothing lost
	q "$1" "exit(0 if (row('main')['calls'], row('mid')['calls'], row('leaf')['calls'], s['lost_events'], s['exit_status']) == (1, $2, 2 * $2, 0, 0) else 1)"
}

(ulimit -f 10000000; "$STACKCLOCK" record -m instrument -o "$TMP/f.data" -- "$P" calls 100000) 2>"$TMP/f.err"
ok $? "record under 'ulimit -f 10000000' (10 GB)"
report_json "$TMP/f.data" "$TMP/f.json"
check "ulimit -f: no SIGXFSZ, exact counts (mid $(q "$TMP/f.json" "row('mid')['calls']"))" -- exact "$TMP/f.json" 100000

(ulimit -f 1000; "$STACKCLOCK" record -m instrument -o "$TMP/d.data" -- "$P" deep 50000) 2>"$TMP/d.err"
ok $? "record a stack deeper than 'ulimit -f 1000' lets the runtime keep"
report_json "$TMP/d.data" "$TMP/d.json"
check "the target is not killed (exit status $(q "$TMP/d.json" "s['exit_status']"))" -- \
	q "$TMP/d.json" "exit(0 if s['exit_status'] == 0 else 1)"
check "what fitted is kept, the rest counted as lost ($(q "$TMP/d.json" "(row('recurse')['calls'], s['lost_events'])"))" -- \
	q "$TMP/d.json" "exit(0 if row('recurse')['calls'] > 1000 and s['lost_events'] > 0 and row('recurse')['calls'] + s['lost_events'] // 2 == 50000 else 1)"
check "the message names the file-size limit and the next step" -- \
	grep -q "file-size limit (ulimit -f 1000).*raise 'ulimit -f'" "$TMP/d.err"

(ulimit -f 20; "$STACKCLOCK" record -m instrument -o "$TMP/s.data" -- "$P" calls 1000) 2>"$TMP/s.err"
ok $? "record under 'ulimit -f 20' (no room for the runtime at all)"
report_json "$TMP/s.data" "$TMP/s.json"
check "the target ran unchanged (exit status 0)" -- q "$TMP/s.json" "exit(0 if s['exit_status'] == 0 else 1)"
check "the message blames the limit, not the build" -- \
	sh -c "grep -q 'file-size limit (ulimit -f 20)' '$TMP/s.err' && ! grep -q 'finstrument-functions' '$TMP/s.err'"

# an ASan build of the tool cannot run under an address-space limit at all
# (its shadow memory is reserved up front): only the plain build is tried
vlimits="4000000 60000"
if ldd "$STACKCLOCK" 2>/dev/null | grep -q libasan; then
	echo "# ulimit -v skipped: $STACKCLOCK is built with AddressSanitizer"
	vlimits=""
fi
for v in $vlimits; do
	(ulimit -v $v; "$STACKCLOCK" record -m instrument -o "$TMP/v.data" -- "$P" calls 100000) 2>"$TMP/v.err"
	ok $? "record under 'ulimit -v $v'"
	report_json "$TMP/v.data" "$TMP/v.json"
	check "ulimit -v $v: exact counts (mid $(q "$TMP/v.json" "row('mid')['calls']"))" -- exact "$TMP/v.json" 100000
done

"$STACKCLOCK" record -m instrument -o "$TMP/o.data" -- "$P" fds 2>"$TMP/o.err"
ok $? "record a program that checks its descriptors"
report_json "$TMP/o.data" "$TMP/o.json"
check "its first open() gets 3, the runtime's descriptors are high and close-on-exec ($(cat "$TMP/o.err"))" -- \
	q "$TMP/o.json" "exit(0 if s['exit_status'] == 0 else 1)"
check "and the runtime did hold descriptors (file, directory, perf events)" -- \
	grep -q "runtime descriptors: [3-9]" "$TMP/o.err"
"$STACKCLOCK" record -m instrument -o "$TMP/c.data" -- "$P" fds <&- >&- 2>"$TMP/c.err"
ok $? "record with stdin and stdout closed"
report_json "$TMP/c.data" "$TMP/c.json"
check "the program's first open() gets fd 0, not a runtime descriptor (exit $(q "$TMP/c.json" "s['exit_status']"))" -- \
	q "$TMP/c.json" "exit(0 if s['exit_status'] == 0 and row('worker')['calls'] == 1 and row('leaf')['calls'] == 100 else 1)"

if cc -static -O1 -finstrument-functions -pthread -o "$TMP/lim_static" "$PROGS/e2e_limits.c" 2>/dev/null; then
	"$STACKCLOCK" record -m instrument -o "$TMP/x.data" -- "$TMP/lim_static" 2>"$TMP/x.err"
	ok $((! $?)) "a static binary is refused"
	check "named as static, with the next step" -- grep -q "statically linked.*link it dynamically.*sampling" "$TMP/x.err"
fi
