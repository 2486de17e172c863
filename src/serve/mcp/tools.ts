/**
 * The MCP tools a set of served graphs offers, decided purely from the graphs: each function (callable
 * node) of an agent is a tool named after the function, its parameters the arguments; each agent with
 * chat nodes is a conversation tool (`message`, optional `conversation_id`); each flow is a tool whose
 * arguments are its inputs. Names are made valid MCP tool names and unique: a later tool whose name is
 * taken gets its graph's name in front, and the offer says so, for the operator to read at start-up.
 */
import { isChatNode } from '../../engine/transitions.js';
import { StaticGraph } from '../../graph/view.js';
import type { Served, ServedAgent, ServedFlow } from '../served.js';

/** A JSON Schema, as MCP carries it. */
export type JsonSchema = { type: 'object' } & Record<string, unknown>;

/** What a tool runs. */
export type ToolTarget =
  | { kind: 'function'; agent: ServedAgent; fn: string; params: readonly string[] }
  | { kind: 'conversation'; agent: ServedAgent }
  | { kind: 'flow'; flow: ServedFlow };

export interface OfferedTool {
  name: string;
  description: string;
  inputSchema: JsonSchema;
  outputSchema?: JsonSchema;
  target: ToolTarget;
}

export interface ToolOffer {
  tools: OfferedTool[];
  /** One line for each tool offered under another name than its own, because its own was taken. */
  renamed: string[];
}

/** MCP's tool names: 1 to 128 of these characters. */
const TOOL_NAME = /^[A-Za-z0-9_.-]{1,128}$/;

/** What a conversation tool answers, besides its text. */
export const CONVERSATION_OUTPUT: JsonSchema = {
  type: 'object',
  properties: {
    reply: { type: 'string', description: "The agent's reply." },
    conversation_id: { type: 'string', description: 'Send it with the next message to go on.' },
    ended: { type: 'boolean', description: 'The agent ended the conversation: it takes no more messages.' },
  },
  required: ['reply', 'conversation_id', 'ended'],
};

/** The tools `served` offers, in the order of the files, each graph's functions after its conversation. */
export function offeredTools(served: readonly Served[]): ToolOffer {
  const tools: OfferedTool[] = [];
  const renamed: string[] = [];
  const taken = new Set<string>();
  const offer = (own: string, graph: string, tool: Omit<OfferedTool, 'name'>) => {
    let name = validName(own);
    if (taken.has(name)) {
      const qualified = validName(`${graph}_${own}`);
      name = qualified;
      // The number goes on the end, past a name at the length limit too (validName would cut it off).
      for (let n = 2; taken.has(name); n++) name = `${qualified.slice(0, 128 - `_${n}`.length)}_${n}`;
      renamed.push(
        `the tool name "${validName(own)}" is taken: ${describeTarget(tool.target)} is offered as "${name}"`,
      );
    }
    taken.add(name);
    tools.push({ name, ...tool });
  };
  for (const item of served) {
    if (item.kind === 'flow') {
      offer(item.name, item.name, flowTool(item));
      continue;
    }
    const nodes = new StaticGraph(item.file).nodes();
    if (nodes.some(isChatNode)) offer(item.name, item.name, conversationTool(item));
    for (const node of nodes)
      if (node.callable)
        offer(
          node.callable.fn,
          item.name,
          functionTool(item, node.callable.fn, node.callable.params, node.notes),
        );
  }
  return { tools, renamed };
}

function conversationTool(agent: ServedAgent): Omit<OfferedTool, 'name'> {
  return {
    description: [
      `Talk with the agent "${agent.name}"${about(agent.file.description)}.`,
      'Send a message and get its reply with a conversation_id; send that id with the next message to go on with',
      'the same conversation (the agent remembers it), or leave it out to start a new one.',
    ].join(' '),
    inputSchema: {
      type: 'object',
      properties: {
        message: { type: 'string', minLength: 1, description: 'What to say to the agent.' },
        conversation_id: {
          type: 'string',
          description: 'The conversation to go on with, as an earlier reply gave it; leave out to start one.',
        },
      },
      required: ['message'],
      additionalProperties: false,
    },
    outputSchema: CONVERSATION_OUTPUT,
    target: { kind: 'conversation', agent },
  };
}

function functionTool(
  agent: ServedAgent,
  fn: string,
  params: readonly string[],
  notes: string | undefined,
): Omit<OfferedTool, 'name'> {
  return {
    description: [
      `The function ${fn}(${params.join(', ')}) of the agent "${agent.name}"${about(agent.file.description)}.`,
      ...(notes?.trim() ? [notes.trim()] : []),
      params.length > 0
        ? 'Each argument is any JSON value; it returns a JSON value.'
        : 'It returns a JSON value.',
    ].join(' '),
    inputSchema: {
      type: 'object',
      properties: Object.fromEntries(
        params.map((param) => [param, { description: `The argument ${param}.` }]),
      ),
      required: [...params],
      additionalProperties: false,
    },
    target: { kind: 'function', agent, fn, params },
  };
}

function flowTool(flow: ServedFlow): Omit<OfferedTool, 'name'> {
  const inputs = Object.entries(flow.flow.inputs);
  return {
    description: [
      `Runs one pass of the flow "${flow.name}"${about(flow.flow.description)}: its nodes ask a model, each`,
      'given the answers of those it depends on, and the result is the answers of its final nodes, as JSON.',
    ].join(' '),
    inputSchema: {
      type: 'object',
      properties: Object.fromEntries(
        inputs.map(([name, spec]) => [
          name,
          {
            type: 'string',
            ...(spec.description && { description: spec.description }),
            ...(spec.default !== undefined && { default: spec.default }),
          },
        ]),
      ),
      required: inputs.flatMap(([name, spec]) => (spec.default === undefined ? [name] : [])),
      additionalProperties: false,
    },
    target: { kind: 'flow', flow },
  };
}

/** ` (DESCRIPTION)` when there is one. */
function about(description: string | undefined): string {
  const text = description?.trim().replace(/\.$/, '');
  return text ? ` (${text})` : '';
}

/** `name` with what MCP does not allow in a tool name made `_`, and cut to its 128 characters. */
function validName(name: string): string {
  if (TOOL_NAME.test(name)) return name;
  return name.replace(/[^A-Za-z0-9_.-]/g, '_').slice(0, 128) || 'tool';
}

/** What a tool runs, in words: `the function f of the agent "a"`. */
export function describeTarget(target: ToolTarget): string {
  switch (target.kind) {
    case 'function':
      return `the function ${target.fn} of the agent "${target.agent.name}"`;
    case 'conversation':
      return `the conversation with the agent "${target.agent.name}"`;
    case 'flow':
      return `the flow "${target.flow.name}"`;
  }
}
