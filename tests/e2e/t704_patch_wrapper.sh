#!/usr/bin/env bash
# san: skip
# A program reached through a wrapper (SPEC section 10): `record -m
# instrument -- ./wrapper.sh` where the script execs, or runs, a program
# built without hooks.  The recorder can plan only the command it is given
# (a script here); every program exec'd later that has no hooks compiled
# in asks the recorder's binary for its plan before its code runs, so the
# program behind the wrapper is patched with exact counts (and so is the
# shell); a program with hooks behind a wrapper keeps its hooks; when no
# plan can be had, the report says that no instrumented code ran instead
# of blaming the kernel.  --patch names and all reach the libraries such a
# program loads, at start or by dlopen.
. "$(dirname "$0")/lib.sh"
export STACKCLOCK_CACHE_DIR=$TMP/cache
cd "$TMP" || exit 1
build_patch_dl || exit 1
printf '#!/bin/sh\nexec "$@"\n' >exec.sh
printf '#!/bin/sh\n"$@"\nst=$?\necho wrapper done\nexit $st\n' >run.sh
chmod +x exec.sh run.sh

counts() {	# counts JSON WANT: calls of main, a_work, a_leaf, b_work, b_leaf
	q "$1" "exit(0 if [sum(x['calls'] for x in rows if x['function'] == f) for f in ('main', 'a_work', 'a_leaf', 'b_work', 'b_leaf')] == [$2] else 1)"
}
got() { q "$1" "[(f, sum(x['calls'] for x in rows if x['function'] == f)) for f in ('main', 'a_work', 'a_leaf', 'b_work', 'b_leaf')]"; }

LIBS="$TMP/libpdla.so,$TMP/libpdlb.so"
for w in exec.sh run.sh; do
	for exe in patch_dl patch_dl_hooks; do
		./$w ./$exe 100 "$TMP/libpdlb.so" >plain.out
		"$STACKCLOCK" record -m instrument --patch "$LIBS" -o w.data -- ./$w ./$exe 100 "$TMP/libpdlb.so" \
			>rec.out 2>rec.err
		ok $? "$w ./$exe: recorded ($(head -c 300 rec.err))"
		cmp -s plain.out rec.out
		ok $? "$w ./$exe: same output"
		report_json w.data w.json
		counts w.json "1, 100, 1000, 100, 1000"
		ok $? "$w ./$exe: main 1, a_work 100, a_leaf 1000, b_work 100, b_leaf 1000 through the wrapper ($(got w.json))"
		# the shell itself was patched: its rows are dash's (stripped: FILE+0xOFFSET)
		q w.json "exit(0 if any(x['calls'] > 0 and x['module'].split('/')[-1] in ('dash', 'sh', 'bash') for x in rows) else 1)"
		ok $? "$w ./$exe: the shell's own functions are in the report too"
	done
done
# the hooks stay in use: the patched functions are the shell's and the
# libraries', never the program's own main
q w.json "exit(0 if len([x for x in rows if x['function'] == 'main' and x['module'].split('/')[-1] == 'patch_dl_hooks']) == 1 else 1)"
ok $? "patch_dl_hooks behind a wrapper: its main, through its hooks, once"

# --patch by name through a wrapper: the recorder sees only the script and
# finds neither library (they are in $TMP, loaded by the program it runs,
# one at start, one by dlopen); the runtime plans each when it is loaded
"$STACKCLOCK" record -m instrument --patch libpdla,libpdlb -o b.data -- ./exec.sh ./patch_dl 100 "$TMP/libpdlb.so" \
	>/dev/null 2>b.err
ok $? "exec.sh ./patch_dl with --patch libpdla,libpdlb by name: recorded ($(head -c 200 b.err))"
report_json b.data b.json
counts b.json "1, 100, 1000, 100, 1000"
ok $? "by name through the wrapper: main 1, a_work 100, a_leaf 1000, b_work 100, b_leaf 1000 ($(got b.json))"
"$STACKCLOCK" record -m instrument --patch all -o c.data -- ./run.sh ./patch_dl 100 "$TMP/libpdlb.so" >/dev/null 2>&1
report_json c.data c.json
counts c.json "1, 100, 1000, 100, 1000"
ok $? "--patch all through the wrapper: the same counts ($(got c.json))"

# Without --patch: only the programs (the shell and patch_dl) are patched;
# patch_dl's calls of a_work, in the library it links, are library calls
# (SPEC section 11), b_work's through dlsym's pointer are not
"$STACKCLOCK" record -m instrument -o n.data -- ./exec.sh ./patch_dl 100 "$TMP/libpdlb.so" >/dev/null 2>&1
report_json n.data n.json
counts n.json "1, 100, 0, 0, 0"
ok $? "exec.sh ./patch_dl without --patch: main 1, a_work 100 as a library call, the libraries unpatched ($(got n.json))"

# Debian's gzip behind a wrapper: byte-identical output, its functions listed
seq 1 20000 >in.txt
./exec.sh /usr/bin/gzip -c in.txt >plain.gz
"$STACKCLOCK" record -m instrument -o g.data -- ./exec.sh /usr/bin/gzip -c in.txt >rec.gz 2>/dev/null
cmp -s plain.gz rec.gz
ok $? "exec.sh gzip: byte-identical output"
report_json g.data g.json
q g.json "exit(0 if len([x for x in rows if x['module'].split('/')[-1] == 'gzip' and x['calls'] > 0]) >= 10 else 1)"
ok $? "exec.sh gzip: $(q g.json "len([x for x in rows if x['module'].split('/')[-1] == 'gzip' and x['calls'] > 0])") of gzip's functions with calls (>= 10)"

# No plan to be had (the cache cannot be written): the report says nothing
# instrumented ran, not that the kernel refused the OS events
STACKCLOCK_CACHE_DIR=/dev/null/cache "$STACKCLOCK" record -m instrument -o z.data -- ./exec.sh ./patch_dl 10 \
	"$TMP/libpdlb.so" >/dev/null 2>&1
ok $? "no plan for what the wrapper runs: the recording still succeeds"
"$STACKCLOCK" report -i z.data >z.txt 2>&1
grep -q "no thread recorded an event" z.txt && ! grep -q "kernel refused" z.txt
ok $? "no plan: the report says no instrumented code ran ($(grep -i "thread recorded\|refused" z.txt | head -1))"
