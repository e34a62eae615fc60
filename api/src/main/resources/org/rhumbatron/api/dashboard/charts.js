// The last 15 minutes as core sampled them (GET /api/charts): Events and Commands per second,
// consumer lag, outbox backlog, open dead letters, archive lag. Plain SVG polylines; the page keeps
// the samples it has and asks only for newer ones.
'use strict';
(function () {
  const { $, el, svg, get } = Rh;
  const W = 560;
  const H = 150;
  const PAD = { l: 46, r: 8, t: 8, b: 20 };
  const COLOURS = ['#1f6feb', '#d1242f', '#1a7f37', '#9a6700', '#8250df', '#bf3989', '#0a7f8f',
    '#57606a', '#fb8500'];
  const CHARTS = [
    { id: 'chart-events', title: 'Events per second: published, applied by each consumer',
      match: (k) => k === 'events.published' || k.startsWith('events.applied.'),
      name: (k) => k.replace('events.applied.', 'applied ').replace('events.', '') },
    { id: 'chart-commands', title: 'Commands handled per second, by queue',
      match: (k) => k.startsWith('commands.'), name: (k) => k.slice('commands.'.length) },
    { id: 'chart-lag', title: 'Consumer lag (messages not yet delivered)',
      match: (k) => k.startsWith('lag.'), name: (k) => k.slice('lag.'.length) },
    { id: 'chart-outbox', title: 'Outbox backlog (rows)', match: (k) => k === 'outbox.backlog',
      name: () => 'backlog' },
    { id: 'chart-dead', title: 'Open dead letters', match: (k) => k === 'deadLetters.open',
      name: () => 'open' },
    { id: 'chart-archive', title: 'Archive lag (seconds since its oldest unread Event)',
      match: (k) => k === 'archive.lagSeconds', name: () => 'audit-archiver' },
  ];
  const state = { samples: [], span: 900000, every: 2 };

  async function refresh() {
    const last = state.samples.length ? state.samples[state.samples.length - 1].at : null;
    const answer = await get('/api/charts' + (last === null ? '' : '?since=' + last));
    if (!answer.ok) return;
    state.span = answer.body.spanSeconds * 1000;
    state.every = answer.body.everySeconds;
    state.samples.push(...answer.body.samples);
    const newest = state.samples.length ? state.samples[state.samples.length - 1].at : 0;
    state.samples = state.samples.filter((s) => s.at >= newest - state.span);
    if (answer.body.samples.length || !$('chart-events').childNodes.length) drawAll(newest);
  }

  function drawAll(newest) {
    $('charts-note').textContent = state.samples.length + ' samples, one every '
      + state.every + ' s, of the last ' + Math.round(state.span / 60000) + ' minutes';
    const keys = [];
    for (const s of state.samples) {
      for (const k of Object.keys(s.values)) if (!keys.includes(k)) keys.push(k);
    }
    for (const c of CHARTS) draw(c, keys.filter(c.match), newest);
  }

  function draw(chart, keys, newest) {
    const from = newest - state.span;
    let max = 0;
    for (const s of state.samples) {
      for (const k of keys) if (s.values[k] !== null && s.values[k] > max) max = s.values[k];
    }
    const top = niceTop(max);
    const x = (t) => PAD.l + ((t - from) / state.span) * (W - PAD.l - PAD.r);
    const y = (v) => H - PAD.b - (v / top) * (H - PAD.t - PAD.b);
    const parts = [
      svg('line', { class: 'axis', x1: PAD.l, y1: H - PAD.b, x2: W - PAD.r, y2: H - PAD.b }),
      svg('line', { class: 'axis', x1: PAD.l, y1: PAD.t, x2: PAD.l, y2: H - PAD.b }),
      svg('text', { class: 'tick', x: PAD.l - 4, y: PAD.t + 8, 'text-anchor': 'end',
        text: fmt(top) }),
      svg('text', { class: 'tick', x: PAD.l - 4, y: H - PAD.b, 'text-anchor': 'end', text: '0' }),
      svg('text', { class: 'tick', x: PAD.l, y: H - 5, text: '−15 min' }),
      svg('text', { class: 'tick', x: W - PAD.r, y: H - 5, 'text-anchor': 'end', text: 'now' }),
    ];
    const legend = [];
    keys.forEach((k, i) => {
      const pts = state.samples.filter((s) => s.values[k] !== null && s.values[k] !== undefined);
      const colour = COLOURS[i % COLOURS.length];
      const last = pts.length ? pts[pts.length - 1].values[k] : null;
      parts.push(svg('polyline', { class: 'series', 'data-series': k, stroke: colour,
        'data-count': pts.length, 'data-last': last === null ? '' : last,
        'data-max': Math.max(0, ...pts.map((s) => s.values[k])),
        points: pts.map((s) => x(s.at).toFixed(1) + ',' + y(s.values[k]).toFixed(1)).join(' ') }));
      legend.push(el('span', { class: 'legend', 'data-series': k },
        el('span', { class: 'swatch', style: 'background:' + colour }),
        chart.name(k) + ' ' + (last === null ? '?' : fmt(last))));
    });
    const box = $(chart.id);
    box.setAttribute('viewBox', `0 0 ${W} ${H}`);
    box.setAttribute('width', W);
    box.setAttribute('height', H);
    box.replaceChildren(...parts);
    $(chart.id + '-legend').replaceChildren(...legend);
  }

  function niceTop(max) {
    if (max <= 0) return 1;
    const p = Math.pow(10, Math.floor(Math.log10(max)));
    for (const m of [1, 2, 5, 10]) if (max <= m * p) return m * p;
    return 10 * p;
  }

  const fmt = (v) => (v >= 100 || Number.isInteger(v) ? String(Math.round(v)) : v.toFixed(1));

  function start() {
    $('charts').replaceChildren(...CHARTS.map((c) => el('figure', { class: 'chart' },
      el('figcaption', { text: c.title }),
      svg('svg', { id: c.id, class: 'chart-svg', role: 'img', 'aria-label': c.title }),
      el('div', { id: c.id + '-legend', class: 'legends' }))));
  }

  Rh.charts = { refresh, start };
})();
