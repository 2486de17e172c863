/**
 * Graph -> one self-contained interactive HTML page, like AutoGRAMS's interactive graphs: the rendered
 * graph inline as SVG, and a side panel that shows every field of the node you click. Style, script and
 * data are inlined; the page fetches nothing, so it works from a file, offline.
 */
import { nodeSpecSchema, type GraphFile, type NodeSpec } from '../graph/schema.js';
import { buildDiagram, type Diagram } from './diagram.js';
import { VIEWER_SCRIPT } from './html-script.js';
import { VIEWER_STYLE } from './html-style.js';
import { renderDiagram } from './svg.js';

/** What the page's script knows of one node: its fields, its SVG element id and its neighbours. */
interface ViewerNode extends NodeSpec {
  /** The id of the node's `<g class="node">` element in the SVG. */
  id: string;
  start: boolean;
  /** Nodes with an arrow into this one, with the arrow's label (a choice, a condition, `calls`). */
  from: { name: string; label: string }[];
  /** The node this one calls, for function nodes. */
  calls?: string;
}

/** Renders a graph file as an interactive, self-contained HTML page. */
export async function toHtml(file: GraphFile): Promise<string> {
  return (await toSvgAndHtml(file)).html;
}

/**
 * Renders a graph file as an SVG document and as the HTML page around that same drawing, for a caller
 * that writes both: the layout, which is most of the cost, is done once. Refuses (UserError) a graph too
 * large to draw; `canDraw` (svg.ts) tells beforehand.
 */
export async function toSvgAndHtml(file: GraphFile): Promise<{ svg: string; html: string }> {
  const diagram = buildDiagram(file);
  const svg = await renderDiagram(diagram);
  return { svg, html: page(file, diagram, inlineSvg(svg)) };
}

function page(file: GraphFile, diagram: Diagram, svg: string): string {
  const data = { nodes: viewerNodes(diagram) };
  const categoryPicker =
    diagram.categories.length === 0
      ? ''
      : `<select id="category" aria-label="Category"><option value="">All categories</option>${diagram.categories
          .map((c) => `<option value="${escapeHtml(c)}">${escapeHtml(c)}</option>`)
          .join('')}</select>`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(file.name)} · meta-agent graph</title>
<style>${VIEWER_STYLE}</style>
</head>
<body>
<header>
<h1>${escapeHtml(file.name)}</h1>
<span class="description">${escapeHtml(file.description)}</span>
<div class="tools">
<input id="search" type="search" placeholder="Search nodes…" aria-label="Search nodes">
${categoryPicker}
<span id="count"></span>
<button type="button" data-zoom="out" title="Zoom out">−</button>
<button type="button" data-zoom="fit" title="Fit to width">Fit</button>
<button type="button" data-zoom="in" title="Zoom in">+</button>
</div>
</header>
<main>
<section id="graph" aria-label="Graph">
${svg}
</section>
<aside id="details" aria-live="polite"><p class="hint">Click a node to see all its fields.</p></aside>
</main>
<script type="application/json" id="graph-data">${scriptJson(data)}</script>
<script>${VIEWER_SCRIPT}</script>
</body>
</html>
`;
}

function viewerNodes(diagram: Diagram): ViewerNode[] {
  // Arrows by the box they enter, and calls by caller, so a large graph costs one pass over its arrows.
  const into = new Map<string, { name: string; label: string }[]>();
  const calls = new Map<string, string>();
  const graphNodes = new Set(diagram.nodes.filter((n) => n.kind === 'node').map((n) => n.key));
  for (const edge of diagram.edges) {
    const list = into.get(edge.to) ?? [];
    list.push({ name: edge.from, label: edge.label.join(', ') });
    into.set(edge.to, list);
    if (edge.kind === 'call' && !calls.has(edge.from)) calls.set(edge.from, edge.to);
  }
  const nodes: ViewerNode[] = [];
  for (const box of diagram.nodes) {
    if (box.kind !== 'node') continue;
    // The compiled node carries parsed extras; parsing with the schema keeps the fields as written in the file.
    const spec = nodeSpecSchema.parse(box.node);
    const viewer: ViewerNode = { ...spec, id: box.id, start: box.start, from: into.get(box.key) ?? [] };
    const callee = calls.get(box.key);
    if (callee !== undefined && graphNodes.has(callee)) viewer.calls = callee;
    nodes.push(viewer);
  }
  return nodes;
}

/** Graphviz's SVG is a standalone XML document; inside HTML only the `<svg>` element belongs. */
function inlineSvg(document: string): string {
  const start = document.indexOf('<svg');
  return start >= 0 ? document.slice(start).trim() : document;
}

/** JSON safe inside `<script>`: `<` escaped, so no text can close the element early. */
function scriptJson(value: unknown): string {
  return JSON.stringify(value).replace(/</g, '\\u003c');
}

function escapeHtml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}
