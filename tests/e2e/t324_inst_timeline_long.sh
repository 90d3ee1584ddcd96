#!/usr/bin/env bash
# Reading a long timeline back (issue 30, 14): replay and export --format
# chrome stream it, so their peak memory does not grow with its length.
# fib (tests/progs/tl_fib.c, hooks) recorded with --timeline at N = 1.66 M
# calls of fib (fib(29)) and 4N (fib(29) four times): replay's and the
# chrome export's peak RSS (/usr/bin/time's, the kernel's VmHWM) at 4N is
# within 8 MB of theirs at N, and under 300 MB (about 47 MB at both);
# before the stream, replay's grew by 129 MB from N to 4N (54 to 183 MB)
# and the export's by 188 MB (73 to 261 MB).  Every call is there: replay prints one line per call ("f();" or
# "f() {"), the export one complete event per call, as many as the
# aggregated profile counts.
. "$(dirname "$0")/lib.sh"

[ -x /usr/bin/time ] || { echo "1..0 # SKIP /usr/bin/time is needed for the peak RSS"; exit 0; }
build fib tl_fib.c -O2 -fno-inline -fno-optimize-sibling-calls -finstrument-functions || exit 1
# KB of peak RSS of a command, its output to /dev/null
peak() { /usr/bin/time -f %M -o "$TMP/rss" "$@" >/dev/null 2>"$TMP/peak.err" && cat "$TMP/rss"; }
declare -A R E
for k in 1 4; do
	check "record fib(29) x $k with --timeline" -- "$STACKCLOCK" record -m instrument -F 0 --libcalls=none --timeline=1G \
		-o "$TMP/f$k.data" -- "$TMP/fib" 29 $k
	calls=$("$STACKCLOCK" report -i "$TMP/f$k.data" --format json |
		python3 -c "import json, sys; print(sum(r['calls'] for r in json.load(sys.stdin)['rows']))")
	check "fib(29) x $k: $calls calls (2 * 832040 - 1 = 1664079 of fib each time, and main)" -- \
		test "$calls" = $((k * 1664079 + 1))
	R[$k]=$(peak "$STACKCLOCK" replay -i "$TMP/f$k.data")
	E[$k]=$(peak "$STACKCLOCK" export -i "$TMP/f$k.data" --format chrome -o -)
	echo "# fib(29) x $k: $calls calls; peak RSS: replay ${R[$k]} KB, export --format chrome ${E[$k]} KB"
done
lines=$("$STACKCLOCK" replay -i "$TMP/f1.data" | grep -c '^ *[0-9.]*  *[0-9.]* [mun]*s  *[a-z]*()[ ;{]')
check "replay: one line per call ($lines)" -- test "$lines" = $((1664079 + 1))
events=$("$STACKCLOCK" export -i "$TMP/f1.data" --format chrome -o - | grep -c '"ph":"X".*"cat":"\(lib\)\?call"')
check "export --format chrome: one complete event per call ($events)" -- test "$events" = $((1664079 + 1))
check "replay's peak RSS at 4N (${R[4]} KB) within 8 MB of N's (${R[1]} KB), under 300 MB" -- \
	test $((R[4] - R[1])) -le 8192 -a "${R[4]}" -lt 307200
check "the chrome export's peak RSS at 4N (${E[4]} KB) within 8 MB of N's (${E[1]} KB), under 300 MB" -- \
	test $((E[4] - E[1])) -le 8192 -a "${E[4]}" -lt 307200
