/**
 * A tool node's evaluation: one call of an MCP tool of the user's servers, its arguments composed by
 * pass-plan.ts toolRequest. The tool's structured content is the output when it gives some, else its
 * text (capped by src/mcp/result-text.ts). A tool that reports an error, a server that cannot be
 * started or fails the call, and a run with no servers fail the node with one line, as a prompt node
 * the model cannot answer fails: its dependents are skipped, the process goes on. A tool may have side
 * effects, so it is called once: never again for a rejected answer.
 */
import { isUserError } from '../errors.js';
import type { EventBus } from '../events.js';
import { pathBeyondDepth } from '../graph/json-depth.js';
import type { McpServers } from '../mcp/servers.js';
import { MAX_VALUE_DEPTH } from './after-query.js';
import type { ToolRequest } from './pass-plan.js';
import type { NodeResult } from './run-state.js';
import type { Json } from './schema.js';

/** The most of a tool's error message a failed node's line shows. */
const SHOWN_ERROR = 300;

/** Calls the tool `request` names for the node `node`, telling `events` of its progress. */
export async function callToolNode(
  mcp: McpServers | undefined,
  node: string,
  request: Extract<ToolRequest, { ok: true }>,
  events: EventBus,
  signal: AbortSignal | undefined,
): Promise<NodeResult> {
  const { call, prompt } = request;
  const tool = `${call.server}/${call.name}`;
  if (!mcp)
    return failed(
      `it calls the MCP tool ${tool}, but no MCP servers are configured (pass --mcp-config FILE)`,
    );
  events.emit({ type: 'flow.node', node, status: 'running', attempt: 1 });
  let outcome;
  try {
    outcome = await mcp.callUnasked(call.server, call.name, request.arguments, {
      ...(signal && { signal }),
      onProgress: (progress) => events.emit({ type: 'flow.progress', node, ...progress }),
    });
  } catch (error) {
    signal?.throwIfAborted();
    if (!(error instanceof Error)) return failed(String(error));
    // The hint is how to fix it (allow the tool, give a slow server longer): the node's one line says it.
    return failed(isUserError(error) && error.hint ? `${error.message}; ${error.hint}` : error.message);
  }
  if (outcome.isError) return failed(`the MCP tool ${tool} failed: ${oneLine(outcome.text)}`);
  const structured = outcome.structured as Json | undefined;
  const usable = structured !== undefined && pathBeyondDepth(structured, MAX_VALUE_DEPTH) === undefined;
  return { status: 'done', output: usable ? structured : outcome.text, prompt, tokens: 0, attempts: 1 };
}

function failed(detail: string): NodeResult {
  return { status: 'failed', tokens: 0, attempts: 1, detail };
}

/** A tool's message on one line, cut short: it is untrusted text, possibly long. */
function oneLine(text: string): string {
  const line = text.replace(/\s+/g, ' ').trim() || '(no message)';
  return line.length > SHOWN_ERROR ? `${line.slice(0, SHOWN_ERROR - 1)}…` : line;
}
