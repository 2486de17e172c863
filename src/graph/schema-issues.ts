/**
 * Turns zod's validation issues into sentences a user can act on: `nodes[3] (ask).action: invalid value
 * "chatt"; expected one of chat, chat_exact, …`. Also finds fields the schema would silently drop.
 */
import type { z } from 'zod';
import { closestName } from './names.js';
import { graphConfigSchema, graphFileSchema, nodeSpecSchema } from './schema.js';

const MAX_LISTED = 6;

/** One line per issue, each starting with the path of the offending value in `input`. */
export function describeIssues(error: z.ZodError, input: unknown): string[] {
  return error.issues.map((issue) => {
    const where = describePath(issue.path, input);
    return where
      ? `${where}: ${describeIssue(issue, valueAt(input, issue.path))}`
      : describeIssue(issue, input);
  });
}

/** The issues as one line: the first few, then how many more. */
export function summarizeIssues(error: z.ZodError, input: unknown): string {
  const lines = describeIssues(error, input);
  const shown = lines.slice(0, MAX_LISTED).join('; ');
  return lines.length > MAX_LISTED ? `${shown}; and ${lines.length - MAX_LISTED} more` : shown;
}

function describeIssue(issue: z.core.$ZodIssue, actual: unknown): string {
  switch (issue.code) {
    case 'invalid_value':
      return `invalid value ${JSON.stringify(actual)}; expected one of ${issue.values.map(String).join(', ')}`;
    case 'invalid_type':
      return actual === undefined
        ? `missing; expected ${expectedKind(issue.expected)}`
        : `expected ${expectedKind(issue.expected)}, got ${kindOf(actual)}`;
    case 'unrecognized_keys':
      return `unknown field${issue.keys.length === 1 ? '' : 's'} ${issue.keys.map((k) => `"${k}"`).join(', ')}`;
    default:
      return issue.message.charAt(0).toLowerCase() + issue.message.slice(1);
  }
}

/** zod's name for an expected type, in the words of a JSON file. */
function expectedKind(expected: string): string {
  return expected === 'record' ? 'object' : expected;
}

/** What kind of value was given, for a message: `null`, `an array`, `an object`, `number 3`. */
export function kindOf(value: unknown): string {
  if (value === null || value === undefined) return String(value);
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `${typeof value} ${JSON.stringify(value)}`;
}

/** `nodes[3] (ask).action`: array indexes in brackets, and a node's name after its index when known. */
function describePath(path: readonly PropertyKey[], input: unknown): string {
  let text = '';
  for (let i = 0; i < path.length; i++) {
    const key = path[i]!;
    if (typeof key === 'number') {
      text += `[${key}]`;
      const name = (valueAt(input, path.slice(0, i + 1)) as { name?: unknown } | undefined)?.name;
      if (path[i - 1] === 'nodes' && typeof name === 'string') text += ` (${name})`;
    } else text += text ? `.${String(key)}` : String(key);
  }
  return text;
}

function valueAt(input: unknown, path: readonly PropertyKey[]): unknown {
  let value = input;
  for (const key of path) {
    if (value === null || typeof value !== 'object') return undefined;
    value = (value as Record<PropertyKey, unknown>)[key];
  }
  return value;
}

/**
 * Warnings for fields of a native graph file that the schema does not know and would drop without a
 * word, such as a misspelt `transition` for `transitions`.
 */
export function unknownFieldWarnings(input: unknown): string[] {
  if (!isRecord(input)) return [];
  const warnings = unknownIn(input, Object.keys(graphFileSchema.shape), '');
  if (isRecord(input.config))
    warnings.push(...unknownIn(input.config, Object.keys(graphConfigSchema.shape), 'config'));
  if (Array.isArray(input.nodes))
    input.nodes.forEach((node, i) => {
      if (!isRecord(node)) return;
      const where = typeof node.name === 'string' ? `nodes[${i}] (${node.name})` : `nodes[${i}]`;
      warnings.push(...unknownIn(node, Object.keys(nodeSpecSchema.shape), where));
    });
  return warnings;
}

function unknownIn(record: Record<string, unknown>, known: string[], where: string): string[] {
  return Object.keys(record)
    .filter((key) => !known.includes(key))
    .map((key) => {
      const field = where ? `${where}.${key}` : key;
      if (key === 'mcpServers') return `${field} is ignored: ${SERVERS_ARE_THE_USERS}`;
      const near = closestName(key, known);
      return `unknown field ${field} is ignored${near ? ` (did you mean "${near}"?)` : ''}`;
    });
}

/**
 * Why a shared file's MCP servers are not started: a server is a command line, which only the user may
 * choose (as with credentials).
 */
export const SERVERS_ARE_THE_USERS =
  'a graph or flow file cannot add MCP servers; they come only from your MCP configuration (--mcp-config FILE, or mcp.json in your configuration folder)';

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
