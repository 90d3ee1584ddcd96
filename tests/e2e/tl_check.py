#!/usr/bin/env python3
"""Checks of a `replay --format json` timeline (t320), independent of the
tool: each mode prints what it found and exits 1 on the first violation.

  tl_check.py nest REPLAY.json
      per thread: events sorted by start; calls properly nested (each
      within the innermost call open around it), depth = calls open
      around it; OS events and samples inside the call their depth says
  tl_check.py program REPLAY.json PROGRAM.out N
      the program's own record of step()/inner() (tl e2e_timeline.c):
      per thread the same calls in the same order, each call's interval
      holding the program's (20 us of clock slack), and 90 % within
      150 us of it after the first step; step > inner nesting; nap > usleep > a
      clock_nanosleep system call after every step but the first
  tl_check.py counts REPLAY.json REPORT.json
      every function's calls in the timeline = its calls in the report
  tl_check.py mintime REPLAY.json MIN_NS
      every call and OS event lasts at least MIN_NS
  tl_check.py only REPLAY.json NAME
      every call is NAME or inside one
  tl_check.py depth REPLAY.json N
      every call's depth < N
  tl_check.py window REPLAY.json SINCE_NS UNTIL_NS
      every event ends at or after SINCE and starts at or before UNTIL
  tl_check.py samples REPLAY.json REPORT.json
      sampled: samples in time order, as many as the report's, most of
      them with spin on their stack
"""
import collections
import json
import sys


def fail(msg):
    print(msg)
    sys.exit(1)


def load(p):
    with open(p) as f:
        return json.load(f)


def calls(t):
    return [e for e in t["events"] if e["kind"] == "call"]


def nest(d):
    n = 0
    for t in d["threads"]:
        stack = []      # (end, depth, start) of open calls
        prev = -1
        for e in t["events"]:
            s = e["start_ns"]
            if s < prev:
                fail("thread %d: not sorted at %r" % (t["tid"], e))
            prev = s
            end = s + e.get("duration_ns", 0)
            # a call is over at its end (an empty one holds what starts
            # with it)
            while stack and stack[-1][0] <= s and not (stack[-1][0] == stack[-1][2] == s):
                stack.pop()
            if e["kind"] == "call":
                if stack and end > stack[-1][0]:
                    fail("thread %d: %s overlaps the call around it" % (t["tid"], e))
                if stack and e["depth"] <= stack[-1][1]:
                    fail("thread %d: %s not deeper than the call around it (%d)" % (t["tid"], e, stack[-1][1]))
                stack.append((end, e["depth"], s))
                n += 1
            elif stack and e["depth"] != stack[-1][1] + 1:
                fail("thread %d: %s not at the depth of the call around it + 1 (%d)" % (t["tid"], e, stack[-1][1]))
    print("%d calls nested" % n)


def program(d, out, nsteps):
    prog = collections.defaultdict(list)
    for line in open(out):
        tid, name, a, b = line.split()
        prog[int(tid)].append((name, int(a), int(b)))
    t0 = d["t0_ns"]
    close = total = 0
    for tid, want in prog.items():
        th = [t for t in d["threads"] if t["tid"] == tid]
        if len(th) != 1:
            fail("thread %d: %d timelines" % (tid, len(th)))
        cs = calls(th[0])
        got = [e for e in cs if e["function"] in ("step", "inner")]
        # the program notes a call when it returns: inner before its step
        order = sorted(got, key=lambda e: e["start_ns"] + e["duration_ns"])
        if [e["function"] for e in order] != [w[0] for w in want]:
            fail("thread %d: calls %s, the program made %s" % (tid, [e["function"] for e in order], [w[0] for w in want]))
        if len(want) != 2 * nsteps:
            fail("thread %d: the program noted %d calls" % (tid, len(want)))
        for k, (e, (name, a, b)) in enumerate(zip(order, want)):
            s = t0 + e["start_ns"]
            end = s + e["duration_ns"]
            if s > a + 20000 or end < b - 20000:
                fail("thread %d: %s [%d, %d] does not hold the program's [%d, %d]" % (tid, name, s, end, a, b))
            # the first step of a thread runs the runtime's first-time
            # work (new calling contexts) inside it: not counted
            if k >= 2:
                total += 1
                close += (a - s) + (end - b) <= 150000
        for i, e in enumerate(cs):
            if e["function"] == "inner":
                if not any(p["function"] == "step" and p["depth"] == e["depth"] - 1 and
                           p["start_ns"] <= e["start_ns"] and
                           e["start_ns"] + e["duration_ns"] <= p["start_ns"] + p["duration_ns"] for p in cs):
                    fail("thread %d: inner at %d is in no step" % (tid, e["start_ns"]))
        naps = [e for e in cs if e["function"] == "nap" and e["depth"] == min(x["depth"] for x in got)]
        if len(naps) != nsteps - 1:
            fail("thread %d: %d naps, want %d" % (tid, len(naps), nsteps - 1))
        ev = th[0]["events"]
        for nap in naps:
            s, end = nap["start_ns"], nap["start_ns"] + nap["duration_ns"]
            inside = [e for e in ev if s <= e["start_ns"] and e["start_ns"] + e.get("duration_ns", 0) <= end]
            us = [e for e in inside if e["kind"] == "call" and e["function"] == "usleep" and e["depth"] == nap["depth"] + 1]
            sl = [e for e in inside if e["kind"] == "os" and e.get("name") == "clock_nanosleep" and e["depth"] == nap["depth"] + 2]
            if len(us) != 1 or len(sl) != 1:
                fail("thread %d: nap at %d holds %d usleep calls and %d clock_nanosleep system calls" % (tid, s, len(us), len(sl)))
            if not 250000 <= sl[0]["duration_ns"] <= nap["duration_ns"]:
                fail("thread %d: clock_nanosleep of %d ns in a nap of %d" % (tid, sl[0]["duration_ns"], nap["duration_ns"]))
    if close < 0.9 * total:
        fail("only %d of %d calls within 150 us of the program's own measure" % (close, total))
    print("%d calls as the program made them, %d within 150 us" % (total, close))


