// What every part of the dashboard shares: HTTP with a timeout, DOM and SVG builders that take
// text only (never markup from the data), links between the parts, and small formatters.
'use strict';
window.Rh = (function () {
  // Shorter than the refresh, so a core or NATS that hangs never stacks requests up.
  const TIMEOUT_MS = 1800;
  const SVG_NS = 'http://www.w3.org/2000/svg';
  const $ = (id) => document.getElementById(id);
  const state = { rendered: {} };
  // Set by the parts that show a Change, a Project or a trace (dashboard.js wires them).
  const show = { change: null, project: null, trace: null };

  async function call(method, path, body) {
    const ctl = new AbortController();
    const timer = setTimeout(() => ctl.abort(), TIMEOUT_MS);
    const headers = {};
    if (method !== 'GET') headers['Content-Type'] = 'application/json';
    // Reads too: a core that listens beyond loopback wants a reader credential for them.
    const token = $('token').value.trim();
    if (token) headers.Authorization = 'Bearer ' + token;
    try {
      const res = await fetch(path, {
        method, headers, signal: ctl.signal, cache: 'no-store',
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      let json = null;
      try { json = await res.json(); } catch (e) { json = null; }
      if (method === 'GET' && res.status === 401) askForCredential(json);
      else if (res.ok && document.body.getAttribute('data-credential') === 'wanted') {
        document.body.setAttribute('data-credential', 'given');
        $('token').classList.remove('wanted');
        message('');
      }
      return { ok: res.ok, status: res.status, body: json };
    } catch (e) {
      return { ok: false, status: 0, body: { error: 'no answer: ' + e.name } };
    } finally {
      clearTimeout(timer);
    }
  }

  function fill(node, attrs, children, svg) {
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === null || v === undefined || v === false) continue;
      if (k === 'class') node.setAttribute('class', v);
      else if (k === 'text') node.textContent = v;
      else if (k.startsWith('on')) node.addEventListener(k.slice(2), v);
      else if (svg || k.startsWith('data-')) node.setAttribute(k, v);
      else node[k] = v;
    }
    for (const c of children) {
      if (c === null || c === undefined) continue;
      node.append(c instanceof Node ? c : document.createTextNode(String(c)));
    }
    return node;
  }

  const el = (tag, attrs, ...children) => fill(document.createElement(tag), attrs, children, false);
  const svg = (tag, attrs, ...children) =>
    fill(document.createElementNS(SVG_NS, tag), attrs, children, true);
  const td = (value, field) => el('td', { 'data-field': field, text: value ?? '' });

  // Re-render a part only when its data changed, so a click never lands on a replaced node.
  function render(key, data, fn) {
    const json = JSON.stringify(data);
    if (state.rendered[key] === json) return;
    state.rendered[key] = json;
    fn(data);
  }

  function link(cls, id, label, go) {
    if (!id) return '';
    return el('a', {
      href: '#', class: cls, 'data-id': id, text: label || id,
      onclick: (e) => { e.preventDefault(); go(id); },
    });
  }

  const traceLink = (id, label) => link('trace-link', id, label, (x) => {
    show.trace(x);
    $('trace-section').scrollIntoView();
  });
  const changeLink = (id, label) => link('change-link', id, label, (x) => show.change(x));
  const projectLink = (id, label) => link('project-link', id, label, (x) => show.project(x));

  // Reads need a credential here: say so once per refusal and point at the token field.
  function askForCredential(json) {
    const field = $('token');
    field.placeholder = 'a reader or operator token';
    field.classList.add('wanted');
    document.body.setAttribute('data-credential', 'wanted');
    message((json && json.error ? json.error : 'reads need a credential')
      + ': enter a reader or operator token at the top', true);
  }

  function message(text, isError) {
    const m = $('message');
    m.textContent = text;
    m.className = isError ? 'message error' : 'message';
    m.hidden = !text;
  }

  function explain(answer) {
    if (answer.status === 401 || answer.status === 403) {
      return (answer.body && answer.body.error) + ' (enter the API token at the top)';
    }
    return answer.body && answer.body.error ? answer.body.error : 'HTTP ' + answer.status;
  }

  /** A duration in ms as "850 ms", "12.3 s", "4 min 5 s" or "2 h 3 min". */
  function duration(ms) {
    if (ms === null || ms === undefined || isNaN(ms)) return '';
    if (ms < 1000) return Math.round(ms) + ' ms';
    if (ms < 60000) return (ms / 1000).toFixed(1) + ' s';
    const s = Math.round(ms / 1000);
    if (s < 3600) return Math.floor(s / 60) + ' min ' + (s % 60) + ' s';
    return Math.floor(s / 3600) + ' h ' + Math.floor((s % 3600) / 60) + ' min';
  }

  const time = (iso) => (iso ? new Date(iso).toLocaleTimeString() : '');

  return {
    $, state, show, call, get: (path) => call('GET', path), el, svg, td, render,
    traceLink, changeLink, projectLink, message, explain, duration, time,
  };
})();
