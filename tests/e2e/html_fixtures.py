#!/usr/bin/env python3
"""Synthetic profiles for the HTML report's test, and what SPEC says about
them, computed here independently of the viewer (straight from the
definitions, one stack at a time).

    html_fixtures.py small instrumentation|sampling OUT.json [--no-rows]
    html_fixtures.py big N instrumentation|sampling OUT.json [--slim] [--threads T]
    html_fixtures.py demo OUT.json               a plausible program (screenshot)
    html_fixtures.py deep N OUT.json             recursion N deep (sampling)
    html_fixtures.py expect IN.json FUNCTION     callers/callees of FUNCTION
    html_fixtures.py rows IN.json                flat function rows
    html_fixtures.py hot IN.json [FAMILY]        hot path, names joined by ';'

A node's exclusive values stand for the intervals (samples) whose stack is
the node's path, which is all SPEC sections 2, 3 and 6 need.
"""
import json
import random
import re
import sys

sys.setrecursionlimit(100000)   # json.dumps of the deep fixture

FAMS = {
    "instrumentation": [("elapsed_exclusive_ns", "elapsed_inclusive_ns", "elapsed_inclusive_ns"),
                        ("application_exclusive_ns", "application_inclusive_ns", "application_inclusive_ns")],
    "sampling": [("exclusive_samples", "inclusive_samples", "samples")],
}

# Names that would break a page that parsed them as HTML.
HOSTILE = ["spin<script>", "</script><b>bold</b>", "std::map<int, a&b>::operator<", "x></div>"]


# A name as long as C++ gives them (std::vector<std::string>::push_back's
# slow path): 400 characters on one line.
REALLOC = ("std::vector<std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >, "
           "std::allocator<std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> > > >"
           "::_M_realloc_insert<std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> > "
           "const&>(__gnu_cxx::__normal_iterator<std::__cxx11::basic_string<char, std::char_traits<char>, "
           "std::allocator<char> >*, std::vector<std::__cxx11::basic_string<char> > >, "
           "std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> > const&)")


def small(method):
    """A tree with recursion (fact inside fact inside fact, and via helper),
    two roots (main thread, a worker), hostile names."""
    instr = method == "instrumentation"

    def node(fn, ex, children=(), mod="/usr/bin/prog", calls=1, app=None):
        n = {"function": fn, "module": mod, "children": list(children)}
        if instr:
            n["elapsed_exclusive_ns"] = ex
            n["application_exclusive_ns"] = ex if app is None else app
            n["calls"] = calls
        else:
            n["exclusive_samples"] = ex
        return n

    tree = [
        node("main", 100, [
            node("fact", 50, [
                node("fact", 40, [
                    node("fact", 30, [node("leaf", 25, calls=4)], calls=2, app=10),
                    node("helper", 20, [node("fact", 15, [node("leaf", 5)], app=0)], calls=3),
                ], calls=2),
                node("leaf", 10, calls=5, app=2),
            ], calls=1),
            node("spin<script>", 400, [node("</script><b>bold</b>", 60, mod="/lib/x86_64-linux-gnu/libc.so.6", calls=7)],
                 calls=9, app=150),
            node("std::map<int, a&b>::operator<", 35, [node("fact", 12, calls=3)], calls=11),
            node("x></div>", 8, calls=2),
        ], calls=1, app=90),
        node("clone3", 5, [node("worker", 70, [node("fact", 33, [node("helper", 9, [node("fact", 4)])]),
                                               node(REALLOC, 6, calls=2)])],
             mod="/lib/x86_64-linux-gnu/libc.so.6"),
    ]
    return finish(method, tree, {"command": ["./prog", "--flag=<x>"], "processes": 1, "threads": 2})


def deep(n):
    """Sampling: main calls rec, which recurses n levels deep and calls
    leaf: 1 sample in each rec, 5 in leaf (built without recursion)."""
    leaf = {"function": "leaf", "module": "/p", "exclusive_samples": 5, "children": []}
    node = leaf
    for _ in range(n):
        node = {"function": "rec", "module": "/p", "exclusive_samples": 1, "children": [node]}
    root = {"function": "main", "module": "/p", "exclusive_samples": 0, "children": [node]}
    return {"session": {"method": "sampling", "samples": n + 5}, "tree": [root]}


