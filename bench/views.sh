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
set -eu
cd "$(dirname "$0")/.."
O=${O:-build}
N=${1:-1000000}
RUNS=${2:-3}
SC=${STACKCLOCK:-$PWD/$O/stackclock}
TMP=$(mktemp -d /tmp/sc-bench-views.XXXXXX)
trap 'rm -rf "$TMP"' EXIT

cc -O2 -Isrc -D_GNU_SOURCE -o "$TMP/gen" bench/gen_contexts.c "$O/libcore.a" \
	-ldw -lelf -ldebuginfod -llzma -lzstd -lz -lstdc++ -lpthread -lm
nm --defined-only "$SC" | awk '$2 ~ /^[Tt]$/ { print $1 }' | sort -u >"$TMP/offs"
"$TMP/gen" "$TMP/a.data" "$N" 1 "$SC" <"$TMP/offs"
"$TMP/gen" "$TMP/b.data" "$N" 2 "$SC" <"$TMP/offs"
nodes=$("$SC" report -i "$TMP/a.data" --tree --format csv --threshold 0 | tail -n +2 | wc -l)
echo "contexts: $nodes in the model (of $N generated; $(wc -l <"$TMP/offs") functions)," \
	"data file $(du -k "$TMP/a.data" | cut -f1) KB"

# best NAME COMMAND...: best wall time and its max RSS over RUNS runs
best() {
	local name=$1; shift
	local bt="" bm=""
	for _ in $(seq "$RUNS"); do
		/usr/bin/time -f "%e %M" -o "$TMP/t" "$@" >/dev/null
		read -r t m <"$TMP/t"
		if [ -z "$bt" ] || awk -v a="$t" -v b="$bt" 'BEGIN { exit !(a < b) }'; then
			bt=$t bm=$m
		fi
	done
	printf '%-44s %6.2f s %7.0f MB\n' "$name" "$bt" "$(awk -v k="$bm" 'BEGIN { print k / 1024 }')"
}
best "report (flat, by function)" "$SC" report -i "$TMP/a.data"
best "report --tree (table, threshold 0.5%)" "$SC" report -i "$TMP/a.data" --tree
best "report --tree --format json (every node)" "$SC" report -i "$TMP/a.data" --tree --format json
best "report --caller-callee (a mid-size function)" "$SC" report -i "$TMP/a.data" \
	--caller-callee "$("$SC" report -i "$TMP/a.data" --format csv --top 20 | tail -1 | cut -d, -f1)"
best "diff (two such files)" "$SC" diff "$TMP/a.data" "$TMP/b.data"
