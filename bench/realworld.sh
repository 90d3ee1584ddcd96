#!/usr/bin/env bash
# Instrumented numbers on real programs nobody here wrote, side by side
# (issue 17; a benchmark, not a test: `make check` never runs it).
#
#   bench/realworld.sh [--short] [RUNS]      (default 3 runs; --short or
#                                            SHORT=1: smaller workloads)
#   PROGRAMS="sqlite lua python gcc gzip"    the programs to run (default all)
#
# Programs: (a) SQLite (the amalgamation in npm's better-sqlite3@12,
# fetched once with `npm pack` into ~/.cache/stackclock-bench) with a
# driver of ours: rows inserted into an in-memory table with an index,
# then range queries; (b) Lua 5.4 (Debian's source, as bench/accuracy.sh
# fetches it) on a call-dense script; (c) Debian's python3 building and
# parsing JSON; (d) `gcc -O2 -c` of Lua's lparser.c (the driver, then cc1
# and as, each patched at run time); (e) Debian's gzip on generated text.
# SQLite and Lua are built twice, `-O2` (plain) and `-O2
# -finstrument-functions` (hooks); the builds are cached in
# ~/.cache/stackclock-bench/builds (delete it to rebuild).  Every
# `record -m instrument` of a program without hooks runs once before it is
# timed, so that its patch plan is cached (in a private cache directory).
#
# For (a) and (b), per run: the uninstrumented plain binary, the hooks
# build without stackclock (libc's empty __cyg_profile_func_* hooks: what
# -finstrument-functions costs by itself), `record -m instrument` of the
# hooks build, and of the plain build (patched at run time), in turn, so
# that a slow spell of the machine falls on all four.
# Printed per run: main's elapsed_inclusive_ns from `report --format json`
# (compensated) and with --raw-times, over the BEST (minimum) wall time of
# the RUNS uninstrumented runs (target 0.8-1.3x on every run); main's
# application_inclusive_ns over the best CPU time of the uninstrumented
# runs (less sensitive to the neighbours of a shared machine); the
# session's repairs (and repairs_by_cause when the JSON has it); the CPU
# time (user + sys) of the recording over the best uninstrumented CPU
# time.  The SUMMARY also gives the hooks build's EI over the best wall
# time of the hooks build run without stackclock (not a target: the
# issue's ratio is over the plain build).  Then perf (`perf record -e cpu-clock -F 999`, RUNS runs of the
# plain binary, at least 3) against our shares: perf's self share per
# symbol (`perf report --no-children --sort dso,sym`, kernel symbols their
# own rows, marked [k] and left out of the comparison), its top 8
# user-space functions (and the top 8 of the program's own binary, which
# our rows can name when library calls are not rows), and beside each,
# ours as the median over the runs:
# sampled_exclusive_pct (n/a when the JSON lacks it) and
# application_exclusive_pct (the interval value), hooks build and
# patched, with |ours - perf| in points and its maximum over the 8 (target
# 3 points).  Names are compared without the compiler's suffixes (.isra.0,
# .part.0, .cold); glibc's internal and IFUNC names are folded into the
# function a program calls (`__memmove_avx512_unaligned_erms` and memcpy:
# memcpy/memmove; `_int_malloc` and free: malloc/free; `__vfprintf_internal`,
# `_IO_*` and snprintf: printf family).  A library function that has no
# row of ours (library calls not recorded as rows) counts as 0.
#
# For (c), (d), (e): the CPU time (user + sys, bash's `time`, the same
# getrusage figures as /usr/bin/time at ms resolution) of the program
# alone against under `record -m instrument`, per run over the best alone
# (targets: gcc at most 4x, python3 at most 3x), and the repairs.  uftrace
# (`uftrace record`, library calls included as ours are, data written to
# the work directory) on the hooks build of Lua, once, beside ours.
#
# Each program ends with a line "SUMMARY name: ..." of pass/fail against
# its targets; all of them are repeated at the end.  A program that cannot
# be had or built (no network, a build failing) is skipped with a message;
# the exit status is 0 unless stackclock itself is missing.
#
# Measured on main 6a10ede (a 2-core VM shared with other sessions, load
# average 4-8.5 during the runs): see bench/README.md.
set -u
cd "$(dirname "$0")/.."
SHORT=${SHORT:-0}
if [ "${1:-}" = "--short" ]; then SHORT=1; shift; fi
RUNS=${1:-3}
PROGRAMS=${PROGRAMS:-sqlite lua python gcc gzip}
O=${O:-build}
SC=$PWD/$O/stackclock
[ -x "$SC" ] && [ -f "$O/libstackclock.so" ] || { echo "build first: make ($SC missing)" >&2; exit 1; }
W=$(mktemp -d /tmp/sc-bench-rw-XXXXXX)
[ -n "${KEEP:-}" ] && echo "work directory kept: $W" || trap 'rm -rf "$W"' EXIT
export STACKCLOCK_CACHE_DIR=$W/plan-cache
CACHE=${XDG_CACHE_HOME:-$HOME/.cache}/stackclock-bench
mkdir -p "$CACHE/builds" "$W/bin"
PRUNS=$((RUNS < 3 ? 3 : RUNS))

