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
# Rows of the vdso: every one named, by its symbol or, for the local
# functions the vdso exports no symbol for (the kvm-clock reader on this
# kind of VM), by the start of its CFI range in the image (docs/values.md, "Code without symbols").
check "every [vdso] row has a function name, none a raw address" -- \
	q "$TMP/v.json" "exit(0 if [x for x in rows if x['module'] == '[vdso]'] and all(not x['function'].startswith('0x') for x in rows if x['module'] == '[vdso]') else 1)"
cat >"$TMP/dump_vdso.c" <<'C'
#include <elf.h>
#include <stdio.h>
#include <sys/auxv.h>

int main(void)		/* write this process's vdso image to stdout */
{
	const Elf64_Ehdr *e = (const Elf64_Ehdr *)getauxval(AT_SYSINFO_EHDR);

	return !e || fwrite(e, 1, e->e_shoff + (size_t)e->e_shnum * e->e_shentsize,
			    stdout) == 0;
}
C
cc -O2 -o "$TMP/dump_vdso" "$TMP/dump_vdso.c" && "$TMP/dump_vdso" >"$TMP/vdso.so" || exit 1
readelf --debug-dump=frames "$TMP/vdso.so" 2>/dev/null |
	sed -n 's/.* FDE .*pc=0*\([0-9a-f]*\)\.\..*/\1/p' >"$TMP/fde_starts"
check "unnamed vdso rows are [vdso]+0xSTART of one of its $(wc -l <"$TMP/fde_starts") FDEs" -- \
	q "$TMP/v.json" "exit([x['function'] for x in rows if x['module'] == '[vdso]' and x['function'].startswith('[vdso]+') and int(x['function'][7:], 16) not in set(int(l, 16) for l in open('$TMP/fde_starts'))] or 0)"
share=$(q "$TMP/v.json" "'%.1f' % sum(x['exclusive_pct'] for x in rows if x['module'] == '[vdso]')")
atleast "$share" 30; ok $? "$share% of samples exclusive in the vdso's functions (>= 30%)"
share=$(q "$TMP/v.json" "'%.1f' % max([x['inclusive_pct'] for x in rows if x['module'] == '[vdso]' and 'clock_gettime' in x['function']] or [0])")
atleast "$share" 30; ok $? "$share% of samples inclusive in the vdso's clock_gettime (>= 30%)"

# The kernel's unstripped vdso, when installed, names its local functions.
# Made here: the same image with a .symtab naming every FDE start.
text=$(readelf -SW "$TMP/vdso.so" | sed -n 's/.* \.text *PROGBITS *0*\([0-9a-f]*\) .*/\1/p')
syms=$(for s in $(cat "$TMP/fde_starts"); do
	printf ' --add-symbol vdso_fn_%s=.text:0x%x,function,local' "$s" $((0x$s - 0x$text)); done)
mkdir -p "$TMP/vdsodir"
# shellcheck disable=SC2086
objcopy $syms "$TMP/vdso.so" "$TMP/vdsodir/vdso64.so" || exit 1
STACKCLOCK_VDSO_DIR=$TMP/vdsodir "$STACKCLOCK" report -i "$TMP/v.data" --format json >"$TMP/vd.json"
ok $? "report with the kernel's vdso image"
invariants "$TMP/vd.json"
check "with the vdso image: no row named by an offset, its names used" -- \
	q "$TMP/vd.json" "exit(0 if [x for x in rows if x['module'] == '[vdso]'] and all(x['function'].startswith('vdso_fn_') for x in rows if x['module'] == '[vdso]') else [x['function'] for x in rows if x['module'] == '[vdso]'])"
check "with the vdso image: the same samples in the vdso" -- \
	q "$TMP/vd.json" "exit(0 if sum(x['exclusive_samples'] for x in rows if x['module'] == '[vdso]') == $(q "$TMP/v.json" "sum(x['exclusive_samples'] for x in rows if x['module'] == '[vdso]')") else 1)"
# An image that is not this kernel's (here: one byte of its build-id
# changed) is not used: the offsets stay.
bid=$(readelf -n "$TMP/vdso.so" | sed -n 's/.*Build ID: *//p')
python3 -c "import sys; p = sys.argv[1]; d = bytearray(open(p, 'rb').read()); i = d.find(bytes.fromhex(sys.argv[2])); assert i > 0; d[i] ^= 1; open(p, 'wb').write(d)" \
	"$TMP/vdsodir/vdso64.so" "$bid" || exit 1
STACKCLOCK_VDSO_DIR=$TMP/vdsodir "$STACKCLOCK" report -i "$TMP/v.data" --format json >"$TMP/vx.json"
check "a vdso image of another build: ignored" -- \
	q "$TMP/vx.json" "exit(0 if not [x for x in rows if x['function'].startswith('vdso_fn_')] else 1)"
sc_stacks "$TMP/v.data" >"$TMP/v.folded"
root=$(awk '{ n += $4; if ($1 == "root") r += $4 } END { printf "%.1f", n ? 100 * r / n : 0 }' "$TMP/v.folded")
atleast "$root" 95; ok $? "$root% of stacks reach the root through the vdso (>= 95%)"
! grep -q "vdso" "$TMP/v.err"; ok $? "no warning about the vdso"
