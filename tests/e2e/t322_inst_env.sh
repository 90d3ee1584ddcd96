#!/usr/bin/env bash
# The recorded program as it runs without us (issue 30), built with gcc and
# clang with the hooks and without them (patched at run time):
#  - its environment, and what it passes to its children by every way to
#    run a program, print the same with and without record (a user's own
#    LD_PRELOAD kept as it was), and the children are still recorded with
#    exact counts;
#  - lazy binding stays: a program linked with a function its library lost
#    runs (exit 0), with its library call rows exact;
#  - programs the runtime cannot follow (statically linked, 32-bit,
#    set-user-ID to another user) are refused in one line before the start,
#    or, run by a recorded process, get their environment untouched (no
#    loader error in their stderr) and are named at the end and in the
#    profile; a set-user-ID program of our own user is recorded.
# san: skip (the runtime and the targets are never sanitized)
. "$(dirname "$0")/lib.sh"

# same_env NAME MODE PROG CHILD PROCS [PRELOAD]: PROG run CHILD by MODE
# prints the same with and without record (both under env(1): the same
# "_"), the child's environment as the parent's, and the profile has
# work() 110 times (10 in the parent, 100 in the child) in PROCS processes.
same_env() {
	local name=$1 mode=$2 prog=$3 child=$4 procs=$5 pre=${6:-}
	local envs=(env) shell=0; [ -n "$pre" ] && envs=(env LD_PRELOAD="$pre")
	case $mode in system|popen) shell=1 ;; esac   # (the shell between sets PWD)
	"${envs[@]}" "$prog" run "$mode" "$child" >"$TMP/plain.out" 2>"$TMP/plain.err"
	local prc=$?
	"${envs[@]}" "$STACKCLOCK" record -m instrument -o "$TMP/env.data" -- "$prog" run "$mode" "$child" \
		>"$TMP/rec.out" 2>"$TMP/rec.err"
	local rrc=$?
	check "env $name $mode${pre:+ (LD_PRELOAD=$pre)}: the same output ($(wc -l <"$TMP/plain.out") lines), status 0 both" -- \
		sh -c "[ $prc = 0 ] && [ $rrc = 0 ] && cmp '$TMP/plain.out' '$TMP/rec.out' &&
		       [ \$(grep -c '^parent: ' '$TMP/rec.out') -gt 3 ] &&
		       { [ $shell = 1 ] || [ \"\$(sed -n 's/^parent: //p' '$TMP/rec.out')\" = \"\$(sed -n 's/^child: //p' '$TMP/rec.out')\" ]; } &&
		       ! grep -q 'STACKCLOCK_SHM=\|STACKCLOCK_PRELOAD0\|LD_BIND_NOW' '$TMP/rec.out' &&
		       { [ -z '$pre' ] || grep -qx 'child: LD_PRELOAD=$pre' '$TMP/rec.out'; }"
	report_json "$TMP/env.data" "$TMP/env.json"
	check "env $name $mode: work 110 calls in $procs processes, nothing unrecorded" -- \
		q "$TMP/env.json" "exit(0 if (row('work')['calls'], s['processes'], s['unrecorded']) == (110, $procs, []) else 1)"
	# a function that runs the program is still a library call row
	local fn=
	case $mode in spawn) fn=posix_spawn ;; spawnp) fn=posix_spawnp ;; system|popen) fn=$mode ;; esac
	[ -n "$fn" ] && check "env $name $mode: $fn is a library call row of libc, 1 call" -- \
		q "$TMP/env.json" "exit(0 if (row('$fn')['calls'], row('$fn')['module'].split('/')[-1]) == (1, 'libc.so.6') else 1)"
	return 0
}

# ---- the environment, and the children's ------------------------------------
all_modes="fork-execve vfork-execve fork-execv fork-execvp fork-execvpe fork-execl fork-execlp fork-execle
	   fork-fexecve fork-execveat spawn spawnp system popen"
