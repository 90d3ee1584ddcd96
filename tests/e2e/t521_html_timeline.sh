#!/usr/bin/env bash
# The HTML report's timeline (SPEC 12, docs/html-report.md "Timeline") in
# headless Chromium (html_drive.py):
#  - a synthetic timeline of known calls (test_html --write-tl known): the
#    lanes, calls, OS events, what a hover shows (name, module, start and
#    duration to the nanosecond), a click selecting the function in the
#    table and callers/callees, zoom (wheel, keys, buttons), pan (drag,
#    keys), the thread selector, and calls narrower than a pixel merged;
#  - a sampled one (spans of samples, ticks);
#  - 10,000,000 synthetic calls: every call in view accounted for, a frame
#    drawn in under 5 s (printed; a shared machine, so a generous bound),
#    the page's bytes per call printed;
#  - real recordings of tests/progs/tl_html.c (main, "alpha", "beta", known
#    calls), instrumented and sampled: the page's calls, OS events and
#    samples equal `replay --format json`'s, item for item; sampled spans as
#    the page defines them from replay's stacks; --timeline-max N keeps the
#    N longest calls and says so; no timeline section without --timeline;
#    bad --timeline-max refused.
. "$(dirname "$0")/lib.sh"
if ! command -v chromium >/dev/null 2>&1; then
	echo "ok 1 # SKIP chromium is not installed (scripts/install-deps.sh installs it)"
	exit 0
fi
case "${SC_BUILD:-}" in
*-san)	echo "ok 1 # SKIP the browser checks run once, in the normal pass"; exit 0 ;;
esac
WRITE=${SC_BUILD:-$PWD/build}/tests/test_html
cd "$TMP" || exit 1

# ---- pages ---------------------------------------------------------------------
cat >doc.json <<'EOF'
{"session": {"method": "instrumentation", "elapsed_inclusive_ns": 25000000, "application_inclusive_ns": 20000000},
 "rows": [{"function": "main", "module": "/bin/app"}, {"function": "compute", "module": "/bin/app"},
  {"function": "mix", "module": "/bin/app"}, {"function": "nap", "module": "/bin/app"}, {"function": "worker", "module": "/bin/app"}],
 "threads": [{"pid": 100, "tid": 100, "name": "main", "process": 0}, {"pid": 100, "tid": 101, "name": "worker", "process": 0},
  {"pid": 200, "tid": 200, "name": "child", "process": 1}],
 "processes": [{"pid": 100, "executable": "/bin/app"}, {"pid": 200, "executable": "/bin/app"}],
 "tree": [{"row": 0, "thread": 0, "calls": 1, "elapsed_exclusive_ns": 1000000, "application_exclusive_ns": 1000000, "children": [
    {"row": 1, "calls": 2, "elapsed_exclusive_ns": 3500000, "application_exclusive_ns": 3500000, "children": [
      {"row": 2, "calls": 1000, "elapsed_exclusive_ns": 1000000, "application_exclusive_ns": 1000000, "children": []}]},
    {"row": 3, "calls": 1, "elapsed_exclusive_ns": 2000000, "application_exclusive_ns": 1000, "children": []}]},
  {"row": 4, "thread": 1, "calls": 1, "elapsed_exclusive_ns": 600000, "application_exclusive_ns": 600000, "children": [
    {"row": 1, "calls": 1, "elapsed_exclusive_ns": 6400000, "application_exclusive_ns": 6400000, "children": []}]},
  {"row": 0, "thread": 2, "calls": 1, "elapsed_exclusive_ns": 2000000, "application_exclusive_ns": 2000000, "children": []}]}
EOF
check "synthetic pages written (known, sampled, 10,000,000 calls)" -- sh -c \
	"'$WRITE' --write-tl known doc.json known.html && '$WRITE' --write-tl sampled doc.json sampled.html &&
	 '$WRITE' --write-tl big:10000000 doc.json big.html"
echo "# 10,000,000 calls: $(stat -c %s big.html) bytes of page, $(python3 -c "import os; print(round(os.path.getsize('big.html') / 1e7, 2))") bytes per call"

cc -O1 -g -pthread -finstrument-functions -o tlprog "$PROGS/tl_html.c" || exit 1
check "instrumented with --timeline, sampled with --timeline, without" -- sh -c \
	"'$STACKCLOCK' record -m instrument --timeline -o i.data -- ./tlprog &&
	 '$STACKCLOCK' record -F 999 --timeline -o s.data -- ./tlprog &&
	 '$STACKCLOCK' record -F 999 -o n.data -- ./tlprog"
