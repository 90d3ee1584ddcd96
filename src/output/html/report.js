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
 *    "tree":    [...]}   SPEC section 6 tree nodes (report --tree --format json)
 *
 * A tree node is {"function", "module", "children": [node...], values...},
 * or, to keep large profiles small, {"row": i, ...} naming the function of
 * rows[i] instead of repeating its name and module.  Values read, per method:
 *   instrumentation  elapsed_exclusive_ns, application_exclusive_ns, calls
 *                    (elapsed_/application_inclusive_ns: optional, checked)
 *   sampling         exclusive_samples (inclusive_samples: optional, checked)
 * Everything else in a node (percentages, "hot", min/max/mean) may be left
 * out: the viewer derives inclusive values (sums over the subtree), the hot
 * path and the percentages (of the session totals elapsed_inclusive_ns /
 * application_inclusive_ns, or samples; sums of the roots when absent)
 * exactly as SPEC section 6 defines them.  A function is the pair
 * (function, module).
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
/* The instrumentation selector: [family, table column].  The family sets
 * the widths of the flame graph, the order of the tree and its hot path;
 * the column sorts the table. */
const METRICS = {
  ei: [0, 'elapsed_inclusive_ns'], ee: [0, 'elapsed_exclusive_ns'],
  ai: [1, 'application_inclusive_ns'], ae: [1, 'application_exclusive_ns'],
};
/* Table columns in display order: [field, heading, kind]. */
const COLUMNS = {
  instrumentation: [
    ['function', 'Function', 'name'], ['module', 'Module', 'module'], ['calls', 'Calls', 'count'],
    ['elapsed_inclusive_ns', 'EI', 'time'], ['elapsed_inclusive_pct', 'EI %', 'pct'],
    ['elapsed_exclusive_ns', 'EE', 'time'], ['elapsed_exclusive_pct', 'EE %', 'pct'],
    ['application_inclusive_ns', 'AI', 'time'], ['application_inclusive_pct', 'AI %', 'pct'],
    ['application_exclusive_ns', 'AE', 'time'], ['application_exclusive_pct', 'AE %', 'pct'],
    ['min_elapsed_inclusive_ns', 'min EI/call', 'time'], ['mean_elapsed_inclusive_ns', 'mean EI/call', 'time'],
    ['max_elapsed_inclusive_ns', 'max EI/call', 'time'], ['min_elapsed_exclusive_ns', 'min EE/call', 'time'],
    ['mean_elapsed_exclusive_ns', 'mean EE/call', 'time'], ['max_elapsed_exclusive_ns', 'max EE/call', 'time'],
  ],
  sampling: [
    ['function', 'Function', 'name'], ['module', 'Module', 'module'],
    ['inclusive_samples', 'Inclusive', 'count'], ['inclusive_pct', 'Incl %', 'pct'],
    ['exclusive_samples', 'Exclusive', 'count'], ['exclusive_pct', 'Excl %', 'pct'],
  ],
};
const SUMMARY_LABELS = {
  method: 'method', command: 'command', processes: 'processes', threads: 'threads',
  duration_ns: 'duration', elapsed_inclusive_ns: 'session EI', application_inclusive_ns: 'session AI',
  samples: 'samples', frequency_hz: 'frequency (Hz)', lost_samples: 'lost samples',
  root_reached_pct: 'stacks reaching the root (%)', os_events: 'OS events', repairs: 'repairs',
  open_frames: 'open frames', lost_events: 'lost events',
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

function fmtTime(ns) {
  const a = Math.abs(ns);
  const units = [[1e9, 's'], [1e6, 'ms'], [1e3, '\u00b5s']];
  for (const [u, s] of units)
    if (a >= u) return (ns / u).toPrecision(3) + ' ' + s;
  return Math.round(ns) + ' ns';
}
const fmtCount = (v) => Math.round(v).toLocaleString('en-US');
const fmtPct = (p) => (isFinite(p) ? p.toFixed(Math.abs(p) < 10 ? 2 : 1) + ' %' : '-');
function fmtKind(kind, v) {
  if (typeof v !== 'number') return v === undefined || v === null ? '' : String(v);
  if (kind === 'time') return fmtTime(v);
  if (kind === 'pct') return fmtPct(v);
  if (kind === 'count') return fmtCount(v);
  return String(v);
}

/* ---- the model: the tree as preorder arrays ----------------------------- */

let M = null;            /* the model, built once */
const S = {              /* what the user chose */
  fam: 0,
  sortField: null, sortAsc: false, tableShown: TABLE_CHUNK,
  zoom: -1, search: '', selected: -1,
};

function buildModel(data) {
  const session = data && data.session;
  if (!session || !FAMS[session.method])
    throw new Error('the embedded profile has no session.method "instrumentation" or "sampling"');
  const method = session.method, fams = FAMS[method], nf = fams.length;
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

  /* Preorder walk with an explicit stack (recursion depth is the profile's). */
  const parent = [], depth = [], fn = [], calls = [];
  const ex = fams.map(() => []), given = fams.map(() => []);
  const roots = Array.isArray(data.tree) ? data.tree : [];
  const stack = [];
  for (let r = roots.length - 1; r >= 0; r--) stack.push(roots[r], -1);
  while (stack.length) {
    const p = stack.pop(), o = stack.pop();
    const i = parent.length;
    parent.push(p);
    depth.push(p < 0 ? 0 : depth[p] + 1);
    fn.push(funcOf(o));
    calls.push(num(o.calls));
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
  const m = {
    method, session, fams, funcs, funcIds, intern, n,
    parent: Int32Array.from(parent), depth: Int32Array.from(depth), fn: Int32Array.from(fn),
    calls: Float64Array.from(calls), ex: ex.map((a) => Float64Array.from(a)),
    inc: [], size: new Int32Array(n).fill(1), kids: new Array(n), roots: [],
    mismatches: 0, totals: [],
  };
  for (let i = 0; i < n; i++) m.kids[i] = [];
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
    const g = given[f];
    for (let k = 0; k < g.length; k += 2)
      if (Math.abs(g[k + 1] - inc[g[k]]) > 0.5) m.mismatches++;
    m.inc.push(inc);
    let rootSum = 0;
    for (const r of m.roots) rootSum += inc[r];
    const t = session[fams[f].total];
    m.totals.push(typeof t === 'number' && t > 0 ? t : rootSum);
  }
  return m;
}

/*
 * Per function: exclusive values and calls summed over its nodes; inclusive
 * values over its outermost occurrences only (SPEC 2 and 3: a function is
 * charged once per stack).
 */
function deriveFunctionRows(m) {
  const nf = m.fams.length, nfun = m.funcs.length;
  const ex = m.fams.map(() => new Float64Array(nfun));
  const inc = m.fams.map(() => new Float64Array(nfun));
  const calls = new Float64Array(nfun);
  const onPath = new Int32Array(nfun), path = [];
  for (let i = 0; i < m.n; i++) {
    const d = m.depth[i], f = m.fn[i];
    while (path.length > d) onPath[path.pop()]--;
    const outermost = onPath[f] === 0;
    onPath[f]++;
    path.push(f);
    calls[f] += m.calls[i];
    for (let k = 0; k < nf; k++) {
      ex[k][f] += m.ex[k][i];
      if (outermost) inc[k][f] += m.inc[k][i];
    }
  }
  const rows = [];
  for (let f = 0; f < nfun; f++) {
    const row = { function: m.funcs[f].name, module: m.funcs[f].module };
    if (m.method === 'instrumentation') row.calls = calls[f];
    m.fams.forEach((fam, k) => {
      row[fam.inc] = inc[k][f];
      row[fam.ex] = ex[k][f];
      const pre = fam.inc.replace(/_ns$|_samples$/, '');
      const preEx = fam.ex.replace(/_ns$|_samples$/, '');
      row[pre + '_pct'] = pct(inc[k][f], k, m);
      row[preEx + '_pct'] = pct(ex[k][f], k, m);
    });
    rows.push(row);
  }
  return rows;
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

function renderSummary() {
  const dl = $('summary');
  dl.textContent = '';
  const add = (label, value, cls) => {
    dl.appendChild(el('dt', null, label));
    dl.appendChild(el('dd', cls, value));
  };
  for (const [key, v] of Object.entries(M.session)) {
    let text;
    if (Array.isArray(v)) text = v.join(' ');
    else if (v && typeof v === 'object') text = JSON.stringify(v);
    else if (typeof v === 'number' && /_ns$/.test(key)) text = fmtTime(v) + '  (' + fmtCount(v) + ' ns)';
    else text = String(v);
    add(SUMMARY_LABELS[key] || key, text);
  }
  add('call-tree nodes', fmtCount(M.n));
  add('functions', fmtCount(M.funcs.length));
  if (M.mismatches)
    add('warning', M.mismatches + ' tree nodes whose inclusive value differs from the sum over their subtree', 'warn');
}

/* ---- the function table ------------------------------------------------- */

let tableRows = null, tableCols = null;

function setupTable(data) {
  const given = Array.isArray(data.rows) && data.rows.length ? data.rows : null;
  tableRows = (given || deriveFunctionRows(M)).map((r) => ({ r, fid: M.intern(r.function, r.module) }));
  const known = COLUMNS[M.method];
  const present = new Set();
  for (const { r } of tableRows) for (const k of Object.keys(r)) present.add(k);
  tableCols = known.filter(([f]) => present.has(f));
  const knownSet = new Set(known.map(([f]) => f));
  for (const k of present) {
    if (knownSet.has(k)) continue;
    const sample = tableRows.find(({ r }) => r[k] !== undefined).r[k];
    if (sample === null || typeof sample === 'object') continue;
    tableCols.push([k, k, typeof sample === 'number' ? (/_ns$/.test(k) ? 'time' : 'count') : 'name']);
  }
  const tr = el('tr');
  for (const [field, label, kind] of tableCols) {
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
  $('functions').tHead.appendChild(tr);
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
        const td = el('td', 'text name', r[f]);
        td.title = r[f];
        tr.appendChild(td);
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
  const name = el('span', 'tn-name', func.name);
  name.title = func.name;
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
  head.appendChild(el('th', 'text', 'Function'));
  head.appendChild(el('th', 'text', 'Module'));
  M.fams.forEach((fam) => {
    head.appendChild(el('th', null, instr ? fam.name : 'samples'));
    head.appendChild(el('th', null, '%'));
  });
  if (instr) head.appendChild(el('th', null, 'calls'));
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
  return r;
}

/* ---- the value selector ------------------------------------------------- */

function setMetric(name) {
  const m = METRICS[name];
  if (!m || M.method !== 'instrumentation') return;
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
  M = buildModel(data);
  mark('model');
  document.body.dataset.method = M.method;
  document.body.dataset.nodes = M.n;
  document.body.dataset.functions = M.funcs.length;
  document.body.dataset.totals = M.totals.join(',');
  S.sortField = COLUMNS[M.method][M.method === 'instrumentation' ? 3 : 2][0];
  renderSummary();
  setupTable(data);
  setupTableClicks();
  setupTreeClicks();
  setupFlame();
  $('status').hidden = true;
  $('main').hidden = false;
  if (M.method === 'instrumentation') {
    $('metric').hidden = false;
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
window.stackclock = {
  get model() { return M; },
  functionRows: () => deriveFunctionRows(M),
  select: (name) => { const r = select(byName(name)); return r ? true : false; },
  search,
  setMetric,
  zoom: (name) => {
    const f = byName(name);
    for (let i = 0; i < M.n; i++) if (M.fn[i] === f) { zoom(i); return true; }
    return false;
  },
  resetZoom: () => zoom(-1),
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
