#!/usr/bin/env bash
# san: skip
# Run-time patching of programs built without hooks (SPEC section 10,
# docs/patching.md), with gcc and clang at -O2: the program's output and
# exit status are unchanged (registers kept, backtrace() sees the real
# callers), and every patched function's count equals the program's own
# (patch_exact.c: plain calls and recursion, a RIP-relative first
# instruction, a jcc among the first bytes, a jump back to the entry, tail
# calls, float arguments and returns, -fipa-ra callers, signal handlers on
# an alternate stack, a profiling timer's signals landing anywhere in
# patched code, threads, fork and
# exec); the 3-byte function, too short for the entry jmp, is counted at
# its call site (call_sites).
# longjmp past patched frames (e2e_jumps.c) and C++ exceptions through
# them (e2e_throws.cc, g++ and clang++) keep exact counts.  A static
# program gets one line that suggests sampling.  Recursion deeper than the
# runtime's stack of return addresses is counted, its returns left alone.
# 256-bit values kept across patched calls; the probe cost calibrated on
# the patched probes for a patched program; coroutines (swapcontext)
# patched and with hooks: exact counts, no hang.
. "$(dirname "$0")/lib.sh"
export STACKCLOCK_CACHE_DIR=$TMP/cache

for cc in gcc clang; do
	command -v $cc >/dev/null || continue
	exe=$TMP/exact_$cc
	$cc -O2 -g -pthread -rdynamic -o "$exe" "$PROGS/patch_exact.c" 2>/dev/null || { ok 1 "$cc: build"; continue; }
	"$exe" 300 >"$TMP/plain.out" 2>"$TMP/plain.err"
	rc0=$?
	"$STACKCLOCK" record -m instrument -o "$TMP/e.data" -- "$exe" 300 >"$TMP/rec.out" 2>"$TMP/rec.err"
	rc1=$?
	[ $rc0 -eq 0 ] && [ $rc1 -eq 0 ] && cmp -s "$TMP/plain.out" "$TMP/rec.out"
	ok $? "$cc: same output and exit status under patching ($rc0, $rc1)"
	report_json "$TMP/e.data" "$TMP/e.json"
	grep '^expect ' "$TMP/rec.err" >"$TMP/expect"     # what this run did
	python3 - "$TMP/e.json" "$TMP/expect" "$cc" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
calls = {x["function"]: x["calls"] for x in r["rows"]}
bad = []
n = 0
for line in open(sys.argv[2]):
    _, name, want = line.split()
    n += 1
    if calls.get(name) != int(want):
        bad.append("%s %s != %s" % (name, calls.get(name), want))
s = r["session"]
print(("not ok" if bad or not n else "ok") + " - %s: %d functions' counts exact %s" % (sys.argv[3], n, "; ".join(bad)))
u = s.get("unpatched", {})
print(("ok" if u.get("call_sites") == 1 and "too_short" not in u and s.get("patched", 0) >= 20 else "not ok") +
      " - %s: session lists %s patched, unpatched %s (call_sites 1: tiny)" % (sys.argv[3], s.get("patched"), u))
PY
done

for cc in gcc clang; do
	command -v $cc >/dev/null || continue
	$cc -O2 -g -o "$TMP/jumps_$cc" "$PROGS/e2e_jumps.c" || exit 1
	check "$cc: record 20,000 longjmps" -- \
		"$STACKCLOCK" record -m instrument -o "$TMP/j.data" -- "$TMP/jumps_$cc" 20000
	report_json "$TMP/j.data" "$TMP/j.json"
	check "$cc: step, op, fail 20,000 calls each, 3 repairs per jump, no open frame ($(q "$TMP/j.json" "(row('step')['calls'], s['repairs'], s['open_frames'])"))" -- \
		q "$TMP/j.json" "exit(0 if (row('step')['calls'], row('op')['calls'], row('fail')['calls'], s['repairs'], s['open_frames'], s['lost_events']) == (20000, 20000, 20000, 60000, 0, 0) else 1)"
done

