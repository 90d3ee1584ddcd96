#!/usr/bin/env bash
# san: skip
# (not serial: it compares counts, never times; Lua's string-hash seed is
# fixed, so a loaded machine runs the script alike)
# Exact counts on a real interpreter (SPEC section 10, issue 11): Lua 5.4
# (Debian's source) built -O2 -fno-inline -fno-ipa-cp -fno-ipa-sra
# -fno-partial-inlining -fno-optimize-sibling-calls twice: without hooks
# (patched at run time by stackclock) and with -finstrument-functions and
# a counting hook (tests/progs/count_hooks.c, the oracle).  A script with
# recursion, closures, string formatting, sorting, errors caught by pcall
# (longjmp) and coroutines (a resume and yield jump between C frames) runs
# under both: the output is the same as without stackclock, and for every
# function discovery patched (named alike in both builds, unique), our
# count equals the oracle's (the string-hash seed fixed in both builds, so
# that the runs are alike).  Coverage (patched / candidates, per reason)
# is printed.  The source comes from deb.debian.org, fetched by
# scripts/install-deps.sh into ~/.cache/stackclock-bench (or
# STACKCLOCK_LUA_TGZ).
. "$(dirname "$0")/lib.sh"
export STACKCLOCK_CACHE_DIR=$TMP/cache
TGZ=${STACKCLOCK_LUA_TGZ:-$HOME/.cache/stackclock-bench/lua5.4_5.4.4.orig.tar.gz}
if [ ! -s "$TGZ" ]; then
	ok 1 "Lua's source at $TGZ (scripts/install-deps.sh fetches it; or set STACKCLOCK_LUA_TGZ)"
	exit 0
fi
# (a fixed string-hash seed: Lua's own mixes in the time and addresses, which
# would change the hash tables' collisions, and so some counts, between runs)
FLAGS="-g -fno-inline -fno-ipa-cp -fno-ipa-sra -fno-partial-inlining -fno-optimize-sibling-calls"
FLAGS="$FLAGS '-Dluai_makeseed(L)=0u'"
cc -O2 -c -o "$TMP/count_hooks.o" "$PROGS/count_hooks.c" || exit 1
for v in plain hooks; do
	mkdir -p "$TMP/$v" && tar xzf "$TGZ" -C "$TMP/$v" --strip-components=1 || exit 1
	extra="" libs=""
	[ $v = hooks ] && extra="-finstrument-functions" libs="$TMP/count_hooks.o"
	make -s -j"$(nproc)" -C "$TMP/$v/src" lua CC=gcc MYCFLAGS="$FLAGS $extra" MYLIBS="$libs" \
		SYSCFLAGS="-DLUA_USE_LINUX" SYSLIBS="-Wl,-E -ldl" >/dev/null 2>&1
	ok $? "build Lua ($v)"
