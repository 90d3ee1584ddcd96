#!/usr/bin/env bash
# serial (compares call durations with the program's own clock)
# The timeline (SPEC section 12, record --timeline), recorded from real
# runs of e2e_timeline.c (threads A, B and main, each making N steps of
# known order and duration, a nap() with a system call after each but the
# first), gcc and clang hooks and patched:
#  - replay --format json: sorted, calls properly nested, OS events and
#    samples at the depth of the call around them (tl_check.py nest);
#  - the program's own stamps of every step() and inner(): the same calls
#    in the same order per thread, each inside ours, most within 150 us;
#    nap > usleep > a clock_nanosleep system call;
#  - every function's calls in the timeline equal the report's, and the
#    report's counts equal those of a recording without a timeline;
#  - record-time filters (--min-time, --depth, --only), the size limit
#    (dropped, said), a SIGKILL (open calls), replay's own filters;
#  - the sampled timeline: every sample, in order;
#  - bad input: one line, non-zero status.
# Timing tolerances: each call must hold the program's own interval (20 us
# of clock slack); closeness is asked of 90 % of the calls only.
# san: skip (the runtime and the targets are never sanitized)
. "$(dirname "$0")/lib.sh"

N=6
tl() { python3 "$E2E_DIR/tl_check.py" "$@"; }

for v in "${BUILD_VARIANTS[@]}"; do
	IFS=: read -r name cc flags <<<"$v"
	$cc -g -O1 $flags -o "$TMP/tl_$name" "$PROGS/e2e_timeline.c" -lpthread || exit 1
	"$STACKCLOCK" record -m instrument --timeline -o "$TMP/tl.data" -- "$TMP/tl_$name" $N >"$TMP/tl.out" 2>"$TMP/tl.err"
	check "$name: recorded with a timeline (status $?)" -- grep -q "timeline: [0-9.]* MB of events in order" "$TMP/tl.err"
	check "$name: replay --format json" -- sh -c "'$STACKCLOCK' replay -i '$TMP/tl.data' --format json >'$TMP/tl.json'"
	check "$name: events sorted and nested" -- tl nest "$TMP/tl.json"
	check "$name: step() and inner() as the program made and timed them" -- tl program "$TMP/tl.json" "$TMP/tl.out" $N
	report_json "$TMP/tl.data" "$TMP/tl_rep.json"
	check "$name: every function's calls in the timeline are the report's" -- tl counts "$TMP/tl.json" "$TMP/tl_rep.json"
	# the same program without a timeline: the same counts
	"$STACKCLOCK" record -m instrument -o "$TMP/nt.data" -- "$TMP/tl_$name" $N >/dev/null 2>&1
	report_json "$TMP/nt.data" "$TMP/nt.json"
	check "$name: the report's counts without a timeline are the same" -- \
		python3 -c "
import json
a = {(r['function'], r['module']): r['calls'] for r in json.load(open('$TMP/tl_rep.json'))['rows']}
b = {(r['function'], r['module']): r['calls'] for r in json.load(open('$TMP/nt.json'))['rows']}
d = {k: (a.get(k), b.get(k)) for k in set(a) | set(b) if a.get(k) != b.get(k) and k[0] not in ('now_ns', 'clock_gettime', 'spin')}
print(d); raise SystemExit(1 if d else 0)"
	# the text replay: braces balance, the thread names
	"$STACKCLOCK" replay -i "$TMP/tl.data" >"$TMP/tl.txt"
	check "$name: text replay: every '{' closed, 3 threads" -- \
		python3 -c "
t = open('$TMP/tl.txt').read()
o, c, th = t.count('() {'), sum(1 for l in t.splitlines() if l.strip() == '}'), t.count('# thread ')
print(o, c, th); raise SystemExit(0 if o == c and th == 3 else 1)"
done

# --- record-time filters (gcc hooks) ---------------------------------------
P=$TMP/tl_gcc
"$STACKCLOCK" record -m instrument --timeline --min-time 1200us -o "$TMP/mt.data" -- $P $N >"$TMP/mt.out" 2>"$TMP/mt.err"
"$STACKCLOCK" replay -i "$TMP/mt.data" --format json >"$TMP/mt.json"
check "--min-time 1200us: every call and OS event lasts 1.2 ms or more" -- tl mintime "$TMP/mt.json" 1200000
# steps of ms(i) = 2 or 3 last 2-3 ms; of 1, about 1.05 ms: out, but for
# the first step of a thread, which also holds the runtime's first-time
# work (new calling contexts) and may pass 1.2 ms
lo=$(awk '$2 == "step" && $4 - $3 >= 1200000' "$TMP/mt.out" | wc -l)
hi=$((lo + 3))
got=$(python3 -c "import json; print(sum(1 for t in json.load(open('$TMP/mt.json'))['threads'] for e in t['events'] if e.get('function') == 'step'))")
check "--min-time: the $lo steps of 1.2 ms or more are kept, at most the 3 first steps more ($got)" -- \
	test "$got" -ge "$lo" -a "$got" -le "$hi"
