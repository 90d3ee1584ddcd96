#!/usr/bin/env bash
# Programs that break profiler runtimes (issue 16), processes and
# allocators, each with an exact expectation, built with gcc and clang with
# the hooks, and without them (patched at run time):
#  - a fork after RLIMIT_NOFILE was lowered to 3: the child recorded (from
#    the image file its parent made ahead), or, when the program closed
#    that too, the user told;
#  - an allocator of the program's own installed from .preinit_array
#    (probes before any constructor, before libc set __environ);
#  - AddressSanitizer builds (the ASan runtime must come first).
# san: skip (the runtime and the targets are never sanitized)
. "$(dirname "$0")/lib.sh"
PROG_CFLAGS="-O1 -pthread"
variants=("${BUILD_VARIANTS[@]}")

# ---- fork after RLIMIT_NOFILE lowered to 3 ----------------------------------
for v in "${variants[@]}"; do
	IFS=: read -r name cc flags <<<"$v"
	$cc -g $PROG_CFLAGS $flags -o "$TMP/nf_$name" "$PROGS/e2e_nofile.c" || exit 1
	lims=("3 3"); [ $name = gcc ] && lims=("3 3" "3 4096")
	for lim in "${lims[@]}"; do
		rec "$TMP/nf.data" "$TMP/nf.out" "$TMP/nf.err" "$TMP/nf_$name" $lim
		report_json "$TMP/nf.data" "$TMP/nf.json"
		check "nofile $name ($lim): 2 processes, work 6000, in_child 1, nothing lost" -- \
			q "$TMP/nf.json" "exit(0 if (s['processes'], row('work')['calls'], row('in_child')['calls'], s['lost_events']) == (2, 6000, 1, 0) else 1)"
	done
	# the program closes every descriptor (ours too) first: the child cannot
	# be recorded, and the user is told
	[ $name = clang ] && continue
	rec "$TMP/nf.data" "$TMP/nf.out" "$TMP/nf.err" "$TMP/nf_$name" 3 3 closeall
	report_json "$TMP/nf.data" "$TMP/nf.json"
	check "nofile $name closeall: the parent recorded (work 4000), the lost child said" -- \
		sh -c "grep -q 'forked children that could not be recorded' '$TMP/nf.err' && python3 '$E2E_DIR/sc.py' query '$TMP/nf.json' \"exit(0 if row('work')['calls'] == 4000 else 1)\""
done

# ---- an allocator installed from .preinit_array --------------------------------
for cc in gcc clang; do
	$cc -O0 -g -pthread -finstrument-functions -o "$TMP/pi_$cc" "$PROGS/e2e_preinit.c" -ldl || exit 1
	modes="plain fork tsd"; [ $cc = clang ] && modes=plain
	for mode in $modes; do
		rec "$TMP/pi.data" "$TMP/pi.out" "$TMP/pi.err" "$TMP/pi_$cc" $mode
		report_json "$TMP/pi.data" "$TMP/pi.json"
		case $mode in
		plain) w=100 procs=1 ;;
		fork) w=200 procs=2 ;;
		tsd) w=200 procs=1 ;;
		esac
		check "preinit $cc $mode: the preinit function, main and work counted ($w), malloc and free at least as often, $procs process(es)" -- \
			q "$TMP/pi.json" "exit(0 if (row('find_libc_allocator')['calls'], row('main')['calls'], row('work')['calls'], s['processes']) == (1, 1, $w, $procs) and row('malloc')['calls'] >= $w and row('free')['calls'] >= $w else 1)"
		[ $mode = tsd ] && check "preinit $cc tsd: the thread and its key's destructor counted" -- \
			q "$TMP/pi.json" "exit(0 if (row('thread_main')['calls'], row('tsd_dtor')['calls']) == (1, 1) else 1)"
	done
done

# ---- AddressSanitizer builds --------------------------------------------------------
for v in "${variants[@]}"; do
	IFS=: read -r name cc flags <<<"$v"
	$cc -O1 -g -fsanitize=address $flags -o "$TMP/as_$name" "$PROGS/e2e_asan.c" || exit 1
	rec "$TMP/as.data" "$TMP/as.out" "$TMP/as.err" "$TMP/as_$name"
	check "asan $name: same output (sum 495000), status 0" -- sh -c "grep -qx 'sum 495000' '$TMP/as.out' && [ \$(cat '$TMP/rc') = 0 ]"
	report_json "$TMP/as.data" "$TMP/as.json"
	check "asan $name: exact counts (main 1, mid 100, leaf 10000)" -- \
		q "$TMP/as.json" "exit(0 if (row('main')['calls'], row('mid')['calls'], row('leaf')['calls']) == (1, 100, 10000) else 1)"
done
