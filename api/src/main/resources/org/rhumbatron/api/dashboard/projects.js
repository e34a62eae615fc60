// Projects (state, generation, live app, open Changes) and one Project's Changes, filtered by
// state, with title, age and progress, and its recent Events.
'use strict';
(function () {
  const { $, el, td, get, render, traceLink, changeLink, projectLink, explain, duration } = Rh;
  const PROJECT_KEY = 'rhumbatron.project';
  const RECENT_EVENTS = 50;
  const state = { project: null, cursor: null, events: [] };

  async function refresh() {
    const projects = await get('/api/projects?limit=1000');
    if (projects.ok) render('projects', projects.body.projects, renderProjects);
    if (state.project) await refreshProject();
  }

  function renderProjects(rows) {
    $('projects-count').textContent = '(' + rows.length + ')';
    $('projects-body').replaceChildren(...rows.map((p) => el('tr', { id: 'project-' + p.projectId },
      el('td', {}, projectLink(p.projectId)), td(p.name, 'name'), td(p.status, 'status'),
      td(p.canonicalGeneration, 'generation'), td(p.hasLiveApp ? 'yes' : 'no', 'liveApp'),
      td(p.openChanges, 'openChanges'))));
  }

  function progress(c) {
    const pct = c.tasksTotal ? Math.round((100 * c.tasksCompleted) / c.tasksTotal) : 0;
    return el('td', { 'data-field': 'progress' },
      el('span', { class: 'bar' }, el('span', { class: 'fill', style: 'width:' + pct + '%' })),
      ' ' + c.tasksCompleted + ' of ' + c.tasksTotal);
  }

  function age(c) {
    if (!c.createdAt) return '';
    const end = c.endedAt ? Date.parse(c.endedAt) : Date.now();
    return duration(end - Date.parse(c.createdAt)) + (c.endedAt ? ' (ended)' : '');
  }

  async function refreshProject() {
    const p = encodeURIComponent(state.project);
    const filter = $('change-filter').value;
    const changes = await get('/api/projects/' + p + '/changes?limit=1000'
      + (filter ? '&state=' + filter : ''));
    if (!changes.ok) {
      render('changes', { error: explain(changes) }, (d) => $('changes-body').replaceChildren(
        el('tr', {}, el('td', { colSpan: 6, class: 'error', text: d.error }))));
      return;
    }
    // Newest first; ages move with the clock, so the rows render again every 10 s as well.
    const tick = Math.floor(Date.now() / 10000);
    render('changes', { rows: changes.body.changes, tick }, (d) => $('changes-body').replaceChildren(
      ...d.rows.slice().reverse().map((c) => el('tr', { id: 'change-' + c.changeId,
        'data-state': c.state },
      el('td', { 'data-field': 'changeId' }, changeLink(c.changeId)), td(c.title, 'title'),
      td(c.state, 'state'), td(age(c), 'age'), progress(c), td(c.reason, 'reason')))));
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
        el('td', {}, traceLink(e.eventId)), td(e.eventType, 'type'),
        el('td', { 'data-field': 'changeId' }, changeLink(e.changeId)),
        td(e.taskId, 'taskId'), td(e.at, 'at')))));
  }

  function showProject(projectId) {
    state.project = projectId || null;
    state.cursor = null;
    state.events = [];
    delete Rh.state.rendered.events;
    delete Rh.state.rendered.changes;
    $('project').value = projectId || '';
    $('project-view').hidden = !state.project;
    $('project-name').textContent = state.project || '';
    if (state.project) {
      localStorage.setItem(PROJECT_KEY, state.project);
      $('project-section').scrollIntoView();
    }
    Rh.refresh();
  }

  function start(params) {
    $('project-form').addEventListener('submit', (e) => {
      e.preventDefault();
      showProject($('project').value.trim());
    });
    $('change-filter').addEventListener('change', () => Rh.refresh());
    const project = params.get('project') || localStorage.getItem(PROJECT_KEY);
    if (project) showProject(project);
  }

  Rh.show.project = showProject;
  Rh.projects = { refresh, start };
})();
