/**
 * A drawing -> one self-contained interactive HTML page, like AutoGRAMS's interactive graphs: the
 * rendered drawing inline as SVG, and a side panel that shows every field of the node you click. Style,
 * script and data are inlined; the page fetches nothing, so it works from a file, offline.
 *
 * The page knows nothing of graphs or flows: each node comes with its badges and a list of fields
 * (text, links to other nodes, a table), which the script shows in order. This module also builds
 * those for a graph's nodes; flow-formats.ts does it for a flow's.
 */
import { nodeSpecSchema, type GraphFile } from '../graph/schema.js';
import { buildDiagram, type Diagram } from './diagram.js';
import { VIEWER_SCRIPT } from './html-script.js';
import { VIEWER_STYLE } from './html-style.js';
import { renderDiagram } from './svg.js';

/** A link to another node, with why it is there (a choice, a condition, `calls`). */
export interface ViewerRef {
  name: string;
  label?: string;
}

/** A table cell: text, or a link to the node it names (plain text when no node has that name). */
export type ViewerCell = string | { ref: string };

/** One entry of a node's panel. `searched`: the search box looks in it. Empty entries are left out. */
export type ViewerField =
  | { label: string; text: string; searched?: true }
  | { label: string; refs: ViewerRef[] }
  | { label: string; table: { head: string[]; rows: ViewerCell[][] }; searched?: true };

/** What the page's script knows of one node. */
export interface ViewerNode {
  /** The id of the node's `<g class="node">` element in the SVG. */
  id: string;
  name: string;
  /** The category the picker filters by. */
  category?: string;
  /** Short marks under the name; `kind` picks a style (`category`, `start` (also a flow's outputs), `interjection`). */
  badges: { text: string; kind?: string }[];
  fields: ViewerField[];
}

/** What the page says of the whole drawing. */
export interface PageHeading {
  name: string;
  description: string;
  /** What is drawn, for the page title: `graph` or `flow`. */
  kind: string;
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
export function toSvgAndHtml(file: GraphFile): Promise<{ svg: string; html: string }> {
  const { diagram, nodes } = graphDrawing(file);
  return drawPage({ name: file.name, description: file.description, kind: 'graph' }, diagram, nodes);
}

/** A graph's drawing, not laid out yet, and what the panel shows of each of its nodes. */
export function graphDrawing(file: GraphFile): { diagram: Diagram; nodes: ViewerNode[] } {
  const diagram = buildDiagram(file);
  return { diagram, nodes: graphViewerNodes(diagram) };
}

/** Lays a drawing out once and returns the SVG and the page around it, with `nodes` in its panel. */
export async function drawPage(
  heading: PageHeading,
  diagram: Diagram,
  nodes: ViewerNode[],
): Promise<{ svg: string; html: string }> {
  const svg = await renderDiagram(diagram);
  return { svg, html: page(heading, diagram.categories, inlineSvg(svg), nodes) };
}

function page(heading: PageHeading, categories: string[], svg: string, nodes: ViewerNode[]): string {
  const categoryPicker =
    categories.length === 0
      ? ''
      : `<select id="category" aria-label="Category"><option value="">All categories</option>${categories
          .map((c) => `<option value="${escapeHtml(c)}">${escapeHtml(c)}</option>`)
          .join('')}</select>`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(heading.name)} · meta-agent ${escapeHtml(heading.kind)}</title>
<style>${VIEWER_STYLE}</style>
</head>
<body>
<header>
<h1>${escapeHtml(heading.name)}</h1>
<span class="description">${escapeHtml(heading.description)}</span>
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
<section id="graph" aria-label="Drawing">
${svg}
</section>
<aside id="details" aria-live="polite"><p class="hint">Click a node to see all its fields.</p></aside>
</main>
<script type="application/json" id="graph-data">${scriptJson({ nodes })}</script>
<script>${VIEWER_SCRIPT}</script>
</body>
</html>
`;
}

/** A graph node's panel: its fields as written in the file, where it is reached from, what it calls. */
function graphViewerNodes(diagram: Diagram): ViewerNode[] {
  // Arrows by the box they enter, and calls by caller, so a large graph costs one pass over its arrows.
  const into = new Map<string, ViewerRef[]>();
  const calls = new Map<string, string>();
  const graphNodes = new Set(diagram.nodes.filter((n) => n.kind === 'node').map((n) => n.key));
  for (const edge of diagram.edges) {
    const list = into.get(edge.to) ?? [];
    const label = edge.label.join(', ');
    list.push(label ? { name: edge.from, label } : { name: edge.from });
    into.set(edge.to, list);
    if (edge.kind === 'call' && !calls.has(edge.from)) calls.set(edge.from, edge.to);
  }
  const nodes: ViewerNode[] = [];
  for (const box of diagram.nodes) {
    if (box.kind !== 'node') continue;
    // The compiled node carries parsed extras; parsing with the schema keeps the fields as written in the file.
    const spec = nodeSpecSchema.parse(box.node);
    const badges: ViewerNode['badges'] = [{ text: spec.action }];
    if (spec.category) badges.push({ text: spec.category, kind: 'category' });
    if (box.start) badges.push({ text: 'start', kind: 'start' });
    if (spec.conditionInterjection) badges.push({ text: 'interjection', kind: 'interjection' });
    const callee = calls.get(box.key);
    const fields = [
      textField('Instruction', spec.instruction, true),
      textField('Transition question', spec.transitionQuestion, true),
      transitionTable(spec.transitions, spec.transitionChoices, spec.userInstructions),
      textField('Boolean condition', spec.booleanCondition),
      textField('Condition interjection', spec.conditionInterjection),
      refsField('Calls', callee !== undefined && graphNodes.has(callee) ? [{ name: callee }] : []),
      refsField('Reached from', into.get(box.key) ?? []),
      textField('Notes', spec.notes, true),
      textField('Reply start', spec.replyStart),
      textField('Instruction template', spec.instructionTemplate),
      textField('Transition context', spec.transitionContext?.toString()),
    ];
    nodes.push({
      id: box.id,
      name: spec.name,
      ...(spec.category !== undefined && { category: spec.category }),
      badges,
      fields: fields.filter((field) => field !== undefined),
    });
  }
  return nodes;
}

/** The transitions as a table: the target, and its choice and simulated user's line where any has one. */
function transitionTable(targets: string[], choices: string[], user: string[]): ViewerField | undefined {
  if (targets.length === 0) return undefined;
  const hasChoices = choices.some(Boolean);
  const hasUser = user.some(Boolean);
  const head = ['To', ...(hasChoices ? ['Choice'] : []), ...(hasUser ? ['User instruction'] : [])];
  const rows = targets.map((target, i): ViewerCell[] => [
    { ref: target },
    ...(hasChoices ? [choices[i] ?? ''] : []),
    ...(hasUser ? [user[i] ?? ''] : []),
  ]);
  return { label: 'Transitions', table: { head, rows }, searched: true };
}

/** A text entry, or nothing for an empty text. */
export function textField(
  label: string,
  value: string | undefined,
  searched = false,
): ViewerField | undefined {
  if (value === undefined || value === '') return undefined;
  return searched ? { label, text: value, searched: true } : { label, text: value };
}

/** A list of links, or nothing for an empty list. */
export function refsField(label: string, list: ViewerRef[]): ViewerField | undefined {
  return list.length === 0 ? undefined : { label, refs: list };
}

/** Graphviz's SVG is a standalone XML document; inside HTML only the `<svg>` element belongs. */
export function inlineSvg(document: string): string {
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
