# Sourced by the benchmarks of large profiles (views.sh, export.sh): builds
# bench/gen_contexts.c against the library and sets O, SC and TMP (removed
# at exit).  gen_contexts OUT N SEED writes a recording of N distinct
# calling contexts naming real functions of the stackclock binary.
set -eu
cd "$(dirname "$0")/.."
O=${O:-build}
SC=${STACKCLOCK:-$PWD/$O/stackclock}
TMP=$(mktemp -d /tmp/sc-bench.XXXXXX)
trap 'rm -rf "$TMP"' EXIT

cc -O2 -Isrc -D_GNU_SOURCE -o "$TMP/gen" bench/gen_contexts.c "$O/libcore.a" \
	-ldw -lelf -ldebuginfod -llzma -lprotobuf-c -lzstd -lz -lstdc++ -lpthread -lm
nm --defined-only "$SC" | awk '$2 ~ /^[Tt]$/ { print $1 }' | sort -u >"$TMP/offs"
gen_contexts() { "$TMP/gen" "$1" "$2" "$3" "$SC" <"$TMP/offs"; }

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
