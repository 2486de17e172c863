/**
 * `meta-agent worker GRAPH…`: takes durable work (conversations' turns, and whatever else is queued)
 * from a PostgreSQL database that `serve` processes share.
 */
import type { Command } from 'commander';
import type { WorkerOptions } from '../actions/worker.js';
import {
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
  # two servers and a worker on one database (each on any machine that reaches it)
  $ export META_AGENT_DATABASE_URL=postgres://meta:secret@db.example:5432/meta
  $ meta-agent serve tutor.autogram.json --port 8000
  $ meta-agent serve tutor.autogram.json --port 8001
  $ meta-agent worker tutor.autogram.json

A worker is given the same graph files as the servers (and the same model options): a turn runs the
conversation's graph, and a worker refuses a turn whose graph it was not given (the request that asked
for it is answered 409 graph_not_served, saying so). Once it takes work, the one line "worker ID taking
work from QUEUES" goes to stdout; problems go to stderr.
If a worker dies (even kill -9), its heartbeat stops and another process on the database (a worker or a
server) puts its unfinished work back on the queues within seconds; a turn it was running runs again
from the conversation's stored state, and its client gets the one reply that is stored. SIGTERM (or
Ctrl+C) stops taking work and lets what runs finish for --grace seconds, then exits 0 (130); what is
left then is taken up elsewhere at once.
${GOAL_LOOP_OPTIONS_HELP}
${MCP_OPTION_HELP}
${MODEL_OPTIONS_HELP}`;

export function register(program: Command): void {
  const command = program
    .command('worker')
    .description('take queued work (conversations’ turns, runs) from the PostgreSQL database servers share')
    .argument('[graphs...]', 'the graph and flow files the servers serve (a turn runs its graph)')
    .option(
      '--grace <seconds>',
      'how long the work in flight may finish once asked to stop',
      positiveInteger,
      10,
    );
  addDatabaseOption(addModelOptions(addGoalLoopOptions(command)))
    .addHelpText('after', EXAMPLES)
    .action(async (graphs: string[], options: WorkerOptions) => {
      await restartForSandbox();
      const { runWorker } = await import('../actions/worker.js');
      await runWorker(graphs, options);
    });
}
