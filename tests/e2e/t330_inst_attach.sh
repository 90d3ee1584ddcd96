#!/usr/bin/env bash
# san: skip (the runtime is loaded into a running program; no tool code the sanitizers watch runs there)
# Attaching instrumentation to a running process (SPEC section 13):
# record -m instrument -p PID on an unmodified program (patched in place) and
# on one built with the hooks (its GOT slots redirected), threads running and
# threads born while attached; the counts against the program's own; the
# code bytes equal to the file's after detach; the program's own checks
# passing after; the recorder killed (SIGKILL) while attached and before;
# one-line refusals.
. "$(dirname "$0")/lib.sh"
build plain e2e_attach.c -O2 -pthread || exit 1
build hooks e2e_attach.c -O2 -pthread -finstrument-functions || exit 1
build sigheld e2e_attach_sig.c -O2 -pthread || exit 1
AT="python3 $E2E_DIR/att_check.py"

start() {	# start PROG: the program running, its pid in $pid, counters in $TMP/cnt
	"$TMP/$1" "$TMP/cnt" >"$TMP/prog.out" &
	pid=$!
	for _ in $(seq 50); do [ -s "$TMP/cnt" ] && break; sleep 0.05; done
	sleep 0.2
}
finish() {	# finish: SIGTERM, its own checks
	kill -TERM "$pid"
	wait "$pid"
	echo $? >"$TMP/prog.rc"
}

attached() {	# attached NAME PROG: record 1 s attached, check what it gives
	local name=$1 prog=$2
	start "$prog"
	"$STACKCLOCK" record -m instrument -p "$pid" --duration 1 -o "$TMP/$name.data" 2>"$TMP/$name.err"
	ok $? "$name: record -m instrument -p PID --duration 1" || sed 's/^/#   /' "$TMP/$name.err"
	kill -0 "$pid" 2>/dev/null
	ok $? "$name: the program still runs after the detach"
	check "$name: the code bytes equal the file's after the detach" -- $AT text "$pid" "$TMP/$prog"
	left=$(grep -c 'stackclock-[0-9]*-' "/proc/$pid/maps" || true)
	ok $(( left == 0 ? 0 : 1 )) "$name: the image's memory is given back at the detach ($left mappings left)"
	report_json "$TMP/$name.data" "$TMP/$name.json"
	steps=$(q "$TMP/$name.json" "row('step')['calls']")
	ticks=$(q "$TMP/$name.json" "row('tick')['calls']")
	threads=$(q "$TMP/$name.json" "len(s.get('threads', [])) if isinstance(s.get('threads'), list) else s.get('threads', 0)")
	# each step() makes two tick() calls; a call running at attach or at
	# detach is seen in part (at most two per thread at each end)
	d=$(( ticks - 2 * steps )); d=${d#-}
	ok $(( steps > 0 && d <= 24 ? 0 : 1 )) "$name: tick calls = 2 x step calls ($ticks, $steps)"
	# the program's own count over the window the session states (its
	# samples every 2 ms, interpolated): equal within what the edges allow
	# (the threads are stopped a few ms around each end; 5 %)
	"$STACKCLOCK" dump -i "$TMP/$name.data" >"$TMP/$name.dump"
	st=$(grep -o 'start_realtime_ns=[0-9]*' "$TMP/$name.dump" | head -1 | cut -d= -f2)
	dur=$(grep -o 'session_end duration_ns=[0-9]*' "$TMP/$name.dump" | head -1 | cut -d= -f2)
	read -r own gap <<<"$($AT window "$TMP/cnt" "$st" "$dur")"
	ok $(( steps * 100 >= own * 95 && steps * 100 <= own * 105 ? 0 : 1 )) \
		"$name: step calls = the program's own count over the window +-5% ($steps, $own; ${dur} ns)"
	# the calls running at the attach: open from each thread's first event
	"$STACKCLOCK" report -i "$TMP/$name.data" --raw-times --tree --format json >"$TMP/$name.tree.json"
	# (patched: no repair; hooks: a thread stopped in the few instructions
	# before a function's entry hook call or after its exit hook's has
	# that frame open and then entered, or left without its exit: one
	# repair each, seen once in about a dozen runs)
	$AT open "$TMP/$name.tree.json" "$dur" 3 "$([ "$name" = hooks ] && echo 2 || echo 0)" \
		>"$TMP/$name.open" 2>&1
	ok $(( $(grep -c '^\(not \)\?ok ' "$TMP/$name.open") == 8 ? 0 : 1 )) \
		"$name: the open frames' 8 checks ran" || sed 's/^/#   /' "$TMP/$name.open"
	while read -r line; do
		case $line in
		"ok "*) ok 0 "$name: ${line#ok }" ;;
		"not ok "*) ok 1 "$name: ${line#not ok }" ;;
		esac
	done <"$TMP/$name.open"
	# the frames open at the detach are said so: the program goes on
	check "$name: the frames open at the detach are of cause detach, none exit or kill ($(q "$TMP/$name.json" "(s['open_frames'], s['repairs_by_cause'])"))" -- \
		q "$TMP/$name.json" "exit(0 if s['open_frames'] > 0 and s['repairs_by_cause']['detach'] == s['open_frames'] and s['repairs_by_cause']['exit'] == s['repairs_by_cause']['kill'] == 0 else 1)"
	check "$name: the table says it (open frames N (detach N))" -- \
		sh -c "'$STACKCLOCK' report -i '$TMP/$name.data' | grep -q 'open frames [0-9,]* (detach [0-9,]*)'"
	seeded=$(grep -o 'were running at the attach in [0-9]* threads' "$TMP/$name.err" | grep -o '[0-9]*')
	ok $(( ${seeded:-0} >= 5 ? 0 : 1 )) "$name: the calls running at the attach are said, in >= 5 threads (${seeded:-none})"
	# library calls while attached: rows, and their GOT slots libc's again
	n=$(q "$TMP/$name.json" "row('nanosleep')['calls']")
	ok $(( ${n:-0} > 0 ? 0 : 1 )) "$name: library calls are rows while attached (nanosleep: $n calls)"
	for sym in nanosleep usleep clock_gettime; do
		slot=$($AT got "$pid" "$TMP/$prog" $sym)
		ok $([ "$slot" = libc ]; echo $?) "$name: the GOT slot of $sym points into libc again ($slot)"
	done
	attached_flag=$(q "$TMP/$name.json" "s['attached']")
	ok $([ "$attached_flag" = True ]; echo $?) "$name: the session says attached ($attached_flag)"
	finish
	ok "$(cat "$TMP/prog.rc")" "$name: the program's own checks pass after the detach ($(cat "$TMP/prog.out"))"
}