check "--min-time: record says how many calls were left out" -- grep -q "calls left out by --min-time" "$TMP/mt.err"
"$STACKCLOCK" report -i "$TMP/mt.data" --format json >"$TMP/mt_rep.json"
check "--min-time: kept + left out = every call" -- python3 -c "
import json
d = json.load(open('$TMP/mt.json')); r = json.load(open('$TMP/mt_rep.json'))
kept = sum(1 for t in d['threads'] for e in t['events'] if e['kind'] == 'call')
print(kept, d['filtered'], sum(x['calls'] for x in r['rows'])); raise SystemExit(0 if kept + d['filtered'] == sum(x['calls'] for x in r['rows']) else 1)"

"$STACKCLOCK" record -m instrument --timeline --depth 2 -o "$TMP/dp.data" -- $P $N >/dev/null 2>&1
"$STACKCLOCK" replay -i "$TMP/dp.data" --format json >"$TMP/dp.json"
check "--depth 2: no call deeper than 1" -- tl depth "$TMP/dp.json" 2
# a thread's start routine is its depth 0: A's and B's steps are at 1,
# main's at 2 (main > run > step)
check "--depth 2: run() of the 3 threads, the $((2 * N)) steps of A and B, none of main's" -- python3 -c "
import json
c = [e['function'] for t in json.load(open('$TMP/dp.json'))['threads'] for e in t['events'] if e['kind'] == 'call']
print(c.count('run'), c.count('step')); raise SystemExit(0 if c.count('run') == 3 and c.count('step') == $((2 * N)) else 1)"

"$STACKCLOCK" record -m instrument --timeline --only inner -o "$TMP/on.data" -- $P $N >/dev/null 2>&1
"$STACKCLOCK" replay -i "$TMP/on.data" --format json >"$TMP/on.json"
check "--only inner: every call is inner() or inside one" -- tl only "$TMP/on.json" inner
check "--only inner: all $((3 * N)) calls of inner()" -- python3 -c "
import json
c = [e['function'] for t in json.load(open('$TMP/on.json'))['threads'] for e in t['events'] if e['kind'] == 'call']
print(c.count('inner')); raise SystemExit(0 if c.count('inner') == $((3 * N)) else 1)"

# --- the size limit ----------------------------------------------------------
"$STACKCLOCK" record -m instrument --timeline=256K -o "$TMP/sz.data" -- $P 20 >/dev/null 2>"$TMP/sz.err"
check "--timeline=256K: record says what it dropped" -- grep -q "DROPPED: the --timeline size was reached" "$TMP/sz.err"
"$STACKCLOCK" replay -i "$TMP/sz.data" >"$TMP/sz.txt"
check "--timeline=256K: replay says it too" -- grep -q "DROPPED (the --timeline size was reached)" "$TMP/sz.txt"
"$STACKCLOCK" report -i "$TMP/sz.data" --format json >"$TMP/sz_rep.json"
check "--timeline=256K: the report's counts are whole (step: 60)" -- python3 -c "
import json
r = {x['function']: x['calls'] for x in json.load(open('$TMP/sz_rep.json'))['rows']}
raise SystemExit(0 if r['step'] == 60 and r['inner'] == 60 else 1)"
check "--timeline=256K: the data file's timeline fits (at most 256 KiB of items)" -- python3 -c "
import os; s = os.path.getsize('$TMP/sz.data'); print(s); raise SystemExit(0 if s < 1 << 20 else 1)"

