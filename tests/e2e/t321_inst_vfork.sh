#!/usr/bin/env bash
# Instrumentation: vfork children that call functions with probes before
# they exec (on their parent's stack and memory, as dash runs every external
# command), hooks (gcc, clang) and patched: the parent's calls are its own,
# exact, with no repair; the child's calls before its exec are nobody's;
# an exec that fails (_exit in the child) too; Debian's dash running
# external commands, no repair, and its frames open at its _exit or exec
# said ended, not killed.  Attached (-p) to a program that vforks, the
# same: the runtime's vfork takes the program's GOT slot while attached.
# san: skip (the runtime's vfork; the recorder side is t305's)
. "$(dirname "$0")/lib.sh"
export STACKCLOCK_CACHE_DIR=$TMP/cache
gcc -g -O1 -finstrument-functions -o "$TMP/vf_gcc" "$PROGS/e2e_vfork.c" || exit 1
command -v clang >/dev/null && { clang -g -O1 -finstrument-functions -o "$TMP/vf_clang" "$PROGS/e2e_vfork.c" || exit 1; }
gcc -g -O1 -fno-inline -o "$TMP/vf_patched" "$PROGS/e2e_vfork.c" || exit 1

for b in gcc clang patched; do
	P=$TMP/vf_$b
	[ -x "$P" ] || continue
	check "$b: record 20 vforks that exec /bin/true" -- \
		"$STACKCLOCK" record -m instrument -o "$TMP/v.data" -- "$P" 20 /bin/true
	"$P" 20 /bin/true >"$TMP/plain.out"
	"$STACKCLOCK" record -m instrument -o "$TMP/v2.data" -- "$P" 20 /bin/true >"$TMP/rec.out" 2>/dev/null
	check "$b: the program's output is unchanged ($(cat "$TMP/rec.out"))" -- cmp "$TMP/plain.out" "$TMP/rec.out"
	report_json "$TMP/v.data" "$TMP/v.json"
	check "$b: no repair, no frame open ($(q "$TMP/v.json" "(s['repairs'], s['open_frames'], s['repairs_by_cause'])"))" -- \
		q "$TMP/v.json" "exit(0 if s['repairs'] == 0 and s['open_frames'] == 0 else 1)"
	check "$b: main 1, spawn 20, after 20, waitpid 20 ($(q "$TMP/v.json" "[(x['function'], x['calls']) for x in rows if x['function'] in ('main', 'spawn', 'after', 'waitpid')]"))" -- \
		q "$TMP/v.json" "exit(0 if (row('main')['calls'], row('spawn')['calls'], row('after')['calls'], row('waitpid')['calls']) == (1, 20, 20, 20) else 1)"
	check "$b: the children's calls before their exec are not the parent's (child_go, child_prep, snprintf: no calls)" -- \
		q "$TMP/v.json" "exit(0 if not [x for x in rows if x['function'] in ('child_go', 'child_prep', 'snprintf') and x['calls']] else 1)"
	check "$b: 21 processes ($(q "$TMP/v.json" "s['processes']"))" -- \
		q "$TMP/v.json" "exit(0 if s['processes'] == 21 else 1)"
	check "$b: spawn's time holds its waits: EI >= waitpid's" -- \
		q "$TMP/v.json" "exit(0 if row('spawn')['elapsed_inclusive_ns'] >= row('waitpid')['elapsed_inclusive_ns'] > 0 else 1)"

	# the exec fails: the child calls _exit on the parent's memory
	"$STACKCLOCK" record -m instrument -o "$TMP/f.data" -- "$P" 10 /nonexistent/x >"$TMP/f.out" 2>/dev/null
	check "$b: exec failing in 10 vfork children: statuses 127 each ($(cat "$TMP/f.out"))" -- \
		grep -qx 'spawned 10, exit statuses 1270' "$TMP/f.out"
	report_json "$TMP/f.data" "$TMP/f.json"
	check "$b: exec failing: no repair, after 10 calls, 1 process ($(q "$TMP/f.json" "(s['repairs'], row('after')['calls'], s['processes'])"))" -- \
		q "$TMP/f.json" "exit(0 if (s['repairs'], s['open_frames'], row('after')['calls'], s['processes']) == (0, 0, 10, 1) else 1)"
done

# Debian's dash vforks for every external command
if [ -x /usr/bin/dash ]; then
	check "dash: record a script running 10 external commands" -- \
		"$STACKCLOCK" record -m instrument -o "$TMP/d.data" -- /usr/bin/dash -c \
		'for i in 1 2 3 4 5 6 7 8 9 10; do /bin/true; done; echo done'
	report_json "$TMP/d.data" "$TMP/d.json"
	check "dash: no repair ($(q "$TMP/d.json" "s['repairs_by_cause']")), 11 processes ($(q "$TMP/d.json" "s['processes']"))" -- \
		q "$TMP/d.json" "exit(0 if s['repairs'] == 0 and s['processes'] == 11 else 1)"
	# dash ends by _exit (no destructor runs), and a command run last by
	# exec: their open frames are ended ones, not a kill's
	check "dash: record '/bin/true; exec /bin/true'" -- \
		"$STACKCLOCK" record -m instrument -o "$TMP/e.data" -- /usr/bin/dash -c '/bin/true; exec /bin/true'
	report_json "$TMP/e.data" "$TMP/e.json"
	check "dash: frames open at its _exit and its exec are said ended, none killed ($(q "$TMP/e.json" "s['repairs_by_cause']"))" -- \
		q "$TMP/e.json" "exit(0 if s['open_frames'] > 0 and s['repairs_by_cause']['exit'] == s['open_frames'] and s['repairs_by_cause']['kill'] == 0 else 1)"
fi

# attached: the program's vfork GOT slot points at the runtime's vfork
# while attached (without it: one repair per child, child_go counted)
"$TMP/vf_patched" -3 /bin/true >"$TMP/att.out" &   # 3 s, however fast it spawns
pid=$!
sleep 0.5
check "attached: record -m instrument -p PID --duration 1 of a program vforking" -- \
	"$STACKCLOCK" record -m instrument -p "$pid" --duration 1 -o "$TMP/att.data"
wait "$pid"
check "attached: the program ends as without us (status $?, $(cat "$TMP/att.out"))" -- \
	grep -Eqx 'spawned [0-9]+, exit statuses 0' "$TMP/att.out"
report_json "$TMP/att.data" "$TMP/att.json"
check "attached: no repair ($(q "$TMP/att.json" "s['repairs_by_cause']")), spawns seen ($(q "$TMP/att.json" "row('spawn')['calls']"))" -- \
	q "$TMP/att.json" "exit(0 if s['repairs'] == 0 and row('spawn')['calls'] >= 5 else 1)"
check "attached: the children's calls before their exec are not the parent's" -- \
	q "$TMP/att.json" "exit(0 if not [x for x in rows if x['function'] in ('child_go', 'child_prep', 'snprintf') and x['calls']] else 1)"
