#!/usr/bin/env bash
# san: skip (its time goes to the runtime and the targets; the tool code it reaches, others reach under the sanitizers)
# serial (compares CPU shares or durations with the clock)
# Attaching to a running process (-p PID): --duration, Ctrl-C (SIGINT to the
# recorder), the target left running; and the one-line errors: a PID that
# does not exist, a program that does not exist, a kernel refusing perf
# events (simulated by smp_noperf.so, see below).
. "$(dirname "$0")/lib.sh"
. "$E2E_DIR/smp_lib.sh"
build shares e2e_shares.c -O2 -fomit-frame-pointer -fno-optimize-sibling-calls || exit 1
build cputhreads e2e_cputhreads.c -O2 -fomit-frame-pointer -pthread || exit 1

"$TMP/shares" 4000 &
pid=$!
sleep 0.2
# the target's CPU time in clock ticks (utime + stime of /proc/PID/stat)
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
c0=$(cpu_ticks "$pid")
check "attach with -p for 1 s" -- "$STACKCLOCK" record -p "$pid" --duration 1 -o "$TMP/a.data"
c1=$(cpu_ticks "$pid")
kill -0 "$pid" 2>/dev/null
ok $? "the target still runs after record ends"
sc_stacks "$TMP/a.data" >"$TMP/a.folded"
n=$(awk '{ n += $4 } END { print n + 0 }' "$TMP/a.folded")
# CPU time, not wall time, is sampled: a busy machine gives fewer, so the
# samples are compared with the CPU time the target had meanwhile (999 Hz;
# its ticks are 1/100 s, and the window is a little shorter than the
# record command: 0.5-1.15 of it, and at least 50)
hz=$(getconf CLK_TCK)
want=$(( (c1 - c0) * 999 / hz ))
ok $(( n >= 50 && n * 100 >= want * 50 && n * 100 <= want * 115 + 2000 ? 0 : 1 )) \
	"samples follow the target's CPU time in the window ($n for $want expected)"
chain=$(awk '{ n += $4; if ($1 == "root" && $5 ~ /;main;middle;part_[abc]$/) m += $4 } END { printf "%.1f", n ? 100 * m / n : 0 }' "$TMP/a.folded")
atleast "$chain" 95; ok $? "$chain% of stacks reach the root through main;middle (>= 95%)"
"$STACKCLOCK" dump -i "$TMP/a.data" >"$TMP/a.dump"
grep -q "session .*flags=attached.*target_pid=$pid" "$TMP/a.dump"; ok $? "session is flagged attached to $pid"
grep -q "module .*path=\"$TMP/shares\"" "$TMP/a.dump"; ok $? "existing mappings read from /proc/$pid/maps"

# Ctrl-C: SIGINT to the recorder ends the recording, not the target.
"$STACKCLOCK" record -p "$pid" -o "$TMP/c.data" 2>/dev/null &
rec=$!
sleep 0.5
kill -INT $rec
wait $rec
ok $? "SIGINT ends an attached recording with status 0"
kill -0 "$pid" 2>/dev/null
ok $? "and the target still runs"
n=$(sc_stacks "$TMP/c.data" | awk '{ n += $4 } END { print n + 0 }')
ok $(( n > 50 ? 0 : 1 )) "samples up to the SIGINT written ($n)"
kill "$pid"
wait "$pid" 2>/dev/null

# Threads that exist at attach time, and the target ending before --duration.
"$TMP/cputhreads" >/dev/null &
pid=$!
sleep 0.1
check "attach to a threaded process that ends before --duration" -- \
	"$STACKCLOCK" record -p "$pid" --duration 30 -o "$TMP/t.data"
wait "$pid"
tids=$(sc_stacks "$TMP/t.data" | awk -v p=$pid '$2 == p && $5 ~ /heavy/ { print $3 }' | sort -u | wc -l)
ok $(( tids == 2 ? 0 : 1 )) "both worker threads sampled ($tids)"

# One-line errors with a non-zero status.
one_line_fail "a PID that does not exist" "no process with PID 4194000" -- \
	"$STACKCLOCK" record -p 4194000 --duration 1 -o "$TMP/x.data"
one_line_fail "a program that does not exist" "no such program" -- \
	"$STACKCLOCK" record -o "$TMP/x.data" -- "$TMP/does-not-exist"
# A process of another user (as root: drop to nobody and attach to ours).
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
	# nobody must be able to create the data file (the output check
	# comes first): a sticky world-writable directory inside $TMP, which
	# becomes traversable (not listable) for it; lib.sh's trap removes both.
	chmod 711 "$TMP" && mkdir -m 1777 "$TMP/nobody" || exit 1
	sleep 5 &
	spid=$!
	one_line_fail "a process of another user: not permitted" "not permitted to profile PID $spid" -- \
		setpriv --reuid=nobody --regid=nogroup --clear-groups \
		"$STACKCLOCK" record -p "$spid" --duration 1 -o "$TMP/nobody/x.data"
	kill "$spid"
	wait "$spid" 2>/dev/null
	[ ! -e "$TMP/nobody/x.data" ]; ok $? "no data file left behind for another user's process"
fi
# A kernel that refuses perf events: smp_noperf.so makes perf_event_open
# fail with EACCES, as kernel.perf_event_paranoid does for a plain user.
cc -shared -fPIC -O2 -o "$TMP/noperf.so" "$PROGS/smp_noperf.c" || exit 1
one_line_fail "perf events refused: names kernel.perf_event_paranoid" \
	"kernel.perf_event_paranoid = -?[0-9]+.*sysctl kernel.perf_event_paranoid=1" -- \
	env ASAN_OPTIONS=verify_asan_link_order=0 LD_PRELOAD="$TMP/noperf.so" \
	"$STACKCLOCK" record -o "$TMP/x.data" -- "$TMP/shares" 100
[ ! -e "$TMP/x.data" ]; ok $? "no data file left behind by the failures"
