/**
 * Doctor's MCP lines: where the servers come from, then each server started and listed, with its
 * tools or why it failed. Servers are started in parallel and each line is printed as it is known.
 */
import { isUserError } from '../../errors.js';
import type { McpServerConfig } from '../../mcp/config.js';
import { defaultMcpConfigPath, mcpServersFor, type McpOptionValues } from '../mcp-setup.js';
import { shownPath } from '../terminal.js';
import type { Report } from './check.js';

/** How many tool names a line lists before it only counts the rest. */
const SHOWN_TOOLS = 8;

export async function checkMcpServers(options: McpOptionValues, report: Report): Promise<void> {
  const file = shownPath(options.mcpConfig ?? defaultMcpConfigPath());
  let servers;
  try {
    servers = await mcpServersFor(options);
  } catch (error) {
    if (!isUserError(error)) throw error;
    report({ status: 'fail', name: 'mcp', detail: error.message, ...(error.hint && { fix: error.hint }) });
    return;
  }
  if (!servers) {
    report({
      status: 'ok',
      name: 'mcp',
      detail: `no MCP servers configured (${file}); runs offer the built-in commands only`,
    });
    return;
  }
  report({ status: 'ok', name: 'mcp', detail: `${servers.names().length} server(s) in ${file}` });
  try {
    await Promise.all(
      servers.names().map(async (name) => {
        const where = describe(servers.config(name)!);
        try {
          const tools = await servers.tools(name);
          const names = tools.map((tool) => tool.name);
          const listed =
            names.length > SHOWN_TOOLS
              ? `${names.slice(0, SHOWN_TOOLS).join(', ')} and ${names.length - SHOWN_TOOLS} more`
              : names.join(', ');
          report({
            status: names.length > 0 ? 'ok' : 'warn',
            name: `mcp ${name}`,
            detail: `${names.length} tool(s)${names.length > 0 ? `: ${listed}` : ''} (${where})`,
          });
        } catch (error) {
          if (!isUserError(error)) throw error;
          report({
            status: 'fail',
            name: `mcp ${name}`,
            detail: `${error.message} (${where})`,
            fix: error.hint ?? 'run its command by hand to see what it says, or fix its entry in the file',
          });
        }
      }),
    );
  } finally {
    await servers.close();
  }
}

function describe(config: McpServerConfig): string {
  return config.kind === 'http'
    ? `${config.url.origin}${config.url.pathname}`
    : [config.command, ...config.args].join(' ');
}
