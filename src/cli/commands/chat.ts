/**
 * `meta-agent chat GRAPH`: talk to an agent graph. In a terminal the chat view (Ink) shows the graph,
 * the current node and the agent's decisions; in a pipe, each input line is a user reply and each agent
 * reply one output line (or, with --json, the event stream). `--state FILE` saves the conversation after
 * every reply and resumes it in a later run.
 */
import { InvalidArgumentError, type Command } from 'commander';
import { STATE_NAME } from '../../aipl/names.js';
import type { ChatOptions } from '../actions/chat.js';
import {
  DATABASE_OPTION_HELP,
  GOAL_LOOP_OPTIONS_HELP,
  MCP_OPTION_HELP,
  MODEL_OPTIONS_HELP,
  SANDBOX_LIMITS_HELP,
  addDatabaseOption,
  addGoalLoopOptions,
  addModelOptions,
  addSelfReferentialOption,
} from '../options.js';
import { restartIfGraphRunsCode } from '../sandbox-process.js';

const EXAMPLES = `
Examples:
  # chat in the terminal UI
  $ meta-agent chat tutor.autogram.json
  # resume where the last run stopped, and save after every reply
  $ meta-agent chat tutor.autogram.json --state tutor.state.json
  # one user reply per input line, one agent reply per output line
  $ printf 'hi\\nmy name is Ann\\n' | meta-agent chat tutor.autogram.json
  # the event stream as JSON lines; or every event kept in a file
  $ meta-agent chat tutor.autogram.json --json < replies.txt
  $ meta-agent chat tutor.autogram.json --trace run.jsonl
  # start elsewhere, under another name
  $ meta-agent chat fraction_agent.csv --start i2 --agent-name Tutor
  # let the agent rewrite its own graph; list its versions afterwards
  $ meta-agent chat editor.autogram.json --self-referential --state editor.state.json
  $ meta-agent history editor.state.json
  # an AIPL graph: store a value its template reads, then go on with the conversation
  $ meta-agent chat sales.autogram.json --state sale.json --aipl-set environment.dangers="a storm"

Without a terminal (or with --no-tui), the agent speaks first when the graph starts with a chat node,
blank input lines are skipped, and the conversation ends at a quit transition or the end of the input.
What code nodes print with console.log goes to stderr as [node] text (with --json: code.log events).
An AutoGRAMS spreadsheet runs under AutoGRAMS' defaults (prompt "You are an agent.", a classifier that
sees the last exchange, temperature 0.7); export it with --format json to change them.
--state FILE is read when it exists (it must belong to the same graph) and saved after every reply,
before the reply is shown, so a failed or interrupted run keeps every reply you saw. In the terminal UI,
q quits (exit 0) and Ctrl+C interrupts (exit 130); either way the state is saved.
With a database, --state NAME names the conversation there: any machine on that database continues it.
--aipl-set ns.key=value stores a value in an AIPL graph's state (config.aipl) before the conversation
goes on, as a code node's aipl.set("ns.key", value) does: at the end of the log, "set by the user",
told as an update; with --state it stays for the rest of the conversation.
${GOAL_LOOP_OPTIONS_HELP}
${MCP_OPTION_HELP}
${SANDBOX_LIMITS_HELP}
${MODEL_OPTIONS_HELP}
${DATABASE_OPTION_HELP}`;

/** `ns.key=value` appended to the values given so far. */
function aiplPair(pair: string, previous: [string, string][] | undefined): [string, string][] {
  const at = pair.indexOf('=');
  const name = at < 0 ? '' : pair.slice(0, at).trim();
  if (!STATE_NAME.test(name))
    throw new InvalidArgumentError('expected ns.key=value, e.g. --aipl-set environment.dangers="a storm"');
  return [...(previous ?? []), [name, pair.slice(at + 1)]];
}

/** Registers `chat`. */
export function register(program: Command): void {
  const command = program
    .command('chat')
    .description('talk to an agent graph (terminal UI in a terminal, one line per reply in a pipe)')
    .argument('<graph>', 'graph file: NAME.autogram.json or an AutoGRAMS .csv spreadsheet')
    .option(
      '--state <file>',
      'resume the conversation saved in FILE (a name, with --database), and save it there after every reply',
    )
    .option('--json', 'write the event stream to stdout as JSON lines instead of the replies')
    .option('--trace <file>', 'append every event to FILE as JSON lines')
    .option('--no-tui', 'read replies line by line even in a terminal')
    .option('--start <node>', 'start at NODE instead of the graph’s start node (new conversations only)')
    .option('--agent-name <name>', 'the agent’s name in prompts (overrides config.agentName)')
    .option('--user-name <name>', 'the user’s name in prompts (overrides config.userName)')
    .option(
      '--aipl-set <ns.key=value>',
      'store an AIPL value before the conversation goes on (repeatable; AIPL graphs)',
      aiplPair,
    );
  addDatabaseOption(addModelOptions(addGoalLoopOptions(addSelfReferentialOption(command))))
    .addHelpText('after', EXAMPLES)
    .action(async (path: string, options: ChatOptions) => {
      // In a database --state is a name, not a file to look into.
      const { databaseUrl } = await import('../database.js');
      const inDatabase = databaseUrl(options.database) !== undefined;
      await restartIfGraphRunsCode(path, inDatabase ? undefined : options.state);
      const { runChat } = await import('../actions/chat.js');
      await runChat(path, options);
    });
}
