#!/usr/bin/env bash
# A storm of asynchronous signals (issue 30): SIGPROF and SIGALRM every
# 100 us (e2e_sigstorm.c), handlers calling instrumented functions, main
# calling instrumented functions and clock_gettime (a library call).  A
# signal lands anywhere, the probes and the trampolines included; nothing
# jumps.  Before, a handler's events queued while a probe ran were placed
# by a stack the handler had left (2 to 2,900 repairs "other" a run, a
# handler's callee under clock_gettime with no handler between, a call
# lost when one handler interrupted the other's queueing).  Now, for gcc
# and clang with the hooks and the program patched at run time, 5 runs
# each: no repair, every call counted as the program counts it, each
# handler's callees under their handler, the handlers under what they
# interrupted (a function of main's or the other handler's).
# san: skip (the runtime and the targets are never sanitized)
. "$(dirname "$0")/lib.sh"
RUNS=${RUNS:-5}

for v in "${BUILD_VARIANTS[@]}"; do
	IFS=: read -r name cc flags <<<"$v"
	# (no sibling calls: a handler's tail call would make its callee take
	# its place, as a tail call does in any function)
	$cc -g -O1 -fno-optimize-sibling-calls $flags -o "$TMP/st_$name" "$PROGS/e2e_sigstorm.c" ||
		{ ok 1 "build e2e_sigstorm ($name)"; continue; }
	for run in $(seq "$RUNS"); do
		rec "$TMP/st.data" "$TMP/st.out" "$TMP/st.err" "$TMP/st_$name" 60000
		check "storm $name run $run: the program ran to its end (status $(cat "$TMP/rc"))" -- \
			sh -c "[ \$(cat '$TMP/rc') = 0 ] && grep -q '^outer 60000 ' '$TMP/st.out'"
		"$STACKCLOCK" report -i "$TMP/st.data" --tree --format json >"$TMP/st.json" 2>"$TMP/rep.err"
		ok $? "storm $name run $run: report --tree"
		check "storm $name run $run: no repair, exact calls, handlers in their place ($(cat "$TMP/st.out"))" -- \
			python3 - "$TMP/st.json" "$TMP/st.out" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
out = open(sys.argv[2]).read().split()
got = dict(zip(out[0::2], map(int, out[1::2])))
s = r["session"]
bad = []
if (s["repairs"], s["lost_events"], s["open_frames"]) != (0, 0, 0):
    bad.append("repairs %d %s, lost %d, open frames %d" %
               (s["repairs"], s.get("repairs_by_cause"), s["lost_events"], s["open_frames"]))
# the timers fired: at 100 us, at least a few hundred times in the run
if got["alrm"] < 100:
    bad.append("only %d SIGALRM handler calls" % got["alrm"])
handlers = {"on_prof", "on_alrm"}
main_side = {"main", "outer", "inner", "leaf", "clock_gettime"}
parents = {"outer": {"main"}, "inner": {"outer"}, "leaf": {"inner"}, "clock_gettime": {"inner"},
           "h_work": handlers, "h_leaf": {"h_work", "on_alrm"},
           # (setitimer: a timer that fired in the call turning it off)
           "on_prof": main_side | handlers | {"h_work", "h_leaf", "setitimer"},
           "on_alrm": main_side | handlers | {"h_work", "h_leaf", "setitimer"}}
calls = {}
def walk(n, parent):
    f = n["function"]
    calls[f] = calls.get(f, 0) + n["calls"]
    if f in parents and parent not in parents[f]:
        bad.append("%s under %s (%d calls)" % (f, parent, n["calls"]))
    for c in n["children"]:
        walk(c, f)
for n in r["tree"]:
    walk(n, "[root]")
want = {"main": 1, "outer": got["outer"], "inner": got["inner"], "leaf": got["leaf"],
        "clock_gettime": got["clock"], "on_prof": got["prof"], "on_alrm": got["alrm"],
        "h_work": got["hwork"], "h_leaf": got["hleaf"]}
if (got["outer"], got["inner"]) != (60000, 240000):
    bad.append("the program says outer %d inner %d" % (got["outer"], got["inner"]))
for f, n in want.items():
    if calls.get(f, 0) != n:
        bad.append("%s: %d calls, the program made %d" % (f, calls.get(f, 0), n))
print("\n".join(bad[:10]))
sys.exit(1 if bad else 0)
PY
	done
done
echo "1..$_n"
