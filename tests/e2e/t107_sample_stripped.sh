#!/usr/bin/env bash
# Code without symbols (docs/values.md, "Code without symbols").  A program with known shares
# (main -> middle -> part_a 50 %, part_b 30 %, part_c 20 %), built here and
# stripped: every sampled address belongs to the function whose CFI range
# holds it, named PROGRAM+0xSTART; the names are the same in two runs (the
# program is loaded at a different address each time) and the shares those
# of the functions nm finds in the unstripped build.  Then the places debug
# files come from: MiniDebugInfo (.gnu_debugdata) and a debuginfod server
# on the loopback address; and the instrumentation method on a stripped
# program.
. "$(dirname "$0")/lib.sh"

build shares_full e2e_shares.c -O2 -fomit-frame-pointer || exit 1
cp "$TMP/shares_full" "$TMP/shares" && strip "$TMP/shares" || exit 1
# name -> start offset of the program's own functions, from the full build
nm "$TMP/shares_full" | awk '$2 ~ /^[tT]$/ { print $3, $1 }' >"$TMP/nm.txt"

for run in 1 2; do
	check "record the stripped program, run $run" -- \
		"$STACKCLOCK" record -F 999 -o "$TMP/s$run.data" -- "$TMP/shares" 3000
	report_json "$TMP/s$run.data" "$TMP/s$run.json" --top 0
done

# Everything the checks below read, from one place.
stripped_facts() {	# stripped_facts REPORT.json: prints KEY=VALUE lines
	readelf -SW "$TMP/shares" | awk '{ sub(/^ *\[ *[0-9]+\] */, "") } $1 ~ /^\.plt/ { print $3, $5 }' >"$TMP/plt.txt"
	readelf --dyn-syms -W "$TMP/shares" >"$TMP/dynsym.txt"
	# the call-frame ranges (FDEs) of the stripped program
	readelf --debug-dump=frames "$TMP/shares" | sed -n 's/.* FDE .*pc=\([0-9a-f]*\)\.\.\([0-9a-f]*\).*/\1 \2/p' >"$TMP/fde.txt"
	python3 - "$1" "$TMP/nm.txt" "$TMP/shares" "$TMP/plt.txt" "$TMP/fde.txt" "$TMP/dynsym.txt" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
starts = {}
for line in open(sys.argv[2]):
    name, addr = line.split()
    starts[int(addr, 16)] = name
mod = sys.argv[3]
plt = []
for line in open(sys.argv[4]):
    lo, size = line.split()
    plt.append((int(lo, 16), int(lo, 16) + int(size, 16)))
imports = set(l.split()[7].split("@")[0] for l in open(sys.argv[6])
              if len(l.split()) >= 8 and l.split()[6] == "UND")
fdes = [tuple(int(v, 16) for v in line.split()) for line in open(sys.argv[5])]
rows = [x for x in r["rows"] if x["module"] == mod]
named = {}
bad = []
for x in rows:
    fn = x["function"]
    # PLT stubs are named after the function they jump to, as perf does:
    # it must be one the program imports
    if fn.endswith("@plt"):
        if fn[:-4] not in imports:
            bad.append(fn)
        continue
    if not fn.startswith("shares+0x"):
        bad.append(fn)
        continue
    off = int(fn[len("shares+0x"):], 16)
    if off not in starts:
        # the PLT's stubs have no symbol: their call-frame range names them
        if any(lo <= off < hi for lo, hi in plt):
            continue
        # code no FDE covers (crtstuff's __do_global_dtors_aux, seen at
        # exit) is named by the address itself; inside an FDE the name
        # must be the FDE's start
        if any(lo <= off < hi for lo, hi in fdes):
            bad.append(fn)
        continue
    named[starts[off]] = x
parts = sum(named[p]["exclusive_samples"] for p in ("part_a", "part_b", "part_c") if p in named)
def share(p):
    return 100.0 * named[p]["exclusive_samples"] / parts if p in named and parts else 0
print("rows=%d" % len(rows))
print("bad=%s" % ",".join(bad))
print("hot=%s" % " ".join(sorted(x["function"] for x in rows if x["exclusive_samples"] >= 20)))
print("distinct=%d" % len(set(x["function"] for x in rows)))
for p in ("part_a", "part_b", "part_c"):
    print("%s=%.1f" % (p, share(p)))
print("middle_incl=%d" % named.get("middle", {}).get("inclusive_samples", 0))
print("parts_incl=%d" % parts)
s = r["session"]
print("unnamed_pct=%.1f" % s["unnamed_pct"])
um = s["unnamed_modules"]
print("unnamed_first=%s" % (um[0]["module"] if um else ""))
print("unnamed_hint=%s" % (um[0]["hint"] if um else ""))
PY
}
stripped_facts "$TMP/s1.json" >"$TMP/f1.txt"
stripped_facts "$TMP/s2.json" >"$TMP/f2.txt"
fact() { sed -n "s/^$1=//p" "$2"; }

