"""Helpers for t330 (attaching): read a running process's memory as root.

  att_check.py text PID EXE       exit 0 when every byte of EXE's executable
                                  mappings in PID equals the file's
  att_check.py counts FILE [PID]  the sum of the program's counters (8-byte
                                  words, NTHREADS + 1 of them); with PID, and
                                  the CPU seconds PID has used
  att_check.py window FILE START_NS DURATION_NS
                                  the program's iterations within the window
                                  (its own samples of time and count,
                                  interpolated), and the largest gap between
                                  samples around its ends, in ns
  att_check.py got PID EXE SYM    print "libc", "stackclock" or "other": the
                                  mapping the GOT slot of SYM in PID points into
  att_check.py open TREE.json DURATION_NS NTHREADS MAX_REPAIRS
                                  the calls running at the attach (SPEC section
                                  13) in a --raw-times call tree: one line per
                                  check, "ok|not ok DESCRIPTION"
"""
import os
import struct
import subprocess
import sys


def maps(pid):
    out = []
    with open(f"/proc/{pid}/maps") as f:
        for line in f:
            parts = line.split(None, 5)
            lo, hi = (int(x, 16) for x in parts[0].split("-"))
            path = parts[5].strip() if len(parts) > 5 else ""
            out.append((lo, hi, parts[1], int(parts[2], 16), path))
    return out


def text(pid, exe):
    data = open(exe, "rb").read()
    mem = open(f"/proc/{pid}/mem", "rb")
    n = 0
    for lo, hi, perms, off, path in maps(pid):
        if path != exe or "x" not in perms:
            continue
        size = min(hi - lo, len(data) - off)
        mem.seek(lo)
        got = mem.read(size)
        if got != data[off:off + size]:
            diff = next(i for i in range(size) if got[i] != data[off + i])
            print(f"differs at {hex(lo + diff)}: {got[diff:diff + 8].hex()} vs "
                  f"{data[off + diff:off + diff + 8].hex()}")
            return 1
        n += size
    if not n:
        print("no executable mapping of", exe)
        return 1
    return 0


def counts(path, pid=None):
    raw = open(path, "rb").read(32)
    n = sum(struct.unpack("<4Q", raw))
    if pid is None:
        print(n)
        return 0
    f = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    tck = os.sysconf("SC_CLK_TCK")
    print(n, (int(f[11]) + int(f[12])) / tck)
    return 0


def window(path, start, dur):
    raw = open(path, "rb").read()
    n = struct.unpack_from("<Q", raw, 64)[0]
    smp = [struct.unpack_from("<2Q", raw, 128 + 16 * i) for i in range(n)]

    def at(t):
        for (t0, c0), (t1, c1) in zip(smp, smp[1:]):
            if t0 <= t <= t1:
                return c0 + (c1 - c0) * (t - t0) / max(t1 - t0, 1), t1 - t0
        raise SystemExit(f"no sample around {t} ({n} samples)")

    a, ga = at(start)
    b, gb = at(start + dur)
    print(int(b - a), max(ga, gb))
    return 0


def got(pid, exe, sym):
    rel = subprocess.run(["readelf", "-rW", exe], capture_output=True, text=True).stdout
    off = None
    for line in rel.splitlines():
        f = line.split()
        if len(f) >= 5 and f[4].startswith(sym + "@"):
            off = int(f[0], 16)
    m = maps(pid)
    base = min(lo - o for lo, hi, p, o, path in m if path == exe and o == 0)
    mem = open(f"/proc/{pid}/mem", "rb")
    mem.seek(base + off)
    v = struct.unpack("<Q", mem.read(8))[0]
    for lo, hi, p, o, path in m:
        if lo <= v < hi:
            print("stackclock" if "libstackclock" in path else "libc" if "libc.so" in path else "other")
            return 0
    print("other")
    return 0


def open_frames(path, dur, nthreads, max_repairs):
    """run() (NTHREADS threads) and tight() (one) run for the whole window:
    open at the start, not new calls, their time from each thread's first
    event to its last (the window, less the time the threads are stopped
    or wait for a CPU at each end); step() and tick() are called inside them only."""
    import json
    d = json.load(open(path))
    roots = {}
    for r in d["tree"]:
        roots.setdefault(r["function"], []).append(r)
    out = []

    def check(cond, what):
        out.append(("ok " if cond else "not ok ") + what)

    for fn, n in (("run", nthreads), ("tight", 1)):
        rs = roots.get(fn, [])
        calls = sum(r["calls"] for r in rs)
        ei = sum(r["elapsed_inclusive_ns"] for r in rs)
        check(rs and calls == 0, f"{fn}: open at the attach, 0 calls ({calls})")
        # (a thread waiting for a CPU on a loaded machine has its first
        # event late and its last one early: half the window at least)
        check(0.5 * n * dur <= ei <= 1.02 * n * dur,
              f"{fn}: EI {ei} ns = {n} x the window {dur} ns (0.5-1.02)")
    for fn in ("step", "tick", "tiny"):
        check(fn not in roots, f"{fn}: never at the root (its callers were open at the attach)")
    check(d["session"]["repairs"] <= max_repairs,
          f"repairs at most {max_repairs} ({d['session']['repairs']})")
    print("\n".join(out))
    return 0


if __name__ == "__main__":
    cmd = sys.argv[1]
    if cmd == "text":
        sys.exit(text(int(sys.argv[2]), sys.argv[3]))
    if cmd == "counts":
        sys.exit(counts(sys.argv[2], int(sys.argv[3]) if len(sys.argv) > 3 else None))
    if cmd == "window":
        sys.exit(window(sys.argv[2], int(sys.argv[3]), int(sys.argv[4])))
    if cmd == "open":
        sys.exit(open_frames(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])))
    if cmd == "got":
        sys.exit(got(int(sys.argv[2]), sys.argv[3], sys.argv[4]))
    sys.exit(2)