done
LUA=$TMP/plain/src/lua
cat >"$TMP/t.lua" <<'LUA'
local function fib(n) if n < 2 then return n end return fib(n - 1) + fib(n - 2) end
local t = {}
for i = 1, 3000 do t[#t + 1] = string.format("%d:%s", i, tostring(i * 7)) end
table.sort(t)
local caught = 0
for i = 1, 200 do
	local okk = pcall(function() if i % 3 == 0 then error("boom " .. i) end return i end)
	if not okk then caught = caught + 1 end
end
local co = coroutine.wrap(function() for i = 1, 100 do coroutine.yield(i) end end)
local s = 0
for i = 1, 100 do s = s + co() end
local parts = {}
for w in ("the quick brown fox jumps over the lazy dog"):gmatch("%a+") do parts[#parts + 1] = w:upper() end
print(fib(20), #t, t[1], caught, s, table.concat(parts, ","))
LUA
"$LUA" "$TMP/t.lua" >"$TMP/plain.out" 2>&1
STACKCLOCK_TEST_COUNTS=$TMP/oracle.txt "$TMP/hooks/src/lua" "$TMP/t.lua" >"$TMP/hooks.out" 2>&1
cmp -s "$TMP/plain.out" "$TMP/hooks.out" && [ -s "$TMP/oracle.txt" ]
ok $? "the counting build runs the script alike and writes its counts ($(wc -l <"$TMP/oracle.txt") functions)"
"$STACKCLOCK" record -m instrument -o "$TMP/l.data" -- "$LUA" "$TMP/t.lua" >"$TMP/rec.out" 2>"$TMP/rec.err"
ok $? "record the Lua built without hooks ($(head -c 200 "$TMP/rec.err"))"
cmp -s "$TMP/plain.out" "$TMP/rec.out"
ok $? "same output under patching: $(head -c 120 "$TMP/rec.out")"
report_json "$TMP/l.data" "$TMP/l.json" --top 0
"$STACKCLOCK" dump --patch-plan "$LUA" --functions >"$TMP/plan.txt"
ok $? "the plan of the Lua without hooks"
nm "$TMP/hooks/src/lua" | awk '$2 ~ /^[tT]$/ { print $1, $3 }' >"$TMP/nm_hooks.txt"
nm "$LUA" | awk '$2 ~ /^[tT]$/ { print $1, $3 }' >"$TMP/nm_plain.txt"
python3 - "$TMP/l.json" "$TMP/plan.txt" "$TMP/oracle.txt" "$TMP/nm_hooks.txt" "$TMP/nm_plain.txt" >"$TMP/cmp.txt" <<'PY'
import collections, json, sys
rep, plan, oracle, nmh, nmp = sys.argv[1:]
def names(path):
    by_addr, count = {}, collections.Counter()
    for line in open(path):
        a, n = line.split()
        by_addr[int(a, 16)] = n
        count[n] += 1
    return by_addr, count
h_addr, h_count = names(nmh)
p_addr, p_count = names(nmp)
want = collections.Counter()
for line in open(oracle):
    off, n = line.split()
    name = h_addr.get(int(off, 16))
    if name:
        want[name] += int(n)
got = collections.Counter()
for x in json.load(open(rep))["rows"]:
    if x["module"].endswith("/lua"):
        got[x["function"]] += x["calls"]
patched, bad, checked, skipped = set(), [], 0, 0
for line in open(plan):
    f = line.split()
    # ADDR SIZE DECISION [how] FLAGS NAME
    if len(f) >= 5 and f[0].startswith("0x") and f[2] == "patched" and f[-1] != "-":
        patched.add(f[-1])
for name in sorted(patched):
    if h_count[name] != 1 or p_count[name] != 1:
        skipped += 1          # static functions named alike in two files
        continue
    checked += 1
    if got[name] != want[name]:
        bad.append("%s: ours %d, oracle %d" % (name, got[name], want[name]))
called = [n for n in want if want[n] > 0 and h_count[n] == 1 and p_count[n] == 1]
print("checked=%d" % checked)
print("skipped=%d" % skipped)
print("bad=%d" % len(bad))
print("first_bad=%s" % "; ".join(bad[:5]))
print("calls=%d" % sum(want[n] for n in patched if n in want))
print("called=%d" % len(called))
print("called_patched=%d" % len([n for n in called if n in patched]))
PY
fact() { sed -n "s/^$1=//p" "$TMP/cmp.txt"; }
[ "$(fact bad)" = 0 ] && [ "$(fact checked)" -ge 500 ]
ok $? "every patched function's count equals the oracle's: $(fact checked) functions checked, $(fact calls) calls, $(fact bad) differ${bad:+ }$(fact first_bad) ($(fact skipped) names not unique, left out)"
[ "$(fact called_patched)" -ge $(( $(fact called) * 85 / 100 )) ]
ok $? "of the $(fact called) functions the script calls, $(fact called_patched) are patched (>= 85 %)"
echo "# coverage: $(head -1 "$TMP/plan.txt")"
echo "# $(sed -n 3p "$TMP/plan.txt")"
