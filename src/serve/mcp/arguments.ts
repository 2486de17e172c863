/**
 * A tool call's arguments checked against what its tool takes (tools.ts declares the same as JSON
 * Schema for the client): the first thing wrong is one line, naming the tool (`tool`), that the
 * client's model can act on.
 */

/** A call the tool refuses or could not answer: its message is the one line the client is told. */
export class ToolError extends Error {}

/** A function's arguments, in the order of its parameters. */
export function functionArguments(
  tool: string,
  params: readonly string[],
  given: Record<string, unknown> | undefined,
): unknown[] {
  const args = given ?? {};
  onlyKnown(tool, args, params);
  for (const param of params) if (!Object.hasOwn(args, param)) throw missing(tool, param, params);
  return params.map((param) => args[param]);
}

/** What a conversation tool is given: the message, and the conversation to go on with. */
export function conversationArguments(
  tool: string,
  given: Record<string, unknown> | undefined,
): { message: string; conversationId?: string } {
  const args = given ?? {};
  onlyKnown(tool, args, ['message', 'conversation_id']);
  const { message, conversation_id: id } = args;
  if (typeof message !== 'string' || message.trim() === '')
    throw new ToolError(`${tool}: "message" must be the text to say to the agent (a string, not empty)`);
  if (id !== undefined && typeof id !== 'string')
    throw new ToolError(`${tool}: "conversation_id" must be a string, as an earlier reply gave it`);
  return { message, ...(id !== undefined && { conversationId: id }) };
}

/** A flow's inputs: strings, each one it declares, and every one it has no default for. */
export function flowInputs(
  tool: string,
  inputs: Record<string, { default?: string | undefined }>,
  given: Record<string, unknown> | undefined,
): Record<string, string> {
  const args = given ?? {};
  const names = Object.keys(inputs);
  onlyKnown(tool, args, names);
  for (const [name, value] of Object.entries(args))
    if (typeof value !== 'string') throw new ToolError(`${tool}: the input "${name}" must be a string`);
  for (const [name, spec] of Object.entries(inputs))
    if (!Object.hasOwn(args, name) && spec.default === undefined) throw missing(tool, name, names);
  return args as Record<string, string>;
}

function onlyKnown(tool: string, args: Record<string, unknown>, known: readonly string[]): void {
  const unknown = Object.keys(args).find((name) => !known.includes(name));
  if (unknown !== undefined)
    throw new ToolError(`${tool} takes no argument "${unknown}"; it takes ${list(known)}`);
}

function missing(tool: string, name: string, known: readonly string[]): ToolError {
  return new ToolError(`${tool} needs the argument "${name}" (it takes ${list(known)})`);
}

function list(names: readonly string[]): string {
  return names.length === 0 ? 'none' : names.join(', ');
}
