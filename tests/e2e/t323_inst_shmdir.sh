#!/usr/bin/env bash
# The runtime's shared-memory directory (STACKCLOCK_SHM_DIR, else
# /dev/shm) missing, read-only or full (issue 30, item 5): the recorder
# checks it before the run (a file of 1 MiB committed with fallocate, as
# the runtime commits its memory) and records in a private directory under
# $XDG_RUNTIME_DIR or /tmp instead, naming it in one line; with no
# directory usable it stops before the program runs, with one line and
# status 125.  Before: 0 calls and "was it built with
# -finstrument-functions?" for a missing or read-only directory, 21 of 202
# calls for a full 64 KiB one.  A directory that fills while the program
# runs: the loss counted exactly and the directory named.
. "$(dirname "$0")/lib.sh"
if [ "$(id -u)" != 0 ] || ! command -v unshare >/dev/null; then
	echo "ok 1 # SKIP mounting small file systems needs root and unshare"
	exit 0
fi
build s200 e2e_sandbox200.c -O1 -finstrument-functions || exit 1
build fill e2e_shmfill.c -O1 -finstrument-functions || exit 1
mkdir -p "$TMP/full" "$TMP/ro" "$TMP/grow"
mount -t tmpfs -o size=64k tmpfs "$TMP/full" && mount -t tmpfs -o ro,size=1m tmpfs "$TMP/ro" &&
	mount -t tmpfs -o size=2m tmpfs "$TMP/grow" || exit 1
trap 'umount "$TMP/full" "$TMP/ro" "$TMP/grow"; rm -rf "$TMP"' EXIT
fsum="sum(x['calls'] for x in rows if x['function'][0] == 'f' and x['function'][1:].isdigit())"

# fell_back NAME DIR ERROR: the run recorded in a private directory of /tmp,
# said so in one line, removed it after; every call counted
fell_back() {
	local name=$1 dir=$2 err=$3 fb
	check "$name: the program ran (status $(cat "$TMP/rc"), '$(cat "$TMP/$name.out")')" -- \
		sh -c "[ $(cat "$TMP/rc") = 0 ] && [ \"\$(cat '$TMP/$name.out')\" = ok ]"
	fb=$(grep -o "recording with /tmp/stackclock-shm-[0-9]*-[A-Za-z0-9]* instead" "$TMP/$name.err" | awk '{ print $3 }')
	check "$name: one line names the directory, what is wrong with it, and where the recording went ($fb)" -- \
		sh -c "[ \$(grep -c . '$TMP/$name.err') = 2 ] && grep -qx \"stackclock: warning: $dir cannot hold the runtime's shared memory ($err): recording with $fb instead\" '$TMP/$name.err'"
	check "$name: the private directory is gone after the run" -- test -n "$fb" -a ! -e "$fb"
	report_json "$TMP/$name.data" "$TMP/$name.json"
	check "$name: the 200 functions once each, main once, nothing lost ($(q "$TMP/$name.json" "$fsum"))" -- \
		q "$TMP/$name.json" "exit(0 if $fsum == 200 and max(x['calls'] for x in rows if x['function'][0] == 'f' and x['function'][1:].isdigit()) == 1 and row('main')['calls'] == 1 and s['lost_events'] == 0 else 1)"
}

export -n XDG_RUNTIME_DIR
unset XDG_RUNTIME_DIR
# a recorder killed while it records in its private directory leaves it;
# the next recorder that falls back removes it (its recorder is gone)
STACKCLOCK_SHM_DIR=$TMP/full "$STACKCLOCK" record -m instrument -o "$TMP/k.data" -- sleep 3 2>"$TMP/k.err" &
kp=$! kdir=""
for i in $(seq 1 100); do
	kdir=$(grep -o "recording with /tmp/stackclock-shm-[0-9]*-[A-Za-z0-9]* instead" "$TMP/k.err" | awk '{ print $3 }')
	[ -n "$kdir" ] && break
	sleep 0.05
done
kill -KILL $kp; wait $kp 2>/dev/null
ok $([ -n "$kdir" ] && [ -d "$kdir" ]; echo $?) "a killed recorder leaves its private directory (${kdir:-none})"
STACKCLOCK_SHM_DIR=$TMP/missing rec "$TMP/missing.data" "$TMP/missing.out" "$TMP/missing.err" "$TMP/s200"
fell_back missing "$TMP/missing" "No such file or directory"
ok $([ -n "$kdir" ] && [ ! -e "$kdir" ]; echo $?) "the next recorder that fell back removed it"
STACKCLOCK_SHM_DIR=$TMP/ro rec "$TMP/ro.data" "$TMP/ro.out" "$TMP/ro.err" "$TMP/s200"
fell_back ro "$TMP/ro" "Read-only file system"
STACKCLOCK_SHM_DIR=$TMP/full rec "$TMP/full.data" "$TMP/full.out" "$TMP/full.err" "$TMP/s200"
fell_back full "$TMP/full" "No space left on device"

