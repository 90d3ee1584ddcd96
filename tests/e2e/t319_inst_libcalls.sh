#!/usr/bin/env bash
# Calls into other modules as rows (SPEC section 11), through PLT/GOT hooks,
# exact against the program's own counts (tests/progs/e2e_libcalls.c), built
# with gcc and clang, with the hooks and patched, with lazy binding, with
# immediate binding and full RELRO (the GOT read-only), and with -fno-plt
# (calls through the GOT, no PLT):
#  - named by the symbol called: memcpy and memmove rows (one IFUNC
#    variant serves both), nanosleep-like aliases by the called name;
#  - qsort's comparator, a signal handler inside raise(), a thread's start
#    routine and an atexit handler under exit(): callbacks nested in the
#    library call that runs them;
#  - longjmp out of qsort's comparator; fork (the child's rows named too);
#  - dlopen'ed library with hooks: its own calls out; a dlsym'd pointer to
#    a libc function is not hooked; a pointer the program takes stays the
#    function's own (getuid == dlsym's);
#  - --libcalls=all adds the calls a library without probes makes (libplain's
#    strlen), --libcalls=none removes every library row;
#  - a 100 us timer whose handler makes library calls while the main thread
#    makes them: signals inside the probes, counts exact;
#  - a C++ exception thrown by qsort's comparator through qsort's frame;
#  - floats, long doubles, a variadic call with doubles, a complex and a
#    structure result: the values the program prints are the same recorded
#    (the library-call stubs keep only the argument and return registers).
# san: skip (the runtime and the targets are never sanitized)
. "$(dirname "$0")/lib.sh"

N=1000
gcc -O1 -fPIC -shared -fno-builtin -o "$TMP/libplain.so" "$PROGS/e2e_libcalls_lib.c" &&
gcc -O1 -fPIC -shared -fno-builtin -finstrument-functions -DHOOKED -o "$TMP/libhooked.so" \
	"$PROGS/e2e_libcalls_lib.c" || exit 1

# name:compiler:flags
variants=(
	"gcc-lazy:gcc:-finstrument-functions -Wl,-z,lazy"
	"gcc-now:gcc:-finstrument-functions -Wl,-z,now,-z,relro"
	"gcc-noplt:gcc:-finstrument-functions -fno-plt"
	"clang-lazy:clang:-finstrument-functions -Wl,-z,lazy"
	"clang-noplt-now:clang:-finstrument-functions -fno-plt -Wl,-z,now,-z,relro"
	"patched-gcc-lazy:gcc:-Wl,-z,lazy"
	"patched-gcc-now:gcc:-Wl,-z,now,-z,relro"
	"patched-clang-noplt:clang:-fno-plt"
)
for v in "${variants[@]}"; do
	IFS=: read -r name cc flags <<<"$v"
	command -v $cc >/dev/null || { ok 0 "# SKIP $name: no $cc"; continue; }
	$cc -O1 -g -fno-builtin -pthread $flags -o "$TMP/lc_$name" "$PROGS/e2e_libcalls.c" \
		-L"$TMP" -lplain -Wl,-rpath,"$TMP" -ldl -lm || exit 1
	rec "$TMP/lc.data" "$TMP/lc.out" "$TMP/lc.err" "$TMP/lc_$name" $N "$TMP/libhooked.so"
	check "$name: recorded, status 0, the program's own checks ($(tr '\n' ' ' <"$TMP/lc.out"))" -- \
		sh -c "[ \$(cat '$TMP/rc') = 0 ] && grep -qx 'identity 1' '$TMP/lc.out' && grep -q 'handler 5 jumps 3' '$TMP/lc.out'"
	report_json "$TMP/lc.data" "$TMP/lc.json" --top 0
	invariants "$TMP/lc.json"
	cmp=$(sed -n 's/^cmp \([0-9]*\) .*/\1/p' "$TMP/lc.out")
	calls() { q "$TMP/lc.json" "next((x['calls'] for x in rows if x['function'] == '$1'), None)"; }
	# clang -fno-plt loads a GOT slot into a register ahead of a loop and
	# calls through it: such a slot is left alone (it could be a pointer
	# the program compares), so those functions have no row, never a
	# wrong count; the calls through "call *slot(%rip)" are all counted
	miss=0; case $name in *clang-noplt*) miss=1 ;; esac
	check "$name: exact library calls (getppid $(calls getppid), memcpy $(calls memcpy), memmove $(calls memmove), qsort $(calls qsort), raise $(calls raise), getpid $(calls getpid), pthread_create $(calls pthread_create), strlen $(calls strlen), getpgrp $(calls getpgrp), plain_work $(calls plain_work), exit $(calls exit))${miss/1/, or no row where clang hoisted the slot}" -- \
		q "$TMP/lc.json" "exit(0 if all(next((x['calls'] for x in rows if x['function'] == f), None) in ((e, None) if $miss and f not in ('qsort', 'plain_work', 'exit', 'getpid', 'strlen') else (e,)) for f, e in zip(('getppid', 'memcpy', 'memmove', 'qsort', 'raise', 'getpid', 'pthread_create', 'pthread_join', 'strlen', 'getpgrp', 'plain_work', 'exit', 'fork'), ($N + 201, 1000, 500, 4, 5, 5, 2, 2, 12, 10, 1, 1, 1))) else 1)"
	check "$name: the program's own functions exact (cmp_int $cmp, on_usr1 5, thread_fn 2, at_exit_fn 1, lib_work 4)" -- \
		q "$TMP/lc.json" "exit(0 if [row(f)['calls'] for f in ('cmp_int', 'on_usr1', 'thread_fn', 'at_exit_fn', 'lib_work')] == [$cmp, 5, 2, 1, 4] else 1)"
	check "$name: rows in the module that defines them, by the name called (no IFUNC variant, no internal alias)" -- \
		q "$TMP/lc.json" "exit(0 if row('qsort')['module'].endswith('/libc.so.6') and row('plain_work')['module'].endswith('/libplain.so') and not [x['function'] for x in rows if any(k in x['function'] for k in ('avx', 'sse2', 'erms', 'evex')) or (x['function'].startswith('_') and x['function'] != '__cxa_atexit')] else 1)"
	check "$name: only the jumps repaired (repairs $(q "$TMP/lc.json" "s['repairs_by_cause']"))" -- \
		q "$TMP/lc.json" "exit(0 if all(s['repairs_by_cause'][k] == 0 for k in ('exception', 'signal', 'other')) else 1)"
	report_json "$TMP/lc.data" "$TMP/lct.json" --tree --threshold 0
	check "$name: callbacks under the library call that runs them (raise > on_usr1 > getpid, qsort > cmp_int, exit > at_exit_fn > getppid, lib_work > strlen)" -- \
		q "$TMP/lct.json" "exit(0 if ($miss or node('main', 'raise', 'on_usr1', 'getpid')['calls'] == 5) and node('main', 'qsort', 'cmp_int')['calls'] > 0 and node('main', 'jump_through_qsort', 'qsort', 'cmp_int')['calls'] == 3 and node('main', 'exit', 'at_exit_fn')['calls'] == 1 and ($miss or node('main', 'exit', 'at_exit_fn', 'getppid')['calls'] == 1) and node('main', 'lib_work', 'strlen')['calls'] == 12 and ($miss or node('thread_fn', 'getppid')['calls'] == 200) else 1)"