check "exported (html, html --timeline-max 5) and replayed (json)" -- sh -c \
	"'$STACKCLOCK' export -i i.data --format html -o i.html &&
	 '$STACKCLOCK' export -i i.data --format html --timeline-max 5 -o i5.html &&
	 '$STACKCLOCK' export -i s.data --format html -o s.html &&
	 '$STACKCLOCK' export -i n.data --format html -o n.html &&
	 '$STACKCLOCK' replay -i i.data --format json >i.replay.json &&
	 '$STACKCLOCK' replay -i s.data --format json >s.replay.json"
"$STACKCLOCK" export -i i.data --format html --timeline-max 0 -o bad.html 2>bad0.err
ok $([ $? -eq 2 ] && [ "$(wc -l <bad0.err)" -eq 1 ] && grep -q "timeline-max" bad0.err; echo $?) \
	"--timeline-max 0: exit 2, one line naming the option ($(cat bad0.err))"
"$STACKCLOCK" export -i i.data --format pprof --timeline-max 5 -o bad.pb.gz 2>badp.err
ok $([ $? -eq 2 ] && grep -q "applies to --format html" badp.err; echo $?) "--timeline-max with pprof refused"

# ---- the browser ----------------------------------------------------------------
# E KEY EXPR: an eval step whose answer is {"k": KEY, "v": value}
E() { printf 'eval:({k: "%s", v: %s})' "$1" "$2"; }
T=stackclock.timeline
HOVER='document.getElementById("tl").dataset.hover'
VIEW="$T.view()"
CC='[document.getElementById("cc").dataset.function, (document.querySelector("#functions tr.selected td") || {}).textContent]'
nice python3 "$E2E_DIR/html_drive.py" known.html \
	"$(E state 'document.body.dataset.state')" \
	"$(E shown '!document.getElementById("tl-section").hidden')" \
	"$(E lanes "$T.lanes()")" \
	"$(E compute "$T.calls('compute')")" \
	"$(E mix "(() => { const c = $T.calls('mix'); return [c.length, c[0], c[999]]; })()")" \
	"$(E child "$T.calls('main')")" \
	"$(E full "[document.getElementById('tl').dataset.view, Number(document.getElementById('tl').dataset.boxes), Number(document.getElementById('tl').dataset.merged), Number(document.getElementById('tl').dataset.inView)]")" \
	"move:$T.callPoint('nap')" "$(E hover_nap "$HOVER")" \
	"move:$T.point(100, 'os', 7000000)" "$(E hover_os "$HOVER")" \
	"move:$T.point(100, 'os', 8550000)" "$(E hover_sys "$HOVER")" \
	"move:$T.callPoint('mix', 500)" "$(E hover_merged "$HOVER")" \
	"click:$T.callPoint('compute', 2)" "$(E click "$CC")" \
	"$(E v0 "$VIEW")" \
	"wheel:Object.assign($T.point(100, 0, 4500000), {dy: -500})" \
	"wait:$VIEW[0] > 0" "$(E wheel "$VIEW")" \
	"drag:(() => { const p = $T.point(100, 0, 4500000); return {x: p.x, y: p.y, x2: p.x - 200, y2: p.y}; })()" \
	"$(E drag "[$VIEW, document.getElementById('tl').clientWidth]")" \
	'key:0' "$(E key0 "$VIEW")" \
	'key:+' "$(E keyplus "$VIEW")" \
	'key:ArrowRight' "$(E keyright "$VIEW")" \
	'press:#tl-out' "$(E out "$VIEW")" \
	'press:#tl-all' "$(E all "$VIEW")" \
	"$(E zoomed "$T.setView(2000, 32000) >= 0 && [Number(document.getElementById('tl').dataset.boxes), Number(document.getElementById('tl').dataset.merged)]")" \
	"move:$T.callPoint('mix', 3)" "$(E hover_mix "$HOVER")" \
	"$(E scope "stackclock.setScope('t:1') && $T.lanes()")" \
	"$(E scope_all "stackclock.setScope('all') && $T.lanes().length")" \
	open:sampled.html \
	"$(E lanes "$T.lanes()")" \
	"$(E spans "$T.all()")" \
	"$(E samples "$T.samples(100).length")" \
	"move:$T.point(100, 'ticks', 5000000)" "$(E hover_tick "$HOVER")" \
	"move:$T.callPoint('work')" "$(E hover_span "$HOVER")" \
	open:big.html \
	"$(E load 'Number(document.body.dataset.loadMs)')" \
	"$(E lanes "$T.lanes()")" \
	"$(E full "[$T.draw(), Number(document.getElementById('tl').dataset.inView), Number(document.getElementById('tl').dataset.boxes), Number(document.getElementById('tl').dataset.merged), document.getElementById('tl').clientWidth]")" \
	"$(E mid "[$T.setView(250000000, 250100000), Number(document.getElementById('tl').dataset.boxes), Number(document.getElementById('tl').dataset.merged)]")" \
	"$(E deep "[$T.setView(250000000, 250002000), Number(document.getElementById('tl').dataset.boxes)]")" \
	"wheel:Object.assign($T.middle(), {dy: 800})" "$(E wheel "$VIEW")" \
	open:i.html \
	"$(E lanes "$T.lanes()")" \
	"$(E all "$T.all()")" \
	"$(E info 'document.getElementById("tl-info").textContent')" \
	"$(E syscalls "$T.data.meta.syscalls")" \
	"move:(() => { const d = $T.data, i = d.osWhat.findIndex(w => (w & 3) === 1 && w >= 4); if (i < 0) return null; const l = d.lanes.find(l => l.osOff <= i && i < l.osOff + l.os); $T.setView(d.osStart[i] - 1000, d.osEnd[i] + 1000); return $T.point(l.tid, 'os', (d.osStart[i] + d.osEnd[i]) / 2); })()" \
	"$(E hover_sys "$HOVER")" \
	"$(E leaf "$T.calls('leaf')")" \
	"$(E setview "(() => { const c = $T.calls('leaf')[1]; return $T.setView(c[1] - c[2] / 4, c[1] + c[2] * 1.25) >= 0; })()")" \
	"move:$T.callPoint('leaf', 1)" "$(E hover_leaf "$HOVER")" \
	"press:#tl-all" \
	"click:$T.callPoint('spin_b', 1)" "$(E click "$CC")" \
	"shot:$TMP/i.png" \
	open:i5.html \
	"$(E all "$T.all()")" \
	"$(E info 'document.getElementById("tl-info").textContent')" \
	open:s.html \
	"$(E lanes "$T.lanes()")" \
	"$(E all "$T.all()")" \
	"$(E samples "$T.lanes().map(l => $T.samples(l[0]).map(s => s[0]))")" \
	open:n.html \
	"$(E state 'document.body.dataset.state')" \
	"$(E hidden 'document.getElementById("tl-section").hidden')" \
	>answers.out 2>answers.err || sed 's/^/#   /' answers.err | tail -20