def demo():
    """A plausible image-processing program, for the screenshot in docs/."""
    exe, libc, libz = "/usr/local/bin/imgtool", "/lib/x86_64-linux-gnu/libc.so.6", "/lib/x86_64-linux-gnu/libz.so.1"

    def n(fn, ee, kids=(), app=None, calls=1, mod=exe):
        return {"function": fn, "module": mod, "elapsed_exclusive_ns": ee,
                "application_exclusive_ns": ee if app is None else app, "calls": calls, "children": list(kids)}
    blur = "img::Blur<float, 5>::operator()(img::Row<float>&) const"
    tree = [
        n("_start", 2000, [n("__libc_start_main", 1000, [n("main", 9000, [
            n("app::run(app::Config const&)", 40000, [
                n("io::read_file(std::string const&)", 30000, [n("read", 21000000, app=900000, calls=64, mod=libc),
                                                              n("memcpy", 2500000, calls=64, mod=libc)]),
                n("img::decode_png(io::Buffer const&)", 900000, [
                    n("inflate", 1200000, [n("inflate_fast", 38000000, mod=libz, calls=2100)], mod=libz, calls=2100),
                    n("png::unfilter_row(unsigned char*, int)", 14000000, calls=4096)]),
                n("img::Pipeline::apply<img::Blur<float, 5> >(img::Image&)", 600000, [
                    n(blur, 96000000, [n("std::vector<float, std::allocator<float> >::operator[](unsigned long)",
                                         21000000, calls=800000)], calls=4096)]),
                n("img::Pipeline::apply<img::Sharpen>(img::Image&)", 400000, [
                    n("img::Sharpen::operator()(img::Row<float>&) const", 31000000, calls=4096),
                    n(blur, 18000000, calls=1024)]),
                n("img::encode_jpeg(img::Image const&, int)", 700000, [
                    n("jpeg::forward_dct(short*)", 26000000, calls=65536),
                    n("jpeg::encode_mcu_huff(jpeg::State&)", 17000000, calls=65536),
                    n("write", 9000000, app=300000, calls=32, mod=libc)]),
                n("spin<script>", 4000000, calls=3),
            ]),
        ], calls=1)], mod=libc)]),
        n("clone3", 1000, [n("start_thread", 1000, [n("pool::worker_loop(pool::Queue&)", 300000, [
            n("pthread_cond_wait", 15000000, app=200000, calls=40, mod=libc),
            n("img::resize_bilinear(img::Image const&, int, int)", 22000000, [n(blur, 7000000, calls=512)], calls=8),
            n(REALLOC, 3000000, calls=200)],
        )], mod=libc)], mod=libc),
    ]
    return finish("instrumentation", tree, {"command": ["imgtool", "--blur=5", "in.png", "out.jpg"],
                                            "processes": 1, "threads": 2, "duration_ns": 302119000})


