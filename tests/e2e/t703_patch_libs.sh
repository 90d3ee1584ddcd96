#!/usr/bin/env bash
# san: skip
# `record -m instrument --patch LIST` (SPEC section 10): a library the
# program is linked with (by name) and one it dlopens later (by path) are
# patched, before the program calls them, with exact counts (the dlopen'ed
# one again after dlclose and a new dlopen); the same with
# a program built with hooks (its own functions through the hooks); `--patch
# all` takes the libraries loaded at start and, planned when it is
# loaded, the one dlopen'ed later; the C library, which the
# runtime itself calls, and a library that is nowhere are refused in one
# line; --patch without -m instrument is refused.
. "$(dirname "$0")/lib.sh"
export STACKCLOCK_CACHE_DIR=$TMP/cache
cd "$TMP" || exit 1
build_patch_dl || exit 1

counts() {	# counts JSON WANT: calls of main, a_work, a_leaf, b_work, b_leaf
	q "$1" "exit(0 if [row(f)['calls'] if any(x['function'] == f for x in rows) else 0 for f in ('main', 'a_work', 'a_leaf', 'b_work', 'b_leaf')] == [$2] else 1)"
}

./patch_dl 100 "$TMP/libpdlb.so" >plain.out
for exe in patch_dl patch_dl_hooks; do
	check "$exe: record --patch libpdla,$TMP/libpdlb.so" -- \
		"$STACKCLOCK" record -m instrument --patch "libpdla,$TMP/libpdlb.so" -o l.data -- ./$exe 100 "$TMP/libpdlb.so"
	"$STACKCLOCK" record -m instrument --patch "libpdla,$TMP/libpdlb.so" -o l.data -- ./$exe 100 "$TMP/libpdlb.so" >rec.out 2>/dev/null
	cmp -s plain.out rec.out
	ok $? "$exe: same output"
	report_json l.data l.json
	counts l.json "1, 100, 1000, 100, 1000"
	ok $? "$exe: main 1, a_work 100, a_leaf 1000, b_work (dlopen'ed) 100, b_leaf 1000 ($(q l.json "[(x['function'], x['calls']) for x in rows]"))"
done

check "record, the dlopen'ed library closed and opened again" -- \
	"$STACKCLOCK" record -m instrument --patch "$TMP/libpdlb.so" -o r.data -- ./patch_dl 100 "$TMP/libpdlb.so" reload
report_json r.data r.json
# (the second load's functions may lack names: the runtime records a module
# once per base and path, so the same library loaded again at the same
# address has no module of its own; hooks built in fare the same)
# (library calls, SPEC section 11, left out: the C library's, and patch_dl's
# calls of a_work in libpdla.so, linked and not patched)
q r.json "exit(0 if sum(x['calls'] for x in rows if not x['module'].endswith(('/libc.so.6', '/libpdla.so'))) == 1 + 200 + 2000 and row('b_work')['calls'] >= 100 else 1)"
ok $? "reloaded: patched again, main 1 + b_work 200 + b_leaf 2000 calls in all ($(q r.json "[(x['function'], x['calls']) for x in rows]"))"

check "--patch all" -- "$STACKCLOCK" record -m instrument --patch all -o a.data -- ./patch_dl 100 "$TMP/libpdlb.so"
report_json a.data a.json
counts a.json "1, 100, 1000, 100, 1000"
ok $? "--patch all: the libraries loaded at start (a_*) and the one dlopen'ed later by path (b_*, planned when loaded) ($(q a.json "[(x['function'], x['calls']) for x in rows]"))"

one_line() {	# one_line MESSAGE PATTERN -- COMMAND...: fails with one line matching PATTERN
	local msg=$1 pat=$2; shift 3
	local err rc
	err=$("$@" 2>&1 >/dev/null)
	rc=$?
	[ $rc -ne 0 ] && [ "$(printf '%s\n' "$err" | wc -l)" -eq 1 ] && printf '%s\n' "$err" | grep -qE "$pat"
	ok $? "$msg ($err)"
}
one_line "--patch libc: refused, the runtime calls it" "libc.*runtime" -- \
	"$STACKCLOCK" record -m instrument --patch libc -o x.data -- ./patch_dl 1 "$TMP/libpdlb.so"
one_line "--patch of a library that is nowhere" "libnothere.*path" -- \
	"$STACKCLOCK" record -m instrument --patch libnothere -o x.data -- ./patch_dl 1 "$TMP/libpdlb.so"
one_line "--patch without -m instrument" "instrument" -- \
	"$STACKCLOCK" record --patch libpdla -o x.data -- ./patch_dl 1 "$TMP/libpdlb.so"
