// kevolve HTML report: draws the data of the two JSON blocks (see
// src/report/html_report.h). No network, no libraries: SVG built as strings
// (every store string escaped) and set once per view.
(function () {
  'use strict';
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
    timeout: '#f46d43', skipped: '#bababa', failed: '#d73027',
  };
  const CATEGORY_LABELS = {
    faster: 'ok, faster than baseline', slower: 'ok, not faster', failed: 'failed (compile, wrong, runtime, crash)',
    timeout: 'timeout', suspicious: 'suspicious', skipped: 'skipped', pending: 'pending',
  };

  // ---------- formatting ----------
  function esc(s) {
    return String(s).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }[c]));
  }
  function fx(v) { return v > 0 ? v.toFixed(2) + 'x' : '-'; }
  function pct(v) { return (v * 100).toFixed(0) + '%'; }
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

  // ---------- header and summary ----------
  function renderHeader() {
    let evaluations = 0, nodes = 0;
    DATA.summary.forEach((s) => { evaluations += s.evaluations; });
    DATA.tasks.forEach((t) => { nodes += t.node_count; });
    document.getElementById('kv-meta').textContent =
      DATA.store + ' · kevolve ' + DATA.kevolve_version + ' · created ' + DATA.created_at + ' · ' +
      DATA.tasks.length + ' tasks · ' + evaluations + ' evaluations · ' + nodes + ' nodes';
    document.getElementById('kv-headline').textContent =
      DATA.tasks_beating_baseline + ' of ' + DATA.summary.length +
      ' tasks beat their baseline; geometric mean of the best speedups: ' + DATA.geomean_speedup.toFixed(2) + 'x';
    document.getElementById('kv-config-text').textContent = DATA.config_yaml;
  }

  function renderSummary() {
    const failed = STATUS.filter((s) => s !== 'ok' && DATA.summary.some((r) => r.failures[s]));
    let h = '<thead><tr><th>task</th><th>baseline</th><th>best speedup</th><th>% of roofline</th>' +
      '<th>evaluations</th><th>correct</th><th>to 90% of best</th>';
    failed.forEach((s) => { h += '<th>' + esc(s) + '</th>'; });
    h += '<th>time</th><th>stopped because</th></tr></thead><tbody>';
    DATA.summary.forEach((r, i) => {
      const cell = (field, value, text) =>
        '<td class="num" data-field="' + field + '" data-value="' + value + '">' + text + '</td>';
      h += '<tr data-task="' + esc(r.task) + '"><td><button class="link" data-goto-task="' + i + '">' + esc(r.task) +
        '</button></td><td>' + esc(r.baseline) + '</td>' +
        cell('best_speedup', r.best_speedup, fx(r.best_speedup)) +
        cell('best_roofline_fraction', r.best_roofline_fraction, r.best_speedup > 0 ? pct(r.best_roofline_fraction) : '-') +
        cell('evaluations', r.evaluations, r.evaluations) + cell('correct', r.correct, r.correct) +
        cell('evaluations_to_90pct', r.evaluations_to_90pct, r.evaluations_to_90pct || '-');
      failed.forEach((s) => { h += cell('failures_' + s, r.failures[s] || 0, r.failures[s] || '-'); });
      h += cell('seconds', r.seconds, r.seconds.toFixed(0) + ' s') +
        '<td data-field="stop_reason">' + esc(r.stop_reason || '(running)') + '</td></tr>';
    });
    document.getElementById('kv-summary').innerHTML = h + '</tbody>';
    document.getElementById('kv-summary').addEventListener('click', (e) => {
      const b = e.target.closest('[data-goto-task]');
      if (!b) return;
      const d = document.querySelector('details.task[data-task-index="' + b.dataset.gotoTask + '"]');
      d.open = true;
      d.scrollIntoView();
    });
  }

  // ---------- per task ----------
  function category(t, i) {
    const n = t.nodes;
    if (i === 0) return 'root';
    if (n.state[i] === 0) return 'pending';
    const s = STATUS[n.status[i]];
    if (s === 'ok') return n.fitness[i] > 1 ? 'faster' : 'slower';
    if (s === 'suspicious' || s === 'timeout' || s === 'skipped') return s;
    return 'failed';
  }

  function taskModel(t) {
    const n = t.node_count;
    const kids = Array.from({ length: n }, () => []);
    for (let i = 1; i < n; i++) kids[t.nodes.parent[i]].push(i);
    const size = new Int32Array(n).fill(1);
    for (let i = n - 1; i > 0; i--) size[t.nodes.parent[i]] += size[i];  // children have larger ids
    const cat = [];
    let maxFit = 0;
    for (let i = 0; i < n; i++) {
      cat.push(category(t, i));
      if (t.nodes.state[i] === 1 && t.nodes.status[i] === 0 && i > 0) maxFit = Math.max(maxFit, t.nodes.fitness[i]);
    }
    const onBest = new Uint8Array(n);
    t.best_path.forEach((i) => { onBest[i] = 1; });
    const collapsed = new Uint8Array(n);
    if (n > AUTO_COLLAPSE) {  // collapse at the deepest level that keeps the tree under the limit
      const perDepth = [];
      for (let i = 0; i < n; i++) perDepth[t.nodes.depth[i]] = (perDepth[t.nodes.depth[i]] || 0) + 1;
      let depth = 1, total = perDepth[0] + (perDepth[1] || 0);
      while (depth + 1 < perDepth.length && total + perDepth[depth + 1] <= AUTO_COLLAPSE) total += perDepth[++depth];
      for (let i = 0; i < n; i++)
        if (t.nodes.depth[i] >= depth && kids[i].length && !onBest[i]) collapsed[i] = 1;
    }
    return { t, kids, size, cat, maxFit, onBest, collapsed, hidden: {}, scale: 1, selected: -1, svg: null };
  }

  function visibleTree(m) {
    const t = m.t, n = t.node_count;
    const keep = new Uint8Array(n);
    for (let i = n - 1; i >= 0; i--) {
      if (!m.hidden[m.cat[i]] || i === 0) keep[i] = 1;
      if (keep[i] && i > 0) keep[t.nodes.parent[i]] = 1;
    }
    const order = [], vkids = new Map(), stack = [0];
    while (stack.length) {
      const i = stack.pop();
      order.push(i);
      if (m.collapsed[i]) continue;
      const k = m.kids[i].filter((c) => keep[c]);
      if (k.length) vkids.set(i, k);
      for (let j = k.length - 1; j >= 0; j--) stack.push(k[j]);
    }
    // Leaves left to right in depth-first order, parents centred over their children.
    const x = new Map();
    let slot = 0;
    for (const i of order) if (!vkids.has(i)) x.set(i, slot++);
    for (let j = order.length - 1; j >= 0; j--) {
      const i = order[j], k = vkids.get(i);
      if (k) x.set(i, (x.get(k[0]) + x.get(k[k.length - 1])) / 2);
    }
    let maxDepth = 0;
    for (const i of order) maxDepth = Math.max(maxDepth, t.nodes.depth[i]);
    return { order, vkids, x, keep, width: Math.max(slot, 1), maxDepth };
  }

  function radius(m, i) {
    if (i === 0) return 7;
    if (m.cat[i] === 'faster' || m.cat[i] === 'slower')
      return 3 + 6 * Math.sqrt(m.maxFit > 0 ? m.t.nodes.fitness[i] / m.maxFit : 0);
    return 3;
  }

  function drawTree(m) {
    const start = performance.now();
    const t = m.t, v = visibleTree(m);
    const showLabels = v.order.length <= LABEL_LIMIT, dx = showLabels ? DX_LABELLED : DX;
    const px = (i) => PAD + v.x.get(i) * dx, py = (i) => PAD + t.nodes.depth[i] * DY;
    const W = 2 * PAD + (v.width - 1) * dx + (showLabels ? 30 : 0), H = 2 * PAD + v.maxDepth * DY + 14;
    let edges = '', bestEdges = '', nodes = '', labels = '';
    for (const i of v.order) {
      const x = px(i), y = py(i);
      if (i > 0) {
        const p = t.nodes.parent[i];
        const seg = 'M' + px(p).toFixed(1) + ' ' + py(p) + 'L' + x.toFixed(1) + ' ' + y;
        if (m.onBest[i] && m.onBest[p]) bestEdges += seg; else edges += seg;
      }
      let cls = 'node';
      if (m.onBest[i]) cls += ' best-path';
      if (i === t.best_node) cls += ' best';
      if (i === m.selected) cls += ' selected';
      const hiddenKids = m.collapsed[i] ? m.size[i] - 1 : 0;
      if (hiddenKids) cls += ' collapsed';
      nodes += '<circle class="' + cls + '" data-id="' + i + '"' + (m.onBest[i] ? ' data-best-path="1"' : '') +
        ' data-category="' + m.cat[i] + '" cx="' + x.toFixed(1) + '" cy="' + y + '" r="' + radius(m, i).toFixed(1) +
        '" fill="' + COLOURS[m.cat[i]] + '"></circle>';
      if (hiddenKids) labels += '<text class="more" x="' + x.toFixed(1) + '" y="' + (y + 16) + '" text-anchor="middle">+' + hiddenKids + '</text>';
      else if (showLabels && (m.cat[i] === 'faster' || m.cat[i] === 'slower'))
        labels += '<text x="' + (x + 5).toFixed(1) + '" y="' + (y - 6) + '">' + t.nodes.fitness[i].toFixed(2) + '</text>';
    }
    const s = m.scale;
    m.view.innerHTML = '<svg class="tree" width="' + (W * s).toFixed(0) + '" height="' +
      (H * s).toFixed(0) + '" viewBox="0 0 ' + W + ' ' + H + '" data-visible="' + v.order.length + '" data-total="' +
      t.node_count + '"><path class="edge" d="' + edges + '"></path><path class="edge best-path" d="' + bestEdges +
      '"></path>' + nodes + labels + '</svg>';
    m.width = W;
    m.status.textContent = 'showing ' + v.order.length + ' of ' + t.node_count + ' nodes' +
      (v.order.length < t.node_count ? ' (collapsed subtrees show +N; double-click a node to open or close it)' : '') +
      ' · drawn in ' + (performance.now() - start).toFixed(0) + ' ms';
  }

  function measurementsOf(t, id) {
    return t.measurements.filter((r) => r[MF.node] === id);
  }

  function tooltipText(m, i) {
    const t = m.t, n = t.nodes;
    if (i === 0) return t.id + ' (root)\n' + t.node_count + ' nodes';
    let s = 'node ' + i + ' · ' + (n.state[i] === 0 ? 'pending' : STATUS[n.status[i]]) +
      (n.status[i] === 0 && n.state[i] === 1 ? ' · fitness ' + n.fitness[i].toFixed(3) + 'x' : '') +
      '\n' + t.origins[n.origin[i]] + ' · memory ' + MODES[n.mode[i]] + ' · depth ' + n.depth[i];
    const rows = measurementsOf(t, i).filter((r) => !r[MF.holdout] && r[MF.candidate_median_s] > 0);
    rows.slice(0, 6).forEach((r) => {
      s += '\n' + r[MF.shape] + ': ' + secs(r[MF.candidate_median_s]) + ' vs ' + secs(r[MF.baseline_median_s]) +
        ' (' + fx(r[MF.speedup]) + ', ' + pct(r[MF.roofline_fraction]) + ' of roofline)';
    });
    if (n.reason[i]) s += '\n' + n.reason[i];
    return s;
  }

  function nodeButton(ti, id) { return '<button class="link" data-task="' + ti + '" data-node="' + id + '">' + id + '</button>'; }

  function showNode(m, i) {
    const t = m.t, n = t.nodes, ti = m.index;
    m.selected = i;
    const full = details()[ti];
    let h = '<h3>node ' + i + (i === t.best_node ? ' (best)' : '') + '</h3><table>';
    const row = (k, v) => { h += '<tr><th>' + k + '</th><td>' + v + '</td></tr>'; };
    if (i === 0) {
      row('task', esc(t.id));
      row('baseline', esc(t.baseline));
    } else {
      row('status', esc(n.state[i] === 0 ? 'pending' : STATUS[n.status[i]]));
      row('fitness', n.fitness[i] > 0 ? n.fitness[i].toFixed(4) + 'x' : '0');
      row('parent', nodeButton(ti, n.parent[i]));
      row('depth', n.depth[i]);
      row('synthesizer', esc(t.origins[n.origin[i]]));
      row('memory mode', esc(MODES[n.mode[i]]));
      row('context', n.context[i].length ? n.context[i].map((c) => nodeButton(ti, c)).join(' ') : '-');
      row('children', m.kids[i].length);
      row('visits', n.visits[i]);
      row('created, finished', n.created_s[i].toFixed(1) + ' s, ' + (n.state[i] ? n.finished_s[i].toFixed(1) + ' s' : '-'));
    }
    h += '</table>';
    if (m.kids[i].length)
      h += '<p><button data-action="toggle">' + (m.collapsed[i] ? 'expand' : 'collapse') + ' subtree (' + (m.size[i] - 1) +
        ' nodes)</button> <button data-action="expand-all">expand everything below</button></p>';
    if (full.reason[i]) h += '<h3>reason</h3><pre class="reason"></pre>';
    const rows = measurementsOf(t, i);
    if (rows.length) {
      h += '<h3>measurements</h3><div class="scroll"><table><tr><th>shape</th><th>status</th><th>max error</th>' +
        '<th>candidate</th><th>± spread</th><th>baseline</th><th>speedup</th><th>GB/s</th><th>GFLOP/s</th>' +
        '<th>roofline</th><th>bottleneck</th></tr>';
      rows.forEach((r) => {
        const timedShape = !r[MF.holdout] && r[MF.candidate_median_s] > 0;
        h += '<tr><td>' + esc(r[MF.shape]) + (r[MF.holdout] ? ' (holdout)' : '') + '</td><td>' + esc(r[MF.status]) +
          '</td><td class="num">' + Number(r[MF.max_abs_error]).toExponential(1) + '</td>' +
          (timedShape
            ? '<td class="num">' + secs(r[MF.candidate_median_s]) + '</td><td class="num">' +
              secs((r[MF.candidate_p90_s] - r[MF.candidate_p10_s]) / 2) + '</td><td class="num">' +
              secs(r[MF.baseline_median_s]) + '</td><td class="num">' + fx(r[MF.speedup]) + '</td><td class="num">' +
              num(r[MF.achieved_gbs], 1) + '</td><td class="num">' + num(r[MF.achieved_gflops], 1) + '</td><td class="num">' +
              pct(r[MF.roofline_fraction]) + '</td><td>' + esc(r[MF.bottleneck]) + '</td>'
            : '<td colspan="8" class="muted">verified, not timed</td>') + '</tr>';
      });
      h += '</table></div>';
    }
    if (full.code[i]) h += '<h3>code</h3><pre class="code"></pre>';
    m.panel.innerHTML = h;
    const reason = m.panel.querySelector('pre.reason'), code = m.panel.querySelector('pre.code');
    if (reason) reason.textContent = full.reason[i];
    if (code) code.textContent = full.code[i];
    drawTree(m);
  }

  function scrollToNode(m, i) {
    const c = m.view.querySelector('circle[data-id="' + i + '"]');
    if (!c) return;
    const box = m.view.getBoundingClientRect(), r = c.getBoundingClientRect();
    m.view.scrollLeft += r.left - box.left - box.width / 2;
    m.view.scrollTop += r.top - box.top - box.height / 3;
  }

  function revealNode(m, i) {
    for (let p = m.t.nodes.parent[i]; p >= 0; p = p === 0 ? -1 : m.t.nodes.parent[p]) m.collapsed[p] = 0;
    m.hidden[m.cat[i]] = false;
    m.filters.querySelectorAll('input[data-category="' + m.cat[i] + '"]').forEach((c) => { c.checked = true; });
    showNode(m, i);
    scrollToNode(m, i);
  }

  // ---------- charts ----------
  function chartFrame(w, h, body) {
    return '<svg class="chart" width="' + w + '" height="' + h + '" viewBox="0 0 ' + w +
      ' ' + h + '">' + body + '</svg>';
  }

  function fitnessChart(m) {
    const t = m.t, n = t.nodes, order = t.eval_order;
    const W = 560, H = 280, L = 48, R = 12, T = 14, B = 36;
    if (!order.length) return '<p class="muted">no evaluations yet</p>';
    let top = 1;
    order.forEach((i) => { if (n.status[i] === 0) top = Math.max(top, n.fitness[i]); });
    top *= 1.08;
    const X = (k) => L + (order.length === 1 ? 0.5 : k / (order.length - 1)) * (W - L - R);
    const Y = (f) => T + (1 - f / top) * (H - T - B);
    const dots = {};
    let best = 0, line = '';
    order.forEach((i, k) => {
      const c = m.cat[i], f = n.status[i] === 0 ? n.fitness[i] : 0;
      dots[c] = (dots[c] || '') + 'M' + X(k).toFixed(1) + ' ' + Y(f).toFixed(1) + 'h0';
      if (n.status[i] === 0 && f > best) best = f;
      line += (k ? 'L' : 'M') + X(k).toFixed(1) + ' ' + Y(best).toFixed(1);
    });
    let b = '<line class="axis" x1="' + L + '" y1="' + (H - B) + '" x2="' + (W - R) + '" y2="' + (H - B) + '"></line>' +
      '<line class="axis" x1="' + L + '" y1="' + T + '" x2="' + L + '" y2="' + (H - B) + '"></line>';
    for (let k = 0; k <= 4; k++) {
      const f = top * k / 4;
      b += '<line class="grid" x1="' + L + '" x2="' + (W - R) + '" y1="' + Y(f) + '" y2="' + Y(f) + '"></line>' +
        '<text x="' + (L - 4) + '" y="' + (Y(f) + 3) + '" text-anchor="end">' + f.toFixed(2) + '</text>';
    }
    b += '<line class="one" x1="' + L + '" x2="' + (W - R) + '" y1="' + Y(1) + '" y2="' + Y(1) + '"></line>' +
      '<text x="' + (W - R) + '" y="' + (Y(1) - 3) + '" text-anchor="end">baseline</text>';
    for (const c in dots) b += '<path d="' + dots[c] + '" stroke="' + COLOURS[c] + '" stroke-width="6" stroke-linecap="round"></path>';
    b += '<path class="best-line" d="' + line + '"></path>' +
      '<text x="' + ((L + W - R) / 2) + '" y="' + (H - 6) + '" text-anchor="middle">evaluation (1 to ' + order.length +
      ', in the order they finished); failed = 0</text>' +
      '<text transform="translate(12 ' + ((T + H - B) / 2) + ') rotate(-90)" text-anchor="middle">fitness (speedup)</text>';
    return chartFrame(W, H, b);
  }

  function logTicks(lo, hi) {
    const out = [];
    for (let e = Math.floor(Math.log10(lo)); e <= Math.ceil(Math.log10(hi)); e++) out.push(Math.pow(10, e));
    return out;
  }

  function rooflineChart(m) {
    const t = m.t, peaks = DATA.rooflines[t.backend] || { peak_gbs: 0, peak_gflops: 0 };
    if (t.best_node < 0) return '<p class="muted">no correct kernel: nothing to place on the roofline</p>';
    const rows = measurementsOf(t, t.best_node).filter((r) => !r[MF.holdout] && r[MF.candidate_median_s] > 0);
    if (!rows.length) return '<p class="muted">the best kernel has no timed shape</p>';
    const pts = rows.map((r) => {
      const ratio = r[MF.candidate_median_s] / r[MF.baseline_median_s];
      return { shape: r[MF.shape], gbs: r[MF.achieved_gbs], gflops: r[MF.achieved_gflops], frac: r[MF.roofline_fraction],
        bgbs: r[MF.achieved_gbs] * ratio, bgflops: r[MF.achieved_gflops] * ratio, bfrac: r[MF.roofline_fraction] * ratio };
    });
    const W = 560, H = 280, L = 56, R = 14, T = 14, B = 36;
    const note = '<p class="muted">Peaks implied by the stored roofline fractions (' + t.backend + '): ' +
      peaks.peak_gbs.toFixed(1) + ' GB/s' + (peaks.peak_gflops > 0 ? ', ' + peaks.peak_gflops.toFixed(1) + ' GFLOP/s'
        : ', compute peak unknown (no compute-bound shape)') + '. Circles: best kernel (node ' + t.best_node +
      '); squares: baseline. Hover for the shape.</p>';
    let b = '';
    const title = (p, who, gbs, gflops, frac) => '<title>' + esc(p.shape) + ' · ' + who + ': ' + gbs.toFixed(1) + ' GB/s, ' +
      gflops.toFixed(1) + ' GFLOP/s, ' + pct(frac) + ' of roofline</title>';
    if (pts.every((p) => p.gflops > 0)) {  // classic roofline: GFLOP/s over arithmetic intensity, log-log
      const ai = pts.map((p) => p.gflops / p.gbs);
      let xlo = Math.min(...ai) / 4, xhi = Math.max(...ai) * 4;
      if (peaks.peak_gflops > 0 && peaks.peak_gbs > 0) {
        const ridge = peaks.peak_gflops / peaks.peak_gbs;
        xlo = Math.min(xlo, ridge / 4);
        xhi = Math.max(xhi, ridge * 4);
      }
      const roof = (x) => peaks.peak_gflops > 0 ? Math.min(x * peaks.peak_gbs, peaks.peak_gflops) : x * peaks.peak_gbs;
      let ylo = Math.min(...pts.map((p) => Math.min(p.gflops, p.bgflops))) / 4, yhi = Math.max(roof(xhi), ...pts.map((p) => p.gflops)) * 2;
      if (!(ylo > 0)) ylo = yhi / 1e6;
      const X = (x) => L + (Math.log10(x) - Math.log10(xlo)) / (Math.log10(xhi) - Math.log10(xlo)) * (W - L - R);
      const Y = (y) => T + (1 - (Math.log10(y) - Math.log10(ylo)) / (Math.log10(yhi) - Math.log10(ylo))) * (H - T - B);
      logTicks(xlo, xhi).filter((x) => x >= xlo && x <= xhi).forEach((x) => {
        b += '<line class="grid" x1="' + X(x) + '" x2="' + X(x) + '" y1="' + T + '" y2="' + (H - B) + '"></line><text x="' + X(x) +
          '" y="' + (H - B + 12) + '" text-anchor="middle">' + x + '</text>';
      });
      logTicks(ylo, yhi).filter((y) => y >= ylo && y <= yhi).forEach((y) => {
        b += '<line class="grid" x1="' + L + '" x2="' + (W - R) + '" y1="' + Y(y) + '" y2="' + Y(y) + '"></line><text x="' + (L - 4) +
          '" y="' + (Y(y) + 3) + '" text-anchor="end">' + y + '</text>';
      });
      if (peaks.peak_gbs > 0) {
        let d = '';
        for (let k = 0; k <= 64; k++) {
          const x = xlo * Math.pow(xhi / xlo, k / 64);
          d += (k ? 'L' : 'M') + X(x).toFixed(1) + ' ' + Y(roof(x)).toFixed(1);
        }
        b += '<path class="roof" d="' + d + '"></path>';
      }
      pts.forEach((p, k) => {
        const x = X(ai[k]);
        b += '<rect x="' + (x - 4) + '" y="' + (Y(p.bgflops) - 4) + '" width="8" height="8" fill="#888" class="baseline-point">' +
          title(p, 'baseline', p.bgbs, p.bgflops, p.bfrac) + '</rect><circle cx="' + x + '" cy="' + Y(p.gflops) +
          '" r="5" fill="' + COLOURS.faster + '" class="best-point">' + title(p, 'best kernel', p.gbs, p.gflops, p.frac) + '</circle>';
      });
      b += '<text x="' + ((L + W - R) / 2) + '" y="' + (H - 6) + '" text-anchor="middle">arithmetic intensity (FLOP/byte)</text>' +
        '<text transform="translate(12 ' + ((T + H - B) / 2) + ') rotate(-90)" text-anchor="middle">GFLOP/s</text>';
    } else {  // data movement only: GB/s per shape against the bandwidth roof
      const top = Math.max(peaks.peak_gbs, ...pts.map((p) => Math.max(p.gbs, p.bgbs))) * 1.1;
      const slot = (W - L - R) / pts.length, Y = (g) => T + (1 - g / top) * (H - T - B);
      for (let k = 0; k <= 4; k++) {
        const g = top * k / 4;
        b += '<line class="grid" x1="' + L + '" x2="' + (W - R) + '" y1="' + Y(g) + '" y2="' + Y(g) + '"></line><text x="' + (L - 4) +
          '" y="' + (Y(g) + 3) + '" text-anchor="end">' + g.toFixed(0) + '</text>';
      }
      pts.forEach((p, k) => {
        const x = L + k * slot, bw = Math.min(24, slot / 3);
        b += '<rect class="baseline-point" x="' + (x + slot / 2 - bw - 1) + '" y="' + Y(p.bgbs) + '" width="' + bw + '" height="' +
          (Y(0) - Y(p.bgbs)) + '" fill="#888">' + title(p, 'baseline', p.bgbs, p.bgflops, p.bfrac) + '</rect>' +
          '<rect class="best-point" x="' + (x + slot / 2 + 1) + '" y="' + Y(p.gbs) + '" width="' + bw + '" height="' +
          (Y(0) - Y(p.gbs)) + '" fill="' + COLOURS.faster + '">' + title(p, 'best kernel', p.gbs, p.gflops, p.frac) + '</rect>' +
          '<text x="' + (x + slot / 2) + '" y="' + (H - B + 12) + '" text-anchor="middle">' + esc(p.shape.slice(0, 18)) + '</text>';
      });
      if (peaks.peak_gbs > 0)
        b += '<line class="roof" x1="' + L + '" x2="' + (W - R) + '" y1="' + Y(peaks.peak_gbs) + '" y2="' + Y(peaks.peak_gbs) +
          '"></line><text x="' + (W - R) + '" y="' + (Y(peaks.peak_gbs) - 3) + '" text-anchor="end">peak bandwidth</text>';
      b += '<text x="' + ((L + W - R) / 2) + '" y="' + (H - 4) + '" text-anchor="middle">shape (no arithmetic: bandwidth roof)</text>' +
        '<text transform="translate(12 ' + ((T + H - B) / 2) + ') rotate(-90)" text-anchor="middle">GB/s</text>';
    }
    b += '<line class="axis" x1="' + L + '" y1="' + (H - B) + '" x2="' + (W - R) + '" y2="' + (H - B) + '"></line>' +
      '<line class="axis" x1="' + L + '" y1="' + T + '" x2="' + L + '" y2="' + (H - B) + '"></line>';
    return chartFrame(W, H, b) + note;
  }

  function failureTable(m) {
    const g = m.t.failure_groups;
    if (!g.length) return '<p class="muted">no failed evaluations</p>';
    let h = '<div class="scroll"><table class="failures"><tr><th>status</th><th>count</th><th>reason (numbers as #)</th>' +
      '<th>example</th><th>nodes</th></tr>';
    g.forEach((r) => {
      h += '<tr data-status="' + esc(r.status) + '"><td>' + esc(r.status) + '</td><td class="num">' + r.count + '</td><td>' +
        esc(r.pattern) + '</td><td>' + esc(r.example) + '</td><td>' +
        r.nodes.slice(0, 12).map((i) => nodeButton(m.index, i)).join(' ') + (r.count > 12 ? ' …' : '') + '</td></tr>';
    });
    return h + '</table></div>';
  }

  // ---------- a task's section ----------
  const models = [];

  function renderTask(m) {
    const body = m.body, t = m.t;
    const counts = {};
    m.cat.forEach((c) => { counts[c] = (counts[c] || 0) + 1; });
    let filters = '<span>show:</span>';
    for (const c in CATEGORY_LABELS)
      if (counts[c])
        filters += '<label><input type="checkbox" checked data-category="' + c + '"><span class="swatch" style="background:' +
          COLOURS[c] + '"></span>' + CATEGORY_LABELS[c] + ' (' + counts[c] + ')</label>';
    body.innerHTML = '<h3>Search tree</h3><div class="toolbar filters">' + filters + '</div>' +
      '<div class="toolbar"><button data-action="zoom-in">zoom +</button><button data-action="zoom-out">zoom −</button>' +
      '<button data-action="fit">fit width</button><button data-action="expand-tree">expand all</button>' +
      '<button data-action="collapse-tree">collapse to the best path</button><button data-action="best">select best</button>' +
      '<span class="muted tree-status"></span></div>' +
      '<div class="tree-wrap"><div class="tree-view"></div><div class="node-panel"><p class="muted">Hover a node for its ' +
      'measurements; click it for everything, including its code. The best path is outlined in orange, the best node in black.' +
      '</p></div></div>' +
      '<div class="charts"><div><h3>Fitness over evaluations</h3>' + fitnessChart(m) + '</div><div><h3>Roofline</h3>' +
      rooflineChart(m) + '</div></div><h3>Failures by reason</h3>' + failureTable(m);
    m.view = body.querySelector('.tree-view');
    m.panel = body.querySelector('.node-panel');
    m.status = body.querySelector('.tree-status');
    m.filters = body.querySelector('.filters');
    drawTree(m);
    if (t.best_node >= 0) scrollToNode(m, t.best_node);
    const tip = document.getElementById('kv-tooltip');
    m.view.addEventListener('mouseover', (e) => {
      const c = e.target.closest('circle.node');
      if (!c) return;
      tip.textContent = tooltipText(m, Number(c.dataset.id));
      tip.hidden = false;
    });
    m.view.addEventListener('mousemove', (e) => {
      tip.style.left = Math.min(e.clientX + 14, window.innerWidth - 430) + 'px';
      tip.style.top = (e.clientY + 14) + 'px';
    });
    m.view.addEventListener('mouseout', (e) => { if (e.target.closest('circle.node')) tip.hidden = true; });
    m.view.addEventListener('click', (e) => {
      const c = e.target.closest('circle.node');
      if (c) showNode(m, Number(c.dataset.id));
    });
    m.view.addEventListener('dblclick', (e) => {
      const c = e.target.closest('circle.node');
      if (!c) return;
      const i = Number(c.dataset.id);
      m.collapsed[i] = m.collapsed[i] ? 0 : 1;
      drawTree(m);
    });
    m.filters.addEventListener('change', (e) => {
      m.hidden[e.target.dataset.category] = !e.target.checked;
      drawTree(m);
    });
    body.addEventListener('click', (e) => {
      const nb = e.target.closest('button[data-node]');
      if (nb) return revealNode(models[Number(nb.dataset.task)], Number(nb.dataset.node));
      const a = e.target.closest('button[data-action]');
      if (!a) return;
      const act = a.dataset.action;
      if (act === 'zoom-in') m.scale *= 1.5;
      else if (act === 'zoom-out') m.scale /= 1.5;
      else if (act === 'fit') m.scale = Math.min(1, (m.view.clientWidth - 4) / m.width);
      else if (act === 'expand-tree') m.collapsed.fill(0);
      else if (act === 'collapse-tree') {
        for (let i = 0; i < t.node_count; i++) m.collapsed[i] = m.kids[i].length && !m.onBest[i] ? 1 : 0;
      } else if (act === 'best') { if (t.best_node >= 0) return revealNode(m, t.best_node); }
      else if (act === 'toggle') m.collapsed[m.selected] = m.collapsed[m.selected] ? 0 : 1;
      else if (act === 'expand-all') {
        const stack = [m.selected];
        while (stack.length) { const i = stack.pop(); m.collapsed[i] = 0; stack.push(...m.kids[i]); }
      }
      if (act === 'toggle' || act === 'expand-all') showNode(m, m.selected); else drawTree(m);
    });
  }

  function renderTasks() {
    const host = document.getElementById('kv-tasks');
    let total = 0;
    DATA.tasks.forEach((t) => { total += t.node_count; });
    DATA.tasks.forEach((t, i) => {
      const s = DATA.summary[i];
      const d = el('details', { class: 'task', 'data-task-index': i, 'data-task': t.id });
      d.innerHTML = '<summary>' + esc(t.id) + ' — best ' + fx(s.best_speedup) + ' over ' + esc(t.baseline) + ', ' +
        s.evaluations + ' evaluations, ' + t.node_count + ' nodes</summary><div class="task-body"></div>';
      host.appendChild(d);
      const m = taskModel(t);
      m.index = i;
      m.body = d.querySelector('.task-body');
      models.push(m);
      let drawn = false;
      d.addEventListener('toggle', () => { if (d.open && !drawn) { drawn = true; renderTask(m); } });
      if (total <= 5000 || i === 0) d.open = true;  // small sweeps open everything; large ones the first task
      if (d.open) { drawn = true; renderTask(m); }
    });
  }

  renderHeader();
  renderSummary();
  renderTasks();
  document.body.dataset.renderMs = (performance.now() - t0).toFixed(0);
  document.body.dataset.ready = '1';
})();