if [ -n "${SC_SHOTS:-}" ]; then cp "$TMP/i.png" "$SC_SHOTS/"; fi

# ---- the checks -------------------------------------------------------------
python3 - "$_n" <<'EOF'
import json, sys, traceback
n = int(sys.argv[1])
A, page, errors = {}, None, {}
for line in open("answers.out"):
    o = json.loads(line)
    if isinstance(o, dict) and "page" in o:
        page = o["page"]
        A[page + ":load_ms"] = o["load_ms"]
    elif isinstance(o, dict) and "console_errors" in o:
        errors[page] = o["console_errors"]
    elif isinstance(o, dict) and "k" in o:
        A[page + ":" + o["k"]] = o.get("v")

def a(key):
    return A[key]

def replay_items(path):
    r = json.load(open(path))
    return {t["tid"]: t for t in r["threads"]}

def sample_spans(events):
    """Spans of consecutive samples with the same frame at each depth, as
    html.c's tl_sample_spans makes them (names, outermost first)."""
    out, opened, times = [], [], []
    for e in events:
        if e["kind"] != "sample":
            continue
        t, st = e["start_ns"], list(reversed(e["stack"]))
        times.append(t)
        k = 0
        while k < len(opened) and k < len(st) and opened[k][0] == st[k]:
            k += 1
        while len(opened) > k:
            f, s0 = opened.pop()
            out.append((s0, t - s0, len(opened), f))
        for d in range(len(opened), len(st)):
            opened.append((st[d], t))
    tail = (times[-1] - times[0]) // (len(times) - 1) if len(times) > 1 else 1000000
    while opened:
        f, s0 = opened.pop()
        out.append((s0, times[-1] + tail - s0, len(opened), f))
    return sorted(out)

