/**
 * `meta-agent serve GRAPH…`: serves agents and flows over HTTP, OpenAI-compatible, with native routes
 * for events, goal runs and flow passes, and a web page at `/`.
 */
import { InvalidArgumentError, type Command } from 'commander';
import type { ServeOptions } from '../actions/serve.js';
import {
  DATABASE_OPTION_HELP,
  GOAL_LOOP_OPTIONS_HELP,
  MCP_OPTION_HELP,
  MODEL_OPTIONS_HELP,
  addDatabaseOption,
  addGoalLoopOptions,
  addModelOptions,
  positiveInteger,
} from '../options.js';
import { restartForSandbox } from '../sandbox-process.js';

const EXAMPLES = `
Examples:
  # serve two agents and a flow on http://127.0.0.1:8000 (the page is at /)
  $ meta-agent serve tutor.autogram.json fraction_agent.csv plan.flow.json
  # talk to one with any OpenAI client: the model is the graph's name
  $ curl -s http://127.0.0.1:8000/v1/chat/completions -H 'Content-Type: application/json' \\
      -H 'X-Conversation-Id: ann' -d '{"model":"tutor","messages":[{"role":"user","content":"hi"}]}'
  # on the network, with keys (each key sees only its own conversations and runs)
  $ META_AGENT_API_KEYS=k1,k2 meta-agent serve tutor.autogram.json --host 0.0.0.0
  $ meta-agent serve tutor.autogram.json --host 0.0.0.0 --api-keys keys.txt

Once it listens, the one line "listening on http://HOST:PORT" goes to stdout (--port 0 picks a free
port); the request log goes to stderr. A conversation is named by the X-Conversation-Id header (made on
first use), or recognised from the history a client sends back; each is saved under --data after every
reply and goes on after a restart. A keys file lists one SHA-256 digest per line, with an optional owner
name: printf %s "$KEY" | sha256sum. A --host other than loopback needs keys. SIGTERM (or Ctrl+C) lets
the turns in flight finish for --grace seconds, then exits 0 (130).
Goal runs (POST /v1/runs) may do what the goal-loop options allow, each key's in its own folder of
--workspace; a command they do not allow waits for an answer over HTTP (POST /v1/runs/ID/answer: y,
y -N, n, or feedback). Flow passes (POST /v1/flows/NAME/passes) are kept under --data.

On PostgreSQL (--database or META_AGENT_DATABASE_URL) nothing is kept under --data: any number of
servers, on any machines, serve the same conversations, and \`meta-agent worker\`s on the same database
help them. Each turn is a durable workflow: a retried request (to this server or another) gets the one
recorded reply, one turn runs at a time in a conversation, and a turn whose process dies is taken up by
another within seconds. A server runs up to --max-running turns itself and queues the rest for workers
(and servers with room); 0 leaves every turn to the workers. A conversation's event stream (GET
/v1/conversations/ID/events) shows the turns run by the server it is asked of.
${DATABASE_OPTION_HELP}
${GOAL_LOOP_OPTIONS_HELP}
${MCP_OPTION_HELP}
${MODEL_OPTIONS_HELP}`;

export function register(program: Command): void {
  const command = program
    .command('serve')
    .description('serve agents and flows over HTTP: OpenAI-compatible, with events, goal runs and a web page')
    .argument(
      '<graphs...>',
      'graph files (NAME.autogram.json, AutoGRAMS .csv) and flow files (NAME.flow.json)',
    )
    .option('--host <host>', 'the address to listen on', '127.0.0.1')
    .option('--port <port>', 'the port to listen on (0: any free one)', port, 8000)
    .option('--api-keys <file>', `a file of the keys' SHA-256 digests (see also META_AGENT_API_KEYS)`)
    .option('--data <dir>', 'where conversations and flow passes are kept', '.meta-agent')
    .option('--max-body <size>', 'the largest request body (bytes, or with kb / mb)', size, 1024 * 1024)
    .option(
      '--deadline <seconds>',
      'the longest one request may take (the turn goes on after)',
      positiveInteger,
      300,
    )
    .option(
      '--grace <seconds>',
      'how long turns in flight may finish once asked to stop',
      positiveInteger,
      10,
    )
    .option('--log-format <format>', 'the request log on stderr: text, json or none', 'text')
    .option(
      '--max-running <n>',
      'with a database: turns this server runs itself at once; more wait on the queue for a worker',
      wholeNumber,
      32,
    );
  addDatabaseOption(addModelOptions(addGoalLoopOptions(command)))
    .addHelpText('after', EXAMPLES)
    .action(async (graphs: string[], options: ServeOptions) => {
      await restartForSandbox();
      const { runServe } = await import('../actions/serve.js');
      await runServe(graphs, options);
    });
}

function port(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 65535)
    throw new InvalidArgumentError('expected a port number from 0 to 65535');
  return n;
}

function size(value: string): number {
  const match = /^(\d+)\s*(k|kb|m|mb)?$/i.exec(value.trim());
  if (!match || Number(match[1]) === 0)
    throw new InvalidArgumentError('expected a size above 0: bytes, or a number with kb or mb (1mb)');
  const unit = match[2]?.[0]?.toLowerCase();
  return Number(match[1]) * (unit === 'k' ? 1024 : unit === 'm' ? 1024 * 1024 : 1);
}

function wholeNumber(value: string): number {
  if (!/^\d+$/.test(value.trim())) throw new InvalidArgumentError('expected a whole number (0 or more)');
  return Number(value);
}
