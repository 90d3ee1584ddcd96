#!/usr/bin/env bash
# bench/libcalls.sh — the cost of a library-call row (SPEC section 11),
# side by side with the function probes' and with uftrace's PLT hooks, in
# the same run.
#
#   bench/libcalls.sh [N] [RUNS]       N calls per run (default 5,000,000),
#                                      RUNS alternating runs (default 5)
#
# One program (bench/libcall_work.c, -O2 -fno-builtin, hooks compiled in)
# calls labs() N times (a library call), or its own my_abs() N times (an
# instrumented function of the same work).  CPU time (user + sys) of:
#   plain       the program alone
#   none        record -m instrument --libcalls=none (labs unprobed)
#   program     record -m instrument (labs a row: the library-call probe)
#   fn          record -m instrument of the my_abs loop (function probes)
#   pnone, plib, pfn  the same three on the program built without hooks
#               (patched at run time)
#   uftrace     uftrace record of the labs loop (its PLT hook)
# Cost per call = (median time - median time of none) / N, for the library
# calls and the function probes alike (none: the same recorder start, the
# loop unprobed).  Medians of RUNS.
set -u
N=${1:-5000000}
RUNS=${2:-5}
HERE=$(cd "$(dirname "$0")" && pwd)
O=${O:-$HERE/../build}
SC=$O/stackclock
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
gcc -O2 -fno-builtin -finstrument-functions -o "$W/work" "$HERE/libcall_work.c" || exit 1
gcc -O2 -fno-builtin -o "$W/pwork" "$HERE/libcall_work.c" || exit 1

cpu() { /usr/bin/time -f '%U %S' -o "$W/t" "$@" >/dev/null 2>&1; awk '{ print $1 + $2 }' "$W/t"; }
declare -A T
for ((r = 0; r < RUNS; r++)); do
	T[plain]+=" $(cpu "$W/work" lib "$N")"
	T[none]+=" $(cpu "$SC" record -m instrument -F 0 --libcalls=none -o "$W/n.data" -- "$W/work" lib "$N")"
	T[program]+=" $(cpu "$SC" record -m instrument -F 0 -o "$W/p.data" -- "$W/work" lib "$N")"
	T[fn]+=" $(cpu "$SC" record -m instrument -F 0 --libcalls=none -o "$W/f.data" -- "$W/work" fn "$N")"
	T[pnone]+=" $(cpu "$SC" record -m instrument -F 0 --libcalls=none -o "$W/pn.data" -- "$W/pwork" lib "$N")"
	T[plib]+=" $(cpu "$SC" record -m instrument -F 0 -o "$W/pl.data" -- "$W/pwork" lib "$N")"
	T[pfn]+=" $(cpu "$SC" record -m instrument -F 0 --libcalls=none -o "$W/pf.data" -- "$W/pwork" fn "$N")"
	if command -v uftrace >/dev/null; then
		T[uft]+=" $(cpu uftrace record -d "$W/uft" "$W/work" lib "$N")"
		T[uftnone]+=" $(cpu uftrace record --no-libcall -d "$W/uft2" "$W/work" lib "$N")"
	fi
done
med() { printf '%s\n' $1 | sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
calls=$("$SC" report -i "$W/p.data" --format csv --top 0 | awk -F, '$1 == "labs" { print $3 }')
echo "labs rows counted: $calls of $N"
for k in plain none program fn pnone plib pfn uft uftnone; do
	[ -n "${T[$k]:-}" ] && printf '%-8s median %6.3f s CPU  (runs:%s)\n' $k "$(med "${T[$k]}")" "${T[$k]}"
done
awk -v n="$N" -v p="$(med "${T[program]}")" -v z="$(med "${T[none]}")" -v f="$(med "${T[fn]}")" \
    -v pz="$(med "${T[pnone]}")" -v pl="$(med "${T[plib]}")" -v pf="$(med "${T[pfn]}")" \
    -v u="$(med "${T[uft]:-0}")" -v un="$(med "${T[uftnone]:-0}")" 'BEGIN {
	# each against the same record without the probes in question, so that
	# the start of the recorder (calibration, set-up) cancels
	lib = (p - z) / n * 1e9; fn = (f - z) / n * 1e9
	plib = (pl - pz) / n * 1e9; pfn = (pf - pz) / n * 1e9
	printf "hooks build:   library-call row %.1f ns per call; function probes %.1f ns per call (ratio %.2f)\n", lib, fn, lib / fn
	printf "patched build: library-call row %.1f ns per call; function probes %.1f ns per call (ratio %.2f)\n", plib, pfn, plib / pfn
	if (u > 0) printf "uftrace PLT hook: %.1f ns per call (ours, hooks build / uftrace: %.2f)\n", (u - un) / n * 1e9, lib / ((u - un) / n * 1e9)
}'
