/**
 * MCP over Streamable HTTP at `/mcp`, stateless: each request is answered by a server and transport of
 * its own, so any number of clients (and servers on one database) need no session between requests. A
 * call's progress and its result go back on the request's own SSE stream.
 */
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { mcpServer, type McpService } from './server.js';

export { mcpService } from './server.js';

/** The answer to one MCP request of `owner`. */
export async function mcpResponse(service: McpService, owner: string, request: Request): Promise<Response> {
  const server = mcpServer(service, owner);
  const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined });
  await server.connect(transport);
  return transport.handleRequest(request);
}
