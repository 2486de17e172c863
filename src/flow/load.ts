/**
 * Reading flow files (`NAME.flow.json`): JSON checked against the zod schema, with messages that name
 * the file, the line of a syntax error and the field at fault. A flow is told from a graph by its
 * extension.
 */
import { InvalidFileError } from '../errors.js';
import { checkJsonDepth } from '../graph/json-depth.js';
import { parseJsonText, readTextFile } from '../graph/load.js';
import { summarizeIssues } from '../graph/schema-issues.js';
import { lintFlow, type Finding } from './lint.js';
import { flowFileSchema, type FlowFile } from './schema.js';

/** True for a path that names a flow file. */
export function isFlowPath(path: string): boolean {
  return path.toLowerCase().endsWith('.flow.json');
}

/** The flow's name when the file does not give one: the file name without `.flow.json`. */
export function flowNameFromPath(path: string): string {
  return (path.split(/[\\/]/).pop() ?? path).replace(/\.flow\.json$/i, '');
}

/** Reads and validates a flow file. Missing or unreadable files, bad JSON and invalid flows are UserErrors. */
export async function loadFlowFile(path: string): Promise<FlowFile> {
  return parseFlowObject(parseJsonText(await readTextFile(path), path), path);
}

/**
 * Loads a flow to run it: lint errors refuse it, pointing at `meta-agent validate`; its warnings come
 * back. `shown` is the path as the user named it.
 */
export async function openFlow(path: string, shown = path): Promise<{ flow: FlowFile; warnings: Finding[] }> {
  const flow = await loadFlowFile(path);
  const findings = lintFlow(flow);
  const errors = findings.filter((finding) => finding.severity === 'error');
  if (errors.length > 0) {
    const first = errors[0]!;
    throw new InvalidFileError(
      `${shown}: the flow has ${errors.length} error${errors.length === 1 ? '' : 's'}, the first: ${first.node ?? '(flow)'}: ${first.message}`,
      `run "meta-agent validate ${shown}" to see them all`,
    );
  }
  return { flow, warnings: findings };
}

/**
 * Validates a parsed flow; `source` names it in messages. Its values (the database, fallbacks, answer
 * schemas) are plain JSON that validation walks recursively: one nested too deep is refused first.
 */
export function parseFlowObject(input: unknown, source: string): FlowFile {
  checkJsonDepth(input, source);
  const defined = serverDefinition(input);
  if (defined !== undefined)
    throw new InvalidFileError(
      `${source}: ${defined} defines an MCP server; a flow file may name a server's tools, never add a server or its command line`,
      'servers come only from your own MCP configuration (--mcp-config FILE, or CONFIG_DIR/mcp.json)',
    );
  const named =
    input !== null && typeof input === 'object' && !Array.isArray(input) && !('name' in input)
      ? { ...input, name: flowNameFromPath(source) }
      : input;
  const parsed = flowFileSchema.safeParse(named);
  if (!parsed.success)
    throw new InvalidFileError(
      `${source}: not a valid flow: ${summarizeIssues(parsed.error, named)}`,
      'see schema/flow.schema.json, or examples/*.flow.json',
    );
  return parsed.data;
}

/** The fields of a server's definition (src/mcp/config.ts), which a flow file may not hold. */
const SERVER_FIELDS = ['command', 'args', 'env', 'cwd', 'url', 'headers'];

/**
 * Where `input` tries to define an MCP server: an `mcpServers` table, or a tool call that brings its
 * own command line or URL instead of naming a configured server. Checked before the schema, so the
 * answer is this rule and not an "unknown field".
 */
function serverDefinition(input: unknown): string | undefined {
  if (!isObject(input)) return undefined;
  if (Object.hasOwn(input, 'mcpServers')) return '"mcpServers"';
  if (isObject(input.config) && Object.hasOwn(input.config, 'mcpServers')) return '"config.mcpServers"';
  if (!Array.isArray(input.nodes)) return undefined;
  for (const [index, node] of input.nodes.entries()) {
    if (!isObject(node)) continue;
    const where = `nodes[${index}]${typeof node.name === 'string' ? ` (${node.name})` : ''}`;
    if (Object.hasOwn(node, 'mcpServers')) return `${where}.mcpServers`;
    const tool = node.tool;
    if (!isObject(tool)) continue;
    if (isObject(tool.server)) return `${where}.tool.server`;
    const field = SERVER_FIELDS.find((key) => Object.hasOwn(tool, key));
    if (field !== undefined) return `${where}.tool.${field}`;
  }
  return undefined;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
