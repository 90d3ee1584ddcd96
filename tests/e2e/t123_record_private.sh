#!/usr/bin/env bash
# What a profile lets others see or do (issue 30, security):
#  - a second attach's copy of the runtime is written in a directory of its
#    own (mkdtemp), so links planted at the names it used to take
#    (/tmp/libstackclock.attach-<pid>-<n>.so) are never followed, and the
#    file they point to stays as it was;
#  - data files, exports and the plan cache are private under umask 022
#    (0600 files, 0700 directories), a replaced 0644 profile too;
#  - a link another user put in a sticky shared directory is not followed
#    for -o (one line, exit 1, the file it names untouched), and a plan
#    cache another user owns is refused in one line;
#  - the session's shared-memory directory is private (0700, its files
#    0600) while the program runs, and gone after.
# san: skip (the runtime is never sanitized)
. "$(dirname "$0")/lib.sh"
umask 022
cd "$TMP" || exit 1
chmod 711 "$TMP"       # nobody may traverse it (the shared directory below)
export STACKCLOCK_CACHE_DIR=$TMP/cache

cc -g -O1 -finstrument-functions -o hooks "$PROGS/inst_basic.c" || exit 1
cc -g -O1 -o plain "$PROGS/inst_basic.c" || exit 1
cc -g -O1 -pthread -o loop "$PROGS/attach_loop.c" || exit 1

mode() { stat -c %a "$1"; }

