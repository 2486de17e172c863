/**
 * The tools of the user's MCP servers as goal-loop commands: `mcp__SERVER__TOOL`, offered with the
 * server's own JSON Schema as a native tool and checked against it before they run. A tool the server
 * marks read-only is a read (it may run again after a crash, like read_file); every other one is a side
 * effect, asked for unless allowed (`--allow 'mcp__SERVER__*'`), and never run twice.
 */
import { z } from 'zod';
import { mcpCommandName } from '../src/mcp/names.js';
import type { McpServers, McpTool } from '../src/mcp/servers.js';
import type { Command } from './command.js';

/** Models accept tool names of at most 64 of these characters. */
const TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/;
/** A server's description of a tool is its own text in our prompt: kept to a paragraph. */
const MAX_DESCRIPTION_CHARS = 1000;

/**
 * The commands of `tools`; a tool whose name cannot be a command name (too long, or the same as
 * another's once spelled as one) is left out and reported through `skipped`.
 */
export function mcpCommands(
  servers: McpServers,
  tools: readonly McpTool[],
  skipped: (message: string) => void,
): Command[] {
  const commands = new Map<string, Command>();
  for (const tool of tools) {
    const name = mcpCommandName(tool.server, tool.name);
    if (!TOOL_NAME.test(name) || commands.has(name)) {
      skipped(
        `the MCP tool ${tool.server}/${tool.name} is not offered: ${commands.has(name) ? `another tool is also named ${name}` : `${name} is longer than 64 characters`}`,
      );
      continue;
    }
    commands.set(name, mcpCommand(servers, tool, name));
  }
  return [...commands.values()];
}

function mcpCommand(servers: McpServers, tool: McpTool, name: string): Command {
  const { $schema: _ignored, ...parameters } = tool.inputSchema;
  return {
    name,
    title: flatten(tool.title ?? tool.name, 80),
    description: `${flatten(tool.description, MAX_DESCRIPTION_CHARS) || 'A tool'} (MCP server ${tool.server}${tool.readOnly ? ', read-only' : ''})`,
    args: argumentsOf(parameters),
    parameters: { type: 'object', ...parameters },
    effect: tool.readOnly ? 'read' : 'write',
    needs: [],
    async run(args, { signal }) {
      const outcome = await servers.call(tool.server, tool.name, args, { signal });
      if (outcome.isError) throw new Error(`the tool said: ${outcome.text}`);
      return { output: outcome.text === '' ? `${name} returned nothing.` : outcome.text };
    },
  };
}

/**
 * The tool's schema as zod, for the registry's checks and its usage line; one zod cannot read is
 * checked only for being an object (the server checks it again anyway).
 */
function argumentsOf(schema: Record<string, unknown>): z.ZodObject {
  try {
    const converted = z.fromJSONSchema({ type: 'object', ...schema });
    if (converted instanceof z.ZodObject) return converted;
  } catch {
    // Fall through: an object of anything.
  }
  return z.looseObject({});
}

function flatten(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}
