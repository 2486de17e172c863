/**
 * MCP tools lent to code nodes: `mcp.call("SERVER", "TOOL", { …args })` returns the tool's structured
 * content when it gives some, else its text; a tool that reports an error, a server that fails,
 * arguments that are not an object, and a tool that may change things which the user did not allow
 * (McpGrant: nobody is asked inside a graph) all throw inside, with one line saying why. `mcp.tools("SERVER")`
 * lists a server's tools. Servers are the user's (src/mcp/config.ts): a graph names tools, never servers.
 */
import type { HostNamespace } from '../engine/interpreter.js';
import { isUserError } from '../errors.js';
import type { McpServers } from '../mcp/servers.js';

const CALL_USAGE = 'mcp.call("SERVER", "TOOL", { …arguments })';

export function mcpHost(servers: McpServers): HostNamespace {
  return {
    awaited: true,
    functions: {
      call: async (server: unknown, tool: unknown, args: unknown = {}) => {
        if (typeof server !== 'string' || typeof tool !== 'string')
          throw new Error(`mcp.call takes a server and a tool name: ${CALL_USAGE}`);
        if (typeof args !== 'object' || args === null || Array.isArray(args))
          throw new Error(`mcp.call: the arguments of ${server}/${tool} must be an object: ${CALL_USAGE}`);
        const outcome = await servers
          .callUnasked(server, tool, args as Record<string, unknown>)
          .catch((error: unknown) => {
            // Inside, an error is its message alone: what to do about it goes with it.
            throw isUserError(error) && error.hint ? new Error(`${error.message}; ${error.hint}`) : error;
          });
        if (outcome.isError) throw new Error(`MCP tool ${server}/${tool} failed: ${outcome.text}`);
        return outcome.structured ?? outcome.text;
      },
      tools: async (server: unknown) => {
        if (typeof server !== 'string') throw new Error('mcp.tools takes a server name: mcp.tools("SERVER")');
        return (await servers.tools(server)).map(({ name, description, inputSchema, readOnly }) => ({
          name,
          description,
          inputSchema,
          readOnly,
        }));
      },
    },
  };
}
