/**
 * Reading the designer's DOT drafts. Graphviz itself (WASM) parses the DOT, so what we accept is exactly
 * DOT; we only walk the JSON it returns and check the draft against the designer's conventions (see
 * `dot-problems.ts`). Problems are sentences to send back to the model, never exceptions.
 */
import { graphviz } from '../src/export/graphviz.js';
import {
  draftProblems,
  findStart,
  type DotDraft,
  type DotLimits,
  type DotProblem,
  type DraftEdge,
} from './dot-problems.js';
import { DEFAULT_DESIGN_LIMITS } from './limits.js';

/** A DOT draft as read: nodes and edges in declaration order, the start node, and what must change. */
export interface ParsedDot extends DotDraft {
  /** Empty when the draft can be used as it is. */
  problems: DotProblem[];
}

/** The part of Graphviz's `dot_json` output we read: the graph as parsed, without its layout. */
interface GraphvizJson {
  directed: boolean;
  _subgraph_cnt?: number;
  objects?: { _gvid: number; name: string; label?: string }[];
  edges?: { tail: number; head: number; label?: string; xlabel?: string }[];
}

/**
 * Parses DOT with Graphviz and lists the draft's problems: a syntax error (with the line Graphviz
 * reports), unlabelled nodes and edges, edges to nodes never defined, isolated or unreachable nodes,
 * no start node, too few or too many nodes. With a syntax error only that problem is returned.
 */
export async function parseDot(source: string, limits: Partial<DotLimits> = {}): Promise<ParsedDot> {
  if (!source.trim())
    return { nodes: [], edges: [], problems: ['the graph is empty: write it as digraph { … }'] };
  const viz = await graphviz();
  // Graphviz lays the graph out whatever the format asked for; only the parse is read here, so the
  // cheapest layout that still reads every label will do (twopi: a fraction of dot's cost, most of all in
  // a fresh process; patchwork, cheaper still, skips edge labels and so their errors).
  const result = viz.render(source, { format: 'dot_json', engine: 'twopi' });
  const errors = result.errors.filter((e) => e.level !== 'warning').map((e) => e.message);
  if (result.status === 'failure') return { nodes: [], edges: [], problems: [syntaxProblem(errors, source)] };

  const json = JSON.parse(result.output) as GraphvizJson;
  // Subgraphs come first in `objects`; edges refer to nodes by their `_gvid`.
  const objects = (json.objects ?? []).slice(json._subgraph_cnt ?? 0);
  const idOf = new Map(objects.map((o) => [o._gvid, o.name]));
  const nodes = objects.map((o) => ({ id: o.name, label: labelText(o.label, o.name) }));
  const edges = (json.edges ?? []).map((e) => ({
    from: idOf.get(e.tail)!,
    to: idOf.get(e.head)!,
    label: labelText(e.label || e.xlabel, ''),
  }));
  const { minNodes, maxNodes } = DEFAULT_DESIGN_LIMITS;
  const problems = draftProblems(
    { directed: json.directed, nodes, edges },
    { minNodes, maxNodes, ...limits },
  );
  // Graphviz can accept a graph yet report errors, e.g. a malformed HTML label.
  if (errors.length > 0) problems.unshift(syntaxProblem(errors, source));
  const parsed: ParsedDot = { nodes, edges: mergeParallel(edges), problems };
  const start = findStart(nodes, edges);
  if (start) parsed.start = start;
  return parsed;
}

/**
 * Edges with the same ends as one edge, where the first of them was, its label naming every reply:
 * replies that lead to the same turn need no question to tell them apart.
 */
function mergeParallel(edges: readonly DraftEdge[]): DraftEdge[] {
  const merged = new Map<string, DraftEdge>();
  for (const edge of edges) {
    const key = JSON.stringify([edge.from, edge.to]);
    const first = merged.get(key);
    if (!first) merged.set(key, { ...edge });
    else if (edge.label) first.label = first.label ? `${first.label}; or ${edge.label}` : edge.label;
  }
  return [...merged.values()];
}