def big(n, method, threads=1):
    """n nodes, functions from a pool of C++-like names, depth at most 48;
    with threads > 1, that many trees of n / threads nodes each, as the
    exporter writes threads (roots naming their thread)."""
    instr = method == "instrumentation"
    rnd = random.Random(9)
    pool = ["ns%d::Widget<std::vector<int>, %d>::method_%d(unsigned long) const" % (k % 37, k % 11, k)
            for k in range(4000)] + HOSTILE
    mods = ["/usr/bin/bigprog", "/usr/lib/x86_64-linux-gnu/libstdc++.so.6",
            "/lib/x86_64-linux-gnu/libc.so.6", "/opt/app/lib/libengine.so"]
    nodes, depth, used = [], [], []

    def make(fn, parent):
        x = {"function": fn, "module": mods[len(fn) % len(mods)], "children": []}
        if instr:
            ee = int(rnd.expovariate(1 / 20000))
            x["elapsed_exclusive_ns"] = ee
            x["application_exclusive_ns"] = int(ee * rnd.random())
            x["calls"] = rnd.randint(1, 500)
        else:
            x["exclusive_samples"] = rnd.randint(0, 20)
        nodes.append(x)
        depth.append(0 if parent is None else depth[parent] + 1)
        used.append(set())
        if parent is not None:
            nodes[parent]["children"].append(x)
            used[parent].add(fn)

    roots = []
    for t in range(threads):
        nodes, depth, used = [], [], []
        make("_start", None)
        make("main", 0)
        while len(nodes) < n // threads:
            i = len(nodes)
            p = rnd.randrange(max(1, i - 40), i) if rnd.random() < 0.8 else rnd.randrange(1, i)
            if depth[p] >= 48:
                continue
            fn = pool[rnd.randrange(len(pool))]
            if fn in used[p]:
                continue
            make(fn, p)
        roots.append(nodes[0])
    doc = finish(method, roots, {"command": ["./bigprog"], "processes": 1, "threads": threads})
    if threads > 1:
        for t, r in enumerate(roots):
            r["thread"] = t
        doc["threads"] = [{"pid": 1000, "tid": 1000 + t, "name": "w%d" % t, "process": 0} for t in range(threads)]
        doc["processes"] = [{"pid": 1000, "executable": mods[0]}]
    return doc


def paths(tree):
    """(path of names, node) for every node, iteratively."""
    stack = [((t["function"],), t) for t in reversed(tree)]
    while stack:
        path, t = stack.pop()
        yield path, t
        for c in reversed(t["children"]):
            stack.append((path + (c["function"],), c))


def finish(method, tree, extra):
    """Session totals, inclusive values, percentages, hot flags, flat rows:
    what `report --tree` and `report --format json` would carry."""
    fams = FAMS[method]
    session = {"method": method, "command": [], "processes": 1, "threads": 1, "duration_ns": 123456789}
    session.update(extra)
    order = [t for _, t in paths(tree)]
    for ex, inc, total in fams:
        for t in order:
            t[inc] = t[ex]
        for t in reversed(order):
            for c in t["children"]:
                t[inc] += c[inc]
        session[total] = sum(t[inc] for t in tree)
    if method == "sampling":
        session.update({"frequency_hz": 999, "lost_samples": 0, "root_reached_pct": 100.0})
    else:
        session.update({"repairs": 0, "open_frames": 0, "lost_events": 0,
                        "os_events": {"switch": 3, "syscall": 12, "fault": 0, "unobserved": []}})
    for t in order:
        for ex, inc, total in fams:
            t[pct_name(inc)] = pct(t[inc], session[total])
            t[pct_name(ex)] = pct(t[ex], session[total])
        t["hot"] = False
    for t in order:
        t["children"].sort(key=lambda c: -c[fams[0][1]])
    for t in hot_path(tree, fams[0][1]):
        t["hot"] = True
    return {"session": session, "rows": flat_rows(method, tree, session), "tree": tree}


def pct(v, total):
    """As the report prints them: four decimals."""
    return round(100.0 * v / total, 4) if total else 0


def slim(doc):
    """Tree nodes in the viewer's compact form: the function as an index in
    "rows", exclusive values, calls, children (the viewer derives the rest)."""
    index = {(r["function"], r["module"]): i for i, r in enumerate(doc["rows"])}
    keep = {"children", "calls", "elapsed_exclusive_ns", "application_exclusive_ns", "exclusive_samples", "thread"}
    for _, t in paths(doc["tree"]):
        t["row"] = index[(t["function"], t["module"])]
        for k in [k for k in t if k not in keep and k != "row"]:
            del t[k]


def pct_name(field):
    return field.replace("_ns", "").replace("_samples", "") + "_pct"


def hot_path(tree, inc):
    """SPEC 6: from the largest root, the largest child while it holds at
    least half of its parent."""
    if not tree:
        return []
    t = max(tree, key=lambda r: r[inc])
    out = [t]
    while t["children"]:
        c = max(t["children"], key=lambda k: k[inc])
        if 2 * c[inc] < t[inc]:
            break
        out.append(c)
        t = c
    return out