if [ "$SHORT" = 1 ]; then
	SQ_ARGS="200000 1000"; LUA_ARGS="80000 25"; PY_N=50000; GZ_MB=20
else
	SQ_ARGS="400000 2000"; LUA_ARGS="150000 27"; PY_N=100000; GZ_MB=50
fi

want() { case " $PROGRAMS " in *" $1 "*) return 0 ;; esac; return 1; }
note() { echo "$*"; }
skip() { echo "$1: skipped: $2"; echo "SUMMARY $1: skipped ($2)" >>"$W/summary.txt"; echo; }

# timed FILE CMD...: run CMD (stdout to /dev/null, stderr to $W/cmd.err),
# append "wall user sys" (seconds) to FILE, or "- - -" if CMD fails
timed() {
	local f=$1 t
	shift
	t=$( { TIMEFORMAT='%3R %3U %3S'; time { "$@" >/dev/null 2>"$W/cmd.err" </dev/null; echo $? >"$W/rc"; }; } 2>&1 | tail -1)
	if [ "$(cat "$W/rc")" != 0 ]; then
		echo "  failed: $* (exit $(cat "$W/rc")): $(tail -1 "$W/cmd.err")"
		echo "- - -" >>"$f"
		return 1
	fi
	echo "$t" >>"$f"
}

# reports DATA OUT: the JSON reports of a recording, compensated and raw
reports() {
	"$SC" report -i "$1" --format json --top 0 >"$2.json" 2>>"$W/cmd.err" &&
		"$SC" report -i "$1" --format json --top 0 --raw-times >"$2.raw.json" 2>>"$W/cmd.err"
	local rc=$?
	rm -f "$1"
	return $rc
}

cat >"$W/an.py" <<'EOF'
# bench/realworld.sh's arithmetic and tables
import json, os, re, statistics, sys

def times(p):
    """[(wall, cpu) or None (a failed run)] from lines 'wall user sys'"""
    out = []
    if os.path.exists(p):
        for l in open(p):
            if l.startswith("-"):
                out.append(None)
                continue
            w, u, s = map(float, l.split())
            out.append((w, u + s))
    return out

def good(ts):
    return [t for t in ts if t is not None]

def load(p):
    try:
        with open(p) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None

def main_row(d):
    for r in d["rows"]:
        if r.get("function") == "main":
            return r
    return None

def within(x, lo, hi):
    return x is not None and lo <= x <= hi

def fmt(x, f="%.2f"):
    return "n/a" if x is None else f % x

def causes(s):
    c = s.get("repairs_by_cause")
    if c is None:
        return "n/a"
    return ",".join("%s:%d" % (k, v) for k, v in sorted(c.items()) if v) or "-"

# ---- names: perf's and ours folded to the same function ------------------
GROUPS = {
    "memcpy/memmove": "memcpy memmove mempcpy memcpy_chk memmove_chk",
    "memcmp": "memcmp memcmpeq bcmp",
    "malloc/free": "malloc free realloc calloc cfree _int_malloc _int_free _int_realloc "
                   "malloc_consolidate sysmalloc unlink_chunk __libc_malloc __libc_free "
                   "__libc_realloc __libc_calloc tcache_init _int_free_merge_chunk "
                   "_int_free_create_chunk _int_free_maybe_consolidate",
    "printf family": "printf fprintf sprintf snprintf vprintf vfprintf vsprintf vsnprintf "
                     "__vfprintf_internal __vsnprintf_internal __vsprintf_internal __snprintf "
                     "__sprintf _itoa_word __printf_fp __printf_fp_l hack_digit strchrnul "
                     "outstring_func pad_func",
    "strtod family": "strtod strtof strtold ____strtod_l_internal __strtod_internal "
                     "round_and_return str_to_mpn",
    "strcoll": "strcoll __strcoll_l",
}
ALIAS = {n: g for g, ns in GROUPS.items() for n in ns.split()}

def norm(f):
    f = re.sub(r"@plt$", "", f)
    if not f.startswith("."):
        f = f.split(".")[0]              # foo.isra.0, foo.part.0, foo.cold
    m = re.match(r"__([a-z]+?)_(?:avx|sse|evex|erms|unaligned)", f)
    if m:                                # glibc's IFUNC variants
        f = m.group(1)
    if f in ALIAS:
        return ALIAS[f]
    if re.match(r"_IO_|__printf_|__mpn_", f):
        return "printf family"
    return f

def perf_shares(p, prog):
    """[(name, pct, kind)], perf's self shares folded by name, largest
    first; kind: "k" kernel, "own" the program's binary, "lib" a library
    (of the name's largest part: memcpy's PLT stub is the program's)"""
    acc, kind = {}, {}
    for l in open(p):
        m = re.match(r"\s*([\d.]+)%\s+(\S+)\s+\[(.)\]\s+(.*\S)", l)
        if not m:
            continue
        pct, dso, k, sym = float(m.group(1)), m.group(2), m.group(3) == "k", m.group(4)
        name = "[k] " + sym if k else norm(sym)
        acc[name] = acc.get(name, 0.0) + pct
        kd = kind.setdefault(name, {})
        kk = "k" if k else "own" if dso == prog else "lib"
        kd[kk] = kd.get(kk, 0.0) + pct
    return sorted(((n, v, max(kind[n], key=kind[n].get)) for n, v in acc.items()), key=lambda x: -x[1])

