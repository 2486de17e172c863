/**
 * The page's drawing: the SVG the server laid out with the export's code, zoomed like the exported
 * page, with the conversation's marks kept by node name (so they survive a redraw after a self-edit):
 * the node it stands at, the nodes it visited, the nodes its agent added, and the node being inspected,
 * whose fields the inspector shows with the export's own panel code (NODE_PANEL_SCRIPT).
 */
export const DRAWING_SCRIPT = String.raw`
  const graphBox = document.getElementById('graph');
  const details = document.getElementById('details');
  const drawing = { nodes: [], byId: new Map(), idByName: new Map(), svg: null, scale: 1, zoomed: false };
  const marks = { current: null, visited: new Set(), added: new Set(), selected: null };
  const INSPECTOR_HINT = 'Click a node to see all its fields.';

  function hint(text) {
    return el('p', 'hint', text);
  }

  /** Shows a drawing ({ svg, nodes }); keeps the zoom the user chose, else fits it to the pane. */
  function showDrawing(data) {
    graphBox.innerHTML = data.svg;
    drawing.svg = graphBox.querySelector('svg');
    drawing.nodes = data.nodes;
    drawing.byId = new Map(data.nodes.map(function (node) { return [node.id, node]; }));
    drawing.idByName = new Map(data.nodes.map(function (node) { return [node.name, node.id]; }));
    graphBox.querySelectorAll('g.node').forEach(function (group) {
      const node = drawing.byId.get(group.id);
      if (!node) return;
      group.setAttribute('tabindex', '0');
      group.setAttribute('role', 'button');
      group.setAttribute('aria-label', node.name);
    });
    drawing.svg.removeAttribute('width');
    drawing.svg.removeAttribute('height');
    if (drawing.zoomed) setScale(drawing.scale);
    else fitDrawing();
    applyMarks();
    if (marks.selected) showInspected();
  }

  function showDrawingProblem(message) {
    drawing.svg = null;
    drawing.nodes = [];
    drawing.byId = new Map();
    drawing.idByName = new Map();
    graphBox.replaceChildren(el('p', 'problem', message));
  }

  function clearMarks() {
    marks.current = null;
    marks.visited = new Set();
    marks.added = new Set();
    applyMarks();
  }

  function applyMarks() {
    graphBox.querySelectorAll('g.node').forEach(function (group) {
      const node = drawing.byId.get(group.id);
      if (!node) return;
      group.classList.toggle('current', node.name === marks.current);
      group.classList.toggle('visited', marks.visited.has(node.name));
      group.classList.toggle('added', marks.added.has(node.name));
      group.classList.toggle('selected', node.name === marks.selected);
    });
  }

  /** The conversation entered node name: it is the current node, and visited. */
  function markCurrent(name) {
    marks.current = name;
    if (name) marks.visited.add(name);
    applyMarks();
    const id = drawing.idByName.get(name);
    const group = id && document.getElementById(id);
    if (group) group.scrollIntoView({ block: 'nearest', inline: 'nearest' });
  }

  function nodeRef(name) {
    if (!drawing.idByName.has(name)) return el('span', '', name);
    const button = el('button', 'link', name);
    button.type = 'button';
    button.addEventListener('click', function () { inspect(name, true); });
    return button;
  }

  /** Shows node name's fields in the inspector, as the exported page does. */
  function inspect(name, scroll) {
    const id = drawing.idByName.get(name);
    if (!id) return;
    marks.selected = name;
    applyMarks();
    showInspected();
    showTab('inspector');
    if (scroll) document.getElementById(id).scrollIntoView({ block: 'center', inline: 'center', behavior: 'smooth' });
  }

  /** The inspected node's fields as the drawing now has them; a node the drawing lost is let go. */
  function showInspected() {
    const id = drawing.idByName.get(marks.selected);
    if (id) renderNode(details, drawing.byId.get(id), nodeRef);
    else clearInspector();
  }

  function clearInspector() {
    marks.selected = null;
    applyMarks();
    details.replaceChildren(hint(INSPECTOR_HINT));
  }

  graphBox.addEventListener('click', function (event) {
    const group = event.target.closest('g.node');
    const node = group && drawing.byId.get(group.id);
    if (node) inspect(node.name, false);
  });
  graphBox.addEventListener('keydown', function (event) {
    const group = event.target.closest && event.target.closest('g.node');
    const node = group && drawing.byId.get(group.id);
    if (node && (event.key === 'Enter' || event.key === ' ')) {
      event.preventDefault();
      inspect(node.name, false);
    }
  });
  document.addEventListener('keydown', function (event) {
    if (event.key === 'Escape' && marks.selected) clearInspector();
  });

  // Graphviz sizes the SVG in points; zooming rescales it from its viewBox.
  function setScale(next) {
    if (!drawing.svg) return;
    const box = drawing.svg.viewBox.baseVal;
    drawing.scale = Math.min(4, Math.max(0.1, next));
    drawing.svg.style.width = (box.width * drawing.scale * 4) / 3 + 'px';
    drawing.svg.style.height = (box.height * drawing.scale * 4) / 3 + 'px';
  }

  /** The whole drawing in the pane where that keeps it readable; a large one opens at half size and scrolls. */
  function fitDrawing() {
    if (!drawing.svg) return;
    const box = drawing.svg.viewBox.baseVal;
    const across = (graphBox.clientWidth - 32) / ((box.width * 4) / 3);
    const down = (graphBox.clientHeight - 32) / ((box.height * 4) / 3);
    setScale(Math.max(0.5, Math.min(1.25, across, down)));
  }

  document.querySelectorAll('[data-zoom]').forEach(function (button) {
    button.addEventListener('click', function () {
      const how = button.getAttribute('data-zoom');
      drawing.zoomed = how !== 'fit';
      if (how === 'fit') fitDrawing();
      else setScale(drawing.scale * (how === 'in' ? 1.25 : 0.8));
    });
  });
`;