attached patched plain
"$STACKCLOCK" dump -i "$TMP/patched.data" >"$TMP/p.dump"
tids=$(grep -o '^ *thread proc_id=[0-9]* tid=[0-9]*' "$TMP/p.dump" | sort -u | wc -l)
ok $(( tids >= 5 ? 0 : 1 )) "threads running at attach and born while attached recorded ($tids >= 3 + 2)"

attached hooks hooks
# (the program's GOT slot is its own again: libc's no-op hook)
start hooks
"$STACKCLOCK" record -m instrument -p "$pid" --duration 0.3 -o "$TMP/h2.data" 2>/dev/null
slot=$($AT got "$pid" "$TMP/hooks" __cyg_profile_func_enter)
ok $([ "$slot" = libc ]; echo $?) "hooks: the GOT slot of __cyg_profile_func_enter points into libc again ($slot)"
finish

# A signal handler holding the first bytes of a function to patch (its
# interrupted instruction inside them, its thread's own instruction pointer
# in nanosleep): the patching waits for it to return.  Patched under it, it
# returned into the middle of the jump (seen: SIGSEGV, status 139).
"$TMP/sigheld" 600 >"$TMP/sig.out" &
pid=$!
# (up to 30 s: with two CPU hogs beside it the signal took more than 5 s to
# land inside tiny's first bytes once, and the attach then raced the storm)
for _ in $(seq 1500); do grep -q held "$TMP/sig.out" && break; sleep 0.02; done
grep -q held "$TMP/sig.out"
ok $? "signal held: the handler holds tiny's first bytes"
"$STACKCLOCK" record -m instrument -p "$pid" --duration 0.5 -o "$TMP/sig.data" 2>"$TMP/sig.err"
ok $? "signal held: attached once the handler returned" || sed 's/^/#   /' "$TMP/sig.err"
n=$("$STACKCLOCK" report -i "$TMP/sig.data" --format json 2>/dev/null |
	python3 -c "import json, sys; print(sum(r['calls'] for r in json.load(sys.stdin)['rows'] if r['function'] == 'tiny'))")
ok $(( ${n:-0} > 0 ? 0 : 1 )) "signal held: tiny's calls recorded after ($n)"
finish
ok "$(cat "$TMP/prog.rc")" "signal held: the program's own checks pass ($(tr '\n' ' ' <"$TMP/sig.out"))"