def our_shares(d, key):
    """{name: pct} of a report, folded as perf's; None if the JSON lacks key"""
    if not d["rows"] or key not in d["rows"][0]:
        return None
    acc = {}
    for r in d["rows"]:
        if "function" in r and r.get(key) is not None:
            n = norm(r["function"])
            acc[n] = acc.get(n, 0.0) + r[key]
    return acc

# ---- (a), (b): main's EI, slowdowns, shares against perf ----------------
def ei(name, dirn, runs, title, verdicts):
    plain = good(times(os.path.join(dirn, "plain.t")))
    if not plain:
        print("  no uninstrumented run: nothing to compare")
        verdicts.append("no data")
        return
    walls = [w for w, _ in plain]
    bw, mw = min(walls), statistics.median(walls)
    bc = min(c for _, c in plain)
    print("%s: main's EI against the uninstrumented run" % title)
    print("uninstrumented: wall best %.3f s (median %.3f), CPU best %.3f s, of %d runs"
          % (bw, mw, bc, len(plain)))
    bare = good(times(os.path.join(dirn, "bare.t")))
    bb = min(w for w, _ in bare) if bare else None
    if bb:
        print("the hooks build without stackclock (libc's empty hooks): wall best %.3f s, %.2fx the"
              " uninstrumented build: what -finstrument-functions alone costs" % (bb, bb / bw))
    print("ratios over the BEST uninstrumented run (wall for EI, CPU for AI and the recording's CPU)\n")
    print("%-3s %-8s %9s %9s %8s %8s %7s %8s %10s %10s %11s %9s %8s %8s" %
          ("run", "build", "EI comp s", "EI raw s", "comp/wall", "raw/wall", "AI/cpu",
           "repairs", "by cause", "calls", "probe ns/ev", "probe smp", "rec cpu", "cpu x"))
    for kind in ("hooks", "patched"):
        rec = times(os.path.join(dirn, kind + ".t"))
        ratios, reps, slow = [], [], []
        for i in range(1, runs + 1):
            c = load(os.path.join(dirn, "%s%d.json" % (kind, i)))
            r = load(os.path.join(dirn, "%s%d.raw.json" % (kind, i)))
            if c is None or r is None or main_row(c) is None:
                print("%-3d %-8s %s" % (i, kind, "no recording (failed)"))
                ratios.append(None)
                continue
            s, mc, mr = c["session"], main_row(c), main_row(r)
            eic, eir = mc["elapsed_inclusive_ns"] / 1e9, mr["elapsed_inclusive_ns"] / 1e9
            ai = mc["application_inclusive_ns"] / 1e9
            cpu = rec[i - 1][1] if i <= len(rec) and rec[i - 1] else None
            ratios.append(eic / bw)
            reps.append(s.get("repairs", 0))
            if cpu is not None:
                slow.append(cpu / bc)
            print("%-3d %-8s %9.3f %9.3f %8.2fx %8.2fx %6.2fx %8d %10s %10d %11s %9s %8s %8s" %
                  (i, kind, eic, eir, eic / bw, eir / bw, ai / bc, s.get("repairs", 0), causes(s),
                   s.get("events", 0) // 2, fmt(s.get("probe_cost_ns")),
                   s.get("probe_samples", "n/a"), fmt(cpu, "%.3f"),
                   fmt(cpu / bc if cpu else None, "%.2fx")))
        ok = all(within(x, 0.8, 1.3) for x in ratios) and ratios
        verdicts.append("EI %s 0.8-1.3x every run: %s (%s)" % (kind, "PASS" if ok else "FAIL",
                        " ".join(fmt(x) for x in ratios)))
        if kind == "hooks" and bb:
            # the same EI over the hooks build's own run without stackclock
            verdicts.append("EI hooks / hooks build bare %s" %
                            " ".join(fmt(x * bw / bb) if x else "-" for x in ratios))
        verdicts.append("repairs %s 0: %s (%s)" % (kind, "PASS" if reps and max(reps) == 0 else "FAIL",
                        " ".join(str(x) for x in reps)))
        if slow:
            verdicts.append("%s cpu %.2f-%.2fx" % (kind, min(slow), max(slow)))
    print()

