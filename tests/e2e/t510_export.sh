#!/usr/bin/env bash
# stackclock export, checked by the real consumers (SPEC section 8): the
# numbers go tool pprof, callgrind_annotate and a browser show are the
# report's.  A program of known structure with recursion
# (tests/progs/views_prog.c) by both methods; a C++ function whose name
# holds "<script>" in the HTML report; bad input.
. "$(dirname "$0")/lib.sh"

build vs views_prog.c -O2 -fno-inline -fno-optimize-sibling-calls || exit 1
build vi views_prog.c -O2 -fno-inline -fno-optimize-sibling-calls -finstrument-functions || exit 1
check "record by sampling" -- "$STACKCLOCK" record -F 999 -o "$TMP/s.data" -- "$TMP/vs" 40000000
check "record by instrumentation" -- "$STACKCLOCK" record -m instrument -o "$TMP/i.data" -- "$TMP/vi" 200000 6
for m in s i; do
	report_json "$TMP/$m.data" "$TMP/$m.json" --top 0
	for f in pprof callgrind folded html; do
		check "export $m --format $f" -- "$STACKCLOCK" export -i "$TMP/$m.data" --format $f -o "$TMP/$m.$f"
	done
done

# ---- pprof: flat = exclusive, cum = inclusive, no warning ----------------
have_go=0
command -v go >/dev/null && go version >/dev/null 2>&1 && have_go=1
for m in s i; do
	idx=samples
	[ $m = i ] && idx=elapsed
	if [ $have_go = 0 ]; then
		ok 0 "# SKIP go tool pprof is not installed (golang-go)"
		continue
	fi
	go tool pprof -top -nodecount=10000 -sample_index=$idx "$TMP/$m.pprof" >"$TMP/$m.top" 2>"$TMP/$m.top.err"
	ok $? "go tool pprof -top reads the $m export"
	check "... without a warning" -- test ! -s "$TMP/$m.top.err"
	check "... its flat% and cum% are the report's exclusive and inclusive %" -- python3 - \
		"$TMP/$m.json" "$TMP/$m.top" <<'PY'
import json, re, sys
r = json.load(open(sys.argv[1]))
inst = r["session"]["method"] == "instrumentation"
names = [x["function"] for x in r["rows"]]
# pprof adds up functions of one name (ld.so's _start and the program's)
rows = {x["function"]: x for x in r["rows"] if names.count(x["function"]) == 1}
seen, bad = 0, []
for line in open(sys.argv[2]):
    m = re.match(r"\s*\S+\s+([\d.]+)%\s+[\d.]+%\s+\S+\s+([\d.]+)%\s+(.+?)\s*$", line)
    if not m or m.group(3) not in rows:
        continue
    x = rows[m.group(3)]
    flat, cum = float(m.group(1)), float(m.group(2))
    want_flat = x["elapsed_exclusive_pct"] if inst else x["exclusive_pct"]
    want_cum = x["elapsed_inclusive_pct"] if inst else x["inclusive_pct"]
    seen += 1
    if abs(flat - want_flat) > 0.06 or abs(cum - want_cum) > 0.06:
        bad.append((m.group(3), flat, want_flat, cum, want_cum))
print(seen, bad)
sys.exit(0 if seen >= 5 and not bad else 1)
PY
	if [ $m = i ]; then
		go tool pprof -top -sample_index=calls "$TMP/$m.pprof" >"$TMP/$m.calls" 2>/dev/null
		check "... calls: work_a 6, rec 7 (6 deep), as the report" -- python3 - \
			"$TMP/$m.json" "$TMP/$m.calls" <<'PY'
import json, re, sys
rows = {x["function"]: x for x in json.load(open(sys.argv[1]))["rows"]}
flat = {}
for line in open(sys.argv[2]):
    m = re.match(r"\s*(\d+)\s+[\d.]+%\s+[\d.]+%\s+\d+\s+[\d.]+%\s+(\S+)\s*$", line)
    if m:
        flat[m.group(2)] = int(m.group(1))