# --- SIGKILL: calls still open ---------------------------------------------
"$STACKCLOCK" record -m instrument --timeline -o "$TMP/k.data" -- $P 2 kill >/dev/null 2>&1
"$STACKCLOCK" replay -i "$TMP/k.data" --format json >"$TMP/k.json"
check "SIGKILL: main, final and raise open, ending together" -- python3 -c "
import json
d = json.load(open('$TMP/k.json'))
o = [(e['function'], e['start_ns'] + e['duration_ns']) for t in d['threads'] for e in t['events'] if e.get('open')]
print(o); raise SystemExit(0 if sorted(f for f, _ in o) == ['final', 'main', 'raise'] and len(set(x for _, x in o)) == 1 else 1)"
check "SIGKILL: events sorted and nested" -- tl nest "$TMP/k.json"
# items in the thread's staging buffer (SC_ENG_TL_STAGE) and in chunks,
# some copied, some not yet: a SIGKILL loses none of the calls made
gcc -O1 -g -finstrument-functions -o "$TMP/killed" "$PROGS/e2e_killed.c" || exit 1
for n in 1000 300000; do
	"$STACKCLOCK" record -m instrument --timeline -o "$TMP/kn.data" -- "$TMP/killed" $n >/dev/null 2>&1
	"$STACKCLOCK" replay -i "$TMP/kn.data" --format json >"$TMP/kn.json"
	check "SIGKILL after $n calls: all $n in the timeline, in order, main, die_now and kill() open" -- python3 -c "
import json
d = json.load(open('$TMP/kn.json'))
ev = [e for t in d['threads'] for e in t['events'] if e['kind'] == 'call']
w = [e for e in ev if e['function'] == 'work']
o = sorted(e['function'] for e in ev if e.get('open'))
starts = [e['start_ns'] for e in w]
print(len(w), o)
raise SystemExit(0 if len(w) == $n and starts == sorted(starts) and o == ['die_now', 'kill', 'main'] and
                 all(not e.get('open') for e in w) else 1)"
	check "SIGKILL after $n calls: events sorted and nested" -- tl nest "$TMP/kn.json"
done

# --- replay's own filters ---------------------------------------------------
tid=$(awk 'NR == 1 { print $1 }' "$TMP/tl.out")
"$STACKCLOCK" replay -i "$TMP/tl.data" --tid "$tid" --format json >"$TMP/rt.json"
check "replay --tid $tid: that thread only" -- python3 -c "
import json; d = json.load(open('$TMP/rt.json')); raise SystemExit(0 if [t['tid'] for t in d['threads']] == [$tid] else 1)"
"$STACKCLOCK" replay -i "$TMP/tl.data" --since 10ms --until 20ms --format json >"$TMP/rw.json"
check "replay --since 10ms --until 20ms: events in the window" -- tl window "$TMP/rw.json" 10000000 20000000
# a bare number is seconds, as the START (s) column (issue 30, 13)
"$STACKCLOCK" replay -i "$TMP/tl.data" --since 0.01 --until 0.020 --format json >"$TMP/rw2.json"
check "replay --since 0.01 --until 0.020: seconds, the very output of 10ms and 20ms" -- cmp "$TMP/rw.json" "$TMP/rw2.json"
"$STACKCLOCK" replay -i "$TMP/tl.data" --since 10000000ns --until 20000us --format json >"$TMP/rw3.json"
check "replay --since 10000000ns --until 20000us: the same" -- cmp "$TMP/rw.json" "$TMP/rw3.json"
bad() { # ARGS... : status 2, one exact line
	local want=$1; shift
	"$STACKCLOCK" replay -i "$TMP/tl.data" "$@" >"$TMP/bo" 2>"$TMP/be"; local rc=$?
	check "replay $*: status 2, one line" -- sh -c "test $rc = 2 && test ! -s '$TMP/bo' && test \"\$(cat '$TMP/be')\" = \"\$1\"" - "$want"
}
since_exp="(expected seconds since the first event, such as 1.5 or 0.005, or with a unit: 1.5s, 200ms, 10us, 500ns)"
dur_exp="(expected a duration with its unit, such as 500ns, 10us, 2.5ms or 1s: a bare number could be ns or s)"
bad "stackclock: replay: invalid --since '5x' $since_exp" --since 5x
bad "stackclock: replay: invalid --since '0x10' $since_exp" --since 0x10
bad "stackclock: replay: invalid --until '-1' $since_exp" --until -1
bad "stackclock: replay: invalid --until '' $since_exp" --until ''
bad "stackclock: replay: invalid --since '1e400' $since_exp" --since 1e400
bad "stackclock: replay: invalid --min-time '100' $dur_exp" --min-time 100
bad "stackclock: replay: invalid --min-time '2.5' $dur_exp" --min-time 2.5
"$STACKCLOCK" replay -i "$TMP/tl.data" --min-time 0 --format json >"$TMP/m0.json"
"$STACKCLOCK" replay -i "$TMP/tl.data" --format json >"$TMP/all.json"
check "replay --min-time 0: everything" -- cmp "$TMP/m0.json" "$TMP/all.json"
"$STACKCLOCK" replay -i "$TMP/tl.data" --min-time 1ms --format json >"$TMP/rm.json"
check "replay --min-time 1ms" -- tl mintime "$TMP/rm.json" 1000000
"$STACKCLOCK" replay -i "$TMP/tl.data" --depth 3 --format json >"$TMP/rd.json"
check "replay --depth 3" -- tl depth "$TMP/rd.json" 3

