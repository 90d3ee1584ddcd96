"""Helpers for the end-to-end tests: read a `report --format json` file.

  sc.py query FILE EXPR     print eval(EXPR) with r = the report, and helpers
                            row(name) (the row whose function is name),
                            rows (list), s (session); for a call tree
                            node(a, b, ...) (the first node named a whose
                            descendants along b, ... exist: that last node)
                            and nodes (all, depth first); for callers and
                            callees fn, callers, callees
  sc.py invariants FILE     check SPEC.md's invariants (sections 2, 3,
                            14's sampled shares and repairs by cause, and,
                            for a tree or callers/callees, 6); exit 1 naming
                            the first that fails

Written independently of the tool's own checker so that each checks the
other.
"""
import json
import sys


def load(path):
    with open(path) as f:
        return json.load(f)


def walk(nodes):
    for x in nodes:
        yield x
        yield from walk(x["children"])


def incl_keys(s):
    if s["method"] == "instrumentation":
        return [("elapsed_inclusive_ns", "elapsed_exclusive_ns"),
                ("application_inclusive_ns", "application_exclusive_ns")]
    return [("inclusive_samples", "exclusive_samples")]


def tree_invariants(r):
    """SPEC 6: a child's inclusive <= its parent's; exclusive + children ==
    inclusive for a node shown with all its children (none hidden)."""
    errs = []
    keys = incl_keys(r["session"])
    for x in walk(r["tree"]):
        for inc, exc in keys:
            kids = sum(c[inc] for c in x["children"])
            if any(c[inc] > x[inc] for c in x["children"]):
                errs.append("node %s: a child's %s above its own" % (x.get("function"), inc))
            if x["hidden"] == 0 and x.get("function") and x[exc] + kids != x[inc]:
                errs.append("node %s: %s + children %d != %s %d" % (x["function"], exc, kids, inc, x[inc]))
    return errs


def callers_invariants(r):
    errs = []
    keys = incl_keys(r["session"])
    for e in r.get("functions", [r]):
        f = e["function"]
        for inc, exc in keys:
            if sum(c[inc] for c in e["callers"]) != f[inc]:
                errs.append("%s: callers' %s do not sum to its own" % (f["function"], inc))
            if f[exc] + sum(c[inc] for c in e["callees"]) != f[inc]:
                errs.append("%s: %s + callees' %s != its %s" % (f["function"], exc, inc, inc))
    return errs


SI, SE = "sampled_inclusive_pct", "sampled_exclusive_pct"
EPS = 1e-3   # the JSON's 4 decimals


def share_row(x, name):
    """SPEC 14 per row: 0 <= sampled exclusive <= inclusive <= 100 (a line
    row has no inclusive share)."""
    errs = []
    se, si = x.get(SE), x.get(SI)
    if se is None:
        return errs
    if not -EPS <= se <= 100 + EPS:
        errs.append("row %s: sampled exclusive %% %f out of 0..100" % (name, se))
    if si is not None and not (se <= si + EPS and si <= 100 + EPS):
        errs.append("row %s: sampled exclusive %f > inclusive %f or inclusive > 100" % (name, se, si))
    return errs


def share_session(s, rows):
    """SPEC 14: repairs by cause add up to repairs and open frames; no
    sampled field without the session's samples."""
    errs = []
    c = s.get("repairs_by_cause")
    if c is not None:
        if c["longjmp"] + c["exception"] + c["signal"] + c["other"] != s["repairs"]:
            errs.append("repairs_by_cause %s do not sum to repairs %d" % (c, s["repairs"]))
        if c["exit"] + c["kill"] + c.get("detach", 0) != s["open_frames"]:
            errs.append("repairs_by_cause %s do not sum to open_frames %d" % (c, s["open_frames"]))
    if s.get("method") == "instrumentation" and "samples" not in s and any(SE in x or SI in x for x in rows):
        errs.append("sampled shares in rows of a session without samples")
    return errs