bad="$(fact bad "$TMP/f1.txt")$(fact bad "$TMP/f2.txt")"
check "every row of the stripped program is PROGRAM+0xSTART of a function nm knows (or a PLT stub)${bad:+ (not: $bad)}" -- \
	test -z "$(fact bad "$TMP/f1.txt")$(fact bad "$TMP/f2.txt")"
check "one row per function: $(fact rows "$TMP/f1.txt") rows, $(fact distinct "$TMP/f1.txt") distinct names" -- \
	test "$(fact rows "$TMP/f1.txt")" = "$(fact distinct "$TMP/f1.txt")" -a "$(fact rows "$TMP/f1.txt")" -ge 4
check "the same names in both runs for every function with >= 20 samples: $(fact hot "$TMP/f1.txt")" -- \
	test -n "$(fact hot "$TMP/f1.txt")" -a "$(fact hot "$TMP/f1.txt")" = "$(fact hot "$TMP/f2.txt")"
for f in "part_a 50" "part_b 30" "part_c 20"; do
	set -- $f
	got=$(fact "$1" "$TMP/f1.txt")
	check "$1 (by its offset) exclusive share $got% within 5 points of $2%" -- \
		awk -v g="$got" -v w="$2" 'BEGIN { d = g - w; exit !(d <= 5 && d >= -5) }'
done
check "middle's inclusive equals its children's ($(fact middle_incl "$TMP/f1.txt") vs $(fact parts_incl "$TMP/f1.txt"))" -- \
	awk -v m="$(fact middle_incl "$TMP/f1.txt")" -v p="$(fact parts_incl "$TMP/f1.txt")" \
	'BEGIN { exit !(m > 0 && m >= p && m - p <= 0.01 * m + 2) }'
check "the session says $(fact unnamed_pct "$TMP/f1.txt")% of samples have no symbols (>= 90%)" -- \
	awk -v u="$(fact unnamed_pct "$TMP/f1.txt")" 'BEGIN { exit !(u >= 90 && u <= 100) }'
check "... mostly in the stripped program, with a hint: $(fact unnamed_hint "$TMP/f1.txt")" -- \
	test "$(fact unnamed_first "$TMP/f1.txt")" = "$TMP/shares" -a -n "$(fact unnamed_hint "$TMP/f1.txt")"
"$STACKCLOCK" report -i "$TMP/s1.data" >"$TMP/s1.txt"
check "the table says so in its summary" -- grep -q "^Without symbols [0-9.]*% of samples" "$TMP/s1.txt"

# The address view: module-relative, so the same rows in both runs.
for run in 1 2; do
	report_json "$TMP/s$run.data" "$TMP/a$run.json" --by address --top 0
done
check "address rows of the program are offsets in it, the same in both runs" -- python3 - \
	"$TMP/a1.json" "$TMP/a2.json" "$TMP/shares" <<'PY'
import json, os, sys
size = os.path.getsize(sys.argv[3])
def hot(p):
    rows = [x for x in json.load(open(p))["rows"] if x["module"] == sys.argv[3]]
    assert rows and all(int(x["address"], 16) < size for x in rows), "not module-relative"
    return {x["address"] for x in rows if x["exclusive_samples"] >= 20}
