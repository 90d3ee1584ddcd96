#!/usr/bin/env python3
"""Checks of a Chrome trace export of tests/progs/timeline_prog.c, for t511.

    chrome_trace.py shape TRACE.json          any export: the format's rules
    chrome_trace.py calls TRACE.json UNIT_MS  instrumentation: calls, order,
                                              nesting, durations, OS events
    chrome_trace.py samples TRACE.json        sampling: samples per thread,
                                              their stacks and order
    chrome_trace.py libcalls TRACE.json       instrumentation with library
                                              calls: where they sit

Each prints what it found and exits 1 with the first problem.
"""
import json
import re
import sys

# per thread name: (depth, function, units, leaves) in order; units: the
# call's least duration (work k, outer 2k, nap k), leaves: the spinning or
# sleeping calls in it, each of which may end up to SLACK_MS late on a
# loaded machine (main: no bound, it waits for the threads)
EXPECTED = {
    "timeline_prog": [(0, "main", 13, None), (1, "work", 2, 1)],
    "tl-a": [(0, "thread_a", 13, 5), (1, "work", 3, 1), (1, "outer", 4, 2), (2, "work", 2, 1),
             (2, "work", 2, 1), (1, "nap", 5, 1), (1, "work", 1, 1)],
    "tl-b": [(0, "thread_b", 7, 4), (1, "work", 1, 1), (1, "work", 4, 1), (1, "outer", 2, 2),
             (2, "work", 1, 1), (2, "work", 1, 1)],
}
SLACK_MS = 60

NUM = re.compile(r'"(ts|dur)":(\d+)(\.\d+)?[,}]')


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def load(path):
    text = open(path, encoding="utf-8").read()
    d = json.loads(text)
    return d, text


def names(d):
    """thread names by (pid, tid), process names by pid"""
    threads, procs = {}, {}
    for e in d["traceEvents"]:
        if e["ph"] == "M" and e["name"] == "thread_name":
            threads[(e["pid"], e["tid"])] = e["args"]["name"]
        elif e["ph"] == "M" and e["name"] == "process_name":
            procs[e["pid"]] = e["args"]["name"]
    return threads, procs


def check_shape(d, text):
    """Rules every export keeps: keys, ns precision, named tracks, nesting."""
    if not isinstance(d.get("traceEvents"), list) or not d["traceEvents"]:
        fail("no traceEvents")
    for m in NUM.finditer(text):
        if m.group(3) is not None and len(m.group(3)) != 4:
            fail("time %s%s is not microseconds with 3 decimals" % (m.group(2), m.group(3)))
    threads, procs = names(d)
    tracks = {}
    for e in d["traceEvents"]:
        for k in ("ph", "pid", "tid"):
            if k not in e:
                fail("event without %s: %r" % (k, e))
        if e["ph"] == "M":
            continue
        if (e["pid"], e["tid"]) not in threads or e["pid"] not in procs:
            fail("event on an unnamed track: %r" % e)
        if e["ph"] == "X":
            for k in ("ts", "dur", "name", "cat"):
                if k not in e:
                    fail("complete event without %s: %r" % (k, e))
            if e["cat"] not in ("call", "libcall", "os"):
                fail("unknown category %r" % e["cat"])
            tracks.setdefault((e["pid"], e["tid"]), []).append(e)
        elif e["ph"] == "i":
            if e.get("cat") != "sample" or e.get("s") != "t" or str(e.get("sf")) not in d.get("stackFrames", {}):
                fail("instant event that is not a sample with a known frame: %r" % e)
        else:
            fail("unexpected phase %r" % e["ph"])
    for key, evs in tracks.items():
        nest(evs, key)
    for sid, f in d.get("stackFrames", {}).items():
        if "parent" in f and str(f["parent"]) not in d["stackFrames"]:
            fail("frame %s has an unknown parent" % sid)
    print("shape: %d events, %d tracks, %d frames" % (len(d["traceEvents"]), len(tracks),
                                                     len(d.get("stackFrames", {}))))


def nest(evs, key):
    """Slices of one track nest; sets each event's depth (times in ns)."""
    evs.sort(key=lambda e: (round(e["ts"] * 1000), -round(e["dur"] * 1000)))
    stack = []
    for e in evs:
        s, t = round(e["ts"] * 1000), round((e["ts"] + e["dur"]) * 1000)
        while stack and stack[-1] <= s:
            stack.pop()
        if stack and t > stack[-1]:
            fail("track %r: %s at %s overlaps the slice around it" % (key, e["name"], e["ts"]))
        e["depth"] = len(stack)
        stack.append(t)
    return evs


