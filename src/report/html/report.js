// kevolve HTML report, part 4 of 4: header, summary table, task sections,
// and the start.
// ---------- header and summary ----------
function renderHeader() {
  let evaluations = 0, nodes = 0;
  DATA.summary.forEach((s) => { evaluations += s.evaluations; });
  DATA.tasks.forEach((t) => { nodes += t.node_count; });
  document.getElementById('kv-meta').textContent =
    DATA.store + ' · kevolve ' + DATA.kevolve_version + ' · created ' + DATA.created_at + ' · ' +
    DATA.tasks.length + ' tasks · ' + evaluations + ' evaluations · ' + nodes + ' nodes';
  // What the best speedups are over: PyTorch (the faster of eager and
  // torch.compile) where it was timed, else the baseline.
  const overTorch = DATA.summary.filter((s) => (s.fitness_over || '').startsWith('× PyTorch')).length;
  const over = overTorch === DATA.summary.length ? 'PyTorch (the faster of eager and torch.compile)'
    : overTorch === 0 ? 'their baseline' : 'PyTorch (' + overTorch + ' tasks) or their baseline';
  document.getElementById('kv-headline').textContent =
    DATA.tasks_beating_baseline + ' of ' + DATA.summary.length +
    ' tasks beat ' + over + '; geometric mean of the best speedups: ' + DATA.geomean_speedup.toFixed(2) + 'x';
  document.getElementById('kv-config-text').textContent = DATA.config_yaml;
}

function renderSummary() {
  const failed = STATUS.filter((s) => s !== 'ok' && DATA.summary.some((r) => r.failures[s]));
  // PyTorch columns only where some task has PyTorch times
  const torch = DATA.summary.some((r) => r.best_vs_torch_eager > 0 || r.best_vs_torch_compile > 0);
  // the attainable ceiling beside the roofline, where a backend has one (mtia_emu)
  const ceiling = DATA.summary.some((r) => r.best_attainable_fraction > 0);
  let h = '<thead><tr><th>task</th><th>baseline</th><th>best speedup</th>' +
    (torch ? '<th>vs torch eager</th><th>vs torch.compile</th>' : '') + '<th>% of roofline</th>' +
    (ceiling ? '<th>% of attainable</th><th>bound</th>' : '') +
    '<th>evaluations</th><th>correct</th><th>to 90% of best</th>';
  failed.forEach((s) => { h += '<th>' + esc(s) + '</th>'; });
  const llm = DATA.summary.some((r) => r.llm.requests > 0);  // columns only for sweeps that used an LLM
  if (llm) h += '<th>LLM requests</th><th>LLM tokens in</th><th>LLM tokens out</th><th>LLM cost</th>';
  h += '<th>time</th><th>stopped because</th></tr></thead><tbody>';
  DATA.summary.forEach((r, i) => {
    const cell = (field, value, text) =>
      '<td class="num" data-field="' + field + '" data-value="' + value + '">' + text + '</td>';
    h += '<tr data-task="' + esc(r.task) + '"><td><button class="link" data-goto-task="' + i + '">' + esc(r.task) +
      '</button></td><td>' + esc(r.baseline) + '</td>' +
      cell('best_speedup', r.best_speedup, fx(r.best_speedup)) +
      (torch ? cell('best_vs_torch_eager', r.best_vs_torch_eager, r.best_vs_torch_eager > 0 ? fx(r.best_vs_torch_eager) : '-') +
        cell('best_vs_torch_compile', r.best_vs_torch_compile, r.best_vs_torch_compile > 0 ? fx(r.best_vs_torch_compile) : '-') : '') +
      cell('best_roofline_fraction', r.best_roofline_fraction, r.best_speedup > 0 ? pct(r.best_roofline_fraction) : '-') +
      (ceiling ? cell('best_attainable_fraction', r.best_attainable_fraction,
        r.best_attainable_fraction > 0 ? pct(r.best_attainable_fraction) : '-') +
        '<td data-field="best_bound">' + esc(r.best_bound || '-') + '</td>' : '') +
      cell('evaluations', r.evaluations, r.evaluations) + cell('correct', r.correct, r.correct) +
      cell('evaluations_to_90pct', r.evaluations_to_90pct, r.evaluations_to_90pct || '-');
    failed.forEach((s) => { h += cell('failures_' + s, r.failures[s] || 0, r.failures[s] || '-'); });
    if (llm)
      h += cell('llm_requests', r.llm.requests, r.llm.requests) +
        cell('llm_prompt_tokens', r.llm.prompt_tokens, r.llm.prompt_tokens) +
        cell('llm_completion_tokens', r.llm.completion_tokens, r.llm.completion_tokens) +
        cell('llm_cost', r.llm.cost, costText(r.llm.cost));
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
    d.innerHTML = '<summary>' + esc(t.id) + ' — best ' + fx(s.best_speedup) + ' ' +
      esc(s.fitness_over || ('× baseline (' + t.baseline + ')')) + ', ' +
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