# longjmp over patched frames while attached: the program's GOT slots for
# the jumps point at the runtime's wrappers, so the frames jumped over are
# closed as such (repairs of cause longjmp, three a jump), then put back.
build jmp e2e_attach_jmp.c -O2 || exit 1
"$TMP/jmp" >"$TMP/jmp.out" &
pid=$!
sleep 0.3
"$STACKCLOCK" record -m instrument -p "$pid" --duration 0.5 -o "$TMP/jmp.data" 2>"$TMP/jmp.err"
ok $? "longjmp: attached" || sed 's/^/#   /' "$TMP/jmp.err"
slot=$($AT got "$pid" "$TMP/jmp" longjmp)
ok $([ "$slot" = libc ]; echo $?) "longjmp: its GOT slot points into libc again ($slot)"
kill -TERM "$pid"
wait "$pid"
ok $? "longjmp: the program's own count of jumps holds ($(cat "$TMP/jmp.out"))"
report_json "$TMP/jmp.data" "$TMP/jmp.json"
check "longjmp: every repair is of cause longjmp, three a call of fail" -- \
	q "$TMP/jmp.json" "exit(0 if s['repairs'] > 0 and s['repairs_by_cause'].get('longjmp', 0) == s['repairs'] and abs(s['repairs'] - 3 * row('fail')['calls']) <= 3 else 1)"

# Ctrl-C: SIGINT to the recorder ends the attached recording, status 0,
# the code put back, the program going on.
start plain
"$STACKCLOCK" record -m instrument -p "$pid" -o "$TMP/int.data" 2>"$TMP/int.err" &
rec=$!
for _ in $(seq 100); do $AT text "$pid" "$TMP/plain" >/dev/null || break; sleep 0.05; done
sleep 0.3
kill -INT "$rec"
wait "$rec"
ok $? "Ctrl-C ends an attached recording with status 0"
check "Ctrl-C: the code bytes equal the file's again" -- $AT text "$pid" "$TMP/plain"
n=$("$STACKCLOCK" report -i "$TMP/int.data" --format json 2>/dev/null |
	python3 -c "import json, sys; print(sum(r['calls'] for r in json.load(sys.stdin)['rows'] if r['function'] == 'step'))")
ok $(( n > 0 ? 0 : 1 )) "Ctrl-C: the calls up to it are written ($n of step)"
finish
ok "$(cat "$TMP/prog.rc")" "Ctrl-C: the program's own checks pass"

# C++ exceptions thrown through functions patched while attached: the
# unwinder reads the original return addresses (the runtime's wrappers,
# GOT slots pointed at them), the program's own sums hold.
build throw e2e_attach_throw.cc -O2 || exit 1
"$TMP/throw" >"$TMP/throw.out" &
pid=$!
sleep 0.3
check "C++: record -m instrument -p PID --duration 1 with exceptions thrown" -- \
	"$STACKCLOCK" record -m instrument -p "$pid" --duration 1 -o "$TMP/throw.data"
kill -TERM "$pid"
wait "$pid"
ok $? "C++: the program's own sums held after attach and detach ($(cat "$TMP/throw.out"))"
report_json "$TMP/throw.data" "$TMP/throw.json"
check "C++: thrower and middle as many calls, none repaired" -- \
	q "$TMP/throw.json" "exit(0 if row('thrower(int)')['calls'] == row('middle(int)')['calls'] > 1000 and s['repairs'] == 0 else 1)"

# Threads cancelled and ended by pthread_exit while attached (e2e_cancel.c,
# -fexceptions): every cleanup handler still runs.  The C library's own
# unwinder (libgcc_s, loaded by the runtime at the attach when the program
# had not yet) looks up unwind tables through the runtime's wrapper, which
# puts the original return addresses back.  Before: 2,411 of 6,360
# cancellations during the attach ran none of their 11 handlers, and a
# build of the trampolines' unwind rule without its stop at a trampoline
# still in place made such an unwinder loop (the program 25x slower).
# (A cancellation racing the attach or the detach itself may still run
# none: one in 2,700 was seen.)
build cancel e2e_cancel.c -O2 -pthread -fexceptions || exit 1
"$TMP/cancel" -3 >"$TMP/cancel.out" &
pid=$!
sleep 0.5
check "cancel: record -m instrument -p PID --duration 1 of a program cancelling threads" -- \
	"$STACKCLOCK" record -m instrument -p "$pid" --duration 1 -o "$TMP/cancel.data"