checks = []
def check(msg, fn):
    checks.append((msg, fn))

K = "known.html:"
check("known: ready, timeline shown, no console errors",
      lambda: a(K + "state") == "ready" and a(K + "shown") is True and errors["known.html"] == [])
check("known: 3 lanes, their threads and counts (calls, OS events, rows by depth)",
      lambda: a(K + "lanes") == [[100, 100, "main", 1004, 2, 0, 3], [101, 100, "worker", 2, 0, 0, 2], [200, 200, "child", 1, 0, 0, 1]])
check("known: compute's 3 calls, lane, start, duration, depth (the worker's a library call)",
      lambda: a(K + "compute") == [[100, 2000, 3000000, 1, 0], [100, 4000000, 1500000, 1, 0], [101, 600000, 6400000, 1, 4]])
check("known: 1,000 calls of mix, the first at 2,010 ns and the last at 2,999,010 ns, 1,000 ns each",
      lambda: a(K + "mix") == [1000, [100, 2010, 1000, 2, 0], [100, 2999010, 1000, 2, 0]])
check("known: main in two lanes, the child's had not returned (flag)",
      lambda: a(K + "child") == [[100, 1000, 9000000, 0, 0], [200, 0, 2000000, 0, 1]])
check("known: whole view 0-9,001,000 ns; 7 calls drawn, the 1,000 mix calls (0.14 px each) merged into 1 grey span; all 1,007 in view",
      lambda: a(K + "full") == ["0,9001000", 7, 1, 1007])
check("known: hover on nap shows name, module, start and duration to the ns",
      lambda: a(K + "hover_nap") == "nap\n/bin/app\nstart: 6.00 ms (6,000,000 ns)\nduration: 2.00 ms (2,000,000 ns)\ndepth 1, thread 100 main")
check("known: hover on the OS band: the context switch, its start and duration",
      lambda: a(K + "hover_os").startswith("OS: switch\nstart: 6.00 ms (6,000,100 ns)\nduration: 2.00 ms (1,998,900 ns)"))
check("known: hover on the system call (number 0)",
      lambda: a(K + "hover_sys").startswith("OS: syscall (system call 0)\nstart: 8.50 ms (8,500,000 ns)\nduration: 100 \u00b5s (100,000 ns)"))
check("known: hover on merged calls says how many share the pixel",
      lambda: a(K + "hover_merged").startswith("mix\n") and "calls in this pixel: zoom in" in a(K + "hover_merged"))
check("known: a click on the worker's compute selects compute in callers/callees and the table",
      lambda: a(K + "click") == ["compute", "compute"])
def wheel_ok():
    v0, v1 = a(K + "wheel")
    # zoomed in by e^-1 around 4.5 ms (the pointer's time stays put)
    return abs((v1 - v0) - 9001000 * 2.718281828 ** -1) < 2000 and v0 < 4500000 < v1
check("known: the wheel zooms in around the pointer (span x e^-1)", wheel_ok)
def drag_ok():
    (w0, w1), (d0, d1), width = a(K + "wheel"), a(K + "drag")[0], a(K + "drag")[1]
    return abs((d1 - d0) - (w1 - w0)) < 1 and abs((d0 - w0) - 200 * (w1 - w0) / width) < 0.02 * (w1 - w0)
check("known: a drag 200 px left pans right by 200 px worth of time, same span", drag_ok)
check("known: key 0 shows the whole recording", lambda: a(K + "key0") == [0, 9001000])
check("known: key + zooms in 1.5x at the middle", lambda: [round(x) for x in a(K + "keyplus")] == [1500167, 7500833])
check("known: ArrowRight pans an eighth of the span", lambda: [round(x) for x in a(K + "keyright")] == [2250250, 8250917])
check("known: Zoom out button: span x 1.5", lambda: abs((a(K + "out")[1] - a(K + "out")[0]) - 9001000) < 1)
check("known: Whole recording button", lambda: a(K + "all") == [0, 9001000])
check("known: zoomed to 2-32 us: the 10 mix calls there drawn apart (and main twice, compute), none merged",
      lambda: a(K + "zoomed") == [13, 0])
