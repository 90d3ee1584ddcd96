#!/usr/bin/env bash
# Sampling with --kernel: time in system calls is sampled too, its stacks
# start with the kernel's frames and go on with the user frames to the
# root.  Without --kernel, only user frames (and user time) are sampled.
. "$(dirname "$0")/lib.sh"
. "$E2E_DIR/smp_lib.sh"
build syscalls smp_syscalls.c -O2 -fomit-frame-pointer -fno-optimize-sibling-calls || exit 1

"$STACKCLOCK" record --kernel -o "$TMP/k.data" -- "$TMP/syscalls" 600 2>"$TMP/k.err"
rc=$?
if [ $rc -ne 0 ] && grep -q perf_event_paranoid "$TMP/k.err"; then
	echo "ok 1 # SKIP the kernel refuses kernel samples here: $(cat "$TMP/k.err")"
	exit 0
fi
ok $rc "record --kernel"
"$STACKCLOCK" dump -i "$TMP/k.data" | grep -q '^  session .*flags=kernel'
ok $? "the session is flagged kernel"
sc_stacks "$TMP/k.data" >"$TMP/k.folded"
kshare=$(awk '{ n += $4; if ($1 ~ /\+kernel$/) k += $4 } END { printf "%.1f", n ? 100 * k / n : 0 }' "$TMP/k.folded")
atleast "$kshare" 30; ok $? "$kshare% of samples are in the kernel (>= 30%: reading /dev/zero is kernel work)"
through=$(awk '$1 ~ /\+kernel$/ { n += $4; if ($1 ~ /^root/ && $5 ~ /^_start;.*;main;read_loop;[^;]*read[^;]*;.*;/) m += $4 }
	END { printf "%.1f", n ? 100 * m / n : 0 }' "$TMP/k.folded")
atleast "$through" 90; ok $? "$through% of kernel stacks go on through read() to main and the root (>= 90%)"
grep -qE '\+kernel .*;(ksys_read|vfs_read|read_zero|__x64_sys_read)' "$TMP/k.folded"
ok $? "kernel frames are named (ksys_read, vfs_read, ...)"

check "record without --kernel" -- "$STACKCLOCK" record -o "$TMP/u.data" -- "$TMP/syscalls" 300
sc_stacks "$TMP/u.data" >"$TMP/u.folded"
! grep -q '+kernel' "$TMP/u.folded"; ok $? "no kernel frames without --kernel"

# Where kernel samples are refused (an unprivileged user under
# kernel.perf_event_paranoid >= 2), --kernel falls back to user frames.
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null &&
   [ "$(cat /proc/sys/kernel/perf_event_paranoid)" -ge 2 ]; then
	# $TMP is root's alone: nobody needs a place of its own.
	nd=$(mktemp -d /tmp/sc-e2e-nobody.XXXXXX)
	chmod 777 "$nd"
	cp "$TMP/syscalls" "$nd/"
	out=$nd/n.data
	setpriv --reuid=nobody --regid=nogroup --clear-groups \
		"$STACKCLOCK" record --kernel -o "$out" -- "$nd/syscalls" 200 2>"$TMP/n.err"
	ok $? "an unprivileged --kernel recording still succeeds"
	grep -q "kernel frames not permitted (kernel.perf_event_paranoid = [0-9]*)" "$TMP/n.err"
	ok $? "and says kernel frames were not permitted"
	"$STACKCLOCK" dump -i "$out" | grep -q '^  session .*flags=none'
	ok $? "the session is not flagged kernel"
	rm -rf "$nd"
fi
