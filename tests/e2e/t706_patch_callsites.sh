#!/usr/bin/env bash
# san: skip
# Functions too short for the entry jmp (issue 18, docs/patching.md) are
# counted at their direct call sites: patch_short.c's 1- and 3-byte
# functions (gcc and clang -O2, with and without -fcf-protection, PIE and
# not) are called directly a known number of times, by call rel32, by a
# tail jmp rel32 left in place and by one displaced into a patched
# function's trampoline, and once each through a function pointer.  Under
# patching the output is the same, each one's calls equal the direct
# calls exactly (the pointer calls are not counted), the session lists
# them as call_sites, and the report says that pointer calls are not
# counted; only_by_pointer, never called directly, stays too_short.
. "$(dirname "$0")/lib.sh"
export STACKCLOCK_CACHE_DIR=$TMP/cache

for cc in gcc clang; do
	command -v $cc >/dev/null || continue
	for flags in "-O2" "-O2 -fcf-protection=full" "-O2 -no-pie -fno-pie"; do
		what="$cc $flags"
		exe=$TMP/short
		$cc $flags -g -o "$exe" "$PROGS/patch_short.c" 2>/dev/null || { ok 1 "$what: build"; continue; }
		"$exe" 200 >"$TMP/plain.out" 2>"$TMP/expect"
		"$STACKCLOCK" record -m instrument -o "$TMP/s.data" -- "$exe" 200 >"$TMP/rec.out" 2>"$TMP/rec.err"
		rc=$?
		[ $rc -eq 0 ] && cmp -s "$TMP/plain.out" "$TMP/rec.out"
		ok $? "$what: same output under patching ($rc, $(cat "$TMP/rec.out"))"
		"$STACKCLOCK" report -i "$TMP/s.data" --format json >"$TMP/s.json" 2>/dev/null
		python3 - "$TMP/s.json" "$TMP/expect" "$what" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
calls = {x["function"]: x["calls"] for x in r["rows"]}
bad = []
for line in open(sys.argv[2]):
    _, name, want = line.split()
    if calls.get(name) != int(want):
        bad.append("%s %s != %s" % (name, calls.get(name), want))
print(("not ok" if bad else "ok") + " - %s: direct calls counted exactly, pointer calls not %s" %
      (sys.argv[3], "; ".join(bad)))
u = r["session"].get("unpatched", {})
print(("ok" if u.get("call_sites") == 3 and u.get("too_short", 0) >= 1 else "not ok") +
      " - %s: nothing, ident and zero counted at their call sites, only_by_pointer too short "
      "(unpatched %s)" % (sys.argv[3], u))
PY
		"$STACKCLOCK" report -i "$TMP/s.data" >"$TMP/s.txt" 2>&1
		tr -s ' \n' ' ' <"$TMP/s.txt" | grep -q "call_sites: 3 functions too short to patch are counted at their direct calls; their calls through pointers are not counted"
		ok $? "$what: the report says the pointer calls are not counted"
	done
done

# A function too short with no direct call stays too_short.
gcc -O2 -g -o "$TMP/ptr" "$PROGS/patch_short.c" || exit 1
"$STACKCLOCK" dump --patch-plan "$TMP/ptr" --functions >"$TMP/plan.txt"
grep -q " too_short .* only_by_pointer$" "$TMP/plan.txt" && grep -q " call_sites at 1 .* ident$" "$TMP/plan.txt"
ok $? "a function called only through a pointer stays too_short ($(grep -E 'only_by_pointer|call sites:' "$TMP/plan.txt" | tr '\n' ' '))"
