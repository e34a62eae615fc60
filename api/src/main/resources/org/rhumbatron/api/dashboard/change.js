// The Change page: its Task graph drawn by dependency (each Task coloured by state, with its Agent
// and attempt), its timeline of Events with the gap between them, its Candidates and verdicts, and
// its dead letters with Retry and Dismiss. It is read again on every poll while the Change runs.
'use strict';
(function () {
  const { $, el, svg, td, get, render, traceLink, projectLink, explain, duration, time } = Rh;
  const NODE_W = 180;
  const NODE_H = 48;
  const GAP_X = 60;
  const GAP_Y = 18;
  const state = { changeId: null };

  async function refresh() {
    const id = state.changeId;
    if (!id) return;
    const c = encodeURIComponent(id);
    const [change, events, candidates, dead] = await Promise.all([
      get('/api/changes/' + c), get('/api/changes/' + c + '/events'),
      get('/api/changes/' + c + '/candidates'),
      get('/api/dead-letters?state=all&limit=1000&changeId=' + c)]);
    if (state.changeId !== id) return; // another Change was opened meanwhile
    if (!change.ok) {
      render('change', { error: explain(change) }, (d) => {
        $('change-heading').replaceChildren(el('span', { class: 'error', text: d.error }));
      });
      return;
    }
    render('change', change.body, renderChange);
    if (events.ok) render('timeline', events.body.events, renderTimeline);
    if (candidates.ok) render('candidates', candidates.body.candidates, renderCandidates);
    if (dead.ok) render('change-dead', dead.body.deadLetters, renderDeadLetters);
  }

  function renderChange(ch) {
    const done = ch.tasks.filter((t) => t.state === 'completed').length;
    $('change-view').setAttribute('data-state', ch.state);
    // replaceChildren, unlike el(), would write a null child as the text "null".
    $('change-heading').replaceChildren(...[el('strong', { id: 'change-title',
      text: ch.title || ch.changeId }), ' ', el('span', { id: 'change-state',
      class: 'state state-' + ch.state, text: ch.state }),
    ' · project ', projectLink(ch.projectId), ' · ', el('code', { text: ch.changeId }),
    ' · ' + done + ' of ' + ch.tasks.length + ' Tasks done',
    ch.reason ? el('span', { class: 'error', text: ' · ' + ch.reason }) : null]
      .filter((n) => n !== null));
    drawGraph(ch.tasks);
  }

  /** Each Task's column: the longest chain of dependencies before it. */
  function layers(tasks) {
    const byRef = new Map();
    tasks.forEach((t) => { byRef.set(t.key, t); byRef.set(t.taskId, t); });
    const layer = new Map();
    const of = (t, seen) => {
      if (layer.has(t.taskId)) return layer.get(t.taskId);
      if (seen.has(t.taskId)) return 0; // a cycle the API would have refused
      seen.add(t.taskId);
      let l = 0;
      for (const d of t.dependsOn || []) {
        const dep = byRef.get(d);
        if (dep) l = Math.max(l, of(dep, seen) + 1);
      }
      layer.set(t.taskId, l);
      return l;
    };
    tasks.forEach((t) => of(t, new Set()));
    return { layer, byRef };
  }

  function drawGraph(tasks) {
    const { layer, byRef } = layers(tasks);
    const rows = [];
    const pos = new Map();
    for (const t of tasks) {
      const l = layer.get(t.taskId);
      rows[l] = (rows[l] || 0) + 1;
      pos.set(t.taskId, { x: 10 + l * (NODE_W + GAP_X), y: 10 + (rows[l] - 1) * (NODE_H + GAP_Y) });
    }
    const width = 20 + Math.max(1, rows.length) * (NODE_W + GAP_X) - GAP_X;
    const height = 20 + Math.max(1, ...rows.filter((n) => n)) * (NODE_H + GAP_Y) - GAP_Y;
    const edges = [];
    for (const t of tasks) {
      for (const d of t.dependsOn || []) {
        const dep = byRef.get(d);
        if (!dep) continue;
        const a = pos.get(dep.taskId);
        const b = pos.get(t.taskId);
        const x1 = a.x + NODE_W;
        const y1 = a.y + NODE_H / 2;
        const x2 = b.x;
        const y2 = b.y + NODE_H / 2;
        edges.push(svg('path', { class: 'task-edge', 'data-from': dep.taskId, 'data-to': t.taskId,
          d: `M${x1},${y1} C${x1 + GAP_X / 2},${y1} ${x2 - GAP_X / 2},${y2} ${x2},${y2}`,
          'marker-end': 'url(#arrow)' }));
      }
    }
    const nodes = tasks.map((t) => {
      const p = pos.get(t.taskId);
      const who = [t.state, t.agentId, t.attempt ? 'attempt ' + t.attempt : null]
        .filter((x) => x).join(' · ');
      return svg('g', { class: 'task-node state-' + t.state, 'data-task-id': t.taskId,
        'data-key': t.key, 'data-state': t.state, 'data-agent': t.agentId,
        'data-attempt': t.attempt, transform: `translate(${p.x},${p.y})` },
      svg('title', { text: t.taskId + (t.lastError ? '\n' + t.lastError : '') }),
      svg('rect', { width: NODE_W, height: NODE_H, rx: 6 }),
      svg('text', { x: 8, y: 19, class: 'task-key', text: clip(t.title || t.key, 24) }),
      svg('text', { x: 8, y: 37, class: 'task-who', text: clip(who, 30) }));
    });
    const arrow = svg('defs', {}, svg('marker', { id: 'arrow', viewBox: '0 0 10 10', refX: 9,
      refY: 5, markerWidth: 7, markerHeight: 7, orient: 'auto-start-reverse' },
    svg('path', { d: 'M0,0 L10,5 L0,10 z', class: 'arrow' })));
    const graph = $('task-graph');
    graph.setAttribute('width', width);
    graph.setAttribute('height', height);
    graph.setAttribute('viewBox', `0 0 ${width} ${height}`);
    graph.replaceChildren(arrow, ...edges, ...nodes);
  }

  const clip = (s, n) => (s && s.length > n ? s.slice(0, n - 1) + '…' : s || '');

  function renderTimeline(events) {
    let before = null;
    $('timeline-body').replaceChildren(...events.map((e, i) => {
      const at = Date.parse(e.occurredAt);
      const gap = before === null ? '' : '+' + duration(at - before);
      before = at;
      return el('tr', { class: 'timeline-event', 'data-type': e.eventType, 'data-id': e.eventId,
        'data-index': i },
      td(time(e.occurredAt) + '.' + String(at % 1000).padStart(3, '0'), 'at'), td(gap, 'gap'),
      el('td', { 'data-field': 'type' }, traceLink(e.eventId, e.eventType)),
      el('td', { 'data-field': 'taskId', title: e.taskId || '',
        text: e.taskId ? e.taskId.slice(e.taskId.lastIndexOf(':') + 1) : '' }));
    }));
    $('timeline-count').textContent = '(' + events.length + ')';
  }

  function renderCandidates(rows) {
    $('candidates-body').replaceChildren(...(rows.length ? rows.map((c) => el('tr',
      { id: 'candidate-' + c.candidateId, 'data-state': c.state },
      td(c.candidateId, 'candidateId'), td(c.baseGeneration, 'baseGeneration'),
      td(c.state, 'verdict'), td(time(c.createdAt), 'createdAt')))
      : [el('tr', {}, el('td', { colSpan: 4, class: 'muted', text: 'none yet' }))]));
  }

  function renderDeadLetters(rows) {
    $('change-dead-body').replaceChildren(...(rows.length ? rows.map((d) => el('tr',
      { id: 'change-dl-' + d.id, 'data-status': d.status, 'data-resolution': d.resolution },
      td(d.id, 'id'), el('td', {}, traceLink(d.commandId)), td(d.commandType ?? d.kind, 'type'),
      el('td', { 'data-field': 'taskId', title: d.taskId || '',
        text: d.taskId ? d.taskId.slice(d.taskId.lastIndexOf(':') + 1) : '' }),
      td(Rh.ops.statusOf(d), 'status'), td(d.reason, 'reason'),
      Rh.ops.buttons(d)))
      : [el('tr', {}, el('td', { colSpan: 7, class: 'muted', text: 'none' }))]));
  }

  function showChange(changeId) {
    state.changeId = changeId || null;
    ['change', 'timeline', 'candidates', 'change-dead'].forEach((k) => delete Rh.state.rendered[k]);
    $('change-view').hidden = !state.changeId;
    $('change-view').setAttribute('data-change', state.changeId || '');
    if (state.changeId) {
      history.replaceState(null, '', '#change=' + encodeURIComponent(state.changeId));
      $('change-view').scrollIntoView();
    }
    Rh.refresh();
  }

  function start(params) {
    const fromHash = new URLSearchParams(location.hash.slice(1)).get('change');
    const id = params.get('change') || fromHash;
    if (id) showChange(id);
  }

  Rh.show.change = showChange;
  Rh.change = { refresh, start };
})();
