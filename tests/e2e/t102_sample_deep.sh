#!/usr/bin/env bash
# Sampling deep recursion (150 levels, no frame pointers): unwound whole
# within the default 32 KiB stack copy; with a copy too small for it, every
# stack is flagged truncated, never silently cut.
. "$(dirname "$0")/lib.sh"
. "$E2E_DIR/smp_lib.sh"
build deep smp_deep.c -O2 -fomit-frame-pointer || exit 1

check "record 150-deep recursion" -- "$STACKCLOCK" record -o "$TMP/d.data" -- "$TMP/deep" 150 800
sc_stacks "$TMP/d.data" >"$TMP/d.folded"
# Samples in burn(): main then 151 descend() frames (150 .. 0), then burn.
full=$(awk '$5 ~ /;burn$/ { n += $4; k = gsub(/;descend/, "&", $5); if ($1 == "root" && $5 ~ /^_start;.*;main;descend/ && k == 151) m += $4 }
	END { printf "%.1f", n ? 100 * m / n : 0 }' "$TMP/d.folded")
atleast "$full" 95; ok $? "$full% of samples in burn() have all 151 descend() frames and reach the root (>= 95%)"
partial=$(awk '$1 == "partial" { n += $4 } END { print n + 0 }' "$TMP/d.folded")
ok $(( partial <= 2 ? 0 : 1 )) "no stack silently cut ($partial partial)"

STACKCLOCK_STACK_SIZE=4096 "$STACKCLOCK" record -o "$TMP/t.data" -- "$TMP/deep" 150 500 2>/dev/null
ok $? "record with a 4 KiB stack copy"
sc_stacks "$TMP/t.data" >"$TMP/t.folded"
trunc=$(awk '$5 ~ /;burn$/ { n += $4; if ($1 == "trunc") m += $4 } END { printf "%.1f", n ? 100 * m / n : 0 }' "$TMP/t.folded")
atleast "$trunc" 95; ok $? "$trunc% of samples in burn() flagged truncated (>= 95%)"
"$STACKCLOCK" report -i "$TMP/t.data" --format json >"$TMP/t.json"
check "the report states the truncated share" -- q "$TMP/t.json" "exit(0 if s['truncated_pct'] >= 90 and s['root_reached_pct'] < 10 else 1)"
