#!/usr/bin/env bash
# report --by callsite when the caller is not instrumented (qsort calling a
# comparator, start_thread calling a thread function, a library of ours
# built without -finstrument-functions calling back): the runtime records
# the module of every call site, so those sites resolve to their module and,
# where it has symbols and lines, to function, file and line; never a bare
# 0x address in module [unknown].
. "$(dirname "$0")/lib.sh"
cc -g -O1 -fPIC -shared -o "$TMP/librepsites.so" "$PROGS/rep_sites_lib.c" || exit 1
cc -g -O1 -pthread -finstrument-functions -o "$TMP/rep_sites" "$PROGS/rep_sites.c" \
	-L"$TMP" -lrepsites -Wl,-rpath,"$TMP" || exit 1
D=$TMP/s.data
check "record -m instrument" -- "$STACKCLOCK" record -m instrument -o "$D" -- "$TMP/rep_sites"
check "report --by callsite --check" -- \
	sh -c "'$STACKCLOCK' report -i '$D' --by callsite --format json --check > '$TMP/cs.json'"
invariants "$TMP/cs.json"
site() { echo "[x for x in rows if x['callee'] == '$1']"; }
check "the library's call site: lib_each, its file and line, 25 calls" -- \
	q "$TMP/cs.json" "exit(0 if [(x['function'], x['module'].endswith('/librepsites.so'), x['file'].endswith('rep_sites_lib.c'), x['line'], x['calls']) for x in $(site visit)] == [('lib_each', True, True, 9, 25)] else 1)"
check "qsort's comparator: the call site is in libc, not [unknown]" -- \
	q "$TMP/cs.json" "exit(0 if $(site cmp_int) and all('/libc.so' in x['module'] for x in $(site cmp_int)) and sum(x['calls'] for x in $(site cmp_int)) > 100 else 1)"
check "the thread function: called once from libc (start_thread)" -- \
	q "$TMP/cs.json" "exit(0 if [('/libc.so' in x['module'], x['calls']) for x in $(site worker)] == [(True, 1)] else 1)"
check "main is called from libc too" -- \
	q "$TMP/cs.json" "exit(0 if [('/libc.so' in x['module']) for x in $(site main)] == [True] else 1)"
# libc's own static functions have names only with its debug symbols
# (Debian's libc6-dbg): check them where they can be known
if q "$TMP/cs.json" "exit(0 if not $(site worker)[0]['function'].startswith('0x') else 1)" >/dev/null 2>&1; then
	check "with libc's debug symbols: start_thread calls worker" -- \
		q "$TMP/cs.json" "exit(0 if $(site worker)[0]['function'] == 'start_thread' and $(site worker)[0]['line'] else 1)"
else
	echo "# libc has no debug symbols here (libc6-dbg): its call sites are named by address"
	check "without them: the libc call site is still named by module" -- \
		q "$TMP/cs.json" "exit(0 if $(site worker)[0]['module'].endswith('libc.so.6') else 1)"
fi
check "callsite table names lib_each:9 -> visit" -- \
	sh -c "'$STACKCLOCK' report -i '$D' --by callsite | grep -q 'lib_each:9 -> visit'"
echo "1..$_n"