done

# float, long double, variadic, complex and structure arguments and results:
# the same values recorded as not, every call counted
for name in gcc-lazy gcc-noplt clang-lazy patched-gcc-now patched-clang-noplt; do
	[ -x "$TMP/lc_$name" ] || continue
	"$TMP/lc_$name" values 300 >"$TMP/val.plain" 2>&1
	rec "$TMP/val.data" "$TMP/val.out" "$TMP/val.err" "$TMP/lc_$name" values 300
	check "$name values: status 0, the printed values identical recorded ($(head -1 "$TMP/val.out"))" -- \
		sh -c "[ \$(cat '$TMP/rc') = 0 ] && grep -q '^values 0x' '$TMP/val.plain' && cmp -s '$TMP/val.plain' '$TMP/val.out'"
	report_json "$TMP/val.data" "$TMP/val.json" --top 0
	miss=0; case $name in *clang-noplt*) miss=1 ;; esac
	check "$name values: pow, powf, sqrtl, fmal, ldexp, snprintf 300 each, cexp and ldiv 1 ($(q "$TMP/val.json" "[next((x['calls'] for x in rows if x['function'] == f), None) for f in ('pow', 'powf', 'sqrtl', 'fmal', 'ldexp', 'snprintf', 'cexp', 'ldiv')]")$([ $miss = 1 ] && echo ', or no row where clang hoisted the slot'))" -- \
		q "$TMP/val.json" "exit(0 if all(next((x['calls'] for x in rows if x['function'] == f), None) in ((e, None) if $miss else (e,)) for f, e in (('pow', 300), ('powf', 300), ('sqrtl', 300), ('fmal', 300), ('ldexp', 300), ('snprintf', 300), ('cexp', 1), ('ldiv', 1))) else 1)"
done

# the views: caller/callee, folded stacks, diff of two runs
name=gcc-lazy
for k in 1 2; do
	"$STACKCLOCK" record -m instrument -o "$TMP/g$k.data" -- "$TMP/lc_$name" $N "$TMP/libhooked.so" >/dev/null 2>&1
