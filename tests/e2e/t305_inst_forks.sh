#!/usr/bin/env bash
# Instrumentation: processes made while the parent keeps working, by fork(),
# by syscall(SYS_fork) (no fork handlers), by clone() without CLONE_VM on a
# stack of its own, and by fork() after chroot(): every child is recorded,
# inherited frames are not new calls, and the parent's counts are its own.
# san: skip (the runtime's fork handling; the recorder side is t302's)
. "$(dirname "$0")/lib.sh"
for cc in gcc clang; do
	command -v $cc >/dev/null || continue
	$cc -g -O1 -finstrument-functions -o "$TMP/forks_$cc" "$PROGS/e2e_forks.c" || exit 1
	P=$TMP/forks_$cc

	check "$cc: record 200 forks while the parent works" -- \
		"$STACKCLOCK" record -m instrument -o "$TMP/w.data" -- "$P" work 200
	report_json "$TMP/w.data" "$TMP/w.json"
	check "$cc: every child exited 0" -- q "$TMP/w.json" "exit(0 if s['exit_status'] == 0 else 1)"
	check "$cc: 201 processes ($(q "$TMP/w.json" "s['processes']"))" -- \
		q "$TMP/w.json" "exit(0 if s['processes'] == 201 else 1)"
	check "$cc: main 1 call, spawn 200: inherited frames are not calls ($(q "$TMP/w.json" "(row('main')['calls'], row('spawn')['calls'])"))" -- \
		q "$TMP/w.json" "exit(0 if row('main')['calls'] == 1 and row('spawn')['calls'] == 200 else 1)"
	check "$cc: parent_fn 4000 calls, child_fn 600 ($(q "$TMP/w.json" "(row('parent_fn')['calls'], row('child_fn')['calls'])"))" -- \
		q "$TMP/w.json" "exit(0 if row('parent_fn')['calls'] == 4000 and row('child_fn')['calls'] == 600 else 1)"
	report_json "$TMP/w.data" "$TMP/wc.json" --by callsite
	check "$cc: child_fn is called from spawn only, 600 times" -- \
		q "$TMP/wc.json" "exit(0 if [(x['function'], x['calls']) for x in rows if x['callee'] == 'child_fn'] == [('spawn', 600)] else 1)"
	check "$cc: parent_fn is called from spawn only, 4000 times" -- \
		q "$TMP/wc.json" "exit(0 if [(x['function'], x['calls']) for x in rows if x['callee'] == 'parent_fn'] == [('spawn', 4000)] else 1)"

	check "$cc: record 50 raw forks (syscall(SYS_fork))" -- \
		"$STACKCLOCK" record -m instrument -o "$TMP/r.data" -- "$P" rawfork 50
	report_json "$TMP/r.data" "$TMP/r.json"
	check "$cc: raw fork children are not killed (exit status $(q "$TMP/r.json" "s['exit_status']"))" -- \
		q "$TMP/r.json" "exit(0 if s['exit_status'] == 0 else 1)"
	check "$cc: 51 processes, child_fn 150, parent_fn 1000, spawn 50, main 1" -- \
		q "$TMP/r.json" "exit(0 if (s['processes'], row('child_fn')['calls'], row('parent_fn')['calls'], row('spawn')['calls'], row('main')['calls']) == (51, 150, 1000, 50, 1) else 1)"
	report_json "$TMP/r.data" "$TMP/rc.json" --by callsite
	check "$cc: raw fork: child_fn is called from spawn only" -- \
		q "$TMP/rc.json" "exit(0 if [(x['function'], x['calls']) for x in rows if x['callee'] == 'child_fn'] == [('spawn', 150)] else 1)"

	check "$cc: record 20 clones without CLONE_VM" -- \
		"$STACKCLOCK" record -m instrument -o "$TMP/c.data" -- "$P" clone 20
	report_json "$TMP/c.data" "$TMP/c.json"
	check "$cc: clone children are not killed (exit status $(q "$TMP/c.json" "s['exit_status']"))" -- \
		q "$TMP/c.json" "exit(0 if s['exit_status'] == 0 else 1)"
	check "$cc: 21 processes, clone_child 20, child_fn 60, main 1" -- \
		q "$TMP/c.json" "exit(0 if (s['processes'], row('clone_child')['calls'], row('child_fn')['calls'], row('main')['calls']) == (21, 20, 60, 1) else 1)"
	check "$cc: a clone child on its own stack inherits no frame: nothing open but main" -- \
		q "$TMP/c.json" "exit(0 if s['open_frames'] == 0 and s['repairs'] == 0 else 1)"

	if [ "$(id -u)" = 0 ]; then
		mkdir -p "$TMP/jail"
		check "$cc: record chroot, then 10 forks" -- \
			"$STACKCLOCK" record -m instrument -o "$TMP/j.data" -- "$P" chroot "$TMP/jail" 10
		report_json "$TMP/j.data" "$TMP/j.json"
		check "$cc: chroot: 11 processes, child_fn 30, parent_fn 200" -- \
			q "$TMP/j.json" "exit(0 if (s['processes'], row('child_fn')['calls'], row('parent_fn')['calls']) == (11, 30, 200) else 1)"
	fi
done
