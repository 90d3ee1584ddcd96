/*
 * stackclock HTML report: the viewer (inlined into the page at build time).
 *
 * DATA CONTRACT.  The page carries one JSON document in
 *   <script id="sc-data" type="application/json" data-encoding="json|gzip-base64">
 * ("json": the text itself, every "<", ">" and "&" written as \u003c, \u003e,
 * \u0026 so that no name can close the script element; "gzip-base64": the
 * same text gzip-compressed and base64-encoded, for large profiles).  The
 * document is
 *
 *   {"session": {...},   SPEC section 5 session object; "method" is
 *                        "instrumentation" or "sampling"
 *    "rows":    [...],   optional: the flat function rows of SPEC section 5
 *                        (report --by function --format json); derived from
 *                        the tree when missing
 *    "threads": [...],   optional: {"pid", "tid", "name", "process"}; then
 *    "processes": [...], {"pid", "executable"} and "thread_stats" (per-call
 *                        statistics per thread and function) go with it
 *    "tree":    [...]}   SPEC section 6 tree nodes (report --tree --format json);
 *                        with "threads", each thread's tree, its roots
 *                        carrying "thread": INDEX (merged here by path)
 *
 * A tree node is {"function", "module", "children": [node...], values...},
 * or, to keep large profiles small, {"row": i, ...} naming the function of
 * rows[i] instead of repeating its name and module, or (what the exporter
 * writes: 5 million nodes must stay under a browser's longest string) an
 * array [row, thread, values..., [children...]], thread -1 below the roots
 * and the values named in order by the document's "node_values": [key...].
 * Values read, per method:
 *   instrumentation  elapsed_exclusive_ns, application_exclusive_ns, calls
 *                    (elapsed_/application_inclusive_ns: optional, checked)
 *                    sampled_exclusive_samples: the node's samples, when the
 *                    session has "samples" (SPEC section 14's sampled shares)
 *   sampling         exclusive_samples (inclusive_samples: optional, checked)
 * Everything else in a node (percentages, "hot", min/max/mean) may be left
 * out: the viewer derives inclusive values (sums over the subtree), the hot
 * path and the percentages (of the session totals elapsed_inclusive_ns /
 * application_inclusive_ns, or samples; sums of the roots when absent)
 * exactly as SPEC section 6 defines them.  A function is the pair
 * (function, module).
 *
 * VIEWS.  The forest is read once (B); what is shown (M) is the tree
 * merged over the threads selected ("show:": all, a process, a thread),
 * and the table, tree, flame graph and callers/callees are all computed
 * from it; percentages stay of the session totals.
 *
 * RENDERING.  Names are only ever inserted with textContent or drawn on a
 * canvas, never parsed as HTML.  For large profiles the call tree renders
 * a node's children only when it is expanded (100 at a time), the function
 * table 100 rows at a time, the hot path opens 40 levels deep at most, and the flame graph lays out and draws only the
 * boxes at least one pixel wide and 400 rows deep (a pruned box takes its
 * subtree with it; zooming shows what lies deeper).
 *
 * TEST HOOKS.  <body data-state="loading|ready|error" data-load-ms=...>,
 * data-* attributes on the table, the flame canvas and the callers/callees
 * panel (sums included), and window.stackclock (select, search, zoom, ...).
 */
'use strict';
(function () {

const FAMS = {
  instrumentation: [
    { name: 'elapsed', ex: 'elapsed_exclusive_ns', inc: 'elapsed_inclusive_ns', total: 'elapsed_inclusive_ns', time: true },
    { name: 'application', ex: 'application_exclusive_ns', inc: 'application_inclusive_ns', total: 'application_inclusive_ns', time: true },
  ],
  sampling: [
    { name: 'samples', ex: 'exclusive_samples', inc: 'inclusive_samples', total: 'samples', time: false },
  ],
};
/* Instrumentation that sampled its threads (SPEC section 14): a third
 * family, its shares of session.samples; rows carry only the percentages. */
const SAMPLED = { name: 'samples', ex: 'sampled_exclusive_samples', inc: 'sampled_inclusive_samples',
  total: 'samples', time: false, pctOnly: true };
/* The instrumentation selector: [family, table column].  The family sets
 * the widths of the flame graph, the order of the tree and its hot path;
 * the column sorts the table. */
const METRICS = {
  ei: [0, 'elapsed_inclusive_ns'], ee: [0, 'elapsed_exclusive_ns'],
  ai: [1, 'application_inclusive_ns'], ae: [1, 'application_exclusive_ns'],
  si: [2, 'sampled_inclusive_pct'], se: [2, 'sampled_exclusive_pct'],
};
/* Table columns in display order: [field, heading, kind]. */
const COLUMNS = {
  instrumentation: [
    ['function', 'Function', 'name'], ['module', 'Module', 'module'], ['calls', 'Calls', 'count'],
    ['elapsed_inclusive_ns', 'EI', 'time'], ['elapsed_inclusive_pct', 'EI %', 'pct'],
    ['elapsed_exclusive_ns', 'EE', 'time'], ['elapsed_exclusive_pct', 'EE %', 'pct'],
    ['application_inclusive_ns', 'AI', 'time'], ['application_inclusive_pct', 'AI %', 'pct'],
    ['application_exclusive_ns', 'AE', 'time'], ['application_exclusive_pct', 'AE %', 'pct'],
    ['sampled_inclusive_pct', 'SI %', 'pct'], ['sampled_exclusive_pct', 'SE %', 'pct'],
    ['min_elapsed_inclusive_ns', 'min EI/call', 'time'], ['mean_elapsed_inclusive_ns', 'mean EI/call', 'time'],
    ['max_elapsed_inclusive_ns', 'max EI/call', 'time'], ['min_elapsed_exclusive_ns', 'min EE/call', 'time'],
    ['mean_elapsed_exclusive_ns', 'mean EE/call', 'time'], ['max_elapsed_exclusive_ns', 'max EE/call', 'time'],
    ['completed', 'returned', 'count'],
  ],
  sampling: [
    ['function', 'Function', 'name'], ['module', 'Module', 'module'],
    ['inclusive_samples', 'Inclusive', 'count'], ['inclusive_pct', 'Incl %', 'pct'],
    ['exclusive_samples', 'Exclusive', 'count'], ['exclusive_pct', 'Excl %', 'pct'],
  ],
};
const TREE_CHUNK = 100, TABLE_CHUNK = 100, HOT_EXPANDED = 40;
/* Flame graph: row height, narrowest box drawn, deepest row drawn, and how
 * many ancestors of the zoomed frame stay on top (the rest are in the
 * "zoomed:" line). */
const ROW_H = 18, MIN_BOX_PX = 1, MAX_ROWS = 400, ZOOM_ANCESTORS = 12;

const $ = (id) => document.getElementById(id);
function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined && text !== null) e.textContent = String(text);
  return e;
}
const num = (v) => (typeof v === 'number' && isFinite(v) ? v : 0);
const basename = (p) => String(p || '').split('/').pop();

/* 3 significant digits and a unit; below a microsecond the nanoseconds
 * (one decimal when not whole: the probe cost per event). */
function fmtTime(ns) {
  const a = Math.abs(ns);
  const units = [[1e9, 's'], [1e6, 'ms'], [1e3, '\u00b5s']];
  for (const [u, s] of units)
    if (a >= u) return (ns / u).toPrecision(3) + ' ' + s;
  return (Number.isInteger(ns) ? String(ns) : ns.toFixed(1)) + ' ns';
}
const fmtCount = (v) => Math.round(v).toLocaleString('en-US');
const plural = (n, what) => fmtCount(n) + ' ' + what + (n === 1 ? '' : 's');
const fmtPct = (p) => (isFinite(p) ? p.toFixed(1) + '%' : '-');
function fmtKind(kind, v) {
  if (typeof v !== 'number') return v === undefined || v === null ? '' : String(v);
  if (kind === 'time') return fmtTime(v);
  if (kind === 'pct') return fmtPct(v);
  if (kind === 'count') return fmtCount(v);
  return String(v);
}

/* ---- the model: the tree as preorder arrays ----------------------------- */

let B = null;            /* every thread's tree, built once */
let M = null;            /* the view: the tree of the threads shown */
const S = {              /* what the user chose */
  fam: 0,
  sortField: null, sortAsc: false, tableShown: TABLE_CHUNK,
  zoom: -1, search: '', selected: -1,
  scope: 'all',          /* "all", "p:PROCESS" or "t:THREAD" (indexes) */
};

/*
 * The document's trees as one forest in preorder (B, built once): the
 * trees of every thread when the exporter wrote them apart (their roots
 * carry "thread"), or the merged tree.  A view (M) is the tree merged over
 * the threads chosen (all, one process's, one), built from B by path.
 */
function buildBase(data) {
  const session = data && data.session;
  if (!session || !FAMS[session.method])
    throw new Error('the embedded profile has no session.method "instrumentation" or "sampling"');
  const method = session.method, fams = FAMS[method].slice();
  if (method === 'instrumentation' && typeof session.samples === 'number') fams.push(SAMPLED);
  const nf = fams.length;
  const funcs = [], funcIds = new Map();
  const intern = (name, module) => {
    name = name === undefined || name === null ? '?' : String(name);
    module = module === undefined || module === null ? '' : String(module);
    const key = name + '\u0000' + module;
    let id = funcIds.get(key);
    if (id === undefined) {
      id = funcs.length;
      funcIds.set(key, id);
      funcs.push({ name, module, lower: name.toLowerCase() });
    }
    return id;
  };

  /* A node names its function directly or by its index in "rows". */
  const rowsIn = Array.isArray(data.rows) ? data.rows : [];
  const rowFid = rowsIn.map((r) => intern(r.function, r.module));
  const funcOf = (o) => {
    if (o.row === undefined) return intern(o.function, o.module);
    const f = rowFid[o.row];
    if (f === undefined) throw new Error('a tree node refers to row ' + o.row + ', which does not exist');
    return f;
  };
  const threads = Array.isArray(data.threads) ? data.threads : [];
  const processes = Array.isArray(data.processes) ? data.processes : [];

  /* Preorder walk with an explicit stack (recursion depth is the profile's). */
  const parent = [], fn = [], calls = [], thread = [];
  const ex = fams.map(() => []), given = fams.map(() => []);
  const roots = Array.isArray(data.tree) ? data.tree : [];
  const stack = [];
  const valueKeys = Array.isArray(data.node_values) ? data.node_values : [];
  /* an array node as the object it stands for */
  const unpack = (a) => {
    const o = { row: a[0], children: a[a.length - 1] };
    if (a[1] >= 0) o.thread = a[1];
    for (let k = 0; k < valueKeys.length; k++) o[valueKeys[k]] = a[2 + k];
    return o;
  };
  for (let r = roots.length - 1; r >= 0; r--) stack.push(roots[r], -1);
  while (stack.length) {
    const p = stack.pop(), a = stack.pop(), o = Array.isArray(a) ? unpack(a) : a;
    const i = parent.length;
    parent.push(p);
    fn.push(funcOf(o));
    calls.push(num(o.calls));
    if (p >= 0) thread.push(thread[p]);
    else if (o.thread === undefined) thread.push(-1);
    else if (threads[o.thread]) thread.push(o.thread);
    else throw new Error('a tree root refers to thread ' + o.thread + ', which does not exist');
    for (let f = 0; f < nf; f++) {
      ex[f].push(num(o[fams[f].ex]));
      const g = o[fams[f].inc];
      if (typeof g === 'number') given[f].push(i, g);
    }
    const ch = o.children;
    if (Array.isArray(ch))
      for (let k = ch.length - 1; k >= 0; k--) stack.push(ch[k], i);
  }
  const n = parent.length;
  const b = {
    method, session, fams, funcs, funcIds, intern, rowFid, threads, processes, n,
    parent: Int32Array.from(parent), fn: Int32Array.from(fn), thread: Int32Array.from(thread),
    calls: Float64Array.from(calls), ex: ex.map((a) => Float64Array.from(a)),
    stats: Array.isArray(data.thread_stats) ? data.thread_stats : [],
    threadValue: fams.map(() => new Float64Array(threads.length)),
    mismatches: 0, totals: [],
  };
  for (let f = 0; f < nf; f++) {
    const inc = Float64Array.from(b.ex[f]);
    let rootSum = 0;
    for (let i = n - 1; i >= 0; i--) {
      if (b.parent[i] >= 0) inc[b.parent[i]] += inc[i];
      else rootSum += inc[i];
      if (b.thread[i] >= 0) b.threadValue[f][b.thread[i]] += b.ex[f][i];
    }
    const g = given[f];
    for (let k = 0; k < g.length; k += 2)
      if (Math.abs(g[k + 1] - inc[g[k]]) > 0.5) b.mismatches++;
    const t = session[fams[f].total];
    b.totals.push(typeof t === 'number' && t > 0 ? t : rootSum);
  }
  return b;
}

