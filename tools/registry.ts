/**
 * The command registry: which commands a run offers (those whose resources it has), and everything
 * derived from their declarations: the prompt's numbered list, the native tool schemas, and argument
 * checking with a message the model can act on.
 */
import { z } from 'zod';
import { pathBeyondDepth } from '../src/graph/json-depth.js';
import type { ToolSpec } from '../src/llm/types.js';
import type { Command, CommandResources } from './command.js';

/** The deepest a command's arguments may nest; no command takes more than a few levels. */
export const MAX_ARGS_DEPTH = 64;

/** The outcome of checking a command's arguments. */
export type CheckedArgs = { ok: true; args: Record<string, unknown> } | { ok: false; problem: string };

export class CommandRegistry {
  readonly #commands: Map<string, Command>;

  constructor(commands: readonly Command[]) {
    this.#commands = new Map();
    for (const command of commands) {
      if (this.#commands.has(command.name)) throw new Error(`two commands are named ${command.name}`);
      this.#commands.set(command.name, command);
    }
  }

  /** Every declared command, offered or not. */
  all(): Command[] {
    return [...this.#commands.values()];
  }

  /** The commands a run with `resources` can offer, in declaration order. */
  offered(resources: Partial<CommandResources>): CommandRegistry {
    return new CommandRegistry(
      this.all().filter((command) => command.needs.every((need) => resources[need])),
    );
  }

  get(name: string): Command | undefined {
    return this.#commands.get(name);
  }

  names(): string[] {
    return [...this.#commands.keys()];
  }
}

/**
 * The seed's command list: `1. Write to file: "write_to_file", args: "file": "<file>", "text": "<text>"`,
 * each followed by its description.
 */
export function renderCommandList(registry: CommandRegistry): string {
  return registry
    .all()
    .map((command, index) => {
      const args = Object.entries(command.args.shape)
        .map(([name, schema]) => `"${name}": "${argumentPlaceholder(name, schema as z.ZodType)}"`)
        .join(', ');
      return `${index + 1}. ${command.title}: "${command.name}", args: ${args}\n   ${command.description}`;
    })
    .join('\n');
}

/** The commands as native tools (OpenAI `tools`), parameters from the same zod schemas. */
export function toolSpecs(registry: CommandRegistry): ToolSpec[] {
  return registry.all().map((command) => ({
    name: command.name,
    description: `${command.title}. ${command.description}`,
    parameters: argumentSchema(command),
  }));
}

/** The JSON Schema of a command's arguments, without the `$schema` key some servers refuse. */
export function argumentSchema(command: Command): Record<string, unknown> {
  if (command.parameters) return command.parameters;
  const { $schema: _ignored, ...schema } = z.toJSONSchema(command.args, { unrepresentable: 'any' }) as Record<
    string,
    unknown
  >;
  return schema;
}

/** A one-line usage of a command for messages: `write_to_file {"file": string, "text": string}`. */
export function commandUsage(command: Command): string {
  const fields = Object.entries(command.args.shape).map(
    ([name, schema]) => `"${name}": ${typeName(schema as z.ZodType)}`,
  );
  return `${command.name} {${fields.join(', ')}}`;
}

/**
 * Checks `args` against the command's schema. The problem names each wrong argument (unknown,
 * missing, wrong type) and ends with the command's usage, so the model can answer again correctly.
 */
export function checkArgs(command: Command, args: unknown): CheckedArgs {
  if (typeof args !== 'object' || args === null || Array.isArray(args))
    return {
      ok: false,
      problem: `the arguments of ${command.name} must be a JSON object; usage: ${commandUsage(command)}`,
    };
  if (pathBeyondDepth(args, MAX_ARGS_DEPTH) !== undefined)
    return {
      ok: false,
      problem: `the arguments of ${command.name} nest more than ${MAX_ARGS_DEPTH} levels deep; usage: ${commandUsage(command)}`,
    };
  const known = Object.keys(command.args.shape);
  // A schema that names no argument but takes any (an MCP tool's that zod could not read) has no
  // unknown ones.
  const takesAny = known.length === 0 && command.args.def.catchall?._zod.def.type === 'unknown';
  const unknown = takesAny ? [] : Object.keys(args).filter((name) => !known.includes(name));
  const checked = command.args.safeParse(args);
  const problems = unknown.map(
    (name) =>
      `"${name}" is not an argument of ${command.name}${known.length ? ` (it takes ${known.map((k) => `"${k}"`).join(', ')})` : ' (it takes none)'}`,
  );
  if (!checked.success)
    for (const issue of checked.error.issues.slice(0, 5)) {
      const where = issue.path.length > 0 ? `"${issue.path.join('.')}"` : 'the arguments';
      problems.push(`${where}: ${issue.message}`);
    }
  if (problems.length > 0)
    return { ok: false, problem: `${problems.join('; ')}. Usage: ${commandUsage(command)}` };
  return { ok: true, args: (checked as { data: Record<string, unknown> }).data };
}

/** How the command list shows an argument's value: `<hint>`, the schema's description or the name. */
export function argumentPlaceholder(name: string, schema: z.ZodType): string {
  return `<${schema.description ?? name}>`;
}

function typeName(schema: z.ZodType): string {
  const json = z.toJSONSchema(schema, { unrepresentable: 'any' }) as { type?: unknown };
  return typeof json.type === 'string' ? json.type : 'value';
}