def invariants(r):
    s = r.get("session") or {}
    if "tree" in r:
        return share_session(s, []) + tree_invariants(r) + \
            [e for x in walk(r["tree"]) for e in share_row(x, x.get("function"))]
    if "callers" in r or "functions" in r:
        errs = share_session(s, [])
        for e in r.get("functions", [r]):
            for x in [e["function"]] + e["callers"] + e["callees"]:
                errs += share_row(x, x.get("function"))
        return errs + callers_invariants(r)
    s, rows = r["session"], r["rows"]
    errs = share_session(s, rows)
    if s["method"] == "instrumentation":
        ei, ai = s["elapsed_inclusive_ns"], s["application_inclusive_ns"]
        # Every grouping but call sites partitions the exclusive time.
        partition = not any("callee" in x or "site" in x for x in rows)
        fn_rows = rows if partition else []
        if partition and sum(x["elapsed_exclusive_ns"] for x in fn_rows) != ei:
            errs.append("sum of EE %d != session EI %d" % (sum(x["elapsed_exclusive_ns"] for x in fn_rows), ei))
        if partition and sum(x["application_exclusive_ns"] for x in fn_rows) != ai:
            errs.append("sum of AE != session AI")
        for x in rows:
            e_i, e_e = x["elapsed_inclusive_ns"], x["elapsed_exclusive_ns"]
            a_i, a_e = x["application_inclusive_ns"], x["application_exclusive_ns"]
            name = x.get("function", x.get("tid", x.get("pid")))
            if not (0 <= a_e <= e_e <= e_i and a_e <= a_i <= e_i):
                errs.append("row %s: AE<=EE<=EI, AE<=AI<=EI broken (%d %d %d %d)" % (name, e_i, e_e, a_i, a_e))
            if ei and abs(x["elapsed_inclusive_pct"] - 100.0 * e_i / ei) > 0.01:
                errs.append("row %s: EI%% wrong" % name)
            if ei and abs(x["elapsed_exclusive_pct"] - 100.0 * e_e / ei) > 0.01:
                errs.append("row %s: EE%% wrong" % name)
            if ai and abs(x["application_inclusive_pct"] - 100.0 * a_i / ai) > 0.01:
                errs.append("row %s: AI%% wrong" % name)
            if ai and abs(x["application_exclusive_pct"] - 100.0 * a_e / ai) > 0.01:
                errs.append("row %s: AE%% wrong" % name)
            lo, hi = x.get("min_elapsed_inclusive_ns", 0), x.get("max_elapsed_inclusive_ns", 0)
            if s.get("raw_times"):
                # SPEC section 10: no raw per-call minimum or maximum
                if lo is not None or hi is not None:
                    errs.append("row %s: raw times with a per-call min or max" % name)
            elif x.get("calls", 0) and lo > hi:
                errs.append("row %s: min > max" % name)
            errs += share_row(x, name)
        # the roots' samples (no call open) are in no function's row; a
        # partition's exclusive shares add up to at most 100
        if partition and any(SE in x for x in rows):
            total = sum(x[SE] for x in rows)
            if total > 100 + EPS * len(rows):
                errs.append("sampled exclusive shares sum to %f > 100" % total)
    else:
        n = s["samples"]
        # by call site, a sample whose leaf has no caller on its stack (a
        # stack of one frame) is in no row: the rows hold at most all
        excl = sum(x["exclusive_samples"] for x in rows)
        if any("callee" in x for x in rows) and excl > n:
            errs.append("sum of exclusive samples %d > samples %d" % (excl, n))
        elif not any("callee" in x for x in rows) and excl != n:
            errs.append("sum of exclusive samples %d != samples %d" % (excl, n))
        for x in rows:
            if not (0 <= x["exclusive_samples"] <= x["inclusive_samples"] <= n):
                errs.append("row %s: exclusive <= inclusive <= total broken" % x.get("function"))
    return errs


def main(argv):
    cmd, path = argv[1], argv[2]
    r = load(path)
    if cmd == "invariants":
        errs = invariants(r)
        for e in errs:
            print(e)
        sys.exit(1 if errs else 0)
    rows, s = r.get("rows", []), r.get("session", r.get("base"))
    nodes = list(walk(r.get("tree", [])))

    def row(name):
        for x in rows:
            if x.get("function") == name:
                return x
        raise SystemExit("no row for %s" % name)

    def node(*path):
        for x in nodes:
            if x.get("function") != path[0]:
                continue
            for name in path[1:]:
                x = next((c for c in x["children"] if c.get("function") == name), None)
                if x is None:
                    break
            if x is not None:
                return x
        raise SystemExit("no tree node along %s" % ";".join(path))

    env = {"r": r, "rows": rows, "s": s, "row": row, "node": node, "nodes": nodes, "json": json,
           "fn": r.get("function"), "callers": r.get("callers"), "callees": r.get("callees"),
           # the checks end with exit(STATUS); the builtin comes from the
           # site module, which lib.sh's python3 -S does not load
           "exit": sys.exit}
    print(eval(argv[3], env))


def serve():
    """sc.py serve: the same queries for a whole test script from one
    process (lib.sh's q and invariants; starting Python and importing json
    for each cost more than most checks).  A request on stdin is the
    working directory, the command, the file and the expression (empty for
    invariants), each ended by NUL; the answer on stdout the exit status,
    stdout and stderr, each ended by NUL, as a run of its own would give.
    Each request reads its file again."""
    import contextlib, io, os, traceback
    fields = []
    buf = b""
    inp, outp = sys.stdin.buffer, sys.stdout.buffer
    while True:
        while b"\0" not in buf:
            chunk = inp.read1(65536)
            if not chunk:
                return
            buf += chunk
        field, buf = buf.split(b"\0", 1)
        fields.append(field.decode(errors="surrogateescape"))
        if len(fields) < 4:
            continue
        cwd, argv, fields = fields[0], ["sc.py"] + fields[1:], []
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                os.chdir(cwd)
                main(argv)
                status = 0
            except SystemExit as e:
                if e.code is None or isinstance(e.code, int):
                    status = int(e.code or 0)
                else:
                    print(e.code, file=sys.stderr)
                    status = 1
            except BaseException:
                traceback.print_exc()
                status = 1
        outp.write(b"%d\0%s\0%s\0" % (status, out.getvalue().encode(errors="surrogateescape"),
                                         err.getvalue().encode(errors="surrogateescape")))
        outp.flush()


if __name__ == "__main__":
    if sys.argv[1:] == ["serve"]:
        serve()
    else:
        main(sys.argv)
