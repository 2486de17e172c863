/**
 * A drawing (a graph's or a flow's) -> Graphviz DOT. Labels are HTML-like (`<…>`), so one escaping rule
 * (XML entities) covers every text we print, and names can be bold and details small. Output order is
 * deterministic: clusters in order of first category, nodes in file order, markers after them, edges in
 * file and transition order.
 * A large drawing carries the attributes that keep its layout fast (layout.ts).
 */
import type { GraphFile } from '../graph/schema.js';
import { buildDiagram, type BoxFamily, type Diagram, type DiagramEdge, type DiagramNode } from './diagram.js';
import { layoutAttributes, layoutFor, sizeOf } from './layout.js';
import { labelText, wrapText, type LabelMarkup } from './text.js';

const FONT = 'Helvetica';
const TEXT_WIDTH = 36;
const EDGE_LABEL_WIDTH = 24;

/** Fill colour per box family, so the kinds of step stand apart at a glance. */
const FILL: Record<BoxFamily, string> = {
  chat: '#e3f0ff',
  thought: '#fff6dc',
  code: '#e8f5e9',
  function: '#f1e8ff',
  goal: '#ffe8d6',
  prompt: '#f0f0f0',
  plain: '#ffffff',
};

/** How a box's label is written: HTML-like, with XML entities. */
const LABEL: LabelMarkup = {
  looks: {
    title: ['<B>', '</B>'],
    tag: ['<FONT POINT-SIZE="9" COLOR="#52606d">', '</FONT>'],
    text: ['', ''],
    question: ['<I>', '</I>'],
    condition: ['<FONT COLOR="#b44d12">', '</FONT>'],
  },
  escape: html,
  br: '<BR/>',
  width: TEXT_WIDTH,
};

/** Renders a graph file as a DOT `digraph`. */
export function toDot(file: GraphFile): string {
  return diagramToDot(buildDiagram(file));
}

/** Renders an already built drawing; boxes keep their `id`s, so SVG elements can be mapped back to nodes. */
export function diagramToDot(diagram: Diagram): string {
  const kind = layoutFor(sizeOf(diagram));
  const layout = layoutAttributes(kind)
    .map((attribute) => `, ${attribute}`)
    .join('');
  // sfdp puts an arrow's label at its middle, often over a box; the HTML page lists them per node.
  const labelled = kind !== 'spring';
  const lines = [
    `digraph ${quoteId(diagram.name)} {`,
    `  graph [rankdir=TB, fontname="${FONT}", fontsize=12, labelloc=t, label=<<B>${html(diagram.name)}</B>>, nodesep=0.35, ranksep=0.45${layout}];`,
    `  node [shape=box, style="rounded,filled", fillcolor="#ffffff", color="#52606d", fontname="${FONT}", fontsize=11, margin="0.14,0.07"];`,
    `  edge [color="#52606d", fontname="${FONT}", fontsize=9, fontcolor="#334e68"];`,
  ];
  for (const category of diagram.categories) {
    lines.push(
      `  subgraph ${quoteId(`cluster_${category}`)} {`,
      `    label=<<I>${html(category)}</I>>;`,
      '    style="rounded,dashed";',
      '    color="#9fb3c8";',
    );
    for (const box of diagram.nodes.filter((n) => n.category === category))
      lines.push(`    ${nodeLine(box)}`);
    lines.push('  }');
  }
  for (const box of diagram.nodes.filter((n) => !n.category)) lines.push(`  ${nodeLine(box)}`);
  for (const edge of diagram.edges) lines.push(`  ${edgeLine(edge, labelled)}`);
  lines.push('}');
  return `${lines.join('\n')}\n`;
}

function nodeLine(box: DiagramNode): string {
  const attrs = [`id=${quoteId(box.id)}`, ...boxAttributes(box)];
  return `${quoteId(box.key)} [${attrs.join(', ')}];`;
}