sys.exit(0 if flat.get("work_a") == rows["work_a"]["calls"] == 6 and flat.get("rec") == rows["rec"]["calls"] == 7 else 1)
PY
	fi
	go tool pprof -raw "$TMP/$m.pprof" >"$TMP/$m.raw" 2>/dev/null
	bid=$(readelf -n "$TMP/v$m" | sed -n 's/.*Build ID: *//p')
	check "... the program's mapping carries its build-id, samples pid and tid labels" -- \
		sh -c "grep -q '$bid' '$TMP/$m.raw' && grep -q 'pid:\\[' '$TMP/$m.raw' && grep -q 'tid:\\[' '$TMP/$m.raw'"
done

# ---- callgrind: totals and inclusive values ------------------------------
for m in s i; do
	callgrind_annotate --inclusive=yes "$TMP/$m.callgrind" >"$TMP/$m.ann" 2>&1
	ok $? "callgrind_annotate --inclusive=yes reads the $m export"
	check "... totals are the session totals, inclusive values the report's (recursion once)" -- \
		python3 - "$TMP/$m.json" "$TMP/$m.ann" <<'PY'
import json, re, sys
r = json.load(open(sys.argv[1]))
s = r["session"]
inst = s["method"] == "instrumentation"
rows = {x["function"]: x for x in r["rows"]}
total = None
incl = {}
# a column is "1,234 (5.6%)", or a bare 0 (an event none of the function's
# costs has: seen for work_b's application time, all of it OS-bound, on a
# loaded machine)
col = r"([\d,]+) \(\s*[\d.]+%\)|(?:^|\s)(0)(?=\s)"
for line in open(sys.argv[2]):
    nums = [n for n, z in re.findall(col, line) if n]
    if "PROGRAM TOTALS" in line:
        total = [int(n.replace(",", "")) for n in nums]
    m = re.search(r"(?:\)|\s0)\s+\S*:(\S+) \[", line)
    if m:
        prefix = line[:m.start(1)]
        incl[m.group(1)] = [int(n.replace(",", "")) if n else 0
                            for n, z in re.findall(col, prefix[:prefix.rfind(" ") + 1])]
want_total = [s["elapsed_inclusive_ns"], s["application_inclusive_ns"]] if inst else [s["samples"]]
bad = []
for f in ("main", "work_a", "work_b", "common", "spin", "rec"):
    want = [rows[f]["elapsed_inclusive_ns"], rows[f]["application_inclusive_ns"]] if inst else [rows[f]["inclusive_samples"]]
    if incl.get(f) != want:
        bad.append((f, incl.get(f), want))
print(total, want_total, bad)
sys.exit(0 if total == want_total and not bad else 1)
PY
done

# callgrind_annotate annotates the source with our lines: without a
# warning, every cost of the program's own functions on a real line (the
# function's first line, which addr2line gives for its address, and the
# line of each call)
for f in main work_a work_b common rec spin; do
	addr=$(nm "$TMP/vi" | awk -v f="$f" '$3 == f { print $1 }')
	echo "$f $(addr2line -e "$TMP/vi" "0x$addr" | sed 's/.*://')"
done >"$TMP/first_lines"
for m in s i; do
	callgrind_annotate "$TMP/$m.callgrind" >"$TMP/$m.ann2" 2>"$TMP/$m.ann2.err"
	ok $? "callgrind_annotate (auto-annotation) reads the $m export"
	check "... with nothing on stderr$(head -c 300 "$TMP/$m.ann2.err" | tr '\n' ' ')" -- test ! -s "$TMP/$m.ann2.err"
	check "... and annotates views_prog.c" -- grep -q "Auto-annotated source: .*views_prog.c" "$TMP/$m.ann2"
done
check "instrumentation callgrind: own costs on first lines, calls on their lines (work_a:36 calls common 6 times), no line 0" -- \
	python3 - "$TMP/i.callgrind" "$TMP/first_lines" <<'PY'
