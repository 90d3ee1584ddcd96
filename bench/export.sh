#!/usr/bin/env bash
# The exports at scale (a benchmark, not a test): `stackclock export` of a
# synthetic recording of N distinct calling contexts (bench/gen_contexts.c,
# as bench/views.sh uses) in every format: best wall time, its peak memory
# (max RSS) and the size of the file.
#
#   bench/export.sh [N] [RUNS]       (default 1000000 contexts, 3 runs)
#
# Target (issue 9): under 3 s for each format at 1 million nodes.
N=${1:-1000000}
RUNS=${2:-3}
. "$(dirname "$0")/contexts.sh"
gen_contexts "$TMP/a.data" "$N" 1
echo "$N contexts ($(wc -l <"$TMP/offs") functions), data file $(du -k "$TMP/a.data" | cut -f1) KB"
for f in pprof callgrind folded html; do
	best "export --format $f" "$SC" export -i "$TMP/a.data" --format $f -o "$TMP/out.$f"
	echo "    file $(du -k "$TMP/out.$f" | cut -f1) KB"
done
