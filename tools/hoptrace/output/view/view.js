'use strict';
/* hoptrace view. The data block holds one line per string ("S") and per
 * trace ("T", out_html.c): at load only the traces' headers are parsed
 * (one JSON.parse for all), a trace's spans when it is clicked. Both
 * lists draw only the rows in sight (virtual scrolling), so the page's
 * size does not follow the number of traces. The last line ("A") is the
 * report's aggregate critical path, shown per operation in a view of its
 * own. */
(function () {
const KIND = ['internal', 'client', 'server', 'producer', 'consumer'];
const ROW = 22;
const ST = [], HDR = [], OFF = [];
let AGG = { operations: [] };
const raw = document.getElementById('data').textContent;
const txt = x => (typeof x === 'number' ? ST[x] : x);
const $ = id => document.getElementById(id);
function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}
function fmt(ns) {
  const a = Math.abs(ns);
  if (a >= 1e9) return (ns / 1e9).toFixed(a >= 1e10 ? 1 : 3) + ' s';
  if (a >= 1e6) return (ns / 1e6).toFixed(a >= 1e7 ? 1 : 2) + ' ms';
  if (a >= 1e3) return (ns / 1e3).toFixed(a >= 1e4 ? 1 : 2) + ' \u00b5s';
  return ns + ' ns';
}
function when(us) {
  const d = new Date(Math.floor(us / 1000));
  if (isNaN(d)) return String(us);
  const f = String(((us % 1e6) + 1e6) % 1e6).padStart(6, '0');
  return d.toISOString().slice(0, 19).replace('T', ' ') + '.' + f;
}

/* --- the data -------------------------------------------------------- */
(function parse() {
  const heads = [];
  for (let pos = 0; pos < raw.length;) {
    let nl = raw.indexOf('\n', pos);
    if (nl < 0) nl = raw.length;
    const c = raw.charCodeAt(pos);
    if (c === 83) ST.push(JSON.parse(raw.slice(pos + 1, nl)));
    else if (c === 65) AGG = JSON.parse(raw.slice(pos + 1, nl));
    else if (c === 84) {
      const tab = raw.indexOf('\t', pos);
      heads.push(raw.slice(pos + 1, tab));
      OFF.push(tab + 1, nl);
    }
    pos = nl + 1;
  }
  const all = JSON.parse('[' + heads.join(',') + ']');
  for (const h of all) HDR.push(h);
})();
/* header fields */
const H_ID = 0, H_START = 1, H_DUR = 2, H_N = 3, H_SVC = 4, H_OP = 5, H_FLAGS = 6,
  H_SVCS = 7, H_OPS = 8, H_WHY = 9;

/* The list shows what tells rows apart: a trace id's shortest tail
 * unique over all traces (at least 8 digits; the whole id in the row's
 * tooltip and for the search), and the start's time of day when all
 * traces start on one day (the day in the column's head). */
const tidTail = (() => {
  /* from where random ids rarely collide (16^n >= 50 N^2): one pass */
  let n = 8;
  while (n < 32 && Math.pow(16, n) < 50 * HDR.length * HDR.length) n += 2;
  for (; n < 32; n += 2) {
    const seen = new Set();
    for (const h of HDR) seen.add(h[H_ID].slice(-n));
    if (seen.size === HDR.length) return n;
  }
  return 32;
})();
const shortId = id => (id.length > tidTail ? '\u2026' + id.slice(-tidTail) : id);
const day = us => when(us).slice(0, 10);
const dayNo = us => Math.floor(us / 864e8);
const oneDay = HDR.length > 0 && HDR.every(h => dayNo(h[H_START]) === dayNo(HDR[0][H_START]));
const startText = us => (oneDay ? when(us).slice(11) : when(us));

/* a colour per service, in name order */
const services = new Set(), ops = new Set();
for (const h of HDR) {
  for (const s of h[H_SVCS]) services.add(txt(s));
  for (const o of h[H_OPS]) ops.add(txt(o));
}
const svcList = [...services].sort(), opList = [...ops].sort();
const colour = new Map();
const PALETTE = ['#4e79a7', '#f28e2b', '#59a14f', '#b07aa1', '#76b7b2', '#edc948',
  '#9c755f', '#ff9da7', '#bab0ac', '#86bcb6'];
svcList.forEach((s, i) => colour.set(s, i < PALETTE.length ? PALETTE[i]
  : 'hsl(' + ((i * 137) % 360) + ',55%,55%)'));
const colourOf = s => colour.get(s) || '#888';
/* a span whose status is ERROR (a failed call, a server's own fault) */
const ERR = '#d62728';

/* --- layout ---------------------------------------------------------- */
const app = $('app');
app.innerHTML = '<div id="side"><div id="filters"></div><div id="count"></div>' +
  '<div id="head" class="cols"></div><div id="list" class="vl"><div></div></div></div>' +
  '<div id="main"><div id="tabs"><button id="tab-wf" class="on">waterfall</button>' +
  '<button id="tab-agg">critical path of the operation, all traces</button></div>' +
  '<div id="title"></div><div id="wfview"><div id="legend"></div><div id="axis"></div>' +
  '<div id="waterfall" class="vl"><div></div></div><div id="detail"></div></div>' +
  '<div id="agg" hidden></div></div>';
/* the start and trace id columns as wide as what they show */
app.style.setProperty('--tid', (tidTail + 1) * 8 + 16 + 'px');
app.style.setProperty('--start', (oneDay ? 136 : 216) + 'px');

function input(id, type, placeholder) {
  const e = el('input');
  e.id = id; e.type = type; e.placeholder = placeholder; e.title = placeholder;
  $('filters').appendChild(e);
  return e;
}
function select(id, all, values) {
  const e = el('select');
  e.id = id; e.title = all;
  e.appendChild(el('option', '', all)).value = '';
  for (const v of values) e.appendChild(el('option', '', v)).value = v;
  $('filters').appendChild(e);
  return e;
}
const fId = input('f-id', 'search', 'trace id'), fSvc = select('f-svc', 'any service', svcList),
  fOp = select('f-op', 'any operation', opList), fMin = input('f-min', 'number', 'min ms');
fMin.min = '0'; fMin.step = 'any';
const fErr = el('label');
fErr.innerHTML = '<input type="checkbox" id="f-err"> errors only';
$('filters').appendChild(fErr);

/* --- virtual list: draws rows [first, last) of n --------------------- */
function vlist(box, draw) {
  const inner = box.firstChild;
  const v = { n: 0, drawn: -1, redraw() {
    inner.style.height = v.n * ROW + 'px';
    const first = Math.max(0, Math.floor(box.scrollTop / ROW) - 5);
    const last = Math.min(v.n, first + Math.ceil((box.clientHeight || 600) / ROW) + 10);
    inner.textContent = '';
    for (let i = first; i < last; i++) {
      const r = draw(i);
      r.style.top = i * ROW + 'px';
      inner.appendChild(r);
    }
  } };
  box.addEventListener('scroll', () => v.redraw());
  window.addEventListener('resize', () => v.redraw());
  return v;
}

/* --- trace list: filter, sort ----------------------------------------- */
const COLS = [[oneDay ? 'start ' + day(HDR[0][H_START]) : 'start', t => HDR[t][H_START]], ['trace id', t => HDR[t][H_ID]],
  ['root', t => txt(HDR[t][H_SVC]) + ' ' + txt(HDR[t][H_OP])],
  ['spans', t => HDR[t][H_N]], ['duration', t => HDR[t][H_DUR]]];
let order = HDR.map((_, i) => i), shown = order, sortCol = 0, sortDir = 1, selected = -1;
COLS.forEach(([name], k) => {
  const h = el('div', '', name);
  h.onclick = () => { sortDir = sortCol === k ? -sortDir : 1; sortCol = k; sortAndFilter(); };
  $('head').appendChild(h);
});
function sortAndFilter() {
  const key = COLS[sortCol][1];
  const keys = HDR.map((_, i) => key(i));
  order = HDR.map((_, i) => i).sort((a, b) =>
    (keys[a] < keys[b] ? -sortDir : keys[a] > keys[b] ? sortDir : a - b));
  [...$('head').children].forEach((h, k) => {
    h.className = k === sortCol ? (sortDir > 0 ? 'asc' : 'desc') : '';
  });
  filter();
}
function filter() {
  const id = fId.value.trim().toLowerCase(), svc = fSvc.value, op = fOp.value;
  const min = parseFloat(fMin.value) * 1e6, err = $('f-err').checked;
  const has = (list, name) => list.some(x => txt(x) === name);
  shown = order.filter(i => {
    const h = HDR[i];
    return (!id || h[H_ID].includes(id)) && (!svc || has(h[H_SVCS], svc)) &&
      (!op || has(h[H_OPS], op)) && (!(min > 0) || h[H_DUR] >= min) &&
      (!err || (h[H_FLAGS] & 1));
  });
  list.n = shown.length;
  $('count').textContent = shown.length + ' of ' + HDR.length + ' traces';
  /* the waterfall and its details follow: a trace filtered out leaves */
  if (selected >= 0 && !shown.includes(selected)) {
    if (shown.length) show(shown[0]);
    else unshow();
  }
  list.redraw();
}
const list = vlist($('list'), k => {
  const i = shown[k], h = HDR[i];
  const r = el('div', 'trace-row cols' + (i === selected ? ' sel' : ''));
  r.dataset.trace = i;
  r.appendChild(el('div', 'start', startText(h[H_START])));
  r.appendChild(el('div', 'tid', shortId(h[H_ID])));
  r.appendChild(el('div', h[H_FLAGS] & 3 ? 'bad' : '', (h[H_FLAGS] & 2 ? '[incomplete] ' : '') +
    txt(h[H_SVC]) + ' ' + txt(h[H_OP])));
  r.appendChild(el('div', '', String(h[H_N])));
  r.appendChild(el('div', '', fmt(h[H_DUR])));
  r.title = h[H_ID] + '\n' + when(h[H_START]) + (h[H_WHY] ? '\nincomplete: ' + h[H_WHY] : '') +
    (h[H_FLAGS] & 1 ? '\nhas errors' : '');
  r.onclick = () => show(i);
  return r;
});
for (const f of [fId, fSvc, fOp, fMin, $('f-err')]) f.addEventListener('input', filter);

/* --- one trace ------------------------------------------------------- */
let spans = [], rows = [], total = 1, collapsed = new Set(), pick = -1;
function load(i) {
  const a = JSON.parse(raw.slice(OFF[2 * i], OFF[2 * i + 1]));
  const out = a.map((s, k) => ({ k, id: s[0], parent: s[1], svc: txt(s[2]), op: txt(s[3]),
    kind: s[4], status: s[5], start: s[6], dur: s[7], ann: s[8], tags: s[9],
    msg: s.length > 10 ? txt(s[10]) : '', err: s.length > 11 && s[11] !== null ? txt(s[11]) : '',
    kids: [], depth: 0, crit: false, peer: '' }));
  const roots = [];
  for (const s of out) {
    const p = typeof s.parent === 'number' && s.parent >= 0 && s.parent < s.k ? out[s.parent] : null;
    if (p) { p.kids.push(s); s.depth = p.depth + 1; } else roots.push(s);
  }
  for (const s of out) if (s.kind === 1 || s.kind === 3) s.peer = peerOf(s);
  return { out, roots };
}
/* The service a client (or producer) span called: its peer service tag,
 * else the service of its server (or consumer) child. */
const PEER_KEYS = ['peer.service', 'hoptrace.peer.service', 'server.service'];
function peerOf(s) {
  for (let j = 0; j + 1 < s.tags.length; j += 2)
    if (PEER_KEYS.includes(txt(s.tags[j]))) return txt(s.tags[j + 1]);
  const k = s.kids.find(x => x.kind === s.kind + 1);
  return k ? k.svc : '';
}
const labelOf = s => s.svc + ' ' + s.op + (s.peer ? ' \u2192 ' + s.peer : '');
function endOf(s) { return s.dur >= 0 ? s.start + s.dur : total; }
/* The critical path: from a span's end, the child that finished last
 * before that point, then the one before that child's start, and so on
 * (Jaeger's definition). A worklist, not recursion: a trace may be deep. */
function critical(roots) {
  if (!roots.length) return;
  const work = [roots.reduce((a, b) => (endOf(b) > endOf(a) ? b : a))];
  while (work.length) {
    const s = work.pop();
    s.crit = true;
    let t = endOf(s);
    const kids = s.kids.slice().sort((a, b) => endOf(b) - endOf(a));
    for (const k of kids) {
      if (Math.min(endOf(k), endOf(s)) <= t && endOf(k) > s.start) {
        work.push(k);
        t = k.start;
      }
    }
  }
}
function visible(roots) {
  const out = [], stack = roots.slice().sort((a, b) => b.start - a.start);
  while (stack.length) {
    const s = stack.pop();
    out.push(s);
    if (!collapsed.has(s.k)) /* a loop: spreading 100,000 kids overflows the stack */
      for (const k of s.kids.slice().sort((a, b) => b.start - a.start)) stack.push(k);
  }
  return out;
}
function niceStep(x) {
  const p = Math.pow(10, Math.floor(Math.log10(x))), m = x / p;
  return p * (m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : 10);
}
/* Ticks in one unit, the step's: "0 \u00b5s" too. A label near the end
 * hangs left of its line, so the last is not cut at the edge. */
function axis() {
  const a = $('axis');
  a.textContent = '';
  const step = niceStep(total / 8);
  const [div, unit] = step >= 1e9 ? [1e9, 's'] : step >= 1e6 ? [1e6, 'ms']
    : step >= 1e3 ? [1e3, '\u00b5s'] : [1, 'ns'];
  const dec = Math.max(0, -Math.floor(Math.log10(step / div) + 1e-9));
  for (let t = 0; t <= total && step > 0; t += step) {
    const k = el('div', 'tick', (t / div).toFixed(dec) + ' ' + unit);
    const at = Math.min(100, (100 * t) / total);
    if (at > 90) { k.className = 'tick end'; k.style.right = 100 - at + '%'; }
    else k.style.left = at + '%';
    a.appendChild(k);
  }
}
function legend(list) {
  const g = $('legend');
  g.textContent = '';
  for (const s of [...new Set(list.map(x => x.svc))].sort()) {
    const e = el('span', 'svc');
    const sw = el('span', 'sw');
    sw.style.background = colourOf(s);
    e.appendChild(sw);
    e.appendChild(document.createTextNode(s));
    g.appendChild(e);
  }
  const e = el('span', 'errkey');
  const sw = el('span', 'sw');
  sw.style.background = ERR;
  e.appendChild(sw);
  e.appendChild(document.createTextNode('failed (ERROR: refused, timed out, reset, error ' +
    'reply; its error type in the details)'));
  g.appendChild(e);
  /* kind and critical path are two channels: fill and underline */
  const key = (cls, swCls, text) => {
    const k = el('span', cls);
    k.appendChild(el('span', 'sw ' + swCls));
    k.appendChild(document.createTextNode(text));
    g.appendChild(k);
  };
  key('kindkey server', 'k2', 'solid: server (or internal)');
  key('kindkey client', 'k1', 'striped: client, \u2192 the service it called');
  key('critkey', 'critsw', 'black underline: critical path (either kind)');
  g.appendChild(el('span', '', 'ticks: annotations'));
}
let cur = null;
function unshow() {
  selected = -1;
  cur = null;
  spans = [];
  $('title').textContent = 'no trace matches the filters';
  $('title').className = '';
  $('legend').textContent = '';
  $('axis').textContent = '';
  spanRows([]);
  $('detail').textContent = '';
  aggView();
}
function show(i) {
  selected = i;
  list.redraw();
  const h = HDR[i], t = load(i);
  cur = h;
  spans = t.out;
  total = Math.max(1, h[H_DUR]);
  for (const s of spans) total = Math.max(total, s.dur >= 0 ? s.start + s.dur : s.start);
  collapsed = new Set();
  pick = -1;
  critical(t.roots);
  $('title').textContent = 'trace ' + h[H_ID] + '  ' + when(h[H_START]) + '  ' + fmt(h[H_DUR]) +
    '  ' + h[H_N] + ' spans' + (h[H_WHY] ? '  [incomplete: ' + h[H_WHY] + ']' : '');
  if (h[H_WHY]) $('title').className = 'bad'; else $('title').className = '';
  legend(spans);
  axis();
  spanRows(t.roots);
  $('detail').textContent = '';
  $('waterfall').scrollTop = 0;
  aggView();
}
let trRoots = [];
function spanRows(roots) {
  trRoots = roots;
  rows = visible(roots);
  wf.n = rows.length;
  wf.redraw();
}
function describe(s) {
  const kv = [['service', s.svc], ['operation', s.op], ['kind', KIND[s.kind] || String(s.kind)],
    ...(s.peer ? [['called', s.peer]] : []),
    ['span id', s.id], ['parent', typeof s.parent === 'number'
      ? (s.parent >= 0 ? spans[s.parent].id : '-') : s.parent + ' (never arrived)'],
    ['start', '+' + fmt(s.start) + '  (' + when(cur[H_START] + Math.floor(s.start / 1000)) + ')'],
    ['duration', s.dur >= 0 ? fmt(s.dur) : 'unfinished'],
    ['status', !s.status ? '0 (ok)' : s.status + (s.err ? ' (ERROR)'
      : ' (UNSET: the caller\'s error, answered)')]];
  if (s.err) kv.push(['error type', s.err]);
  if (s.status) kv.push([s.err ? 'error' : 'message', s.msg || '']);
  if (s.crit) kv.push(['critical path', 'yes']);
  for (let j = 0; j + 1 < s.ann.length; j += 2)
    kv.push(['@ +' + fmt(s.ann[j]), txt(s.ann[j + 1])]);
  for (let j = 0; j + 1 < s.tags.length; j += 2) kv.push([txt(s.tags[j]), txt(s.tags[j + 1])]);
  return kv;
}
function detail(s) {
  const tb = el('table');
  for (const [k, v] of describe(s)) {
    const r = el('tr');
    r.appendChild(el('td', '', k));
    r.appendChild(el('td', '', v));
    tb.appendChild(r);
  }
  $('detail').textContent = '';
  $('detail').appendChild(tb);
}
const wf = vlist($('waterfall'), k => {
  const s = rows[k];
  const r = el('div', 'span-row' + (s.err ? ' err' : '') + (s.crit ? ' crit' : '') +
    (s.k === pick ? ' sel' : ''));
  r.dataset.span = s.k;
  r.dataset.kind = s.kind;
  r.dataset.svc = s.svc;
  const l = el('div', 'label');
  l.style.paddingLeft = Math.min(s.depth, 40) * 12 + 'px';
  const tog = l.appendChild(el('span', 'tog', s.kids.length ? (collapsed.has(s.k) ? '\u25b8' : '\u25be') : ''));
  if (s.kids.length)
    tog.onclick = e => {
      e.stopPropagation();
      if (collapsed.has(s.k)) collapsed.delete(s.k); else collapsed.add(s.k);
      spanRows(trRoots);
    };
  l.appendChild(document.createTextNode(labelOf(s)));
  r.appendChild(l);
  const lane = el('div', 'lane'), b = el('div', 'bar k' + s.kind);
  const left = (100 * s.start) / total, width = (100 * Math.max(endOf(s) - s.start, 0)) / total;
  b.style.left = left + '%';
  b.style.width = width + '%';
  b.style.backgroundColor = s.err ? ERR : colourOf(s.svc); /* the kind's stripes stay */
  lane.appendChild(b);
  const d = el('div', 'dur', s.dur >= 0 ? fmt(s.dur) : 'unfinished');
  if (left + width > 80) { d.style.right = (100 - left) + '%'; d.style.paddingRight = '3px'; }
  else { d.style.left = (left + width) + '%'; d.style.paddingLeft = '3px'; }
  lane.appendChild(d);
  for (let j = 0; j + 1 < s.ann.length; j += 2) {
    const m = el('div', 'ann');
    m.style.left = (100 * s.ann[j]) / total + '%';
    m.title = txt(s.ann[j + 1]) + ' @+' + fmt(s.ann[j]);
    lane.appendChild(m);
  }
  r.appendChild(lane);
  r.title = labelOf(s) + ' (' + (KIND[s.kind] || s.kind) + ')  ' +
    (s.dur >= 0 ? fmt(s.dur) : 'unfinished') + (s.err ? '  failed: ' + s.err
      : s.status ? '  status ' + s.status : '');
  r.onclick = () => { pick = s.k; detail(s); wf.redraw(); };
  return r;
});

/* --- the aggregate critical path of one operation ------------------- */
let aggOp = '';
const pct = x => (100 * x).toFixed(1) + ' %';
function aggView() {
  const box = $('agg');
  if (box.hidden) return;
  box.textContent = '';
  const names = AGG.operations.map(o => o.operation);
  if (cur && names.includes(txt(cur[H_OP]))) aggOp = txt(cur[H_OP]);
  else if (!names.includes(aggOp)) aggOp = names.length ? names[0] : '';
  const sel = box.appendChild(el('select'));
  sel.id = 'agg-op';
  for (const n of names) sel.appendChild(el('option', '', n)).value = n;
  sel.value = aggOp;
  sel.onchange = () => { aggOp = sel.value; aggView(); };
  const o = AGG.operations.find(x => x.operation === aggOp);
  if (AGG.left_out_bytes) {
    box.appendChild(el('p', 'aggnote', 'the aggregate critical path (' + AGG.left_out_bytes +
      ' bytes) was left out of this page: it holds at most --max-page-mib; hoptrace report has it'));
    return;
  }
  if (!o) { box.appendChild(el('p', '', 'no trace with a root of non-zero duration')); return; }
  const mean = (ns, n) => fmt(n > 0 ? ns / n : 0);
  const t = o.slowest_1pct;
  box.appendChild(el('p', 'agghead', 'operation ' + o.operation + ': ' + o.traces + ' traces, mean ' +
    mean(o.end_to_end_ns, o.estimated_traces) + '; slowest 1 %: from ' + fmt(t.from_ns) +
    ', mean ' + mean(t.end_to_end_ns, t.estimated_traces) + '. The share of end-to-end time ' +
    'each (service, operation, phase) holds on the critical path, as the report says it ' +
    '(weighted by 1/p).'));
  const tb = box.appendChild(el('table'));
  const head = tb.appendChild(el('tr'));
  for (const c of ['all', 'slowest 1 %', '', 'service operation: phase']) head.appendChild(el('th', '', c));
  const row = (cls, a, b, label) => {
    const r = tb.appendChild(el('tr', cls));
    r.appendChild(el('td', 'num', pct(a)));
    r.appendChild(el('td', 'num', pct(b)));
    const bar = r.appendChild(el('td', 'aggbar')).appendChild(el('div'));
    bar.style.width = Math.min(100, 100 * b) + '%';
    r.appendChild(el('td', 'lab', label));
  };
  /* as the report: rows under 0.5 % in both columns in one line */
  let small = 0, sa = 0, sb = 0, ta = 0, tb2 = 0;
  for (const x of o.rows) {
    ta += x.share_all; tb2 += x.share_slowest_1pct;
    if (x.share_all < 0.005 && x.share_slowest_1pct < 0.005) {
      small++; sa += x.share_all; sb += x.share_slowest_1pct;
      continue;
    }
    row('aggrow', x.share_all, x.share_slowest_1pct, x.service + (x.server ? ' \u2192 ' + x.server : '') +
      ' ' + x.operation + ': ' + x.phase);
  }
  if (small) row('aggsmall', sa, sb, '(' + small + ' more, under 0.5 % each)');
  row('aggtotal', ta, tb2, 'total');
  const notes = [];
  if (AGG.clamped_children) notes.push(AGG.clamped_children + ' child span(s) outside their ' +
    'parent (clocks of two hosts, or a detached child): clamped to it, ' +
    fmt(AGG.clamped_ns) + ' cut off and left out');
  if (AGG.too_deep) notes.push(AGG.too_deep + ' span(s) too deep: their children\'s time counted as their own');
  if (AGG.traces_without_root) notes.push(AGG.traces_without_root + ' trace(s) without a root of ' +
    'non-zero duration: not counted');
  if (AGG.samples_not_kept) notes.push(AGG.samples_not_kept + ' sample(s) not kept: shares may not add up');
  for (const n of notes) box.appendChild(el('p', 'aggnote', n));
}
function tab(agg) {
  $('tab-agg').className = agg ? 'on' : '';
  $('tab-wf').className = agg ? '' : 'on';
  $('wfview').hidden = agg;
  $('agg').hidden = !agg;
  if (agg) aggView(); else wf.redraw();
}
$('tab-wf').onclick = () => tab(false);
$('tab-agg').onclick = () => tab(true);

sortAndFilter();
if (HDR.length) show(shown[0]);
else $('title').textContent = 'no traces';
document.body.dataset.ready = '1';
})();