for v in "${BUILD_VARIANTS[@]}"; do
	IFS=: read -r name cc flags <<<"$v"
	$cc -O1 -g $flags -o "$TMP/env_$name" "$PROGS/e2e_env.c" || exit 1
	modes=$all_modes; [ $name != gcc ] && modes="fork-execve vfork-execve spawnp system"
	for mode in $modes; do
		procs=2; case $mode in system|popen) procs=3 ;; esac    # and /bin/sh
		same_env $name $mode "$TMP/env_$name" "$TMP/env_$name" $procs
	done
	same_env $name fork-execvp "$TMP/env_$name" "$TMP/env_$name" 2 libm.so.6
done

# ---- lazy binding: a symbol the library lost, never called ------------------
for v in "${BUILD_VARIANTS[@]}"; do
	IFS=: read -r name cc flags <<<"$v"
	( cd "$TMP" && gcc -O1 -g -shared -fPIC -o liblz.so "$PROGS/e2e_lazy_lib.c" &&
	  $cc -O1 -g $flags -o "lz_$name" "$PROGS/e2e_lazy.c" -L. -llz -Wl,-rpath,"$TMP" &&
	  gcc -O1 -g -shared -fPIC -DGONE -o liblz.so "$PROGS/e2e_lazy_lib.c" ) || exit 1
	rec "$TMP/lz.data" "$TMP/lz.out" "$TMP/lz.err" "$TMP/lz_$name"
	check "lazy $name: status 0, 'sum 5050', no symbol lookup error" -- \
		sh -c "[ \$(cat '$TMP/rc') = 0 ] && grep -qx 'sum 5050' '$TMP/lz.out' && ! grep -q 'symbol lookup' '$TMP/lz.err'"
	report_json "$TMP/lz.data" "$TMP/lz.json"
	check "lazy $name: main 1, work 100, lib_used 100 (a library call row), printf 1" -- \
		q "$TMP/lz.json" "exit(0 if (row('main')['calls'], row('work')['calls'], row('lib_used')['calls'], row('printf')['calls']) == (1, 100, 100, 1) else 1)"
	# the call that is made fails as it does without us
	rec "$TMP/lz.data" "$TMP/lz.out" "$TMP/lz.err" "$TMP/lz_$name" gone
	check "lazy $name gone: status 127 and the loader's error, as without record" -- \
		sh -c "[ \$(cat '$TMP/rc') = 127 ] && grep -q 'symbol lookup error: .*undefined symbol: lib_gone' '$TMP/lz.err'"
done

# ---- programs the runtime cannot follow -------------------------------------
gcc -O1 -g -finstrument-functions -o "$TMP/par" "$PROGS/e2e_env.c" || exit 1
gcc -O1 -g -finstrument-functions -static -o "$TMP/env_static" "$PROGS/e2e_env.c" || exit 1
cp "$TMP/par" "$TMP/env_suid" && chown nobody "$TMP/env_suid" && chmod 4755 "$TMP/env_suid" || exit 1
cp "$TMP/par" "$TMP/env_rsuid" && chmod 4755 "$TMP/env_rsuid" || exit 1
chmod 755 "$TMP"      # (nobody's program must be reachable)
kinds=("static:statically linked" "suid:set-user-ID/set-group-ID")
if gcc -m32 -O1 -g -finstrument-functions -o "$TMP/env_32" "$PROGS/e2e_env.c" 2>/dev/null; then
	kinds+=("32:a 32-bit program")
else
	echo "ok $((_n += 1)) # skip 32-bit children: no gcc -m32 (scripts/install-deps.sh installs gcc-multilib)"
