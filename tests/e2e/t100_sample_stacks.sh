#!/usr/bin/env bash
# Sampling: complete stacks on -O2 code without frame pointers, unwound
# from DWARF CFI (.eh_frame, or .debug_frame alone), through a library
# dlopen'ed while sampling runs.  Stacks are read back raw with
# `stackclock dump --stacks`: "STATE PID TID COUNT a;b;c".
. "$(dirname "$0")/lib.sh"
. "$E2E_DIR/smp_lib.sh"

# share AWK-CONDITION FOLDED: per cent of samples whose line matches.
share() { awk -v pat="$1" '{ n += $4; if ($5 ~ pat) m += $4 } END { printf "%.1f", n ? 100 * m / n : 0 }' "$2"; }

# -fno-optimize-sibling-calls: middle() must stay on the stack when it
# calls its last part (a tail call would make it jump, not call).
flags="-O2 -fomit-frame-pointer -fno-optimize-sibling-calls"
for variant in eh_frame debug_frame; do
	extra=
	[ $variant = debug_frame ] && extra="-fno-asynchronous-unwind-tables -fno-unwind-tables"
	build shares_$variant e2e_shares.c $flags $extra || exit 1
	if [ $variant = debug_frame ]; then
		readelf -S "$TMP/shares_$variant" | grep -q debug_frame
		ok $? "$variant build has a .debug_frame section"
	fi
	D=$TMP/$variant.data
	check "$variant: record" -- "$STACKCLOCK" record -F 999 -o "$D" -- "$TMP/shares_$variant" 1000
	sc_stacks "$D" >"$TMP/$variant.folded"
	n=$(awk '{ n += $4 } END { print n + 0 }' "$TMP/$variant.folded")
	ok $(( n > 100 ? 0 : 1 )) "$variant: samples recorded ($n)"
	root=$(awk '{ n += $4; if ($1 == "root") r += $4 } END { printf "%.1f", n ? 100 * r / n : 0 }' "$TMP/$variant.folded")
	atleast "$root" 95; ok $? "$variant: $root% of stacks reach the root (>= 95%)"
	chain=$(share '^_start;.*;main;middle;part_[abc]$' "$TMP/$variant.folded")
	atleast "$chain" 95; ok $? "$variant: $chain% of stacks are _start..main;middle;part_[abc] (>= 95%)"
	for f in part_a part_b part_c; do
		grep -q ";main;middle;$f\$" "$TMP/$variant.folded"
		ok $? "$variant: main;middle;$f seen"
	done
done

# The report agrees with the raw stacks.
check "report --format json" -- sh -c "'$STACKCLOCK' report -i '$TMP/eh_frame.data' --format json > '$TMP/r.json'"
check "report: root_reached_pct >= 95" -- q "$TMP/r.json" "exit(0 if s['root_reached_pct'] >= 95 else 1)"

# A library that arrives by dlopen while sampling runs.
cc -g -O2 -fomit-frame-pointer -DSMP_LIB -shared -fPIC -o "$TMP/libsmp.so" "$PROGS/smp_dlopen.c" || exit 1
build smp_dlopen smp_dlopen.c -O2 -fomit-frame-pointer -ldl || exit 1
check "record a dlopen'ing program" -- "$STACKCLOCK" record -o "$TMP/dl.data" -- "$TMP/smp_dlopen" "$TMP/libsmp.so" 800
sc_stacks "$TMP/dl.data" >"$TMP/dl.folded"
chain=$(share '^_start;.*;main;call_lib;lib_spin;lib_inner$' "$TMP/dl.folded")
atleast "$chain" 90; ok $? "$chain% of stacks go main;call_lib;lib_spin;lib_inner through the dlopen'ed library (>= 90%)"
"$STACKCLOCK" dump -i "$TMP/dl.data" | grep -q "module .*build_id=[0-9a-f]\{40\} path=\"$TMP/libsmp.so\""
ok $? "the dlopen'ed library is a module with its build-id"
