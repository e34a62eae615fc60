// The operator's tables: event flow, oldest unread ages, command queues, cluster, failed outbox
// rows and dead letters with Retry and Dismiss (one by one or by group).
'use strict';
(function () {
  const { $, el, td, call, get, render, traceLink, changeLink, message, explain } = Rh;
  const EVENT_CONSUMERS = ['project-view-projector', 'causal-router', 'audit-archiver',
    'analytics-projector'];
  const PROJECTION = 'project-view-projector';
  // Dead letters acted on here stay listed after they close; the newest ones only.
  const ACTED_KEPT = 100;
  const state = { acted: new Map(), lastBacklog: null, lastAnswer: null };

  /** Reads and renders the tables; answers whether core answered. */
  async function refresh() {
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
    return coreUp;
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
    // A refused read (401) is a missing credential, not NATS down: the page asks for one.
    const natsDown = (!ready.ok && nats !== 'connected') || (!streams.ok && streams.status !== 401);
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

  /** Retry and Dismiss of one dead letter: here and on the Change page. */
  function buttons(d) {
    return el('td', {},
      el('button', { class: 'retry', text: 'Retry',
        disabled: d.status !== 'open' || d.kind === 'event_batch',
        onclick: () => action('retry', d.id) }),
      el('button', { class: 'dismiss', text: 'Dismiss', disabled: d.status !== 'open',
        onclick: () => action('dismiss', d.id) }));
  }

  function renderDeadLetters(rows) {
    $('dead-body').replaceChildren(...rows.map((d) => el('tr',
      { id: 'dl-' + d.id, 'data-status': d.status, 'data-resolution': d.resolution },
      td(d.id, 'id'), el('td', {}, traceLink(d.commandId)), td(d.commandType ?? d.kind, 'type'),
      td(d.originQueue, 'queue'), td(d.attempt, 'attempt'), td(statusOf(d), 'status'),
      el('td', {}, changeLink(d.changeId)), td(d.reason, 'reason'), buttons(d))));
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
    Rh.refresh();
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
    Rh.refresh();
  }

  Rh.ops = { refresh, statusOf, buttons };
})();
