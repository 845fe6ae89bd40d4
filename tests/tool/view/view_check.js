// Drives Debian's chromium (playwright-core) over a `hoptrace view` page.
//   node view_check.js check PAGE EXPECT DURATIONS SCREENSHOT REPORT
//     behaviour: every trace listed (start and trace id readable and
//     told apart), filters (trace id, service, operation, minimum
//     duration, errors only), sort, the clicked trace's span rows, tags in
//     the details, axis ticks with units, kind and critical path told
//     apart, client spans naming the server called, the critical path,
//     collapsing, the waterfall following the filters, the aggregate
//     critical path view against the report's, no network request, no
//     script error. EXPECT: view_workload's "TRACE OP SPANS ERROR" lines;
//     DURATIONS: "TRACE NS" from the OTLP export; REPORT: `hoptrace report
//     --format json`. A second screenshot: critical-path.png beside the
//     first.
//   node view_check.js empty PAGE
//     a page of no trace: drawn, says so, no error.
//   node view_check.js bench PAGE
//     prints one JSON line: load (ms until the list is drawn and the page
//     answers), click (ms from a click to the next frame, 5 traces),
//     DOM nodes, JS heap; fails only on a hang (10x the goals).
'use strict';
const fs = require('fs');
const path = require('path');
const { chromium } = require('playwright-core');

const [mode, page_path, ...rest] = process.argv.slice(2);
const url = 'file://' + path.resolve(page_path);

function fail(msg) {
  console.error('view_check: FAIL: ' + msg);
  process.exit(1);
}
// HT_VIEW_KEEP_GOING=1: a failed expectation is printed and the check
// goes on (to see every assertion an older page fails), exit 1 at the end.
const keepGoing = process.env.HT_VIEW_KEEP_GOING === '1';
let failures = 0;
process.on('exit', () => { if (failures) process.exitCode = 1; });
function expectEq(got, want, what) {
  if (got !== want) {
    const msg = `${what}: got ${JSON.stringify(got)}, want ${JSON.stringify(want)}`;
    if (!keepGoing) fail(msg);
    failures++;
    console.error('view_check: FAIL: ' + msg);
    return;
  }
  console.log(`ok ${what}: ${JSON.stringify(got)}`);
}

async function open(browser) {
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  const requests = [], errors = [];
  // every request but the page itself is refused and counted
  await page.route('**/*', route => {
    if (route.request().url() === url) return route.continue();
    requests.push(route.request().url());
    return route.abort();
  });
  page.on('pageerror', e => errors.push(String(e)));
  page.on('console', m => { if (m.type() === 'error') errors.push(m.text()); });
  const t0 = Date.now();
  await page.goto(url, { waitUntil: 'load', timeout: 120000 });
  await page.waitForFunction(() => document.body.dataset.ready === '1', null, { timeout: 120000 });
  await page.evaluate(() => new Promise(r => requestAnimationFrame(() => setTimeout(r, 0))));
  return { page, requests, errors, loadMs: Date.now() - t0 };
}

const count = page => page.$eval('#count', e => e.textContent);
const spanRows = page => page.$$eval('#waterfall .span-row', r => r.length);

async function clickMs(page, k) {
  return page.evaluate(k => {
    const rows = document.querySelectorAll('#list .trace-row');
    const row = rows[Math.min(k, rows.length - 1)];
    const t0 = performance.now();
    row.click();
    return new Promise(r => requestAnimationFrame(() => setTimeout(() => r(performance.now() - t0), 0)));
  }, k);
}

// The list's start and trace id cells: nothing cut off, the ids shown
// unique and each the tail of the row's whole id.
async function listCells(page) {
  const cells = await page.$$eval('#list .trace-row', rows => rows.map(r => {
    const [start, tid] = [r.querySelector('.start'), r.querySelector('.tid')];
    return { id: r.title.split('\n')[0], start: start && start.textContent,
      tid: tid && tid.textContent,
      cut: !start || !tid || start.scrollWidth > start.clientWidth || tid.scrollWidth > tid.clientWidth };
  }));
  expectEq(cells.length > 5, true, 'list rows drawn');
  expectEq(cells.filter(c => c.cut).length, 0, 'start and trace id cells not cut off: ' + JSON.stringify(cells.filter(c => c.cut)[0]));
  expectEq(cells.every(c => c.id.endsWith(c.tid.replace('\u2026', ''))), true, 'trace id tails');
  expectEq(new Set(cells.map(c => c.tid)).size, cells.length, 'trace id tails unique');
  expectEq(cells.every(c => /\d\d:\d\d:\d\d\.\d{6}$/.test(c.start)), true, 'start to the microsecond');
}

