/**
 * What the designer asks the model for each node of a drafted graph: the brief it writes from (the
 * node's DOT label and the labels of the edges around it), the zod schema its answer must match, and
 * the prompts: one node to a call, or several (their fields under their ids in one JSON object). The
 * nodes are independent of each other, so the calls can run concurrently.
 */
import { z } from 'zod';
import { schemaFor } from '../src/llm/structured.js';
import type { ChatMessage } from '../src/llm/types.js';
import type { DotDraft } from './dot-problems.js';
import { endingNodes } from './ending.js';

/** A node of the DOT draft with the edges around it, as the field-writing prompt describes it. */
export interface NodeBrief {
  /** The DOT node id. */
  id: string;
  /** How the agent replies at this node (the DOT node label). */
  label: string;
  /** Labels of the user replies that lead here (incoming edge labels). */
  incoming: string[];
  /** The user replies that leave this node, in edge order: edge label and the label of the node reached. */
  outgoing: { label: string; toLabel: string }[];
  /** True for the node the conversation starts at. */
  start: boolean;
  /** True for a node after which the conversation ends (see ending.ts). */
  ending: boolean;
}

/** One brief per node, in node order; edge order is kept because it fixes the order of transitions. */
export function nodeBriefs(draft: DotDraft): NodeBrief[] {
  const labelOf = new Map(draft.nodes.map((n) => [n.id, n.label]));
  const endings = new Set(endingNodes(draft).map((n) => n.id));
  return draft.nodes.map((node) => ({
    id: node.id,
    label: node.label,
    incoming: draft.edges.filter((e) => e.to === node.id).map((e) => e.label),
    outgoing: draft.edges
      .filter((e) => e.from === node.id)
      .map((e) => ({ label: e.label, toLabel: labelOf.get(e.to) ?? e.to })),
    start: node.id === draft.start,
    ending: endings.has(node.id),
  }));
}

/** A node's fields as the model wrote them and the schema accepted them. */
export interface NodeFields {
  action: 'chat' | 'chat_exact';
  instruction: string;
  /** Present when the node has more than one outgoing edge. */
  transitionQuestion?: string | undefined;
  /** One per outgoing edge, when the node has more than one. */
  transitionChoices?: string[] | undefined;
  /** One per outgoing edge (one for a node without edges). */
  userInstructions: string[];
}

/**
 * The schema a node's answer must match. The number of choices and simulated-user instructions is fixed
 * by the node's outgoing edges (a node without edges continues the conversation with one), so a wrong
 * count is a validation error the model is told about, not something assembly has to guess around.
 * Nodes with as many edges share one schema: zod compiles a schema on its first use, which costs more
 * than validating with it.
 */
export function nodeFieldsSchema(brief: NodeBrief): z.ZodType<NodeFields> {
  const edges = brief.outgoing.length;
  let schema = schemasByEdges.get(edges);
  if (!schema) schemasByEdges.set(edges, (schema = fieldsSchemaFor(edges)));
  return schema;
}

const schemasByEdges = new Map<number, z.ZodType<NodeFields>>();

function fieldsSchemaFor(edges: number): z.ZodType<NodeFields> {
  const ways = Math.max(edges, 1);
  const branches = edges > 1;
  const nonEmpty = z.string().trim().min(1);
  return z.object({
    action: z
      .enum(['chat', 'chat_exact'])
      .describe(
        '"chat": the model writes the reply from the instruction; "chat_exact": the instruction is the reply.',
      ),
    instruction: nonEmpty.describe('An instruction for the agent (or, for chat_exact, the exact reply).'),
    transitionQuestion: branches
      ? nonEmpty.describe("A question about the user's reply that tells the possible replies apart.")
      : z.string().optional(),
    transitionChoices: branches
      ? z.array(nonEmpty).length(ways).describe('One answer to the question per possible reply, in order.')
      : z.array(z.string()).optional(),
    userInstructions: z
      .array(nonEmpty)
      .length(ways)
      .describe('For a simulated user: how to reply so as to take each way, in order.'),
  });
}

const GRAPHS = `You design conversational agents as graphs: each node is one turn of the agent, each edge one way the user may reply.`;
const SYSTEM = `${GRAPHS} You are writing the fields of one node. Answer with one JSON object and nothing else.`;
const BATCH_SYSTEM = `${GRAPHS} You are writing the fields of several nodes. Answer with one JSON object and nothing else.`;

/** The messages that ask for one node's fields. */
export function nodeFieldsMessages(
  brief: NodeBrief,
  context: { description: string; outline: string },
): ChatMessage[] {
  const ways = brief.outgoing.length;
  const lines: string[] = [
    ...designLines(context),
    `We are writing the node "${brief.id}". At this node the agent's turn is: ${brief.label}`,
    ...situation(brief),
    '',
    'Write the JSON object with these keys:',
    ...fieldGuide(ways),
    '',
    `Example: ${example(ways)}`,
  ];
  return [
    { role: 'system', content: SYSTEM },
    { role: 'user', content: lines.join('\n') },
  ];
}

/**
 * The messages that ask for several nodes' fields in one answer: a JSON object with each node's fields
 * under its id. Each node is described as fully as when it is asked for alone.
 */