a, b = hot(sys.argv[1]), hot(sys.argv[2])
print(len(a), len(b), len(a & b))
sys.exit(0 if a and len(a & b) >= len(a) // 2 else 1)
PY

# MiniDebugInfo: the local symbols in an xz-compressed .gnu_debugdata, as
# Fedora ships its binaries.
(cd "$TMP" &&
	nm -D shares_full --format=posix --defined-only | awk '{ print $1 }' | sort >dynsyms &&
	nm shares_full --format=posix --defined-only | awk '$2 ~ /^[tT]$/ { print $1 }' | sort >funcs &&
	comm -13 dynsyms funcs >keep &&
	objcopy --only-keep-debug shares_full mini &&
	objcopy -S --keep-symbols=keep mini mini.sym &&
	xz -f mini.sym &&
	cp shares shares_mini && objcopy --add-section .gnu_debugdata=mini.sym.xz shares_mini)
ok $? "build a stripped program with MiniDebugInfo"
check "record it" -- "$STACKCLOCK" record -F 999 -o "$TMP/m.data" -- "$TMP/shares_mini" 500
report_json "$TMP/m.data" "$TMP/m.json"
check "MiniDebugInfo names part_a, part_b, part_c, middle and main" -- \
	q "$TMP/m.json" "exit(0 if all(any(x['function'] == f for x in rows) for f in ('part_a', 'part_b', 'part_c', 'middle', 'main')) else 1)"

# debuginfod: a local server over a directory holding the debug file; the
# report asks it by build-id and keeps the file in its cache.
mkdir -p "$TMP/dbg" "$TMP/cache"
objcopy --only-keep-debug "$TMP/shares_full" "$TMP/dbg/shares.debug" || exit 1
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
debuginfod -F "$TMP/dbg" -p "$port" -d "$TMP/dbg.sqlite" >"$TMP/debuginfod.log" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null; rm -rf "$TMP"' EXIT
bid=$(readelf -n "$TMP/shares" | sed -n 's/.*Build ID: *//p')
export DEBUGINFOD_URLS=http://127.0.0.1:$port DEBUGINFOD_CACHE_PATH=$TMP/cache
for _ in $(seq 100); do		# until the server has indexed the file
	curl -sf -o /dev/null "$DEBUGINFOD_URLS/buildid/$bid/debuginfo" && break
	sleep 0.2
done
ok $? "a debuginfod server on 127.0.0.1:$port serves the debug file of build-id $bid"
report_json "$TMP/s1.data" "$TMP/d.json"
check "with DEBUGINFOD_URLS: part_a, part_b, part_c, middle named" -- \
	q "$TMP/d.json" "exit(0 if all(any(x['function'] == f for x in rows) for f in ('part_a', 'part_b', 'part_c', 'middle')) else 1)"
check "... and the same samples as by offset" -- \
	q "$TMP/d.json" "exit(0 if row('part_a')['exclusive_samples'] == $(python3 -c "import json; r = json.load(open('$TMP/s1.json')); print(sum(x['exclusive_samples'] for x in r['rows'] if x['function'] == 'shares+0x' + '$(awk '$1 == "part_a" { print $2 }' "$TMP/nm.txt" | sed 's/^0*//')'))") else 1)"
check "the debug file is in debuginfod's cache" -- test -d "$TMP/cache/$bid"
kill $server 2>/dev/null
wait $server 2>/dev/null
report_json "$TMP/s1.data" "$TMP/d2.json"
check "with the server gone, the cache still names them" -- \
	q "$TMP/d2.json" "exit(0 if any(x['function'] == 'part_a' for x in rows) else 1)"
export DEBUGINFOD_URLS=http://127.0.0.1:1 DEBUGINFOD_CACHE_PATH=$TMP/cache-empty
"$STACKCLOCK" report -i "$TMP/s1.data" --format json >"$TMP/d3.json" 2>"$TMP/d3.err"
ok $? "an unreachable server: the report still works"
check "... names by offset, one warning naming DEBUGINFOD_URLS" -- \
	sh -c "test \$(grep -c DEBUGINFOD_URLS '$TMP/d3.err') = 1 && grep -q '\"shares+0x' '$TMP/d3.json'"
unset DEBUGINFOD_URLS DEBUGINFOD_CACHE_PATH

# Instrumentation: the probes' function addresses of a stripped program.
cc -O1 -g -finstrument-functions -o "$TMP/inst_full" "$PROGS/rep_calls.c" || exit 1
cp "$TMP/inst_full" "$TMP/inst" && strip "$TMP/inst" || exit 1
check "record -m instrument the stripped program" -- \
	"$STACKCLOCK" record -m instrument -o "$TMP/i.data" -- "$TMP/inst"
report_json "$TMP/i.data" "$TMP/i.json" --top 0
report_json "$TMP/i.data" "$TMP/ic.json" --by callsite --top 0
check "instrumented functions named inst+0xSTART of the functions nm knows, calls as in the full build" -- \
	python3 - "$TMP/i.json" "$TMP/inst_full" "$STACKCLOCK" "$TMP" <<'PY'
import json, subprocess, sys
starts = {}
for line in subprocess.run(["nm", sys.argv[2]], capture_output=True, text=True).stdout.split("\n"):
    f = line.split()
    if len(f) == 3 and f[1] in "tT":
        starts[int(f[0], 16)] = f[2]
rows = [x for x in json.load(open(sys.argv[1]))["rows"] if x["module"].endswith("/inst")]
subprocess.run([sys.argv[3], "record", "-m", "instrument", "-o", sys.argv[4] + "/f.data", "--", sys.argv[2]], check=True, capture_output=True)
full = json.loads(subprocess.run([sys.argv[3], "report", "-i", sys.argv[4] + "/f.data", "--format", "json", "--top", "0"], check=True, capture_output=True, text=True).stdout)
calls = {x["function"]: x["calls"] for x in full["rows"]}
bad = [x["function"] for x in rows if not x["function"].startswith("inst+0x")
       or calls.get(starts.get(int(x["function"][7:], 16)), -1) != x["calls"]]
print(len(rows), bad)
sys.exit(0 if len(rows) >= 3 and not bad else 1)
PY
check "call sites of the stripped program: callers and callees named by offset" -- \
	q "$TMP/ic.json" "exit(0 if rows and all(x['function'].startswith('inst+0x') and x['callee'].startswith('inst+0x') for x in rows if x['module'].endswith('/inst')) else 1)"
check "the session gives the share of time without symbols: $(q "$TMP/i.json" "s['unnamed_pct']")%" -- \
	q "$TMP/i.json" "exit(0 if s['unnamed_pct'] >= 90 else 1)"
