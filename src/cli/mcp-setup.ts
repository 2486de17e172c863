/**
 * Which MCP servers a command's run may use: the file `--mcp-config` names, else the user's default,
 * `mcp.json` in their configuration folder (absent: none). Nothing of MCP is loaded for a command
 * whose user has no servers; the servers themselves start only when first needed.
 */
import { access } from 'node:fs/promises';
import { join } from 'node:path';
import { userConfigDir } from '../autonomous/consent.js';
import type { McpServers } from '../mcp/servers.js';

/** `--mcp-config` as commander parses it, and the flags that let tools run unasked. */
export interface McpOptionValues {
  mcpConfig?: string;
  /** `--allow`: rules naming tools (`mcp__SERVER__TOOL`, `*` patterns) that may change things unasked. */
  allow?: readonly string[];
  /** `--yes`: every tool may run unasked. */
  yes?: boolean;
}

/** The user's default MCP configuration. */
export function defaultMcpConfigPath(): string {
  return join(userConfigDir(), 'mcp.json');
}

/** The servers the options give, or undefined when there are none. */
export async function mcpServersFor(options: McpOptionValues): Promise<McpServers | undefined> {
  const named = options.mcpConfig !== undefined;
  const path = options.mcpConfig ?? defaultMcpConfigPath();
  if (!named && !(await exists(path))) return undefined;
  const [{ readMcpConfig }, { McpServers }] = await Promise.all([
    import('../mcp/config.js'),
    import('../mcp/servers.js'),
  ]);
  const configs = await readMcpConfig(path, named);
  const grant = { ...(options.yes && { yes: true }), ...(options.allow && { allow: options.allow }) };
  return configs.length > 0 ? new McpServers(configs, { grant }) : undefined;
}

async function exists(path: string): Promise<boolean> {
  return access(path).then(
    () => true,
    () => false,
  );
}
