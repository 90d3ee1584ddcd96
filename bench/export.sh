#!/usr/bin/env bash
# The exports at scale (a benchmark, not a test): `stackclock export` of a
# synthetic recording of N distinct calling contexts (bench/gen_contexts.c,
# as bench/views.sh uses) in every format: best wall time, its peak memory
# (max RSS) and the size of the file.
#
#   bench/export.sh [N] [RUNS]       (default 1000000 contexts, 3 runs)
#
# Target (issue 9): under 3 s for each format at 1 million nodes.
set -eu
cd "$(dirname "$0")/.."
O=${O:-build}
N=${1:-1000000}
RUNS=${2:-3}
SC=${STACKCLOCK:-$PWD/$O/stackclock}
TMP=$(mktemp -d /tmp/sc-bench-export.XXXXXX)
trap 'rm -rf "$TMP"' EXIT

cc -O2 -Isrc -D_GNU_SOURCE -o "$TMP/gen" bench/gen_contexts.c "$O/libcore.a" \
	-ldw -lelf -ldebuginfod -llzma -lprotobuf-c -lzstd -lz -lstdc++ -lpthread -lm
nm --defined-only "$SC" | awk '$2 ~ /^[Tt]$/ { print $1 }' | sort -u >"$TMP/offs"
"$TMP/gen" "$TMP/a.data" "$N" 1 "$SC" <"$TMP/offs"
echo "$N contexts ($(wc -l <"$TMP/offs") functions), data file $(du -k "$TMP/a.data" | cut -f1) KB"
for f in pprof callgrind folded html; do
	bt="" bm=""
	for _ in $(seq "$RUNS"); do
		/usr/bin/time -f "%e %M" -o "$TMP/t" "$SC" export -i "$TMP/a.data" --format $f -o "$TMP/out.$f"
		read -r t m <"$TMP/t"
		if [ -z "$bt" ] || awk -v a="$t" -v b="$bt" 'BEGIN { exit !(a < b) }'; then
			bt=$t bm=$m
		fi
	done
	printf 'export --format %-10s %6.2f s %6.0f MB RSS %8.1f MB file\n' "$f" "$bt" \
		"$(awk -v k="$bm" 'BEGIN { print k / 1024 }')" \
		"$(awk -v b="$(stat -c %s "$TMP/out.$f")" 'BEGIN { print b / 1048576 }')"
done
