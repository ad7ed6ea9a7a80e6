// kevolve HTML report, part 1 of 4: the data and formatting. The four parts
// (common, tree, charts, report .js) run as one script, in one block, in
// that order (src/report/html_report.cpp). No network, no libraries: SVG
// built as strings (every store string escaped) and set once per view.
const t0 = performance.now();
const DATA = JSON.parse(document.getElementById('kv-data').textContent);
let CODE = null;  // parsed on first use: code and full reasons can be large
function details() {
  if (!CODE) CODE = JSON.parse(document.getElementById('kv-code').textContent);
  return CODE;
}
const STATUS = DATA.statuses;
const MODES = DATA.modes;
const MF = {};
DATA.measurement_fields.forEach((f, i) => { MF[f] = i; });
const AUTO_COLLAPSE = 2000;  // visible nodes of a tree before deeper levels start collapsed
const LABEL_LIMIT = 400;     // fitness labels drawn up to this many visible nodes
const DX = 14, DX_LABELLED = 34, DY = 56, PAD = 24;
const COLOURS = {
  root: '#2c3e50', pending: '#e0e0e0', faster: '#1a9850', slower: '#a6d96a', suspicious: '#7b3294',
  timeout: '#f46d43', skipped: '#bababa', failed: '#d73027', compile_only: '#92c5de',
};
const CATEGORY_LABELS = {
  faster: 'ok, faster than baseline', slower: 'ok, not faster', failed: 'failed (compile, wrong, runtime, crash)',
  timeout: 'timeout', suspicious: 'suspicious', skipped: 'skipped', pending: 'pending',
  compile_only: 'compile only (never run: no device)',
};

// ---------- formatting ----------
function esc(s) {
  return String(s).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }[c]));
}
function fx(v) { return v > 0 ? v.toFixed(2) + 'x' : '-'; }
function pct(v) { return (v * 100).toFixed(0) + '%'; }
function costText(v) { return v > 0 ? v.toFixed(v < 0.01 ? 6 : 4) : '0'; }  // LLM prices: any currency
function num(v, d) { return v === null || v === undefined ? '-' : Number(v).toFixed(d); }
function secs(s) {
  if (!(s > 0)) return '-';
  if (s < 1e-6) return (s * 1e9).toFixed(0) + ' ns';
  if (s < 1e-3) return (s * 1e6).toFixed(1) + ' µs';
  if (s < 1) return (s * 1e3).toFixed(2) + ' ms';
  return s.toFixed(2) + ' s';
}
function el(tag, attrs, html) {
  const e = document.createElement(tag);
  for (const k in attrs || {}) e.setAttribute(k, attrs[k]);
  if (html !== undefined) e.innerHTML = html;
  return e;
}