// Ticks: each with a unit, one unit for all, none past the axis' edge.
async function ticks(page) {
  const t = await page.$eval('#axis', a => {
    const box = a.getBoundingClientRect();
    return [...a.querySelectorAll('.tick')].map(k => {
      const r = k.getBoundingClientRect();
      return { text: k.textContent, inside: r.left >= box.left - 1 && r.right <= box.right + 1 };
    });
  });
  expectEq(t.length >= 3, true, 'time axis ticks');
  expectEq(t.every(x => /^\d+(\.\d+)? (ns|\u00b5s|ms|s)$/.test(x.text)), true,
    'a unit on every tick: ' + t.map(x => x.text).join(', '));
  expectEq(new Set(t.map(x => x.text.split(' ')[1])).size, 1, 'one unit on the axis');
  expectEq(t.every(x => x.inside), true, 'ticks inside the axis');
}

// Kind is the fill (client striped), the critical path the underline: a
// critical client span is not drawn as a critical server span; the
// legend's swatches are the bars' fills. Client labels name the server.
async function kinds(page) {
  const bars = await page.$$eval('#waterfall .span-row', rows => rows.map((r, k) => {
    const b = getComputedStyle(r.querySelector('.bar'));
    const next = rows[k + 1];
    return { kind: r.dataset.kind, crit: r.classList.contains('crit'), err: r.classList.contains('err'),
      image: b.backgroundImage, shadow: b.boxShadow, opacity: b.opacity,
      label: r.querySelector('.label').textContent, nextSvc: next ? next.dataset.svc : '' };
  }));
  const cc = bars.find(b => b.kind === '1' && b.crit && !b.err);
  const sc = bars.find(b => b.kind === '2' && b.crit && !b.err);
  const cn = bars.find(b => b.kind === '1' && !b.crit && !b.err);
  const clients = bars.filter(b => b.kind === '1' || /\u2192/.test(b.label));
  expectEq(clients.length > 0 && clients.every(b => b.label.endsWith('\u2192 ' + b.nextSvc)), true,
    'client spans name the server called: ' + clients.map(b => b.label).join(', '));
  expectEq(Boolean(cc && sc), true, 'a critical client and a critical server span');
  if (!cc || !sc) return;
  expectEq(cc.image.includes('gradient') && sc.image === 'none', true, 'client striped, server solid');
  expectEq(cc.shadow === sc.shadow && cc.shadow !== 'none', true, 'both underlined as critical');
  expectEq(cc.opacity, sc.opacity, 'critical-ness does not change the fill');
  if (cn) expectEq(cn.shadow === 'none' && cn.image === cc.image, true, 'a client off the path: striped, no underline');
  const key = await page.$eval('#legend', g => {
    const sw = sel => { const e = g.querySelector(sel); return e && getComputedStyle(e); };
    const c = sw('.kindkey.client .sw'), s = sw('.kindkey.server .sw'), k = sw('.critkey .sw');
    return { client: c && c.backgroundImage, server: s && s.backgroundImage, crit: k && k.boxShadow };
  });
  expectEq(key.client === cc.image && key.server === 'none', true, 'legend: kind as the bars show it');
  expectEq(key.crit, cc.shadow, 'legend: critical path as the bars show it');
}