/*
 * The tree of the threads keep selects (a Uint8Array over B.threads; null:
 * every node), merged by path: children keyed by function, values added
 * up.  Nodes are numbered in preorder again (parents before children,
 * each subtree contiguous), which every walk below relies on.
 */
function buildView(b, keep) {
  const nf = b.fams.length, nfun = b.funcs.length;
  const of = new Int32Array(b.n), ids = new Map();
  const tParent = [], tFn = [], tCalls = [], tEx = b.fams.map(() => []);
  /* One thread's tree (or a document without threads) has no two
   * siblings of one function: nothing to merge, the nodes are kept as
   * they are (in preorder still: whole trees are kept or left). */
  let kept = 0;
  b.threads.forEach((t, i) => { if (!keep || keep[i]) kept++; });
  const merge = kept > 1;
  for (let i = 0; i < b.n; i++) {
    const p = b.parent[i];
    if (keep && (b.thread[i] < 0 || !keep[b.thread[i]])) { of[i] = -1; continue; }
    const vp = p < 0 ? -1 : of[p];
    const key = (vp + 1) * nfun + b.fn[i];
    let v = merge ? ids.get(key) : undefined;
    if (v === undefined) {
      v = tParent.length;
      if (merge) ids.set(key, v);
      tParent.push(vp);
      tFn.push(b.fn[i]);
      tCalls.push(0);
      for (let f = 0; f < nf; f++) tEx[f].push(0);
    }
    of[i] = v;
    tCalls[v] += b.calls[i];
    for (let f = 0; f < nf; f++) tEx[f][v] += b.ex[f][i];
  }
  /* preorder: children in the order first met */
  const n = tParent.length, tKids = new Array(n), order = new Int32Array(n), newId = new Int32Array(n);
  const tRoots = [];
  for (let v = 0; v < n; v++) tKids[v] = [];
  for (let v = 0; v < n; v++) (tParent[v] < 0 ? tRoots : tKids[tParent[v]]).push(v);
  const stack = [];
  for (let r = tRoots.length - 1; r >= 0; r--) stack.push(tRoots[r]);
  for (let k = 0; stack.length; k++) {
    const v = stack.pop();
    order[k] = v;
    newId[v] = k;
    const ch = tKids[v];
    for (let c = ch.length - 1; c >= 0; c--) stack.push(ch[c]);
  }
  const m = {
    method: b.method, session: b.session, fams: b.fams, funcs: b.funcs, funcIds: b.funcIds,
    intern: b.intern, n, totals: b.totals,
    parent: new Int32Array(n), depth: new Int32Array(n), fn: new Int32Array(n),
    calls: new Float64Array(n), ex: b.fams.map(() => new Float64Array(n)),
    inc: [], size: new Int32Array(n).fill(1), kids: new Array(n), roots: [],
  };
  for (let k = 0; k < n; k++) {
    const v = order[k], p = tParent[v];
    m.parent[k] = p < 0 ? -1 : newId[p];
    m.depth[k] = p < 0 ? 0 : m.depth[m.parent[k]] + 1;
    m.fn[k] = tFn[v];
    m.calls[k] = tCalls[v];
    for (let f = 0; f < nf; f++) m.ex[f][k] = tEx[f][v];
    m.kids[k] = [];
  }
  for (let i = 0; i < n; i++) {
    const p = m.parent[i];
    if (p < 0) m.roots.push(i); else m.kids[p].push(i);
  }
  for (let i = n - 1; i > 0; i--)
    if (m.parent[i] >= 0) m.size[m.parent[i]] += m.size[i];
  for (let f = 0; f < nf; f++) {
    const inc = Float64Array.from(m.ex[f]);
    for (let i = n - 1; i > 0; i--)
      if (m.parent[i] >= 0) inc[m.parent[i]] += inc[i];
    m.inc.push(inc);
  }
  return m;
}

/*
 * Per function: exclusive values and calls summed over its nodes; inclusive
 * values over its outermost occurrences only (SPEC 2 and 3: a function is
 * charged once per stack).  Only the functions with a node in m.
 */
function deriveFunctionRows(m) {
  const nf = m.fams.length, nfun = m.funcs.length;
  const ex = m.fams.map(() => new Float64Array(nfun));
  const inc = m.fams.map(() => new Float64Array(nfun));
  const calls = new Float64Array(nfun), used = new Uint8Array(nfun);
  const onPath = new Int32Array(nfun), path = [];
  for (let i = 0; i < m.n; i++) {
    const d = m.depth[i], f = m.fn[i];
    while (path.length > d) onPath[path.pop()]--;
    const outermost = onPath[f] === 0;
    onPath[f]++;
    path.push(f);
    used[f] = 1;
    calls[f] += m.calls[i];
    for (let k = 0; k < nf; k++) {
      ex[k][f] += m.ex[k][i];
      if (outermost) inc[k][f] += m.inc[k][i];
    }
  }
  const rows = [];
  for (let f = 0; f < nfun; f++) {
    if (!used[f]) continue;
    const row = { function: m.funcs[f].name, module: m.funcs[f].module };
    if (m.method === 'instrumentation') row.calls = calls[f];
    m.fams.forEach((fam, k) => {
      if (!fam.pctOnly) {
        row[fam.inc] = inc[k][f];
        row[fam.ex] = ex[k][f];
      }
      const pre = fam.inc.replace(/_ns$|_samples$/, '');
      const preEx = fam.ex.replace(/_ns$|_samples$/, '');
      row[pre + '_pct'] = pct(inc[k][f], k, m);
      row[preEx + '_pct'] = pct(ex[k][f], k, m);
    });
    rows.push(row);
  }
  return rows;
}

/*
 * The per-call columns of rows for the threads keep selects, from
 * "thread_stats" ([thread, row, completed, incl_min, incl_max, incl_sum,
 * excl_min, excl_max, excl_sum]): minimum and maximum over the threads, the
 * mean over their completed calls, rounded as the report rounds it.
 */
function addPerCall(b, rows, keep) {
  const acc = new Map();
  for (const s of b.stats) {
    if (!Array.isArray(s) || s.length < 9 || !keep[s[0]]) continue;
    const fid = b.rowFid[s[1]];
    let a = acc.get(fid);
    if (!a) acc.set(fid, (a = { c: 0, imin: 0, imax: 0, isum: 0, emin: 0, emax: 0, esum: 0 }));
    if (!a.c || s[3] < a.imin) a.imin = s[3];
    if (!a.c || s[6] < a.emin) a.emin = s[6];
    a.imax = Math.max(a.imax, s[4]);
    a.emax = Math.max(a.emax, s[7]);
    a.isum += s[5];
    a.esum += s[8];
    a.c += s[2];
  }
  /* held within [lo, hi] as the report holds it (the three are floored apart);
   * raw sums have no raw extremes to hold them */
  const raw = M.session && M.session.raw_times;
  const mean = (sum, c, lo, hi) => {
    const m = c ? Math.floor((sum + Math.floor(c / 2)) / c) : 0;
    return !c || raw ? m : Math.max(lo, Math.min(hi, m));
  };
  for (const r of rows) {
    const a = acc.get(b.funcIds.get(r.function + '\u0000' + r.module)) ||
      { c: 0, imin: 0, imax: 0, isum: 0, emin: 0, emax: 0, esum: 0 };
    r.completed = a.c;
    r.min_elapsed_inclusive_ns = a.imin;
    r.max_elapsed_inclusive_ns = a.imax;
    r.mean_elapsed_inclusive_ns = mean(a.isum, a.c, a.imin, a.imax);
    r.min_elapsed_exclusive_ns = a.emin;
    r.max_elapsed_exclusive_ns = a.emax;
    r.mean_elapsed_exclusive_ns = mean(a.esum, a.c, a.emin, a.emax);
  }
}

function pct(v, fam, m) {
  const t = (m || M).totals[fam];
  return t > 0 ? (100 * v) / t : 0;
}

function sortKids() {
  const inc = M.inc[S.fam];
  const byInc = (a, b) => inc[b] - inc[a];
  for (let i = 0; i < M.n; i++) if (M.kids[i].length > 1) M.kids[i].sort(byInc);
  M.roots.sort(byInc);
}

/* SPEC 6: from the largest root, the largest child while it holds at least
 * half of its parent's inclusive value. */
function hotPath() {
  const inc = M.inc[S.fam], path = [];
  if (!M.roots.length) return path;
  let v = M.roots[0];
  path.push(v);
  for (;;) {
    const k = M.kids[v];
    if (!k.length || 2 * inc[k[0]] < inc[v]) break;
    v = k[0];
    path.push(v);
  }
  return path;
}

/*
 * Callers and callees of function F over the tree (SPEC 6).  Each node's
 * exclusive values stand for the intervals (samples) charged with its path
 * as the stack.  A caller is credited with them when the outermost F on the
 * path was called directly by it ([root] when F is the root); a callee when
 * the innermost F on the path called it directly; the rest (F on top) is F's
 * exclusive value.  Calls: entries of F from each caller, of each callee
 * from F, every occurrence.  One forward pass: parents precede children.
 */
const NONE = -3, ROOT = -2, SELF = -1;
function callerCallee(F) {
  const n = M.n, nf = M.fams.length, fn = M.fn, par = M.parent;
  const callerOf = new Int32Array(n), calleeOf = new Int32Array(n);
  const callers = new Map(), callees = new Map();
  const entry = (map, key) => {
    let e = map.get(key);
    if (!e) { e = { key, values: new Array(nf).fill(0), calls: 0 }; map.set(key, e); }
    return e;
  };
  const self = { inclusive: new Array(nf).fill(0), exclusive: new Array(nf).fill(0), calls: 0 };
  for (let i = 0; i < n; i++) {
    const p = par[i], isF = fn[i] === F;
    let c = p < 0 ? NONE : callerOf[p];
    if (c === NONE && isF) c = p < 0 ? ROOT : fn[p];
    callerOf[i] = c;
    let d;
    if (isF) d = SELF;
    else if (p < 0) d = NONE;
    else d = calleeOf[p] === SELF ? fn[i] : calleeOf[p];
    calleeOf[i] = d;
    if (c !== NONE) {
      const e = entry(callers, c);
      for (let k = 0; k < nf; k++) { e.values[k] += M.ex[k][i]; self.inclusive[k] += M.ex[k][i]; }
    }
    if (d === SELF) {
      for (let k = 0; k < nf; k++) self.exclusive[k] += M.ex[k][i];
    } else if (d !== NONE) {
      const e = entry(callees, d);
      for (let k = 0; k < nf; k++) e.values[k] += M.ex[k][i];
    }
    if (isF) {
      self.calls += M.calls[i];
      entry(callers, p < 0 ? ROOT : fn[p]).calls += M.calls[i];
    }
    if (p >= 0 && fn[p] === F) entry(callees, fn[i]).calls += M.calls[i];
  }
  const sum = (map) => {
    const s = new Array(nf).fill(0);
    for (const e of map.values()) for (let k = 0; k < nf; k++) s[k] += e.values[k];
    return s;
  };
  return {
    F, self, callers: [...callers.values()], callees: [...callees.values()],
    callersSum: sum(callers), calleesSum: sum(callees),
  };
}

/* ---- the session summary ------------------------------------------------ */

/*
 * Every field of SPEC 5's session in words: [key, label, kind].  Fields
 * not listed (a newer exporter's) are shown by their JSON name, formatted
 * by their type and suffix (_ns, _pct, _hz); null fields are left out;
 * "by" and "rows_total" describe the report the page was made from, not
 * the profile.
 */
