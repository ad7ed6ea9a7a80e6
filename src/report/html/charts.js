// kevolve HTML report, part 3 of 4: fitness over evaluations, roofline,
// failure groups.
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
