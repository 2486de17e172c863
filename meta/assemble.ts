/**
 * Turns a DOT draft and the fields written for its nodes into a graph file: node names made valid and
 * unique, one transition per outgoing edge in edge order, the start node first, and every setting the
 * designer chooses written into the config (the rest are written with their defaults). The turns that
 * close the conversation end it with `quit`. Pure: no model calls.
 */
import { graphFileSchema, type GraphFile, type NodeSpecInput } from '../src/graph/schema.js';
import { endingNodes } from './ending.js';
import type { DotDraft } from './dot-problems.js';
import type { NodeFields } from './node-fields.js';

/** What a designed graph is called and what it is for. */
export interface GraphIdentity {
  name: string;
  description: string;
}

/**
 * The turn every other edge-less node continues to, so the conversation stays open there; it asks after
 * each reply whether the user is done, and leads to the goodbye when they are.
 */
const CONTINUE = {
  name: 'continue_conversation',
  instruction: 'Respond to the user, keeping to your purpose.',
  transitionQuestion:
    'Is the user done with the conversation, saying goodbye or that they need nothing more?',
  userInstructions: ['Say goodbye.', 'Carry on the conversation naturally.'],
} as const;

/** Transition words that cannot name a node. */
const RESERVED = new Set(['quit', 'return']);

/**
 * Builds the graph file. `fields[i]` belongs to `draft.nodes[i]`, and the draft has its closing turn
 * (`withEnding` in ending.ts sees to that). Throws a RangeError when either is not so: that is a bug in
 * the caller, not something a model can cause.
 */
export function assembleGraph(
  draft: DotDraft,
  fields: readonly NodeFields[],
  identity: GraphIdentity,
): GraphFile {
  if (fields.length !== draft.nodes.length)
    throw new RangeError(`assemble: ${fields.length} node fields for ${draft.nodes.length} nodes`);
  const endings = endingNodes(draft);
  if (endings.length === 0)
    throw new RangeError('assemble: the draft has no turn that ends the conversation');
  const names = nodeNames(draft);
  const ending = new Set(endings.map((n) => n.id));
  const ordered = startFirst(draft);
  const needsContinue = draft.nodes.some(
    (n) => !ending.has(n.id) && !draft.edges.some((e) => e.from === n.id),
  );
  const continueName = needsContinue ? uniqueName(CONTINUE.name, new Set(names.values())) : undefined;

  // A turn leads on by its edges; without any, it ends the conversation or leaves it open.
  const waysOn = (id: string): string[] => {
    const edges = draft.edges.filter((e) => e.from === id);
    if (edges.length > 0) return edges.map((e) => names.get(e.to)!);
    return ending.has(id) ? ['quit'] : [continueName!];
  };

  const nodes: NodeSpecInput[] = ordered.map((index) => {
    const dotNode = draft.nodes[index]!;
    const drafted = {
      name: names.get(dotNode.id)!,
      action: 'chat' as const,
      transitions: waysOn(dotNode.id),
      notes: `Drafted as: ${dotNode.label}`,
    };
    return withFields(drafted, fields[index]!);
  });
  if (continueName)
    nodes.push({
      name: continueName,
      action: 'chat',
      instruction: CONTINUE.instruction,
      transitions: [names.get(endings[0]!.id)!, continueName],
      transitionQuestion: CONTINUE.transitionQuestion,
      transitionChoices: ['yes', 'no'],
      userInstructions: [...CONTINUE.userInstructions],
    });

  return graphFileSchema.parse({
    name: identity.name,
    description: identity.description,
    config: {
      startNode: nodes[0]!.name,
      prompt: `You are a conversational agent. Your purpose: ${identity.description}`,
      userPrompt: `You are a user talking with an agent whose purpose is: ${identity.description}`,
      // Each transition question is written about the user's last reply (node-fields.ts), so the
      // classifier sees that exchange only, as AutoGRAMS' default does, however long the conversation.
      transitionContext: 1,
    },
    nodes,
  });
}

/**
 * A graph-safe name for every DOT node id: lower-case words joined by `_`. Ids that say nothing
 * (`n1`, `A`) are replaced by the first words of the node's label, which name the agent's turn.
 */
export function nodeNames(draft: DotDraft): Map<string, string> {
  const taken = new Set<string>();
  const names = new Map<string, string>();
  for (const node of draft.nodes) {
    const fromId = slug(node.id);
    const base = /[a-z]{3}/.test(fromId) ? fromId : slug(node.label.split(/\s+/).slice(0, 5).join(' '));
    const name = uniqueName(base || 'node', taken);
    taken.add(name);
    names.set(node.id, name);
  }
  return names;
}

function slug(text: string): string {
  const words = text
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '')
    .slice(0, 40)
    .replace(/_+$/, '');
  return /^[0-9]/.test(words) ? `n_${words}` : words;
}

function uniqueName(base: string, taken: ReadonlySet<string>): string {
  const stem = RESERVED.has(base) ? `${base}_node` : base;
  if (!taken.has(stem)) return stem;
  let n = 2;
  while (taken.has(`${stem}_${n}`)) n++;
  return `${stem}_${n}`;
}

/** Node indices with the start node first and the rest in draft order. */
function startFirst(draft: DotDraft): number[] {
  const indices = draft.nodes.map((_, i) => i);
  const start = draft.nodes.findIndex((n) => n.id === draft.start);
  return start > 0 ? [start, ...indices.filter((i) => i !== start)] : indices;
}

/**
 * A node with the fields the model wrote: its instruction, action and simulated-user instructions, and
 * its transition question and choices when it has more than one transition (one transition needs none).
 */
export function withFields(node: NodeSpecInput, fields: NodeFields): NodeSpecInput {
  const { transitionQuestion: _question, transitionChoices: _choices, ...rest } = node;
  const branches = (node.transitions ?? []).length > 1;
  return {
    ...rest,
    action: fields.action,
    instruction: literal(fields.instruction, true),
    userInstructions: fields.userInstructions,
    ...(branches
      ? {
          transitionQuestion: literal(fields.transitionQuestion ?? '', false),
          transitionChoices: (fields.transitionChoices ?? []).map((c) => literal(c, false)),
        }
      : {}),
  };
}

/**
 * Text the model wrote is text: a designed chatbot has no variables, so `$name` is escaped (`\$`), and
 * an instruction starting `answer = …` would store the reply in a variable, so its `=` is escaped (`\=`).
 */
function literal(text: string, instruction: boolean): string {
  const dollars = text.replace(/(?<!\\)\$(?=[A-Za-z_])/g, '\\$');
  return instruction && /^\s*[A-Za-z_]\w*\s*=(?!=)/.test(dollars) ? dollars.replace('=', '\\=') : dollars;
}
