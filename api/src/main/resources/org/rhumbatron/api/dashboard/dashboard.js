// The operator's dashboard: polls core's JSON routes every 2 s and renders them; writes (Retry,
// Dismiss) carry the token from the field, kept in localStorage, or from ?token=.
'use strict';
(function () {
  const REFRESH_MS = 2000;
  // Shorter than the refresh, so a core or NATS that hangs never stacks requests up.
  const TIMEOUT_MS = 1800;
  const TOKEN_KEY = 'rhumbatron.token';
  const PROJECT_KEY = 'rhumbatron.project';
  const EVENT_CONSUMERS = ['project-view-projector', 'causal-router', 'audit-archiver',
    'analytics-projector'];
  const PROJECTION = 'project-view-projector';
  const RECENT_EVENTS = 50;
  // Dead letters acted on here stay listed after they close; the newest ones only.
  const ACTED_KEPT = 100;

  const $ = (id) => document.getElementById(id);
  const params = new URLSearchParams(location.search);
  const state = {
    project: null, cursor: null, events: [], traceId: null, acted: new Map(),
    lastBacklog: null, rendered: {}, refreshes: 0, busy: false,
  };

  // ---- HTTP ----

  async function call(method, path, body) {
    const ctl = new AbortController();
    const timer = setTimeout(() => ctl.abort(), TIMEOUT_MS);
    const headers = {};
    if (method !== 'GET') {
      headers['Content-Type'] = 'application/json';
      const token = $('token').value.trim();
      if (token) headers.Authorization = 'Bearer ' + token;
    }
    try {
      const res = await fetch(path, {
        method, headers, signal: ctl.signal, cache: 'no-store',
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      let json = null;
      try { json = await res.json(); } catch (e) { json = null; }
      return { ok: res.ok, status: res.status, body: json };
    } catch (e) {
      return { ok: false, status: 0, body: { error: 'no answer: ' + e.name } };
    } finally {
      clearTimeout(timer);
    }
  }

  const get = (path) => call('GET', path);

  // ---- DOM helpers: text only, never markup from the data ----

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === null || v === undefined || v === false) continue;
      if (k === 'class') node.className = v;
      else if (k === 'text') node.textContent = v;
      else if (k.startsWith('on')) node.addEventListener(k.slice(2), v);
      else if (k.startsWith('data-')) node.setAttribute(k, v);
      else node[k] = v;
    }
    for (const c of children) {
      if (c === null || c === undefined) continue;
      node.append(c instanceof Node ? c : document.createTextNode(String(c)));
    }
    return node;
  }

  const td = (value, field) => el('td', { 'data-field': field, text: value ?? '' });

  // Re-render a part only when its data changed, so a click never lands on a replaced node.
  function render(key, data, fn) {
    const json = JSON.stringify(data);
    if (state.rendered[key] === json) return;
    state.rendered[key] = json;
    fn(data);
  }

  function traceLink(id, label) {
    if (!id) return '';
    return el('a', {
      href: '#trace', class: 'trace-link', 'data-id': id, text: label || id,
      onclick: (e) => { e.preventDefault(); showTrace(id); },
    });
  }

  function message(text, isError) {
    const m = $('message');
    m.textContent = text;
    m.className = isError ? 'message error' : 'message';
    m.hidden = !text;
  }

  // ---- refresh ----

  async function refresh() {
    if (state.busy) return;
    state.busy = true;
    try {
      const showClosed = $('show-closed').checked;
      const [ready, streams, backlog, failed, groups, dead, cluster] = await Promise.all([
        get('/readyz'), get('/api/streams'), get('/api/outbox/backlog'),
        get('/api/outbox/failed?limit=100'), get('/api/dead-letters/groups'),
        get('/api/dead-letters?limit=200&state=' + (showClosed ? 'all' : 'open')),
        get('/api/cluster'),
      ]);
      // A closed row no longer changes: only the open ones are read again.
      const polled = [...state.acted].filter(([, d]) => !d || d.status === 'open').map(([id]) => id);
      const answers = await Promise.all(polled.map((id) => get('/api/dead-letters/' + id)));
      answers.forEach((a, i) => { if (a.ok) state.acted.set(polled[i], a.body); });
      const coreUp = ready.status !== 0;
      renderHealth(coreUp, ready, streams, backlog);
      // A part whose answer failed keeps its last rows: empty tables would read as "nothing".
      if (backlog.ok) {
        render('flow', { streams: streams.ok ? streams.body.streams : null,
          backlog: backlog.body.streams }, renderFlow);
      }
      if (cluster.ok) render('cluster', cluster.body, renderCluster);
      if (failed.ok) render('failed', failed.body.rows, renderFailed);
      if (groups.ok) render('groups', groups.body.groups, renderGroups);
      if (dead.ok) {
        const rows = dead.body.deadLetters.slice();
        for (const d of state.acted.values()) {
          if (d && !rows.some((r) => r.id === d.id)) rows.push(d);
        }
        render('dead', rows, renderDeadLetters);
      }
      if (coreUp && state.project) await refreshProject();
      if (coreUp && state.traceId) await refreshTrace();
      state.refreshes++;
      document.body.setAttribute('data-refreshes', String(state.refreshes));
      const now = new Date().toLocaleTimeString();
      if (coreUp) state.lastAnswer = now;
      $('status').textContent = coreUp ? 'updated ' + now
        : 'no answer from core since ' + (state.lastAnswer || 'the page loaded');
    } finally {
      state.busy = false;
    }
  }

  function renderHealth(coreUp, ready, streams, backlog) {
    document.body.setAttribute('data-core', coreUp ? 'up' : 'down');
    const coreBanner = $('core-banner');
    coreBanner.hidden = coreUp;
    if (!coreUp) {
      // Without core nothing is known of NATS: say so rather than blame NATS.
      coreBanner.textContent = 'Core does not answer (' + ready.body.error + '): the tables show'
        + ' its last answers.';
      document.body.setAttribute('data-nats', 'unknown');
      $('nats-banner').hidden = true;
      return;
    }
    const nats = ready.body && ready.body.nats ? ready.body.nats : 'unknown';
    const natsDown = (!ready.ok && nats !== 'connected') || !streams.ok;
    const total = backlog.ok ? backlog.body.backlog : null;
    const growing = total !== null && state.lastBacklog !== null && total > state.lastBacklog;
    if (total !== null) state.lastBacklog = total;
    const banner = $('nats-banner');
    banner.hidden = !natsDown;
    document.body.setAttribute('data-nats', natsDown ? 'down' : 'up');
    if (natsDown) {
      banner.textContent = 'NATS is down (' + nats + '): Events wait in the outbox, backlog '
        + (total === null ? '?' : total) + (growing ? ' and growing' : '')
        + '. They are published when NATS is back.';
    }
    if (backlog.ok) $('failed-count').textContent = '(' + backlog.body.failed + ')';
  }

  function renderFlow(data) {
    const head = $('flow-head');
    head.replaceChildren(el('th', { text: 'stream' }), el('th', { text: 'outbox backlog' }),
      el('th', { text: 'stream last seq' }),
      ...EVENT_CONSUMERS.map((c) => el('th', { text: c + ' lag' })),
      el('th', { text: 'projection lag' }));
    const byName = {};
    for (const s of data.streams || []) byName[s.name] = s;
    const rows = [];
    for (const b of data.backlog || []) {
      const s = byName[b.stream];
      const lag = (prefix) => {
        if (!s || s.error) return '—';
        // Durable names are the subscription's own, the same on every stream.
        const c = (s.consumers || []).find((x) => x.name === prefix);
        return c ? c.lag : 'not made yet';
      };
      rows.push(el('tr', { id: 'flow-' + b.stream, class: b.backlog > 0 ? 'waiting' : null },
        td(b.stream, 'stream'), td(b.backlog, 'backlog'),
        td(s && !s.error ? s.lastSequence : '—', 'lastSequence'),
        ...EVENT_CONSUMERS.map((c) => td(lag(c), c)), td(lag(PROJECTION), 'projection')));
    }
    $('flow-body').replaceChildren(...rows);
    renderAges(data.streams || []);
    const commands = byName.COMMANDS;
    $('queues-body').replaceChildren(...((commands && commands.consumers) || []).map((c) =>
      el('tr', { id: 'queue-' + c.name }, td(c.name, 'name'), td(c.pending, 'pending'),
        td(c.ackPending, 'ackPending'), td(c.redelivered, 'redelivered'), td(c.lag, 'lag'))));
  }

  function renderAges(streams) {
    $('ages-head').replaceChildren(el('th', { text: 'stream' }),
      ...EVENT_CONSUMERS.map((c) => el('th', { text: c })));
    const age = (s, name) => {
      if (s.error) return '—';
      const c = (s.consumers || []).find((x) => x.name === name);
      if (!c) return 'not made yet';
      const a = c.oldestUnreadAgeSeconds;
      return a === null || a === undefined ? '?' : String(Math.round(a));
    };
    $('ages-body').replaceChildren(...streams.filter((s) => s.name !== 'COMMANDS').map((s) =>
      el('tr', { id: 'age-' + s.name }, td(s.name, 'stream'),
        ...EVENT_CONSUMERS.map((c) => td(age(s, c), c)))));
  }

  function renderCluster(cluster) {
    const live = cluster.nodes.filter((n) => n.state === 'live').length;
    $('cluster-count').textContent = '(' + live + ' live of ' + cluster.nodes.length + ')';
    const held = (id) => cluster.duties.filter((d) => d.owner === id)
      .map((d) => d.duty + ' (' + d.epoch + ')').join(', ');
    const free = cluster.duties.filter((d) => !d.owner).map((d) => d.duty + ' (' + d.epoch + ')');
    const rows = cluster.nodes.map((n) => el('tr', { id: 'node-' + n.nodeId },
      td(n.nodeId + (n.nodeId === cluster.nodeId ? ' (this core)' : '')), td(n.address),
      td(n.lastHeartbeat), td(n.state), td(held(n.nodeId))));
    if (free.length) rows.push(el('tr', {}, td('(nobody)'), td(''), td(''), td(''), td(free.join(', '))));
    $('cluster-body').replaceChildren(...rows);
  }

  function renderFailed(rows) {
    $('failed-body').replaceChildren(...rows.map((r) => el('tr', { id: 'failed-' + r.seq },
      td(r.seq), el('td', {}, traceLink(r.eventId)), td(r.eventType), td(r.projectId),
      td(r.stream), td(r.attempts), td(r.lastError))));
  }

  function renderGroups(groups) {
    const open = groups.reduce((n, g) => n + g.count, 0);
    $('dead-count').textContent = '(' + open + ' open)';
    $('groups-body').replaceChildren(...groups.map((g) => el('tr', { class: 'group' },
      td(g.commandType ?? '(event batch)', 'commandType'), td(g.reason, 'reason'),
      td(g.count, 'count'),
      el('td', {},
        g.kind === 'event_batch' ? null : el('button', { class: 'group-retry', text: 'Retry all',
          onclick: () => groupAction('retry', g) }),
        el('button', { class: 'group-dismiss', text: 'Dismiss all',
          onclick: () => groupAction('dismiss', g) })))));
  }

  function statusOf(d) {
    if (d.status === 'closed') return 'closed: ' + d.resolution;
    return d.retriedAttempt ? 'open (retried as attempt ' + d.retriedAttempt + ')' : 'open';
  }

  function renderDeadLetters(rows) {
    $('dead-body').replaceChildren(...rows.map((d) => el('tr',
      { id: 'dl-' + d.id, 'data-status': d.status, 'data-resolution': d.resolution },
      td(d.id, 'id'), el('td', {}, traceLink(d.commandId)), td(d.commandType ?? d.kind, 'type'),
      td(d.originQueue, 'queue'), td(d.attempt, 'attempt'), td(statusOf(d), 'status'),
      td(d.reason, 'reason'),
      el('td', {},
        el('button', { class: 'retry', text: 'Retry',
          disabled: d.status !== 'open' || d.kind === 'event_batch',
          onclick: () => action('retry', d.id) }),
        el('button', { class: 'dismiss', text: 'Dismiss', disabled: d.status !== 'open',
          onclick: () => action('dismiss', d.id) })))));
  }

  function explain(answer) {
    if (answer.status === 401 || answer.status === 403) {
      return (answer.body && answer.body.error) + ' (enter the API token at the top)';
    }
    return answer.body && answer.body.error ? answer.body.error : 'HTTP ' + answer.status;
  }

  function remember(id) {
    state.acted.delete(id);
    state.acted.set(id, null);
    while (state.acted.size > ACTED_KEPT) state.acted.delete(state.acted.keys().next().value);
  }

  async function action(kind, id) {
    const answer = await call('POST', '/api/dead-letters/' + id + '/' + kind, { operator: 'dashboard' });
    if (answer.ok) {
      remember(id);
      message(kind === 'retry' ? 'dead letter ' + id + ' sent again' : 'dead letter ' + id + ' dismissed');
    } else {
      message(kind + ' of dead letter ' + id + ': ' + explain(answer), true);
    }
    refresh();
  }

  async function groupAction(kind, g) {
    const answer = await call('POST', '/api/dead-letters/groups/' + kind,
      { commandType: g.commandType, reason: g.reason, operator: 'dashboard' });
    if (answer.ok) {
      const done = answer.body.retried || answer.body.dismissed || [];
      done.forEach(remember);
      message(kind + ': ' + done.length + ' dead letters, ' + answer.body.refused.length + ' refused');
    } else {
      message(kind + ' of the group: ' + explain(answer), true);
    }
    refresh();
  }

  // ---- project ----

  async function refreshProject() {
    const p = encodeURIComponent(state.project);
    const changes = await get('/api/projects/' + p + '/changes?limit=1000');
    if (!changes.ok) {
      render('changes', { error: explain(changes) }, (d) => $('changes-body').replaceChildren(
        el('tr', {}, el('td', { colSpan: 4, class: 'error', text: d.error }))));
      return;
    }
    render('changes', changes.body.changes, (rows) => $('changes-body').replaceChildren(
      ...rows.map((c) => el('tr', { id: 'change-' + c.changeId }, td(c.changeId, 'changeId'),
        td(c.state, 'state'), td(c.title, 'title'), td(c.reason, 'reason')))));
    // The feed answers oldest first: page on from the last cursor, keep the newest rows.
    for (let page = 0; page < 20; page++) {
      const after = state.cursor ? '&after=' + encodeURIComponent(state.cursor) : '';
      const feed = await get('/api/projects/' + p + '/events?limit=1000' + after);
      if (!feed.ok) break;
      state.events.push(...feed.body.events.map((e) => ({ eventId: e.eventId,
        eventType: e.eventType, changeId: e.changeId, taskId: e.taskId, at: e.occurredAt })));
      state.events = state.events.slice(-RECENT_EVENTS);
      state.cursor = feed.body.next;
      if (feed.body.events.length < 1000) break;
    }
    render('events', state.events, (rows) => $('events-body').replaceChildren(
      ...rows.slice().reverse().map((e) => el('tr', { class: 'event', 'data-type': e.eventType },
        el('td', {}, traceLink(e.eventId)), td(e.eventType, 'type'), td(e.changeId, 'changeId'),
        td(e.taskId, 'taskId'), td(e.at, 'at')))));
  }

  function showProject(projectId) {
    state.project = projectId || null;
    state.cursor = null;
    state.events = [];
    delete state.rendered.changes;
    delete state.rendered.events;
    $('project').value = projectId || '';
    $('project-view').hidden = !state.project;
    if (state.project) localStorage.setItem(PROJECT_KEY, state.project);
    refresh();
  }

  // ---- causal trace ----

  function pathTo(node, id, path) {
    path.push(node);
    if (node.id === id) return true;
    for (const c of node.children) {
      if (pathTo(c, id, path)) return true;
    }
    path.pop();
    return false;
  }

  function nodeLabel(n) {
    return n.kind + ' ' + (n.type || '(unknown type)');
  }

  function deadLetterTag(n) {
    if (!n.deadLetter) return null;
    return el('span', { class: 'tag', 'data-dead-letter': n.deadLetter.id,
      'data-status': n.deadLetter.status, text: 'dead letter ' + n.deadLetter.status });
  }

  function subtree(n, depth) {
    return el('li', {},
      el('a', { href: '#trace', class: 'trace-node', 'data-id': n.id, 'data-depth': depth,
        'data-kind': n.kind, 'data-type': n.type, text: nodeLabel(n),
        onclick: (e) => { e.preventDefault(); showTrace(n.id); } }),
      ' ', el('code', { text: n.id }),
      deadLetterTag(n),
      n.children.length ? el('ul', {}, ...n.children.map((c) => subtree(c, depth + 1))) : null);
  }

  function renderTrace(answer) {
    $('trace').hidden = false;
    if (!answer.ok) {
      $('trace-path').replaceChildren();
      $('trace-focus').replaceChildren(el('span', { class: 'error', text: explain(answer) }));
      $('trace-tree').replaceChildren();
      return;
    }
    const path = [];
    pathTo(answer.body.root, answer.body.id, path);
    const focus = path[path.length - 1];
    const crumbs = [];
    path.slice(0, -1).forEach((n, i) => {
      if (i > 0) crumbs.push(' → ');
      crumbs.push(el('a', { href: '#trace', class: 'trace-crumb', 'data-id': n.id, text: nodeLabel(n),
        onclick: (e) => { e.preventDefault(); showTrace(n.id); } }));
    });
    $('trace-path').replaceChildren(...(crumbs.length ? crumbs : ['nothing recorded: a root']));
    const fields = ['id', 'kind', 'type', 'causedBy', 'correlationId', 'changeId', 'taskId', 'at'];
    // replaceChildren, unlike el(), would write a null child as the text "null".
    $('trace-focus').replaceChildren(...[
      el('strong', { id: 'trace-focus-label', text: nodeLabel(focus) }),
      deadLetterTag(focus),
      el('dl', {}, ...fields.flatMap((f) => [el('dt', { text: f }),
        el('dd', { 'data-field': f, text: focus[f] ?? '' })])),
      focus.known ? null : el('p', { class: 'muted',
        text: 'Known only because another node names it; its type is read from its id.' }),
    ].filter((n) => n !== null));
    $('trace-tree').replaceChildren(focus.children.length
      ? el('ul', {}, ...focus.children.map((c) => subtree(c, 1)))
      : el('span', { class: 'muted', text: 'nothing yet' }));
    $('trace').setAttribute('data-focus', focus.id);
    $('trace').setAttribute('data-depth', String(path.length - 1));
  }

  async function refreshTrace() {
    const id = state.traceId;
    const answer = await get('/api/trace/' + encodeURIComponent(id));
    // A click on another node while this answer was on its way: that one renders instead.
    if (state.traceId === id) render('trace', answer, renderTrace);
  }

  function showTrace(id) {
    state.traceId = id;
    $('trace-id').value = id;
    delete state.rendered.trace;
    refreshTrace();
  }

  // ---- start ----

  function start() {
    const fromQuery = params.get('token');
    if (fromQuery !== null) localStorage.setItem(TOKEN_KEY, fromQuery);
    $('token').value = localStorage.getItem(TOKEN_KEY) || '';
    $('token').addEventListener('input', () => localStorage.setItem(TOKEN_KEY, $('token').value));
    $('show-closed').addEventListener('change', refresh);
    $('project-form').addEventListener('submit', (e) => {
      e.preventDefault();
      showProject($('project').value.trim());
    });
    $('trace-form').addEventListener('submit', (e) => {
      e.preventDefault();
      const id = $('trace-id').value.trim();
      if (id) showTrace(id);
    });
    const project = params.get('project') || localStorage.getItem(PROJECT_KEY);
    if (project) showProject(project);
    if (params.get('trace')) showTrace(params.get('trace'));
    refresh();
    setInterval(refresh, REFRESH_MS);
  }

  start();
})();
