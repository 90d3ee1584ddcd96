#!/usr/bin/env bash
# Sampling a Go program (tests/progs/smp_go.go, built by the Debian
# golang-go toolchain): statically linked, its threads started by its own
# clone, its goroutines on stacks whose outermost frame is runtime.goexit.
# Go 1.19's CFI does not end the chain at its top frames, which the sampler
# once counted as unwind failures (0% of stacks reaching the root): they are
# roots (runtime.goexit, runtime.rt0_go, runtime.clone), and every stack
# counted as reaching the root begins at one.  Instrumentation refuses the
# program (no hooks, static: no preload) in one line, status 125.
. "$(dirname "$0")/lib.sh"
if ! command -v go >/dev/null; then
	echo "ok 1 # skip no go on PATH (Debian package golang-go)"
	exit 0
fi
export GOFLAGS=-mod=mod GO111MODULE=off GOTOOLCHAIN=local
check "go build smp_go.go ($(go version))" -- go build -o "$TMP/smp_go" "$PROGS/smp_go.go"
[ -x "$TMP/smp_go" ] || exit 1

# asynchronous preemption (SIGURG) would put samples in Go's signal
# handler, whose frames the unwinder does not cross
export GODEBUG=asyncpreemptoff=1
"$TMP/smp_go" 4 100000000 >"$TMP/plain.out"
check "record 4 goroutines" -- "$STACKCLOCK" record -F 999 -o "$TMP/g.data" -- "$TMP/smp_go" 4 100000000
"$STACKCLOCK" record -F 999 -o "$TMP/g2.data" -- "$TMP/smp_go" 4 100000000 >"$TMP/rec.out" 2>/dev/null
check "the program's output is unchanged ($(cat "$TMP/rec.out"))" -- cmp "$TMP/plain.out" "$TMP/rec.out"
report_json "$TMP/g.data" "$TMP/g.json"
r=$(q "$TMP/g.json" "s['root_reached_pct']")
check "$r% of stacks reach the root (>= 80%: the collector's work on a thread's system stack, below runtime.systemstack, does not)" -- \
	q "$TMP/g.json" "exit(0 if s['root_reached_pct'] >= 80 else 1)"
"$STACKCLOCK" dump --stacks -i "$TMP/g.data" >"$TMP/stacks.txt"
python3 - "$TMP/stacks.txt" >"$TMP/facts.txt" <<'PY'
import re, sys
roots = {"runtime.goexit", "runtime.rt0_go", "runtime.clone", "runtime.goexit.abi0",
         "runtime.rt0_go.abi0", "runtime.clone.abi0"}
total = root = work = 0
# Go's own switches to a thread's system stack: what ran below them is on
# another stack, which no unwinder of a sampled stack copy reaches
switch = {"runtime.systemstack", "runtime.mcall", "runtime.morestack"}
gtotal = groot = 0
bad = set()
for line in open(sys.argv[1]):
    state, pid, tid, count, path = line.rstrip("\n").split(" ", 4)
    frames, count = path.split(";"), int(count)
    total += count
    if state == "root":
        root += count
        # a sample at the program's first instructions: the entry point
        # (_rt0_amd64_linux) alone, a root like any entry point
        if frames[0] not in roots and not (len(frames) == 1 and frames[0] == "_rt0_amd64_linux"):
            bad.add(frames[0])
    if not switch & set(frames):
        gtotal += count
        groot += count if state == "root" else 0
    if re.match(r"runtime\.goexit;(.*;)?main\.main\.func1;(.*;)?main\.(work|churn)(;|$)", path):
        work += count
print("bad=%s" % ",".join(sorted(bad)))
print("groot=%.1f" % (100.0 * groot / gtotal if gtotal else 0))
print("work=%.1f" % (100.0 * work / total if total else 0))
PY
bad=$(sed -n 's/^bad=//p' "$TMP/facts.txt")
ok $([ -z "$bad" ]; echo $?) "every stack counted as reaching the root begins at runtime.goexit, rt0_go or clone (or is the entry point alone)${bad:+ (not: $bad)}"
g=$(sed -n 's/^groot=//p' "$TMP/facts.txt")
check "stacks with no switch to a system stack: $g% reach the root (>= 97%)" -- awk -v a="$g" 'BEGIN { exit !(a >= 97) }'
w=$(sed -n 's/^work=//p' "$TMP/facts.txt")
check "runtime.goexit;...;main.main.func1;...;main.work or main.churn on $w% of stacks (>= 70%)" -- \
	awk -v a="$w" 'BEGIN { exit !(a >= 70) }'
check "main.work has exclusive samples" -- \
	q "$TMP/g.json" "exit(0 if row('main.work')['exclusive_samples'] > 0 else 1)"

one_line_fail "record -m instrument refuses a static Go program in one line" \
	"statically linked.*sampling" -- "$STACKCLOCK" record -m instrument -o "$TMP/i.data" -- "$TMP/smp_go" 1 10
