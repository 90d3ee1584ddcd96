#!/usr/bin/env bash
# Bad input: one line naming the problem, non-zero status, never a crash.
. "$(dirname "$0")/lib.sh"
one_line_fail() {	# one_line_fail MESSAGE PATTERN -- COMMAND...
	local msg=$1 pat=$2; shift 3
	"$@" >"$TMP/out" 2>"$TMP/err"
	local rc=$?
	local lines
	lines=$(wc -l <"$TMP/err")
	if [ $rc -ne 0 ] && [ $rc -lt 128 ] && [ "$lines" -eq 1 ] && grep -qiE "$pat" "$TMP/err"; then
		ok 0 "$msg"
	else
		ok 1 "$msg"
		echo "#   status $rc, stderr: $(head -3 "$TMP/err")"
	fi
}
cd "$TMP"
one_line_fail "unknown command" "unknown command" -- "$STACKCLOCK" frobnicate
one_line_fail "unknown record option" "unknown option" -- "$STACKCLOCK" record --bogus -- true
one_line_fail "unknown report option" "unknown option|unrecognized" -- "$STACKCLOCK" report --bogus
one_line_fail "missing program" "no such program" -- "$STACKCLOCK" record -m instrument -- ./does-not-exist
one_line_fail "missing program (sampling)" "no such program" -- "$STACKCLOCK" record -- ./does-not-exist
printf 'int main(void){return 0;}\n' >plain.c && cc -o plain plain.c
one_line_fail "uninstrumented binary says to rebuild" "finstrument-functions" -- "$STACKCLOCK" record -m instrument -- ./plain
one_line_fail "report without a data file" "stackclock.data" -- "$STACKCLOCK" report
head -c 4096 /dev/urandom >garbage.data
one_line_fail "report of a file that is not a data file" "garbage.data" -- "$STACKCLOCK" report -i garbage.data
one_line_fail "unknown --by" "by" -- "$STACKCLOCK" report --by nonsense
one_line_fail "bad --top" "top" -- "$STACKCLOCK" report --top -3
one_line_fail "bad -F" "frequency" -- "$STACKCLOCK" record -F 0 -- true
one_line_fail "bad --os-events" "os" -- "$STACKCLOCK" record -m instrument --os-events=bogus -- true

# A truncated file is read up to the damage, with a warning, never a crash.
build e2e_threads e2e_threads.c -O1 -pthread -finstrument-functions || exit 1
"$STACKCLOCK" record -m instrument -o full.data -- "$TMP/e2e_threads" 2 1000 2>/dev/null
size=$(stat -c %s full.data)
crashed=0
for cut in 10 24 40 100 $((size / 2)) $((size - 1)); do
	head -c "$cut" full.data >cut.data
	"$STACKCLOCK" report -i cut.data >/dev/null 2>"$TMP/err"
	rc=$?
	[ $rc -ge 128 ] && crashed=1
done
ok $crashed "truncated files never crash report"
head -c $((size - 1)) full.data >cut.data
"$STACKCLOCK" report -i cut.data >/dev/null 2>"$TMP/err"
check "a truncated file gets a warning naming the damage" -- grep -qiE 'damag|truncat' "$TMP/err"

one_line_fail "attach to a PID that does not exist" "no process|PID" -- "$STACKCLOCK" record -p 4194000 --duration 1