for cxx in g++ clang++; do
	command -v $cxx >/dev/null || continue
	$cxx -O2 -g -o "$TMP/throws" "$PROGS/e2e_throws.cc" || exit 1
	check "$cxx: record 2000 exceptions through patched frames" -- \
		"$STACKCLOCK" record -m instrument -o "$TMP/t.data" -- "$TMP/throws" 2000
	report_json "$TMP/t.data" "$TMP/t.json"
	check "$cxx: 2000 calls each, the unwound frames closed at the catch: no repair, no open frame ($(q "$TMP/t.json" "(s['repairs'], s['open_frames'])"))" -- \
		q "$TMP/t.json" "exit(0 if [row(f)['calls'] for f in ('catcher(int)', 'middle(int)', 'thrower(int)', 'handled()')] == [2000] * 4 and s['repairs'] == 0 and s['open_frames'] == 0 else 1)"
done

# Threads ended by pthread_exit and pthread_cancel under frames with
# cleanup handlers (e2e_cancel.c, -fexceptions: the handlers are landing
# pads the C library's forced unwind runs; the cancellation's unwinder is
# one the C library loads and calls itself, which no wrapper sees).  Every
# handler must run, patched and with hooks: before, the unwinder stopped at
# the first return trampoline (a patched frame's, or usleep's library
# call), no handler ran, and a hooks build died of SIGSEGV at pthread_exit.
for cc in gcc clang; do
	command -v $cc >/dev/null || continue
	for how in patched hooks; do
		f=; [ $how = hooks ] && f=-finstrument-functions
		$cc -O2 -g -pthread -fexceptions $f -o "$TMP/cancel" "$PROGS/e2e_cancel.c" || exit 1
		"$TMP/cancel" 3 >"$TMP/cancel.plain"
		"$STACKCLOCK" record -m instrument -o "$TMP/cancel.data" -- "$TMP/cancel" 3 >"$TMP/cancel.out" 2>"$TMP/cancel.err"
		rc=$?
		check "$cc $how: pthread_exit and pthread_cancel run every cleanup handler (status $rc; $(sort -u "$TMP/cancel.out" | tr '\n' ' '))" -- \
			sh -c "[ $rc = 0 ] && cmp -s '$TMP/cancel.plain' '$TMP/cancel.out' && [ \$(grep -c '^exit 42 cleaned 2\$' '$TMP/cancel.out') = 3 ] && [ \$(grep -c '^cancel 1 cleaned 11\$' '$TMP/cancel.out') = 3 ]"
		report_json "$TMP/cancel.data" "$TMP/cancel.json"
		check "$cc $how: cleanup, exit_deep and cancel_deep counted exactly ($(q "$TMP/cancel.json" "[row(f)['calls'] for f in ('cleanup', 'exit_deep', 'cancel_deep')]"))" -- \
			q "$TMP/cancel.json" "exit(0 if [row(f)['calls'] for f in ('cleanup', 'exit_deep', 'cancel_deep')] == [39, 6, 33] else 1)"
	done
done

