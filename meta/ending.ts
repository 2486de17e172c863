/**
 * How a designed conversation ends. The designer asks the model to end its drawing at a node `goodbye`
 * with no edges out of it; assembly gives such a node the transition `quit`. A model that forgets, or
 * that draws turns which only lead round and round, still gets a draft in which every turn can lead to
 * a goodbye: `withEnding` adds the goodbye turn and the edges to it, before the node fields are written,
 * so the model writes those turns' questions and choices with the way out among them.
 */
import { saysGoodbye } from '../src/graph/lint-paths.js';
import { MAX_CHOICES } from '../src/graph/lint-transitions.js';
import type { DotDraft, DraftEdge, DraftNode } from './dot-problems.js';

/** The id the designer's prompt gives the closing turn. */
const GOODBYE_ID = 'goodbye';

/** Ids a model gives the closing turn: the one asked for, and the ones models reach for instead. */
const ENDING_ID = /^(?:good_?bye|bye|farewell|end|end_conversation|quit|exit)$/i;

/** The closing turn added to a draft that has none. */
const ADDED_GOODBYE = 'Thank the user and say goodbye';
/** The way out added to turns that could otherwise never end. */
const DONE_LABEL = 'The user is done and says goodbye';

/**
 * The turns after which the conversation ends: nodes without outgoing edges that are named as the
 * closing turn or whose label says goodbye. Other nodes without outgoing edges leave the conversation
 * open (assembly continues them with an open-ended turn).
 */
export function endingNodes(draft: DotDraft): DraftNode[] {
  return draft.nodes.filter(
    (node) =>
      !draft.edges.some((e) => e.from === node.id) && (ENDING_ID.test(node.id) || saysGoodbye(node.label)),
  );
}

/** A draft completed so that the conversation can end from every turn, and what was added to it. */
export interface EndedDraft {
  draft: DotDraft;
  /** The closing turn: the draft's own, or the one added. */
  closing: string;
  /** True when the draft had no closing turn and `closing` was added. */
  addedNode: boolean;
  /** Edges added to the closing turn from turns that only led round and round. */
  addedEdges: number;
}

/**
 * Completes a usable draft: when no turn closes the conversation, a goodbye turn is added (assembly
 * leads the open-ended turn to it); every turn in a loop the conversation could never leave gets an
 * edge to the closing turn. A turn that already has as many ways out as a question has letters is left
 * as it is.
 */
export function withEnding(draft: DotDraft): EndedDraft {
  const existing = endingNodes(draft)[0];
  const closing: DraftNode = existing ?? { id: freeId(draft), label: ADDED_GOODBYE };
  const exits: DraftEdge[] = closedLoopNodes(draft)
    .filter((id) => draft.edges.filter((e) => e.from === id).length < MAX_CHOICES)
    .map((id) => ({ from: id, to: closing.id, label: DONE_LABEL }));
  const completed: DotDraft = {
    ...draft,
    nodes: existing ? draft.nodes : [...draft.nodes, closing],
    edges: [...draft.edges, ...exits],
  };
  return { draft: completed, closing: closing.id, addedNode: !existing, addedEdges: exits.length };
}

/**
 * Nodes in a loop the conversation can never leave once it is in it: nodes with edges out, from which
 * every node reachable leads back to them (a sink component of the graph). Nodes without edges out are
 * not loops: the conversation stays open there.
 */
function closedLoopNodes(draft: DotDraft): string[] {
  const next = new Map(draft.nodes.map((n) => [n.id, draft.edges.filter((e) => e.from === n.id)]));
  const reach = new Map(draft.nodes.map((n) => [n.id, reachable(n.id, next)]));
  return draft.nodes
    .map((n) => n.id)
    .filter((id) => next.get(id)!.length > 0 && [...reach.get(id)!].every((to) => reach.get(to)?.has(id)));
}

function reachable(from: string, next: ReadonlyMap<string, readonly DraftEdge[]>): Set<string> {
  const seen = new Set([from]);
  const queue = [from];
  while (queue.length > 0)
    for (const edge of next.get(queue.pop()!) ?? [])
      if (!seen.has(edge.to)) {
        seen.add(edge.to);
        queue.push(edge.to);
      }
  return seen;
}

/** `goodbye`, or `goodbye_2`, … when the draft uses that id for another turn. */
function freeId(draft: DotDraft): string {
  const taken = new Set(draft.nodes.map((n) => n.id));
  let id = GOODBYE_ID;
  for (let n = 2; taken.has(id); n++) id = `${GOODBYE_ID}_${n}`;
  return id;
}
