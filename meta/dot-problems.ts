/**
 * What is wrong with a DOT draft of a conversation, as sentences the designer can send back to the
 * model that drew it. Pure: works on the graph Graphviz has already read.
 *
 * Conventions a draft must follow (the designer's prompt states them too): every node is labelled with
 * how the agent replies and every edge with how the user replies; the first turn is the node `start`
 * (when no node is called `start`, the single node without incoming edges is taken, if there is exactly
 * one); every node can be reached from the start.
 */
import { closestName } from '../src/graph/names.js';

/** A problem with a DOT draft: one plain sentence saying what is wrong and what to do about it. */
export type DotProblem = string;

/** Bounds on the size of a draft. */
export interface DotLimits {
  minNodes: number;
  maxNodes: number;
}

/** A node as Graphviz read it; `label` is '' when the node has no label of its own. */
export interface DraftNode {
  id: string;
  label: string;
}

/** An edge as Graphviz read it, in declaration order; `label` is '' when it has none. */
export interface DraftEdge {
  from: string;
  to: string;
  label: string;
}

/** A DOT graph as the designer reads it: labelled nodes and edges, and where the conversation starts. */
export interface DotDraft {
  nodes: DraftNode[];
  edges: DraftEdge[];
  start?: string | undefined;
}

/** The id that marks the first turn of the conversation. */
export const START_ID = 'start';

/** Edges listed by name in one sentence before the rest are counted. */
const LISTED = 5;

/** The start node of a draft, by the conventions above; undefined when there is none. */
export function findStart(nodes: readonly DraftNode[], edges: readonly DraftEdge[]): string | undefined {
  if (nodes.some((n) => n.id === START_ID)) return START_ID;
  const sources = nodes.filter((n) => !edges.some((e) => e.to === n.id && e.from !== n.id));
  return sources.length === 1 ? sources[0]!.id : undefined;
}

/** Every problem of a draft that Graphviz has read without a syntax error, in a fixed order. */
export function draftProblems(
  draft: { directed: boolean; nodes: readonly DraftNode[]; edges: readonly DraftEdge[] },
  limits: DotLimits,
): DotProblem[] {
  const { nodes, edges } = draft;
  const problems: DotProblem[] = [];
  if (!draft.directed) problems.push('the graph is undirected: write it as digraph { … } with -> edges');
  if (nodes.length < limits.minNodes)
    problems.push(
      `the graph has ${count(nodes.length, 'node')}; draw at least ${limits.minNodes}, one for each turn of the agent`,
    );
  if (nodes.length > limits.maxNodes)
    problems.push(
      `the graph has ${count(nodes.length, 'node')}, more than ${limits.maxNodes}: merge similar turns into one node`,
    );
  problems.push(...unlabeledNodeProblems(nodes, edges));
  const unlabeled = edges.filter((e) => !e.label);
  if (unlabeled.length > 0)
    problems.push(
      `${listEdges(unlabeled)} ${unlabeled.length === 1 ? 'has' : 'have'} no label: label every edge with how the user replies`,
    );
  for (const node of nodes.filter((n) => n.label && !edges.some((e) => e.from === n.id || e.to === n.id)))
    problems.push(`node ${node.id} has no edges: connect it to the conversation or remove it`);
  problems.push(...startProblems(nodes, edges));
  return problems;
}

/**
 * A node without a label is either a typo in an edge (the edge names a node never defined) or a
 * forgotten label; the sentence differs, and a likely intended id is suggested.
 */
function unlabeledNodeProblems(nodes: readonly DraftNode[], edges: readonly DraftEdge[]): DotProblem[] {
  const labelled = nodes.filter((n) => n.label).map((n) => n.id);
  return nodes
    .filter((n) => !n.label)
    .map((node) => {
      const touching = edges.filter((e) => e.from === node.id || e.to === node.id);
      if (touching.length === 0)
        return `node ${node.id} has no label and no edges: label it with how the agent replies and connect it, or remove it`;
      const guess = closestName(node.id, labelled);
      const fix = guess
        ? `did you mean ${guess}? Otherwise define it as ${node.id} [label="how the agent replies"]`
        : `define it as ${node.id} [label="how the agent replies"] or point the edge at a labelled node`;
      return `${listEdges(touching)} ${touching.length === 1 ? 'uses' : 'use'} node ${node.id}, which has no label of its own: ${fix}`;
    });
}

function startProblems(nodes: readonly DraftNode[], edges: readonly DraftEdge[]): DotProblem[] {
  if (nodes.length === 0) return [];
  const start = findStart(nodes, edges);
  if (!start) return [`there is no start node: name the node of the agent's first turn ${START_ID}`];
  const reached = new Set([start]);
  const queue = [start];
  while (queue.length > 0) {
    const from = queue.pop()!;
    for (const edge of edges)
      if (edge.from === from && !reached.has(edge.to)) {
        reached.add(edge.to);
        queue.push(edge.to);
      }
  }
  // Nodes without any edge were reported already; these have edges that never connect back to the start.
  const unreachable = nodes.filter(
    (n) => !reached.has(n.id) && edges.some((e) => e.from === n.id || e.to === n.id),
  );
  if (unreachable.length === 0) return [];
  const ids = unreachable.map((n) => n.id).join(', ');
  return [
    `${unreachable.length === 1 ? `node ${ids} cannot` : `nodes ${ids} cannot`} be reached from ${start}: add edges that lead to ${unreachable.length === 1 ? 'it' : 'them'} or remove ${unreachable.length === 1 ? 'it' : 'them'}`,
  ];
}

function listEdges(edges: readonly DraftEdge[]): string {
  const named = edges.slice(0, LISTED).map((e) => `${e.from} -> ${e.to}`);
  const more = edges.length > LISTED ? ` and ${edges.length - LISTED} more` : '';
  return `${edges.length === 1 ? 'edge' : 'edges'} ${named.join(', ')}${more}`;
}

function count(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}
