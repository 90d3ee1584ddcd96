#!/usr/bin/env bash
# Instrumentation of programs that define C library functions themselves
# (malloc, free, calloc, realloc, getenv, open, close, clock_gettime), the
# ideas of uftrace's s-malloc-hook, s-malloc-fork and s-malloc-tsd tests
# rewritten: the runtime's own work adds no call to them (the program counts
# the same with and without the profiler) and the report shows exactly the
# program's counts.
# san: skip (the runtime's isolation from the program's libc functions)
. "$(dirname "$0")/lib.sh"

# counts FILE: "name total" over every process's lines
counts() { awk '{ n[$2] += $3 } END { for (k in n) print k, n[k] }' "$1" | sort; }

# gcc and clang with the hooks, and patched (the runtime's set-up differs:
# the return stack's real unwinder functions are looked up at start, and a
# failed dlsym() of them called the program's malloc 9 times)
for v in "${BUILD_VARIANTS[@]}"; do
	IFS=: read -r cc ccmd flags <<<"$v"
	command -v $ccmd >/dev/null || continue
	# -fno-builtin: the compiler must not fold malloc/free pairs away
	$ccmd -g -O1 -fno-builtin -pthread $flags -o "$TMP/ld_$cc" "$PROGS/e2e_libcdefs.c" || exit 1
	for mode in hook fork tsd; do
		rm -f "$TMP/alone" "$TMP/under"
		LIBCDEFS_OUT=$TMP/alone "$TMP/ld_$cc" $mode
		LIBCDEFS_OUT=$TMP/under "$STACKCLOCK" record -m instrument -o "$TMP/$mode.data" -- "$TMP/ld_$cc" $mode
		ok $? "$cc $mode: recorded"
		counts "$TMP/alone" >"$TMP/alone.c"
		counts "$TMP/under" >"$TMP/under.c"
		check "$cc $mode: the program counts the same calls with and without the profiler" -- \
			cmp "$TMP/alone.c" "$TMP/under.c"
		report_json "$TMP/$mode.data" "$TMP/$mode.json"
		bad=""
		while read -r name n; do
			got=$(q "$TMP/$mode.json" "sum(x['calls'] for x in rows if x['function'] == '$name')")
			[ "$got" = "$n" ] || bad="$bad $name:$got/$n"
		done <"$TMP/alone.c"
		ok $([ -z "$bad" ]; echo $?) "$cc $mode: every count in the report equals the program's own${bad:+ (got/want:$bad)}"
	done
	check "$cc hook: malloc 10, calloc 2, realloc 3, open 4, close 4, clock_gettime 5, getenv 4" -- \
		q "$TMP/hook.json" "exit(0 if [row(f)['calls'] for f in ('malloc', 'calloc', 'realloc', 'open', 'close', 'clock_gettime', 'getenv')] == [10, 2, 3, 4, 4, 5, 4] else 1)"
	check "$cc fork: malloc 5 in the parent + 7 in the child, main one call" -- \
		q "$TMP/fork.json" "exit(0 if row('malloc')['calls'] == 12 and row('main')['calls'] == 1 and s['processes'] == 2 else 1)"
	check "$cc tsd: 4 threads, each block freed by the key's destructor" -- \
		q "$TMP/tsd.json" "exit(0 if row('tsd_thread')['calls'] == 4 and row('tsd_release')['calls'] == 4 and s['threads'] == 5 else 1)"
done

# The runtime imports nothing a program may define: only the loader's and
# the thread library's entry points (a compiler may turn a byte loop into a
# call to strlen or memset, which would then be the program's).  Attaching
# (attach.c) adds the thread library's pthread_create, pthread_detach and
# pthread_key_delete: the runtime's own thread, and its key removed.
rt="$(dirname "$STACKCLOCK")/libstackclock.so"
extra=$(nm -D --undefined-only "$rt" | awk '$1 == "U" { sub(/@.*/, "", $2); print $2 }' |
	grep -Ev '^(__environ|__errno_location|__libc_stack_end|__register_atfork|dl_iterate_phdr|dladdr1|dlinfo|dlsym|pthread_create|pthread_detach|pthread_key_create|pthread_key_delete|pthread_once|pthread_setspecific)$')
check "the runtime imports only loader and thread-library functions${extra:+ (also: $(echo $extra))}" -- test -z "$extra"