fi
for kv in "${kinds[@]}"; do
	IFS=: read -r k why <<<"$kv"
	for mode in fork-execve vfork-execve spawn; do
		procs=1; [ $mode = fork-execve ] && procs=2     # (the child's image until its exec)
		env "$TMP/par" run $mode "$TMP/env_$k" >"$TMP/plain.out" 2>"$TMP/plain.err"
		env "$STACKCLOCK" record -m instrument -o "$TMP/u.data" -- "$TMP/par" run $mode "$TMP/env_$k" \
			>"$TMP/rec.out" 2>"$TMP/rec.err"
		rc=$?
		check "$k child ($mode): status 0, the same output, no loader error" -- \
			sh -c "[ $rc = 0 ] && cmp '$TMP/plain.out' '$TMP/rec.out' && [ ! -s '$TMP/plain.err' ] &&
			       ! grep -q 'wrong ELF class\\|ld.so\\|while loading' '$TMP/rec.err'"
		check "$k child ($mode): named at the end with its reason" -- \
			grep -q "process [0-9]* ran '$TMP/env_$k', which was not recorded: $why: " "$TMP/rec.err"
		report_json "$TMP/u.data" "$TMP/u.json"
		check "$k child ($mode): the profile names it (the parent's work 10, $procs process(es))" -- \
			q "$TMP/u.json" "exit(0 if [(x['program'], x['reason']) for x in s['unrecorded']] == [('$TMP/env_$k', '$why')] and (row('work')['calls'], s['processes']) == (10, $procs) else 1)"
		check "$k child ($mode): the report shows it" -- \
			sh -c "'$STACKCLOCK' report -i '$TMP/u.data' | grep -q 'Not recorded: process [0-9]* ran $TMP/env_$k:'"
	done
	# refused before the start, in one line
	one_line_fail "$k program refused in one line, naming the reason" "$why" -- \
		"$STACKCLOCK" record -m instrument -o "$TMP/x.data" -- "$TMP/env_$k" env x
done
# a static child of a recorded shell
"$STACKCLOCK" record -m instrument -o "$TMP/sh.data" -- sh -c "'$TMP/env_static' env x >/dev/null; '$TMP/par' env y >/dev/null" 2>"$TMP/sh.err"
rc=$?
check "sh: status 0, the static child named" -- \
	sh -c "[ $rc = 0 ] && grep -q \"ran '$TMP/env_static', which was not recorded: statically linked\" '$TMP/sh.err'"
report_json "$TMP/sh.data" "$TMP/sh.json"
check "sh: the profile names the static child; the dynamic one is recorded (work 100)" -- \
	q "$TMP/sh.json" "exit(0 if [(x['program'], x['reason']) for x in s['unrecorded']] == [('$TMP/env_static', 'statically linked')] and row('work')['calls'] == 100 else 1)"

# a set-user-ID program of our own user changes no credentials: recorded
rec "$TMP/rs.data" "$TMP/rs.out" "$TMP/rs.err" "$TMP/env_rsuid" env x
report_json "$TMP/rs.data" "$TMP/rs.json"
check "set-user-ID of our own user: recorded (status 0, work 100)" -- \
	sh -c "[ \$(cat '$TMP/rc') = 0 ] && python3 '$E2E_DIR/sc.py' query '$TMP/rs.json' \"exit(0 if row('work')['calls'] == 100 else 1)\""
"$STACKCLOCK" record -m instrument -o "$TMP/rs.data" -- "$TMP/par" run fork-execve "$TMP/env_rsuid" \
	>"$TMP/rs.out" 2>"$TMP/rs.err"
rc=$?
report_json "$TMP/rs.data" "$TMP/rs.json"
check "set-user-ID child of our own user: recorded (status 0, work 10 + 100 in 2 processes, nothing unrecorded)" -- \
	sh -c "[ $rc = 0 ] && python3 '$E2E_DIR/sc.py' query '$TMP/rs.json' \"exit(0 if (sorted(x['calls'] for x in rows if x['function'] == 'work'), s['processes'], s['unrecorded']) == ([10, 100], 2, []) else 1)\""

# sampling: set-user-ID to another user refused (the kernel ends the perf
# events at its exec); a 32-bit program warned that stacks are leaves only
one_line_fail "sampling a set-user-ID program refused in one line" "set-user-ID.*perf events" -- \
	"$STACKCLOCK" record -o "$TMP/x.data" -- "$TMP/env_suid" env x