done
"$STACKCLOCK" report -i "$TMP/g1.data" --caller-callee qsort --format json >"$TMP/cc.json"
check "caller/callee of qsort: callers main 1 and jump_through_qsort 3, callee cmp_int" -- python3 -c "
import json, sys
r = json.load(open('$TMP/cc.json'))
callers = sorted((x['function'], x['calls']) for x in r['callers'])
sys.exit(0 if callers == [('jump_through_qsort', 3), ('main', 1)] and [x['function'] for x in r['callees']] == ['cmp_int'] else 1)"
"$STACKCLOCK" export -i "$TMP/g1.data" --format folded --value calls -o "$TMP/g1.folded"
check "folded: main;raise;on_usr1;getpid 5, main;exit;at_exit_fn;getppid 1" -- \
	sh -c "grep -qx 'main;raise;on_usr1;getpid 5' '$TMP/g1.folded' && grep -qx 'main;exit;at_exit_fn;getppid 1' '$TMP/g1.folded'"
"$STACKCLOCK" diff "$TMP/g1.data" "$TMP/g2.data" --format json >"$TMP/d.json"
check "diff of two runs: memcpy 1000 and getppid $N + 201 on both sides, delta 0" -- python3 -c "
import json, sys
r = {x['function']: x for x in json.load(open('$TMP/d.json'))['rows']}
sys.exit(0 if all((r[f]['base_calls'], r[f]['new_calls'], r[f]['delta_calls']) == (c, c, 0) for f, c in (('memcpy', 1000), ('getppid', $N + 201))) else 1)"

# --libcalls=all: libplain's own call out is a row too; none: no library row
"$STACKCLOCK" record -m instrument --libcalls=all -o "$TMP/all.data" -- "$TMP/lc_$name" $N "$TMP/libhooked.so" >/dev/null 2>&1
report_json "$TMP/all.data" "$TMP/all.json" --top 0
check "--libcalls=all: strlen 17 (12 from the hooked library, 5 from libplain), getppid $N + 201" -- \
	q "$TMP/all.json" "exit(0 if (row('strlen')['calls'], row('getppid')['calls']) == (17, $N + 201) else 1)"
report_json "$TMP/all.data" "$TMP/allt.json" --tree --threshold 0
check "--libcalls=all: plain_work > strlen 5" -- q "$TMP/allt.json" "exit(0 if node('main', 'plain_work', 'strlen')['calls'] == 5 else 1)"
"$STACKCLOCK" record -m instrument --libcalls=none -o "$TMP/none.data" -- "$TMP/lc_$name" $N "$TMP/libhooked.so" >"$TMP/none.out" 2>&1
report_json "$TMP/none.data" "$TMP/none.json" --top 0
check "--libcalls=none: no row outside the program and its hooked library ($(q "$TMP/none.json" "sorted(set(x['module'].rsplit('/', 1)[-1] for x in rows))"))" -- \
	q "$TMP/none.json" "exit(0 if all(x['module'].endswith(('/lc_$name', '/libhooked.so')) for x in rows) and row('cmp_int')['calls'] > 0 else 1)"

# bad input
"$STACKCLOCK" record -m instrument --libcalls=some -o "$TMP/x.data" -- true 2>"$TMP/bad.err"
ok $(( $? == 0 )) "--libcalls=some is refused"
check "  ... in one line naming the values" -- sh -c "[ \$(wc -l <'$TMP/bad.err') = 1 ] && grep -q 'program, all or none' '$TMP/bad.err'"
"$STACKCLOCK" record --libcalls=all -o "$TMP/x.data" -- true 2>"$TMP/bad.err"
ok $(( $? == 0 )) "--libcalls with sampling is refused"
check "  ... saying it is for -m instrument" -- grep -q "libcalls is for '-m instrument'" "$TMP/bad.err"

# signals inside the probes: a 100 us timer's handler calls getpid while the
# main thread calls getppid
for name in gcc-lazy patched-gcc-now; do
	rec "$TMP/sig.data" "$TMP/sig.out" "$TMP/sig.err" "$TMP/lc_$name" sig 300000
	h=$(sed -n 's/^handler //p' "$TMP/sig.out")
	report_json "$TMP/sig.data" "$TMP/sig.json" --top 0
	check "$name sig: getppid 300000, getpid = the handler's $h calls, on_alarm $h ($(q "$TMP/sig.json" "(row('getppid')['calls'], row('getpid')['calls'], row('on_alarm')['calls'])"))" -- \
		q "$TMP/sig.json" "exit(0 if (row('getppid')['calls'], row('getpid')['calls'], row('on_alarm')['calls']) == (300000, $h, $h) and $h > 10 else 1)"
done

