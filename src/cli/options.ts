/**
 * Options several commands declare: the model options, --self-referential and the goal-loop options.
 * Every command module imports this at start-up, so it declares options only; turning them into models
 * is model-options.ts.
 * API keys are deliberately not options: they come from the environment only, so they stay out of
 * shell history and process listings.
 */
import { InvalidArgumentError, Option } from 'commander';
import type { Command } from 'commander';

/** The model options as commander parses them. */
export interface ModelOptionValues {
  model?: string;
  baseUrl?: string;
  provider?: 'openai' | 'scripted' | 'local';
  script?: string;
  classifierModel?: string;
  userbotModel?: string;
  embedderModel?: string;
}

/** Help text for the model options, for a command's `addHelpText('after', …)`. */
export const MODEL_OPTIONS_HELP = `
Models: any OpenAI-compatible server. Set OPENAI_API_KEY for OpenAI, or OPENAI_BASE_URL / --base-url for a
local server (Ollama http://127.0.0.1:11434/v1, LM Studio http://127.0.0.1:1234/v1, vLLM, llama.cpp).
With nothing set, a local server on its usual port is used when one answers, else the embedded model
(a GGUF run in-process; the first use downloads it, about 1.1 GB: see \`meta-agent models --help\`).
A role's model named local or local:REF (a .gguf path or hf:OWNER/NAME/FILE.gguf) runs embedded, e.g.
--classifier-model local beside a server's chatbot. Keys come from the environment only (OPENAI_API_KEY,
META_AGENT_<ROLE>_API_KEY); see .env.example for every variable.`;

/** What caps the sandbox limits a file sets, for the help of commands that run a graph's or flow's code. */
export const SANDBOX_LIMITS_HELP = `
Sandbox: a file's config.sandbox.timeoutMs and memoryMb bound each evaluation of its code (and of its
answer schemas' patterns), capped by META_AGENT_SANDBOX_TIMEOUT_MS (default 10000) and
META_AGENT_SANDBOX_MEMORY_MB (default 256); a file that asks for more gets the cap, and stderr says so.`;

/** Adds --model, --base-url, --provider, --script and the per-role model flags to `command`. */
export function addModelOptions(command: Command): Command {
  return command
    .option(
      '-m, --model <name>',
      'model for the chatbot, classifier and userbot (e.g. gpt-4o-mini, llama3.2)',
    )
    .option('--base-url <url>', 'OpenAI-compatible endpoint, e.g. http://127.0.0.1:11434/v1')
    .addOption(
      new Option(
        '--provider <provider>',
        'openai (any compatible server), local (the embedded model) or scripted (rules file)',
      ).choices(['openai', 'local', 'scripted']),
    )
    .option('--script <file>', 'rules file for --provider scripted: deterministic answers, no server')
    .option('--classifier-model <name>', 'model that picks transitions (one-token answers)')
    .option('--userbot-model <name>', 'model that plays the user in simulations')
    .option('--embedder-model <name>', 'model for embeddings (default text-embedding-3-small on OpenAI)');
}

/** Adds --self-referential, shared by the commands that run graphs. */
export function addSelfReferentialOption(command: Command): Command {
  return command.option(
    '--self-referential',
    'let code nodes edit the running graph through `self` (also "selfReferential": true in the graph config)',
  );
}

/** The goal-loop options of the commands that run graphs (`goal_loop` nodes), as commander parses them. */
export interface GoalLoopOptionValues {
  workspace?: string;
  allow?: string[];
  yes?: boolean;
  goalMaxSteps?: number;
  /** The MCP servers whose tools the run's code nodes and goal_loop nodes may call (src/cli/mcp-setup.ts). */
  mcpConfig?: string;
}

/** Help text for the goal-loop options, for a command's `addHelpText('after', …)`. */
export const GOAL_LOOP_OPTIONS_HELP = `
goal_loop nodes: each runs the goal loop (as meta-agent run does) with the node's lines as goals, in the
--workspace folder, saved to WORKSPACE/.meta-agent/runs/ after every step; the graph gets back
{ complete, reason, detail, steps }. Nobody is asked inside a conversation: besides task_complete and
do_nothing, only the commands --allow names (and those the workspace remembers) run, or every one but
delete_file with --yes; the others are refused, and a run refused twice in a row ends "refused". A
graph file cannot grant itself any of this.`;

/**
 * Adds --workspace, --allow, --yes, --goal-max-steps and --mcp-config: what a `goal_loop` node's run
 * (and code nodes, for MCP) may do. They come from the user only; a graph file cannot set them.
 */
export function addGoalLoopOptions(command: Command): Command {
  return addMcpOption(command)
    .option('--workspace <dir>', 'the folder goal_loop nodes work in (default ./workspace)')
    .option(
      '--allow <commands>',
      'goal-loop commands and MCP tools (mcp__SERVER__TOOL, * patterns) that run without asking, comma-separated',
      list,
    )
    .option(
      '--yes',
      'goal_loop nodes run every command but deletion, and code nodes any MCP tool, without asking',
    )
    .option(
      '--goal-max-steps <n>',
      'the most steps a goal_loop node’s run takes (default 20)',
      positiveInteger,
    );
}

/** Parses a comma-separated option that may be repeated (`--allow a,b --allow c`). */
export function list(value: string, previous: string[] | undefined): string[] {
  const items = value
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean);
  return [...(previous ?? []), ...items];
}

/** Parses a whole number above 0, refusing `2.5`, `1e3` and `0x10` with a message commander prints. */
export function positiveInteger(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value.trim()) || n < 1) throw new InvalidArgumentError('expected a whole number above 0');
  return n;
}

/** Help text for --database, for the commands that can keep their work in PostgreSQL. */
export const DATABASE_OPTION_HELP = `
Database: with --database postgres://… (or META_AGENT_DATABASE_URL), what this command keeps (states,
runs, passes, memory) lives in PostgreSQL instead of files, shared by every machine that names the same
database; its tables are made, and migrated, on first use. Without either, the files stay the default.`;

/** Adds --database to `command`. */
export function addDatabaseOption(command: Command): Command {
  return command.option(
    '--database <url>',
    'keep this work in PostgreSQL (postgres://USER:PASSWORD@HOST/DB; default META_AGENT_DATABASE_URL)',
  );
}

/** Help text for --mcp-config, for the commands whose runs may call MCP tools. */
export const MCP_OPTION_HELP = `
MCP: the tools of your MCP servers, in the mcpServers format Claude Desktop and Cursor read
({"mcpServers": {"NAME": {"command": "…", "args": […], "env": {…}}}} or {"url": "https://…/mcp",
"headers": {…}}), from --mcp-config FILE or else CONFIG_DIR/mcp.json. A server starts when first needed
and stops with the run. Goal runs offer each tool as a command mcp__SERVER__TOOL (read-only tools as
reads, the others as side effects: --allow 'mcp__SERVER__*' lets them run unasked); code nodes call
mcp.call("SERVER", "TOOL", {…}); a flow node may be a tool call. Where nobody is asked (code nodes,
tool nodes) a tool the server does not mark read-only runs only under --allow or --yes. A graph or flow
file names tools, never servers. \`meta-agent doctor\` starts each server and lists its tools.`;

/** Adds --mcp-config to `command`. */
export function addMcpOption(command: Command): Command {
  return command.option(
    '--mcp-config <file>',
    'MCP servers whose tools the run may use (mcpServers JSON; default CONFIG_DIR/mcp.json)',
  );
}
