/**
 * The script of the interactive HTML export, inlined as text (the page must work offline, from a file).
 * It reads the node data from the page's JSON block (html.ts's `ViewerNode`: badges and fields, the same
 * for graphs and flows) and builds every panel entry with DOM calls and textContent, never innerHTML,
 * so node texts cannot inject markup.
 */

/**
 * What the export's page and the server's page (src/serve/page) both show of a clicked node: its name,
 * badges and fields, built with DOM calls and textContent only. Function declarations, pasted inside
 * each page's own script.
 */
export const NODE_PANEL_SCRIPT = String.raw`
  function el(tag, className, text) {
    var element = document.createElement(tag);
    if (className) element.className = className;
    if (text !== undefined) element.textContent = text;
    return element;
  }

  /** Fills panel with node (a ViewerNode); nodeRef(name) makes the element that links to another node. */
  function renderNode(panel, node, nodeRef) {
    function addField(list, label, content) {
      if (content === undefined || content === null || content === '') return;
      list.appendChild(el('dt', '', label));
      var dd = el('dd');
      if (typeof content === 'string') dd.appendChild(el('pre', '', content));
      else dd.appendChild(content);
      list.appendChild(dd);
    }

    function table(spec) {
      if (spec.rows.length === 0) return undefined;
      var element = el('table');
      var head = el('tr');
      spec.head.forEach(function (title) { head.appendChild(el('th', '', title)); });
      element.appendChild(head);
      spec.rows.forEach(function (cells) {
        var row = el('tr');
        cells.forEach(function (cell) {
          var td = el('td');
          if (typeof cell === 'string') td.textContent = cell;
          else td.appendChild(nodeRef(cell.ref));
          row.appendChild(td);
        });
        element.appendChild(row);
      });
      return element;
    }

    function refList(refs) {
      if (refs.length === 0) return undefined;
      var list = el('ul', 'refs');
      refs.forEach(function (ref) {
        var item = el('li');
        item.appendChild(nodeRef(ref.name));
        if (ref.label) item.appendChild(document.createTextNode(' (' + ref.label + ')'));
        list.appendChild(item);
      });
      return list;
    }

    function content(field) {
      if (typeof field.text === 'string') return field.text;
      if (field.refs) return refList(field.refs);
      if (field.table) return table(field.table);
      return undefined;
    }

    panel.replaceChildren();
    panel.appendChild(el('h2', '', node.name));
    var badges = el('div', 'badges');
    node.badges.forEach(function (badge) {
      badges.appendChild(el('span', badge.kind ? 'badge ' + badge.kind : 'badge', badge.text));
    });
    panel.appendChild(badges);
    var list = el('dl');
    node.fields.forEach(function (field) { addField(list, field.label, content(field)); });
    panel.appendChild(list);
  }
`;

export const VIEWER_SCRIPT = String.raw`
(function () {
  'use strict';
  var data = JSON.parse(document.getElementById('graph-data').textContent);
  var byId = {};
  var idByName = {};
  data.nodes.forEach(function (node) {
    byId[node.id] = node;
    idByName[node.name] = node.id;
  });
  var graph = document.getElementById('graph');
  var svg = graph.querySelector('svg');
  var details = document.getElementById('details');
  var search = document.getElementById('search');
  var category = document.getElementById('category');
  var count = document.getElementById('count');
  var selected = null;

${NODE_PANEL_SCRIPT}

  function nodeRef(name) {
    var id = idByName[name];
    if (!id) return el('span', '', name);
    var button = el('button', 'link', name);
    button.type = 'button';
    button.addEventListener('click', function () { select(id, true); });
    return button;
  }

  function select(id, scroll) {
    var group = document.getElementById(id);
    if (!group || !byId[id]) return;
    if (selected) selected.classList.remove('selected');
    selected = group;
    group.classList.add('selected');
    renderNode(details, byId[id], nodeRef);
    history.replaceState(null, '', '#' + encodeURIComponent(byId[id].name));
    if (scroll) group.scrollIntoView({ block: 'center', inline: 'center', behavior: 'smooth' });
  }

  svg.addEventListener('click', function (event) {
    var group = event.target.closest('g.node');
    if (group) select(group.id, false);
  });
  graph.querySelectorAll('g.node').forEach(function (group) {
    var node = byId[group.id];
    if (!node) return;
    group.setAttribute('tabindex', '0');
    group.setAttribute('role', 'button');
    group.setAttribute('aria-label', node.name);
    group.addEventListener('keydown', function (event) {
      if (event.key === 'Enter' || event.key === ' ') {
        event.preventDefault();
        select(group.id, false);
      }
    });
  });

  function cellText(cell) {
    return typeof cell === 'string' ? cell : cell.ref;
  }

  function haystack(node) {
    if (node.haystack === undefined) {
      var texts = [node.name];
      node.fields.forEach(function (field) {
        if (!field.searched) return;
        if (typeof field.text === 'string') texts.push(field.text);
        if (field.table) field.table.rows.forEach(function (cells) { texts = texts.concat(cells.map(cellText)); });
      });
      node.haystack = texts.join('\n').toLowerCase();
    }
    return node.haystack;
  }

  function applyFilter() {
    var query = search.value.trim().toLowerCase();
    var wanted = category ? category.value : '';
    var active = query !== '' || wanted !== '';
    var matches = 0;
    document.body.classList.toggle('filtering', active);
    data.nodes.forEach(function (node) {
      var group = document.getElementById(node.id);
      var match = (!wanted || node.category === wanted) && (!query || haystack(node).indexOf(query) >= 0);
      if (match) matches++;
      if (!group) return;
      group.classList.toggle('match', active && match);
      group.classList.toggle('dim', active && !match);
    });
    count.textContent = active ? matches + ' of ' + data.nodes.length + ' nodes' : data.nodes.length + ' nodes';
  }
  search.addEventListener('input', applyFilter);
  if (category) category.addEventListener('change', applyFilter);

  // Graphviz sizes the SVG in points; zooming rescales it from its viewBox.
  var box = svg.viewBox.baseVal;
  var scale = 1;
  svg.removeAttribute('width');
  svg.removeAttribute('height');
  function setScale(next) {
    scale = Math.min(4, Math.max(0.1, next));
    svg.style.width = (box.width * scale * 4) / 3 + 'px';
    svg.style.height = (box.height * scale * 4) / 3 + 'px';
  }
  function fit(floor) {
    setScale(Math.max(floor, Math.min(1, (graph.clientWidth - 32) / ((box.width * 4) / 3))));
  }
  document.querySelectorAll('[data-zoom]').forEach(function (button) {
    button.addEventListener('click', function () {
      var how = button.getAttribute('data-zoom');
      if (how === 'fit') fit(0.1);
      else setScale(scale * (how === 'in' ? 1.25 : 0.8));
    });
  });
  document.addEventListener('keydown', function (event) {
    if (event.key === 'Escape' && selected) {
      selected.classList.remove('selected');
      selected = null;
      details.replaceChildren(el('p', 'hint', 'Click a node to see all its fields.'));
    }
  });

  // A wide graph opens at a readable size and scrolls, rather than shrunk to an unreadable overview.
  fit(0.6);
  applyFilter();
  var fromHash = idByName[decodeURIComponent(location.hash.slice(1))];
  if (fromHash) select(fromHash, true);
})();
`;