def flat_rows(method, tree, session):
    """SPEC 2/3: exclusive to the top of each stack, inclusive once to every
    distinct function on it; calls summed over nodes."""
    fams = FAMS[method]
    rows = {}
    for path, t in paths(tree):
        key = (t["function"], t["module"])
        r = rows.setdefault(key, {"function": key[0], "module": key[1]})
        for ex, inc, _ in fams:
            r[ex] = r.get(ex, 0) + t[ex]
            r.setdefault(inc, 0)
        if method == "instrumentation":
            r["calls"] = r.get("calls", 0) + t["calls"]
    # inclusive: each stack charges the distinct functions on it once, i.e.
    # a node charges its subtree to its function unless it is already above
    on_path = {}
    stack = [(t, False) for t in reversed(tree)]
    while stack:
        t, leaving = stack.pop()
        key = (t["function"], t["module"])
        if leaving:
            on_path[key] -= 1
            continue
        if not on_path.get(key):
            for ex, inc, _ in fams:
                rows[key][inc] += t[inc]
        on_path[key] = on_path.get(key, 0) + 1
        stack.append((t, True))
        stack.extend((c, False) for c in reversed(t["children"]))
    for r in rows.values():
        for ex, inc, total in fams:
            r[pct_name(inc)] = pct(r[inc], session[total])
            r[pct_name(ex)] = pct(r[ex], session[total])
    return sorted(rows.values(), key=lambda r: -r[fams[0][1]])


def expect(doc, fn):
    """SPEC 6 callers/callees of fn, stack by stack: a caller gets the
    stacks whose outermost fn it called directly ([root] if fn is the
    root); a callee those in which the innermost fn called it directly;
    calls counted over every occurrence."""
    method = doc["session"]["method"]
    fams = FAMS[method]
    nf = len(fams)
    instr = method == "instrumentation"
    res = {"inclusive": [0] * nf, "exclusive": [0] * nf, "calls": 0, "callers": {}, "callees": {}}

    def credit(side, name, values, calls):
        e = res[side].setdefault(name, [[0] * nf, 0])
        for k in range(nf):
            e[0][k] += values[k]
        e[1] += calls

    for path, t in paths(doc["tree"]):
        v = [t[ex] for ex, _, _ in fams]
        calls = t.get("calls", 0) if instr else 0
        idx = [i for i, name in enumerate(path) if name == fn]
        if idx:
            first, last = idx[0], idx[-1]
            for k in range(nf):
                res["inclusive"][k] += v[k]
            credit("callers", path[first - 1] if first > 0 else "[root]", v, 0)
            if last == len(path) - 1:
                for k in range(nf):
                    res["exclusive"][k] += v[k]
            else:
                credit("callees", path[last + 1], v, 0)
        if path[-1] == fn:
            res["calls"] += calls
            credit("callers", path[-2] if len(path) > 1 else "[root]", [0] * nf, calls)
        if len(path) > 1 and path[-2] == fn:
            credit("callees", path[-1], [0] * nf, calls)
    return res


# ---- for the test's checks (t520_html_report.sh) --------------------------

def full(doc):
    """Names back into compact ("row": i) nodes."""
    rows = doc.get("rows", [])
    for t in doc["tree"]:
        stack = [t]
        while stack:
            n = stack.pop()
            if "row" in n:
                n["function"], n["module"] = rows[n["row"]]["function"], rows[n["row"]]["module"]
            stack.extend(n["children"])
    return doc


def hot_path_names(doc, fam):
    inc = FAMS[doc["session"]["method"]][fam][1]
    return ";".join(t["function"] for t in hot_path(doc["tree"], inc))


def count_matches(doc, term):
    return sum(1 for _, t in paths(doc["tree"]) if term.lower() in t["function"].lower())


def page_cc(v):
    """The page's callers/callees (lists of [name, values, calls]) in the
    shape expect() gives."""
    return {"inclusive": v["inclusive"], "exclusive": v["exclusive"], "calls": v["calls"],
            "callers": {n: [vals, c] for n, vals, c in v["callers"]},
            "callees": {n: [vals, c] for n, vals, c in v["callees"]}}


