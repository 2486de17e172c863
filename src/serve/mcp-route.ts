/**
 * The `/mcp` route: the served graphs as MCP tools over Streamable HTTP (mcp/http.ts), behind the same
 * keys as `/v1`. The MCP SDK is loaded by the first request, so a server nobody asks over MCP never
 * loads it.
 */
import type { Context } from 'hono';
import type { ServeContext } from './context.js';
import type { ServeEnv } from './env.js';
import type { FlowPasses } from './flow-passes.js';
import type { McpService } from './mcp/server.js';

export function mcpRoute(ctx: ServeContext, passes: FlowPasses): (c: Context<ServeEnv>) => Promise<Response> {
  let service: McpService | undefined;
  return async (c) => {
    const { mcpService, mcpResponse } = await import('./mcp/http.js');
    service ??= mcpService(ctx, passes);
    return mcpResponse(service, c.get('owner'), c.req.raw);
  };
}