function boxAttributes(box: DiagramNode): string[] {
  switch (box.kind) {
    case 'node':
      return labelledAttributes(box);
    case 'return':
      return ['shape=cds', 'fillcolor="#eef2f7"', 'fontsize=9', 'height=0.3', `label=<${html(box.text)}>`];
    case 'quit':
      return [
        'shape=doublecircle',
        'fillcolor="#eef2f7"',
        'fontsize=9',
        'margin=0',
        `label=<${html(box.text)}>`,
      ];
    case 'variable':
      return ['shape=ellipse', 'style="dotted"', 'fontsize=10', `label=<${html(box.text)}>`];
    case 'visit':
      return ['shape=diamond', 'fillcolor="#eef2f7"', 'fontsize=9', 'margin=0', `label=<${html(box.text)}>`];
    case 'missing':
      return [
        'style="rounded,dashed"',
        'color="#d64545"',
        'fontcolor="#d64545"',
        `label=<${html(box.text)}<BR/><FONT POINT-SIZE="8">no such node</FONT>>`,
      ];
  }
}

function labelledAttributes(box: DiagramNode): string[] {
  const label = labelText(box.label ?? [], LABEL);
  const attrs = [`label=<${label}>`, `fillcolor="${FILL[box.family ?? 'plain']}"`];
  // Interjections are reached from anywhere when their condition holds, not by arrows: a dashed border says so.
  if (box.conditional) attrs.push('style="rounded,filled,dashed"', 'color="#b44d12"');
  if (box.start) attrs.push('penwidth=2.5');
  return attrs;
}

function edgeLine(edge: DiagramEdge, labelled: boolean): string {
  const attrs: string[] = [];
  if (edge.kind === 'call') attrs.push('style=dashed', 'color="#7b4fd6"', 'fontcolor="#7b4fd6"');
  if (edge.kind === 'variable') attrs.push('style=dotted');
  if (edge.kind === 'order') attrs.push('style=dashed', 'arrowhead=empty');
  if (labelled && edge.label.length > 0)
    attrs.push(`label=<${edge.label.map((l) => lines(wrapText(l, EDGE_LABEL_WIDTH, 3))).join('<BR/>')}>`);
  const tail = attrs.length > 0 ? ` [${attrs.join(', ')}]` : '';
  return `${quoteId(edge.from)} -> ${quoteId(edge.to)}${tail};`;
}

function lines(wrapped: string[]): string {
  return wrapped.map(html).join('<BR/>');
}

/**
 * A DOT double-quoted ID. Graphviz reads `\"` as a quote and keeps every other backslash pair as
 * written, so backslashes stay as they are, except that a run of them before a quote or the closing
 * quote is made even, lest its last backslash escape that quote. Graphviz ends a string at NUL, and the
 * ID becomes an SVG element's title, where XML forbids control characters: they are shown as symbols.
 */
function quoteId(text: string): string {
  const escaped = visible(text.replace(/\r?\n/g, ' ')).replace(
    /(\\*)("|$)/g,
    (_, run: string, quote: string) => `${run}${run.length % 2 ? '\\' : ''}${quote ? '\\"' : ''}`,
  );
  return `"${escaped}"`;
}

/** Text for inside an HTML-like label: XML entities, and control characters shown as symbols. */
function html(text: string): string {
  return visible(text)
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;');
}

/**
 * Control characters other than tab, newline and carriage return, which XML forbids (C0) or discourages
 * (DEL, C1), as visible symbols: U+0000–U+001F as their control pictures (`␀`, `␇`, …), DEL as `␡`,
 * C1 as `�`. Lint refuses them in node names; this keeps a drawing of a graph that was not linted valid.
 */
function visible(text: string): string {
  return text.replace(/(?![\t\n\r])\p{Cc}/gu, (ch) => {
    const code = ch.codePointAt(0)!;
    if (code < 0x20) return String.fromCodePoint(0x2400 + code);
    return code === 0x7f ? '\u2421' : '\ufffd';
  });
}