# ... and a set-user-ID child it runs is busy on a CPU with no samples:
# said as that, not as a program that mostly waited
"$STACKCLOCK" record -o "$TMP/ss.data" -- "$TMP/par" run fork-execve "$TMP/env_suid" spin >/dev/null 2>"$TMP/ss.err"
rc=$?
check "sampling a set-user-ID child: status 0, one note that its perf events ended at a credential-changing exec" -- \
	sh -c "[ $rc = 0 ] && [ \$(grep -c 'though the processes ran .* s in user mode: the kernel ends a process.s perf events at an exec that changes its credentials' '$TMP/ss.err') = 1 ] &&
	       ! grep -q 'about 0%' '$TMP/ss.err'"
if [ -x "$TMP/env_32" ]; then
	"$STACKCLOCK" record -o "$TMP/s32.data" -- "$TMP/env_32" env x >/dev/null 2>"$TMP/s32.err"
	rc=$?
	check "sampling a 32-bit program: status 0, one warning that samples count leaves only" -- \
		sh -c "[ $rc = 0 ] && [ \$(grep -c 'is a 32-bit program: each sample counts its leaf function only' '$TMP/s32.err') = 1 ]"
fi

# ---- system() and popen() from threads, while another changes environ ------
# (they once swapped the process-wide environ for the call: a thread's
# array given back while another's restore put it back in place, SIGSEGV;
# our variables visible to other threads meanwhile)
for v in "${BUILD_VARIANTS[@]}"; do
	IFS=: read -r name cc flags <<<"$v"
	$cc -O1 -g $flags -pthread -o "$TMP/th_$name" "$PROGS/e2e_env.c" || exit 1
	# (not compared with a run without record: there glibc's own system()
	# fails now and then, 127 << 8 with EFAULT, its spawn reading environ
	# while the main thread's unsetenv moves it; ours copies it first.
	# What each call gives alone is compared above: system and popen.)
	timeout 300 "$STACKCLOCK" record -m instrument -o "$TMP/th.data" -- "$TMP/th_$name" threads "$TMP/th_$name" \
		>"$TMP/rec.out" 2>"$TMP/rec.err"
	rrc=$?
	check "threads $name: popen/pclose and system from 3 threads while main sets environ: status 0, every output and status exact" -- \
		sh -c "[ $rrc = 0 ] && [ \"\$(grep -cx one '$TMP/rec.out')\" = 30 ] && [ \$(wc -l <'$TMP/rec.out') = 32 ] &&
		       [ \"\$(tail -2 '$TMP/rec.out')\" = 'popen 30 (bad 0), system 30 (bad 0), system(\"true\") 30 (bad 0), system(NULL) 1, ours seen 0
ok' ]"
	report_json "$TMP/th.data" "$TMP/th.json"
	# 1 + 30 x (sh, child) by popen + 30 x (sh, child) by system + 30 sh + 1 sh (system(NULL))
	check "threads $name: the 60 children recorded (work 60) in 152 processes; system 61, popen 30, pclose 30 rows of libc" -- \
		q "$TMP/th.json" "exit(0 if (row('work')['calls'], s['processes'], s['unrecorded'], [(row(f)['calls'], row(f)['module'].split('/')[-1]) for f in ('system', 'popen', 'pclose')]) == (60, 152, [], [(61, 'libc.so.6'), (30, 'libc.so.6'), (30, 'libc.so.6')]) else 1)"
done

# ---- vfork+exec leaks nothing in the parent ---------------------------------
# (the child's environment was built in mmap'ed memory, the parent's in a
# vfork child, never given back by a successful exec: 2000 pages for 2000)
"$STACKCLOCK" record -m instrument -o "$TMP/vl.data" -- "$TMP/par" vfork-leak /bin/true 2000 >"$TMP/vl.out" 2>"$TMP/vl.err"
rc=$?
grew=$(sed -n 's/^2000 vfork+execve: grew \(-\{0,1\}[0-9]*\) pages$/\1/p' "$TMP/vl.out")
check "vfork leak: 2000 vfork+execve under record, status 0, the parent grew by less than 100 pages (${grew:-?})" -- \
	sh -c "[ $rc = 0 ] && [ -n '$grew' ] && [ '$grew' -lt 100 ]"
report_json "$TMP/vl.data" "$TMP/vl.json"
check "vfork leak: 2001 processes recorded, nothing unrecorded" -- \
	q "$TMP/vl.json" "exit(0 if (s['processes'], s['unrecorded']) == (2001, []) else 1)"

# ---- a FIFO is not opened to be judged --------------------------------------
# (opening it blocked: exec'ing a FIFO hung instead of failing with EACCES)
rm -f "$TMP/fifo" && mkfifo -m 755 "$TMP/fifo" || exit 1   # (executable: exec, not the mode, refuses it)
"$TMP/par" exec-errno "$TMP/fifo" >"$TMP/plain.out" 2>&1
timeout 10 "$STACKCLOCK" record -m instrument -o "$TMP/ff.data" -- "$TMP/par" exec-errno "$TMP/fifo" >"$TMP/rec.out" 2>"$TMP/rec.err"
rc=$?
check "fifo: execve of a FIFO gives errno 13 as without record (status 0, no hang)" -- \
	sh -c "[ $rc = 0 ] && [ \"\$(cat '$TMP/plain.out')\" = 'execve: errno 13' ] && cmp '$TMP/plain.out' '$TMP/rec.out'"
one_line_fail "fifo: record of a FIFO fails in one line, without hanging" "cannot run '.*fifo': permission denied" -- \
	timeout 10 "$STACKCLOCK" record -m instrument -o "$TMP/ff.data" -- "$TMP/fifo"
# ... nor one a script's "#!" names
printf '#!%s\n' "$TMP/fifo" >"$TMP/sfifo" && chmod 755 "$TMP/sfifo" || exit 1
"$TMP/par" exec-errno "$TMP/sfifo" >"$TMP/plain.out" 2>&1
timeout 10 "$STACKCLOCK" record -m instrument -o "$TMP/ff.data" -- "$TMP/par" exec-errno "$TMP/sfifo" >"$TMP/rec.out" 2>"$TMP/rec.err"
rc=$?
check "fifo: execve of a script whose #! names a FIFO gives errno 13 as without record (status 0, no hang)" -- \
	sh -c "[ $rc = 0 ] && [ \"\$(cat '$TMP/plain.out')\" = 'execve: errno 13' ] && cmp '$TMP/plain.out' '$TMP/rec.out'"
one_line_fail "fifo: record of a script whose #! names a FIFO fails in one line, without hanging" "cannot run '.*sfifo': permission denied" -- \
	timeout 10 "$STACKCLOCK" record -m instrument -o "$TMP/ff.data" -- "$TMP/sfifo"

# ---- a variable of ours larger than the runtime's store ---------------------
# (a long --patch list: STACKCLOCK_PATCH_NAMES was taken out of environ and
# not given to the children, whose kernel block then lacked it).  20,000
# bytes: hidden from the program, passed to its child; 70,000 (more than
# the store): nothing hidden, the child still gets it.
for n in 2000 7000; do
	list=$(python3 -c "print(','.join(['libm.so.6'] * $n))")
	"$STACKCLOCK" record -m instrument --patch "$list" -o "$TMP/pl.data" -- \
		"$TMP/par" run fork-execve /bin/cat /proc/self/environ >"$TMP/pl.out" 2>"$TMP/pl.err"
	rc=$?
	hidden=0; [ $n = 7000 ] && hidden=11    # (then all of ours show, LD_PRELOAD too)
	check "a ${#list}-byte --patch list: status 0, the child's kernel block has STACKCLOCK_PATCH_NAMES exactly, the parent shows $hidden of ours" -- \
		sh -c "[ $rc = 0 ] && [ \"\$(tr '\\0' '\\n' <'$TMP/pl.out' | grep -a -c -x 'STACKCLOCK_PATCH_NAMES=$list')\" = 1 ] &&
		       [ \"\$(grep -a -c '^parent: STACKCLOCK_' '$TMP/pl.out')\" = $hidden ]"
done
