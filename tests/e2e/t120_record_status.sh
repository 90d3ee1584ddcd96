#!/usr/bin/env bash
# The exit status of `stackclock record` (SPEC section 4), by sampling and
# by instrumentation: the target's own (its exit code, 128 + the signal that
# ended it), and timeout(1)'s statuses for record's own failures, each with
# one line on stderr: 125 stackclock failed (a bad option, a data file it
# cannot write), 126 the program cannot run, 127 it is not found.  A target
# that fails still leaves its data file, with its wait status in it.
. "$(dirname "$0")/lib.sh"
build rs rec_status.c -O1 -finstrument-functions || exit 1
cd "$TMP"
ulimit -c 0    # no core files (a core handler can take seconds)

# ended MODE WANT HOW [CODE]: record rs HOW CODE; status WANT; the data
# file holds the wait status and the 20 calls of work() (instrument)
ended() {
	local mode=$1 want=$2; shift 2
	local m=() d="$TMP/$mode-$*.data"
	d=${d// /_}
	[ "$mode" = instrument ] && m=(-m instrument)
	"$STACKCLOCK" record "${m[@]}" -o "$d" -- "$TMP/rs" "$@" >/dev/null 2>"$TMP/err"
	local rc=$?
	[ $rc -eq "$want" ]; ok $? "$mode, rs $*: record exits $want (got $rc)"
	# the wait status: exit code << 8, or the signal (and a core flag)
	local ws
	ws=$("$STACKCLOCK" dump -i "$d" 2>&1 | sed -n 's/.*session_end .*exit_status=\([0-9-]*\).*/\1/p')
	case "$1" in
	exit) [ "$ws" = $((${2:-0} << 8)) ] ;;
	segv) [ $((ws & 0x7f)) -eq 11 ] ;;
	abort) [ $((ws & 0x7f)) -eq 6 ] ;;
	esac
	ok $? "$mode, rs $*: the data file is written, with the wait status (${ws:-none})"
	if [ "$mode" = instrument ]; then
		local calls
		calls=$("$STACKCLOCK" report -i "$d" --format csv | awk -F, '$1 == "work" { print $3 }')
		[ "$calls" = 20 ]; ok $? "$mode, rs $*: work()'s 20 calls recorded (got ${calls:-none})"
	fi
}

# fails WANT PATTERN -- COMMAND...: status WANT, one stderr line matching PATTERN
fails() {
	local want=$1 pat=$2; shift 3
	"$@" >"$TMP/out" 2>"$TMP/err"
	local rc=$?
	[ $rc -eq "$want" ] && [ "$(wc -l <"$TMP/err")" -eq 1 ] && grep -qE -e "$pat" "$TMP/err"
	ok $? "$* exits $want with one line (got $rc: $(head -2 "$TMP/err" | tr '\n' '|'))"
}

printf 'echo hi\n' >"$TMP/not-executable"
chmod 644 "$TMP/not-executable"
for mode in sample instrument; do
	m=()
	[ $mode = instrument ] && m=(-m instrument)
	ended $mode 0 exit
	ended $mode 3 exit 3
	ended $mode 255 exit 255
	ended $mode 139 segv
	ended $mode 134 abort
	fails 127 "cannot run './no-such-program': no such program" -- \
		"$STACKCLOCK" record "${m[@]}" -o "$TMP/x.data" -- ./no-such-program
	fails 126 "cannot run '$TMP/not-executable': permission denied" -- \
		"$STACKCLOCK" record "${m[@]}" -o "$TMP/x.data" -- "$TMP/not-executable"
	fails 125 "record: unknown option '--bogus'" -- "$STACKCLOCK" record "${m[@]}" --bogus -- "$TMP/rs"
	fails 125 "cannot write the data file '$TMP/no/dir/x.data'" -- \
		"$STACKCLOCK" record "${m[@]}" -o "$TMP/no/dir/x.data" -- "$TMP/rs"
done
fails 125 "record: unknown method 'bogus'" -- "$STACKCLOCK" record -m bogus -- "$TMP/rs"
fails 125 "record: --kernel is for sampling" -- "$STACKCLOCK" record -m instrument --kernel -- "$TMP/rs"
fails 125 "record: no program given" -- "$STACKCLOCK" record
[ ! -e "$TMP/x.data" ]; ok $? "no data file is left by a program that never ran"

# Signals ignored when record starts (a script's background job, nohup)
# stay ignored in the target, as without record: instrumentation's own
# SIGINT/SIGTERM handlers once reset them to the default there.
# (only those three: the C library may take signals 32 and 33, which a
# parent may have ignored, for its threads' own use)
ign() { printf '%x' $(( 0x$(sed -n 's/^SigIgn:[[:space:]]*//p' "$1") & 0x4006 )); }
bash -c 'trap "" INT TERM QUIT; exec grep "^SigIgn" /proc/self/status' >"$TMP/ign.plain"
for mode in sample instrument; do
	bash -c 'trap "" INT TERM QUIT; exec "$@"' _ "$STACKCLOCK" record -m $mode -o "$TMP/ign.data" -- \
		grep "^SigIgn" /proc/self/status >"$TMP/ign.$mode" 2>/dev/null
	check "$mode: SIGINT, SIGTERM and SIGQUIT ignored at the start stay ignored in the target (SigIgn $(ign "$TMP/ign.$mode"), plain $(ign "$TMP/ign.plain"))" -- \
		test "$(ign "$TMP/ign.plain")" = 4006 -a "$(ign "$TMP/ign.$mode")" = 4006
done