def sorted_first(rows, field, sort, first):
    """After a click on FIELD's heading the table says it sorts by it and
    its first row holds the extreme value of the column."""
    col, _, order = sort.partition(" ")
    values = [r[field] for r in rows if field in r]
    extreme = max(values) if order == "desc" else min(values)
    return col == field and any(r["function"] == first and r.get(field) == extreme for r in rows)


def same_rows(got, want):
    """Function rows equal: values exactly, percentages to 1e-3."""
    key = lambda r: (r["function"], r["module"])
    g = {key(r): r for r in got}
    if set(g) != {key(r) for r in want}:
        return False
    for w in want:
        for k, v in w.items():
            if k.endswith("_pct"):
                if abs(g[key(w)][k] - v) > 1e-3:
                    return False
            elif g[key(w)][k] != v:
                return False
    return True


# ---- checks of pages exported from real recordings ----------------------

PER_CALL = ("min_elapsed_inclusive_ns", "max_elapsed_inclusive_ns", "min_elapsed_exclusive_ns",
            "max_elapsed_exclusive_ns")


def scope_rows(by_thread, tops):
    """The function rows of the threads `tops` (top nodes of `report --tree
    --by thread --format json`), folded here from their trees as SPEC 2/3
    define them (percentages of the session totals), with the per-call
    minimum and maximum over their nodes, and the mean where one node of
    the function returned calls (the mean of several cannot be rebuilt
    from their rounded means)."""
    session = by_thread["session"]
    method = session["method"]
    forest = [c for t in tops for c in t["children"]]
    rows = flat_rows(method, forest, session)
    if method == "instrumentation":
        per = {}
        for _, t in paths(forest):
            if t.get("completed"):
                per.setdefault((t["function"], t["module"]), []).append(t)
        for r in rows:
            nodes = per.get((r["function"], r["module"]), [])
            r["completed"] = sum(t["completed"] for t in nodes)
            for k in PER_CALL:
                pick = min if k.startswith("min") else max
                r[k] = pick(t[k] for t in nodes) if nodes else 0
            if len(nodes) == 1:
                r["mean_elapsed_inclusive_ns"] = nodes[0]["mean_elapsed_inclusive_ns"]
                r["mean_elapsed_exclusive_ns"] = nodes[0]["mean_elapsed_exclusive_ns"]
    return rows


def valid_hot_path(tree, names, inc):
    """names (joined by ';') is a hot path of tree as SPEC 6 defines it,
    whichever of equal children it took (and whichever module a name is
    of): from a largest root, a largest child while it holds at least
    half of its parent."""
    def goes_on(parent, level):
        return bool(level) and (parent is None or 2 * max(c[inc] for c in level) >= parent[inc])

    cands = [(None, tree)]
    for name in names.split(";") if names else []:
        nxt = []
        for parent, level in cands:
            if goes_on(parent, level):
                best = max(c[inc] for c in level)
                nxt += [(c, c["children"]) for c in level if c["function"] == name and c[inc] == best]
        if not nxt:
            return False
        cands = nxt
    return any(not goes_on(parent, level) for parent, level in cands)


def same_scope_rows(got, want):
    """The page's table rows equal want: values exactly, percentages to
    1e-3, only the fields want has; the same set of functions."""
    key = lambda r: (r["function"], r["module"])
    g = {key(r): r for r in got}
    bad = []
    if set(g) != {key(r) for r in want}:
        bad.append("functions %s != %s" % (sorted(g), sorted(key(r) for r in want)))
    for w in want:
        r = g.get(key(w), {})
        for k, v in w.items():
            x = r.get(k)
            if k.endswith("_pct"):
                if x is None or abs(x - v) > 1e-3:
                    bad.append("%s %s: %s != %s" % (w["function"], k, x, v))
            elif x != v:
                bad.append("%s %s: %s != %s" % (w["function"], k, x, v))
    return bad


