#!/usr/bin/env bash
# Sampling code in the vdso: a loop of clock_gettime spends most of its
# time in the kernel's vdso image, which is no file.  The report names its
# functions from the report's own vdso (same kernel, same build-id), and
# the stacks go through it to the root.
. "$(dirname "$0")/lib.sh"
. "$E2E_DIR/smp_lib.sh"

cat >"$TMP/vdso_loop.c" <<'C'
#include <stdlib.h>
#include <time.h>

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 5000000;
	unsigned long sum = 0;
	struct timespec ts;

	for (long i = 0; i < n; i++) {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		sum += (unsigned long)ts.tv_nsec;
	}
	return sum == 1;
}
C
cc -O2 -g -o "$TMP/vdso_loop" "$TMP/vdso_loop.c" || exit 1

check "record a clock_gettime loop" -- "$STACKCLOCK" record -F 999 -o "$TMP/v.data" -- "$TMP/vdso_loop" 10000000
"$STACKCLOCK" report -i "$TMP/v.data" --format json >"$TMP/v.json" 2>"$TMP/v.err"
ok $? "report"
invariants "$TMP/v.json"
# Rows of the vdso, by name: every one named, clock_gettime among them.
check "every [vdso] row has a function name, none a raw address" -- \
	q "$TMP/v.json" "exit(0 if [x for x in rows if x['module'] == '[vdso]'] and all(not x['function'].startswith('0x') for x in rows if x['module'] == '[vdso]') else 1)"
share=$(q "$TMP/v.json" "'%.1f' % sum(x['exclusive_pct'] for x in rows if x['module'] == '[vdso]' and 'clock_gettime' in x['function'])")
atleast "$share" 30; ok $? "$share% of samples exclusive in the vdso's clock_gettime (>= 30%)"
sc_stacks "$TMP/v.data" >"$TMP/v.folded"
root=$(awk '{ n += $4; if ($1 == "root") r += $4 } END { printf "%.1f", n ? 100 * r / n : 0 }' "$TMP/v.folded")
atleast "$root" 95; ok $? "$root% of stacks reach the root through the vdso (>= 95%)"
! grep -q "vdso" "$TMP/v.err"; ok $? "no warning about the vdso"
