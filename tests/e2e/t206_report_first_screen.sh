#!/usr/bin/env bash
# What a new user sees first: before the full table, the functions doing
# most individual work and the hot path, for a hot spot behind layers of
# wrappers (rep_first), both methods.  Names: whole when piped (a function
# name longer than a terminal line, a long program name as module);
# --width N fits N columns and gives the module column more room; on a
# terminal the table fits the terminal (its size, or $COLUMNS when the
# terminal has none).
. "$(dirname "$0")/lib.sh"
HOT=checksum_every_block_of_the_input_buffer_with_a_name_longer_than_a_terminal_line
MOD=rep_first_screen_program_with_a_long_name
build "$MOD" rep_first.c -O2 || exit 1
build rep_first_i rep_first.c -O2 -finstrument-functions || exit 1
S=$TMP/s.data I=$TMP/i.data
check "record rep_first (sampling)" -- "$STACKCLOCK" record -o "$S" -- "$TMP/$MOD" 300
# 300 ms as for sampling: a preemption of a few ms in cold's intervals (EE is
# elapsed time) turned the 3:1 split around in a 100 ms run on a loaded machine
check "record rep_first (instrumentation)" -- "$STACKCLOCK" record -m instrument -o "$I" -- "$TMP/rep_first_i" 300
"$STACKCLOCK" report -i "$S" >"$TMP/s.txt" && "$STACKCLOCK" report -i "$I" >"$TMP/i.txt"
ok $? "report (table, piped) of both"

# the first screen: the hot function heads the work list, the hot path runs
# through the wrappers to it, and both come before the full table, whose
# first row is a wrapper
for m in s i; do
	what=$([ $m = s ] && echo sampling || echo instrumentation)
	check "$what: the work list comes first, headed by the hot function (whole name)" -- \
		sh -c "sed -n '/^Functions doing most individual work/{n;n;p;q}' '$TMP/$m.txt' | grep -qE ' $HOT( |\$)'"
	# the hot path, its wrapped lines joined
	sed -n '/^Hot path/,/^$/p' "$TMP/$m.txt" | tr '\n' ' ' >"$TMP/$m.path"
	check "$what: the hot path runs main > run > wrap_outer > wrap_inner > the hot function ($(cat "$TMP/$m.path"))" -- \
		grep -qE "main( [0-9.]+%)? > run( [0-9.]+%)? > wrap_outer( [0-9.]+%)? > +wrap_inner [0-9.]+% > +$HOT [0-9.]+% *\$" "$TMP/$m.path"
	check "$what: the full table follows, its first row a wrapper at the top, not the hot spot" -- \
		sh -c "awk '/^Hot path/ { h = 1 } h && /^\$/ { getline; getline; print; exit }' '$TMP/$m.txt' | grep -qvE '$HOT|cold'"
done
check "sampling: the hot function's share in the work list is its exclusive share in JSON" -- python3 - "$S" "$TMP/s.txt" "$HOT" <<'PY'
import json, subprocess, sys, os
j = json.loads(subprocess.check_output([os.environ["STACKCLOCK"], "report", "-i", sys.argv[1], "--format", "json"]))
row = next(r for r in j["rows"] if r["function"] == sys.argv[3])
lines = open(sys.argv[2]).read().split("\n")
first = lines[lines.index(next(l for l in lines if l.startswith("Functions doing most"))) + 2]
want = "%9d %5.1f %9d %5.1f  %s" % (row["inclusive_samples"], row["inclusive_pct"], row["exclusive_samples"], row["exclusive_pct"], sys.argv[3])
assert first.startswith(" " + want), (first, want)
PY

# piped: nothing cut
check "piped: the long names are whole (no '..'), the module too" -- \
	sh -c "grep -q ' $HOT $MOD\$' '$TMP/s.txt' && ! grep -q '\.\.' '$TMP/s.txt'"
check "the JSON has not changed shape: session and rows only" -- \
	sh -c "'$STACKCLOCK' report -i '$S' --format json | python3 -c 'import json, sys; assert sorted(json.load(sys.stdin)) == [\"rows\", \"session\"]'"

# --width: every line within it; more room for the module column
"$STACKCLOCK" report -i "$S" --width 80 >"$TMP/w80.txt" && "$STACKCLOCK" report -i "$S" --width 110 >"$TMP/w110.txt"
ok $? "report --width 80 and --width 110"
widest() { awk '{ if (length > m) m = length } END { print m + 0 }' "$1"; }
check "--width 110: widest line $(widest "$TMP/w110.txt") <= 110, and over 80" -- \
	sh -c "[ $(widest "$TMP/w110.txt") -le 110 ] && [ $(widest "$TMP/w110.txt") -gt 80 ]"
check "--width 80: widest line $(widest "$TMP/w80.txt") <= 80" -- sh -c "[ $(widest "$TMP/w80.txt") -le 80 ]"
modcol() { awk '/  cold / { print length($NF); exit }' "$1"; }
check "the module column widens: $(modcol "$TMP/w80.txt") characters at 80, $(modcol "$TMP/w110.txt") at 110" -- \
	sh -c "[ '$(modcol "$TMP/w80.txt")' = 16 ] && [ '$(modcol "$TMP/w110.txt")' = 25 ]"
check "--width is in report --help and diff --help" -- \
	sh -c "'$STACKCLOCK' report --help | grep -q -- '--width N' && '$STACKCLOCK' diff --help | grep -q -- '--width N'"

# a terminal: its width (script(1) gives the report one)
if script -qec true /dev/null >/dev/null 2>&1; then
	script -qec "stty cols 100; '$STACKCLOCK' report -i '$S'" /dev/null | tr -d '\r' >"$TMP/tty100.txt"
	check "a terminal of 100 columns: widest line $(widest "$TMP/tty100.txt") is 100, names shortened" -- \
		sh -c "[ $(widest "$TMP/tty100.txt") -eq 100 ] && grep -q '\.\.' '$TMP/tty100.txt'"
	script -qec "stty cols 0; COLUMNS=120 '$STACKCLOCK' report -i '$S'" /dev/null | tr -d '\r' >"$TMP/tty120.txt"
	check "a terminal without a size: \$COLUMNS (120), widest line $(widest "$TMP/tty120.txt")" -- \
		sh -c "[ $(widest "$TMP/tty120.txt") -eq 120 ]"
else
	echo "# script(1) cannot run here: no terminal test"
fi
echo "1..$_n"