// The aggregate critical path of the selected trace's operation, as the
// report has it (its first row, its share; the shares add up to 100 %).
async function aggregate(page, report, op, shot) {
  await page.click('#tab-agg');
  expectEq(await page.$eval('#agg-op', e => e.value), op, 'aggregate view: the selected operation');
  const o = report.critical_path.operations.find(x => x.operation === op);
  const rows = await page.$$eval('#agg tr.aggrow', r => r.map(x =>
    [...x.children].map(c => c.textContent)));
  const first = o.rows[0], pct = x => (100 * x).toFixed(1) + ' %';
  const label = first.service + (first.server ? ' \u2192 ' + first.server : '') + ' ' +
    first.operation + ': ' + first.phase;
  expectEq(JSON.stringify(rows[0]), JSON.stringify([pct(first.share_all),
    pct(first.share_slowest_1pct), '', label]), 'aggregate view: the report\'s first row');
  const total = await page.$eval('#agg tr.aggtotal', r => r.children[0].textContent);
  expectEq(Math.abs(parseFloat(total) - 100) <= 0.2, true, 'aggregate shares add up: ' + total);
  await page.screenshot({ path: shot });
  await page.click('#tab-wf');
}

async function check(browser, expectPath, durPath, shot, reportPath) {
  const report = JSON.parse(fs.readFileSync(reportPath, 'utf8'));
  const want = fs.readFileSync(expectPath, 'utf8').trim().split('\n').map(l => l.split(' '));
  const durs = new Map(fs.readFileSync(durPath, 'utf8').trim().split('\n')
    .map(l => l.split(' ')).map(([t, ns]) => [t, Number(ns)]));
  const n = want.length;
  const { page, requests, errors } = await open(browser);
  expectEq(await page.evaluate(() => document.doctype && document.doctype.name), 'html', 'doctype');
  expectEq(await count(page), `${n} of ${n} traces`, 'traces listed');
  await listCells(page);
  const setFilter = async (sel, value) => {
    if (sel === '#f-err') await page.setChecked(sel, value);
    else if (sel === '#f-svc' || sel === '#f-op') await page.selectOption(sel, value);
    else await page.fill(sel, value);
  };
  const filtered = async (sel, value, expected, what) => {
    await setFilter(sel, value);
    expectEq(await count(page), `${expected} of ${n} traces`, what);
    await setFilter(sel, sel === '#f-err' ? false : '');
  };
  await filtered('#f-err', true, want.filter(w => w[3] === '1').length, 'errors only');
  await filtered('#f-op', 'stat', want.filter(w => w[1] === 'stat').length, 'operation stat');
  await filtered('#f-svc', 'mds', want.filter(w => w[1] === 'stat').length, 'service mds');
  await filtered('#f-svc', 'osd.2', want.filter(w => w[1] !== 'stat').length, 'service osd.2');
  // a threshold between two measured durations, half of them above it
  const sorted = [...durs.values()].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2), min = (sorted[mid - 1] + sorted[mid]) / 2;
  await filtered('#f-min', String(min / 1e6), sorted.filter(d => d >= min).length,
    `min duration ${(min / 1e6).toFixed(3)} ms`);

  // sorted by duration, longest first: the slowest trace on top
  await page.click('#head div:nth-child(5)');
  await page.click('#head div:nth-child(5)');
  const slowest = [...durs.entries()].sort((a, b) => b[1] - a[1])[0][0];
  expectEq(await page.$eval('#list .trace-row', e => e.title.split('\n')[0]), slowest,
    'sorted by duration, first');

  // one trace by id: its spans, its error, its tags
  const failed = want.find(w => w[3] === '1' && w[1] !== 'stat');
  await page.fill('#f-id', failed[0].slice(8, 24));
  expectEq(await count(page), `1 of ${n} traces`, 'trace id search');
  await page.click('#list .trace-row');
  expectEq(await spanRows(page), Number(failed[2]), 'span rows of the clicked trace');
  expectEq(await page.$eval('#title', (e, id) => e.textContent.includes(id), failed[0]), true,
    'title');
  expectEq(await page.$$eval('#waterfall .span-row.err', r => r.length), 2, 'error rows');
  // failed spans (status ERROR) drawn red, said so in the legend
  expectEq(await page.$$eval('#waterfall .span-row.err .bar',
    b => b.every(x => getComputedStyle(x).backgroundColor === 'rgb(214, 39, 40)')), true,
  'error bars red');
  expectEq(await page.$eval('#legend', e => e.textContent.includes('failed (ERROR')), true,
    'legend says red is failed');
  const crit = await page.$$eval('#waterfall .span-row', rows =>
    rows.map(r => r.classList.contains('crit')));
  expectEq(crit[0], true, 'root on the critical path');
  expectEq(crit.filter(Boolean).length >= 3, true, 'critical path spans');
  await ticks(page);
  await kinds(page);
  expectEq(await page.$$eval('#legend .svc', s => s.map(x => x.textContent).join(',')),
    'gateway,osd.1,osd.2', 'legend');
  expectEq(await page.$$eval('#waterfall .dur', d => d.every(x => /\d (ns|\u00b5s|ms|s)$/.test(x.textContent))),
    true, 'duration labels');
  await page.click('#waterfall .span-row.err >> nth=1');
  const detail = await page.$eval('#detail', e => e.textContent);
  for (const want of ['EIO: disk read failed', 'object_size', 'hoptrace.pid', 'hoptrace.host',
    'hoptrace.endpoint', 'hoptrace.process', 'sr', 'status-22 (ERROR)', 'error type EIO'])
    expectEq(detail.replace(/\s/g, '').includes(want.replace(/\s/g, '')), true, `detail shows ${want}`);
  await page.screenshot({ path: shot });
  await page.click('#waterfall .span-row .tog');
  expectEq(await spanRows(page), 1, 'root collapsed');
  await page.click('#waterfall .span-row .tog');
  expectEq(await spanRows(page), Number(failed[2]), 'root expanded');

  // the waterfall follows the filters: the trace filtered out leaves,
  // the first one listed takes its place; none listed, none shown
  await setFilter('#f-id', '');
  await setFilter('#f-op', 'stat');
  const first = await page.$eval('#list .trace-row', r => r.title.split('\n')[0]);
  expectEq(await page.$eval('#title', (e, id) => e.textContent.includes(id), failed[0]), false,
    'filtered-out trace leaves the waterfall');
  expectEq(await page.$eval('#title', (e, id) => e.textContent.includes(id), first), true,
    'the first trace listed shown');
  expectEq(await page.$eval('#detail', e => e.textContent), '', 'its details cleared');
  await setFilter('#f-id', 'not-a-trace');
  expectEq(await page.$eval('#title', e => e.textContent), 'no trace matches the filters',
    'no trace listed, none shown');
  expectEq(await spanRows(page), 0, 'no span rows');
  await setFilter('#f-id', '');
  await setFilter('#f-op', '');

  await page.fill('#f-id', failed[0].slice(8, 24));
  await page.click('#list .trace-row');
  await aggregate(page, report, failed[1], path.join(path.dirname(shot), 'critical-path.png'));
  expectEq(requests.length, 0, 'network requests ' + requests.join(' '));
  expectEq(errors.length, 0, 'script errors ' + errors.join(' | '));
}

