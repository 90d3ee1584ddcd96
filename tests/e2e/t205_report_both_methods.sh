#!/usr/bin/env bash
# Both methods give the same tables (README): --by line of an
# instrumentation recording and --by callsite of a sampling one.
#  - instrumentation by line: a line's calls give it their number and
#    inclusive time (the same nanoseconds as the callee's row when the line
#    is its only caller); a function's own time sits on its first line, the
#    line addr2line gives for its address;
#  - sampling by call site: a frame's line calling the frame below, the
#    samples with that call on the stack, exclusive when the callee is the
#    leaf (the callee's own samples when the line is its only caller).
. "$(dirname "$0")/lib.sh"
build rep_calls rep_calls.c -O1 -finstrument-functions || exit 1
build rep_sample rep_sample.c -O2 -fomit-frame-pointer || exit 1
I=$TMP/i.data S=$TMP/s.data
check "record -m instrument rep_calls recurse" -- "$STACKCLOCK" record -m instrument --libcalls=none -o "$I" -- "$TMP/rep_calls" recurse
report_json "$I" "$TMP/il.json" --by line --check
report_json "$I" "$TMP/if.json"

# first lines: where addr2line puts each function's address
for f in main driver work nest rec a_function_with_a_rather_long_name_to_shorten_in_tables; do
	addr=$(nm "$TMP/rep_calls" | awk -v f="$f" '$3 == f { print $1 }')
	echo "$f $(addr2line -e "$TMP/rep_calls" "0x$addr" | sed 's/.*://')"
done >"$TMP/first_lines"
check "addr2line knows the six first lines" -- sh -c "[ \$(grep -c ' [1-9][0-9]*\$' '$TMP/first_lines') -eq 6 ]"
check "instrumentation by line: calls per line exactly (43: 1000 of work, 32: 10 of rec, ...)" -- python3 - "$TMP/il.json" <<'PY'
import json, sys
rows = json.load(open(sys.argv[1]))["rows"]
got = {(r["function"], r["line"]): r["calls"] for r in rows if r["file"] and r["file"].endswith("rep_calls.c") and r["calls"]}
want = {("main", 52): 1, ("driver", 43): 1000, ("driver", 44): 1, ("driver", 45): 1, ("driver", 47): 1,
        ("nest", 24): 1, ("nest", 25): 1, ("nest", 26): 1, ("rec", 32): 10,
        ("a_function_with_a_rather_long_name_to_shorten_in_tables", 37): 1}
assert got == want, got
PY
check "a line that alone calls a function has that function's EI and AI, to the ns" -- python3 - "$TMP/il.json" "$TMP/if.json" <<'PY'
import json, sys
lines = {(r["function"], r["line"]): r for r in json.load(open(sys.argv[1]))["rows"]}
fns = {r["function"]: r for r in json.load(open(sys.argv[2]))["rows"]}
for caller, line, callee in [("main", 52, "driver"), ("driver", 44, "nest"), ("driver", 47, "rec"),
                             ("driver", 45, "a_function_with_a_rather_long_name_to_shorten_in_tables")]:
    l, f = lines[(caller, line)], fns[callee]
    assert (l["elapsed_inclusive_ns"], l["application_inclusive_ns"]) == \
        (f["elapsed_inclusive_ns"], f["application_inclusive_ns"]), (caller, line, l, f)
    assert l["elapsed_exclusive_ns"] == 0 and l["application_exclusive_ns"] == 0, l
PY
check "each function's own time (EE, AE) is on its first line, EI = EE there" -- python3 - "$TMP/il.json" "$TMP/if.json" "$TMP/first_lines" <<'PY'
import json, sys
lines = {(r["function"], r["line"]): r for r in json.load(open(sys.argv[1]))["rows"]}
fns = {r["function"]: r for r in json.load(open(sys.argv[2]))["rows"]}
for f, first in (l.split() for l in open(sys.argv[3])):
    l = lines.get((f, int(first)))
    if l is None:        # a line with no values is no row: only if the function has no own time
        assert fns[f]["elapsed_exclusive_ns"] == 0 and fns[f]["application_exclusive_ns"] == 0, (f, fns[f])
        continue
    assert (l["elapsed_exclusive_ns"], l["application_exclusive_ns"], l["elapsed_inclusive_ns"], l["calls"]) == \
        (fns[f]["elapsed_exclusive_ns"], fns[f]["application_exclusive_ns"], fns[f]["elapsed_exclusive_ns"], 0), (f, l)
PY
check "instrumentation by line table: 'rep_calls.c:43 driver' with 1000 calls" -- sh -c \
	"'$STACKCLOCK' report -i '$I' --by line | grep -qE '^   1000 .* rep_calls.c:43 driver\$'"

check "record rep_sample 300 (sampling)" -- "$STACKCLOCK" record -o "$S" -- "$TMP/rep_sample" 300
report_json "$S" "$TMP/sc.json" --by callsite --check
report_json "$S" "$TMP/sf.json"
check "sampling by call site: outer:42 -> hot, outer:44 -> cold, hot:24 -> mix (inlined), main:56 -> outer carry their callee's samples exactly" -- python3 - "$TMP/sc.json" "$TMP/sf.json" <<'PY'
import json, sys
sites = {(r["function"], r["line"], r["callee"]): r for r in json.load(open(sys.argv[1]))["rows"]}
fns = {r["function"]: r for r in json.load(open(sys.argv[2]))["rows"]}
for key in [("outer", 42, "hot"), ("outer", 44, "cold"), ("hot", 24, "mix"), ("main", 56, "outer")]:
    s, f = sites[key], fns[key[2]]
    assert (s["inclusive_samples"], s["exclusive_samples"]) == (f["inclusive_samples"], f["exclusive_samples"]), (key, s, f)
    assert s["file"].endswith("rep_sample.c") and s["callee_module"].endswith("/rep_sample"), s
assert fns["cold"]["exclusive_samples"] > 0 and fns["mix"]["exclusive_samples"] > 0
PY
check "sampling by call site table: 'outer:44 -> cold'" -- sh -c \
	"'$STACKCLOCK' report -i '$S' --by callsite | grep -qE ' outer:44 -> cold\$'"
echo "1..$_n"
