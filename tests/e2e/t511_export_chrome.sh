#!/usr/bin/env bash
# export --format chrome (SPEC section 12): the timeline as Trace Event
# Format JSON.  tests/progs/timeline_prog.c calls functions of known
# durations in a known order in three threads; recorded with --timeline
# by instrumentation, the export holds exactly those calls per thread,
# nested, in order, each lasting what it spun (a loaded machine's slack
# above), and the OS events of the sleep inside it, its calls into libc
# (library calls) inside the calls that make them; by sampling, samples
# per thread in time order whose stacks follow the same order.  Both load
# in speedscope (npm, run from local files in headless Chromium) without an
# error, every thread a profile of its name.  A recording without a
# timeline is refused in one line.
. "$(dirname "$0")/lib.sh"

UNIT=2   # ms per unit of work in the instrumented run
build ti timeline_prog.c -O2 -pthread -fno-inline -fno-optimize-sibling-calls -finstrument-functions || exit 1
build ts timeline_prog.c -O2 -pthread -fno-inline -fno-optimize-sibling-calls || exit 1
cp "$TMP/ti" "$TMP/timeline_prog" && cp "$TMP/ts" "$TMP/timeline_prog_s" || exit 1
# both named timeline_prog: the process name is the executable's
mkdir "$TMP/s" && mv "$TMP/timeline_prog_s" "$TMP/s/timeline_prog"

# ---- instrumentation -------------------------------------------------------
check "record -m instrument --timeline" -- "$STACKCLOCK" record -m instrument --libcalls=none --timeline \
	-o "$TMP/i.data" -- "$TMP/timeline_prog" $UNIT
check "export --format chrome" -- "$STACKCLOCK" export -i "$TMP/i.data" --format chrome -o "$TMP/i.json"
check "... valid Trace Event Format: named tracks, slices nest, ns precision" -- \
	python3 "$E2E_DIR/chrome_trace.py" shape "$TMP/i.json"
python3 "$E2E_DIR/chrome_trace.py" calls "$TMP/i.json" $UNIT >"$TMP/calls.out" 2>&1
ok $? "... per thread the calls in order and nesting, durations of work/outer/nap within ${UNIT} ms units +60 ms"
sed 's/^/# /' "$TMP/calls.out"
"$STACKCLOCK" report -i "$TMP/i.data" --format json >"$TMP/i.report.json" 2>/dev/null
observed=$(python3 -c 'import json, sys
e = json.load(open(sys.argv[1]))["session"]["os_events"]
print(" ".join(c for c in ("switch", "syscall") if e.get(c) is not None))' "$TMP/i.report.json")
if [ -z "$observed" ]; then
	ok 0 "# SKIP the kernel let us observe no context switch nor system call"
else
	check "... the OS events of nap's sleep inside it, on tl-a's track ($observed observed)" -- \
		grep -Eq '^os events inside nap: .*(switch|syscall (clock_)?nanosleep)' "$TMP/calls.out"
fi
check "default output name stackclock.trace.json" -- \
	sh -c "cd '$TMP' && '$STACKCLOCK' export -i i.data --format chrome && test -s stackclock.trace.json && cmp -s stackclock.trace.json i.json"
# calls into libc as rows (the default --libcalls=program): cat libcall
check "record -m instrument --timeline, library calls as rows" -- "$STACKCLOCK" record -m instrument \
	--timeline -o "$TMP/l.data" -- "$TMP/timeline_prog" 0
check "... exported: clock_gettime (libc) inside work, pthread_create inside main, all nested" -- \
	sh -c "'$STACKCLOCK' export -i '$TMP/l.data' --format chrome -o '$TMP/l.json' &&
		python3 '$E2E_DIR/chrome_trace.py' shape '$TMP/l.json' &&
		python3 '$E2E_DIR/chrome_trace.py' libcalls '$TMP/l.json'"

# ---- sampling --------------------------------------------------------------
check "record -m sample --timeline" -- "$STACKCLOCK" record -m sample --timeline -o "$TMP/s.data" \
	-- "$TMP/s/timeline_prog" 40
check "export --format chrome of the sampled timeline" -- \
	"$STACKCLOCK" export -i "$TMP/s.data" --format chrome -o "$TMP/s.json"
check "... valid Trace Event Format" -- python3 "$E2E_DIR/chrome_trace.py" shape "$TMP/s.json"
check "... samples per thread in time order, stacks in the calls' order (work, outer, work)" -- \
	python3 "$E2E_DIR/chrome_trace.py" samples "$TMP/s.json"

# ---- bad input -------------------------------------------------------------
check "record without --timeline" -- "$STACKCLOCK" record -o "$TMP/n.data" -- "$TMP/s/timeline_prog" 1
"$STACKCLOCK" export -i "$TMP/n.data" --format chrome -o "$TMP/n.json" >"$TMP/n.out" 2>"$TMP/n.err"
rc=$?
check "no timeline: non-zero exit, one line saying to record with --timeline, no file" -- \
	sh -c "[ $rc -ne 0 ] && [ \$(wc -l <'$TMP/n.err') -eq 1 ] && grep -q 'record --timeline' '$TMP/n.err' && [ ! -e '$TMP/n.json' ]"

# ---- speedscope ------------------------------------------------------------
SPEEDSCOPE=${HOME:-/root}/.cache/stackclock-bench/speedscope/dist/release
case "${SC_BUILD:-}" in
*-san)	echo "ok $((_n + 1)) # SKIP speedscope runs once, in the normal pass"; exit 0 ;;
esac
if [ ! -s "$SPEEDSCOPE/index.html" ]; then
	echo "ok $((_n + 1)) # SKIP speedscope could not be fetched (scripts/install-deps.sh: npm pack speedscope)"
	exit 0
fi
if ! command -v chromium >/dev/null 2>&1; then
	echo "ok $((_n + 1)) # SKIP chromium is not installed (scripts/install-deps.sh installs it)"
	exit 0
fi
python3 "$E2E_DIR/speedscope_check.py" "$SPEEDSCOPE" "$TMP/i.json" "$TMP/s.json" >"$TMP/speedscope.out" 2>&1
for m in i s; do
	line=1
	[ $m = s ] && line=2
	check "speedscope loads the $m export: drawn, no error, a profile per thread by its name" -- python3 - \
		"$TMP/speedscope.out" $line "$TMP/$m.json" <<'PY'
import json, re, sys
lines = open(sys.argv[1]).read().strip().splitlines()
print("\n".join(lines))
r = json.loads(lines[int(sys.argv[2]) - 1])
pid = [e["pid"] for e in json.load(open(sys.argv[3]))["traceEvents"] if e["name"] == "process_name"][0]
names = r["profiles"]
want = [n for n in ("timeline_prog", "tl-a", "tl-b")
        if not any(re.search(r"timeline_prog \(pid %d\), %s \(tid \d+\)" % (pid, re.escape(n)), p)
                   for p in names)]
sys.exit(0 if r["ok"] and not r["error"] and not r["console_errors"] and not want else 1)
PY
done
