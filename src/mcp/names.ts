/** How MCP tools are named where meta-agent's commands are: `mcp__SERVER__TOOL`. */

export const MCP_PREFIX = 'mcp__';

/** The command name of `tool` of `server` (characters a model's tool name cannot hold become `_`). */
export function mcpCommandName(server: string, tool: string): string {
  return `${MCP_PREFIX}${server}__${tool.replace(/[^A-Za-z0-9_-]/g, '_')}`;
}
