"""Helpers for the end-to-end tests: read a `report --format json` file.

  sc.py query FILE EXPR     print eval(EXPR) with r = the report, and helpers
                            row(name) (the row whose function is name),
                            rows (list), s (session)
  sc.py invariants FILE     check SPEC.md's invariants; exit 1 naming the
                            first that fails

Written independently of the tool's own checker so that each checks the
other.
"""
import json
import sys


def load(path):
    with open(path) as f:
        return json.load(f)


def invariants(r):
    s, rows = r["session"], r["rows"]
    errs = []
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
            if x.get("calls", 0) and x.get("min_elapsed_inclusive_ns", 0) > x.get("max_elapsed_inclusive_ns", 0):
                errs.append("row %s: min > max" % name)
    else:
        n = s["samples"]
        if sum(x["exclusive_samples"] for x in rows) != n:
            errs.append("sum of exclusive samples %d != samples %d" % (sum(x["exclusive_samples"] for x in rows), n))
        for x in rows:
            if not (0 <= x["exclusive_samples"] <= x["inclusive_samples"] <= n):
                errs.append("row %s: exclusive <= inclusive <= total broken" % x.get("function"))
    return errs


def main():
    cmd, path = sys.argv[1], sys.argv[2]
    r = load(path)
    if cmd == "invariants":
        errs = invariants(r)
        for e in errs:
            print(e)
        sys.exit(1 if errs else 0)
    rows, s = r["rows"], r["session"]

    def row(name):
        for x in rows:
            if x.get("function") == name:
                return x
        raise SystemExit("no row for %s" % name)

    print(eval(sys.argv[3], {"r": r, "rows": rows, "s": s, "row": row}))


if __name__ == "__main__":
    main()