# Rust panics caught by catch_unwind (e2e_rust_panic.rs): Rust calls no
# __cxa_begin_catch, so the frames a panic unwinds are closed where the
# unwinder lands (_Unwind_SetIP), the trampolines put back above it, and
# taken out again by _Unwind_Resume after a cleanup.  Before: 3,149
# repairs for 286 panics of 1,000 calls, and 2 open frames.
if command -v rustc >/dev/null; then
	rustc -O -g -o "$TMP/rpanic" "$PROGS/e2e_rust_panic.rs" 2>"$TMP/rustc.err" || { ok 1 "rustc: build"; exit; }
	n=7000
	"$TMP/rpanic" $n >"$TMP/rp.plain"
	check "Rust: record $n guarded calls, patched" -- \
		"$STACKCLOCK" record -m instrument -F 10000 -o "$TMP/rp.data" -- "$TMP/rpanic" $n
	"$TMP/rpanic" $n | cmp -s - "$TMP/rp.plain"
	ok $? "Rust: the output is the program's own ($(cat "$TMP/rp.plain"))"
	report_json "$TMP/rp.data" "$TMP/rp.json"
	# mid(i) always runs, mid(i + 1) unless mid(i) panicked
	want=$(python3 -c "n=$n; m=sum(1 for i in range(n)) + sum(1 for i in range(n) if i % 7 != 3); print(n, m, m)")
	check "Rust: guarded, top, mid, leaf counted exactly ($want; $(q "$TMP/rp.json" "[row(f)['calls'] for f in ('e2e_rust_panic::guarded', 'e2e_rust_panic::top', 'e2e_rust_panic::mid', 'e2e_rust_panic::leaf')]"))" -- \
		q "$TMP/rp.json" "exit(0 if [row(f)['calls'] for f in ('e2e_rust_panic::guarded', 'e2e_rust_panic::mid', 'e2e_rust_panic::leaf')] == [int(x) for x in '$want'.split()] and row('e2e_rust_panic::top')['calls'] == $n else 1)"
	check "Rust: the panics' frames closed where they landed: no repair, no open frame ($(q "$TMP/rp.json" "(s['repairs'], s['open_frames'], s['repairs_by_cause'])"))" -- \
		q "$TMP/rp.json" "exit(0 if (s['repairs'], s['open_frames'], s['lost_events']) == (0, 0, 0) else 1)"
	# a panicking leaf's frame holds the unwinding (the panic machinery
	# runs under it), not its caller's time after the catch: top's own
	# share stays small beside leaf's.  Compared in the sampled shares
	# (the thread's CPU clock at 10 kHz, each sample charged to the node
	# on top as its interval is): a thread waiting for a processor takes no
	# sample, so the check holds on a loaded machine.  Elapsed times did
	# not: with two other jobs beside the suite a preemption in one of
	# top's own intervals gave it 7.0 ms of EE against leaf's 0.6 ms of EI
	# (700 calls; pinned to one core with two CPU hogs, 2 runs of 25 failed
	# so), and the application times of the exact rule failed 2 runs of 20
	# (top's AE 24 and 44 ms: switches not taken out, an open question for
	# the OS-event accounting).  Those 20 runs: top 0-5 % of the samples,
	# leaf 69-82 %, 89-150 samples.
	check "Rust: the unwinding is charged inside leaf (SI $(q "$TMP/rp.json" "row('e2e_rust_panic::leaf')['sampled_inclusive_pct']") %), not to top's own share (SE $(q "$TMP/rp.json" "row('e2e_rust_panic::top')['sampled_exclusive_pct']") %; $(q "$TMP/rp.json" "s['samples']") samples)" -- \
		q "$TMP/rp.json" "exit(0 if s['samples'] >= 20 and row('e2e_rust_panic::top')['sampled_exclusive_pct'] * 4 < row('e2e_rust_panic::leaf')['sampled_inclusive_pct'] else 1)"
else
	echo "ok 1 # skip no rustc on PATH (Debian package rustc)"
fi

if gcc -O2 -static -o "$TMP/static" "$PROGS/rep_calls.c" 2>/dev/null; then
	err=$("$STACKCLOCK" record -m instrument -o "$TMP/s.data" -- "$TMP/static" 2>&1 >/dev/null)
	rc=$?
	[ $rc -ne 0 ] && [ "$(printf '%s\n' "$err" | wc -l)" -eq 1 ] && case "$err" in *static*sampl*) true ;; *) false ;; esac
	ok $? "static program: one line, non-zero exit, suggests sampling ($err)"
fi

# deeper than the runtime's stack of return addresses (65,536 frames): the
# calls are counted, the returns beyond it are left alone and counted
cat >"$TMP/deep.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
__attribute__((noinline)) long down(long d) { return d <= 0 ? 0 : 1 + down(d - 1) * 1; }
int main(int argc, char **argv) { printf("%ld\n", down(atol(argv[1]))); return 0; }
C
gcc -O2 -fno-optimize-sibling-calls -o "$TMP/deep" "$TMP/deep.c" || exit 1
check "recursion 100,000 deep" -- "$STACKCLOCK" record -m instrument -o "$TMP/d.data" -- "$TMP/deep" 100000
report_json "$TMP/d.data" "$TMP/d.json"
check "100,001 calls of down, 34,466 unhooked returns ($(q "$TMP/d.json" "(row('down')['calls'], s['unhooked_returns'])"))" -- \
	q "$TMP/d.json" "exit(0 if (row('down')['calls'], s['unhooked_returns'], s['open_frames']) == (100001, 100001 - 65535, 0) else 1)"