def shares(name, dirn, runs, prog, verdicts, folded=False):
    pf = os.path.join(dirn, "perf_folded.txt" if folded else "perf.txt")
    if not os.path.exists(pf) or os.path.getsize(pf) == 0:
        print("perf: no profile (perf missing or failed): shares not compared\n")
        verdicts.append("sampled shares: n/a (no perf)")
        return
    perf = perf_shares(pf, prog)
    cols = []          # (label, key, [{name: pct} per run])
    for kind in ("hooks", "patched"):
        for key, lab in (("sampled_exclusive_pct", "smp"), ("application_exclusive_pct", "int")):
            per_run = []
            for i in range(1, runs + 1):
                d = load(os.path.join(dirn, "%s%d.json" % (kind, i)))
                if d is not None:
                    per_run.append(our_shares(d, key))
            cols.append(("%s %s" % (kind, lab), key, per_run))
    sf = os.path.join(dirn, "perf.samples")
    nsamp = open(sf).read().strip() if os.path.exists(sf) else "?"
    if folded:
        print("The same against perf's samples charged as SPEC section 14 charges ours: each to the"
              " innermost frame of the program's own binary on its call stack (perf --call-graph"
              " dwarf; a library's or the kernel's time goes to the program's function that called"
              " it), so the two differ only by what the probes change\n")
    else:
        print("Self shares, %%: perf on the uninstrumented plain binary (cpu-clock, 999 Hz, %s samples)"
              " against ours (median over the runs); smp = sampled_exclusive_pct, int ="
              " application_exclusive_pct (interval); d = |ours - perf| in points; lib: a library's"
              " function, [k]: the kernel's (ours charges it to the caller: left out)\n" % (nsamp or "?"))
    hdr = "%-32s %7s" % ("function (perf's top)", "perf")
    for lab, _, _ in cols:
        hdr += " %12s %5s" % (lab, "d")
    print(hdr)
    # the top 8 user-space functions, and the top 8 of the program's own
    maxd = {"all": [None] * len(cols), "own": [None] * len(cols)}
    n_all = n_own = 0
    for n, p, kind in perf:
        if n_all >= 8 and n_own >= 8:
            break
        label = n if kind == "own" else ("lib " + n if kind == "lib" else n)
        line = "%-32s %7.2f" % (label[:32], p)
        if kind == "k":
            if n_all < 8:
                print(line)
            continue
        sets = []
        if n_all < 8:
            sets.append("all")
            n_all += 1
        if kind == "own" and n_own < 8:
            sets.append("own")
            n_own += 1
        if not sets:
            continue
        for j, (lab, key, per_run) in enumerate(cols):
            vals = [r.get(n, 0.0) for r in per_run if r is not None]
            if not vals:
                line += " %12s %5s" % ("n/a", "")
                continue
            v = statistics.median(vals)
            dd = abs(v - p)
            for st in sets:
                m = maxd[st]
                m[j] = dd if m[j] is None else max(m[j], dd)
            line += " %12.2f %5.1f" % (v, dd)
        print(line + ("" if "all" in sets else "   (own top 8 only)"))
    for st, what in (("all", "max d, top 8 user-space"), ("own", "max d, top 8 of the program's")):
        line = "%-32s %7s" % (what, "")
        for j in range(len(cols)):
            line += " %12s %5s" % ("", fmt(maxd[st][j], "%.1f"))
        print(line)
    print()
    for j, (lab, key, _) in enumerate(cols):
        who = lab.split()[0]
        a, o = maxd["all"][j], maxd["own"][j]
        if key == "sampled_exclusive_pct":
            tag = "sampled top-8 %s%s within 3 pt" % (who, " (perf folded to the program's frames)" if folded else "")
            if a is None:
                verdicts.append("%s: n/a" % tag)
            else:
                verdicts.append("%s: %s (max %.1f; program's own top 8: %s)" %
                                (tag, "PASS" if a <= 3 else "FAIL", a, fmt(o, "%.1f")))
        elif a is not None:
            verdicts.append("interval top-8 %s%s max %.1f pt (own %s)" %
                            (who, " (folded)" if folded else "", a, fmt(o, "%.1f")))

def uftrace(dirn, verdicts):
    u = good(times(os.path.join(dirn, "uftrace.t")))
    plain = good(times(os.path.join(dirn, "plain.t")))
    hooks = good(times(os.path.join(dirn, "hooks.t")))
    if not u or not plain:
        return
    bc = min(c for _, c in plain)
    ours = statistics.median(c for _, c in hooks) if hooks else None
    print("uftrace record on the hooks build (once): CPU %.3f s, %.2fx the uninstrumented;"
          " ours (record -m instrument, hooks build, median): %s s, %s; uftrace / ours %s\n" %
          (u[0][1], u[0][1] / bc, fmt(ours, "%.3f"), fmt(ours / bc if ours else None, "%.2fx"),
           fmt(u[0][1] / ours if ours else None, "%.2fx")))
    verdicts.append("uftrace cpu %.2fx" % (u[0][1] / bc))