SUMMARY_SKIPPED = {"by", "rows_total", "unnamed_modules"}
TIME = re.compile(r"^-?[0-9]+(\.[0-9]+)? (ns|\u00b5s|ms|s)$")


def summary_problems(session, shown):
    """What is wrong with the summary the page shows ({field: text}) for
    the session of `report --format json`: a field left out (null ones
    and the report's own by/rows_total excepted) or shown that is not in
    it; counts not written with thousands separators; times without a
    unit; percentages not with one decimal and %; JSON or [object Object]
    anywhere."""
    bad = []
    want = {k for k, v in session.items() if v is not None and k not in SUMMARY_SKIPPED}
    if set(shown) != want:
        bad.append("fields shown %s, expected %s" % (sorted(set(shown) - want), sorted(want - set(shown))))
    for k, text in shown.items():
        v = session.get(k)
        if "[object" in text or re.search(r'[{}\[\]]|":', text):
            bad.append("%s shown as %r" % (k, text))
        elif isinstance(v, bool) or v is None:
            continue
        elif k.endswith("_ns") and isinstance(v, (int, float)):
            if not TIME.match(text):
                bad.append("%s: time %r has no unit" % (k, text))
        elif k == "unnamed_pct":
            mods = session.get("unnamed_modules")
            if text != ("%.1f%% of %s" % (v, "samples" if session["method"] == "sampling" else "time") +
                        ", in %d module%s (below)" % (len(mods), "s" if len(mods) > 1 else "") if mods else "none"):
                bad.append("%s: %r" % (k, text))
        elif k.endswith("_pct"):
            if text != "%.1f%%" % v:
                bad.append("%s: percentage %r, not %.1f%%" % (k, text, v))
        elif k == "frequency_hz":
            if text != "{:,} Hz".format(v):
                bad.append("%s: %r" % (k, text))
        elif isinstance(v, int) and k != "exit_status":
            if text != "{:,}".format(v):
                bad.append("%s: count %r, not %s" % (k, text, "{:,}".format(v)))
        elif isinstance(v, dict):
            for name, c in v.items():
                if k == "repairs_by_cause" and c == 0:
                    continue                 # the page lists the causes seen
                if isinstance(c, int) and "%s %s" % (name, "{:,}".format(c)) not in text:
                    bad.append("%s: no %r in %r" % (k, "%s %s" % (name, "{:,}".format(c)), text))
    return bad


def cli_hint(table_text):
    """The lines of `stackclock report` (table) from "Without symbols" to
    the DEBUGINFOD_URLS line, as they are."""
    lines = table_text.splitlines()
    start = next(i for i, l in enumerate(lines) if l.startswith("Without symbols"))
    end = next(i for i, l in enumerate(lines) if "DEBUGINFOD_URLS" in l)
    return lines[start:end + 1]


def main():
    a = sys.argv[1:]
    if a[:1] == ["small"]:
        doc = small(a[1])
        if "--no-rows" in a:
            del doc["rows"]
        open(a[2], "w").write(json.dumps(doc))
    elif a[:1] == ["deep"]:
        open(a[2], "w").write(json.dumps(deep(int(a[1]))))
    elif a[:1] == ["demo"]:
        open(a[1], "w").write(json.dumps(demo()))
    elif a[:1] == ["big"]:
        doc = big(int(a[1]), a[2], int(a[a.index("--threads") + 1]) if "--threads" in a else 1)
        if "--slim" in a:
            slim(doc)
        open(a[3], "w").write(json.dumps(doc, separators=(",", ":")))
    elif a[:1] == ["expect"]:
        print(json.dumps(expect(json.load(open(a[1])), a[2]), sort_keys=True))
    elif a[:1] == ["rows"]:
        doc = json.load(open(a[1]))
        print(json.dumps(flat_rows(doc["session"]["method"], doc["tree"], doc["session"])))
    elif a[:1] == ["hot"]:
        doc = json.load(open(a[1]))
        fam = FAMS[doc["session"]["method"]][int(a[2]) if len(a) > 2 else 0]
        print(";".join(t["function"] for t in hot_path(doc["tree"], fam[1])))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