/** Pulls the DOT graph out of a model's answer and parses it; an answer without one is a problem too. */
export async function parseDotAnswer(answer: string, limits: Partial<DotLimits> = {}): Promise<ParsedDot> {
  const dot = extractDot(answer);
  if (dot === undefined)
    return {
      nodes: [],
      edges: [],
      problems: ['the answer contains no DOT graph: write the graph as digraph { … } in a ```dot code block'],
    };
  return parseDot(dot, limits);
}

/**
 * The DOT graph in a model's answer: the first ```dot (or ```graphviz / ```gv) fenced block, else the
 * first fenced block holding a graph, else the first `digraph … { … }` (or `graph … { … }`) in the text,
 * up to its matching brace. Undefined when there is none.
 */
export function extractDot(text: string): string | undefined {
  const blocks = [...text.matchAll(/```[ \t]*([\w-]*)[^\n]*\n([\s\S]*?)(?:```|$)/g)];
  const tagged = blocks.find((b) => /^(dot|graphviz|gv)$/i.test(b[1] ?? ''));
  if (tagged) return tagged[2]!.trim();
  const holding = blocks.find((b) => GRAPH_START.test(b[2] ?? ''));
  if (holding) return holding[2]!.trim();
  const match = DIGRAPH_START.exec(text) ?? GRAPH_START.exec(text);
  if (!match) return undefined;
  return text.slice(match.index, closingBrace(text, match.index + match[0].length)).trim();
}

const DIGRAPH_START = /\b(?:strict\s+)?digraph\b[^{};]*\{/i;
const GRAPH_START = /\b(?:strict\s+)?(?:di)?graph\b[^{};]*\{/i;

/** The index just past the brace that closes the one opened before `from`, skipping quoted strings. */
function closingBrace(text: string, from: number): number {
  let depth = 1;
  for (let i = from; i < text.length; i++) {
    const ch = text[i];
    if (ch === '"') {
      for (i++; i < text.length && text[i] !== '"'; i++) if (text[i] === '\\') i++;
    } else if (ch === '{') depth++;
    else if (ch === '}' && --depth === 0) return i + 1;
  }
  return text.length;
}

/**
 * Graphviz's complaint as a sentence that points at the source line: `syntax error in line 3 near '->'`
 * becomes `line 3: syntax error near '->' in "b -> -> c"`.
 */
function syntaxProblem(errors: readonly string[], source: string): DotProblem {
  const raw = errors.join('\n');
  const message = raw.replace(/\s+/g, ' ').trim();
  if (!message) return 'Graphviz could not read the graph: check that it is a complete digraph { … }';
  // Errors in HTML-like labels count lines inside the label, not in the file.
  if (message.includes(' in label of '))
    return `Graphviz could not read a label: ${message.replace(/ in line \d+/, '')}`;
  // Graphviz reports an unclosed string where the file ends; the line it starts on is the useful one.
  const unclosed = /String starting:(\S[^\n]{0,40})/.exec(raw);
  const opened = unclosed ? source.indexOf(unclosed[1]!) : -1;
  if (opened >= 0) {
    const line = source.slice(0, opened).split('\n').length;
    return `line ${line}: a quoted string is never closed: add the missing " in ${quoteLine(source, line)}`;
  }
  const located = /^(.*?) in line (\d+)(.*)$/.exec(message);
  if (!located) return `Graphviz could not read the graph: ${message}`;
  const line = Number(located[2]);
  return `line ${line}: ${located[1]}${located[3]} in ${quoteLine(source, line)}`;
}

function quoteLine(source: string, line: number): string {
  const text = source.split('\n')[line - 1]?.trim() ?? '';
  return `"${text.length > 80 ? `${text.slice(0, 79)}…` : text}"`;
}

/**
 * A label as text: Graphviz's default `\N` (the node's own name) counts as no label; escapes for
 * line breaks become spaces and `\N` in a label becomes the node id.
 */
function labelText(label: string | undefined, id: string): string {
  if (label === undefined || label === '\\N') return '';
  return label
    .replace(/\\([nlr])/g, ' ')
    .replace(/\\N/g, id)
    .replace(/\\\\/g, '\\')
    .replace(/\s+/g, ' ')
    .trim();
}
