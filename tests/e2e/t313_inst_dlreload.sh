#!/usr/bin/env bash
# Instrumentation across dlclose and a dlopen of another library mapped at
# the same address: each library's calls are its own, under its own names
# and module (the first library's addresses are retired at its dlclose).
. "$(dirname "$0")/lib.sh"
for cc in gcc clang; do
	command -v $cc >/dev/null || continue
	mkdir -p "$TMP/$cc"
	$cc -g -O1 -fPIC -shared -finstrument-functions -DWHICH=a -o "$TMP/$cc/liba.so" "$PROGS/e2e_dlreload_lib.c" &&
	$cc -g -O1 -fPIC -shared -finstrument-functions -DWHICH=b -o "$TMP/$cc/libb.so" "$PROGS/e2e_dlreload_lib.c" &&
	$cc -g -O1 -finstrument-functions -o "$TMP/$cc/dlr" "$PROGS/e2e_dlreload.c" -ldl || exit 1
	# relative paths, as programs often pass them: the runtime makes them absolute
	(cd "$TMP/$cc" && "$STACKCLOCK" record -m instrument -o "$TMP/d.data" -- ./dlr ./liba.so ./libb.so) 2>"$TMP/d.err"
	ok $? "$cc: recorded"
	check "$cc: the loader put the second library where the first was" -- grep -q "same base: 1" "$TMP/d.err"
	report_json "$TMP/d.data" "$TMP/d.json"
	check "$cc: a_entry 5 and lib_fn_a 5 calls, in liba.so ($(q "$TMP/d.json" "[(x['function'], x['calls']) for x in rows]"))" -- \
		q "$TMP/d.json" "exit(0 if (row('a_entry')['calls'], row('lib_fn_a')['calls']) == (5, 5) and row('a_entry')['module'].endswith('/liba.so') else 1)"
	check "$cc: b_entry 7 and lib_fn_b 7 calls, in libb.so" -- \
		q "$TMP/d.json" "exit(0 if (row('b_entry')['calls'], row('lib_fn_b')['calls']) == (7, 7) and row('b_entry')['module'].endswith('/libb.so') else 1)"
	check "$cc: no row without a name" -- q "$TMP/d.json" "exit(0 if all('+0x' not in x['function'] for x in rows) else 1)"
done
