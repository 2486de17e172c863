/**
 * The served graphs as an MCP server: `tools/list` offers the tools tools.ts decides, `tools/call` runs
 * one (calls.ts). A call that fails, or whose arguments are wrong, is a tool result with `isError` and
 * one line, which the client's model reads; the server goes on.
 *
 * Built on the SDK's low-level `Server` rather than `McpServer`: a served graph's tools are known only
 * once its file is loaded, so their schemas are JSON Schemas made then, not zod types, and McpServer
 * would answer bad arguments in its own words (a list of zod issues) rather than ours.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
  type CallToolResult,
} from '@modelcontextprotocol/sdk/types.js';
import { packageRoot } from '../../package-root.js';
import type { ServeContext } from '../context.js';
import { FlowPasses } from '../flow-passes.js';
import type { ToolError } from './arguments.js';
import { runTool, type Progress } from './calls.js';
import { offeredTools, type OfferedTool, type ToolOffer } from './tools.js';

/** What every MCP session of a process shares: the tools, and the flow passes in progress. */
export interface McpService {
  ctx: ServeContext;
  offer: ToolOffer;
  passes: FlowPasses;
}

/** The service of `ctx`'s graphs and flows; `passes`: where serve's /v1/flows counts its passes too. */
export function mcpService(ctx: ServeContext, passes = new FlowPasses(ctx)): McpService {
  return { ctx, offer: offeredTools([...ctx.served.values()]), passes };
}

/** An MCP server of `service`'s tools, for one client (`owner`: whose conversations and passes). */
export function mcpServer(service: McpService, owner: string): Server {
  const { ctx, offer, passes } = service;
  const tools = new Map(offer.tools.map((tool) => [tool.name, tool]));
  const server = new Server(
    { name: 'meta-agent', version: packageVersion() },
    {
      capabilities: { tools: {} },
      instructions: `Agents and flows designed with meta-agent: ${[...ctx.served.keys()].join(', ')}.`,
    },
  );
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: offer.tools.map(listed) }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
    const { name, arguments: given, _meta } = request.params;
    const tool = tools.get(name);
    if (!tool)
      throw new McpError(
        ErrorCode.InvalidParams,
        `no tool "${name}" here; it has ${[...tools.keys()].join(', ')}`,
      );
    const token = _meta?.progressToken;
    // Sent in order, and all before the result: a client forgets a call's token once it has its result.
    let told = Promise.resolve();
    const progress: Progress | undefined =
      token === undefined
        ? undefined
        : (step, message, total) => {
            const params = {
              progressToken: token,
              progress: step,
              message,
              ...(total !== undefined && { total }),
            };
            told = told
              .then(() => extra.sendNotification({ method: 'notifications/progress', params }))
              // A client gone is told nothing more; the work goes on.
              .catch(() => undefined);
          };
    const answered = async (result: CallToolResult) => {
      await told;
      return result;
    };
    try {
      const answer = await runTool(tool, given, {
        ctx,
        passes,
        owner,
        signal: extra.signal,
        ...(progress && { progress }),
      });
      return answered({
        content: answer.text.map((text) => ({ type: 'text', text })),
        ...(answer.structured && { structuredContent: answer.structured }),
      });
    } catch (error) {
      // runTool gives every failure as a ToolError, its one line for the client.
      const { message } = error as ToolError;
      return answered({ content: [{ type: 'text', text: message }], isError: true });
    }
  });
  return server;
}

function listed({ name, description, inputSchema, outputSchema }: OfferedTool) {
  return { name, description, inputSchema, ...(outputSchema && { outputSchema }) };
}

let version: string | undefined;

/** This package's version, which the server tells its clients. */
function packageVersion(): string {
  version ??= (JSON.parse(readFileSync(join(packageRoot(), 'package.json'), 'utf8')) as { version: string })
    .version;
  return version;
}
