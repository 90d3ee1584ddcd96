#!/usr/bin/env bash
# The call-stack views at scale (a benchmark, not a test): `report --tree`
# and `diff` on synthetic recordings of N distinct calling contexts
# (bench/gen_contexts.c: a random recursive tree whose nodes name real
# functions of the stackclock binary), wall time and peak memory (max RSS)
# of each, best of RUNS.
#
#   bench/views.sh [N] [RUNS]        (default 1000000 contexts, 3 runs)
#
# Targets (issue 8): report --tree < 2 s and < 500 MB; diff < 4 s.
N=${1:-1000000}
RUNS=${2:-3}
. "$(dirname "$0")/contexts.sh"
gen_contexts "$TMP/a.data" "$N" 1
gen_contexts "$TMP/b.data" "$N" 2
nodes=$("$SC" report -i "$TMP/a.data" --tree --format csv --threshold 0 | tail -n +2 | wc -l)
echo "contexts: $nodes in the model (of $N generated; $(wc -l <"$TMP/offs") functions)," \
	"data file $(du -k "$TMP/a.data" | cut -f1) KB"

best "report (flat, by function)" "$SC" report -i "$TMP/a.data"
best "report --tree (table, threshold 0.5%)" "$SC" report -i "$TMP/a.data" --tree
best "report --tree --format json (every node)" "$SC" report -i "$TMP/a.data" --tree --format json
best "report --caller-callee (a mid-size function)" "$SC" report -i "$TMP/a.data" \
	--caller-callee "$("$SC" report -i "$TMP/a.data" --format csv --top 20 | tail -1 | cut -d, -f1)"
best "diff (two such files)" "$SC" diff "$TMP/a.data" "$TMP/b.data"