const SUMMARY = [
  ['command', 'command', 'command'], ['method', 'method', 'text'],
  ['duration_ns', 'duration', 'time'], ['processes', 'processes', 'count'],
  ['images', 'process images (an exec starts one)', 'count'],
  ['threads', 'threads', 'count'], ['exit_status', 'exit status', 'exit'],
  ['complete', 'recording complete', 'bool'], ['attached', 'attached to a running process', 'bool'],
  ['elapsed_inclusive_ns', 'session EI (elapsed)', 'time'],
  ['application_inclusive_ns', 'session AI (application)', 'time'],
  ['app_time', 'application time', 'apptime'],
  ['samples', 'samples', 'count'], ['frequency_hz', 'frequency', 'hz'],
  ['lost_samples', 'lost samples', 'count'], ['root_reached_pct', 'stacks reaching the root', 'pct'],
  ['truncated_pct', 'stacks truncated', 'pct'], ['unwind_failures', 'unwind failures', 'count'],
  ['probe_samples', 'samples in probe code (left out of the shares)', 'count'],
  ['sampled_shares_damaged', 'sampled shares left out', 'text'],
  ['os_events', 'OS events', 'os'], ['repairs', 'repairs', 'count'],
  ['open_frames', 'frames open at the end', 'count'],
  ['repairs_by_cause', 'repairs and open frames by cause', 'causes'],
  ['repairs_by_cause_damaged', 'repairs by cause left out', 'text'],
  ['lost_events', 'lost events', 'count'],
  ['lost_os_records', 'OS records lost by the kernel', 'count'], ['events', 'events', 'count'],
  ['probe_cost_ns', 'probe cost removed per event', 'time'],
  ['probe_removed_ns', 'probe cost removed in all', 'time'],
  ['resolution_ns', 'resolution (a call\u2019s EE below it: times not reliable, marked ~)', 'time'],
  ['raw_times', 'raw times (probe cost left in)', 'bool'],
  ['patched', 'functions patched at run time', 'count'],
  ['unhooked_returns', 'returns left alone (exits inferred)', 'count'],
  ['unpatched', 'functions not patched, by reason', 'reasons'],
  ['unnamed_pct', 'without symbols', 'unnamedpct'],
  ['unrecorded', 'processes not recorded (programs run that cannot take the runtime)', 'unrecorded'],
  ['damaged', 'DAMAGED FILE, read up to', 'text'],
  ['bad_records', 'malformed records skipped', 'count'],
];
/* unnamed_modules: in the advice below the summary (renderHint) */
const SUMMARY_SKIP = new Set(['by', 'rows_total', 'unnamed_modules']);

/* "name count, name count" in the document's order (the CLI's). */
function countList(entries) {
  const span = el('span');
  entries.forEach(([name, v], i) => {
    if (i) span.appendChild(document.createTextNode(', '));
    span.appendChild(el('span', 'k', name));
    span.appendChild(document.createTextNode(' ' + fmtCount(v)));
  });
  return span;
}

/* os_events: the counts of the categories observed, then those the kernel
 * refused and those not asked for (SPEC 2). */
function osEvents(v) {
  const box = el('div');
  const counts = Object.entries(v).filter(([, c]) => typeof c === 'number');
  const refused = Array.isArray(v.not_observed) ? v.not_observed : Array.isArray(v.unobserved) ? v.unobserved : [];
  const requested = Array.isArray(v.requested) ? v.requested : null;
  box.appendChild(counts.length ? countList(counts) : el('span', null, 'none observed'));
  const missing = refused.filter((c) => !requested || requested.includes(c));
  const unasked = refused.filter((c) => requested && !requested.includes(c));
  if (missing.length)
    box.appendChild(el('div', 'warn', 'not observed (the kernel refused): ' + missing.join(', ') +
      '; their time counts as application'));
  if (unasked.length)
    box.appendChild(el('div', 'info', 'not requested (--os-events): ' + unasked.join(', ')));
  return box;
}

