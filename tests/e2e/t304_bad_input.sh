#!/usr/bin/env bash
# Bad input: one line naming the problem, non-zero status, never a crash.
. "$(dirname "$0")/lib.sh"
help_ok() {	# help_ok MESSAGE -- COMMAND...: usage on stdout, nothing on stderr, status 0
	local msg=$1; shift 2
	"$@" >"$TMP/out" 2>"$TMP/err"
	local rc=$?
	[ $rc -eq 0 ] && [ ! -s "$TMP/err" ] && grep -q '^usage: stackclock' "$TMP/out"
	ok $? "$msg"
}
cd "$TMP"
one_line_fail "no command at all" "no command given.*--help" -- "$STACKCLOCK"
one_line_fail "unknown command" "unknown command" -- "$STACKCLOCK" frobnicate
help_ok "stackclock --help" -- "$STACKCLOCK" --help
help_ok "stackclock record --help" -- "$STACKCLOCK" record --help
help_ok "stackclock report --help" -- "$STACKCLOCK" report --help
help_ok "stackclock dump --help" -- "$STACKCLOCK" dump --help
one_line_fail "record without a program" "no program given" -- "$STACKCLOCK" record
one_line_fail "record -- without a program" "no program given" -- "$STACKCLOCK" record --
one_line_fail "record option without its value" "'-m' needs a value" -- "$STACKCLOCK" record -m
one_line_fail "record long option without its value" "'--duration' needs a value" -- "$STACKCLOCK" record --duration
for d in abc nan -1 0 1e400 ''; do
	one_line_fail "bad --duration '$d'" "invalid --duration" -- "$STACKCLOCK" record --duration "$d" -- true
done
one_line_fail "bad -p" "invalid PID" -- "$STACKCLOCK" record -p 12abc
one_line_fail "--kernel with -m instrument" "--kernel is for sampling" -- "$STACKCLOCK" record -m instrument --kernel -- true
one_line_fail "-F 0 with sampling" "-F 0 turns off" -- "$STACKCLOCK" record -F 0 -- true
one_line_fail "--os-events with sampling" "os-events is for" -- "$STACKCLOCK" record --os-events=none -- true
# An unwritable data file is refused before the target runs (no run lost).
one_line_fail "record -o into a missing directory" "/nonexistent/dir/x.data.*-o" -- \
	"$STACKCLOCK" record -o /nonexistent/dir/x.data -- touch "$TMP/ran"
[ ! -e "$TMP/ran" ]; ok $? "  ... and the target did not run"
one_line_fail "record -o a directory" "cannot write" -- "$STACKCLOCK" record -o "$TMP" -- true
one_line_fail "a program that is not executable" "permission denied|executable" -- \
	"$STACKCLOCK" record -m instrument -- /etc/passwd
one_line_fail "dump of an empty file" "/dev/null: empty file" -- "$STACKCLOCK" dump -i /dev/null
one_line_fail "dump of a directory" "is a directory.*-i FILE" -- "$STACKCLOCK" dump -i "$TMP"
one_line_fail "report of a directory" "is a directory" -- "$STACKCLOCK" report -i "$TMP"
one_line_fail "dump option without its value" "'-i' needs a value" -- "$STACKCLOCK" dump -i
one_line_fail "dump with a stray argument" "unexpected argument" -- "$STACKCLOCK" dump extra
one_line_fail "dump -i ''" "needs a file name" -- "$STACKCLOCK" dump -i ''
one_line_fail "a directory as the program" "is a directory" -- "$STACKCLOCK" record -- "$TMP"
one_line_fail "a directory as the program (instrument)" "is a directory" -- "$STACKCLOCK" record -m instrument -- "$TMP"
one_line_fail "unknown record option" "unknown option" -- "$STACKCLOCK" record --bogus -- true
one_line_fail "unknown report option" "unknown option|unrecognized" -- "$STACKCLOCK" report --bogus
one_line_fail "missing program" "no such program" -- "$STACKCLOCK" record -m instrument -- ./does-not-exist
one_line_fail "missing program (sampling)" "no such program" -- "$STACKCLOCK" record -- ./does-not-exist
printf 'int main(void){return 0;}\n' >plain.c && cc -o plain plain.c
# built without hooks is patched at run time (t701); another architecture cannot be
python3 -c 'import sys; b = bytearray(open("plain", "rb").read()); b[18:20] = (183).to_bytes(2, "little"); open("plain.arm", "wb").write(b)'
chmod +x plain.arm
one_line_fail "uninstrumented binary of another architecture: suggests sampling" "x86-64.*sampling" -- "$STACKCLOCK" record -m instrument -- ./plain.arm
one_line_fail "report without a data file" "stackclock.data" -- "$STACKCLOCK" report
head -c 4096 /dev/urandom >garbage.data
one_line_fail "report of a file that is not a data file" "garbage.data" -- "$STACKCLOCK" report -i garbage.data
one_line_fail "unknown --by" "by" -- "$STACKCLOCK" report --by nonsense
one_line_fail "bad --top" "top" -- "$STACKCLOCK" report --top -3
one_line_fail "bad -F" "frequency" -- "$STACKCLOCK" record -F -5 -- true
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