export function nodeBatchMessages(
  briefs: readonly NodeBrief[],
  context: { description: string; outline: string },
): ChatMessage[] {
  const lines: string[] = [...designLines(context), `We are writing ${briefs.length} nodes.`];
  for (const brief of briefs)
    lines.push(
      '',
      `Node "${brief.id}". At this node the agent's turn is: ${brief.label}`,
      ...situation(brief),
    );
  lines.push(
    '',
    `Write one JSON object with a key for each of these nodes (${briefs.map((b) => `"${b.id}"`).join(', ')}); under each key, that node's fields, a JSON object with these keys:`,
    ...batchFieldGuide(),
    '',
    `Example, for a node "choose_topic" with 2 ways and a node "explain" with 1: ${JSON.stringify({ choose_topic: TWO_WAYS, explain: ONE_WAY })}`,
  );
  return [
    { role: 'system', content: BATCH_SYSTEM },
    { role: 'user', content: lines.join('\n') },
  ];
}

/**
 * The schema a batch answer is asked to match: every node's own schema under its id, so a server that
 * enforces schemas holds each node to its counts. The answer itself is only required to be an object:
 * each node's fields are then judged on their own, so one bad node does not cost the others theirs.
 */
export function nodeBatchSchema(briefs: readonly NodeBrief[]): z.ZodType<Record<string, unknown>> {
  const precise = z.object(Object.fromEntries(briefs.map((brief) => [brief.id, nodeFieldsSchema(brief)])));
  return z.looseObject({}).meta(schemaFor(precise));
}

function designLines(context: { description: string; outline: string }): string[] {
  return [
    `The agent we are designing: ${context.description}`,
    '',
    'Outline of the ways a conversation with it can go:',
    context.outline.trim(),
    '',
  ];
}

/** Where a node stands in the conversation: the replies that lead to it and those that may follow. */
function situation(brief: NodeBrief): string[] {
  const ways = brief.outgoing.length;
  const lines: string[] = [];
  if (brief.start) lines.push('The conversation starts here: this is the agent’s first turn.');
  if (brief.incoming.length > 0)
    lines.push('It follows a user reply like:', ...brief.incoming.map((label) => `- ${label}`));
  if (brief.ending)
    lines.push(
      'The conversation ends after this turn: the agent says goodbye. Give one user instruction for how a user might take leave.',
    );
  else if (ways === 0)
    lines.push(
      'No particular reply is expected after it: the conversation simply goes on. Give one user instruction for what a user might say next.',
    );
  else {
    lines.push(`After it, the user may reply in ${ways === 1 ? 'this way' : `one of these ${ways} ways`}:`);
    brief.outgoing.forEach((edge, i) =>
      lines.push(`${i + 1}. ${edge.label} (the agent then: ${edge.toLabel})`),
    );
  }
  return lines;
}

const ACTION_GUIDE =
  '- "action": "chat" (the model writes the reply from your instruction) or "chat_exact" (your instruction is sent word for word; use it only for a fixed text).';
const INSTRUCTION_GUIDE =
  '- "instruction": an instruction for the agent, not the reply itself. Good: "Ask the user which topic they want to practise." Bad: "Hi! Which topic do you want to practise?" Do not use the "$" character.';
const USER_EXAMPLE = 'e.g. "Say that you would like to practise fractions."';

function fieldGuide(ways: number): string[] {
  const count = Math.max(ways, 1);
  const guide = [ACTION_GUIDE, INSTRUCTION_GUIDE];
  if (ways > 1)
    guide.push(
      `- "transitionQuestion": a multiple-choice question about the user's reply that tells the ${ways} ways apart. A classifier answers it, not the user.`,
      `- "transitionChoices": exactly ${ways} answers to that question, one per way above, in the same order.`,
    );
  guide.push(
    `- "userInstructions": exactly ${count} instruction${count > 1 ? 's' : ''} for a simulated user, ${ways > 1 ? 'one per way above, in the same order' : 'for the way above'}, ${USER_EXAMPLE}`,
  );
  return guide;
}

function batchFieldGuide(): string[] {
  return [
    ACTION_GUIDE,
    INSTRUCTION_GUIDE,
    `- "transitionQuestion", only for a node with several ways: a multiple-choice question about the user's reply that tells its ways apart. A classifier answers it, not the user.`,
    `- "transitionChoices", only for a node with several ways: one answer to that question per way, in the same order.`,
    `- "userInstructions": one instruction for a simulated user per way of the node, in the same order (one for a node with no particular reply expected), ${USER_EXAMPLE}`,
  ];
}

const TWO_WAYS: NodeFields = {
  action: 'chat',
  instruction: 'Ask the user whether they want to practise fractions or decimals.',
  transitionQuestion: 'Which topic did the user choose?',
  transitionChoices: ['fractions', 'decimals'],
  userInstructions: ['Say you want fractions.', 'Say you want decimals.'],
};

const ONE_WAY: NodeFields = {
  action: 'chat',
  instruction: 'Explain how to add two fractions with the same denominator.',
  userInstructions: ['Say that you understood and ask for an exercise.'],
};

/** A complete answer for a two-way or a one-way node; the prompt says when the node needs more ways. */
function example(ways: number): string {
  if (ways <= 1) return JSON.stringify(ONE_WAY);
  const shown = JSON.stringify(TWO_WAYS);
  return ways === 2 ? shown : `${shown} (this example has 2 ways; your node has ${ways})`;
}