wait "$pid"
rc=$?
bad=$(grep -cv -e '^exit 42 cleaned 2$' -e '^cancel 1 cleaned 11$' "$TMP/cancel.out")
total=$(wc -l <"$TMP/cancel.out")
check "cancel: status $rc, every handler ran in all but at most 1 of $total thread ends ($bad)" -- \
	sh -c "[ $rc = 0 ] && [ $bad -le 1 ] && [ $total -ge 200 ]"
report_json "$TMP/cancel.data" "$TMP/cancel.json"
# (the frames a cancellation unwinds have no exit probe: the C library's
# personality routine, inside libgcc_s, lands in them unseen; they are
# closed by repair at the next entries, the handlers')
check "cancel: cleanup counted while attached ($(q "$TMP/cancel.json" "(row('cleanup')['calls'], s['repairs_by_cause'])"))" -- \
	q "$TMP/cancel.json" "exit(0 if row('cleanup')['calls'] >= 100 else 1)"

# The recorder killed while attached: the runtime puts the code back by
# itself and the program goes on.
for when in 1.6 2.5; do
	start plain
	"$STACKCLOCK" record -m instrument -p "$pid" --duration 30 -o "$TMP/k.data" 2>/dev/null &
	rec=$!
	sleep "$when"
	kill -KILL "$rec"
	wait "$rec" 2>/dev/null
	back=1
	for _ in $(seq 40); do
		$AT text "$pid" "$TMP/plain" >/dev/null && { back=0; break; }
		sleep 0.1
	done
	ok $back "recorder killed after ${when} s: the code bytes equal the file's again"
	c0=$($AT counts "$TMP/cnt"); sleep 0.2; c1=$($AT counts "$TMP/cnt")
	ok $(( c1 > c0 ? 0 : 1 )) "recorder killed after ${when} s: the program goes on ($c0 -> $c1)"
	for _ in $(seq 20); do
		left=$(ls /dev/shm | grep -c "^stackclock-$rec-" || true)
		[ "$left" -eq 0 ] && break
		sleep 0.1
	done
	ok $(( left == 0 ? 0 : 1 )) "recorder killed after ${when} s: no file of it left in /dev/shm ($left)"
	finish
	ok "$(cat "$TMP/prog.rc")" "recorder killed after ${when} s: the program's own checks pass"
done

# One-line refusals, non-zero status.
one_line_fail "a pid that does not exist" "no process 999999" -- \
	"$STACKCLOCK" record -m instrument -p 999999 --duration 1 -o "$TMP/x.data"

# Attached to again and again (a server profiled before and after a
# change): each attach loads a fresh copy of the runtime (the one before
# stays, inert), counts as the first did, and puts everything back.
for prog in plain hooks; do
	start "$prog"
	for i in 1 2 3; do
		"$STACKCLOCK" record -m instrument -p "$pid" --duration 0.3 -o "$TMP/again$i.data" 2>"$TMP/again.err"
		ok $? "$prog: attach number $i" || sed 's/^/#   /' "$TMP/again.err"
		report_json "$TMP/again$i.data" "$TMP/again$i.json"
		steps=$(q "$TMP/again$i.json" "row('step')['calls']")
		ticks=$(q "$TMP/again$i.json" "row('tick')['calls']")
		d=$(( ticks - 2 * steps )); d=${d#-}
		ok $(( steps > 1000 && d <= 24 ? 0 : 1 )) "$prog: attach number $i counts (tick $ticks = 2 x step $steps)"
		check "$prog: attach number $i: the code bytes equal the file's after" -- $AT text "$pid" "$TMP/$prog"
	done
	n=$(grep -o '/[^ ]*libstackclock[^ ]*' "/proc/$pid/maps" | sort -u | wc -l)
	ok $(( n == 3 ? 0 : 1 )) "$prog: three runtimes loaded, one per attach ($n)"
	finish
	ok "$(cat "$TMP/prog.rc")" "$prog: after three attaches the program's checks pass ($(cat "$TMP/prog.out"))"
done
left=$(ls /tmp /var/tmp "$(dirname "$STACKCLOCK")" 2>/dev/null | grep -c '^libstackclock\.attach-' || true)
ok $(( left == 0 ? 0 : 1 )) "no copy of the runtime left on disk ($left)"
build static e2e_attach.c -O2 -pthread -static 2>/dev/null && {
	start static
	one_line_fail "a statically linked program" "statically linked" -- \
		"$STACKCLOCK" record -m instrument -p "$pid" --duration 0.2 -o "$TMP/x.data"
	finish
}
one_line_fail "--duration without -p under -m instrument" "for sampling" -- \
	"$STACKCLOCK" record -m instrument --duration 1 -o "$TMP/x.data" -- "$TMP/plain" "$TMP/cnt"
