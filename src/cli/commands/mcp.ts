/**
 * `meta-agent mcp GRAPH_OR_FLOW…`: serves agents and flows as MCP tools over stdio, for Claude Desktop,
 * Cursor and any other MCP client.
 */
import type { Command } from 'commander';
import type { McpOptions } from '../actions/mcp.js';
import {
  GOAL_LOOP_OPTIONS_HELP,
  MCP_OPTION_HELP,
  MODEL_OPTIONS_HELP,
  addGoalLoopOptions,
  addModelOptions,
} from '../options.js';
import { restartForSandbox } from '../sandbox-process.js';

const EXAMPLES = `
Examples:
  # offer an agent's conversation and functions, and a flow, to the MCP client that starts this
  $ meta-agent mcp tutor.autogram.json plan.flow.json
  # try it by hand with the MCP Inspector
  $ npx @modelcontextprotocol/inspector meta-agent mcp tutor.autogram.json
  # in Claude Desktop's claude_desktop_config.json (Cursor: .cursor/mcp.json), absolute paths:
  {"mcpServers": {"tutor": {"command": "meta-agent", "args": ["mcp", "/home/me/tutor.autogram.json"]}}}

The tools: each function of a graph (a callable node, f(a, b)) is a tool named after it, its parameters
the arguments (any JSON values); each graph with chat nodes is a conversation tool named after the graph,
taking "message" and an optional "conversation_id" and answering the reply and the id to go on with; each
flow is a tool named after it, its inputs the arguments, answering its final nodes' answers as JSON. A
name already taken gets its graph's name in front, and stderr says so at start.

stdout carries the MCP protocol only; what else is said goes to stderr. A call that fails, or whose
arguments are wrong, answers one line marked as an error, and the server goes on. A client that asks for
progress is told each node a call enters (at most ten a second) and each flow node done. Conversations
are kept under --data (without it, in a temporary folder for as long as the process lives). The server
ends when its client closes stdin, or on SIGTERM (Ctrl+C), letting the calls in flight finish for 10s.
The same tools are served over HTTP at /mcp by \`meta-agent serve\`.
${GOAL_LOOP_OPTIONS_HELP}
${MCP_OPTION_HELP}
${MODEL_OPTIONS_HELP}`;

export function register(program: Command): void {
  const command = program
    .command('mcp')
    .description(
      'serve agents and flows as MCP tools over stdio, for Claude Desktop, Cursor and other MCP clients',
    )
    .argument(
      '<graphs...>',
      'graph files (NAME.autogram.json, AutoGRAMS .csv) and flow files (NAME.flow.json)',
    )
    .option('--data <dir>', 'where conversations and flow passes are kept (default: a temporary folder)');
  addModelOptions(addGoalLoopOptions(command))
    .addHelpText('after', EXAMPLES)
    .action(async (graphs: string[], options: McpOptions) => {
      await restartForSandbox();
      const { runMcp } = await import('../actions/mcp.js');
      await runMcp(graphs, options);
    });
}
