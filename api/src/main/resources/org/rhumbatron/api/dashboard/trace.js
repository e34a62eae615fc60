// The causal trace of an Event or Command: the path that caused it, its fields, what it caused as
// nested links, and the same tree drawn (trace-drawing.js). A click on any node follows it.
'use strict';
(function () {
  const { $, el, get, render, explain } = Rh;
  const state = { traceId: null };

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
      $('trace-drawing').replaceChildren();
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
    const changeLink = focus.changeId ? ['Change: ', Rh.changeLink(focus.changeId)] : [];
    // replaceChildren, unlike el(), would write a null child as the text "null".
    $('trace-focus').replaceChildren(...[
      el('strong', { id: 'trace-focus-label', text: nodeLabel(focus) }),
      deadLetterTag(focus),
      el('dl', {}, ...fields.flatMap((f) => [el('dt', { text: f }),
        el('dd', { 'data-field': f, text: focus[f] ?? '' })])),
      focus.known ? null : el('p', { class: 'muted',
        text: 'Known only because another node names it; its type is read from its id.' }),
      changeLink.length ? el('p', {}, ...changeLink) : null,
    ].filter((n) => n !== null));
    $('trace-tree').replaceChildren(focus.children.length
      ? el('ul', {}, ...focus.children.map((c) => subtree(c, 1)))
      : el('span', { class: 'muted', text: 'nothing yet' }));
    $('trace').setAttribute('data-focus', focus.id);
    $('trace').setAttribute('data-depth', String(path.length - 1));
    Rh.traceDrawing.draw(path, focus, showTrace);
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
    delete Rh.state.rendered.trace;
    refreshTrace();
  }

  async function refresh() {
    if (state.traceId) await refreshTrace();
  }

  function start(params) {
    $('trace-form').addEventListener('submit', (e) => {
      e.preventDefault();
      const id = $('trace-id').value.trim();
      if (id) showTrace(id);
    });
    if (params.get('trace')) showTrace(params.get('trace'));
  }

  Rh.show.trace = showTrace;
  Rh.trace = { refresh, start };
})();
