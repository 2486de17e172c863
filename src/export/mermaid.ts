/**
 * A drawing (a graph's or a flow's) -> Mermaid `flowchart TD`. Node names carry dots, parentheses and other characters Mermaid reads
 * as syntax, so every box gets a sanitised id (`n_` for graph nodes, `m_` for markers: no id can then be
 * a Mermaid keyword such as `end`), and every label is quoted with Mermaid's `#…;` entity escapes.
 */
import type { GraphFile } from '../graph/schema.js';
import { buildDiagram, type BoxFamily, type Diagram, type DiagramEdge, type DiagramNode } from './diagram.js';
import { labelText, wrapText, type LabelMarkup } from './text.js';

const TEXT_WIDTH = 36;
const EDGE_LABEL_WIDTH = 24;

/** Class per box family, so the kinds of step stand apart as in the DOT export. */
const CLASS_OF_FAMILY: Record<BoxFamily, string> = {
  chat: 'chat',
  thought: 'thought',
  code: 'code',
  function: 'fn',
  goal: 'goal',
  prompt: 'other',
  plain: 'other',
};

/** How a box's label is written, with Mermaid's entity escapes; a condition stands out by the box's shape. */
const LABEL: LabelMarkup = {
  looks: {
    title: ['<b>', '</b>'],
    tag: ['<i>', '</i>'],
    text: ['', ''],
    question: ['<i>', '</i>'],
    condition: ['', ''],
  },
  escape,
  br: '<br/>',
  width: TEXT_WIDTH,
};

/** Style per class; only the classes a chart uses are declared in it. */
const CLASS_STYLES: Record<string, string> = {
  chat: 'fill:#e3f0ff,stroke:#52606d',
  thought: 'fill:#fff6dc,stroke:#52606d',
  code: 'fill:#e8f5e9,stroke:#52606d',
  fn: 'fill:#f1e8ff,stroke:#52606d',
  goal: 'fill:#ffe8d6,stroke:#52606d',
  other: 'fill:#f0f0f0,stroke:#52606d',
  marker: 'fill:#eef2f7,stroke:#9fb3c8',
  missing: 'fill:#fff,stroke:#d64545,color:#d64545,stroke-dasharray:4 3',
  interjection: 'stroke:#b44d12,stroke-dasharray:5 4',
  start: 'stroke-width:3px',
};

/** Renders a graph file as a Mermaid flowchart. */
export function toMermaid(file: GraphFile): string {
  return diagramToMermaid(buildDiagram(file));
}

/** Renders an already built drawing as a Mermaid flowchart. */
export function diagramToMermaid(diagram: Diagram): string {
  const ids = mermaidIds(diagram.nodes);
  const out = ['flowchart TD'];
  diagram.categories.forEach((category, i) => {
    out.push(`  subgraph cat_${i}["${escape(category)}"]`);
    for (const box of diagram.nodes.filter((n) => n.category === category))
      out.push(`    ${nodeLine(box, ids.get(box.key)!)}`);
    out.push('  end');
  });
  for (const box of diagram.nodes.filter((n) => !n.category))
    out.push(`  ${nodeLine(box, ids.get(box.key)!)}`);
  for (const edge of diagram.edges) out.push(`  ${edgeLine(edge, ids)}`);
  for (const [name, members] of classMembers(diagram.nodes, ids))
    out.push(`  classDef ${name} ${CLASS_STYLES[name]}`, `  class ${members.join(',')} ${name}`);
  return `${out.join('\n')}\n`;
}

function nodeLine(box: DiagramNode, id: string): string {
  switch (box.kind) {
    case 'node': {
      const text = labelText(box.label ?? [], LABEL);
      // Interjections get a hexagon: they are entered on a condition, not by an arrow.
      return box.conditional ? `${id}{{"${text}"}}` : `${id}("${text}")`;
    }
    case 'return':
      return `${id}(["${escape(box.text)}"])`;
    case 'quit':
      return `${id}(("${escape(box.text)}"))`;
    case 'variable':
      return `${id}(["${escape(box.text)}"])`;
    case 'visit':
      return `${id}{"${escape(box.text)}"}`;
    case 'missing':
      return `${id}["${escape(box.text)}<br/>no such node"]`;
  }
}

function edgeLine(edge: DiagramEdge, ids: Map<string, string>): string {
  // Calls, `$var` jumps and a flow's order-only edges carry no answer: drawn dashed, as in the DOT export.
  const arrow = edge.kind === 'call' || edge.kind === 'variable' || edge.kind === 'order' ? '-.->' : '-->';
  const from = ids.get(edge.from)!;
  const to = ids.get(edge.to)!;
  if (edge.label.length === 0) return `${from} ${arrow} ${to}`;
  const label = edge.label.map((l) => lines(wrapText(l, EDGE_LABEL_WIDTH, 3))).join('<br/>');
  return `${from} ${arrow}|"${label}"| ${to}`;
}

/** Sanitised, unique ids: `u.1` -> `n_u_1`, `f(a, b)` -> `n_f_a_b`; a clash gets `_2`, `_3`, … */
function mermaidIds(nodes: readonly DiagramNode[]): Map<string, string> {
  const ids = new Map<string, string>();
  const used = new Set<string>();
  for (const box of nodes) {
    const stem = box.text.replace(/[^A-Za-z0-9]+/g, '_').replace(/^_+|_+$/g, '');
    const base = `${box.kind === 'node' ? 'n' : 'm'}_${stem}`;
    let id = base;
    for (let n = 2; used.has(id); n++) id = `${base}_${n}`;
    used.add(id);
    ids.set(box.key, id);
  }
  return ids;
}

function classMembers(nodes: readonly DiagramNode[], ids: Map<string, string>): [string, string[]][] {
  const members = new Map<string, string[]>();
  const add = (name: string, box: DiagramNode): void => {
    members.set(name, [...(members.get(name) ?? []), ids.get(box.key)!]);
  };
  for (const box of nodes) {
    if (box.kind === 'node') {
      add(CLASS_OF_FAMILY[box.family ?? 'plain'], box);
      if (box.conditional) add('interjection', box);
      if (box.start) add('start', box);
    } else add(box.kind === 'missing' ? 'missing' : 'marker', box);
  }
  return [...members];
}

function lines(wrapped: string[]): string {
  return wrapped.map(escape).join('<br/>');
}

/** Mermaid entity codes for characters that would end a quoted label or be read as markup. */
function escape(text: string): string {
  return text
    .replace(/#/g, '#35;')
    .replace(/"/g, '#quot;')
    .replace(/&/g, '#amp;')
    .replace(/</g, '#lt;')
    .replace(/>/g, '#gt;')
    .replace(/`/g, '#96;')
    .replace(/\|/g, '#124;')
    .replace(/\r?\n/g, ' ');
}
