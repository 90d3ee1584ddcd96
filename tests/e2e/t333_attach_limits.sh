#!/usr/bin/env bash
# san: skip (the runtime is loaded into a running program; no tool code the sanitizers watch runs there)
# How many times one process can be attached to (issue 30): each attach
# loads a copy of the runtime, which keeps its initial-exec TLS (120 bytes)
# of glibc's static TLS surplus (about 1,700 bytes by default).  The 15th
# attach is refused in one line that says why and how to get more room,
# status 125, the process going on; started with
# GLIBC_TUNABLES=glibc.rtld.optional_static_tls=8192, it takes 20 attaches,
# each with its exact counts.  And a library built with the hooks that the
# process loads while attached (dlopen): its calls are not counted, and the
# recorder says so in one warning naming it.
. "$(dirname "$0")/lib.sh"
build burst e2e_attach_burst.c -O2 || exit 1
cc -g -O2 -shared -fPIC -finstrument-functions -o "$TMP/libdlw.so" "$PROGS/e2e_attach_dl_lib.c" || exit 1
tls=$(( $(readelf -lW "$(dirname "$STACKCLOCK")/libstackclock.so" | awk '$1 == "TLS" { print $6 }') ))

attach_n() {	# attach_n N: N attaches of 0.05 s to $pid; how many succeeded before the first failure
	local i
	for i in $(seq "$1"); do
		"$STACKCLOCK" record -m instrument -p "$pid" --duration 0.05 -o "$TMP/a.data" \
			>"$TMP/a.out" 2>"$TMP/a.err" || { echo $((i - 1)); return; }
	done
	echo "$1"
}

"$TMP/burst" "$TMP/st" &
pid=$!
for _ in $(seq 100); do [ -s "$TMP/st" ] && break; sleep 0.02; done
n=$(attach_n 14)
ok $(( n == 14 ? 0 : 1 )) "14 attaches in a row to one process ($n)" || sed 's/^/#   /' "$TMP/a.err"
"$STACKCLOCK" record -m instrument -p "$pid" --duration 0.05 -o "$TMP/a.data" >"$TMP/a.out" 2>"$TMP/a.err"
rc=$?
want="stackclock: record: cannot load another runtime into process $pid: it was attached to 14 times, and the C library's static TLS has no room left for one more (each attach keeps $tls bytes of it; dlopen failed in process $pid: .*libstackclock.attach-[0-9]*-14.so: cannot allocate memory in static TLS block); restart it to attach again, with GLIBC_TUNABLES=glibc.rtld.optional_static_tls=8192 in its environment for room for over 60"
ok $([ $rc = 125 ] && [ "$(wc -l <"$TMP/a.err")" = 1 ] && grep -qx -- "$want" "$TMP/a.err" && [ ! -s "$TMP/a.out" ]; echo $?) \
	"the 15th is refused in one line saying why and what to do, status 125 ($rc: $(cat "$TMP/a.err"))"
kill -USR1 "$pid"
for _ in $(seq 100); do grep -q '^done 1$' "$TMP/st" && break; sleep 0.02; done
ok $(grep -qx 'done 1' "$TMP/st"; echo $?) "the process goes on after the refusal"
kill -TERM "$pid"
wait "$pid"
ok $? "and ends with status 0"

rm -f "$TMP/st"
GLIBC_TUNABLES=glibc.rtld.optional_static_tls=8192 "$TMP/burst" "$TMP/st" &
pid=$!
for _ in $(seq 100); do [ -s "$TMP/st" ] && break; sleep 0.02; done
n=$(attach_n 19)
ok $(( n == 19 ? 0 : 1 )) "with glibc.rtld.optional_static_tls=8192: 19 attaches in a row ($n)" || sed 's/^/#   /' "$TMP/a.err"
# the 20th, with an exact count: 1000 burst() calls made while attached
"$STACKCLOCK" record -m instrument -p "$pid" --duration 3 -o "$TMP/b.data" 2>"$TMP/b.err" &
rec=$!
for _ in $(seq 150); do python3 "$E2E_DIR/att_check.py" text "$pid" "$TMP/burst" >/dev/null 2>&1 || break; sleep 0.02; done
kill -USR1 "$pid"
wait $rec
ok $? "the 20th attach: status 0" || sed 's/^/#   /' "$TMP/b.err"
report_json "$TMP/b.data" "$TMP/b.json"
c=$(q "$TMP/b.json" "(row('burst')['calls'], row('leaf')['calls'])")
ok $([ "$c" = "(1000, 2000)" ]; echo $?) "its counts exact: 1000 burst and 2000 leaf calls ($c)"
kill -TERM "$pid"
wait "$pid"
ok $? "the process ends with status 0"

# a library with the hooks loaded while attached
rm -f "$TMP/st"
"$TMP/burst" "$TMP/st" "$TMP/libdlw.so" 2>"$TMP/dl.prog.err" &
pid=$!
for _ in $(seq 100); do [ -s "$TMP/st" ] && break; sleep 0.02; done
"$STACKCLOCK" record -m instrument -p "$pid" --duration 2 -o "$TMP/dl.data" 2>"$TMP/dl.err" &
rec=$!
for _ in $(seq 150); do python3 "$E2E_DIR/att_check.py" text "$pid" "$TMP/burst" >/dev/null 2>&1 || break; sleep 0.02; done
kill -USR1 "$pid"
wait $rec
ok $? "attached while it loads a library: status 0" || sed 's/^/#   /' "$TMP/dl.err"
want="stackclock: warning: record: 1 object built with -finstrument-functions was loaded by process $pid while attached (dlopen), and its calls are not counted: $TMP/libdlw.so (a library loaded so is instrumented only when the process is started by record)"
ok $(grep -qxF -- "$want" "$TMP/dl.err"; echo $?) "the library loaded while attached is named in one warning" ||
	sed 's/^/#   /' "$TMP/dl.err"
report_json "$TMP/dl.data" "$TMP/dl.json"
c=$(q "$TMP/dl.json" "(row('burst')['calls'], row('leaf')['calls'], 'dl_work' in [x['function'] for x in r['rows']])")
ok $([ "$c" = "(1000, 2000, False)" ]; echo $?) "the program's calls exact (1000 burst, 2000 leaf), none of the library's ($c)"
kill -TERM "$pid"
wait "$pid"
ok $([ $? = 0 ] && [ ! -s "$TMP/dl.prog.err" ]; echo $?) "the process ends with status 0, the library loaded ($(cat "$TMP/dl.prog.err"))"
echo "1..$_n"
