// app.js -- draws the adaload results page from window.ADALOAD_DASHBOARD (data.js, written
// by `adaload dashboard`; its fields are described in dashboard/dashboard.h). Every chart is
// SVG made here, with a tooltip on hover (run, commit, numbers) and a table view under it.
// Nothing is fetched: the page works from file:// with no network.
(function () {
  'use strict';
  var SVGNS = 'http://www.w3.org/2000/svg';
  var COLORS = { naive: '#e6550d', row_per_warp: '#3182bd', dtile: '#31a354',
                 torch_eager: '#7f7f7f', torch_compile: '#4d4d4d' };
  var EXTRA = ['#9467bd', '#8c564b', '#e377c2', '#17becf', '#bcbd22', '#d62728'];
  var chartCount = 0;

  function color(name, i) { return COLORS[name] || EXTRA[i % EXTRA.length]; }
  function el(tag, attrs, text) {
    var e = document.createElement(tag);
    if (attrs) Object.keys(attrs).forEach(function (k) { e.setAttribute(k, attrs[k]); });
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }
  function sv(tag, attrs) {
    var e = document.createElementNS(SVGNS, tag);
    if (attrs) Object.keys(attrs).forEach(function (k) { e.setAttribute(k, attrs[k]); });
    return e;
  }
  function fmt(v, digits) {
    if (v === null || v === undefined || isNaN(v)) return '-';
    var a = Math.abs(v);
    if (digits !== undefined) return v.toFixed(digits);
    return a >= 100 ? v.toFixed(1) : a >= 10 ? v.toFixed(2) : a >= 1 ? v.toFixed(3) : v.toPrecision(3);
  }
  function short(h) { return h ? String(h).slice(0, 8) : '-'; }
  function sha7(s) { return s ? String(s).slice(0, 7) : '-'; }
  // Axis label of a run: its UTC date and time (the commit is in the tooltip and the table).
  function runLabel(r) { return r.time.slice(5, 16).replace('T', ' '); }

  // ---- tooltip ---------------------------------------------------------------------------
  var tip = document.getElementById('tip');
  function withTip(node, text) {
    node.setAttribute('data-tip', text);
    var t = sv('title');
    t.textContent = text;
    node.appendChild(t);
    return node;
  }
  document.addEventListener('mouseover', function (e) {
    var t = e.target.closest ? e.target.closest('[data-tip]') : null;
    if (!t) { tip.hidden = true; return; }
    tip.textContent = t.getAttribute('data-tip');
    tip.hidden = false;
  });
  document.addEventListener('mousemove', function (e) {
    if (tip.hidden) return;
    tip.style.left = Math.min(e.clientX + 14, window.innerWidth - 540) + 'px';
    tip.style.top = (e.clientY + 14) + 'px';
  });

  // ---- scales ----------------------------------------------------------------------------
  function niceTicks(lo, hi, n) {
    if (!(hi > lo)) { hi = lo + 1; }
    var step = Math.pow(10, Math.floor(Math.log10((hi - lo) / n)));
    var err = (hi - lo) / n / step;
    step *= err >= 7.5 ? 10 : err >= 3.5 ? 5 : err >= 1.5 ? 2 : 1;
    var ticks = [];
    for (var v = Math.floor(lo / step) * step; v <= hi + step * 1e-9; v += step) ticks.push(+v.toPrecision(12));
    return ticks;
  }

  // A chart card: caption, legend, svg, table view. Returns {fig, svg}.
  function card(parent, id, caption, legend, wide) {
    var fig = el('figure', { 'class': 'chart' + (wide ? ' wide' : ''), 'data-chart': id, id: 'chart-' + (++chartCount) });
    fig.appendChild(el('figcaption', null, caption));
    var lg = el('div', { 'class': 'legend' });
    legend.forEach(function (s) {
      var span = el('span');
      var sw = el('i', { 'class': s.dashed ? 'dashed' : '' });
      sw.style.background = s.color;
      span.appendChild(sw);
      span.appendChild(document.createTextNode(s.name));
      lg.appendChild(span);
    });
    fig.appendChild(lg);
    parent.appendChild(fig);
    return fig;
  }

  function tableView(fig, head, rows) {
    var d = el('details', { 'class': 'table-view' });
    d.appendChild(el('summary', null, 'table'));
    var t = el('table');
    var tr = el('tr');
    head.forEach(function (h) { tr.appendChild(el('th', null, h)); });
    t.appendChild(tr);
    rows.forEach(function (r) {
      var row = el('tr');
      r.forEach(function (c, i) { row.appendChild(el('td', i > 0 && typeof c === 'number' ? { 'class': 'num' } : null, typeof c === 'number' ? fmt(c) : c)); });
      t.appendChild(row);
    });
    d.appendChild(t);
    fig.appendChild(d);
  }

  // Line chart over categories (runs or sizes). spec: {id, caption, xs: [label], xTip: [text],
  // series: [{name, color, dashed, pts: [{x, y, tip, flag}]}], yLabel, yFrom0}
  function lineChart(parent, spec) {
    var fig = card(parent, spec.id, spec.caption, spec.series, spec.wide);
    var W = spec.wide ? 980 : 420, H = 220, L = 52, R = 10, T = 22, B = 36;
    var svg = sv('svg', { width: W, height: H, viewBox: '0 0 ' + W + ' ' + H, role: 'img' });
    var ys = [];
    spec.series.forEach(function (s) { s.pts.forEach(function (p) { if (p.y !== null && isFinite(p.y)) ys.push(p.y); }); });
    var lo = spec.yFrom0 ? 0 : Math.min.apply(null, ys), hi = Math.max.apply(null, ys);
    if (!spec.yFrom0) { var pad = (hi - lo) * 0.1 || Math.abs(hi) * 0.1 || 1; lo -= pad; hi += pad; if (lo < 0 && Math.min.apply(null, ys) >= 0) lo = 0; }
    else hi = hi * 1.08 || 1;
    var ticks = niceTicks(lo, hi, 5);
    lo = Math.min(lo, ticks[0]); hi = Math.max(hi, ticks[ticks.length - 1]);
    var nx = spec.xs.length;
    function X(i) { return nx <= 1 ? L + (W - L - R) / 2 : L + i * (W - L - R) / (nx - 1); }
    function Y(v) { return T + (H - T - B) * (1 - (v - lo) / (hi - lo)); }
    ticks.forEach(function (t) {
      svg.appendChild(sv('line', { 'class': 'gridline', x1: L, x2: W - R, y1: Y(t), y2: Y(t) }));
      var tx = sv('text', { x: L - 4, y: Y(t) + 4, 'text-anchor': 'end' }); tx.textContent = fmt(t); svg.appendChild(tx);
    });
    svg.appendChild(sv('line', { 'class': 'axis', x1: L, x2: L, y1: T, y2: H - B }));
    svg.appendChild(sv('line', { 'class': 'axis', x1: L, x2: W - R, y1: H - B, y2: H - B }));
    // Labels at least 140 px apart (a date and time is about 75 px), the last one always shown.
    var step = (W - L - R) / Math.max(1, nx - 1), every = Math.max(1, Math.ceil(140 / step)), shown = [];
    for (var k = 0; k < nx; k += every) shown.push(k);
    if (nx > 1 && shown[shown.length - 1] !== nx - 1) {
      if ((nx - 1 - shown[shown.length - 1]) * step < 140) shown.pop();
      shown.push(nx - 1);
    }
    shown.forEach(function (i) {
      // The end labels lean inwards so that they stay inside the chart.
      var anchor = nx > 1 && i === 0 ? 'start' : nx > 1 && i === nx - 1 ? 'end' : 'middle';
      var tx = sv('text', { x: X(i), y: H - B + 14, 'text-anchor': anchor }); tx.textContent = spec.xs[i]; svg.appendChild(tx);
    });
    var yl = sv('text', { x: 4, y: 12, 'text-anchor': 'start' });
    yl.textContent = spec.yLabel; svg.appendChild(yl);
    var marks = 0;
    spec.series.forEach(function (s) {
      var pts = s.pts.filter(function (p) { return p.y !== null && isFinite(p.y); });
      if (!pts.length) return;
      var d = pts.map(function (p, k) { return (k ? 'L' : 'M') + X(p.x).toFixed(1) + ' ' + Y(p.y).toFixed(1); }).join(' ');
      svg.appendChild(sv('path', { d: d, fill: 'none', stroke: s.color, 'stroke-width': s.dashed ? 1.5 : 2,
                                   'stroke-dasharray': s.dashed ? '5 3' : 'none', 'class': 'series', 'data-series': s.name }));
      pts.forEach(function (p) {
        var c = sv('circle', { cx: X(p.x), cy: Y(p.y), r: s.dashed ? 2.5 : 3.5, fill: s.color, 'class': 'mark' });
        svg.appendChild(withTip(c, s.name + '\n' + p.tip));
        marks++;
        if (p.flag) {
          var ring = sv('circle', { cx: X(p.x), cy: Y(p.y), r: 8, 'class': 'regression-point', 'data-name': p.flag });
          svg.appendChild(withTip(ring, 'REGRESSION ' + s.name + '\n' + p.tip));
        }
        if (p.drift) {
          var sq = sv('rect', { x: X(p.x) - 7, y: Y(p.y) - 7, width: 14, height: 14, 'class': 'drift-point', 'data-name': p.drift });
          svg.appendChild(withTip(sq, 'ENVIRONMENT DRIFT (same code, other machine) ' + s.name + '\n' + p.tip));
        }
      });
    });
    fig.insertBefore(svg, fig.lastChild.nextSibling);
    fig.setAttribute('data-series', String(spec.series.length));
    fig.setAttribute('data-points', String(marks));
    fig.setAttribute('data-rendered', marks > 0 ? '1' : '0');
    var head = ['x'].concat(spec.series.map(function (s) { return s.name; }));
    var rows = spec.xs.map(function (lab, i) {
      return [spec.xTip ? spec.xTip[i] : lab].concat(spec.series.map(function (s) {
        var p = s.pts.filter(function (q) { return q.x === i; })[0];
        return p && p.y !== null ? p.y : '-';
      }));
    });
    tableView(fig, head, rows);
    return fig;
  }

  // Grouped bars: spec {id, caption, cats: [label], series: [{name, color, vals: [v|null], tips: [text]}], yLabel}
  function barChart(parent, spec) {
    var fig = card(parent, spec.id, spec.caption, spec.series, true);
    var W = 980, H = 300, L = 52, R = 10, T = 22, B = 110;
    var svg = sv('svg', { width: W, height: H, viewBox: '0 0 ' + W + ' ' + H, role: 'img' });
    var ys = [];
    spec.series.forEach(function (s) { s.vals.forEach(function (v) { if (v !== null && isFinite(v)) ys.push(v); }); });
    var hi = (Math.max.apply(null, ys.concat([0])) * 1.08) || 1;
    var ticks = niceTicks(0, hi, 5);
    hi = Math.max(hi, ticks[ticks.length - 1]);
    function Y(v) { return T + (H - T - B) * (1 - v / hi); }
    ticks.forEach(function (t) {
      svg.appendChild(sv('line', { 'class': 'gridline', x1: L, x2: W - R, y1: Y(t), y2: Y(t) }));
      var tx = sv('text', { x: L - 4, y: Y(t) + 4, 'text-anchor': 'end' }); tx.textContent = fmt(t); svg.appendChild(tx);
    });
    svg.appendChild(sv('line', { 'class': 'axis', x1: L, x2: W - R, y1: H - B, y2: H - B }));
    var gw = (W - L - R) / Math.max(1, spec.cats.length), bw = gw * 0.8 / Math.max(1, spec.series.length);
    var marks = 0;
    spec.cats.forEach(function (cat, i) {
      var tx = sv('text', { x: L + gw * (i + 0.5), y: H - B + 12, 'text-anchor': 'end',
                            transform: 'rotate(-30 ' + (L + gw * (i + 0.5)) + ' ' + (H - B + 12) + ')' });
      tx.textContent = cat; svg.appendChild(tx);
      spec.series.forEach(function (s, k) {
        var v = s.vals[i];
        if (v === null || !isFinite(v)) return;
        var r = sv('rect', { x: L + gw * i + gw * 0.1 + bw * k, y: Y(v), width: Math.max(1, bw - 1), height: Math.max(0.5, Y(0) - Y(v)),
                             fill: s.color, 'class': 'mark' });
        svg.appendChild(withTip(r, s.tips[i]));
        marks++;
      });
    });
    var yl = sv('text', { x: 4, y: 12 }); yl.textContent = spec.yLabel; svg.appendChild(yl);
    fig.insertBefore(svg, fig.lastChild.nextSibling);
    fig.setAttribute('data-series', String(spec.series.length));
    fig.setAttribute('data-points', String(marks));
    fig.setAttribute('data-rendered', marks > 0 ? '1' : '0');
    tableView(fig, ['shape'].concat(spec.series.map(function (s) { return s.name; })),
              spec.cats.map(function (c, i) { return [c].concat(spec.series.map(function (s) { return s.vals[i] === null ? '-' : s.vals[i]; })); }));
    return fig;
  }

  // ---- benchmark names -------------------------------------------------------------------
  // Names and shapes come parsed from the data (the program's one parser, runfiles/run_name.h):
  // lnmod_fwd|lnmod_bwd|lnmod_res_fwd|lnmod_res_bwd/<variant>/<shape>; the op and shape are the chart,
  // the variant the series.
  function parseName(n) { return (D.names || {})[n] || null; }
  function shapeOf(shape) { return (D.shapes || {})[shape] || {}; }
  function shapeD(shape) { return shapeOf(shape).D || 0; }
  function shapeRows(shape) { return shapeOf(shape).rows || 0; }
  function isPeer(v) { return v.indexOf('torch') === 0; }
  function shapeOrder(a, b) {
    var da = shapeOf(a).dtypes || '', db = shapeOf(b).dtypes || '';
    return shapeD(a) - shapeD(b) || (da < db ? -1 : da > db ? 1 : 0) ||
      shapeRows(a) - shapeRows(b) || (a < b ? -1 : a > b ? 1 : 0);
  }
  function variantOrder(vs) {
    var known = ['naive', 'row_per_warp', 'dtile'];
    return vs.slice().sort(function (a, b) {
      var ia = known.indexOf(a), ib = known.indexOf(b);
      if (isPeer(a) !== isPeer(b)) return isPeer(a) ? 1 : -1;
      if (ia >= 0 && ib >= 0) return ia - ib;
      if (ia >= 0 || ib >= 0) return ia >= 0 ? -1 : 1;
      return a < b ? -1 : a > b ? 1 : 0;
    });
  }

  // ---- sections --------------------------------------------------------------------------
  function verdictTable(rows, runs, cls, extra) {
    var t = el('table', { 'class': cls + 's' });
    var h = el('tr');
    ['run', 'previous run like it', 'benchmark', 'before (us)', 'after (us)', 'ratio', 'needed', 'p'].concat(extra ? [extra] : [])
      .forEach(function (x) { h.appendChild(el('th', null, x)); });
    t.appendChild(h);
    rows.forEach(function (r) {
      var tr = el('tr', { 'class': cls, 'data-name': r.name, 'data-run': runs[r.run].run });
      [runs[r.run].run + ' (' + sha7(runs[r.run].git_sha) + ')', runs[r.prev].run + ' (' + sha7(runs[r.prev].git_sha) + ')', r.name]
        .forEach(function (x) { tr.appendChild(el('td', null, x)); });
      [r.before_us, r.after_us, r.ratio].forEach(function (x) { tr.appendChild(el('td', { 'class': 'num' }, fmt(x))); });
      tr.appendChild(el('td', { 'class': 'num' }, '> ' + fmt(100 * r.band, 1) + '%' + (r.banded ? ' (own noise band)' : ' (threshold)')));
      tr.appendChild(el('td', { 'class': 'num' }, r.p.toPrecision(2)));
      if (extra) tr.appendChild(el('td', null, r.machine || ''));
      t.appendChild(tr);
    });
    return t;
  }

  function regressionsSection(sec, tb) {
    sec.appendChild(el('h3', { id: 'regressions-' + tb.name }, 'Regressions against the history'));
    sec.appendChild(el('p', { 'class': 'note' }, '`adaload compare --history` of each bench run: against the previous run of its own set and repetition count (Mann-Whitney U over the repetitions, p < ' +
      D.alpha + '); a benchmark with ' + 3 + ' or more earlier runs of that run\'s kernel code must leave its own run-to-run noise band over them (4 robust standard deviations, at least 2%), one with fewer the fixed threshold ' +
      D.threshold + '. The same kernel code on another machine (GPU, driver, clocks, copy bandwidth) or in another state is environment drift, listed apart. The PyTorch peers are not judged.'));
    var runs = tb.bench_runs;
    if (!tb.regressions.length) sec.appendChild(el('p', { 'class': 'ok', id: 'no-regressions-' + tb.name }, 'No regression flagged.'));
    else {
      sec.appendChild(el('p', { 'class': 'flag' }, tb.regressions.length + ' regression(s) flagged.'));
      sec.appendChild(verdictTable(tb.regressions, runs, 'regression'));
    }
    var drift = tb.drift || [];
    if (drift.length) {
      var why = {};
      tb.compares.forEach(function (c) { why[c.run] = c.machine; });
      drift.forEach(function (r) { r.machine = why[r.run]; });
      sec.appendChild(el('p', { 'class': 'drift-note', id: 'drift-' + tb.name }, drift.length + ' benchmark(s) moved with the machine, not the code (environment drift: same kernel sources and build, other machine).'));
      sec.appendChild(verdictTable(drift, runs, 'drift', 'machine'));
    }
    if (tb.compares.length) {
      var d = el('details');
      d.appendChild(el('summary', null, 'every comparison (' + tb.compares.length + ')'));
      var ct = el('table');
      var hh = el('tr');
      ['run', 'previous run like it', 'set', 'band runs', 'slower', 'faster', 'same', 'too few repetitions', 'drift', 'machine'].forEach(function (x) { hh.appendChild(el('th', null, x)); });
      ct.appendChild(hh);
      tb.compares.forEach(function (c) {
        var tr = el('tr', c.slower ? { 'class': 'compare-slower' } : null);
        tr.appendChild(el('td', null, runs[c.run].run));
        tr.appendChild(el('td', null, runs[c.prev].run));
        tr.appendChild(el('td', null, c.set));
        tr.appendChild(el('td', { 'class': 'num' }, c.band_runs ? String(c.band_runs) : 'pair rule'));
        [c.slower, c.faster, c.same, c.too_few, c.drift].forEach(function (x) { tr.appendChild(el('td', { 'class': 'num' }, String(x))); });
        tr.appendChild(el('td', null, c.machine));
        ct.appendChild(tr);
      });
      d.appendChild(ct);
      sec.appendChild(d);
    }
  }

  function historySection(sec, tb) {
    sec.appendChild(el('h3', { id: 'history-' + tb.name }, 'Benchmark history'));
    var runs = tb.bench_runs;
    if (!runs.length) { sec.appendChild(el('p', { 'class': 'note' }, 'No bench run on this testbed.')); return; }
    sec.appendChild(el('p', { 'class': 'note' }, runs.length + ' bench runs, oldest first. One chart per shape: median time and % of the copy of the same bytes timed in the same run; one line per variant, the PyTorch peers dashed; a red ring marks a regression against the previous run of the set, an amber square environment drift.'));
    var flags = {}, drifts = {};
    tb.regressions.forEach(function (r) { flags[r.name + '#' + r.run] = true; });
    (tb.drift || []).forEach(function (r) { drifts[r.name + '#' + r.run] = true; });
    var shapes = {};
    Object.keys(tb.series).forEach(function (n) {
      var p = parseName(n);
      if (!p) return;
      var key = p.op + '/' + p.shape;
      (shapes[key] = shapes[key] || { op: p.op, shape: p.shape, variants: {} }).variants[p.variant] = tb.series[n];
    });
    var keys = Object.keys(shapes).sort(function (a, b) { return shapeOrder(shapes[a].shape, shapes[b].shape); });
    var byD = {};
    keys.forEach(function (k) { var d = shapeD(shapes[k].shape); (byD[d] = byD[d] || []).push(k); });
    // Every group is drawn; with many hidden sizes (a sweep) only Wan's are open at first.
    var ds = Object.keys(byD).sort(function (a, b) { return a - b; });
    ds.forEach(function (d) {
      var open = ds.length <= 6 || ['1536', '3072', '5120'].indexOf(d) >= 0;
      var det = el('details', open ? { open: '' } : null);
      det.appendChild(el('summary', null, 'D = ' + d + ' (' + byD[d].length + ' shapes)'));
      var grid = el('div', { 'class': 'grid' });
      det.appendChild(grid);
      sec.appendChild(det);
      byD[d].forEach(function (k) {
        var g = shapes[k];
        var used = {};
        Object.keys(g.variants).forEach(function (v) { g.variants[v].forEach(function (p) { used[p[0]] = true; }); });
        var idx = Object.keys(used).map(Number).sort(function (a, b) { return a - b; });
        var xs = idx.map(function (i) { return runLabel(runs[i]); });
        var xTip = idx.map(function (i) { return runs[i].run + ' (' + sha7(runs[i].git_sha) + ', set ' + runs[i].set + ')'; });
        function series(metric) {
          return variantOrder(Object.keys(g.variants)).map(function (v, j) {
            return { name: v, color: color(v, j), dashed: isPeer(v), pts: g.variants[v].map(function (p) {
              var r = runs[p[0]];
              return { x: idx.indexOf(p[0]), y: metric === 'us' ? p[1] : p[2],
                       tip: r.run + '\ncommit ' + sha7(r.git_sha) + '  kernels ' + short(r.kernel_hash_v1) + '\n' + fmt(p[1]) + ' us, ' +
                            (p[2] === null ? '-' : fmt(p[2], 1) + '% of copy') + ', ' + p[3] + ' repetitions',
                       flag: flags[g.op + '/' + v + '/' + g.shape + '#' + p[0]] ? g.op + '/' + v + '/' + g.shape : null,
                       drift: drifts[g.op + '/' + v + '/' + g.shape + '#' + p[0]] ? g.op + '/' + v + '/' + g.shape : null };
            }) };
          });
        }
        lineChart(grid, { id: 'history-us/' + k, caption: k + ' - time', xs: xs, xTip: xTip, series: series('us'), yLabel: 'us (median)' });
        var pct = series('pct');
        if (pct.some(function (s) { return s.pts.some(function (p) { return p.y !== null; }); }))
          lineChart(grid, { id: 'history-pct/' + k, caption: k + ' - % of copy', xs: xs, xTip: xTip, series: pct, yLabel: '% of copy', yFrom0: true });
      });
    });
  }

  // The shapes of one run: {shape: {variant: [i, us, pct, reps]}}
  function runShapes(tb, i) {
    var out = {};
    Object.keys(tb.series).forEach(function (n) {
      var p = parseName(n);
      if (!p) return;
      tb.series[n].forEach(function (q) { if (q[0] === i) (out[p.op + '/' + p.shape] = out[p.op + '/' + p.shape] || {})[p.variant] = q; });
    });
    return out;
  }

  function latestSection(sec, tb) {
    sec.appendChild(el('h3', { id: 'latest-' + tb.name }, 'Latest run: variant comparison'));
    if (tb.latest < 0) { sec.appendChild(el('p', { 'class': 'note' }, 'No bench run.')); return; }
    var r = tb.bench_runs[tb.latest];
    sec.appendChild(el('p', { 'class': 'note' }, r.run + ' (commit ' + sha7(r.git_sha) + ', set ' + r.set + (r.with_peers ? ', with peers' : '') + ').'));
    var sh = runShapes(tb, tb.latest);
    var cats = Object.keys(sh).sort(function (a, b) { return shapeOrder(a.split('/').slice(1).join('/'), b.split('/').slice(1).join('/')); });
    var vs = {};
    cats.forEach(function (c) { Object.keys(sh[c]).forEach(function (v) { vs[v] = true; }); });
    var anyPct = cats.some(function (c) { return Object.keys(sh[c]).some(function (v) { return sh[c][v][2] !== null; }); });
    var series = variantOrder(Object.keys(vs)).map(function (v, j) {
      return { name: v, color: color(v, j), dashed: false,
               vals: cats.map(function (c) { var q = sh[c][v]; return q ? (anyPct ? q[2] : q[1]) : null; }),
               tips: cats.map(function (c) { var q = sh[c][v]; return q ? v + '  ' + c + '\n' + r.run + '  commit ' + sha7(r.git_sha) + '\n' + fmt(q[1]) + ' us, ' + (q[2] === null ? '-' : fmt(q[2], 1) + '% of copy') : ''; }) };
    });
    barChart(sec, { id: 'latest/' + r.run, caption: 'variants at each shape, ' + r.run, cats: cats.map(function (c) { return c.replace(/^lnmod_fwd\//, '').replace('/sample/', ' '); }), series: series, yLabel: anyPct ? '% of copy' : 'us (median)' });
    var peers = Object.keys(vs).filter(isPeer);
    if (peers.length) {
      var t = el('table');
      var h = el('tr');
      ['shape', 'variant', 'us'].concat(peers.map(function (p) { return 'x ' + p; })).forEach(function (x) { h.appendChild(el('th', null, x)); });
      t.appendChild(h);
      cats.forEach(function (c) {
        variantOrder(Object.keys(sh[c])).filter(function (v) { return !isPeer(v); }).forEach(function (v) {
          var tr = el('tr');
          tr.appendChild(el('td', null, c));
          tr.appendChild(el('td', null, v));
          tr.appendChild(el('td', { 'class': 'num' }, fmt(sh[c][v][1])));
          peers.forEach(function (p) { tr.appendChild(el('td', { 'class': 'num' }, sh[c][p] ? fmt(sh[c][p][1] / sh[c][v][1], 2) + 'x' : '-')); });
          t.appendChild(tr);
        });
      });
      sec.appendChild(el('h4', null, 'Against the PyTorch peers (their time over ours, same run)'));
      sec.appendChild(t);
    }
  }

  function sweepSection(sec, tb) {
    sec.appendChild(el('h3', { id: 'sweep-' + tb.name }, 'Sweep over the hidden size'));
    if (tb.sweep < 0) { sec.appendChild(el('p', { 'class': 'note' }, 'No run of set "sweep" on this testbed yet (adaload bench --set sweep).')); return; }
    var r = tb.bench_runs[tb.sweep];
    var sh = runShapes(tb, tb.sweep);
    var byDtype = {};
    Object.keys(sh).forEach(function (c) {
      var shape = c.split('/').slice(1).join('/'), sp = shapeOf(shape);
      var key = sp.dtypes + ' ' + sp.layout + ' rows' + sp.rows;
      (byDtype[key] = byDtype[key] || []).push(c);
    });
    var grid = el('div', { 'class': 'grid' });
    sec.appendChild(grid);
    Object.keys(byDtype).sort().forEach(function (key) {
      var dOf = function (c) { return shapeD(c.split('/').slice(1).join('/')); };
      var cs = byDtype[key].sort(function (a, b) { return dOf(a) - dOf(b); });
      var vs = {};
      cs.forEach(function (c) { Object.keys(sh[c]).forEach(function (v) { vs[v] = true; }); });
      var series = variantOrder(Object.keys(vs)).map(function (v, j) {
        return { name: v, color: color(v, j), dashed: isPeer(v), pts: cs.map(function (c, i) {
          var q = sh[c][v];
          return q ? { x: i, y: q[2] !== null ? q[2] : null, tip: c + '\n' + r.run + '  commit ' + sha7(r.git_sha) + '\n' + fmt(q[1]) + ' us, ' + (q[2] === null ? '-' : fmt(q[2], 1) + '% of copy') } : { x: i, y: null };
        }) };
      });
      lineChart(grid, { id: 'sweep/' + key, caption: key + ' - % of copy against D, ' + r.run, xs: cs.map(function (c) { return 'D' + dOf(c); }), series: series, yLabel: '% of copy', yFrom0: true });
    });
  }

  function verifySection(sec, tb) {
    sec.appendChild(el('h3', { id: 'verify-' + tb.name }, 'Verification records per kernel hash'));
    if (!tb.verify.length) { sec.appendChild(el('p', { 'class': 'note' }, 'No verify run.')); return; }
    var t = el('table', { 'class': 'verify' });
    var h = el('tr');
    ['kernel hash (scheme 1)', 'scheme 2', 'run', 'commit', 'grid', 'measured', 'status'].forEach(function (x) { h.appendChild(el('th', null, x)); });
    t.appendChild(h);
    var order = tb.verify.slice().reverse();
    order.forEach(function (v) {
      var tree = v.kernel_hash_v1 === D.tree.kernel_hash_v1 || (v.kernel_hash_v2 && v.kernel_hash_v2 === D.tree.kernel_hash_v2);
      var tr = el('tr', { 'class': v.gate ? 'gate verify-status' : 'verify-status', 'data-gate': v.gate ? '1' : '0' });
      tr.appendChild(el('td', null, short(v.kernel_hash_v1) + (tree ? ' (this tree)' : '')));
      tr.appendChild(el('td', null, short(v.kernel_hash_v2)));
      tr.appendChild(el('td', null, v.run));
      tr.appendChild(el('td', null, sha7(v.git_sha)));
      tr.appendChild(el('td', null, v.grid));
      tr.appendChild(el('td', null, v.measured));
      tr.appendChild(el('td', { 'class': v.gate ? 'ok' : '' }, v.status + (v.why ? ': ' + v.why : '')));
      t.appendChild(tr);
    });
    sec.appendChild(t);
  }

  function plannerSection(sec, tb) {
    sec.appendChild(el('h3', { id: 'planner-' + tb.name }, 'Planner: CPU speed and simulated metrics'));
    if (!tb.planner.length) { sec.appendChild(el('p', { 'class': 'note' }, 'No planner run on this testbed.')); return; }
    var names = {};
    tb.planner.forEach(function (p) { p.benchmarks.forEach(function (b) { names[b.name] = true; }); });
    var ns = Object.keys(names).sort();
    if (ns.length) {
      var xs = tb.planner.map(runLabel);
      var series = ns.map(function (n, j) {
        return { name: n.replace('cpu/planner/', ''), color: EXTRA[j % EXTRA.length], dashed: false, pts: tb.planner.map(function (p, i) {
          var b = p.benchmarks.filter(function (q) { return q.name === n; })[0];
          return b ? { x: i, y: b.seconds_per_10M, tip: p.run + '  commit ' + sha7(p.git_sha) + '\n' + n + '\n' + fmt(b.seconds_per_10M) + ' s per 10M samples, ' + fmt(b.bytes_per_sample) + ' B/sample' } : { x: i, y: null };
        }) };
      });
      var grid = el('div', { 'class': 'grid' });
      sec.appendChild(grid);
      lineChart(grid, { id: 'planner-speed/' + tb.name, caption: 'planning time scaled to 10M samples (read + plan + simulate, one core)', xs: xs,
                        xTip: tb.planner.map(function (p) { return p.run; }), series: series, yLabel: 's per 10M samples', yFrom0: true });
    }
    var plans = [];
    tb.planner.forEach(function (p) { p.plans.forEach(function (q) { plans.push([p, q]); }); });
    if (plans.length) {
      var keys = ['epoch_idle_fraction', 'mean_step_idle_fraction', 'vram_util_mean', 'vram_util_max', 'samples_per_s', 'tokens_per_s', 'over_memory_microbatches'];
      var t = el('table', { 'class': 'plans' });
      var h = el('tr');
      ['run', 'file', 'model', 'policy', 'assign'].concat(keys).forEach(function (x) { h.appendChild(el('th', null, x)); });
      t.appendChild(h);
      plans.forEach(function (pq) {
        var tr = el('tr');
        [pq[0].run, pq[1].file, pq[1].model || '-', pq[1].policy, pq[1].assign || '-'].forEach(function (x) { tr.appendChild(el('td', null, x)); });
        keys.forEach(function (k) { tr.appendChild(el('td', { 'class': 'num' }, fmt(pq[1].metrics[k]))); });
        t.appendChild(tr);
      });
      sec.appendChild(el('h4', null, 'Simulated metrics of the plan summaries in the runs'));
      sec.appendChild(t);
    } else {
      sec.appendChild(el('p', { 'class': 'note' }, 'No plan summary (adaload plan --summary-json) in these runs: only CPU speed.'));
    }
  }

  function otherSection(sec, tb) {
    if (!tb.other.length) return;
    sec.appendChild(el('h3', { id: 'other-' + tb.name }, 'Regression checks, explorations and end-to-end runs'));
    var t = el('table');
    var h = el('tr');
    ['kind', 'run', 'commit', 'measured'].forEach(function (x) { h.appendChild(el('th', null, x)); });
    t.appendChild(h);
    tb.other.forEach(function (o) {
      var tr = el('tr');
      [o.kind, o.run, sha7(o.git_sha), o.measured].forEach(function (x) { tr.appendChild(el('td', null, x)); });
      t.appendChild(tr);
    });
    sec.appendChild(t);
  }

  var D = window.ADALOAD_DASHBOARD;
  if (!D || !D.testbeds) throw new Error('data.js did not define window.ADALOAD_DASHBOARD');
  var app = document.getElementById('app');
  app.textContent = '';
  var nav = document.getElementById('testbeds');
  // Testbeds with benchmark history first (the GPUs), then the others, each in name order.
  var beds = D.testbeds.slice().sort(function (a, b) {
    var ha = a.bench_runs.length > 0, hb = b.bench_runs.length > 0;
    return ha !== hb ? (ha ? -1 : 1) : a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
  });
  beds.forEach(function (tb) {
    var a = el('a', { href: '#tb-' + tb.name }, tb.name);
    nav.appendChild(a);
    var sec = el('section', { 'class': 'testbed', id: 'tb-' + tb.name, 'data-testbed': tb.name });
    sec.appendChild(el('h2', null, tb.name));
    app.appendChild(sec);
    regressionsSection(sec, tb);
    historySection(sec, tb);
    latestSection(sec, tb);
    sweepSection(sec, tb);
    verifySection(sec, tb);
    plannerSection(sec, tb);
    otherSection(sec, tb);
  });
  if (!D.testbeds.length) app.appendChild(el('p', null, 'results/ holds no run.'));
  // Run folders whose files could not be read: named, with why; everything else is drawn.
  if (D.bad_runs && D.bad_runs.length) {
    var bs = el('section', { 'class': 'bad-runs', id: 'bad-runs' });
    bs.appendChild(el('h2', null, 'Bad runs (' + D.bad_runs.length + ')'));
    var bt = el('table'), bh = el('tr');
    ['run', 'why it could not be read'].forEach(function (x) { bh.appendChild(el('th', null, x)); });
    bt.appendChild(bh);
    D.bad_runs.forEach(function (b) {
      var tr = el('tr');
      [b.path, b.why].forEach(function (x) { tr.appendChild(el('td', null, x)); });
      bt.appendChild(tr);
    });
    bs.appendChild(bt);
    app.appendChild(bs);
  }
  document.getElementById('footer').textContent = 'Generated ' + D.generated + ' from ' + D.results + ' for kernel sources ' +
    short(D.tree.kernel_hash_v1) + ' (scheme 2: ' + short(D.tree.kernel_hash_v2) + ').';
  document.documentElement.setAttribute('data-charts', String(document.querySelectorAll('figure.chart').length));
  document.documentElement.setAttribute('data-ready', '1');
})();