import re, sys
first = {l.split()[0]: int(l.split()[1]) for l in open(sys.argv[2])}
names, fn, cfn, calls, selfs, edges, zero = {}, None, None, None, {}, [], []
for line in open(sys.argv[1]):
    line = line.rstrip("\n")
    m = re.match(r"(c?fn)=\((\d+)\)(?: (.*))?$", line)
    if m:
        if m.group(3):
            names[m.group(2)] = m.group(3)
        if m.group(1) == "fn":
            fn, cfn = names[m.group(2)], None
        else:
            cfn = names[m.group(2)]
        continue
    m = re.match(r"calls=(\d+) (\d+)$", line)
    if m:
        calls = (int(m.group(1)), int(m.group(2)))
        continue
    m = re.match(r"(\d+) \d+ \d+$", line)
    if m and fn in first:
        if int(m.group(1)) == 0:
            zero.append((fn, line))
        if cfn:
            edges.append((fn, int(m.group(1)), cfn, calls))
            cfn = None
        else:
            selfs[fn] = int(m.group(1))
assert not zero, zero
for f in ("work_a", "work_b", "common", "spin"):
    assert selfs.get(f, first[f]) == first[f], (f, selfs.get(f), first[f])
assert ("work_a", 36, "common", (6, first["common"])) in edges, edges
assert ("work_b", 43, "common", (1, first["common"])) in edges, edges
assert ("common", 31, "spin", (7, first["spin"])) in edges, edges
assert ("rec", 58, "rec", (6, first["rec"])) in edges, edges
PY

# ---- folded: the values add up to the session total ----------------------
check "folded (sampling): stacks end in the leaf, values add up to the samples" -- python3 - \
	"$TMP/s.json" "$TMP/s.folded" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
excl = {}
tot = 0
for line in open(sys.argv[2]):
    stack, v = line.rsplit(" ", 1)
    tot += int(v)
    leaf = stack.split(";")[-1]
    excl[leaf] = excl.get(leaf, 0) + int(v)
# one name may be several rows (ld.so's _start and the program's): the
# folded leaf is the name, so compare against the rows' sum per name
rows = {}
for x in r["rows"]:
    rows[x["function"]] = rows.get(x["function"], 0) + x["exclusive_samples"]
bad = [(f, n, excl.get(f, 0)) for f, n in rows.items() if excl.get(f, 0) != n]
bad += [(f, rows.get(f), n) for f, n in excl.items() if rows.get(f, 0) != n]
print("folded total", tot, "session", r["session"]["samples"], "differ (name, rows, folded):", bad)
sys.exit(0 if tot == r["session"]["samples"] and not bad else 1)
PY
for v in elapsed application calls; do
	"$STACKCLOCK" export -i "$TMP/i.data" --format folded --value $v -o "$TMP/i.$v.folded"
	ok $? "folded --value $v"
done
check "folded (instrumentation): elapsed, application and calls add up to EI, AI and the calls" -- \
	python3 - "$TMP/i.json" "$TMP" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
s = r["session"]
def tot(v):
    return sum(int(l.rsplit(" ", 1)[1]) for l in open(sys.argv[2] + "/i.%s.folded" % v))
calls = sum(x["calls"] for x in r["rows"])
print(tot("elapsed"), s["elapsed_inclusive_ns"], tot("application"), s["application_inclusive_ns"], tot("calls"), calls)
sys.exit(0 if tot("elapsed") == s["elapsed_inclusive_ns"] and tot("application") == s["application_inclusive_ns"] and tot("calls") == calls else 1)
PY
check "flamegraph-style consumers: every line is 'frame;...;frame COUNT'" -- \
	sh -c "! grep -qvE '^[^ ].* [0-9]+$' '$TMP/s.folded' '$TMP/i.folded'"

