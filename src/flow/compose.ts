/**
 * A node's messages, as AgentKit's compose functions build them (seed 003, §2.1.1): the system message
 * (the node's own, else the flow's), then either the default (eq. 1: each dependency as an earlier
 * question and its answer, then the node's prompt) or what the node's `compose` says: one user message
 * (a template string), or a list of messages, dependencies' turns and database histories. The result
 * is a plain message list, so whatever fits it to the model's context works on it as on any other.
 * Pure: the values go in, the messages come out; a missing value throws (template.ts).
 */
import type { ChatMessage } from '../llm/types.js';
import type { ComposeEntry, FlowFile, FlowNode, Json } from './schema.js';
import { lookup, referencesIn, renderFlowText, type TemplateValues } from './template.js';

/** A settled dependency as a later node sees it: the prompt it answered and its output. */
export interface Answered {
  prompt?: string;
  output?: Json;
}

export interface ComposeInput {
  flow: FlowFile;
  node: FlowNode;
  /** The node's prompt, rendered. */
  prompt: string;
  /** The node's dependencies, in the order it lists them. */
  dependencies: readonly string[];
  /** Each dependency's result. */
  answered: (dependency: string) => Answered;
  database: Record<string, Json>;
  outputs: ReadonlyMap<string, unknown>;
}

/** The messages the node sends. */
export function composeMessages(input: ComposeInput): ChatMessage[] {
  const { flow, node, prompt, database, outputs } = input;
  const values: TemplateValues = { db: database, outputs, prompt };
  const systemText = node.system ?? flow.config.system;
  const system: ChatMessage[] =
    systemText === undefined ? [] : [{ role: 'system', content: renderFlowText(systemText, values) }];
  if (typeof node.compose === 'string')
    return [...system, { role: 'user', content: renderFlowText(node.compose, values) }];
  const entries: readonly ComposeEntry[] = node.compose ?? [
    { dependencies: 'all' },
    { role: 'user', content: '$prompt$' },
  ];
  return [...system, ...entries.flatMap((entry) => entryMessages(entry, input, values))];
}

function entryMessages(entry: ComposeEntry, input: ComposeInput, values: TemplateValues): ChatMessage[] {
  if ('content' in entry) return [{ role: entry.role, content: renderFlowText(entry.content, values) }];
  if ('dependencies' in entry) {
    const names = entry.dependencies === 'all' ? input.dependencies : entry.dependencies;
    return names.flatMap((dep): ChatMessage[] => {
      const { prompt, output } = input.answered(dep);
      return [
        { role: 'user', content: prompt ?? dep },
        { role: 'assistant', content: asText(output) },
      ];
    });
  }
  return historyMessages(entry, input.database);
}

/** A database list as messages: `{role, content}` items as they are, any other item as `entry.role`. */
function historyMessages(
  entry: Extract<ComposeEntry, { history: string }>,
  database: Record<string, Json>,
): ChatMessage[] {
  const [ref] = referencesIn(entry.history);
  const path = ref?.kind === 'db' ? ref.path : [];
  const found = lookup(database, path);
  // A history not written yet (the first step's) is None, as any missing key: no earlier messages.
  if (!found.ok) return [];
  if (!Array.isArray(found.value))
    throw new Error(`${entry.history} is not a list, so it cannot be a history`);
  const items = entry.last === undefined ? found.value : found.value.slice(-entry.last);
  return items.map((item: unknown): ChatMessage => {
    if (isMessage(item)) return { role: item.role, content: item.content };
    return { role: entry.role, content: asText(item as Json) };
  });
}

function isMessage(item: unknown): item is { role: 'system' | 'user' | 'assistant'; content: string } {
  if (item === null || typeof item !== 'object' || Array.isArray(item)) return false;
  const { role, content } = item as Record<string, unknown>;
  return (role === 'system' || role === 'user' || role === 'assistant') && typeof content === 'string';
}

/** An output as the text of a message. */
function asText(output: Json | undefined): string {
  return typeof output === 'string' ? output : JSON.stringify(output, null, 2);
}

/** Every template a node's messages are built from, with the field it sits in (for the lint). */
export function composeTemplates(node: FlowNode): Array<[field: string, text: string]> {
  const texts: Array<[string, string]> = [];
  if (node.system !== undefined) texts.push(['system', node.system]);
  if (typeof node.compose === 'string') texts.push(['compose', node.compose]);
  else
    for (const [i, entry] of (node.compose ?? []).entries()) {
      if ('content' in entry) texts.push([`compose[${i}]`, entry.content]);
      if ('history' in entry) texts.push([`compose[${i}].history`, entry.history]);
    }
  return texts;
}

/** Whether the node's own prompt reaches the model: the default composition, or a `$prompt$` in it. */
export function composeAsksPrompt(node: FlowNode): boolean {
  if (node.compose === undefined) return true;
  return composeTemplates(node).some(
    ([field, text]) => field.startsWith('compose') && referencesIn(text).some((ref) => ref.kind === 'prompt'),
  );
}

/** The dependencies a compose list names, for the lint. */
export function composedDependencies(node: FlowNode): string[] {
  if (!Array.isArray(node.compose)) return [];
  return node.compose.flatMap((entry) =>
    'dependencies' in entry && Array.isArray(entry.dependencies) ? entry.dependencies : [],
  );
}

/** A short description of a node's composition, for drawings and `show`. */
export function describeCompose(node: FlowNode): string | undefined {
  if (node.compose === undefined || typeof node.compose === 'string') return node.compose;
  return node.compose
    .map((entry) => {
      if ('content' in entry) return `${entry.role}: ${entry.content}`;
      if ('dependencies' in entry)
        return `dependencies: ${entry.dependencies === 'all' ? 'all' : entry.dependencies.join(', ')}`;
      return `history: ${entry.history}${entry.last === undefined ? '' : ` (last ${entry.last})`}`;
    })
    .join('\n');
}
