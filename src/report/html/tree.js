// kevolve HTML report, part 2 of 4: the search tree (model, layout, drawing,
// the node panel with its LLM requests).
// ---------- per task ----------
function category(t, i) {
  const n = t.nodes;
  if (i === 0) return 'root';
  if (n.state[i] === 0) return 'pending';
  const s = STATUS[n.status[i]];
  if (s === 'ok') return n.fitness[i] > 1 ? 'faster' : 'slower';
  if (s === 'suspicious' || s === 'timeout' || s === 'skipped' || s === 'compile_only') return s;
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
      ' (' + fx(r[MF.speedup]) + ', ' + pct(r[MF.roofline_fraction]) + ' of roofline' +
      (r[MF.attainable_fraction] > 0 ? ', ' + pct(r[MF.attainable_fraction]) + ' of attainable' : '') + ')';
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
    // PyTorch eager and torch.compile beside the baseline, where measured.
    const torch = rows.some((r) => r[MF.torch_eager_median_s] > 0 || r[MF.torch_compile_median_s] > 0);
    const side = (s) => '<td class="num">' + (s > 0 ? secs(s) : '-') + '</td>';
    // the attainable ceiling beside the roofline, where the backend has one (mtia_emu)
    const ceiling = rows.some((r) => r[MF.attainable_fraction] > 0);
    h += '<h3>measurements</h3><div class="scroll"><table><tr><th>shape</th><th>status</th><th>max error</th>' +
      '<th>candidate</th><th>± spread</th><th>baseline</th><th>speedup</th>' +
      (torch ? '<th>torch eager</th><th>torch.compile</th>' : '') + '<th>GB/s</th><th>GFLOP/s</th>' +
      '<th>roofline</th>' + (ceiling ? '<th>attainable</th><th>bound</th>' : '') + '<th>bottleneck</th></tr>';
    rows.forEach((r) => {
      const timedShape = !r[MF.holdout] && r[MF.candidate_median_s] > 0;
      h += '<tr><td>' + esc(r[MF.shape]) + (r[MF.holdout] ? ' (holdout)' : '') + '</td><td>' + esc(r[MF.status]) +
        '</td><td class="num">' + Number(r[MF.max_abs_error]).toExponential(1) + '</td>' +
        (timedShape
          ? '<td class="num">' + secs(r[MF.candidate_median_s]) + '</td><td class="num">' +
            secs((r[MF.candidate_p90_s] - r[MF.candidate_p10_s]) / 2) + '</td><td class="num">' +
            secs(r[MF.baseline_median_s]) + '</td><td class="num">' + fx(r[MF.speedup]) + '</td>' +
            (torch ? side(r[MF.torch_eager_median_s]) + side(r[MF.torch_compile_median_s]) : '') + '<td class="num">' +
            num(r[MF.achieved_gbs], 1) + '</td><td class="num">' + num(r[MF.achieved_gflops], 1) + '</td><td class="num">' +
            pct(r[MF.roofline_fraction]) + '</td>' +
            (ceiling ? '<td class="num">' + (r[MF.attainable_fraction] > 0 ? pct(r[MF.attainable_fraction]) : '-') +
              '</td><td>' + esc(r[MF.bound] || '-') + '</td>' : '') + '<td>' + esc(r[MF.bottleneck]) + '</td>'
          : '<td colspan="' + ((torch ? 10 : 8) + (ceiling ? 2 : 0)) + '" class="muted">verified, not timed</td>') + '</tr>';
    });
    h += '</table></div>';
    // The backend's profile of the timed call, where it profiled (mtia_emu, cuda with Nsight Compute).
    const profiled = rows.filter((r) => r[MF.profile]);
    if (profiled.length)
      h += '<h3>profile</h3><ul>' + profiled.map((r) => '<li>' + esc(r[MF.shape]) + ': ' + esc(r[MF.profile]) + '</li>').join('') +
        '</ul>';
  }
  const exchanges = [];
  full.llm.forEach((x, k) => { if (x.node === i) exchanges.push(k); });
  if (exchanges.length) h += llmSection(full, exchanges);
  if (full.code[i]) h += '<h3>code</h3><pre class="code"></pre>';
  m.panel.innerHTML = h;
  const reason = m.panel.querySelector('pre.reason'), code = m.panel.querySelector('pre.code');
  if (reason) reason.textContent = full.reason[i];
  if (code) code.textContent = full.code[i];
  if (exchanges.length) fillLlmSection(m.panel, full);
  drawTree(m);
}