# --- the sampled timeline ---------------------------------------------------
"$STACKCLOCK" record --timeline -F 999 -o "$TMP/s.data" -- "$TMP/tl_patched" 10 >/dev/null 2>"$TMP/s.err"
check "sampling: record says how many samples it kept in order" -- grep -q "timeline: [0-9]* samples in order" "$TMP/s.err"
"$STACKCLOCK" replay -i "$TMP/s.data" --format json >"$TMP/s.json"
"$STACKCLOCK" report -i "$TMP/s.data" --format json >"$TMP/s_rep.json"
check "sampling: every sample in order, most in spin()" -- tl samples "$TMP/s.json" "$TMP/s_rep.json"

# --- bad input ----------------------------------------------------------------
"$STACKCLOCK" replay -i "$TMP/nt.data" >/dev/null 2>"$TMP/e1"; rc=$?
check "replay of a recording without a timeline: status 1, says to record with --timeline" -- \
	sh -c "test $rc = 1 && grep -q 'record again with --timeline' '$TMP/e1' && test \$(wc -l <'$TMP/e1') = 1"
"$STACKCLOCK" record -m instrument --min-time 1ms -o "$TMP/x.data" -- $P 1 >/dev/null 2>"$TMP/e2"; rc=$?
check "--min-time without --timeline: status 125, one line" -- sh -c "test $rc = 125 && grep -q 'add --timeline' '$TMP/e2'"
"$STACKCLOCK" record --timeline --only main -o "$TMP/x.data" -- $P 1 >/dev/null 2>"$TMP/e3"; rc=$?
check "--only with sampling: status 125" -- sh -c "test $rc = 125 && grep -q -- '-m instrument' '$TMP/e3'"
"$STACKCLOCK" record -m instrument --timeline --only no_such_fn -o "$TMP/x.data" -- $P 1 >/dev/null 2>"$TMP/e4"; rc=$?
check "--only of a function the program lacks: status 125, named" -- sh -c "test $rc = 125 && grep -q \"no function 'no_such_fn'\" '$TMP/e4'"
"$STACKCLOCK" record -m instrument --timeline=lots -o "$TMP/x.data" -- $P 1 >/dev/null 2>"$TMP/e5"; rc=$?
check "--timeline=lots: status 125" -- sh -c "test $rc = 125 && grep -q 'a size such as' '$TMP/e5'"
"$STACKCLOCK" replay -i "$TMP/tl.data" --since 2s --until 1s >/dev/null 2>"$TMP/e6"; rc=$?
check "replay --since after --until: status 2" -- sh -c "test $rc = 2 && grep -q 'since is after' '$TMP/e6'"
head -c 3000 "$TMP/tl.data" >"$TMP/cut.data"
"$STACKCLOCK" replay -i "$TMP/cut.data" >/dev/null 2>"$TMP/e7"; rc=$?
check "replay of a truncated file: no crash, said (status $rc)" -- sh -c "test $rc -le 1 && test -s '$TMP/e7'"


# read from a pipe (no pread there): the timeline's records kept in memory,
# the same replay and chrome export as from the file (before: "0 events"
# and a damage warning)
"$STACKCLOCK" replay -i "$TMP/tl.data" >"$TMP/pf.txt" 2>/dev/null
cat "$TMP/tl.data" | "$STACKCLOCK" replay -i /dev/stdin >"$TMP/pp.txt" 2>"$TMP/pp.err"
check "replay from a pipe: the same output as from the file ($(wc -l <"$TMP/pp.txt") lines), no warning" -- \
	sh -c "test -s '$TMP/pf.txt' && cmp -s '$TMP/pf.txt' '$TMP/pp.txt' && ! test -s '$TMP/pp.err'"
"$STACKCLOCK" export -i "$TMP/tl.data" --format chrome -o "$TMP/pf.json" 2>/dev/null
cat "$TMP/tl.data" | "$STACKCLOCK" export -i /dev/stdin --format chrome -o "$TMP/pp.json" 2>/dev/null
check "export --format chrome from a pipe: the same file" -- cmp -s "$TMP/pf.json" "$TMP/pp.json"