# /dev/shm itself full, in a mount namespace of the test's own (the
# machine's /dev/shm is never touched)
unshare -m sh -c "mount -t tmpfs -o size=64k tmpfs /dev/shm &&
	'$STACKCLOCK' record -m instrument -o '$TMP/shm.data' -- '$TMP/s200' >'$TMP/shm.out' 2>'$TMP/shm.err'
	echo \$? >'$TMP/rc'"
fell_back shm /dev/shm "No space left on device"

# nothing usable: /dev/shm full, $XDG_RUNTIME_DIR missing, /tmp read-only
# (what the run prints goes to files opened before)
unshare -m sh -c "mount -t tmpfs -o size=64k tmpfs /dev/shm && mount --bind /tmp /tmp &&
	mount -o remount,bind,ro /tmp &&
	XDG_RUNTIME_DIR=/nonexistent '$STACKCLOCK' record -m instrument -o /dev/shm/none.data -- '$TMP/s200' >&3 2>&4
	echo \$? >&5" 3>"$TMP/none.out" 4>"$TMP/none.err" 5>"$TMP/rc"
check "nothing usable: status 125, the program not run, one line saying what failed where (status $(cat "$TMP/rc"): $(head -2 "$TMP/none.err"))" -- \
	sh -c "[ $(cat "$TMP/rc") = 125 ] && [ ! -s '$TMP/none.out' ] && [ \$(grep -c . '$TMP/none.err') = 1 ] &&
		grep -qx \"stackclock: no directory can hold the runtime's shared memory (/dev/shm: No space left on device; /nonexistent: No such file or directory; /tmp: Read-only file system): free 1024 KiB in one, or set STACKCLOCK_SHM_DIR to a writable tmpfs\" '$TMP/none.err'"

# usable at the start, full while the program runs (it fills the
# directory itself, then makes 100,000 new calling contexts): what did not
# fit is counted, and the user told which directory filled up
# only deep's events (no library-call rows): the sum below is exact
STACKCLOCK_SHM_DIR=$TMP/grow REC_OPTS=--libcalls=none rec "$TMP/grow.data" "$TMP/grow.out" "$TMP/grow.err" "$TMP/fill" grow "$TMP/grow"
check "grow: the program ran (status $(cat "$TMP/rc"))" -- sh -c "[ $(cat "$TMP/rc") = 0 ] && [ \"\$(cat '$TMP/grow.out')\" = ok ]"
report_json "$TMP/grow.data" "$TMP/grow.json"
lost=$(q "$TMP/grow.json" "s['lost_events']")
check "grow: deep's calls counted + calls lost = 100,010 ($(q "$TMP/grow.json" "row('deep')['calls']") + $lost / 2)" -- \
	q "$TMP/grow.json" "exit(0 if s['lost_events'] > 0 and s['lost_events'] % 2 == 0 and row('deep')['calls'] + s['lost_events'] // 2 == 100010 else 1)"
check "grow: the full directory is named with the loss, and no word of -finstrument-functions" -- \
	sh -c "grep -qx \"stackclock: warning: the shared-memory file system is full: $lost events were lost (free space in $TMP/grow, or set STACKCLOCK_SHM_DIR to a larger tmpfs)\" '$TMP/grow.err' && ! grep -q finstrument '$TMP/grow.err'"

# an image the runtime cannot make while the program runs (the directory
# filled by the program, then an exec or a fork): its calls are missing,
# and the recorder says so, naming the directory and the error.  Before:
# nothing said for the exec, and "no descriptor or memory was left" for
# the fork.
for m in exec fork; do
	rm -f "$TMP/grow/fill"
	STACKCLOCK_SHM_DIR=$TMP/grow rec "$TMP/$m.data" "$TMP/$m.out" "$TMP/$m.err" "$TMP/fill" $m "$TMP/grow"
	check "$m: the program ran (status $(cat "$TMP/rc"))" -- sh -c "[ $(cat "$TMP/rc") = 0 ] && [ \"\$(cat '$TMP/$m.out')\" = ok ]"
	report_json "$TMP/$m.data" "$TMP/$m.json"
	check "$m: deep's 10 calls before the fill counted, the 1,000 after in the image not made missing, nothing lost ($(q "$TMP/$m.json" "(row('deep')['calls'], s['lost_events'])"))" -- \
		q "$TMP/$m.json" "exit(0 if (row('deep')['calls'], s['lost_events']) == (10, 0) else 1)"
	check "$m: one line says an image could not be made in the full directory" -- \
		sh -c "[ \$(grep -c . '$TMP/$m.err') = 2 ] && grep -qx \"stackclock: warning: 1 process image(s) could not make their shared memory in $TMP/grow (No space left on device): their calls are missing (free space there, or set STACKCLOCK_SHM_DIR to a larger tmpfs)\" '$TMP/$m.err'"
	check "$m: no mark of the runtime's left in the directory ($(ls -A "$TMP/grow" | tr '\n' ' '))" -- \
		test "$(ls -A "$TMP/grow")" = fill
done
