// The operator's dashboard: polls core's JSON routes every 2 s and renders them through its parts
// (ops.js, projects.js, change.js, trace.js, charts.js); writes (Retry, Dismiss) carry the token
// from the field, kept in localStorage, or from ?token=.
'use strict';
(function () {
  const { $ } = Rh;
  const REFRESH_MS = 2000;
  const TOKEN_KEY = 'rhumbatron.token';
  const params = new URLSearchParams(location.search);
  const state = { refreshes: 0, busy: false, lastAnswer: null };

  async function refresh() {
    if (state.busy) return;
    state.busy = true;
    try {
      const coreUp = await Rh.ops.refresh();
      if (coreUp) {
        await Promise.all([Rh.charts.refresh(), Rh.projects.refresh(), Rh.change.refresh()]);
        await Rh.trace.refresh();
      }
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

  function start() {
    Rh.refresh = refresh;
    const fromQuery = params.get('token');
    if (fromQuery !== null) localStorage.setItem(TOKEN_KEY, fromQuery);
    $('token').value = localStorage.getItem(TOKEN_KEY) || '';
    $('token').addEventListener('input', () => localStorage.setItem(TOKEN_KEY, $('token').value));
    $('show-closed').addEventListener('change', refresh);
    Rh.charts.start();
    Rh.projects.start(params);
    Rh.trace.start(params);
    Rh.change.start(params);
    refresh();
    setInterval(refresh, REFRESH_MS);
  }

  start();
})();