def counts(d, rep):
    c = collections.Counter((e["function"], e["module"]) for t in d["threads"] for e in calls(t))
    rows = {(r["function"], r["module"]): r["calls"] for r in rep["rows"]}
    for k, v in rows.items():
        if c.get(k, 0) != v:
            fail("%s: %d calls in the timeline, %d in the report" % (k, c.get(k, 0), v))
    extra = set(c) - set(rows)
    if extra:
        fail("in the timeline only: %s" % sorted(extra))
    print("%d functions, %d calls: the report's" % (len(rows), sum(rows.values())))


def main(argv):
    mode, d = argv[1], load(argv[2])
    if mode == "nest":
        nest(d)
    elif mode == "program":
        program(d, argv[3], int(argv[4]))
    elif mode == "counts":
        counts(d, load(argv[3]))
    elif mode == "mintime":
        m = int(argv[3])
        bad = [e for t in d["threads"] for e in t["events"] if e["kind"] != "sample" and e["duration_ns"] < m]
        if bad:
            fail("%d events shorter than %d ns: %s" % (len(bad), m, bad[:3]))
        print("%d events, none shorter" % sum(len(t["events"]) for t in d["threads"]))
    elif mode == "only":
        for t in d["threads"]:
            ends = []
            for e in calls(t):
                ends = [x for x in ends if x > e["start_ns"]]
                if e["function"] != argv[3] and not ends:
                    fail("%s at %d is not inside %s" % (e["function"], e["start_ns"], argv[3]))
                if e["function"] == argv[3]:
                    ends.append(e["start_ns"] + e["duration_ns"])
        print("every call inside %s" % argv[3])
    elif mode == "depth":
        m = max((e["depth"] for t in d["threads"] for e in calls(t)), default=-1)
        if m >= int(argv[3]):
            fail("a call at depth %d" % m)
        print("deepest call at depth %d" % m)
    elif mode == "window":
        a, b = int(argv[3]), int(argv[4])
        for t in d["threads"]:
            for e in t["events"]:
                if e["start_ns"] + e.get("duration_ns", 0) < a or e["start_ns"] > b:
                    fail("outside [%d, %d]: %s" % (a, b, e))
        print("%d events in the window" % sum(len(t["events"]) for t in d["threads"]))
    elif mode == "samples":
        rep = load(argv[3])
        n = spin = 0
        for t in d["threads"]:
            prev = -1
            for e in t["events"]:
                if e["kind"] != "sample":
                    fail("not a sample: %s" % e)
                if e["start_ns"] < prev:
                    fail("samples out of order")
                prev = e["start_ns"]
                n += 1
                spin += "spin" in e["stack"]
        want = rep["session"]["samples"]
        if n != want:
            fail("%d samples in the timeline, %d in the report" % (n, want))
        if spin < 0.5 * n:
            fail("only %d of %d samples in spin" % (spin, n))
        print("%d samples in order, the report's; %d in spin" % (n, spin))
    else:
        fail("unknown mode " + mode)


main(sys.argv)
