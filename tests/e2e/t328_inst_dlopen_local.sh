#!/usr/bin/env bash
# Objects dlopen()ed RTLD_LOCAL, whose libraries are in their own scope only:
#  - a C host (no unwinder of its own) whose C++ extension throws: the
#    runtime's wrappers of _Unwind_RaiseException, __cxa_begin_catch, ...
#    found no real function with dlsym() (libgcc_s and libstdc++ are in the
#    extension's scope) and called address 0 (SIGSEGV at the first throw);
#    now the first definition in load order;
#  - two plugins linked with one library, dlopen()ed one after the other:
#    the second's lazily bound calls into the library (loaded by the first)
#    stayed unhooked, no rows (300 of 800 calls counted); now its
#    dependencies are searched as the loader does, 800 as with LD_BIND_NOW;
#  - a wrapper whose real function no object defines exits 127 with one
#    line, as the loader's symbol lookup error (a jump to 0 before).
# san: skip (the runtime and the targets are never sanitized)
. "$(dirname "$0")/lib.sh"

cd "$TMP" || exit 1
g++ -O1 -g -fPIC -fno-optimize-sibling-calls -shared -o e2e_rtld_local_ext.so "$PROGS/e2e_rtld_local_ext.cc" ||
	exit 1
for v in "${BUILD_VARIANTS[@]}"; do
	IFS=: read -r name cc flags <<<"$v"
	command -v $cc >/dev/null || { echo "ok 1 # skip no $cc"; continue; }
	$cc -O1 -g $flags -o "rl_$name" "$PROGS/e2e_rtld_local.c" -ldl || exit 1
	modes=("patch:--patch all")
	[ "$name" = patched ] || modes=("hooks:" "${modes[@]}")
	for m in "${modes[@]}"; do
		IFS=: read -r mname mopts <<<"$m"
		t=rl_${name}_$mname
		REC_OPTS=$mopts rec "$t.data" "$t.out" "$t.err" "./rl_$name" "$TMP/e2e_rtld_local_ext.so" 100
		check "$name $mname: record exits 0, the program prints \"caught 100\" ($(cat rc), $(cat "$t.out"))" -- \
			test "$(cat rc):$(cat "$t.out")" = "0:caught 100"
		report_json "$t.data" "$t.json"
		if [ "$mname" = patch ]; then
			check "$name $mname: depth(int) 600 calls (100 x 6), ext_run 1, 0 repairs, no frame open ($(q "$t.json" "[row('depth(int)')['calls'], s['repairs'], s['open_frames']]"))" -- \
				q "$t.json" "exit(0 if (row('depth(int)')['calls'], row('ext_run')['calls'], row('main')['calls'], s['repairs'], s['open_frames']) == (600, 1, 1, 0, 0) else 1)"
		else
			check "$name $mname: main 1 call, 0 repairs, no frame open ($(q "$t.json" "[s['repairs'], s['open_frames']]"))" -- \
				q "$t.json" "exit(0 if (row('main')['calls'], s['repairs'], s['open_frames']) == (1, 0, 0) else 1)"
		fi
	done
done

# a wrapper with no real function anywhere: the loader's answer (one line,
# 127), never a call of address 0 (SIGSEGV before)
gcc -O1 -g -o rl_missing "$PROGS/e2e_rtld_missing.c" -ldl || exit 1
rec missing.data missing.out missing.err ./rl_missing
check "no real _Unwind_SetIP: exit 127, one line from the runtime ($(cat rc), $(grep -c 'symbol lookup error' missing.err))" -- \
	test "$(cat rc):$(cat missing.out):$(grep -cx 'stackclock: symbol lookup error: no loaded object defines _Unwind_SetIP' missing.err)" = "127:found:1"

# plug_a calls dep_fn() 300 times, plug_b 500 times, all lazily bound
gcc -O1 -g -fPIC -shared -Wl,-z,lazy -o libdep.so "$PROGS/e2e_dlshared_dep.c" || exit 1
for p in a b; do
	gcc -O1 -g -fPIC -shared -finstrument-functions -Wl,-z,lazy -DNAME=plug_$p -o libplug_$p.so \
		"$PROGS/e2e_dlshared_plug.c" -L. -ldep -Wl,-rpath,"$TMP" || exit 1
done
for cc in gcc clang; do
	command -v $cc >/dev/null || { echo "ok 1 # skip no $cc"; continue; }
	$cc -O1 -g -finstrument-functions -Wl,-z,lazy -o "dls_$cc" "$PROGS/e2e_dlshared.c" -ldl || exit 1
	for bind in lazy now; do
		t=dls_${cc}_$bind
		if [ $bind = now ]; then    # as before the fix too
			LD_BIND_NOW=1 rec "$t.data" "$t.out" "$t.err" "./dls_$cc" 300 500 "$TMP"
		else
			rec "$t.data" "$t.out" "$t.err" "./dls_$cc" 300 500 "$TMP"
		fi
		check "$cc $bind: record exits 0, the program's sum ($(cat rc), $(cat "$t.out"))" -- \
			test "$(cat rc):$(cat "$t.out")" = "0:sum 509600"
		report_json "$t.data" "$t.json"
		check "$cc $bind: dep_fn 800 calls as library-call rows (300 from plug_a, 500 from plug_b) ($(q "$t.json" "row('dep_fn')['calls']"))" -- \
			q "$t.json" "exit(0 if (row('dep_fn')['calls'], row('plug_a')['calls'], row('plug_b')['calls'], s['repairs'], s['open_frames']) == (800, 1, 1, 0, 0) else 1)"
	done
done