def check_calls(d, unit_ms):
    threads, procs = names(d)
    by_name = {}
    for (pid, tid), n in threads.items():
        if "(track" not in n:
            by_name[n] = (pid, tid)
    for tname, want in EXPECTED.items():
        if tname not in by_name:
            fail("no thread named %s (threads: %s)" % (tname, sorted(threads.values())))
        pid, tid = by_name[tname]
        calls = [e for e in d["traceEvents"] if e["ph"] == "X" and e["pid"] == pid and e["tid"] == tid
                 and e["cat"] == "call"]
        nest(calls, tname)
        got = [(e["depth"], e["name"]) for e in calls]
        if got != [(w[0], w[1]) for w in want]:
            fail("%s: calls %s, want %s" % (tname, got, [(w[0], w[1]) for w in want]))
        for e, (_, n, units, leaves) in zip(calls, want):
            ms, least = e["dur"] / 1000, units * unit_ms
            most = least + SLACK_MS * leaves if leaves else float("inf")
            if not least * 0.99 <= ms <= most:
                fail("%s: %s lasted %.3f ms, want %g to %g ms" % (tname, n, ms, least, most))
            if e["args"].get("open") or e["args"].get("module") != "timeline_prog":
                fail("%s: %s args %r" % (tname, n, e["args"]))
        print("%s: %s" % (tname, " ".join("%s%s(%.2fms)" % (" " * e["depth"], e["name"], e["dur"] / 1000)
                                       for e in calls)))
    # main joins the threads: it ends after both
    ends = {}
    for tname, (pid, tid) in by_name.items():
        tops = [e for e in d["traceEvents"] if e["ph"] == "X" and e["tid"] == tid and e["cat"] == "call"]
        if tops:
            ends[tname] = max(e["ts"] + e["dur"] for e in tops)
    if not ends["timeline_prog"] >= max(ends["tl-a"], ends["tl-b"]):
        fail("main ended before the threads it joins: %r" % ends)
    # the OS worked for tl-a while it slept: inside nap, on its track
    pid, tid = by_name["tl-a"]
    napc = [e for e in d["traceEvents"] if e["ph"] == "X" and e["tid"] == tid and e["name"] == "nap"][0]
    inside = [e for e in d["traceEvents"] if e["ph"] == "X" and e["cat"] == "os" and e["tid"] == tid and
              napc["ts"] <= e["ts"] and e["ts"] + e["dur"] <= napc["ts"] + napc["dur"] + 0.0005]
    kinds = sorted(set(e["name"] for e in inside))
    print("os events inside nap:", kinds)
    return kinds


def frames_of(d, sf):
    out, f = [], str(sf)
    while f is not None:
        fr = d["stackFrames"][f]
        out.append(fr["name"])
        f = str(fr["parent"]) if "parent" in fr else None
    return out[::-1]          # outermost first


def check_samples(d):
    threads, procs = names(d)
    if "samples" not in d:
        fail("no top-level samples")
    inst = [e for e in d["traceEvents"] if e["ph"] == "i"]
    if [(e["tid"], e["ts"], e["sf"]) for e in inst] != [(s["tid"], s["ts"], s["sf"]) for s in d["samples"]]:
        fail("the instant events and the samples differ")
    by_name = {n: k for k, n in threads.items()}
    for tname, top, want in (("tl-a", "thread_a", ["work", "outer", "work"]),
                             ("tl-b", "thread_b", ["work", "outer"])):
        pid, tid = by_name[tname]
        ss = [s for s in d["samples"] if s["tid"] == tid and s["pid"] == pid]
        if len(ss) < 20:
            fail("%s: %d samples" % (tname, len(ss)))
        if any(a["ts"] > b["ts"] for a, b in zip(ss, ss[1:])):
            fail("%s: samples out of order" % tname)
        stacks = [frames_of(d, s["sf"]) for s in ss]
        in_work = sum("work" in st for st in stacks)
        if in_work < 0.8 * len(ss):
            fail("%s: %d of %d samples in work" % (tname, in_work, len(ss)))
        runs = []
        for st in stacks:
            if top not in st or st.index(top) + 1 >= len(st):
                continue
            below = st[st.index(top) + 1]
            if below in ("work", "outer") and (not runs or runs[-1] != below):
                runs.append(below)
        if runs != want:
            fail("%s: calls under %s in time order %s, want %s" % (tname, top, runs, want))
        print("%s: %d samples, %d in work, in order %s" % (tname, len(ss), in_work, runs))


def check_libcalls(d):
    """clock_gettime (libc) inside work, pthread_create inside main."""
    tracks = {}
    for e in d["traceEvents"]:
        if e["ph"] == "X" and e["cat"] in ("call", "libcall"):
            tracks.setdefault((e["pid"], e["tid"]), []).append(e)
    parent_of, n = {}, 0
    for evs in tracks.values():
        stack = []
        for e in nest(evs, "calls"):
            del stack[e["depth"]:]
            if e["cat"] == "libcall":
                n += 1
                if e["args"].get("module", "").split(".so")[0] != "libc":
                    fail("library call %s in module %r" % (e["name"], e["args"].get("module")))
                parent_of.setdefault(e["name"], set()).add(stack[-1]["name"] if stack else None)
            stack.append(e)
    want = {"clock_gettime": {"work"}, "pthread_create": {"main"}}
    for name, parents in want.items():
        if parent_of.get(name) != parents:
            fail("%s called from %s, want %s" % (name, parent_of.get(name), parents))
    print("%d library calls: %s" % (n, {k: sorted(v, key=str) for k, v in parent_of.items()}))


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    d, text = load(sys.argv[2])
    if sys.argv[1] == "shape":
        check_shape(d, text)
    elif sys.argv[1] == "calls":
        check_calls(d, float(sys.argv[3]))
    elif sys.argv[1] == "samples":
        check_samples(d)
    elif sys.argv[1] == "libcalls":
        check_libcalls(d)
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