# 256-bit values live in ymm registers across patched calls (-fipa-ra) and
# passed in them: the same output as without patching, exact counts
if grep -qw avx2 /proc/cpuinfo; then
	for cc in gcc clang; do
		command -v $cc >/dev/null || continue
		$cc -O2 -mavx2 -o "$TMP/avx_$cc" "$PROGS/patch_avx.c" || { ok 1 "$cc: build patch_avx"; continue; }
		"$TMP/avx_$cc" 1000 >"$TMP/avx.plain"
		"$STACKCLOCK" record -m instrument -o "$TMP/v.data" -- "$TMP/avx_$cc" 1000 >"$TMP/avx.rec" 2>/dev/null
		cmp -s "$TMP/avx.plain" "$TMP/avx.rec"
		ok $? "$cc -mavx2: ymm values kept across patched calls ($(cat "$TMP/avx.rec"))"
		report_json "$TMP/v.data" "$TMP/v.json"
		check "$cc -mavx2: step, tiny and tiny2 1000 calls each" -- \
			q "$TMP/v.json" "exit(0 if [row(f)['calls'] for f in ('step', 'tiny', 'tiny2')] == [1000] * 3 else 1)"
	done
fi

# the probes' cost is calibrated on the probes in use: a program patched at
# run time gets the patched probes' (stackclock-calib-patch, patched like a
# target), not the compiled-in hooks' (t314's program)
cost_of() {	# cost_of DATA: "FLAVOUR SUM-OF-THE-FOUR-COSTS-PS"
	"$STACKCLOCK" dump -i "$1" | sed -n 's/.*probe_cost .*enter_enter_ps=\([0-9]*\) enter_exit_ps=\([0-9]*\) exit_enter_ps=\([0-9]*\) exit_exit_ps=\([0-9]*\).* probes=\([a-z]*\).*/\5 \1 \2 \3 \4/p' |
		awk '{ print $1, $2 + $3 + $4 + $5 }'
}
gcc -O2 -g -o "$TMP/acc_plain" "$PROGS/e2e_accuracy.c" && gcc -O2 -g -finstrument-functions -o "$TMP/acc_hooks" "$PROGS/e2e_accuracy.c" || exit 1
"$STACKCLOCK" record -m instrument -o "$TMP/cp.data" -- "$TMP/acc_plain" 1000 >/dev/null 2>&1
"$STACKCLOCK" record -m instrument -o "$TMP/ch.data" -- "$TMP/acc_hooks" 1000 >/dev/null 2>&1
read -r fp sp <<<"$(cost_of "$TMP/cp.data")"
read -r fh sh <<<"$(cost_of "$TMP/ch.data")"
# (which costs more is the machine's: since the patched probes lost their
# vector saves they cost about the hooks' here, less on some machines; what
# matters is which program measured them)
[ "$fp" = patched ] && [ "$fh" = hooks ] && [ "${sp:-0}" -gt 0 ] && [ "${sh:-0}" -gt 0 ] && [ "$sp" != "$sh" ]
ok $? "patched program: the patched probes' cost measured by their own program ($fp, $sp ps for the four kinds; the hooks' $fh, $sh ps)"

# coroutines: swapcontext between two stacks of one mapping, patched and
# with hooks built in: same output, exact counts, never a hang
for mode in patched hooks; do
	extra=""
	[ $mode = hooks ] && extra="-finstrument-functions"
	gcc -O2 -fno-optimize-sibling-calls $extra -o "$TMP/coro_$mode" "$PROGS/patch_coro.c" || { ok 1 "build patch_coro ($mode)"; continue; }
	timeout 60 "$STACKCLOCK" record -m instrument -o "$TMP/co.data" -- "$TMP/coro_$mode" >"$TMP/co.out" 2>/dev/null
	rc=$?
	[ $rc -eq 0 ] && [ "$(cat "$TMP/co.out")" = "4497500 16" ]
	ok $? "coroutines ($mode): exit 0 within 60 s and the program's output (rc $rc, $(head -c 80 "$TMP/co.out"))"
	report_json "$TMP/co.data" "$TMP/co.json"
	check "coroutines ($mode): run_a 1, run_b 1, step_a 1000, step_b 1000, work 2001 ($(q "$TMP/co.json" "[(x['function'], x['calls']) for x in rows]"))" -- \
		q "$TMP/co.json" "exit(0 if [row(f)['calls'] for f in ('run_a', 'run_b', 'step_a', 'step_b', 'work')] == [1, 1, 1000, 1000, 2001] else 1)"
done
