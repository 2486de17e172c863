/**
 * Lays a graph out as rows for a terminal: breadth-first from the start node, each node once, indented
 * by its distance from the start, with its outgoing transitions (and their choices) on the same row.
 * A list scrolls and reads the same at 10 nodes and at 300, where a drawn picture would not fit.
 */
import type { CompiledNode } from '../graph/parse.js';
import { startNodeOf, successors } from '../graph/structure.js';
import type { GraphView } from '../graph/view.js';

/** One outgoing transition as written, with the classifier's choice text when there is one. */
export interface GraphEdge {
  label: string;
  choice?: string;
  /** The transition names a node the graph does not have. */
  missing?: boolean;
}

export type GraphRow =
  | {
      kind: 'node';
      name: string;
      action: string;
      /** Breadth-first distance from the first node of its section. */
      depth: number;
      edges: GraphEdge[];
      interjection: boolean;
    }
  | { kind: 'section'; label: string };

export interface GraphLayout {
  rows: GraphRow[];
  /** Row index of each node, for keeping a node in view. */
  rowOf: ReadonlyMap<string, number>;
  /** Node names in row order: the order the selection moves in. */
  order: string[];
}

/** Lays out `graph`; sections after the first hold interjections and nodes the start cannot reach. */
export function layoutGraph(graph: GraphView): GraphLayout {
  const nodes = graph.nodes();
  const byName = new Map(nodes.map((n) => [n.name, n]));
  const byFunction = new Map(nodes.filter((n) => n.callable).map((n) => [n.callable!.fn, n.name]));
  const has = (name: string): boolean => byName.has(name);
  const placed = new Set<string>();
  const rows: GraphRow[] = [];

  const walk = (roots: readonly string[]): void => {
    const queue = roots.filter((r) => has(r) && !placed.has(r)).map((name) => ({ name, depth: 0 }));
    for (const { name } of queue) placed.add(name);
    for (let i = 0; i < queue.length; i++) {
      const { name, depth } = queue[i]!;
      const node = byName.get(name)!;
      rows.push(nodeRow(node, depth, has));
      for (const next of [...successors(node, has), ...calledNode(node, byFunction)]) {
        if (placed.has(next)) continue;
        placed.add(next);
        queue.push({ name: next, depth: depth + 1 });
      }
    }
  };

  const start = startNodeOf({ config: graph.config, nodes });
  walk(start ? [start] : []);
  const interjections = nodes.filter((n) => n.isInterjection && !placed.has(n.name)).map((n) => n.name);
  if (interjections.length > 0) {
    rows.push({ kind: 'section', label: 'interjections' });
    walk(interjections);
  }
  const rest = nodes.filter((n) => !placed.has(n.name)).map((n) => n.name);
  if (rest.length > 0) {
    rows.push({
      kind: 'section',
      label: restLabel(start, variablesOf(nodes.filter((n) => placed.has(n.name)))),
    });
    // Each unreachable node roots its own walk, so what it leads to still nests under it.
    for (const name of rest) walk([name]);
  }

  const rowOf = new Map<string, number>();
  rows.forEach((row, i) => {
    if (row.kind === 'node') rowOf.set(row.name, i);
  });
  return { rows, rowOf, order: [...rowOf.keys()] };
}

/**
 * Names the section of nodes no transition leads to. A `$var` transition may jump to any of them at run
 * time (the Appendix H agent reaches every node it adds that way), so the label says which ones can.
 */
function restLabel(start: string | undefined, variables: string[]): string {
  const label = `not reachable from ${start ?? 'start'}`;
  return variables.length > 0 ? `${label} except through ${variables.map((v) => `$${v}`).join(', ')}` : label;
}

/** The variables the `$var` transitions of `nodes` jump through, each once. */
function variablesOf(nodes: readonly CompiledNode[]): string[] {
  const names = nodes.flatMap((n) => n.targets.flatMap((t) => (t.kind === 'variable' ? [t.variable] : [])));
  return [...new Set(names)];
}

function nodeRow(node: CompiledNode, depth: number, has: (name: string) => boolean): GraphRow {
  const edges: GraphEdge[] = node.transitions.map((label, i) => {
    const target = node.targets[i];
    const choice = node.transitionChoices[i];
    return {
      label: label.trim(),
      ...(choice ? { choice } : {}),
      ...(target?.kind === 'node' && !has(target.name) ? { missing: true } : {}),
    };
  });
  if (node.call) edges.push({ label: `calls ${node.call.fn}()` });
  return {
    kind: 'node',
    name: node.name,
    action: node.action,
    depth,
    edges,
    interjection: node.isInterjection,
  };
}

/** A function node leads into the node that defines the function it calls. */
function calledNode(node: CompiledNode, byFunction: ReadonlyMap<string, string>): string[] {
  const target = node.call ? byFunction.get(node.call.fn) : undefined;
  return target ? [target] : [];
}
