#!/usr/bin/env bash
# san: skip
# Debian's own binaries, patched at run time (SPEC section 10): gzip, sort,
# sha256sum and python3 running a short script write byte-identical output
# and end with the same exit status as without stackclock (a failing gzip
# -d too); the report lists their functions (stripped ones as
# FILE+0xOFFSET) with calls, the session the functions patched and the
# unpatched reasons, and python3's entry points are called exactly once.
. "$(dirname "$0")/lib.sh"
export STACKCLOCK_CACHE_DIR=$TMP/cache
seq 1 20000 >"$TMP/in.txt"
printf 'not gzip\n' >"$TMP/bad.gz"
PY=/usr/bin/python3.11   # Debian's (not a wrapper script found first in PATH)
[ -x "$PY" ] || PY=
cat >"$TMP/t.py" <<'EOF'
import json, hashlib
d = {str(i): i * i for i in range(2000)}
s = json.dumps(d, sort_keys=True)
print(len(s), hashlib.sha256(s.encode()).hexdigest())
EOF

# same NAME CMD...: output and exit status with and without stackclock
same() {
	local name=$1; shift
	[ -x "$1" ] || { echo "# $1: not here"; return 1; }
	"$@" >"$TMP/plain.out" 2>"$TMP/plain.err"
	local rc0=$?
	"$STACKCLOCK" record -m instrument -o "$TMP/$name.data" -- "$@" >"$TMP/rec.out" 2>"$TMP/rec.err"
	local rc1=$?
	"$STACKCLOCK" report -i "$TMP/$name.data" --format json >"$TMP/$name.json" 2>/dev/null
	local st
	st=$(q "$TMP/$name.json" "s['exit_status'] >> 8")
	[ $rc1 -eq $rc0 ] && cmp -s "$TMP/plain.out" "$TMP/rec.out" && [ "$st" = "$rc0" ]
	ok $? "$name: byte-identical output, exit status $rc0 (recorded: $st; record exits $rc1)"
	q "$TMP/$name.json" "exit(0 if s.get('patched', 0) > 0 and s.get('unpatched') else 1)"
	ok $? "$name: $(q "$TMP/$name.json" "s.get('patched')") functions patched, unpatched $(q "$TMP/$name.json" "s.get('unpatched')")"
}

rows_named() {	# rows_named NAME: the report lists functions with calls
	q "$TMP/$1.json" "exit(0 if len([x for x in rows if x['calls'] > 0]) >= 3 else 1)"
	ok $? "$1: functions listed with their calls ($(q "$TMP/$1.json" "len(rows)") rows)"
}

same gzip /usr/bin/gzip -9 -c "$TMP/in.txt" && rows_named gzip
same gzip-d /usr/bin/gzip -d -c "$TMP/bad.gz"
same sort /usr/bin/sort -r "$TMP/in.txt" && rows_named sort
same sha256sum /usr/bin/sha256sum "$TMP/in.txt" && rows_named sha256sum
if [ -n "$PY" ] && same python3 "$PY" "$TMP/t.py"; then
	rows_named python3
	q "$TMP/python3.json" "exit(0 if row('Py_BytesMain')['calls'] == 1 and row('Py_RunMain')['calls'] == 1 else 1)"
	ok $? "python3: Py_BytesMain and Py_RunMain called once each"
fi