# ---- modes under umask 022 ---------------------------------------------------
"$STACKCLOCK" record -m instrument -o hooks.data -- ./hooks >/dev/null 2>&1
check "a data file is 0600 under umask 022" -- test "$(mode hooks.data)" = 600
"$STACKCLOCK" record -m instrument -o plain.data -- ./plain >/dev/null 2>&1
check "the plan cache is 0700 and its plans 0600" -- \
	sh -c "test \"\$(stat -c %a cache)\" = 700 && test \"\$(stat -c %a cache/plans)\" = 700 &&
	       ls cache/plans/*.plan >/dev/null && ! stat -c %a cache/plans/* | grep -qv '^600$'"
"$STACKCLOCK" record -o smp.data -- ./plain >/dev/null 2>&1
check "a sampled data file is 0600" -- test "$(mode smp.data)" = 600
for f in pprof callgrind folded html chrome; do
	[ $f = chrome ] && continue        # needs a timeline; below
	"$STACKCLOCK" export -i hooks.data --format $f -o "x.$f" >/dev/null 2>&1
	check "export --format $f is 0600" -- test "$(mode "x.$f")" = 600
done
"$STACKCLOCK" record -m instrument --timeline -o tl.data -- ./hooks >/dev/null 2>&1
"$STACKCLOCK" export -i tl.data --format chrome -o x.chrome >/dev/null 2>&1
check "export --format chrome is 0600" -- test "$(mode x.chrome)" = 600
echo old >old.data && chmod 644 old.data
"$STACKCLOCK" record -m instrument -o old.data -- ./hooks >/dev/null 2>&1
check "a 0644 profile replaced by a new one is 0600" -- test "$(mode old.data)" = 600
# an older cache (0755) is made private
rm -rf cache && mkdir -m 755 cache && mkdir -m 755 cache/plans
"$STACKCLOCK" record -m instrument -o plain.data -- ./plain >/dev/null 2>&1
check "an older 0755 plan cache is made 0700" -- \
	sh -c "test \"\$(stat -c %a cache)\" = 700 && test \"\$(stat -c %a cache/plans)\" = 700"

# ---- links and caches of other users -------------------------------------------
mkdir -m 1777 shared && echo "victim" >victim && chmod 644 victim
setpriv --reuid=nobody --regid=nogroup --clear-groups ln -s "$TMP/victim" shared/out.data || exit 1
one_line_fail "-o through another user's link in a sticky shared directory: refused" \
	"link, FIFO or device another user made in a shared directory" -- \
	"$STACKCLOCK" record -m instrument -o shared/out.data -- ./hooks
check "the file the link names is untouched" -- \
	sh -c "test \"\$(cat victim)\" = victim && test \"\$(stat -c %a victim)\" = 644"
one_line_fail "export through that link: refused" "link, FIFO or device another user made" -- \
	"$STACKCLOCK" export -i hooks.data --format folded -o shared/out.data
check "the file is still untouched" -- test "$(cat victim)" = victim
# another user's FIFO there: its reader would get the profile
setpriv --reuid=nobody --regid=nogroup --clear-groups mkfifo -m 666 shared/prof.fifo || exit 1
one_line_fail "-o another user's FIFO in a sticky shared directory: refused" \
	"link, FIFO or device another user made in a shared directory" -- \
	timeout 20 "$STACKCLOCK" record -m instrument -o shared/prof.fifo -- ./hooks
# our own link there is followed (as the kernel's protected_symlinks allows)
echo x >mine.data && ln -s "$TMP/mine.data" shared/mine.data
"$STACKCLOCK" record -m instrument -o shared/mine.data -- ./hooks >/dev/null 2>&1
check "our own link in the shared directory is followed" -- test -s mine.data -a -L shared/mine.data

rm -rf cache && mkdir -m 700 cache && chown nobody cache
one_line_fail "a plan cache another user owns: refused in one line" \
	"plan cache .*cache is not private \(another user owns it\)" -- \
	"$STACKCLOCK" record -m instrument -o p.data -- ./plain
rm -rf cache && mkdir -m 777 cache
one_line_fail "a plan cache others can write in: refused in one line" \
	"plan cache .* is not private \(others can write in it\)" -- \
	"$STACKCLOCK" record -m instrument -o p.data -- ./plain
rm -rf cache

# ---- the session's shared memory --------------------------------------------
mkdir -m 1777 shm
STACKCLOCK_SHM_DIR=$TMP/shm "$STACKCLOCK" record -m instrument -o shm.data -- ./loop 1.5 \
	>/dev/null 2>&1 &
rp=$!
d=
for _ in $(seq 100); do
	d=$(ls -d shm/stackclock-* 2>/dev/null | head -1)
	[ -n "$d" ] && [ -n "$(ls "$d" 2>/dev/null)" ] && break
	sleep 0.05
done
# as root, 1733: a program that drops its privileges still makes images
# there, no one else can list it (nor remove our files)
check "the session's directory is 1733 as root, its files 0600, while the program runs" -- \
	sh -c "test -n '$d' && test \"\$(stat -c %a '$d')\" = 1733 && test -n \"\$(ls '$d')\" &&
	       ! stat -c %a '$d'/* | grep -qv '^600$'"
check "another user cannot list the session's directory" -- \
	sh -c "! setpriv --reuid=nobody --regid=nogroup --clear-groups ls '$TMP/$d' >/dev/null 2>&1"
wait $rp
check "the session's directory is gone after" -- test -z "$(ls shm)"
for v in "${BUILD_VARIANTS[@]}"; do
	IFS=: read -r name cc flags <<<"$v"
	$cc -g -O1 $flags -o drop_$name "$PROGS/e2e_dropuid.c" || exit 1
	STACKCLOCK_SHM_DIR=$TMP/shm "$STACKCLOCK" record -m instrument -o drop.data -- ./drop_$name \
		>/dev/null 2>drop.err
	"$STACKCLOCK" report -i drop.data --format json >drop.json 2>/dev/null
	check "$name: a program that drops root after its start: its 4 processes recorded, work 400 calls" -- \
		q drop.json "exit(0 if (s['processes'], row('work')['calls'], s['lost_events']) == (4, 400, 0) else 1)"
done

# ---- a second attach's copy of the runtime, with links planted ----------------
# the runtime in a read-only directory, so the copy goes to /tmp
mkdir rt && mount -t tmpfs -o size=4m none rt || exit 1
trap 'umount "$TMP/rt" 2>/dev/null; rm -rf "$TMP"' EXIT
cp "$SC_BUILD/libstackclock.so" rt/ && mount -o remount,ro rt || exit 1
echo "victim" >/tmp/sc-victim.$$ && chmod 600 /tmp/sc-victim.$$
./loop 30 >/dev/null &
lp=$!
sleep 0.3
# for the next 400 pids (the recorders' among them, on a quiet machine)
next=$(sh -c 'echo $$')
planted=()
for p in $(seq $((next + 1)) $((next + 400))); do
	for n in 1 2; do
		l=/tmp/libstackclock.attach-$p-$n.so
		[ -e "$l" ] || [ -L "$l" ] || { ln -s /tmp/sc-victim.$$ "$l" && planted+=("$l"); }
	done
done
# a dead tracer's status directory, as a link to a directory of someone
# else's with a file named status: the clean-up must not follow it
sh -c 'exit 0' & dead=$!; wait $dead
mkdir victimdir && echo keep >victimdir/status
ln -s "$TMP/victimdir" /tmp/stackclock-attach.$dead.planted
calls=()
for i in 1 2 3; do
	STACKCLOCK_RUNTIME=$TMP/rt/libstackclock.so "$STACKCLOCK" record -m instrument -p $lp \
		--duration 0.3 -o att$i.data >/dev/null 2>att$i.err
	"$STACKCLOCK" report -i att$i.data --format json >att$i.json 2>/dev/null
	calls+=("$(q att$i.json "sum(x['calls'] for x in r['rows']) > 0" 2>/dev/null)")
done
kill $lp 2>/dev/null; wait $lp 2>/dev/null
check "three attaches, the second and third from a copy of the runtime, each counted calls" -- \
	test "${calls[*]}" = "True True True"
check "the file the planted links name is untouched (content and mode 0600)" -- \
	sh -c "test \"\$(cat /tmp/sc-victim.$$)\" = victim && test \"\$(stat -c %a /tmp/sc-victim.$$)\" = 600"
check "no copy or private directory of the runtime is left behind" -- \
	sh -c "! ls -d /tmp/stackclock-attach-* 2>/dev/null | grep -q ."
check "a planted link in place of a dead tracer's status directory is not followed" -- \
	sh -c "test \"\$(cat victimdir/status)\" = keep"
rm -f "${planted[@]}" /tmp/sc-victim.$$ /tmp/stackclock-attach.$dead.planted
umount rt
echo "1..$_n"