# ---- (c), (d), (e): patched slowdowns ------------------------------------
def slow(name, dirn, runs, target, title, verdicts):
    plain = good(times(os.path.join(dirn, "plain.t")))
    rec = times(os.path.join(dirn, "rec.t"))
    print("%s: CPU time alone against under record -m instrument (patched at run time)" % title)
    if not plain:
        print("  no run alone: nothing to compare")
        verdicts.append("no data")
        return
    bc = min(c for _, c in plain)
    print("alone: CPU best %.3f s (median %.3f), wall best %.3f s, of %d runs; ratio over the best\n"
          % (bc, statistics.median(c for _, c in plain), min(w for w, _ in plain), len(plain)))
    print("%-3s %9s %9s %8s %8s %10s %10s %8s" % ("run", "rec cpu", "rec wall", "cpu x",
          "repairs", "by cause", "calls", "procs"))
    ratios, reps = [], []
    for i in range(1, runs + 1):
        d = load(os.path.join(dirn, "rec%d.json" % i))
        if i > len(rec) or rec[i - 1] is None:
            print("%-3d failed" % i)
            ratios.append(None)
            continue
        w, c = rec[i - 1]
        ratios.append(c / bc)
        s = d["session"] if d else {}
        if d:
            reps.append(s.get("repairs", 0))
        print("%-3d %9.3f %9.3f %7.2fx %8s %10s %10s %8s" % (i, c, w, c / bc,
              s.get("repairs", "n/a"), causes(s) if d else "n/a",
              s.get("events", 0) // 2 if d else "n/a", s.get("processes", "n/a")))
    print()
    if target:
        ok = ratios and all(x is not None and x <= target for x in ratios)
        verdicts.append("cpu at most %gx every run: %s (%s)" % (target, "PASS" if ok else "FAIL",
                        " ".join(fmt(x) for x in ratios)))
    else:
        verdicts.append("cpu %s (no target)" % " ".join(fmt(x) for x in ratios))
    verdicts.append("repairs 0: %s (%s)" % ("PASS" if reps and max(reps) == 0 else "FAIL",
                    " ".join(str(x) for x in reps)))

def main():
    what, name, dirn, runs = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    verdicts = []
    if what == "ei":
        ei(name, dirn, runs, sys.argv[5], verdicts)
        shares(name, dirn, runs, sys.argv[6], verdicts)
        if os.path.exists(os.path.join(dirn, "perf_folded.txt")):
            shares(name, dirn, runs, sys.argv[6], verdicts, folded=True)
        uftrace(dirn, verdicts)
    else:
        slow(name, dirn, runs, float(sys.argv[5]), sys.argv[6], verdicts)
    line = "SUMMARY %s: %s" % (name, "; ".join(verdicts))
    print(line)
    with open(os.path.join(os.path.dirname(dirn), "summary.txt"), "a") as f:
        f.write(line + "\n")

main()
EOF

# ei_program NAME TITLE PLAIN HOOKS ARGS...: section (a)/(b) for one program
ei_program() {
	local name=$1 title=$2 plain=$3 hooks=$4 i D=$W/$1
	shift 4
	mkdir -p "$D"
	echo "== $title"
	"$plain" "$@" >/dev/null 2>&1 || { skip "$name" "the plain build does not run"; return; }
	"$SC" record -m instrument -o "$D/warm.data" -- "$plain" "$@" >/dev/null 2>&1  # the plan, cached
	rm -f "$D/warm.data"
	for ((i = 1; i <= RUNS; i++)); do
		timed "$D/plain.t" "$plain" "$@"
		# the hooks build without stackclock: libc's empty hooks
		timed "$D/bare.t" "$hooks" "$@"
		timed "$D/hooks.t" "$SC" record -m instrument -o "$D/h.data" -- "$hooks" "$@" &&
			reports "$D/h.data" "$D/hooks$i"
		timed "$D/patched.t" "$SC" record -m instrument -o "$D/p.data" -- "$plain" "$@" &&
			reports "$D/p.data" "$D/patched$i"
	done
	if command -v perf >/dev/null; then
		local comm
		comm=$(basename "$plain" | cut -c1-15)
		# RUNS (at least 3) runs in one profile, the shell's samples left out
		perf record -q -e cpu-clock -F 999 -o "$D/perf.data" -- \
			sh -c 'n=$1; shift; for i in $(seq "$n"); do "$@" >/dev/null; done' sh "$PRUNS" "$plain" "$@" \
			>/dev/null 2>"$D/perf.err" &&
			perf report -i "$D/perf.data" --no-children --sort dso,sym --stdio -q --comm "$comm" \
				--percentage relative 2>>"$D/perf.err" >"$D/perf.txt"
		perf report -i "$D/perf.data" --no-children --sort comm -n -q --stdio --comm "$comm" 2>/dev/null |
			awk '/%/ { print $2; exit }' >"$D/perf.samples"
		[ -s "$D/perf.txt" ] || echo "perf failed: $(tail -1 "$D/perf.err")"
		rm -f "$D/perf.data"
		# the same with call stacks, each sample charged to the innermost
		# frame in the program's own binary (SPEC section 14's rule)
		perf record -q -e cpu-clock -F 999 --call-graph dwarf,16384 -o "$D/perfg.data" -- \
			sh -c 'n=$1; shift; for i in $(seq "$n"); do "$@" >/dev/null; done' sh "$PRUNS" "$plain" "$@" \
			>/dev/null 2>>"$D/perf.err" &&
			perf script -i "$D/perfg.data" --comm "$comm" -F comm,ip,sym,dso 2>>"$D/perf.err" |
			python3 -c '
import sys, os, collections
prog = os.path.basename(sys.argv[1])
acc, n, frames = collections.Counter(), 0, []
def flush():
    global n
    if not frames:
        return
    n += 1
    own = [f for f in frames if os.path.basename(f[1]) == prog]
    acc[own[0][0] if own else "[k] " + frames[0][0] if frames[0][1].startswith("[kernel") else "(no frame of the program)"] += 1
for l in sys.stdin:
    l = l.rstrip("\n")
    if not l.strip():
        flush(); frames = []
        continue
    if l.startswith((" ", "\t")):
        p = l.split()
        if len(p) >= 3:
            frames.append((p[1].split("+")[0], p[-1].strip("()")))
flush()
for s, c in acc.most_common():
    dso = prog if not s.startswith(("[k]", "(")) else "[kernel.kallsyms]"
    print("%8.2f%%  %s  [%s] %s" % (100.0 * c / max(n, 1), dso, "k" if s.startswith("[k]") else ".", s.replace("[k] ", "")))
' "$plain" >"$D/perf_folded.txt"
		rm -f "$D/perfg.data"
	fi
	if [ "$name" = lua ]; then
		if command -v uftrace >/dev/null; then
			timed "$D/uftrace.t" uftrace record -d "$W/uftrace.data" "$hooks" "$@"
			rm -rf "$W/uftrace.data"
		else
			echo "uftrace: not installed (apt-get install uftrace): not compared"
		fi
	fi
	python3 "$W/an.py" ei "$name" "$D" "$RUNS" "$title" "$(basename "$plain")"
	echo
}

# slow_program NAME TARGET TITLE CMD...: section (c)-(e) for one program
slow_program() {
	local name=$1 target=$2 title=$3 i D=$W/$1
	shift 3
	mkdir -p "$D"
	echo "== $title"
	"$@" >/dev/null 2>&1 </dev/null || { skip "$name" "it does not run: $*"; return; }
	"$SC" record -m instrument -o "$D/warm.data" -- "$@" >/dev/null 2>&1 </dev/null  # the plan, cached
	rm -f "$D/warm.data"
	for ((i = 1; i <= RUNS; i++)); do
		timed "$D/plain.t" "$@"
		if timed "$D/rec.t" "$SC" record -m instrument -o "$D/r.data" -- "$@"; then
			"$SC" report -i "$D/r.data" --format json --top 1 >"$D/rec$i.json" 2>/dev/null
			rm -f "$D/r.data"
		fi
	done
	python3 "$W/an.py" slow "$name" "$D" "$RUNS" "$target" "$title"
	echo
}

# cached_build KEY DIR: DIR is the build cache's entry for KEY (made by the
# caller when missing); the key names the source, the flags and the compiler
cache_dir() { echo "$CACHE/builds/$(printf '%s\n' "$@" "$(gcc --version | head -1)" | md5sum | cut -c1-16)"; }

echo "stackclock $(git rev-parse --short HEAD 2>/dev/null || echo '?') (src/ last changed in $(git log -1 --format=%h -- src 2>/dev/null || echo '?'); $SC), $RUNS runs$([ "$SHORT" = 1 ] && echo ', short workloads'), $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "machine: $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg) at the start"
echo

# ---- sources: Lua (for (b) and (d)) -------------------------------------
LUA_TGZ=$CACHE/lua5.4_5.4.4.orig.tar.gz
if [ ! -s "$LUA_TGZ" ]; then
	curl -sf -o "$LUA_TGZ.tmp" http://deb.debian.org/debian/pool/main/l/lua5.4/lua5.4_5.4.4.orig.tar.gz &&
		mv "$LUA_TGZ.tmp" "$LUA_TGZ"
fi
LUA_SRC=""
if [ -s "$LUA_TGZ" ] && mkdir -p "$W/lua-src" && tar xzf "$LUA_TGZ" -C "$W/lua-src" --strip-components=1; then
	LUA_SRC=$W/lua-src
fi

# ---- (a) SQLite -----------------------------------------------------------
cat >"$W/sqlite_drv.c" <<'EOF'
/* bench/realworld.sh's SQLite workload: N rows into an in-memory table
 * with an index on k (keys in a scattered order), then Q range queries
 * through the index. */
#include <stdio.h>
#include <stdlib.h>
#include "sqlite3.h"

static void check(int rc, sqlite3 *db, const char *what)
{
	if (rc != SQLITE_OK && rc != SQLITE_DONE && rc != SQLITE_ROW) {
		fprintf(stderr, "sqlite: %s: %s\n", what, sqlite3_errmsg(db));
		exit(1);
	}
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 400000;
	int q = argc > 2 ? atoi(argv[2]) : 2000;
	sqlite3 *db;
	sqlite3_stmt *ins, *sel;
	char text[64];
	long long rows = 0, len = 0;

	check(sqlite3_open(":memory:", &db), db, "open");
	check(sqlite3_exec(db, "CREATE TABLE t(id INTEGER PRIMARY KEY, k INTEGER, v TEXT);"
			   "CREATE INDEX tk ON t(k); BEGIN", 0, 0, 0), db, "create");
	check(sqlite3_prepare_v2(db, "INSERT INTO t(k, v) VALUES (?, ?)", -1, &ins, 0), db, "insert");
	for (int i = 0; i < n; i++) {
		unsigned k = (unsigned)i * 2654435761u % (unsigned)n;
		int l = snprintf(text, sizeof(text), "row %d key %u", i, k);

		sqlite3_bind_int(ins, 1, (int)k);
		sqlite3_bind_text(ins, 2, text, l, SQLITE_STATIC);
		check(sqlite3_step(ins), db, "insert step");
		sqlite3_reset(ins);
	}
	check(sqlite3_exec(db, "COMMIT", 0, 0, 0), db, "commit");
	check(sqlite3_prepare_v2(db, "SELECT v FROM t WHERE k BETWEEN ? AND ?", -1, &sel, 0), db, "select");
	for (int i = 0; i < q; i++) {
		int lo = (int)((unsigned)i * 40503u % (unsigned)n);

		sqlite3_bind_int(sel, 1, lo);
		sqlite3_bind_int(sel, 2, lo + 100);
		while (sqlite3_step(sel) == SQLITE_ROW) {
			rows++;
			len += sqlite3_column_bytes(sel, 0);
		}
		sqlite3_reset(sel);
	}
	printf("%d rows, %lld found, %lld bytes\n", n, rows, len);
	sqlite3_finalize(ins);
	sqlite3_finalize(sel);
	sqlite3_close(db);
	return 0;
}
EOF
SQ_DEFS="-DSQLITE_THREADSAFE=0 -DSQLITE_OMIT_LOAD_EXTENSION -DSQLITE_DEFAULT_MEMSTATUS=0"
if want sqlite; then
	SQ_TGZ=$(ls "$CACHE"/better-sqlite3-12.*.tgz 2>/dev/null | sort -V | tail -1)
	if [ -z "$SQ_TGZ" ] && command -v npm >/dev/null; then
		(cd "$CACHE" && timeout 300 npm pack -q better-sqlite3@12 >/dev/null 2>&1)
		SQ_TGZ=$(ls "$CACHE"/better-sqlite3-12.*.tgz 2>/dev/null | sort -V | tail -1)
	fi
	SQ_OK=0
	if [ -z "$SQ_TGZ" ]; then
		skip sqlite "no better-sqlite3@12 tarball (npm pack better-sqlite3@12 failed: no network or no npm)"
	else
		B=$(cache_dir "$(basename "$SQ_TGZ")" "$SQ_DEFS" "$(md5sum <"$W/sqlite_drv.c")")
		if [ ! -x "$B/sqlite-plain" ] || [ ! -x "$B/sqlite-hooks" ]; then
			echo "building SQLite from $(basename "$SQ_TGZ") (plain and hooks, about 2 minutes; cached after)"
			rm -rf "$B.tmp" && mkdir -p "$B.tmp" &&
				tar xzf "$SQ_TGZ" -C "$B.tmp" package/deps/sqlite3/sqlite3.c package/deps/sqlite3/sqlite3.h &&
				S=$B.tmp/package/deps/sqlite3 &&
				{ gcc -O2 $SQ_DEFS -c -o "$B.tmp/plain.o" "$S/sqlite3.c" & p1=$!
				  gcc -O2 -finstrument-functions $SQ_DEFS -c -o "$B.tmp/hooks.o" "$S/sqlite3.c" & p2=$!
				  wait $p1 && wait $p2; } 2>"$W/build.err" &&
				gcc -O2 -I"$S" -o "$B.tmp/sqlite-plain" "$W/sqlite_drv.c" "$B.tmp/plain.o" -lm 2>>"$W/build.err" &&
				gcc -O2 -finstrument-functions -I"$S" -o "$B.tmp/sqlite-hooks" "$W/sqlite_drv.c" "$B.tmp/hooks.o" -lm 2>>"$W/build.err" &&
				rm -rf "$B.tmp/package" "$B.tmp"/*.o && rm -rf "$B" && mv "$B.tmp" "$B"
		fi
		if [ -x "$B/sqlite-plain" ] && [ -x "$B/sqlite-hooks" ]; then
			SQ_OK=1
			cp "$B/sqlite-plain" "$B/sqlite-hooks" "$W/bin/"
		else
			rm -rf "$B.tmp"
			skip sqlite "the build failed: $(tail -1 "$W/build.err" 2>/dev/null)"
		fi
	fi
	if [ $SQ_OK = 1 ]; then
		SQ_VER=$(tar xzOf "$SQ_TGZ" package/deps/sqlite3/sqlite3.h | sed -n 's/^#define SQLITE_VERSION *"\(.*\)"/\1/p')
		set -- $SQ_ARGS
		ei_program sqlite "(a) SQLite $SQ_VER ($1 rows inserted, indexed, $2 range queries)" \
			"$W/bin/sqlite-plain" "$W/bin/sqlite-hooks" $SQ_ARGS
	fi
fi

# ---- (b) Lua --------------------------------------------------------------
cat >"$W/bench.lua" <<'EOF'
-- bench/realworld.sh's Lua workload: calls, method calls on small tables,
-- formatting, sorting, substrings.  Arguments: N, and F for fib(F).
local N = tonumber(arg[1]) or 100000
local F = tonumber(arg[2]) or 27
local function fib(n) if n < 2 then return n end return fib(n - 1) + fib(n - 2) end
local Point = {}
Point.__index = Point
function Point.new(x, y) return setmetatable({x = x, y = y}, Point) end
function Point:add(o) return Point.new(self.x + o.x, self.y + o.y) end
local acc = Point.new(0, 0)
for i = 1, N * 4 do acc = acc:add(Point.new(i, -i)) end
local t = {}
for i = 1, N do t[i] = string.format("%07d:%s", i * 7919 % N, tostring(i)) end
table.sort(t)
local words, c = {}, 0
for i = 1, #t do local k = t[i]:sub(1, 4) words[k] = (words[k] or 0) + 1 end
for _, v in pairs(words) do c = c + v end
print(fib(F), acc.x, #t, c)
EOF
if want lua; then
	if [ -z "$LUA_SRC" ]; then
		skip lua "Lua's source not available (no network to deb.debian.org)"
	else
		B=$(cache_dir "$(basename "$LUA_TGZ")" "lua -O2 plain hooks")
		if [ ! -x "$B/lua-plain" ] || [ ! -x "$B/lua-hooks" ]; then
			echo "building Lua 5.4 (plain and hooks; cached after)"
			rm -rf "$B.tmp" && mkdir -p "$B.tmp"
			for v in plain hooks; do
				extra=""
				[ $v = hooks ] && extra="-finstrument-functions"
				mkdir -p "$W/lua-$v" && tar xzf "$LUA_TGZ" -C "$W/lua-$v" --strip-components=1 &&
					make -s -C "$W/lua-$v/src" lua CC=gcc MYCFLAGS="$extra" \
						SYSCFLAGS="-DLUA_USE_LINUX" SYSLIBS="-Wl,-E -ldl" >"$W/build-$v.log" 2>&1 &&
					cp "$W/lua-$v/src/lua" "$B.tmp/lua-$v" &
			done
			wait
			[ -x "$B.tmp/lua-plain" ] && [ -x "$B.tmp/lua-hooks" ] && rm -rf "$B" && mv "$B.tmp" "$B"
			rm -rf "$B.tmp" "$W/lua-plain" "$W/lua-hooks"
		fi
		if [ -x "$B/lua-plain" ] && [ -x "$B/lua-hooks" ]; then
			cp "$B/lua-plain" "$B/lua-hooks" "$W/bin/"
			set -- $LUA_ARGS
			ei_program lua "(b) Lua 5.4.4 (fib($2), $(($1 * 8)) method calls, $1 strings formatted and sorted)" \
				"$W/bin/lua-plain" "$W/bin/lua-hooks" "$W/bench.lua" $LUA_ARGS
		else
			skip lua "the build failed: $(tail -1 "$W/build-plain.log" "$W/build-hooks.log" 2>/dev/null | tail -1)"
		fi
	fi
fi

# ---- (c) python3 ----------------------------------------------------------
cat >"$W/bench.py" <<'EOF'
# bench/realworld.sh's python3 workload: N objects to JSON and back
import json, sys
n = int(sys.argv[1])
objs = [{"id": i, "name": "item%d" % i, "tags": ["a", "b", str(i % 7)],
         "price": i * 0.25, "ok": i % 3 == 0, "sub": {"x": i, "y": [i, i + 1]}} for i in range(n)]
s = json.dumps(objs)
back = json.loads(s)
print(len(s), sum(o["price"] for o in back if o["ok"]), sum(len(o["tags"]) for o in back))
EOF
if want python; then
	PY=/usr/bin/python3.11     # Debian's (PATH may find a wrapper script first)
	[ -x "$PY" ] || PY=$(ls /usr/bin/python3.[0-9]* 2>/dev/null | grep -v config | head -1)
	if [ -z "$PY" ] || [ ! -x "$PY" ]; then
		skip python "no /usr/bin/python3.X"
	else
		slow_program python 3 "(c) $PY (Debian's) building and parsing $PY_N JSON objects" "$PY" "$W/bench.py" "$PY_N"
	fi
fi

# ---- (d) gcc -O2 -c lparser.c ----------------------------------------------
if want gcc; then
	if [ -z "$LUA_SRC" ]; then
		skip gcc "Lua's source (for lparser.c) not available"
	else
		slow_program gcc 4 "(d) gcc -O2 -c lparser.c (Lua 5.4.4, $(wc -l <"$LUA_SRC/src/lparser.c") lines; gcc, cc1, as)" \
			gcc -O2 -c -o "$W/lparser.o" "$LUA_SRC/src/lparser.c"
	fi
fi

# ---- (e) gzip -------------------------------------------------------------
if want gzip; then
	# generated text: lines of words and numbers, compressible as prose is
	awk -v mb="$GZ_MB" 'BEGIN {
		srand(17); split("the of and to in is was for on that with as by at from his her an were which this are be or had not but they all their have one", w, " ")
		n = 0
		while (n < mb * 1048576) {
			l = sprintf("%d", int(rand() * 100000))
			for (i = 0; i < 12; i++) l = l " " w[1 + int(rand() * 35)]
			l = l " " int(rand() * 1e6) "." int(rand() * 100)
			print l; n += length(l) + 1
		}
	}' >"$W/gzip.txt"
	if [ ! -s "$W/gzip.txt" ] || [ ! -x /usr/bin/gzip ]; then
		skip gzip "no /usr/bin/gzip or no input"
	else
		slow_program gzip 0 "(e) /usr/bin/gzip -c of $GZ_MB MB of generated text" /usr/bin/gzip -c "$W/gzip.txt"
	fi
	rm -f "$W/gzip.txt"
fi

echo "== summary (targets of issue 17)"
cat "$W/summary.txt" 2>/dev/null
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
exit 0
