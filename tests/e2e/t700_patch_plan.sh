#!/usr/bin/env bash
# Function discovery for run-time patching, through `stackclock dump
# --patch-plan` (docs/patching.md): functions reached only through their
# address are found in position-independent and position-dependent builds
# with gcc and clang; compiler-made patch sites (-fpatchable-function-entry,
# -mfentry's call __fentry__ direct, through the GOT or a .plt.sec stub,
# -mnop-mcount) are used; the counts per reason add up; Debian's gzip and
# python3 have at least 90% of their function entries patched (their
# coverage is printed); a file that is not ELF gets one line naming it.
. "$(dirname "$0")/lib.sh"

plan() { "$STACKCLOCK" dump --patch-plan "$@"; }

# decision FILE NAME: the reason discovery gave the function NAME
decision() { plan "$1" --functions | awk -v n="$2" '$NF == n { print $3 }'; }

for cc in gcc clang; do
	for pie in -pie -no-pie; do
		exe=prog-$cc$pie
		if ! $cc -O2 -g $pie -fno-inline -o "$TMP/$exe" "$PROGS/patch_prog.c"; then
			ok 1 "$cc $pie: build patch_prog"
			continue
		fi
		for f in cmp_ints handler_double handler_square main; do
			got=$(decision "$TMP/$exe" $f)
			[ "$got" = patched ]
			ok $? "$cc $pie: $f patched (got '${got:-no candidate}')"
		done
		flags=$(plan "$TMP/$exe" --functions | awk '$NF == "cmp_ints"')
		case "$flags" in *addr_taken*) ok 0 "$cc $pie: cmp_ints is an address taken" ;;
		*) ok 1 "$cc $pie: cmp_ints is an address taken: $flags" ;; esac
		check "$cc $pie: the program still runs" -- "$TMP/$exe"
	done
done

# Compiler-made patch sites: nothing displaced (docs/patching.md).
site() {	# site NAME CC FLAGS...: the site kind of cmp_ints in that build
	local name=$1 cc=$2; shift 2
	$cc -O2 "$@" -o "$TMP/$name" "$PROGS/patch_prog.c" 2>/dev/null || { echo "no-build"; return; }
	plan "$TMP/$name" --functions | awk '$NF == "cmp_ints" { print $3, $4 }'
}
while read -r want cc flags; do
	got=$(site "s$_n" "$cc" $flags)
	case "$got" in "patched $want") ok 0 "$cc $flags: $want site" ;;
	*) ok 1 "$cc $flags: $want site (got '$got')" ;; esac
done <<'SITES'
nops+0 gcc -fpatchable-function-entry=5
hook_call+0 gcc -pg -mfentry
nops+0 gcc -pg -mfentry -mnop-mcount -fno-pie -no-pie
nops+0 clang -fpatchable-function-entry=5
hook_call+0 clang -pg -mfentry
hook_call+4 clang -pg -mfentry -fcf-protection -Wl,-z,ibtplt
SITES

# stripped: the address-taken functions are found without their names
strip -o "$TMP/stripped" "$TMP/prog-gcc-no-pie"
n_full=$(plan "$TMP/prog-gcc-no-pie" | sed -n '1s/.* \([0-9]*\) patched.*/\1/p')
n_strip=$(plan "$TMP/stripped" | sed -n '1s/.* \([0-9]*\) patched.*/\1/p')
[ -n "$n_strip" ] && [ "$n_strip" = "$n_full" ]
ok $? "stripped: as many functions patched as with symbols ($n_strip, $n_full)"

for bin in /usr/bin/gzip /usr/bin/python3.11; do
	[ -r "$bin" ] || { echo "# $bin: not here"; continue; }
	out=$(plan "$bin")
	printf '%s\n' "$out" | sed 's/^/# /'
	python3 - "$out" <<'PY'
import re, sys
lines = sys.argv[1].splitlines()
cand, patched = map(int, re.search(r'(\d+) candidates, (\d+) patched', lines[0]).groups())
reasons = dict((k, int(v)) for k, v in re.findall(r'(\w+) (\d+)', lines[2].split(':', 1)[1]))
total = patched + sum(reasons.values())
entries = cand - sum(reasons.get(k, 0) for k in ('jump_only', 'unreferenced', 'plt_stub'))
print(("ok" if total == cand else "not ok") + " - every candidate counted once (%d of %d)" % (total, cand))
print(("ok" if patched >= 0.9 * entries else "not ok") +
      " - at least 90%% of the function entries patched (%d of %d)" % (patched, entries))
PY
done

err=$(plan /etc/passwd 2>&1 >/dev/null)
rc=$?
[ $rc -eq 1 ] && [ "$(printf '%s\n' "$err" | wc -l)" -eq 1 ] && case "$err" in */etc/passwd*sampling*|*/etc/passwd*x86-64*) true ;; *) false ;; esac
ok $? "not ELF: one line naming the file and what to do ($err)"
