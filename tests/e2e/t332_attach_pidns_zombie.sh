#!/usr/bin/env bash
# san: skip (the runtime is loaded into a running program; no tool code the sanitizers watch runs there)
# Attaching to a process in a pid namespace of its own, by the pid the
# recorder sees (issue 30, point 12), and to a zombie, by both methods.
# - instrumentation: the program (pid 1 in its namespace, blocked in
#   sigwait) makes exactly 1000 burst() and 2000 leaf() calls while
#   attached; the counts are exact.  Before: "the recorder is gone" (the
#   runtime's pidfd_open of the recorder's pid, not seen inside), status
#   125; with that alone fixed, a 20 s wait for a thread the recorder had
#   stopped (the runtime's own, known by its number inside).
#   Its one thread has a signal pending that it blocks: the attach goes on.
# - sampling: the program's stacks, through main.
# - a zombie (ps lists it): the one line says it has exited, status 125.
. "$(dirname "$0")/lib.sh"
. "$E2E_DIR/smp_lib.sh"
build burst e2e_attach_burst.c -O2 || exit 1
build shares e2e_shares.c -O2 -fomit-frame-pointer -fno-optimize-sibling-calls || exit 1
AT="python3 $E2E_DIR/att_check.py"

if [ "$(id -u)" != 0 ] || ! unshare --pid --fork --mount-proc true 2>/dev/null; then
	echo "ok 1 # skip: no pid namespace can be made here (needs root)"
	echo "1..1"
	exit 0
fi

inner() {	# inner PARENT: the pid (as we see it) of PARENT's one child
	local c=
	for _ in $(seq 100); do c=$(cat "/proc/$1/task/$1/children" 2>/dev/null); [ -n "$c" ] && break; sleep 0.02; done
	echo "${c// /}"
}

# instrumentation, exact
unshare --pid --fork --mount-proc "$TMP/burst" "$TMP/st" &
ns=$!
pid=$(inner $ns)
for _ in $(seq 100); do [ -s "$TMP/st" ] && break; sleep 0.02; done
nspid=$(awk '/^NSpid:/ { print $2 "," $3 }' "/proc/$pid/status")
ok $([ "$nspid" = "$pid,1" ] && [ "$(head -1 "$TMP/st")" = "pid 1" ]; echo $?) \
	"the target is pid 1 in its namespace, $pid outside (NSpid $nspid; $(head -1 "$TMP/st"))"
# a signal it blocks, pending for good in its thread's own set (SIGUSR2,
# raised): the loader's call does not wait for it (only a pending signal
# the thread would take at once keeps the call off a thread)
pnd=$(awk '/^SigPnd:/ { print $2 }' "/proc/$pid/status")
ok $([ "$pnd" = 0000000000000800 ]; echo $?) "its thread has SIGUSR2 pending, blocked (SigPnd $pnd)"
"$STACKCLOCK" record -m instrument -p "$pid" --duration 3 -o "$TMP/ns.data" 2>"$TMP/ns.err" &
rec=$!
for _ in $(seq 150); do $AT text "$pid" "$TMP/burst" >/dev/null 2>&1 || break; sleep 0.02; done
kill -USR1 "$pid"
for _ in $(seq 100); do grep -q '^done 1$' "$TMP/st" && break; sleep 0.02; done
wait $rec
ok $? "record -m instrument -p PID of a process in a pid namespace: status 0" || sed 's/^/#   /' "$TMP/ns.err"
report_json "$TMP/ns.data" "$TMP/ns.json"
c=$(q "$TMP/ns.json" "(row('burst')['calls'], row('leaf')['calls'])")
ok $([ "$c" = "(1000, 2000)" ]; echo $?) "burst and leaf calls exact: 1000 and 2000 ($c)"
check "the code bytes equal the file's after the detach" -- $AT text "$pid" "$TMP/burst"
kill -USR1 "$pid"
for _ in $(seq 100); do grep -q '^done 2$' "$TMP/st" && break; sleep 0.02; done
ok $(grep -c '^done' "$TMP/st" | grep -qx 2; echo $?) "the program goes on after the detach ($(tail -1 "$TMP/st"))"
kill -TERM "$pid"
wait $ns
ok $? "and ends with status 0"

# sampling
unshare --pid --fork --mount-proc "$TMP/shares" 3000 >/dev/null &
ns=$!
pid=$(inner $ns)
sleep 0.2
check "record -p PID (sampling) of a process in a pid namespace: status 0" -- \
	"$STACKCLOCK" record -p "$pid" --duration 1 -o "$TMP/s.data"
n=$(sc_stacks "$TMP/s.data" | awk '{ n += $4; if ($5 ~ /;main;middle;part_[abc]$/) m += $4 } END { print n + 0, m + 0 }')
read -r all main <<<"$n"
ok $(( all >= 50 && main * 100 >= all * 95 ? 0 : 1 )) "its samples (>= 50), >= 95% through main;middle ($main of $all)"
kill "$pid" 2>/dev/null
wait $ns 2>/dev/null

# a zombie: a child its parent reaps only after 3 s
python3 -c 'import os, time
p = os.fork()
if p == 0: os._exit(0)
print(p, flush=True); time.sleep(3); os.waitpid(p, 0)' >"$TMP/zombie" &
zp=$!
for _ in $(seq 100); do [ -s "$TMP/zombie" ] && break; sleep 0.02; done
z=$(cat "$TMP/zombie")
sleep 0.1
for m in sample instrument; do
	opt=; [ $m = instrument ] && opt="-m instrument"
	pre=; [ $m = instrument ] && pre="record: "
	# shellcheck disable=SC2086
	"$STACKCLOCK" record $opt -p "$z" --duration 1 -o "$TMP/z.data" >"$TMP/z.out" 2>"$TMP/z.err"
	rc=$?
	want="stackclock: ${pre}process $z has exited (a zombie: state Z in /proc/$z/stat; its parent $zp has not reaped it yet, which is why ps still lists it): nothing to attach to"
	ok $([ $rc = 125 ] && [ "$(cat "$TMP/z.err")" = "$want" ] && [ ! -s "$TMP/z.out" ]; echo $?) \
		"$m: a zombie is said to have exited, status 125 ($rc: $(cat "$TMP/z.err"))"
done
wait $zp
echo "1..$_n"
