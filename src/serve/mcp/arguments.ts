/**
 * A tool call's arguments checked against what its tool takes (tools.ts declares the same as JSON
 * Schema for the client): the first thing wrong is one line the client's model can act on.
 */
import type { OfferedTool } from './tools.js';

/** A call the tool refuses or could not answer: its message is the one line the client is told. */
export class ToolError extends Error {}

/** What each kind of tool is given, checked. */
export type CheckedArguments =
  | { kind: 'function'; args: unknown[] }
  | { kind: 'conversation'; message: string; conversationId?: string }
  | { kind: 'flow'; inputs: Record<string, string> };

export function checkedArguments(
  tool: OfferedTool,
  given: Record<string, unknown> | undefined,
): CheckedArguments {
  const args = given ?? {};
  const { target } = tool;
  switch (target.kind) {
    case 'function': {
      onlyKnown(tool, args, target.params);
      for (const param of target.params)
        if (!Object.hasOwn(args, param)) throw missing(tool, param, target.params);
      return { kind: 'function', args: target.params.map((param) => args[param]) };
    }
    case 'conversation': {
      onlyKnown(tool, args, ['message', 'conversation_id']);
      const { message, conversation_id: id } = args;
      if (typeof message !== 'string' || message.trim() === '')
        throw new ToolError(
          `${tool.name}: "message" must be the text to say to the agent (a string, not empty)`,
        );
      if (id !== undefined && typeof id !== 'string')
        throw new ToolError(`${tool.name}: "conversation_id" must be a string, as an earlier reply gave it`);
      return { kind: 'conversation', message, ...(id !== undefined && { conversationId: id }) };
    }
    case 'flow': {
      const inputs = target.flow.flow.inputs;
      onlyKnown(tool, args, Object.keys(inputs));
      for (const [name, value] of Object.entries(args))
        if (typeof value !== 'string')
          throw new ToolError(`${tool.name}: the input "${name}" must be a string`);
      for (const [name, spec] of Object.entries(inputs))
        if (!Object.hasOwn(args, name) && spec.default === undefined)
          throw missing(tool, name, Object.keys(inputs));
      return { kind: 'flow', inputs: args as Record<string, string> };
    }
  }
}

function onlyKnown(tool: OfferedTool, args: Record<string, unknown>, known: readonly string[]): void {
  const unknown = Object.keys(args).find((name) => !known.includes(name));
  if (unknown !== undefined)
    throw new ToolError(`${tool.name} takes no argument "${unknown}"; it takes ${list(known)}`);
}

function missing(tool: OfferedTool, name: string, known: readonly string[]): ToolError {
  return new ToolError(`${tool.name} needs the argument "${name}" (it takes ${list(known)})`);
}

function list(names: readonly string[]): string {
  return names.length === 0 ? 'none' : names.join(', ');
}