async function empty(browser) {
  const { page, requests, errors } = await open(browser);
  expectEq(await count(page), '0 of 0 traces', 'traces listed');
  expectEq(await page.$eval('#title', e => e.textContent), 'no traces', 'title');
  expectEq(requests.length + errors.length, 0, 'requests and errors ' + errors.join(' | '));
}

async function bench(browser) {
  const { page, loadMs, requests, errors } = await open(browser);
  const clicks = [];
  for (let k = 0; k < 5; k++) clicks.push(await clickMs(page, 2 + 3 * k));
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('Performance.enable');
  const m = Object.fromEntries((await cdp.send('Performance.getMetrics')).metrics
    .map(x => [x.name, x.value]));
  const out = { traces: await count(page), load_ms: loadMs, click_ms: clicks.map(Math.round),
    dom_nodes: m.Nodes, heap_mb: +(m.JSHeapUsedSize / 1048576).toFixed(1),
    requests: requests.length, errors: errors.length };
  console.log(JSON.stringify(out));
  if (requests.length || errors.length) fail('requests or errors: ' + errors.join(' | '));
  if (loadMs > 30000 || Math.max(...clicks) > 2000) fail('a hang: 10x the goals');
}

(async () => {
  const browser = await chromium.launch({ executablePath: '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu'] });
  try {
    if (mode === 'check') await check(browser, ...rest);
    else if (mode === 'empty') await empty(browser);
    else if (mode === 'bench') await bench(browser);
    else fail('usage: view_check.js check|empty|bench PAGE ...');
  } finally {
    await browser.close();
  }
})().catch(e => fail(e.stack || String(e)));