// ---------- a node's LLM requests: what was sent, what came back ----------
const LLM_OUTCOME = {
  ok: 'usable', unusable: 'not usable', failed: 'request failed', over_budget: 'not sent: the budget is spent',
  unavailable: 'not sent: no endpoint available',
};
function messageText(msg) { return typeof msg.content === 'string' ? msg.content : JSON.stringify(msg.content, null, 2); }

function llmSection(full, exchanges) {
  let h = '<h3>LLM ' + (exchanges.length > 1 ? 'requests (' + exchanges.length + ')' : 'request') + '</h3>';
  exchanges.forEach((k, j) => {
    const x = full.llm[k];
    let chars = 0;
    x.messages.forEach((msg) => { chars += messageText(msg).length; });
    h += '<div class="llm-exchange" data-exchange="' + k + '" data-status="' + esc(x.status) + '">' +
      (exchanges.length > 1 ? '<h4>request ' + (j + 1) + '</h4>' : '') + '<table>';
    const row = (field, k2, v) => { h += '<tr data-field="' + field + '"><th>' + k2 + '</th><td>' + v + '</td></tr>'; };
    row('outcome', 'reply', esc(LLM_OUTCOME[x.status] || x.status));
    if (x.error) row('error', x.status === 'ok' ? 'note' : 'why', esc(x.error));
    row('model', 'model', esc(x.model) + (x.endpoint && x.endpoint !== x.model ? ' <span class="muted">(' + esc(x.endpoint) + ')</span>' : ''));
    row('tokens', 'tokens in / out', x.prompt_tokens + ' / ' + x.completion_tokens +
      (x.tokens_estimated ? ' <span class="muted">(estimated: the server sent no usage)</span>' : ''));
    row('latency', 'latency', secs(x.latency_s) + (x.total_s > x.latency_s ? ' <span class="muted">(' + secs(x.total_s) +
      ' with retries and waits)</span>' : ''));
    row('attempts', 'attempts', x.attempts);
    row('cost', 'cost', costText(x.cost));
    row('prompt_ms', 'prompt built in', num(x.prompt_ms, 1) + ' ms');
    row('documents', 'retrieved documents', x.documents.length ? x.documents.map(esc).join('<br>') : '-');
    h += '</table><details class="llm-prompt"><summary>prompt: ' + x.messages.length + ' message' +
      (x.messages.length === 1 ? '' : 's') + ', ' + chars + ' characters</summary>';
    x.messages.forEach((msg, mi) => {
      h += '<details class="llm-message" data-message="' + mi + '"><summary>' + esc(msg.role) + ' · ' +
        messageText(msg).length + ' characters</summary><pre class="llm-text"></pre></details>';
    });
    h += '</details><details class="llm-reply" open><summary>reply: ' + x.reply.length + ' characters</summary>' +
      '<pre class="llm-text"></pre></details></div>';
  });
  return h;
}

// The reply is filled now; each message when it is opened (prompts are long).
function fillLlmSection(panel, full) {
  panel.querySelectorAll('div.llm-exchange').forEach((div) => {
    const x = full.llm[Number(div.dataset.exchange)];
    div.querySelector('details.llm-reply pre').textContent = x.reply;
    div.querySelectorAll('details.llm-message').forEach((d) => {
      d.addEventListener('toggle', () => {
        const pre = d.querySelector('pre');
        if (!d.open || pre.dataset.filled) return;
        pre.textContent = messageText(x.messages[Number(d.dataset.message)]);
        pre.dataset.filled = '1';
      });
    });
  });
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
