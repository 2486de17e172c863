/**
 * The repair pass: nodes that the linter or a simulation found fault with are written again by the
 * model, shown their previous fields and what was wrong with them. The nodes are independent, so they
 * are asked concurrently, like the first writing.
 */
import { isUserError } from '../src/errors.js';
import { graphFileSchema, type GraphFile, type NodeSpec } from '../src/graph/schema.js';
import type { ChatMessage, LanguageModel } from '../src/llm/types.js';
import { nodeNames, withFields } from './assemble.js';
import { mapBounded } from '../src/map-bounded.js';
import type { DotDraft } from './dot-problems.js';
import { nodeBriefs, nodeFieldsMessages, type NodeFields } from './node-fields.js';
import { writeOne } from './write-fields.js';

/** Something wrong with one node, in words the model can act on. */
export interface Complaint {
  node: string;
  problem: string;
}

/** What a repair pass needs besides the graph: the draft the graph came from and how to call the model. */
export interface RepairContext {
  draft: DotDraft;
  description: string;
  outline: string;
  model: LanguageModel;
  concurrency: number;
  tries: number;
}

/** The repaired graph and what became of each complained-about node. */
export interface RepairResult {
  graph: GraphFile;
  /** Nodes written again. */
  repaired: string[];
  /** Nodes left as they were, each with the reason (not drafted by the model, or no usable answer). */
  unrepaired: string[];
}

/** Writes every complained-about node again; nodes without complaints are left untouched. */
export async function repairNodes(
  graph: GraphFile,
  complaints: readonly Complaint[],
  ctx: RepairContext,
): Promise<RepairResult> {
  const names = nodeNames(ctx.draft);
  const briefByName = new Map(nodeBriefs(ctx.draft).map((brief) => [names.get(brief.id)!, brief]));
  const byNode = new Map<string, string[]>();
  for (const { node, problem } of complaints) byNode.set(node, [...(byNode.get(node) ?? []), problem]);

  const unrepaired: string[] = [];
  const rewritten = await mapBounded([...byNode], ctx.concurrency, async ([name, problems]) => {
    const brief = briefByName.get(name);
    const node = graph.nodes.find((n) => n.name === name);
    if (!brief || !node) {
      unrepaired.push(`${name}: not a node the model drafted, so there is nothing to write again`);
      return undefined;
    }
    const messages: ChatMessage[] = [
      ...nodeFieldsMessages(brief, ctx),
      { role: 'assistant', content: JSON.stringify(previousFields(node)) },
      { role: 'user', content: complaintText(problems) },
    ];
    try {
      return { name, fields: await writeOne(brief, messages, ctx) };
    } catch (error) {
      if (!isUserError(error)) throw error;
      unrepaired.push(`${name}: ${error.message}`);
      return undefined;
    }
  });

  const fresh = new Map(rewritten.flatMap((r) => (r ? [[r.name, r.fields] as const] : [])));
  return {
    graph: graphFileSchema.parse({
      ...graph,
      nodes: graph.nodes.map((n) => (fresh.has(n.name) ? withFields(n, fresh.get(n.name)!) : n)),
    }),
    repaired: [...fresh.keys()],
    unrepaired,
  };
}

/** The fields of a node as the model wrote them, for showing it its previous answer. */
function previousFields(node: NodeSpec): NodeFields {
  return {
    action: node.action === 'chat_exact' ? 'chat_exact' : 'chat',
    instruction: node.instruction,
    ...(node.transitions.length > 1
      ? { transitionQuestion: node.transitionQuestion, transitionChoices: node.transitionChoices }
      : {}),
    userInstructions: node.userInstructions,
  };
}

function complaintText(problems: readonly string[]): string {
  return [
    'These fields have problems:',
    ...problems.map((p) => `- ${p}`),
    '',
    'Write the JSON object for this node again with every problem fixed, keeping what was right.',
  ].join('\n');
}
