#!/usr/bin/env bash
# Attaching (-p) to a process whose program file was deleted, or replaced by
# another program, since it started: the CFI must come from the file it
# mapped (/proc/PID/map_files/, root only), never from whatever the path
# holds now, or the stacks stop at the first frame of the program.
. "$(dirname "$0")/lib.sh"
. "$E2E_DIR/smp_lib.sh"
if [ "$(id -u)" != 0 ]; then
	echo "ok 1 - # SKIP /proc/PID/map_files needs root"
	exit 0
fi
flags="-O2 -fomit-frame-pointer -fno-optimize-sibling-calls"

# attach_check WHAT: attach to $pid for 1 s; stacks reach the root through
# the program's own frames, and the module recorded is the original file.
attach_check() {
	local what=$1 bid
	check "$what: attach for 1 s" -- "$STACKCLOCK" record -p "$pid" --duration 1 -o "$TMP/$what.data"
	sc_stacks "$TMP/$what.data" >"$TMP/$what.folded" 2>/dev/null
	# root;__libc_start_main;__libc_start_call_main;main;middle;part_x: 6+
	root=$(awk '{ n += $4; if ($1 == "root" && split($5, f, ";") >= 6) r += $4 } END { printf "%.1f", n ? 100 * r / n : 0 }' "$TMP/$what.folded")
	atleast "$root" 90; ok $? "$what: $root% of stacks reach the root with 6+ frames (>= 90%)"
	"$STACKCLOCK" dump -i "$TMP/$what.data" >"$TMP/$what.dump"
	bid=$(grep -o "build_id=[0-9a-f]* path=\"$TMP/app\"" "$TMP/$what.dump" | head -1)
	[ "$bid" = "build_id=$orig_bid path=\"$TMP/app\"" ]
	ok $? "$what: module recorded under its path with the original build-id (${bid:-none})"
}

start_app() {
	cc -g $flags -o "$TMP/app" "$PROGS/e2e_shares.c" || exit 1
	orig_bid=$(readelf -n "$TMP/app" | sed -n 's/.*Build ID: \([0-9a-f]*\).*/\1/p')
	"$TMP/app" 5000 &
	pid=$!
	sleep 0.2
}

start_app
rm "$TMP/app"
attach_check deleted
kill "$pid"; wait "$pid" 2>/dev/null || true

start_app
# Another program at the same path (a new file: gcc unlinks the old one).
cc -g -O0 -pthread -o "$TMP/app" "$PROGS/e2e_cputhreads.c" || exit 1
attach_check replaced
kill "$pid"; wait "$pid" 2>/dev/null || true