check("known: hover on the 4th mix call: 1,000 ns at 11,010 ns",
      lambda: a(K + "hover_mix").startswith("mix\n/bin/app\nstart: 11.0 \u00b5s (11,010 ns)\nduration: 1.00 \u00b5s (1,000 ns)\ndepth 2"))
check("known: the thread selector shows that thread's lane only, all three back",
      lambda: a(K + "scope") == [[101, 100, "worker", 2, 0, 0, 2]] and a(K + "scope_all") == 3)

S = "sampled.html:"
check("sampled: one lane, 3 spans and 50 samples; no console errors",
      lambda: a(S + "lanes") == [[100, 100, "main", 3, 0, 50, 2]] and errors["sampled.html"] == [])
check("sampled: spans main, work, idle with their times (flag: samples)",
      lambda: a(S + "spans") == [[100, 0, 50000000, 0, 8, "main", "/bin/app"], [100, 0, 30000000, 1, 8, "work", "/bin/app"], [100, 30000000, 20000000, 1, 8, "idle", "/bin/app"]])
check("sampled: hover on a tick names its function and time",
      lambda: a(S + "hover_tick").startswith("sample in work\n/bin/app\ntime: 5.00 ms (5,000,000 ns)"))
check("sampled: hover on a span says it is one of samples",
      lambda: "samples span: ~30.0 ms (30,000,000 ns)" in a(S + "hover_span"))

B = "big.html:"
print("# 10,000,000 calls: page ready in %d ms; frame at full view %.0f ms, 100 us view %.0f ms, 2 us view %.0f ms"
      % (A.get(B + "load", -1), A.get(B + "full", [-1])[0], A.get(B + "mid", [-1])[0], A.get(B + "deep", [-1])[0]))
check("10 M calls: 4 lanes adding up to 10,000,000 calls; no console errors",
      lambda: len(a(B + "lanes")) == 4 and sum(l[3] for l in a(B + "lanes")) == 10000000 and errors["big.html"] == [])
check("10 M calls: whole view accounts for every call, drawn as at most 2 rectangles per pixel and row",
      lambda: a(B + "full")[1] == 10000000 and a(B + "full")[2] + a(B + "full")[3] <= 2 * 4 * 3 * a(B + "full")[4])
check("10 M calls: a frame in under 5 s at every zoom (whole, 100 us, 2 us)",
      lambda: max(a(B + "full")[0], a(B + "mid")[0], a(B + "deep")[0]) < 5000)
check("10 M calls: at 2 us calls are drawn apart (no merging needed)",
      lambda: a(B + "deep")[1] > 4)
check("10 M calls: the wheel zooms out from 2 us", lambda: a(B + "wheel")[1] - a(B + "wheel")[0] > 2000)

I = "i.html:"
R = replay_items("i.replay.json")
def calls_of(t):
    return sorted((e["start_ns"], e["duration_ns"], e["depth"], e["function"]) for e in t["events"] if e["kind"] == "call")
check("instrumented: the lanes are the replay's threads (tlprog, alpha, beta) with its calls and OS events",
      lambda: [l[:5] for l in a(I + "lanes")] == [[t["tid"], t["pid"], t["name"], sum(e["kind"] == "call" for e in t["events"]), sum(e["kind"] == "os" for e in t["events"])] for t in R.values()]
      and sorted(l[2] for l in a(I + "lanes")) == ["alpha", "beta", "tlprog"])
def same_calls():
    page = {}
    for tid, s, d, depth, fl, name, module in a(I + "all"):
        page.setdefault(tid, []).append((s, d, depth, name))
    bad = [tid for tid, t in R.items() if sorted(page.get(tid, [])) != calls_of(t)]
    return not bad or bad
check("instrumented: every call of the page equals the replay's (start, duration, depth, function), lane by lane", same_calls)
def known_calls():
    by = {t["name"]: calls_of(t) for t in R.values()}
    f = lambda th, fn: [c for c in by[th] if c[3] == fn]
    return (len(f("tlprog", "stage")) == 2 and len(f("tlprog", "leaf")) == 10 and all(c[2] == 2 and c[1] >= 4.9e6 for c in f("tlprog", "leaf"))
            and len(f("alpha", "spin_a")) == 3 and all(c[1] >= 19.9e6 for c in f("alpha", "spin_a"))
            and len(f("beta", "spin_b")) == 2 and all(c[1] >= 29.9e6 for c in f("beta", "spin_b"))
            and not f("alpha", "spin_b") and not f("beta", "leaf"))
