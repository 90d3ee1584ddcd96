#!/usr/bin/env bash
# Sampling overhead against perf, side by side in one run (a benchmark, not
# a test).
#
#   bench/sample.sh [RUNS] [ROUNDS]      (default 9 runs, 25 rounds ~ 3 s)
#
# bench/sample_work.c (fixed CPU-bound work, -O2 -fomit-frame-pointer) is
# run, in turn, RUNS times each:
#   - alone (baseline)
#   - under `stackclock record -F 999`
#   - under `perf record -F 999 -e cpu-clock --call-graph dwarf`
#   - under `perf record -F 999 -e cpu-clock` (no call graph: the floor,
#     what the sampling interrupts alone cost the target)
# and the table gives:
#   - the target's own CPU time (user + sys, from getrusage in the target:
#     sampling interrupts and stack copies slow the fixed work down) and
#     its overhead against the baseline, minimum and median of the runs,
#     and the mean of the paired overheads (run i of a tool against run i
#     alone, which ran just before it) with a 95% interval;
#   - the wall time the recorder adds (median): total wall time of the
#     command minus the target's own wall time (main's first to last line),
#     i.e. start-up and the end (drain, unwind, write; perf's build-id pass);
#   - the data file's size (last run);
#   - the share of samples whose stack reaches the thread's root (_start
#     or clone3): ours from the report, perf's from `perf script`;
#   - `stackclock report` against `perf report --stdio` on the recordings
#     (best of 3).
# STACKCLOCK=path overrides the binary (default $O/stackclock).
set -u
cd "$(dirname "$0")/.."
RUNS=${1:-9}
ROUNDS=${2:-25}
O=${O:-build}
SC=${STACKCLOCK:-$PWD/$O/stackclock}
[ -x "$SC" ] || { echo "build first: make" >&2; exit 1; }
command -v perf >/dev/null || { echo "perf is not installed (apt-get install linux-perf)" >&2; exit 1; }
W=$(mktemp -d /tmp/sc-bench-XXXXXX)
trap 'rm -rf "$W"' EXIT
gcc -O2 -g -fomit-frame-pointer -o "$W/work" bench/sample_work.c

ns() { date +%s%N; }

# run NAME CMD...: one run; appends "NAME cpu_ms target_wall_ms total_wall_ms".
run() {
	local name=$1; shift
	local t0 t1 line
	t0=$(ns)
	line=$("$@" 2>"$W/$name.err" | grep cpu_ms=)
	t1=$(ns)
	[ -n "$line" ] || { echo "$name failed:" >&2; cat "$W/$name.err" >&2; exit 1; }
	set -- $line
	echo "$name ${1#cpu_ms=} ${2#wall_ms=} $(( (t1 - t0) / 1000000 ))" >>"$W/runs"
}

echo "sample_work x $ROUNDS rounds, $RUNS runs each (interleaved) ..." >&2
for i in $(seq "$RUNS"); do
	run base "$W/work" "$ROUNDS"
	run ours "$SC" record -F 999 -o "$W/sc.data" -- "$W/work" "$ROUNDS"
	run perf perf record -q -F 999 -e cpu-clock --call-graph dwarf -o "$W/perf.data" -- "$W/work" "$ROUNDS"
	run floor perf record -q -F 999 -e cpu-clock -o "$W/floor.data" -- "$W/work" "$ROUNDS"
done

# Report times, best of 3 (the files of the last runs).
best_time() {
	local best=
	for _ in 1 2 3; do
		local t0 t1 d
		t0=$(ns)
		"$@" >/dev/null 2>&1
		t1=$(ns)
		d=$(( (t1 - t0) / 1000000 ))
		[ -z "$best" ] || [ "$d" -lt "$best" ] && best=$d
	done
	echo "$best"
}
rep_ours=$(best_time "$SC" report -i "$W/sc.data")
rep_perf=$(best_time perf report --stdio -i "$W/perf.data")

root_ours=$("$SC" report -i "$W/sc.data" --format json |
	python3 -c 'import json, sys; print(json.load(sys.stdin)["session"]["root_reached_pct"])')