# vfork + exec (exec and _exit not hooked: the child runs on the parent's
# stack); abort() from a function: the library call's frame left open
for name in gcc-lazy patched-gcc-now; do
	rec "$TMP/vf.data" "$TMP/vf.out" "$TMP/vf.err" "$TMP/lc_$name" vfork 50
	report_json "$TMP/vf.data" "$TMP/vf.json" --top 0
	check "$name vfork: status 0, getppid 50, waitpid 1, vfork not a row, nothing repaired ($(q "$TMP/vf.json" "(s['repairs'], s['open_frames'])"))" -- \
		q "$TMP/vf.json" "exit(0 if open('$TMP/rc').read().strip() == '0' and (row('getppid')['calls'], row('waitpid')['calls'], s['repairs'], s['open_frames']) == (50, 1, 0, 0) and not any(x['function'] in ('vfork', 'execl') for x in rows) else 1)"
	rec "$TMP/ab.data" "$TMP/ab.out" "$TMP/ab.err" "$TMP/lc_$name" abort 50
	report_json "$TMP/ab.data" "$TMP/ab.json" --top 0
	check "$name abort: killed by SIGABRT (status $(cat "$TMP/rc")), getppid 50, abort 1 under die, its frame open ($(q "$TMP/ab.json" "(s['open_frames'], s['repairs_by_cause'])"))" -- \
		q "$TMP/ab.json" "exit(0 if open('$TMP/rc').read().strip() == '134' and (row('getppid')['calls'], row('abort')['calls'], row('die')['calls']) == (50, 1, 1) and s['open_frames'] == 4 and s['repairs'] == 0 else 1)"
done

# a C++ exception through qsort's frame
for cxx in g++ clang++; do
	command -v $cxx >/dev/null || continue
	for how in hooks patched; do
		f=; [ $how = hooks ] && f=-finstrument-functions
		$cxx -O1 $f -o "$TMP/thr" "$PROGS/e2e_libcalls_throw.cc" || exit 1
		rec "$TMP/t.data" "$TMP/t.out" "$TMP/t.err" "$TMP/thr" 100
		report_json "$TMP/t.data" "$TMP/t.json" --top 0
		check "$cxx $how: 100 throws through qsort caught, qsort 101 and sort_some 101 calls, operator new 100 (demangled), repairs only the exceptions' ($(cat "$TMP/t.out"); $(q "$TMP/t.json" "s['repairs_by_cause']"))" -- \
			q "$TMP/t.json" "exit(0 if open('$TMP/t.out').read().startswith('caught 100 ') and row('qsort')['calls'] == 101 and row('sort_some(int*, int)')['calls'] == 101 and row('operator new(unsigned long)')['calls'] == 100 and all(s['repairs_by_cause'][k] == 0 for k in ('longjmp', 'signal', 'other')) else 1)"
	done
done

# a library function's tail call into the program (e2e_libtail_lib.c: a
# jump, as libstdc++'s std::string constructors jump to the program's own
# _M_construct): the function's return address is the library call's
# trampoline.  As a patched function's tail call: the library call's frame
# ends at the jump, and the function takes its place (its caller, its call
# site), returning straight to the program.  Before, with the hooks, that
# frame was closed by position at the entry and its return counted again:
# 2 repairs a call (LevelDB's db_bench: 2,032).
gcc -O1 -fPIC -shared -o "$TMP/libtail.so" "$PROGS/e2e_libtail_lib.c" || exit 1
for how in gcc-hooks clang-hooks patched; do
	cc=${how%%-*}; f=; [ $how != patched ] && f=-finstrument-functions; [ $how = patched ] && cc=gcc
	$cc -O1 $f -o "$TMP/tail_$how" "$PROGS/e2e_libtail.c" -L"$TMP" -ltail -Wl,-rpath,"$TMP" || exit 1
	rec "$TMP/tl.data" "$TMP/tl.out" "$TMP/tl.err" "$TMP/tail_$how" 1000
	report_json "$TMP/tl.data" "$TMP/tl.json" --top 0
	report_json "$TMP/tl.data" "$TMP/tl_tree.json" --tree --threshold 0
	check "$how: a library's tail call into cb: its output ($(cat "$TMP/tl.out")), lib_then 1000, cb 1000, no repair ($(q "$TMP/tl.json" "s['repairs_by_cause']"))" -- \
		q "$TMP/tl.json" "exit(0 if open('$TMP/tl.out').read().strip() == '499500' and (row('lib_then')['calls'], row('cb')['calls'], s['repairs']) == (1000, 1000, 0) else 1)"
	check "$how: cb in lib_then's place (main > cb: 1000; lib_then with no callee)" -- \
		q "$TMP/tl_tree.json" "exit(0 if node('main', 'cb')['calls'] == 1000 and node('main', 'lib_then')['calls'] == 1000 and not node('main', 'lib_then').get('children') else 1)"
done
