/**
 * `meta-agent flow run FILE`: one pass of an AgentKit flow (seed 003), a DAG of prompt nodes whose ready
 * nodes are asked at once. In a terminal a live view shows every node; in a pipe, one line per event on
 * stderr (or, with --json, the event stream on stdout). The answers of the final nodes go to stdout.
 */
import { InvalidArgumentError } from 'commander';
import type { Command } from 'commander';
import type { FlowRunOptions } from '../actions/flow.js';
import {
  DATABASE_OPTION_HELP,
  MCP_OPTION_HELP,
  MODEL_OPTIONS_HELP,
  SANDBOX_LIMITS_HELP,
  addDatabaseOption,
  addMcpOption,
  addModelOptions,
  list,
  positiveInteger,
} from '../options.js';

const EXAMPLES = `
Examples:
  $ meta-agent flow run examples/plan-task.flow.json --input task="move a small office to a new city"
  # offline, with scripted answers (no model server)
  $ meta-agent flow run examples/plan-task.flow.json --provider scripted --script examples/plan-task.script.json
  # one node at a time (the same results, slower)
  $ meta-agent flow run plan.flow.json --input task=… --concurrency 1
  # keep the run: the database, each node's last output, and a pass stopped midway
  $ meta-agent flow run plan.flow.json --input task=… --state plan.run.json
  $ meta-agent flow run plan.flow.json --state plan.run.json          the next pass, or the rest of this one
  $ meta-agent flow run plan.flow.json --input task=… --json | jq 'select(.type == "flow.node")'
  # a flow whose tool nodes call your MCP servers' tools
  $ meta-agent flow run research.flow.json --input topic=tides --mcp-config ~/mcp.json
  # AgentKit's Crafter planner: a model per node (fast, reason, spatial), order-only edges
  $ meta-agent flow run examples/crafter-planner.flow.json --provider scripted --script examples/crafter-planner.script.json
  $ META_AGENT_REASON_MODEL=o3-mini meta-agent flow run examples/crafter-planner.flow.json

A pass runs in steps: every node whose dependencies have answered is asked in the same step, up to
--concurrency at once, against the database as the step began; what their after-query steps write and
change is applied when the step ends, in the flow's order. So concurrency changes the time a pass takes,
never its results. A node whose dependency failed is reported "skipped: upstream failed (NODE)".

A $db.key$ the database has no value for (a key an after-query step writes later) reads as None, as in
AgentKit, and the pass says so ("? NODE: not in the database, read as None: $db.key$"); in a tool
node's arguments it fails the node.

A node's prompt is trimmed to fit the model's context (--context-tokens, config.contextTokens, default
8192) with room for the answer (config.generation.maxTokens, else a quarter of the context up to 2048):
its system messages and its own prompt (the last message) are kept whole; the messages between them
(dependencies' turns, history, knowledge) are dropped oldest first, the last to go cut in the middle
when that is enough. The trim is reported ("✂ NODE: prompt trimmed …", a flow.trimmed event). When the
kept messages alone do not fit, the node fails without a call, naming its tokens and the context.

With --state, the run is saved after every step: Ctrl+C or a crash loses at most the step in progress,
and running the same command again finishes that pass. A finished pass leaves the database and every
node's last output for the next one (a node an after-query step skips reuses its last output).

With --database, the run is kept in PostgreSQL under --state NAME (or a name of its own, said when the
pass stops), and the pass is a durable workflow: each node is asked once and recorded before the step
commits it. After Ctrl+C the same command goes on with the pass at once; after a crash it waits until
the dead process's pass is put back (within seconds), here or on a \`meta-agent worker\`. Either way no
committed node is asked again, and the pass goes on with the models it began with.

A node's "model" names a role of the flow's config.models ("fast": {"model": "gpt-4o-mini"}), a chat
role (chatbot, classifier, userbot) or a model itself ("gpt-4o", "local"); nodes without one use the
chatbot. --model replaces them all, META_AGENT_<ROLE>_MODEL one role; each node's line and the report
say which model answered. "after": ["a"] waits for node a without reading its answer (AgentKit's
add_order), even when a failed. "system" replaces config.system for one node, and a "compose" list
builds its messages: {"role": "system", "content": "$db.manual$"}, {"history": "$db.steps$",
"last": 25}, {"dependencies": "all"}, {"role": "user", "content": "$prompt$"}.

A node may call a tool of one of your MCP servers instead of asking the model:
  {"name": "fact", "tool": {"server": "notes", "name": "lookup", "arguments": {"key": "$out.pick$"}},
   "dependencies": ["pick"]}
Every string of its arguments is a template like a prompt; one that is exactly one reference
($out.NODE$, $db.key$) passes the value as it is (a number, an object), any other is text. Its output
is the tool's structured content, else its text; a tool error or a failing server fails the node (and
skips what depends on it). The tool is called once: no compose, afterQuery or fallback. The servers
come from --mcp-config (or CONFIG_DIR/mcp.json), never from the flow file.

Exit code: 0 when every node has an output, 1 when one failed (and those after it were skipped), 2 for
a bad flow file, input or state file, 130 after Ctrl+C.
${SANDBOX_LIMITS_HELP}
${MODEL_OPTIONS_HELP}
${DATABASE_OPTION_HELP}
${MCP_OPTION_HELP}`;

/** Registers `flow` and its subcommand `run`. */
export function register(program: Command): void {
  const flow = program
    .command('flow')
    .description('run AgentKit flows: DAGs of prompts whose ready nodes are asked at once');
  const run = flow
    .command('run')
    .description('run one pass of a flow file and print the answers of its final nodes')
    .argument('<flow>', 'a flow file, NAME.flow.json')
    .option('-i, --input <name=value>', 'a value for one of the flow’s inputs (repeatable)', inputPair, {})
    .option(
      '-c, --concurrency <n>',
      'how many nodes are asked at once (default: the flow’s, else every ready node up to 32; 1 = one by one)',
      positiveInteger,
    )
    .option(
      '--context-tokens <n>',
      'the model’s context window: each node’s prompt is trimmed to fit it with room for the answer (default: the flow’s config.contextTokens, else 8192)',
      positiveInteger,
    )
    .option(
      '--state <file>',
      'save the run to FILE (a name, with --database) after every step, and go on from it when it exists',
    )
    .option('--json', 'write the event stream to stdout as JSON lines, then the report')
    .option('--trace <file>', 'append every event to FILE as JSON lines')
    .option('--no-tui', 'print one line per event even in a terminal')
    .option(
      '--allow <tools>',
      'MCP tools that tool nodes may call though they may change things (mcp__SERVER__TOOL, * patterns), comma-separated',
      list,
    )
    .option('--yes', 'tool nodes may call any MCP tool, read-only or not');
  addMcpOption(addDatabaseOption(addModelOptions(run)))
    .addHelpText('after', EXAMPLES)
    .action(async (file: string, options: FlowRunOptions) => {
      const { restartIfFlowRunsCode } = await import('../sandbox-process.js');
      await restartIfFlowRunsCode(file);
      const { runFlow } = await import('../actions/flow.js');
      await runFlow(file, options);
    });
}

/** `name=value` into the record of inputs given so far. */
function inputPair(pair: string, previous: Record<string, string>): Record<string, string> {
  const at = pair.indexOf('=');
  if (at <= 0) throw new InvalidArgumentError('expected NAME=VALUE, e.g. --input task="plan a trip"');
  return { ...previous, [pair.slice(0, at).trim()]: pair.slice(at + 1) };
}