# perf script prints each sample's call chain, leaf first, then a blank line.
root_perf=$(perf script -i "$W/perf.data" -F ip,sym 2>/dev/null | awk '
	NF { last = $2; n_in = 1; next }
	n_in { n++; if (last ~ /^(_start|clone3|__clone3|clone|__clone)$/) r++; n_in = 0 }
	END { if (n_in) { n++; if (last ~ /^(_start|clone3|__clone3|clone|__clone)$/) r++ } printf "%.1f", n ? 100 * r / n : 0 }')

size_ours=$(stat -c %s "$W/sc.data")
size_perf=$(stat -c %s "$W/perf.data")
samples_ours=$(tail -n1 "$W/ours.err" | grep -o '^stackclock: [0-9]* samples' | grep -o '[0-9]*')
samples_perf=$(perf report --stdio -i "$W/perf.data" --header-only 2>/dev/null | awk '/sample/ && /nr/ { print; exit }')

python3 - "$W/runs" "$size_ours" "$size_perf" "$rep_ours" "$rep_perf" "$root_ours" "$root_perf" \
	"${samples_ours:-?}" <<'PY'
import statistics, sys
runs, size_o, size_p, rep_o, rep_p, root_o, root_p, smp_o = sys.argv[1:]
by = {}
for line in open(runs):
    name, cpu, twall, total = line.split()
    by.setdefault(name, []).append((float(cpu), float(twall), float(total)))
med = lambda name, i: statistics.median(x[i] for x in by[name])
base_cpu = med("base", 0)
def added(name):
    return statistics.median(t - w for _, w, t in by[name])
# The work is fixed, so noise (other load on the machine) only adds time:
# the minimum is the steadiest estimate, the median is shown beside it.
mn = lambda name, i: min(x[i] for x in by[name])
base_min = mn("base", 0)
rows = []
for name, label in (("base", "alone"), ("ours", "stackclock record"),
                    ("perf", "perf record --call-graph dwarf"), ("floor", "perf record, no call graph")):
    cpu, cpu_min = med(name, 0), mn(name, 0)
    rows.append((label, cpu_min, 100.0 * (cpu_min - base_min) / base_min,
                 cpu, 100.0 * (cpu - base_cpu) / base_cpu, added(name)))
print()
print("%-32s %17s %17s %11s" % ("target cpu time (user+sys)", "min ms (ovh)", "median ms (ovh)", "wall added"))
for label, cmin, ovmin, cmed, ovmed, add in rows:
    print("%-32s %7.0f (%+5.2f%%) %7.0f (%+5.2f%%) %8.0f ms" % (label, cmin, ovmin, cmed, ovmed, add))
# Paired: run i of each tool ran right after run i alone, so the ratio of
# the two cancels the machine's slow drifts; mean and 95% interval of the
# per-pair overheads.
print()
print("%-32s %26s" % ("paired overhead (run i vs alone i)", "mean +- 95% interval"))
paired = {}
for name, label in (("ours", "stackclock record"), ("perf", "perf record --call-graph dwarf"),
                    ("floor", "perf record, no call graph")):
    d = [100.0 * (t[0] - b[0]) / b[0] for t, b in zip(by[name], by["base"])]
    m = statistics.mean(d)
    ci = 1.96 * statistics.stdev(d) / len(d) ** 0.5 if len(d) > 1 else float("nan")
    paired[name] = (m, ci)
    print("%-32s %14.2f%% +- %5.2f%%" % (label, m, ci))
size_o, size_p = int(size_o), int(size_p)
rep_o, rep_p = int(rep_o), int(rep_p)
add_o, add_p = added("ours"), added("perf")
print()
print("%-32s %12s %12s %8s" % ("", "stackclock", "perf", "ratio"))
print("%-32s %12d %12d %8.3f" % ("data file (bytes)", size_o, size_p, size_o / size_p))
print("%-32s %12.0f %12.0f %8.3f" % ("wall added by record (ms)", add_o, add_p, add_o / add_p if add_p else float("nan")))
print("%-32s %12d %12d %8.3f" % ("report time (ms, best of 3)", rep_o, rep_p, rep_o / rep_p if rep_p else float("nan")))
print("%-32s %11s%% %11s%%" % ("stacks reaching the root", root_o, root_p))
print("%-32s %12s" % ("samples (ours, last run)", smp_o))
print()
ovh_o = paired["ours"][0]
print("targets: cpu overhead (paired mean) <= 2%%: %s (%.2f%%); wall added <= 1/2 perf's: %s; file <= 1/4 perf's: %s; report <= 1/5 perf's: %s"
      % ("yes" if ovh_o <= 2 else "NO", ovh_o,
         "yes" if add_p and add_o <= add_p / 2 else "NO",
         "yes" if size_o * 4 <= size_p else "NO",
         "yes" if rep_p and rep_o * 5 <= rep_p else "NO"))
PY