# ---- html: one file, no network, names as text ---------------------------
cat >"$TMP/tmpl.cc" <<'CC'
#include <cstdlib>
struct script {};
static volatile unsigned long sink;
template <class T> __attribute__((noinline)) void spin(long n)
{
	for (long i = 0; i < n; i++)
		sink = sink * 31 + i;
}
int main(int argc, char **argv)
{
	spin<script>(argc > 1 ? atol(argv[1]) : 300000000);
	return 0;
}
CC
c++ -O2 -g -o "$TMP/tmpl" "$TMP/tmpl.cc" || exit 1
check "record a C++ program with spin<script>" -- "$STACKCLOCK" record -o "$TMP/t.data" -- "$TMP/tmpl"
check "export it as html" -- "$STACKCLOCK" export -i "$TMP/t.data" --format html -o "$TMP/t.html"
check "the page needs no network (no src= or href= to anywhere)" -- \
	sh -c "! grep -qiE '(src|href)=\"?(https?:)?//' '$TMP/t.html' '$TMP/s.html'"
chromium=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$chromium" ]; then
	ok 0 "# SKIP chromium is not installed: the pages are not opened"
elif [[ "${SC_BUILD:-}" == *-san ]]; then
	# the pages are the exporter's output, the same bytes from either
	# build: the browser (another program) opens them once, in the
	# normal pass; the sanitized exporter wrote them above
	ok 0 "# SKIP the pages are opened in the normal pass"
else
	# both pages in one browser (its start is most of a drive's time),
	# the answers split per page
	nice python3 "$E2E_DIR/html_drive.py" "$TMP/t.html" \
		'eval:document.body.innerText.includes("spin<script>")' \
		'eval:document.querySelectorAll("script").length' \
		"open:$TMP/i.html" \
		'eval:document.body.innerText.includes("work_a")' >"$TMP/drive" 2>"$TMP/drive.err"
	ok $? "open the C++ export and the instrumentation export in headless chromium"
	awk -v t="$TMP/t.drive" -v i="$TMP/i.drive" 'BEGIN { f = t } /"page": "i.html"/ { f = i } { print >f }' "$TMP/drive"
	check "spin<script> shows as text, no element made of it, no console error" -- python3 - "$TMP/t.drive" <<'PY'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
print(lines)
sys.exit(0 if lines[0]["state"] == "ready" and lines[1] is True and lines[2] <= 2 and lines[-1]["console_errors"] == [] else 1)
PY
	check "the instrumentation export opens, work_a shown, no console error" -- python3 -c \
		"import json, sys; l = [json.loads(x) for x in open(sys.argv[1])]; sys.exit(0 if l[0]['state'] == 'ready' and l[1] is True and l[-1]['console_errors'] == [] else 1)" "$TMP/i.drive"
fi

# ---- pprof of a deep tree: written a stack at a time ----------------------
# exp_deep.c: 8,000 nodes whose stacks hold 16 million frames.  Holding every
# stack before packing took 155 MB here (4.6 GB for g++ compiling a C++
# file, 5.3 M nodes 45 deep); a stack at a time, what reading the recording
# takes (the report's own peak) and little more.
build deep exp_deep.c -O2 || exit 1
check "record the 4000-deep recursion" -- "$STACKCLOCK" record -m instrument -o "$TMP/deep.data" -- "$TMP/deep" 4000
maxrss() {	# maxrss COMMAND...: its peak resident memory in MB
	python3 -c 'import resource, subprocess, sys
subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, check=True)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024)' "$@"
}
rep=$(maxrss "$STACKCLOCK" report -i "$TMP/deep.data" --top 1)
exp=$(maxrss "$STACKCLOCK" export -i "$TMP/deep.data" --format pprof -o "$TMP/deep.pprof")
check "pprof of a 4000-deep tree: ${exp:-?} MB at most, within 32 MB of the report's ${rep:-?} MB" -- \
	test "${exp:-9999}" -le $(( ${rep:-0} + 32 ))
