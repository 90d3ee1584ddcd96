#!/usr/bin/env bash
# bench/timeline_long.sh — reading a long timeline back (issue 30, 14):
# peak memory (the kernel's VmHWM, /usr/bin/time's "Maximum resident set
# size") and time of replay and export --format chrome, which stream the
# timeline whatever its length.
#
#   bench/timeline_long.sh [N] [K]   fib(N) K times (default 37 2: 156 M
#                                    calls, a 502 MB data file; needs
#                                    about 1 GB of disk in $TMPDIR)
#
# The program (tests/progs/tl_fib.c, -O2, no hooks) is patched by record -m
# instrument (--timeline=2G: all of it kept).  Each command's output goes to
# /dev/null.  With BASE=/path/to/another/build/stackclock, the same
# commands of that build too, in the same run (before/after a change).
set -u
N=${1:-37}
K=${2:-2}
HERE=$(cd "$(dirname "$0")" && pwd)
O=${O:-$HERE/../build}
SC=$O/stackclock
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
gcc -O2 -g -fno-inline -fno-optimize-sibling-calls -o "$W/fib" "$HERE/../tests/progs/tl_fib.c" || exit 1
"$SC" record -m instrument -F 0 --timeline=2G -o "$W/fib.data" -- "$W/fib" "$N" "$K" >/dev/null 2>"$W/rec.err" ||
	{ cat "$W/rec.err"; exit 1; }
grep -h "calls\|timeline" "$W/rec.err"
echo "data file: $(stat -c %s "$W/fib.data") bytes"
run() { # LABEL COMMAND...
	local label=$1; shift
	/usr/bin/time -f '%M %U %S %e' -o "$W/t" "$@" >/dev/null 2>"$W/err" || { cat "$W/err"; return; }
	awk -v l="$label" '{ printf "%s\n    peak RSS %7.1f MB   CPU %6.2f s   wall %6.2f s\n", l, $1 / 1024, $2 + $3, $4 }' "$W/t"
}
for b in "$SC" ${BASE:-}; do
	run "$b replay" "$b" replay -i "$W/fib.data"
	run "$b export --format chrome" \
		"$b" export -i "$W/fib.data" --format chrome -o /dev/null
done
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