function summaryValue(key, kind, v) {
  switch (kind) {
  case 'command':
    return Array.isArray(v) ? v.map((a) => (/[\s"'\\]/.test(a) || a === '' ? JSON.stringify(a) : a)).join(' ') : String(v);
  case 'time': return typeof v === 'number' ? fmtTime(v) : String(v);
  case 'count': return typeof v === 'number' ? fmtCount(v) : String(v);
  case 'pct': return typeof v === 'number' ? fmtPct(v) : String(v);
  case 'unnamedpct': {
    const mods = M.session.unnamed_modules;
    if (!(Array.isArray(mods) && mods.length)) return 'none';
    return fmtPct(num(v)) + ' of ' + (M.method === 'sampling' ? 'samples' : 'time') + ', in ' +
      mods.length + ' module' + (mods.length > 1 ? 's' : '') + ' (below)';
  }
  case 'hz': return fmtCount(v) + ' Hz';
  case 'bool': return v ? 'yes' : 'no';
  case 'exit': return typeof v === 'number' && v > 128 ? v + ' (signal ' + (v - 128) + ')' : String(v);
  case 'apptime':
    return v === 'exact' ? 'exact (measured OS time removed)' :
      v === 'interval' ? 'interval rule (OS-bound intervals removed)' : String(v);
  case 'os': return osEvents(v);
  case 'reasons': {
    const entries = Object.entries(v).filter(([, c]) => typeof c === 'number');
    return entries.length ? countList(entries) : 'none';
  }
  case 'unrecorded': {
    if (!(Array.isArray(v) && v.length)) return 'none';
    const ul = el('ul', 'plain');
    for (const u of v)
      ul.appendChild(el('li', 'warn', 'process ' + u.pid + ' ran ' + u.program + ': ' + u.reason));
    return ul;
  }
  case 'causes': {
    const entries = Object.entries(v).filter(([, c]) => typeof c === 'number' && c > 0);
    return entries.length ? countList(entries) : 'none';
  }
  default: return genericValue(key, v);
  }
}

/* A field this page does not know: by its type and name. */
function genericValue(key, v) {
  if (typeof v === 'number') {
    if (/_ns$/.test(key)) return fmtTime(v);
    if (/_pct$/.test(key)) return fmtPct(v);
    if (/_hz$/.test(key)) return fmtCount(v) + ' Hz';
    return Number.isInteger(v) ? fmtCount(v) : String(Number(v.toFixed(3)));
  }
  if (typeof v === 'boolean') return v ? 'yes' : 'no';
  if (Array.isArray(v)) {
    if (!v.length) return 'none';
    if (v.every((x) => x === null || typeof x !== 'object')) return v.join(', ');
    const ul = el('ul', 'plain');
    for (const x of v) {
      const li = el('li');
      li.appendChild(x && typeof x === 'object' ? genericValue(key, x) : document.createTextNode(String(x)));
      ul.appendChild(li);
    }
    return ul;
  }
  if (v && typeof v === 'object') {
    const span = el('span');
    Object.entries(v).filter(([, x]) => x !== null).forEach(([k, x], i) => {
      if (i) span.appendChild(document.createTextNode(', '));
      span.appendChild(el('span', 'k', k.replace(/_/g, ' ')));
      const val = genericValue(k, x);
      span.appendChild(document.createTextNode(' '));
      span.appendChild(typeof val === 'string' ? document.createTextNode(val) : val);
    });
    return span;
  }
  return String(v);
}

function renderSummary() {
  const dl = $('summary'), session = M.session;
  dl.textContent = '';
  /* field: the session's key, "page:..." for what the page adds */
  const add = (field, label, value, cls, title) => {
    dl.appendChild(el('dt', null, label));
    const dd = el('dd', cls);
    if (typeof value === 'string') dd.textContent = value; else dd.appendChild(value);
    if (title) dd.title = title;
    dd.dataset.field = field;
    dl.appendChild(dd);
  };
  const known = new Set(SUMMARY.map(([k]) => k));
  for (const [key, label, kind] of SUMMARY) {
    const v = session[key];
    if (v === undefined || v === null) continue;
    add(key, label, summaryValue(key, kind, v), /damaged$/.test(key) ? 'warn' : null,
      kind === 'time' && typeof v === 'number' ? fmtCount(v) + ' ns' : null);
  }
  for (const [key, v] of Object.entries(session)) {
    if (known.has(key) || SUMMARY_SKIP.has(key) || v === null || v === undefined) continue;
    add(key, key.replace(/_/g, ' '), genericValue(key, v));
  }
  add('page:functions', 'functions', fmtCount(M.funcs.length));
  add('page:nodes', 'call-tree nodes', fmtCount(B.n));
  if (B.mismatches)
    add('page:warning', 'warning', fmtCount(B.mismatches) + ' tree nodes whose inclusive value differs from the sum over their subtree', 'warn');
  renderHint();
}

/*
 * The advice `stackclock report` prints for code without symbols (the same
 * lines: output/table.c), from session.unnamed_modules.
 */
function renderHint() {
  const box = $('symbols-hint'), s = M.session, mods = s.unnamed_modules;
  box.textContent = '';
  box.hidden = !(Array.isArray(mods) && mods.length);
  if (box.hidden) return;
  const line = (text, cls) => box.appendChild(el('div', cls, text));
  line('Without symbols ' + num(s.unnamed_pct).toFixed(1) + '% of ' +
    (M.method === 'sampling' ? 'samples' : 'time') + ', in functions named FILE+0xOFFSET:', 'hint-head');
  let dbgsym = false;
  for (const m of mods) {
    const hint = String(m.hint || '');
    line('  ' + basename(m.module) + ' ' + num(m.pct).toFixed(1) + '%: ' + hint, 'hint-line').title = m.module;
    dbgsym = dbgsym || hint.includes('-dbgsym');
  }
  if (dbgsym) line("  (-dbgsym packages are in Debian's debian-debug archive)", 'hint-line');
  line('  or fetch debug files: DEBUGINFOD_URLS=https://debuginfod.debian.net', 'hint-line');
}

/* ---- the function table ------------------------------------------------- */

let tableRows = null, tableCols = null, givenRows = null;

/* The function rows of the view: the document's own for all threads,
 * derived from the view's tree (and "thread_stats") for a selection. */
function viewRows() {
  let rows;
  if (S.scope === 'all' && givenRows) {
    rows = givenRows;
  } else {
    rows = deriveFunctionRows(M);
    const keep = scopeThreads(S.scope);
    if (keep && M.method === 'instrumentation') addPerCall(B, rows, keep);
  }
  return rows.map((r) => ({ r, fid: M.intern(r.function, r.module) }));
}

/* Column widths (table-layout: fixed): the function's name takes what the
 * others leave, so the table never gets wider than the window. */
const COL_WIDTH = { module: '7em', count: '6em', time: '4.9em', pct: '4.9em' };

function setupTable(data) {
  givenRows = Array.isArray(data.rows) && data.rows.length ? data.rows : null;
  tableRows = viewRows();
  const known = COLUMNS[M.method];
  const present = new Set();
  for (const { r } of tableRows) for (const k of Object.keys(r)) present.add(k);
  tableCols = known.filter(([f]) => present.has(f));
  const knownSet = new Set(known.map(([f]) => f));
  for (const k of present) {
    if (knownSet.has(k) || k === 'below_resolution') continue;   /* a mark on the name */
    const sample = tableRows.find(({ r }) => r[k] !== undefined).r[k];
    if (sample === null || typeof sample === 'object') continue;
    tableCols.push([k, k.replace(/_/g, ' '), typeof sample === 'number' ?
      (/_ns$/.test(k) ? 'time' : /_pct$/.test(k) ? 'pct' : 'count') : typeof sample === 'boolean' ? 'bool' : 'name']);
  }
  const cols = el('colgroup'), tr = el('tr');
  for (const [field, label, kind] of tableCols) {
    const col = el('col');
    if (COL_WIDTH[kind]) col.style.width = COL_WIDTH[kind];
    else if (kind !== 'name' || field !== 'function') col.style.width = '6em';
    cols.appendChild(col);
    const th = el('th', kind === 'name' || kind === 'module' ? 'text' : null, label);
    th.title = field;
    th.dataset.field = field;
    th.addEventListener('click', () => {
      if (S.sortField === field) S.sortAsc = !S.sortAsc;
      else { S.sortField = field; S.sortAsc = kind === 'name' || kind === 'module'; }
      S.tableShown = TABLE_CHUNK;
      renderTable();
    });
    tr.appendChild(th);
  }
  const table = $('functions');
  table.insertBefore(cols, table.tHead);
  table.tHead.appendChild(tr);
}

/* SPEC section 14: a function whose elapsed exclusive time per call is
 * under the session's resolution is marked (~): its times are not
 * reliable, its counts are. */
const BELOW_RES_NOTE = ' \u2014 below the resolution: under it a call\u2019s times are not reliable, its count is';
function belowResolution(calls, ee) {
  const res = M.session && M.session.resolution_ns;
  return M.method === 'instrumentation' && res > 0 && calls > 0 && ee < calls * res;
}

function renderTable() {
  const field = S.sortField, dir = S.sortAsc ? 1 : -1;
  tableRows.sort((a, b) => {
    const x = a.r[field], y = b.r[field];
    if (x === y) return 0;
    if (x === undefined) return 1;
    if (y === undefined) return -1;
    return (x < y ? -1 : 1) * dir;
  });
  for (const th of $('functions').tHead.rows[0].cells) {
    th.classList.toggle('sorted-asc', th.dataset.field === field && S.sortAsc);
    th.classList.toggle('sorted-desc', th.dataset.field === field && !S.sortAsc);
  }
  const body = el('tbody');
  const shown = Math.min(S.tableShown, tableRows.length);
  for (let i = 0; i < shown; i++) {
    const { r, fid } = tableRows[i];
    const tr = el('tr');
    tr.dataset.fid = fid;
    if (fid === S.selected) tr.className = 'selected';
    for (const [f, , kind] of tableCols) {
      if (kind === 'name') {
        const below = f === 'function' && belowResolution(r.calls, r.elapsed_exclusive_ns);
        const td = el('td', below ? 'text name below-res' : 'text name', r[f]);
        td.title = (r[f] === undefined || r[f] === null ? '' : String(r[f])) + (below ? BELOW_RES_NOTE : '');
        tr.appendChild(td);
      } else if (kind === 'bool') {
        tr.appendChild(el('td', 'text', r[f] === undefined ? '' : r[f] ? 'yes' : 'no'));
      } else if (kind === 'module') {
        const td = el('td', 'text', basename(r[f]));
        td.title = r[f] || '';
        tr.appendChild(td);
      } else {
        tr.appendChild(el('td', null, fmtKind(kind, r[f])));
      }
    }
    body.appendChild(tr);
  }
  const table = $('functions');
  table.replaceChild(body, table.tBodies[0]);
  table.dataset.sort = field + (S.sortAsc ? ' asc' : ' desc');
  table.dataset.rows = tableRows.length;
  table.dataset.first = tableRows.length ? tableRows[0].r.function : '';
  const more = $('table-more');
  more.textContent = '';
  if (shown < tableRows.length) {
    const b = el('button', 'more', 'Show ' + Math.min(TABLE_CHUNK, tableRows.length - shown) +
      ' more of ' + fmtCount(tableRows.length - shown) + ' rows not shown');
    b.addEventListener('click', () => { S.tableShown += TABLE_CHUNK; renderTable(); });
    more.appendChild(b);
  }
}

function setupTableClicks() {
  $('functions').addEventListener('click', (ev) => {
    const tr = ev.target.closest('tbody tr');
    if (tr) select(Number(tr.dataset.fid));
  });
}

/* ---- the call tree (children rendered on expansion) ---------------------- */

let hot = new Set();
const treeDom = new Map();

function valueText(v, fam) {
  return M.fams[fam].time ? fmtTime(v) : fmtCount(v);
}

function treeNode(i) {
  const box = el('div', 'tn');
  const line = el('div', 'tn-line');
  line.dataset.node = i;
  if (hot.has(i)) { line.classList.add('hot'); line.dataset.hot = '1'; }
  const leaf = M.kids[i].length === 0;
  const toggle = el('span', 'tn-toggle', leaf ? '\u00b7' : '\u25b8');
  const f = S.fam, inc = M.inc[f][i], ex = M.ex[f][i];
  line.appendChild(toggle);
  line.appendChild(el('span', 'tn-val', valueText(inc, f)));
  line.appendChild(el('span', 'tn-pct', fmtPct(pct(inc, f))));
  line.appendChild(el('span', 'tn-self', 'self ' + valueText(ex, f)));
  const func = M.funcs[M.fn[i]];
  const below = belowResolution(M.calls[i], M.ex[0][i]);
  const name = el('span', below ? 'tn-name below-res' : 'tn-name', func.name);
  name.title = func.name + (below ? BELOW_RES_NOTE : '');
  line.appendChild(name);
  line.appendChild(el('span', 'tn-mod', basename(func.module)));
  box.appendChild(line);
  treeDom.set(i, box);
  return box;
}

function appendKids(container, list, from) {
  const to = Math.min(list.length, from + TREE_CHUNK);
  for (let k = from; k < to; k++) container.appendChild(treeNode(list[k]));
  if (to < list.length) {
    const more = el('div', 'tn-more', '\u2026 ' + fmtCount(list.length - to) + ' more');
    more.addEventListener('click', () => { more.remove(); appendKids(container, list, to); });
    container.appendChild(more);
  }
}

function expand(i, open) {
  const box = treeDom.get(i);
  if (!box || !M.kids[i].length) return;
  let kids = box.querySelector(':scope > .tn-kids');
  if (open === undefined) open = !kids || kids.hidden;
  if (open && !kids) {
    kids = el('div', 'tn-kids');
    appendKids(kids, M.kids[i], 0);
    box.appendChild(kids);
  }
  if (kids) kids.hidden = !open;
  box.firstChild.firstChild.textContent = open ? '\u25be' : '\u25b8';
}

function renderTree() {
  const tree = $('tree');
  tree.textContent = '';
  treeDom.clear();
  const path = hotPath();
  hot = new Set(path);
  appendKids(tree, M.roots, 0);
  for (const v of path.slice(0, HOT_EXPANDED)) expand(v, true);
  tree.dataset.hotPath = path.map((v) => M.funcs[M.fn[v]].name).join(';');
}

function setupTreeClicks() {
  $('tree').addEventListener('click', (ev) => {
    const line = ev.target.closest('.tn-line');
    if (!line) return;
    const i = Number(line.dataset.node);
    if (ev.target.classList.contains('tn-name')) select(M.fn[i]);
    else expand(i);
  });
}

/* ---- the flame graph (icicle: roots on top) ----------------------------- */

/* The boxes drawn (parallel arrays), the label character width, the
 * functions matching the search (or null). */
const FL = { x: [], w: [], d: [], node: [], zoomRow: -1, charW: 7, matched: null };

function hue(name) {
  let h = 0;
  for (let i = 0; i < name.length; i++) h = (h * 31 + name.charCodeAt(i)) | 0;
  return h >>> 0;
}

function flameLayout(width) {
  const inc = M.inc[S.fam];
  FL.x = []; FL.w = []; FL.d = []; FL.node = []; FL.zoomRow = -1;
  let pruned = 0, maxD = 0;
  const put = (i, x, w, d) => {
    FL.x.push(x); FL.w.push(w); FL.d.push(d); FL.node.push(i);
    if (d > maxD) maxD = d;
  };
  const stack = [];
  let total;
  if (S.zoom >= 0) {
    const anc = [];
    for (let a = S.zoom; a >= 0 && anc.length < ZOOM_ANCESTORS; a = M.parent[a]) anc.push(a);
    anc.reverse();
    anc.forEach((a, d) => put(a, 0, width, d));
    FL.zoomRow = anc.length - 1;
    total = inc[S.zoom];
    let x = 0;
    for (const k of M.kids[S.zoom]) { stack.push(k, x, anc.length); x += (inc[k] * width) / (total || 1); }
  } else {
    total = 0;
    for (const r of M.roots) total += inc[r];
    let x = 0;
    for (const r of M.roots) { stack.push(r, x, 0); x += (inc[r] * width) / (total || 1); }
  }
  const scale = total > 0 ? width / total : 0;
  while (stack.length) {
    const d = stack.pop(), x = stack.pop(), i = stack.pop();
    const w = inc[i] * scale;
    if (w < MIN_BOX_PX || d >= MAX_ROWS) { pruned += M.size[i]; continue; }
    put(i, x, w, d);
    let cx = x;
    for (const k of M.kids[i]) { stack.push(k, cx, d + 1); cx += inc[k] * scale; }
  }
  return { pruned, rows: maxD + 1 };
}

function drawFlame() {
  const canvas = $('flame'), box = $('flame-box');
  const width = Math.max(200, box.clientWidth - 2);
  const { pruned, rows } = flameLayout(width);
  const dpr = window.devicePixelRatio || 1;
  const height = rows * ROW_H;
  canvas.style.width = width + 'px';
  canvas.style.height = height + 'px';
  canvas.width = Math.round(width * dpr);
  canvas.height = Math.round(height * dpr);
  const ctx = canvas.getContext('2d');
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  ctx.font = '11px ui-monospace, Menlo, Consolas, monospace';
  ctx.textBaseline = 'middle';
  FL.charW = ctx.measureText('m').width || 7;
  const matched = FL.matched, zoomRow = FL.zoomRow;
  let drawnMatches = 0;
  for (let b = 0; b < FL.x.length; b++) {
    const i = FL.node[b], f = M.fn[i], name = M.funcs[f].name;
    const h = hue(name) % 55, x = FL.x[b], w = FL.w[b], y = FL.d[b] * ROW_H;
    let color;
    if (matched && matched[f]) { color = '#c13cdb'; drawnMatches++; }
    else if (matched) color = 'hsl(' + h + ',15%,82%)';
    else if (FL.d[b] < zoomRow) color = 'hsl(' + h + ',40%,86%)';
    else color = 'hsl(' + h + ',85%,' + (58 + (hue(M.funcs[f].module) % 12)) + '%)';
    ctx.fillStyle = color;
    ctx.fillRect(x, y, Math.max(w - 0.5, 0.5), ROW_H - 1);
    if (w > 3 * FL.charW) {
      const fit = Math.floor((w - 6) / FL.charW);
      const label = name.length > fit ? name.slice(0, Math.max(fit - 1, 1)) + '\u2026' : name;
      ctx.fillStyle = matched && matched[f] ? '#fff' : '#222';
      ctx.fillText(label, x + 3, y + ROW_H / 2);
    }
  }
  canvas.dataset.boxes = FL.x.length;
  canvas.dataset.pruned = pruned;
  canvas.dataset.zoom = S.zoom >= 0 ? M.funcs[M.fn[S.zoom]].name : '';
  canvas.dataset.searchDrawn = drawnMatches;
  const path = $('flame-path');
  path.textContent = '';
  if (S.zoom >= 0) {
    const names = [];
    for (let a = S.zoom; a >= 0; a = M.parent[a]) names.push(M.funcs[M.fn[a]].name);
    const shown = names.slice(0, 30).reverse();
    if (names.length > 30) shown.unshift('\u2026 ' + (names.length - 30) + ' more');
    path.textContent = 'zoomed: ' + shown.join(' \u203a ');
  }
  updateFlameInfo(pruned);
}

function updateFlameInfo(pruned) {
  const canvas = $('flame');
  let text = fmtCount(FL.x.length) + ' boxes';
  if (pruned) text += ', ' + fmtCount(pruned) + ' frames not drawn (narrower than a pixel, or deeper than ' +
    MAX_ROWS + ' rows: zoom in)';
  if (S.search) text += '; "' + S.search + '": ' + canvas.dataset.searchNodes + ' frames, ' +
    fmtPct(Number(canvas.dataset.searchPct)) + ' of the total';
  $('flame-info').textContent = text;
}

function boxAt(ev) {
  const r = $('flame').getBoundingClientRect();
  const x = ev.clientX - r.left, d = Math.floor((ev.clientY - r.top) / ROW_H);
  for (let b = 0; b < FL.x.length; b++)
    if (FL.d[b] === d && x >= FL.x[b] && x < FL.x[b] + FL.w[b]) return b;
  return -1;
}

function nodeSummary(i) {
  const f = M.funcs[M.fn[i]];
  const lines = [f.name, f.module];
  M.fams.forEach((fam, k) => {
    lines.push(fam.name + ': inclusive ' + valueText(M.inc[k][i], k) + ' (' + fmtPct(pct(M.inc[k][i], k)) +
      '), self ' + valueText(M.ex[k][i], k) + ' (' + fmtPct(pct(M.ex[k][i], k)) + ')');
  });
  if (M.method === 'instrumentation') lines.push('calls: ' + fmtCount(M.calls[i]));
  return lines.join('\n');
}

function setupFlame() {
  const canvas = $('flame'), tip = $('tooltip');
  canvas.addEventListener('mousemove', (ev) => {
    const b = boxAt(ev);
    if (b < 0) { tip.hidden = true; return; }
    tip.textContent = nodeSummary(FL.node[b]);
    tip.hidden = false;
    tip.style.left = Math.min(ev.clientX + 12, window.innerWidth - tip.offsetWidth - 8) + 'px';
    tip.style.top = ev.clientY + 16 + 'px';
  });
  canvas.addEventListener('mouseleave', () => { tip.hidden = true; });
  canvas.addEventListener('click', (ev) => {
    const b = boxAt(ev);
    if (b < 0) return;
    const i = FL.node[b];
    zoom(i);
    select(M.fn[i]);
  });
  $('flame-reset').addEventListener('click', () => zoom(-1));
  document.addEventListener('keydown', (ev) => {
    if (ev.key === 'Escape' && S.zoom >= 0) zoom(-1);
  });
  let timer = 0;
  $('flame-search').addEventListener('input', (ev) => {
    clearTimeout(timer);
    timer = setTimeout(() => search(ev.target.value), 120);
  });
  let resize = 0;
  window.addEventListener('resize', () => {
    clearTimeout(resize);
    resize = setTimeout(drawFlame, 150);
  });
}

function zoom(i) {
  S.zoom = i;
  drawFlame();
}

/* Matching frames, and the share of the total under them (outermost only). */
function search(term) {
  S.search = String(term || '').trim();
  const canvas = $('flame');
  if (!S.search) {
    FL.matched = null;
    canvas.dataset.searchNodes = 0;
    canvas.dataset.searchPct = 0;
  } else {
    const t = S.search.toLowerCase();
    FL.matched = Uint8Array.from(M.funcs, (f) => (f.lower.includes(t) ? 1 : 0));
    const under = new Uint8Array(M.n), inc = M.inc[S.fam];
    let nodes = 0, value = 0;
    for (let i = 0; i < M.n; i++) {
      const p = M.parent[i], m = FL.matched[M.fn[i]];
      if (m) nodes++;
      if (m && !(p >= 0 && under[p])) value += inc[i];
      under[i] = m || (p >= 0 && under[p]) ? 1 : 0;
    }
    canvas.dataset.searchNodes = nodes;
    canvas.dataset.searchPct = pct(value, S.fam);
  }
  canvas.dataset.search = S.search;
  drawFlame();
}

/* ---- callers and callees ------------------------------------------------ */

function ccName(key) {
  return key === ROOT ? { name: '[root]', module: '' } : M.funcs[key];
}

function ccTable(title, entries, sumLabel, sum) {
  const nf = M.fams.length, instr = M.method === 'instrumentation';
  const frag = document.createDocumentFragment();
  frag.appendChild(el('h3', null, title));
  const table = el('table');
  const head = el('tr');
  const th = (cls, text, width) => {
    const h = head.appendChild(el('th', cls, text));
    if (width) h.style.width = width;
  };
  th('text', 'Function');
  th('text', 'Module', COL_WIDTH.module);
  M.fams.forEach((fam) => {
    th(null, instr ? fam.name : 'samples', '7em');
    th(null, '%', COL_WIDTH.pct);
  });
  if (instr) th(null, 'calls', COL_WIDTH.count);
  table.appendChild(head);
  entries.sort((a, b) => b.values[S.fam] - a.values[S.fam] || b.calls - a.calls);
  for (const e of entries) {
    const tr = el('tr');
    const f = ccName(e.key);
    if (e.key !== ROOT) tr.dataset.fid = e.key;
    const td = el('td', 'text name', f.name);
    td.title = f.name;
    tr.appendChild(td);
    tr.appendChild(el('td', 'text', basename(f.module)));
    for (let k = 0; k < nf; k++) {
      tr.appendChild(el('td', null, valueText(e.values[k], k)));
      tr.appendChild(el('td', null, fmtPct(pct(e.values[k], k))));
    }
    if (instr) tr.appendChild(el('td', null, fmtCount(e.calls)));
    table.appendChild(tr);
  }
  const tr = el('tr', 'cc-sum');
  tr.appendChild(el('td', 'text', sumLabel));
  tr.appendChild(el('td'));
  for (let k = 0; k < nf; k++) {
    tr.appendChild(el('td', null, valueText(sum[k], k)));
    tr.appendChild(el('td', null, fmtPct(pct(sum[k], k))));
  }
  if (instr) tr.appendChild(el('td'));
  table.appendChild(tr);
  table.addEventListener('click', (ev) => {
    const row = ev.target.closest('tr[data-fid]');
    if (row) select(Number(row.dataset.fid));
  });
  frag.appendChild(table);
  return frag;
}

function select(fid) {
  if (!(fid >= 0 && fid < M.funcs.length)) return;
  S.selected = fid;
  const r = callerCallee(fid), f = M.funcs[fid], nf = M.fams.length;
  const cc = $('cc');
  cc.textContent = '';
  const head = el('p');
  head.appendChild(el('strong', 'cc-name', f.name));
  head.appendChild(document.createTextNode('  ' + f.module));
  cc.appendChild(head);
  const parts = [];
  for (let k = 0; k < nf; k++) {
    parts.push(M.fams[k].name + ': inclusive ' + valueText(r.self.inclusive[k], k) + ' (' +
      fmtPct(pct(r.self.inclusive[k], k)) + '), exclusive ' + valueText(r.self.exclusive[k], k) +
      ' (' + fmtPct(pct(r.self.exclusive[k], k)) + ')');
  }
  if (M.method === 'instrumentation') parts.push('calls ' + fmtCount(r.self.calls));
  cc.appendChild(el('p', null, parts.join('; ')));
  cc.appendChild(ccTable('Callers (credited by the outermost call)', r.callers,
    'sum = inclusive of the function', r.callersSum));
  const calleeSum = r.calleesSum.map((v, k) => v + r.self.exclusive[k]);
  cc.appendChild(ccTable('Callees (credited from the innermost occurrence)', r.callees,
    'sum + exclusive = inclusive', calleeSum));
  const join = (a) => a.join(',');
  cc.dataset.function = f.name;
  cc.dataset.inclusive = join(r.self.inclusive);
  cc.dataset.exclusive = join(r.self.exclusive);
  cc.dataset.calls = r.self.calls;
  cc.dataset.callersSum = join(r.callersSum);
  cc.dataset.calleesSum = join(r.calleesSum);
  cc.dataset.callers = JSON.stringify(r.callers.map((e) =>
    [ccName(e.key).name, e.values, e.calls]));
  cc.dataset.callees = JSON.stringify(r.callees.map((e) =>
    [ccName(e.key).name, e.values, e.calls]));
  for (const tr of $('functions').tBodies[0].rows)
    tr.classList.toggle('selected', Number(tr.dataset.fid) === fid);
  if (TL) tlRedraw();
  return r;
}

/* ---- the timeline (SPEC section 12) -------------------------------------- */

/*
 * The recording's calls in order, one lane per thread: its calls as a flame
 * chart over time (a row per depth), its OS events in a thin band, its
 * samples as ticks.  The page carries them as varint columns (the document's
 * "timeline" says what each holds, docs/html-report.md); they are decoded
 * once into per-row arrays: a lane's calls at one depth never overlap, so a
 * row sorted by start is sorted by end too, and the calls in view are found
 * by binary search.  Drawing decimates: a call narrower than a pixel is
 * merged with its neighbours into one filled span, and the calls that end
 * within that pixel are skipped by binary search, so a frame costs about
 * one step per pixel and row, whatever the number of calls.
 */
const TL_AXIS = 22, TL_HEAD = 17, TL_OS = 5, TL_TICKS = 8, TL_ROW = 16, TL_GAP = 8;
const TL_MAX_ROWS = 64, TL_MIN_SPAN = 50, TL_BOX_H = 560;
const OS_CATS = ['switch', 'syscall', 'fault', 'other'];
const OS_COLORS = ['#8e24aa', '#e65100', '#c62828', '#546e7a'];
let TL = null;           /* the decoded timeline, or null */
const TV = { v0: 0, v1: 1, drag: null, dragged: false, hoverKey: '', colors: [] };

function b64bytes(text) {
  /* both skip the line breaks */
  if (typeof Uint8Array.fromBase64 === 'function') return Uint8Array.fromBase64(text);
  const bin = atob(text);
  const bytes = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
  return bytes;
}

/* The unsigned LEB128 values of bytes[off, off + len) into out (a typed
 * array of their number): one tight loop, what 40 M values need. */
function varints(bytes, off, len, out, what) {
  let p = off;
  const end = off + len, n = out.length;
  for (let i = 0; i < n; i++) {
    let b = p < end ? bytes[p++] : 256;
    if (b < 128) { out[i] = b; continue; }
    let v = b & 127, mul = 128;
    do {
      b = p < end ? bytes[p++] : 256;
      v += (b & 127) * mul;
      mul *= 128;
    } while (b >= 128 && b < 256);
    if (b === 256) throw new Error('the timeline\u2019s ' + what + ' column ends early');
    out[i] = v;
  }
  if (p !== end) throw new Error('the timeline\u2019s ' + what + ' column is longer than its items');
  return out;
}

async function readTimeline(b, meta, mark) {
  const node = $('sc-timeline');
  if (!node) throw new Error('the page has no timeline data (no sc-timeline element)');
  if (meta.encoding !== 'varint-columns-1' || node.dataset.encoding !== 'gzip-base64')
    throw new Error('unknown timeline encoding "' + meta.encoding + '"');
  if (typeof DecompressionStream !== 'function')
    throw new Error('this browser cannot decompress the timeline (no DecompressionStream)');
  const stream = new Blob([b64bytes(node.textContent)]).stream().pipeThrough(new DecompressionStream('gzip'));
  const bytes = new Uint8Array(await new Response(stream).arrayBuffer());
  mark('timeline inflated');
  const cols = meta.columns, off = [0];
  if (!Array.isArray(cols) || cols.length !== 11) throw new Error('the timeline has no 11 columns');
  for (const c of cols) off.push(off[off.length - 1] + c);
  if (off[11] !== bytes.length)
    throw new Error('the timeline\u2019s columns add up to ' + off[11] + ' bytes, the data has ' + bytes.length);
  const col = (k, out, what) => varints(bytes, off[k], cols[k], out, what);
  /* the page's function ids (shared with the table, tree and flame graph) */
  const fids = Int32Array.from(meta.funcs || [], (f) => b.intern(f[0], f[1]));
  const mapFids = (a) => {
    for (let i = 0; i < a.length; i++) {
      if (a[i] >= fids.length) throw new Error('a timeline item names function ' + a[i] + ' of ' + fids.length);
      a[i] = fids[a[i]];
    }
    return a;
  };
  const lanes = (meta.lanes || []).map((l) => ({
    pid: l.pid, tid: l.tid, name: l.name, calls: num(l.calls), os: num(l.os), samples: num(l.samples),
    rows: 0, rowBase: 0, deep: 0, maxDepth: -1, scope: -1,
  }));
  const sum = (k) => lanes.reduce((s, l) => s + l[k], 0);
  const nc = sum('calls'), no = sum('os'), ns = sum('samples');
  if (nc !== meta.calls || no !== meta.os || ns !== meta.samples)
    throw new Error('the timeline\u2019s lanes do not add up to its counts');
  /* Starts are deltas within a lane: summed up, lane by lane. */
  const starts = (a, k) => {
    let i = 0;
    for (const l of lanes) {
      let t = 0;
      for (const e = i + l[k]; i < e; i++) a[i] = t += a[i];
    }
    return a;
  };

  /* Calls: rows (lane, depth) from the depths, then each column put in
   * place, a row's calls contiguous in order of start. */
  const dest = col(3, new Int32Array(nc), 'depth');
  const flagsIn = new Uint8Array(nc);
  let nrows = 0, i0 = 0;
  for (const l of lanes) {
    for (let i = i0; i < i0 + l.calls; i++) {
      const d = dest[i] >>> 4;
      flagsIn[i] = dest[i] & 15;
      dest[i] = d;
      if (d > l.maxDepth) l.maxDepth = d;
    }
    l.rowBase = nrows;
    l.rows = Math.min(l.maxDepth + 1, TL_MAX_ROWS);
    nrows += l.rows;
    i0 += l.calls;
  }
  const rowOff = new Int32Array(nrows + 1);
  i0 = 0;
  for (const l of lanes) {
    for (let i = i0; i < i0 + l.calls; i++) {
      if (dest[i] < TL_MAX_ROWS) rowOff[l.rowBase + dest[i] + 1]++;
      else l.deep++;
    }
    i0 += l.calls;
  }
  for (let r = 0; r < nrows; r++) rowOff[r + 1] += rowOff[r];
  const shown = rowOff[nrows], fill = Int32Array.from(rowOff.subarray(0, nrows));
  const flags = new Uint8Array(shown);
  i0 = 0;
  for (const l of lanes) {
    for (let i = i0; i < i0 + l.calls; i++) {
      if (dest[i] >= TL_MAX_ROWS) { dest[i] = -1; continue; }
      const j = fill[l.rowBase + dest[i]]++;
      dest[i] = j;
      flags[j] = flagsIn[i];
    }
    i0 += l.calls;
  }
  const start = new Float64Array(shown), end = new Float64Array(shown), fn = new Int32Array(shown);
  let tmp = starts(col(0, new Float64Array(nc), 'call start'), 'calls');
  for (let i = 0; i < nc; i++) if (dest[i] >= 0) start[dest[i]] = tmp[i];
  tmp = col(1, tmp, 'call duration');
  for (let i = 0; i < nc; i++) if (dest[i] >= 0) end[dest[i]] = start[dest[i]] + tmp[i];
  tmp = mapFids(col(2, new Int32Array(nc), 'call function'));
  for (let i = 0; i < nc; i++) if (dest[i] >= 0) fn[dest[i]] = tmp[i];
  tmp = null;
  mark('timeline calls');

  /* OS events: one band per lane, sorted by start; may overlap (a fault in
   * a system call), so a running maximum of ends is searched. */
  const osStart = starts(col(4, new Float64Array(no), 'OS start'), 'os');
  const osEnd = col(5, new Float64Array(no), 'OS duration'), osMax = new Float64Array(no);
  i0 = 0;
  for (const l of lanes) {
    let mx = 0;
    for (let i = i0; i < i0 + l.os; i++) {
      osEnd[i] += osStart[i];
      osMax[i] = mx = Math.max(mx, osEnd[i]);
    }
    i0 += l.os;
  }
  const osWhat = col(6, new Int32Array(no), 'OS category'), osDepth = col(7, new Int32Array(no), 'OS depth');
  /* samples: ticks */
  const smpTime = starts(col(8, new Float64Array(ns), 'sample time'), 'samples');
  const smpFn = mapFids(col(9, new Int32Array(ns), 'sample function'));
  const smpDepth = col(10, new Int32Array(ns), 'sample depth');
  /* each lane's thread in the selector (10,000 threads: a map, not a search) */
  const threadIx = new Map();
  b.threads.forEach((th, k) => threadIx.set(th.pid + ':' + th.tid, k));
  let o = 0, s = 0;
  for (const l of lanes) {
    l.osOff = o; o += l.os;
    l.smpOff = s; s += l.samples;
    const k = threadIx.get(l.pid + ':' + l.tid);
    l.scope = k === undefined ? -1 : k;
  }
  let endNs = num(meta.end_ns);
  for (let r = 0; r < nrows; r++) if (rowOff[r + 1] > rowOff[r]) endNs = Math.max(endNs, end[rowOff[r + 1] - 1]);
  for (let i = 0; i < no; i++) endNs = Math.max(endNs, osEnd[i]);
  if (ns) endNs = Math.max(endNs, smpTime[ns - 1]);
  mark('timeline decoded');
  return {
    meta, lanes, rowOff, start, end, fn, flags, shown, nc,
    osStart, osEnd, osMax, osWhat, osDepth, smpTime, smpFn, smpDepth,
    pids: new Set(lanes.map((l) => l.pid)).size, endNs: Math.max(endNs, 1), visible: lanes.map((_, k) => k), laneY: [], height: 0,
  };
}

/* First index in [a, b) whose arr value is above t (arr sorted). */
function above(arr, a, b, t) {
  while (a < b) {
    const m = (a + b) >>> 1;
    if (arr[m] > t) b = m; else a = m + 1;
  }
  return a;
}

function laneHeight(l) {
  return TL_HEAD + (l.os ? TL_OS + 1 : 0) + (l.samples ? TL_TICKS + 1 : 0) + l.rows * TL_ROW + TL_GAP;
}

/* The lanes of the threads shown ("show:" selector), their offsets. */
function tlLayout(keep) {
  TL.visible = [];
  TL.laneY = [];
  let y = 0;
  TL.lanes.forEach((l, k) => {
    if (keep && !(l.scope >= 0 && keep[l.scope])) return;
    TL.visible.push(k);
    TL.laneY.push(y);
    y += laneHeight(l);
  });
  TL.height = y;
  TL.laneYs = Float64Array.from(TL.laneY);
  const view = Math.min(TL_BOX_H, TL_AXIS + y);
  $('tl').style.height = view + 'px';
  $('tl-box').style.height = view + 'px';
  $('tl-spacer').style.height = Math.max(0, TL_AXIS + y - view) + 'px';
}

function funcColor(f) {
  let c = TV.colors[f];
  if (!c) {
    const fu = M.funcs[f];
    c = TV.colors[f] = 'hsl(' + (hue(fu.name) % 55) + ',85%,' + (58 + (hue(fu.module) % 12)) + '%)';
  }
  return c;
}

/* A round step of about px pixels on the axis: 1, 2 or 5 times a power of 10. */
function axisStep(scale, px) {
  const raw = px / scale, p = Math.pow(10, Math.floor(Math.log10(raw)));
  for (const m of [1, 2, 5, 10]) if (m * p >= raw) return m * p;
  return 10 * p;
}

/* t in the unit of mag (the view's end: one unit along the axis), with
 * the decimals step needs: 250.0005 ms for a 500 ns step at 250 ms. */
function axisLabel(t, step, mag) {
  const units = [[1e9, 's'], [1e6, 'ms'], [1e3, '\u00b5s'], [1, 'ns']];
  const [u, name] = units.find(([v]) => mag >= v) || units[3];
  const dec = Math.max(0, Math.ceil(-Math.log10(step / u) - 1e-9));
  return (t / u).toFixed(Math.min(dec, 9)) + ' ' + name;
}

/* One frame: the lanes in view, decimated; its time in ms. */
function drawTimeline() {
  if (!TL) return 0;
  const t0 = performance.now();
  const canvas = $('tl'), box = $('tl-box');
  const width = Math.max(200, box.clientWidth - 2), height = parseFloat(canvas.style.height) || 100;
  const dpr = window.devicePixelRatio || 1;
  canvas.style.width = width + 'px';
  canvas.width = Math.round(width * dpr);
  canvas.height = Math.round(height * dpr);
  const ctx = canvas.getContext('2d');
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  ctx.font = '11px ui-monospace, Menlo, Consolas, monospace';
  ctx.textBaseline = 'middle';
  const charW = ctx.measureText('m').width || 7;
  const v0 = TV.v0, v1 = TV.v1, scale = width / (v1 - v0), top = box.scrollTop;
  const sel = S.selected;
  let boxes = 0, merged = 0, inView = 0;
  ctx.fillStyle = '#fff';
  ctx.fillRect(0, 0, width, height);

  /* A run of calls narrower than a pixel, drawn as one span. */
  let runX0 = 0, runX1 = -1, runY = 0;
  const flush = () => {
    if (runX1 < 0) return;
    ctx.fillStyle = '#9aa5b4';
    ctx.fillRect(runX0, runY, runX1 - runX0, TL_ROW - 2);
    merged++;
    runX1 = -1;
  };
  const S0 = TL.start, E0 = TL.end, F0 = TL.fn, FL0 = TL.flags;
  for (let v = 0; v < TL.visible.length; v++) {
    const l = TL.lanes[TL.visible[v]];
    let y = TL_AXIS + TL.laneY[v] - top;
    const h = laneHeight(l);
    if (y + h < TL_AXIS || y > height) continue;
    ctx.fillStyle = v % 2 ? '#f7f7f9' : '#fdfdfd';
    ctx.fillRect(0, y, width, h - TL_GAP / 2);
    ctx.fillStyle = '#333';
    let head = 'thread ' + l.tid + (l.name ? ' ' + l.name : '') + (TL.pids > 1 && l.pid !== l.tid ? '  (process ' + l.pid + ')' : '') +
      '  \u00b7  ' + plural(l.calls, TL.meta.sampled_calls ? 'span' : 'call');
    if (l.os) head += ', ' + plural(l.os, 'OS event');
    if (l.samples) head += ', ' + plural(l.samples, 'sample');
    if (l.deep) head += '; ' + fmtCount(l.deep) + ' calls deeper than ' + TL_MAX_ROWS + ' not drawn';
    ctx.fillText(head, 4, y + TL_HEAD / 2);
    y += TL_HEAD;
    if (l.os) {
      const a = l.osOff, b = l.osOff + l.os;
      let i = above(TL.osMax, a, b, v0), lastPx = -2;
      for (; i < b && TL.osStart[i] < v1; i++) {
        if (TL.osEnd[i] <= v0) continue;
        const x0 = (TL.osStart[i] - v0) * scale, x1 = (TL.osEnd[i] - v0) * scale;
        if (x1 - x0 < 1 && Math.floor(x0) === lastPx) continue;
        lastPx = Math.floor(x0);
        ctx.fillStyle = OS_COLORS[TL.osWhat[i] & 3];
        ctx.fillRect(Math.max(x0, -1), y, Math.max(Math.min(x1, width + 1) - Math.max(x0, -1), 1), TL_OS);
      }
      y += TL_OS + 1;
    }
    if (l.samples) {
      const a = l.smpOff, b = l.smpOff + l.samples;
      let lastPx = -2;
      ctx.fillStyle = '#37474f';
      for (let i = above(TL.smpTime, a, b, v0 - 1e-9); i < b && TL.smpTime[i] <= v1; i++) {
        const px = Math.floor((TL.smpTime[i] - v0) * scale);
        if (px === lastPx) continue;
        lastPx = px;
        ctx.fillRect(px, y, 1, TL_TICKS);
      }
      y += TL_TICKS + 1;
    }
    for (let r = 0; r < l.rows; r++, y += TL_ROW) {
      if (y + TL_ROW < TL_AXIS || y > height) continue;
      const a = TL.rowOff[l.rowBase + r], b = TL.rowOff[l.rowBase + r + 1];
      let i = above(E0, a, b, v0);
      const first = i;
      runX1 = -1;
      runY = y;
      while (i < b && S0[i] < v1) {
        const x0 = (S0[i] - v0) * scale, x1 = (E0[i] - v0) * scale;
        if (x1 - x0 >= 1) {
          flush();
          const bx = Math.max(x0, -1), bw = Math.min(x1, width + 1) - bx, f = F0[i];
          ctx.fillStyle = funcColor(f);
          ctx.fillRect(bx, y, Math.max(bw - 0.5, 0.5), TL_ROW - 2);
          if (f === sel) {
            ctx.strokeStyle = '#111';
            ctx.lineWidth = 2;
            ctx.strokeRect(bx + 1, y + 1, Math.max(bw - 2.5, 0.5), TL_ROW - 4);
          }
          if (FL0[i] & 1) {       /* had not returned: a dashed end */
            ctx.fillStyle = '#b00020';
            ctx.fillRect(Math.min(x1, width) - 2, y, 2, TL_ROW - 2);
          }
          if (bw > 3 * charW) {
            const name = M.funcs[f].name, fit = Math.floor((bw - 6) / charW);
            ctx.fillStyle = '#222';
            ctx.fillText(name.length > fit ? name.slice(0, Math.max(fit - 1, 1)) + '\u2026' : name,
              Math.max(bx, 0) + 3, y + (TL_ROW - 2) / 2);
          }
          boxes++;
          i++;
        } else {
          const px = Math.floor(x0);
          if (runX1 >= 0 && px <= runX1) runX1 = Math.max(runX1, px + 1);
          else { flush(); runX0 = px; runX1 = px + 1; }
          /* the calls that end within this pixel are in this span too */
          const tNext = v0 + (px + 1) / scale;
          i = i + 1 < b && E0[i + 1] < tNext ? above(E0, i + 1, b, tNext) : i + 1;
        }
      }
      flush();
      inView += i - first;
    }
  }
  /* the axis, over the lanes */
  ctx.fillStyle = '#f0f0f0';
  ctx.fillRect(0, 0, width, TL_AXIS);
  ctx.strokeStyle = '#bbb';
  ctx.lineWidth = 1;
  ctx.beginPath();
  ctx.moveTo(0, TL_AXIS - 0.5);
  ctx.lineTo(width, TL_AXIS - 0.5);
  ctx.stroke();
  const step = axisStep(scale, 110);
  ctx.fillStyle = '#444';
  for (let tk = Math.ceil(v0 / step) * step; tk <= v1; tk += step) {
    const x = Math.round((tk - v0) * scale) + 0.5;
    ctx.fillRect(x - 0.5, TL_AXIS - 6, 1, 6);
    ctx.fillText(axisLabel(tk, step, v1), x + 3, TL_AXIS / 2 - 1);
  }
  const ms = performance.now() - t0;
  const d = canvas.dataset;
  d.view = v0 + ',' + v1;
  d.boxes = boxes;
  d.merged = merged;
  d.inView = inView;
  d.frameMs = ms.toFixed(1);
  const fine = axisStep(scale, 10);
  $('tl-range').textContent = 'showing ' + axisLabel(v0, fine, v1) + ' \u2013 ' + axisLabel(v1, fine, v1) +
    ' (' + fmtTime(v1 - v0) + ') of ' + fmtTime(TL.endNs) +
    ' (' + plural(boxes, TL.meta.sampled_calls ? 'span' : 'call') + ' drawn, ' + plural(merged, 'grey span') + ' of calls narrower than a pixel)';
  return ms;
}

let tlFrame = 0;
function tlRedraw() {
  if (!tlFrame) tlFrame = requestAnimationFrame(() => { tlFrame = 0; drawTimeline(); });
}

function setView(v0, v1) {
  const endNs = TL.endNs;
  let span = Math.max(TL_MIN_SPAN, Math.min(v1 - v0, endNs));
  if (!(span > 0)) span = endNs;
  v0 = Math.min(Math.max(0, v0), endNs - span);
  TV.v0 = v0;
  TV.v1 = v0 + span;
  tlRedraw();
}

function zoomAt(factor, x) {
  const width = $('tl').clientWidth || 1, span = TV.v1 - TV.v0;
  const t = TV.v0 + (x / width) * span, ns = span * factor;
  setView(t - (x / width) * ns, t - (x / width) * ns + ns);
}

/* What lies under (x, y) of the canvas: {kind: 'call'|'os'|'sample', ...}. */
function tlHit(x, y) {
  const canvas = $('tl'), width = canvas.clientWidth || 1;
  const scale = width / (TV.v1 - TV.v0), t = TV.v0 + x / scale, tol = 2 / scale;
  const yy = y - TL_AXIS + $('tl-box').scrollTop;
  if (y < TL_AXIS) return null;
  const v = above(TL.laneYs, 0, TL.laneYs.length, yy) - 1;
  if (v < 0) return null;
  const k = TL.visible[v], l = TL.lanes[k];
  let ly = yy - TL.laneY[v] - TL_HEAD;
  if (ly < 0) return null;
  if (l.os) {
    if (ly < TL_OS + 1) {
      const a = l.osOff, b = a + l.os;
      let best = -1, dist = tol;
      for (let i = above(TL.osMax, a, b, t - tol); i < b && TL.osStart[i] <= t + tol; i++) {
        const dd = t < TL.osStart[i] ? TL.osStart[i] - t : t > TL.osEnd[i] ? t - TL.osEnd[i] : 0;
        if (dd <= dist) { best = i; dist = dd; }
      }
      return best < 0 ? null : { kind: 'os', lane: k, i: best };
    }
    ly -= TL_OS + 1;
  }
  if (l.samples) {
    if (ly < TL_TICKS + 1) {
      const a = l.smpOff, b = a + l.samples;
      let i = above(TL.smpTime, a, b, t) - 1;
      if (i + 1 < b && (i < a || TL.smpTime[i + 1] - t < t - TL.smpTime[i])) i++;
      return i >= a && Math.abs(TL.smpTime[i] - t) <= tol ? { kind: 'sample', lane: k, i } : null;
    }
    ly -= TL_TICKS + 1;
  }
  const r = Math.floor(ly / TL_ROW);
  if (r >= l.rows) return null;
  const a = TL.rowOff[l.rowBase + r], b = TL.rowOff[l.rowBase + r + 1];
  let i = above(TL.end, a, b, t);
  if (!(i < b && TL.start[i] <= t)) {
    /* between calls: the nearest within two pixels */
    const before = i - 1 >= a && t - TL.end[i - 1] <= tol ? t - TL.end[i - 1] : Infinity;
    const after = i < b && TL.start[i] - t <= tol ? TL.start[i] - t : Infinity;
    if (before === Infinity && after === Infinity) return null;
    i = before <= after ? i - 1 : i;
  }
  /* calls in the same pixel (when it is narrower) */
  let inPixel = 1;
  if ((TL.end[i] - TL.start[i]) * scale < 1) {
    const p0 = TV.v0 + Math.floor((TL.start[i] - TV.v0) * scale) / scale;
    inPixel = above(TL.start, a, b, p0 + 1 / scale) - above(TL.end, a, b, p0);
  }
  return { kind: 'call', lane: k, i, depth: r, inPixel };
}

function hitText(h) {
  const l = TL.lanes[h.lane], thread = 'thread ' + l.tid + (l.name ? ' ' + l.name : '');
  if (h.kind === 'call') {
    const f = M.funcs[TL.fn[h.i]], fl = TL.flags[h.i], dur = TL.end[h.i] - TL.start[h.i];
    const lines = [f.name, f.module || '(no module)',
      'start: ' + fmtTime(TL.start[h.i]) + ' (' + fmtCount(TL.start[h.i]) + ' ns)',
      (fl & 8 ? 'samples span: ~' : 'duration: ') + fmtTime(dur) + ' (' + fmtCount(dur) + ' ns)',
      'depth ' + h.depth + ', ' + thread];
    if (fl & 1) lines.push('had not returned when the thread ended');
    if (fl & 2) lines.push('closed by a repair (its exit was not seen)');
    if (fl & 4) lines.push('a call into another module');
    if (h.inPixel > 1) lines.push(fmtCount(h.inPixel) + ' calls in this pixel: zoom in to see them apart');
    return lines.join('\n');
  }
  if (h.kind === 'os') {
    const w = TL.osWhat[h.i], sys = Math.floor(w / 4) - 1;
    const dur = TL.osEnd[h.i] - TL.osStart[h.i];
    const sysName = sys >= 0 && TL.meta.syscalls ? TL.meta.syscalls[sys] : undefined;
    return ['OS: ' + OS_CATS[w & 3] + (sysName ? ' ' + sysName : sys >= 0 ? ' (system call ' + sys + ')' : ''),
      'start: ' + fmtTime(TL.osStart[h.i]) + ' (' + fmtCount(TL.osStart[h.i]) + ' ns)',
      'duration: ' + fmtTime(dur) + ' (' + fmtCount(dur) + ' ns)', thread].join('\n');
  }
  const f = M.funcs[TL.smpFn[h.i]];
  return ['sample in ' + f.name, f.module || '(no module)',
    'time: ' + fmtTime(TL.smpTime[h.i]) + ' (' + fmtCount(TL.smpTime[h.i]) + ' ns)',
    'stack depth ' + TL.smpDepth[h.i] + ', ' + thread].join('\n');
}

function hitFid(h) {
  return h.kind === 'call' ? TL.fn[h.i] : h.kind === 'sample' ? TL.smpFn[h.i] : -1;
}

function setupTimeline() {
  const canvas = $('tl'), box = $('tl-box'), tip = $('tooltip');
  const local = (ev) => {
    const r = canvas.getBoundingClientRect();
    return [ev.clientX - r.left, ev.clientY - r.top];
  };
  canvas.addEventListener('wheel', (ev) => {
    ev.preventDefault();
    if (ev.shiftKey) { box.scrollTop += ev.deltaY; return; }
    const [x] = local(ev), width = canvas.clientWidth || 1;
    if (Math.abs(ev.deltaX) > Math.abs(ev.deltaY)) {
      const d = (ev.deltaX / width) * (TV.v1 - TV.v0);
      setView(TV.v0 + d, TV.v1 + d);
    } else {
      zoomAt(Math.exp(ev.deltaY * 0.002), x);
    }
  }, { passive: false });
  canvas.addEventListener('mousedown', (ev) => {
    if (ev.button !== 0) return;
    TV.drag = { x: ev.clientX, y: ev.clientY, v0: TV.v0, v1: TV.v1, top: box.scrollTop };
    TV.dragged = false;
    canvas.focus();
  });
  window.addEventListener('mousemove', (ev) => {
    const g = TV.drag;
    if (!g) return;
    const dx = ev.clientX - g.x, dy = ev.clientY - g.y;
    if (Math.abs(dx) + Math.abs(dy) > 3) TV.dragged = true;
    if (!TV.dragged) return;
    const d = (-dx / (canvas.clientWidth || 1)) * (g.v1 - g.v0);
    setView(g.v0 + d, g.v1 + d);
    box.scrollTop = g.top - dy;
    tip.hidden = true;
  });
  window.addEventListener('mouseup', () => { TV.drag = null; });
  canvas.addEventListener('mousemove', (ev) => {
    if (TV.drag && TV.dragged) return;
    const [x, y] = local(ev), h = tlHit(x, y);
    const d = canvas.dataset;
    if (!h) { tip.hidden = true; d.hover = ''; return; }
    tip.textContent = hitText(h);
    tip.hidden = false;
    tip.style.left = Math.min(ev.clientX + 12, window.innerWidth - tip.offsetWidth - 8) + 'px';
    tip.style.top = ev.clientY + 16 + 'px';
    d.hover = tip.textContent;
  });
  canvas.addEventListener('mouseleave', () => { tip.hidden = true; });
  canvas.addEventListener('click', (ev) => {
    if (TV.dragged) return;
    const [x, y] = local(ev), h = tlHit(x, y);
    const f = h ? hitFid(h) : -1;
    if (f >= 0) { select(f); drawTimeline(); }
  });
  canvas.addEventListener('keydown', (ev) => {
    const span = TV.v1 - TV.v0, w = canvas.clientWidth || 1;
    switch (ev.key) {
    case 'ArrowLeft': case 'a': setView(TV.v0 - span / 8, TV.v1 - span / 8); break;
    case 'ArrowRight': case 'd': setView(TV.v0 + span / 8, TV.v1 + span / 8); break;
    case '+': case '=': case 'w': zoomAt(1 / 1.5, w / 2); break;
    case '-': case 's': zoomAt(1.5, w / 2); break;
    case '0': case 'Home': setView(0, TL.endNs); break;
    case 'ArrowUp': box.scrollTop -= 3 * TL_ROW; break;
    case 'ArrowDown': box.scrollTop += 3 * TL_ROW; break;
    default: return;
    }
    ev.preventDefault();
  });
  box.addEventListener('scroll', tlRedraw);
  $('tl-in').addEventListener('click', () => zoomAt(1 / 1.5, (canvas.clientWidth || 1) / 2));
  $('tl-out').addEventListener('click', () => zoomAt(1.5, (canvas.clientWidth || 1) / 2));
  $('tl-all').addEventListener('click', () => setView(0, TL.endNs));
  window.addEventListener('resize', tlRedraw);
}

/* The section's words: what is in it and what was left out. */
function timelineInfo() {
  const m = TL.meta, parts = [];
  const what = m.sampled_calls ? 'spans of consecutive samples with the same frame' : 'calls';
  parts.push(fmtCount(m.calls) + ' ' + what + ', ' + fmtCount(m.os) + ' OS events, ' + fmtCount(m.samples) +
    ' samples in ' + fmtCount(TL.lanes.length) + ' threads over ' + fmtTime(TL.endNs) + '.');
  if (m.calls < m.calls_total)
    parts.push('The page holds the ' + fmtCount(m.calls) + ' longest of ' + fmtCount(m.calls_total) +
      ' calls (its limit, export --timeline-max): calls shorter than ' + fmtTime(m.calls_min_ns) + ' are left out.');
  if (m.os < m.os_total) parts.push('Likewise the ' + fmtCount(m.os) + ' longest of ' + fmtCount(m.os_total) + ' OS events.');
  if (m.samples < m.samples_total) parts.push('And the first ' + fmtCount(m.samples) + ' of ' + fmtCount(m.samples_total) + ' samples.');
  if (m.dropped) parts.push('The recording\u2019s timeline was full: ' + fmtCount(m.dropped) + ' events were not kept (record --timeline=SIZE).');
  if (m.filtered) parts.push(fmtCount(m.filtered) + ' calls were left out by record\u2019s --min-time, --depth or --only.');
  if (m.damaged) parts.push(fmtCount(m.damaged) + ' items could not be read (damaged records).');
  if (TL.shown < TL.nc) parts.push(fmtCount(TL.nc - TL.shown) + ' calls deeper than ' + TL_MAX_ROWS + ' levels are not drawn.');
  return parts.join(' ');
}

/* ---- the thread and process selector ------------------------------------ */

/* The threads a scope keeps (Uint8Array over B.threads), null for all. */
function scopeThreads(scope) {
  const m = /^([pt]):(\d+)$/.exec(scope || '');
  if (!m) return null;
  const k = Number(m[2]), keep = new Uint8Array(B.threads.length);
  B.threads.forEach((t, i) => {
    if (m[1] === 't' ? i === k : t.process === k) keep[i] = 1;
  });
  return keep;
}

function threadLabel(t) {
  return 'thread ' + t.tid + (t.name ? ' ' + t.name : '');
}

function processLabel(k) {
  const p = B.processes[k] || {};
  return 'process ' + (p.pid === undefined ? k : p.pid) + (p.executable ? ' ' + basename(p.executable) : '');
}

/* The share of the session total (first value family) under a scope. */
function scopeShare(keep) {
  let v = 0;
  keep.forEach((on, i) => { if (on) v += B.threadValue[0][i]; });
  return fmtPct(pct(v, 0, B));
}

/* The selector: all, each process (when there are several, or several
 * threads in it) and each thread, with its share of the session. */
function setupScope() {
  const sel = $('scope');
  if (B.threads.length < 2) return;
  sel.textContent = '';
  const nproc = B.processes.length;
  sel.appendChild(el('option', null, 'all ' + fmtCount(B.threads.length) + ' threads' +
    (nproc > 1 ? ' of ' + fmtCount(nproc) + ' processes' : ''))).value = 'all';
  const byProc = new Map();
  B.threads.forEach((t, i) => {
    const k = typeof t.process === 'number' ? t.process : -1;
    if (!byProc.has(k)) byProc.set(k, []);
    byProc.get(k).push(i);
  });
  for (const [k, list] of byProc) {
    const group = el('optgroup');
    group.label = k >= 0 ? processLabel(k) : 'threads';
    if (k >= 0 && (nproc > 1 || list.length > 1)) {
      const opt = el('option', null, processLabel(k) + (list.length > 1 ? ': all ' + list.length +
        ' threads' : ': its thread') + ', ' + scopeShare(scopeThreads('p:' + k)));
      opt.value = 'p:' + k;
      group.appendChild(opt);
    }
    for (const i of list) {
      const opt = el('option', null, threadLabel(B.threads[i]) + ', ' + scopeShare(scopeThreads('t:' + i)));
      opt.value = 't:' + i;
      group.appendChild(opt);
    }
    sel.appendChild(group);
  }
  sel.addEventListener('change', () => setScope(sel.value));
  $('scope-box').hidden = false;
}

/* Show the tree, table, flame graph and callers/callees of a scope. */
function setScope(scope) {
  const keep = scopeThreads(scope);
  if (scope !== 'all' && !keep) return false;
  S.scope = scope;
  $('scope').value = scope;
  M = buildView(B, keep);
  S.zoom = -1;
  S.tableShown = TABLE_CHUNK;
  tableRows = viewRows();
  sortKids();
  renderTable();
  renderTree();
  if (S.search) search(S.search); else drawFlame();
  if (S.selected >= 0) select(S.selected);
  if (TL) { tlLayout(keep); tlRedraw(); }
  const info = $('scope-info');
  info.textContent = keep ? 'showing ' + $('scope').selectedOptions[0].textContent +
    ' of the session (percentages are of the whole session)' : '';
  document.body.dataset.scope = scope;
  document.body.dataset.viewNodes = M.n;
  return true;
}

/* ---- the value selector ------------------------------------------------- */

function setMetric(name) {
  const m = METRICS[name];
  if (!m || M.method !== 'instrumentation' || m[0] >= M.fams.length) return;
  S.fam = m[0];
  S.sortField = m[1];
  S.sortAsc = false;
  S.tableShown = TABLE_CHUNK;
  document.querySelector('input[name=metric][value=' + name + ']').checked = true;
  sortKids();
  renderTable();
  renderTree();
  if (S.search) search(S.search); else drawFlame();
  if (S.selected >= 0) select(S.selected);
  document.body.dataset.metric = name;
}

/* ---- loading ------------------------------------------------------------- */

async function readData(mark) {
  const node = $('sc-data');
  if (!node) throw new Error('the page carries no profile (no sc-data element)');
  const encoding = node.dataset.encoding || 'json';
  let text = node.textContent;
  if (encoding === 'gzip-base64') {
    if (typeof DecompressionStream !== 'function')
      throw new Error('this browser cannot decompress the embedded profile (no DecompressionStream); open the report in a current Chromium, Firefox or Safari');
    let bytes;
    if (typeof Uint8Array.fromBase64 === 'function') {
      bytes = Uint8Array.fromBase64(text);
    } else {
      const bin = atob(text);
      bytes = new Uint8Array(bin.length);
      for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
    }
    const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream('gzip'));
    text = await new Response(stream).text();
    mark('inflated');
  } else if (encoding !== 'json') {
    throw new Error('unknown data encoding "' + encoding + '"');
  }
  const data = JSON.parse(text);
  mark('parsed');
  return data;
}

async function main() {
  const phases = [];
  const mark = (name) => phases.push(name + ' ' + Math.round(performance.now()));
  mark('start');
  const data = await readData(mark);
  B = buildBase(data);
  let tlError = null;
  if (data.timeline) {
    try {
      TL = await readTimeline(B, data.timeline, mark);
    } catch (err) {
      tlError = err && err.message ? err.message : String(err);
    }
  }
  M = buildView(B, null);
  mark('model');
  document.body.dataset.method = M.method;
  document.body.dataset.nodes = B.n;
  document.body.dataset.viewNodes = M.n;
  document.body.dataset.scope = S.scope;
  document.body.dataset.functions = M.funcs.length;
  document.body.dataset.totals = M.totals.join(',');
  S.sortField = COLUMNS[M.method][M.method === 'instrumentation' ? 3 : 2][0];
  renderSummary();
  setupTable(data);
  setupTableClicks();
  setupTreeClicks();
  setupFlame();
  setupScope();
  $('status').hidden = true;
  $('main').hidden = false;
  if (TL || tlError) {
    $('tl-section').hidden = false;
    if (tlError) {
      $('tl-info').textContent = 'The timeline could not be shown: ' + tlError;
      $('tl-info').className = 'status error';
      $('tl-section').dataset.error = tlError;
    } else {
      $('tl-info').textContent = timelineInfo();
      tlLayout(null);
      setupTimeline();
      TV.v0 = 0;
      TV.v1 = TL.endNs;
      drawTimeline();
      mark('timeline drawn');
    }
  }
  if (M.method === 'instrumentation') {
    $('metric').hidden = false;
    for (const label of document.querySelectorAll('#metric .shares'))
      label.hidden = M.fams.length < 3;
    for (const input of document.querySelectorAll('input[name=metric]'))
      input.addEventListener('change', () => setMetric(input.value));
    mark('setup');
    setMetric('ei');
  } else {
    sortKids();
    renderTable();
    renderTree();
    search('');
  }
  mark('shown');
  document.body.dataset.phases = phases.join(', ');
  document.body.dataset.loadMs = Math.round(performance.now());
  document.body.dataset.state = 'ready';
}

const byName = (name) => M.funcs.findIndex((f) => f.name === name);
const stackclock = window.stackclock = {
  get model() { return M; },
  functionRows: () => deriveFunctionRows(M),
  /* the function table's rows (all of them, values as the page has them) */
  tableRows: () => tableRows.map(({ r }) => r),
  /* [value, label] of the thread/process selector's choices */
  scopes: () => [...$('scope').options].map((o) => [o.value, o.textContent]),
  setScope,
  threads: () => B.threads,
  /* the scope of the thread with this tid (and pid), e.g. "t:3" */
  threadScope: (tid, pid, name) => {
    const i = B.threads.findIndex((t) => t.tid === tid && (pid === undefined || t.pid === pid) &&
      (name === undefined || t.name === name));
    return i < 0 ? null : 't:' + i;
  },
  select: (name) => { const r = select(byName(name)); return r ? true : false; },
  search,
  setMetric,
  zoom: (name) => {
    const f = byName(name);
    for (let i = 0; i < M.n; i++) if (M.fn[i] === f) { zoom(i); return true; }
    return false;
  },
  resetZoom: () => zoom(-1),
  timeline: {
    get data() { return TL; },
    /* the lanes shown: [tid, pid, name, calls, OS events, samples, rows] */
    lanes: () => TL.visible.map((k) => { const l = TL.lanes[k]; return [l.tid, l.pid, l.name, l.calls, l.os, l.samples, l.rows]; }),
    view: () => [TV.v0, TV.v1],
    setView: (v0, v1) => { setView(v0, v1); return drawTimeline(); },
    /* one frame drawn now: its time in ms */
    draw: () => drawTimeline(),
    /* every call of a function (by name): [tid, start, duration, depth, flags] in lane and start order */
    calls: (name) => {
      const f = byName(name), out = [];
      TL.lanes.forEach((l) => {
        const list = [];
        for (let r = 0; r < l.rows; r++)
          for (let i = TL.rowOff[l.rowBase + r]; i < TL.rowOff[l.rowBase + r + 1]; i++)
            if (TL.fn[i] === f) list.push([l.tid, TL.start[i], TL.end[i] - TL.start[i], r, TL.flags[i]]);
        list.sort((a, b) => a[1] - b[1]);
        out.push(...list);
      });
      return out;
    },
    /* every call: [tid, start, duration, depth, flags, name, module], by lane, row, start */
    all: () => {
      const out = [];
      TL.lanes.forEach((l) => {
        for (let r = 0; r < l.rows; r++)
          for (let i = TL.rowOff[l.rowBase + r]; i < TL.rowOff[l.rowBase + r + 1]; i++)
            out.push([l.tid, TL.start[i], TL.end[i] - TL.start[i], r, TL.flags[i], M.funcs[TL.fn[i]].name,
              M.funcs[TL.fn[i]].module]);
      });
      return out;
    },
    /* a lane's samples: [time, function name, depth] */
    samples: (tid) => {
      const l = TL.lanes.find((x) => x.tid === tid);
      const out = [];
      if (l) for (let i = l.smpOff; i < l.smpOff + l.samples; i++) out.push([TL.smpTime[i], M.funcs[TL.smpFn[i]].name, TL.smpDepth[i]]);
      return out;
    },
    /* client coordinates of time t in lane tid's band: "os", "ticks" or a
     * depth (the lane scrolled into view), or null */
    point: (tid, band, t) => {
      const v = TL.visible.findIndex((j) => TL.lanes[j].tid === tid);
      if (v < 0) return null;
      const l = TL.lanes[TL.visible[v]], canvas = $('tl'), box = $('tl-box');
      canvas.scrollIntoView({ block: 'start' });
      let y = TL.laneY[v] + TL_HEAD;
      if (band === 'os') y += TL_OS / 2;
      else if (band === 'ticks') y += (l.os ? TL_OS + 1 : 0) + TL_TICKS / 2;
      else y += (l.os ? TL_OS + 1 : 0) + (l.samples ? TL_TICKS + 1 : 0) + band * TL_ROW + TL_ROW / 2 - 1;
      box.scrollTop = Math.max(0, y - 60);
      drawTimeline();
      const r = canvas.getBoundingClientRect();
      return { x: r.left + ((t - TV.v0) / (TV.v1 - TV.v0)) * canvas.clientWidth, y: r.top + TL_AXIS + y - box.scrollTop };
    },
    /* the middle of the k-th call (calls() order) of a function, in view */
    callPoint: (name, k) => {
      const c = stackclock.timeline.calls(name)[k || 0];
      if (!c) return null;
      const mid = Math.max(TV.v0, c[1]) / 2 + Math.min(TV.v1, c[1] + c[2]) / 2;
      return stackclock.timeline.point(c[0], c[3], mid);
    },
    /* the middle of the timeline canvas, in client coordinates */
    middle: () => { const r = $('tl').getBoundingClientRect(); return { x: r.left + r.width / 2, y: r.top + r.height / 2 }; },
  },
  /* Client coordinates of the middle of the widest drawn box of a function. */
  flameBox: (name) => {
    const f = byName(name);
    let best = -1;
    for (let b = 0; b < FL.x.length; b++)
      if (M.fn[FL.node[b]] === f && (best < 0 || FL.w[b] > FL.w[best])) best = b;
    if (best < 0) return null;
    const canvas = $('flame');
    canvas.scrollIntoView({ block: 'start' });
    $('flame-box').scrollTop = Math.max(0, FL.d[best] * ROW_H - 40);
    const r = canvas.getBoundingClientRect();
    return { x: r.left + FL.x[best] + FL.w[best] / 2, y: r.top + FL.d[best] * ROW_H + ROW_H / 2 };
  },
};

main().catch((err) => {
  const status = $('status');
  status.hidden = false;
  status.className = 'status error';
  status.textContent = 'This report could not be shown: ' + (err && err.message ? err.message : String(err));
  document.body.dataset.state = 'error';
  document.body.dataset.error = status.textContent;
});

})();
