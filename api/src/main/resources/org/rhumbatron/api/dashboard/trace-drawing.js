// The causal trace drawn as a tree, left to right: the path from the root to the focus, then what
// the focus caused, a few levels down. Events are pills, Commands square boxes, a dead-lettered
// Command has a red border and a mark. A click on a node makes it the focus.
'use strict';
(function () {
  const { $, svg } = Rh;
  const W = 190;
  const H = 30;
  const GAP_X = 46;
  const GAP_Y = 12;
  const LEVELS_BELOW = 3;
  const MAX_NODES = 120;

  /** Lays out the focus's subtree: each leaf its own row, a parent beside its first child. */
  function layout(focus, column) {
    const placed = [];
    let row = 0;
    let more = 0;
    const place = (n, depth, parent) => {
      if (placed.length >= MAX_NODES) { more++; return null; }
      const item = { n, depth, parent, col: column + depth, row: 0 };
      placed.push(item);
      const kids = depth < LEVELS_BELOW ? n.children : [];
      const first = row;
      let any = false;
      for (const c of kids) any = place(c, depth + 1, item) !== null || any;
      if (!any) row++;
      item.row = first;
      if (depth >= LEVELS_BELOW && n.children.length) item.hidden = n.children.length;
      return item;
    };
    place(focus, 0, null);
    return { placed, rows: Math.max(row, 1), more };
  }

  function shape(n, rel, depth, x, y, go, hidden) {
    const isEvent = n.kind === 'event';
    const dead = n.deadLetter;
    const label = (n.type || '(unknown type)') + (hidden ? '  +' + hidden : '');
    return svg('g', { class: 'trace-shape ' + n.kind + (dead ? ' dead' : '') + ' rel-' + rel,
      'data-id': n.id, 'data-kind': n.kind, 'data-type': n.type, 'data-rel': rel,
      'data-depth': depth, 'data-dead-letter': dead ? dead.id : null,
      'data-status': dead ? dead.status : null, transform: `translate(${x},${y})`,
      onclick: () => go(n.id) },
    svg('title', { text: n.kind + ' ' + n.id + (n.at ? '\n' + n.at : '')
      + (dead ? '\ndead letter ' + dead.id + ' (' + dead.status + ')' : '') }),
    svg('rect', { width: W, height: H, rx: isEvent ? H / 2 : 2 }),
    svg('text', { x: isEvent ? 14 : 8, y: 19, text: label.length > 27 ? label.slice(0, 26) + '…' : label }),
    dead ? svg('text', { x: W - 6, y: -3, class: 'dead-mark', 'text-anchor': 'end',
      text: '✕ dead letter ' + dead.status }) : null);
  }

  const at = (col, row) => ({ x: 10 + col * (W + GAP_X), y: 14 + row * (H + GAP_Y) });

  function edge(a, b) {
    const x1 = a.x + W;
    const y1 = a.y + H / 2;
    const x2 = b.x;
    const y2 = b.y + H / 2;
    return svg('path', { class: 'trace-edge',
      d: `M${x1},${y1} C${x1 + GAP_X / 2},${y1} ${x2 - GAP_X / 2},${y2} ${x2},${y2}` });
  }

  function draw(path, focus, go) {
    const ancestors = path.slice(0, -1);
    const { placed, rows, more } = layout(focus, ancestors.length);
    const focusRow = 0;
    const shapes = [];
    const edges = [];
    ancestors.forEach((n, i) => {
      const p = at(i, focusRow);
      shapes.push(shape(n, 'ancestor', i - ancestors.length, p.x, p.y, go));
      const next = at(i + 1, focusRow);
      edges.push(edge(p, next));
    });
    for (const item of placed) {
      const p = at(item.col, item.row);
      const rel = item.depth === 0 ? 'focus' : item.depth === 1 ? 'child' : 'descendant';
      shapes.push(shape(item.n, rel, item.depth, p.x, p.y, go, item.hidden));
      if (item.parent) edges.push(edge(at(item.parent.col, item.parent.row), p));
    }
    const cols = Math.max(...placed.map((i) => i.col)) + 1;
    const width = 20 + cols * (W + GAP_X) - GAP_X;
    const height = 24 + rows * (H + GAP_Y);
    const d = $('trace-drawing');
    d.setAttribute('width', width);
    d.setAttribute('height', height);
    d.setAttribute('viewBox', `0 0 ${width} ${height}`);
    d.setAttribute('data-focus', focus.id);
    d.replaceChildren(...edges, ...shapes);
    $('trace-more').textContent = more ? more + ' more not drawn: follow a node to see them' : '';
  }

  Rh.traceDrawing = { draw };
})();