check("instrumented: the known calls in their threads (2 stage, 10 leaf >= 5 ms at depth 2; 3 spin_a >= 20 ms in alpha; 2 spin_b >= 30 ms in beta)", known_calls)
def hover_leaf():
    c = a(I + "leaf")[1]
    return a(I + "hover_leaf").startswith("leaf\n") and ("(%s ns)" % format(c[2], ",")) in a(I + "hover_leaf") and ("(%s ns)" % format(c[1], ",")) in a(I + "hover_leaf")
check("instrumented: hover on the second leaf shows its start and duration to the ns", hover_leaf)
def sys_ok():
    names = {str(e["syscall"]): e["name"] for t in R.values() for e in t["events"] if e["kind"] == "os" and e.get("name")}
    h = a(I + "hover_sys")
    return a(I + "syscalls") == names and len(names) > 0 and h.startswith("OS: syscall ") and h.split("\n")[0][len("OS: syscall "):] in names.values() or [a(I + "syscalls"), names, h]
check("instrumented: the system calls' names are the replay's, and a hover on one names it", sys_ok)
check("instrumented: a click on spin_b selects it in callers/callees and the table",
      lambda: a(I + "click") == ["spin_b", "spin_b"] and errors["i.html"] == [])
check("instrumented: the page says how many calls, OS events, threads",
      lambda: a(I + "info").startswith("{:,} calls, ".format(sum(len(calls_of(t)) for t in R.values()))))

I5 = "i5.html:"
def longest5():
    durs = sorted((e["duration_ns"] for t in R.values() for e in t["events"] if e["kind"] == "call"), reverse=True)
    page = sorted((c[2] for c in a(I5 + "all")), reverse=True)
    return page == durs[:5] and "holds the 5 longest of {:,} calls".format(len(durs)) in a(I5 + "info")
check("--timeline-max 5: the 5 longest calls, and the page says so", longest5)

SS = "s.html:"
RS = replay_items("s.replay.json")
check("sampled recording: lanes are the replay's threads with their samples",
      lambda: [[l[0], l[1], l[2], l[5]] for l in a(SS + "lanes")] == [[t["tid"], t["pid"], t["name"], sum(e["kind"] == "sample" for e in t["events"])] for t in RS.values()]
      and errors["s.html"] == [])
check("sampled recording: every sample's time equals the replay's",
      lambda: a(SS + "samples") == [[e["start_ns"] for e in t["events"] if e["kind"] == "sample"] for t in RS.values()])
def spans_ok():
    # replay's stacks name frames without their module: two spans of one
    # name in two modules that touch (ld.so's _start, then the program's)
    # are one for it
    page, last = {}, {}
    for tid, s, d, depth, fl, name, module in sorted(a(SS + "all"), key=lambda c: (c[0], c[1], c[3])):
        p = last.get((tid, depth))
        if p and p[3] == name and p[4] != module and p[0] + p[1] == s:
            p[1] += d
            continue
        last[(tid, depth)] = c = [s, d, depth, name, module]
        page.setdefault(tid, []).append(c)
    page = {tid: [tuple(c[:4]) for c in l] for tid, l in page.items()}
    bad = [tid for tid, t in RS.items() if sorted(page.get(tid, [])) != sample_spans(t["events"])]
    return not bad or bad
check("sampled recording: the spans are the replay's consecutive samples with one frame at one depth", spans_ok)
check("sampled recording: spin_a only in alpha, spin_b only in beta",
      lambda: {c[0] for c in a(SS + "all") if c[5] == "spin_a"} == {t["tid"] for t in RS.values() if t["name"] == "alpha"}
      and {c[0] for c in a(SS + "all") if c[5] == "spin_b"} == {t["tid"] for t in RS.values() if t["name"] == "beta"})

check("without --timeline: no timeline section", lambda: a("n.html:state") == "ready" and a("n.html:hidden") is True)

for msg, fn in checks:
    n += 1
    try:
        r = fn()
        good = r is True
        out = "" if good else "result: %s" % str(r)[:1500]
    except Exception:
        good, out = False, traceback.format_exc()
    print("%s %d - %s" % ("ok" if good else "not ok", n, msg))
    for line in out.splitlines()[:15]:
        print("#   " + line)
EOF
