#!/usr/bin/env bash
# What record says: sampling notes in one line that it counts time on a CPU
# when a program mostly waited (sleep 1), or ran in the kernel (dd from
# /dev/zero), which it samples with --kernel only; instrumentation ends with a
# summary line like sampling's, and on a terminal shows a progress line
# rewritten in place; stopped by timeout(1), it says that no process still
# runs (it called the killed processes daemons that "still run").
. "$(dirname "$0")/lib.sh"
build rs rec_status.c -O1 -finstrument-functions || exit 1
build behave smp_behave.c -O1 || exit 1
build dm e2e_daemon.c -O1 -finstrument-functions || exit 1
cd "$TMP"

# sampling: `sleep 1` is off the CPU; a spinning program is not
"$STACKCLOCK" record -o s.data -- sleep 1 2>s.err
ok $? "record -- sleep 1"
note="^stackclock: note: [0-9]+ samples in 1\.[0-9]{2} s at 999 Hz: the program was on a CPU in user mode about [0-9]+% of the time; sampling counts time on a CPU \(cpu-clock\), not time spent waiting \(sleep, I/O, locks, a busy CPU\): for that, record with -m instrument$"
[ "$(grep -cE "$note" s.err)" -eq 1 ] && [ "$(wc -l <s.err)" -eq 2 ]
ok $? "sleep 1: one note line says sampling sees time on a CPU only: $(tail -1 s.err)"
"$STACKCLOCK" record -o b.data -- "$TMP/behave" 600 0 exit >/dev/null 2>b.err
! grep -q "note:" b.err; ok $? "a program spinning 0.6 s gets no such note: $(tr '\n' '|' <b.err)"
# a program busy in the kernel (reading /dev/zero: user mode about 3%) was
# not waiting: the note says where its time went, not that it waited
"$STACKCLOCK" record -o k.data -- dd if=/dev/zero of=/dev/null bs=4M count=12000 2>k.err
ok $? "record -- dd if=/dev/zero of=/dev/null bs=4M count=12000"
knote="^stackclock: note: [0-9]+ samples in [0-9.]+ s at 999 Hz, in user mode; the program also ran [0-9.]+ s in the kernel \(system calls, page faults\), which sampling leaves out without --kernel$"
[ "$(grep -cE "$knote" k.err)" -eq 1 ] && ! grep -q "waiting" k.err
ok $? "dd busy in the kernel: the note says so, not that it waited: $(grep note: k.err)"

# instrumentation: the last line, and no progress line off a terminal
"$STACKCLOCK" record -m instrument --libcalls=none -o i.data -- "$TMP/rs" 2>i.err
ok $? "record -m instrument -- rs"
grep -qxE "stackclock: 21 calls \(42 events, 0 lost\), 1 thread in 1 process; i.data \([0-9]+ KB\)" i.err
ok $? "the summary line: calls, events, lost, threads, processes, file and size: $(tail -1 i.err)"
! grep -q "recording" i.err; ok $? "no progress line when stderr is not a terminal"

# on a terminal (script(1)): the progress line every 2 s, erased at the end
script -qec "'$STACKCLOCK' record -m instrument --libcalls=none -o p.data -- '$TMP/rs' sleep 2200" p.out >/dev/null 2>&1
ok $? "record -m instrument on a terminal"
grep -qaF "$(printf '\rstackclock: recording')" p.out &&
	grep -qaE "recording '$TMP/rs': 0:0[2-4] elapsed, 1 process, [0-9]+\.[0-9] MB of profile so far" p.out
ok $? "a progress line, rewritten with \\r: $(tr '\r' '\n' <p.out | grep -a recording | head -1)"
grep -qaF "$(printf '\r\033[Kstackclock: 21 calls')" p.out
ok $? "the progress line is erased before the summary"

# timeout(1) ends a target and its children: none is said to run on
cat >mk.sh <<SH
#!/bin/sh
"$TMP/dm" busy "$TMP/p1" &
"$TMP/dm" busy "$TMP/p2" &
wait
SH
chmod +x mk.sh
timeout 1.5 "$STACKCLOCK" record -m instrument -o t.data -- ./mk.sh 2>t.err
sleep 0.2
! grep -qE "still runs?, unrecorded" t.err; ok $? "timeout: no process is said to still run: $(grep 'stopped by' t.err)"
grep -qE "stopped by Terminated: no process of './mk.sh' still runs; [1-9][0-9]* of its [0-9]+ had not ended on their own, and their profiles end at the stop" t.err
ok $? "timeout: it says the processes were ended before they finished"
! pgrep -f "$TMP/dm busy" >/dev/null; ok $? "and indeed none runs"