if [ $have_go = 1 ]; then
	# (500 deep: go tool pprof -raw takes a minute on the 16 M frames of
	# 4000; the same shape, what the reader is asked to read)
	"$STACKCLOCK" record -m instrument -o "$TMP/deep500.data" -- "$TMP/deep" 500 2>/dev/null &&
		"$STACKCLOCK" export -i "$TMP/deep500.data" --format pprof -o "$TMP/deep500.pprof"
	go tool pprof -raw "$TMP/deep500.pprof" >"$TMP/deep.raw" 2>"$TMP/deep.err"
	check "go tool pprof reads a 500-deep one: rec and leaf 501 samples of 1 call each, leaf's stacks 3 to 503 deep" -- python3 - "$TMP/deep.raw" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
body, locs = text.split("Samples:", 1)[1].split("Locations", 1)
# a sample: its values (calls first), ":", its location ids leaf first
samples = [(int(v.split()[0]), ids.split()) for v, ids in re.findall(r"^\s+([\d ]+?):\s*([\d ]+)$", body, re.M)]
names = dict(re.findall(r"^\s+(\d+): 0x0 M=\d+ (\S+)", locs, re.M))
by = lambda f: [s for s in samples if names.get(s[1][0]) == f]
rec, leaf = by("rec"), by("leaf")
print("samples %d: rec %d, leaf %d" % (len(samples), len(rec), len(leaf)))
sys.exit(0 if len(rec) == len(leaf) == 501 and all(c == 1 for c, _ in rec + leaf) and
         sorted(len(ids) for _, ids in leaf) == list(range(3, 504)) else 1)
PY
	check "... and no warning" -- test ! -s "$TMP/deep.err"
fi

# ---- bad input -----------------------------------------------------------
"$STACKCLOCK" export -i "$TMP/s.data" --format svg -o "$TMP/x" 2>"$TMP/e1"
rc=$?
check "an unknown format: status 2, one line naming it" -- \
	sh -c "test $rc = 2 && test \$(wc -l <'$TMP/e1') = 1 && grep -q \"unknown format 'svg'\" '$TMP/e1'"
"$STACKCLOCK" export -i "$TMP/s.data" --format pprof -o "$TMP/no/such/dir/p.pb.gz" 2>"$TMP/e2"
rc=$?
check "an unwritable output: status 1, one line naming the file" -- \
	sh -c "test $rc = 1 && test \$(wc -l <'$TMP/e2') = 1 && grep -q 'no/such/dir/p.pb.gz' '$TMP/e2'"
head -c $(( $(stat -c %s "$TMP/s.data") / 2 )) "$TMP/s.data" >"$TMP/half.data"
for f in pprof callgrind folded html; do
	"$STACKCLOCK" export -i "$TMP/half.data" --format $f -o "$TMP/half.$f" 2>"$TMP/e3"
	rc=$?
	check "a damaged data file ($f): status 1, one line, no output file left" -- \
		sh -c "test $rc = 1 && test \$(wc -l <'$TMP/e3') = 1 && grep -q damaged '$TMP/e3' && ! ls '$TMP'/half.$f* 2>/dev/null"
done
for v in calls application; do
	"$STACKCLOCK" export -i "$TMP/s.data" --format folded --value $v -o "$TMP/x" 2>"$TMP/e4"
	rc=$?
	check "folded --value $v of a sampling recording: status 1, one line saying it needs instrumentation, no file" -- \
		sh -c "test $rc = 1 && test \$(wc -l <'$TMP/e4') = 1 && grep -q -- '--value $v needs an instrumentation recording; .*s.data holds samples' '$TMP/e4' && ! test -e '$TMP/x'"
done
check "--value on pprof refused" -- \
	sh -c "'$STACKCLOCK' export -i '$TMP/s.data' --format pprof --value calls -o '$TMP/x' 2>/dev/null; test \$? = 2"
check "-o - writes folded stacks to standard output" -- \
	sh -c "'$STACKCLOCK' export -i '$TMP/s.data' --format folded -o - | cmp -s - '$TMP/s.folded'"
(cd "$TMP" && "$STACKCLOCK" export -i s.data --format callgrind)
check "without -o: callgrind.out.stackclock" -- test -s "$TMP/callgrind.out.stackclock"
