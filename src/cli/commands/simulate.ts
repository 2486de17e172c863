/**
 * `meta-agent simulate GRAPH`: conversations between the agent and a simulated user (AutoGRAMS
 * Appendix D). At each chat node a transition is sampled and the userbot replies as its user
 * instruction says; the report shows, per node, how often the classifier then took the transition the
 * simulated user aimed at, and which edges no conversation took.
 */
import { InvalidArgumentError, type Command } from 'commander';
import type { SimulateOptions } from '../actions/simulate.js';
import {
  DATABASE_OPTION_HELP,
  GOAL_LOOP_OPTIONS_HELP,
  MCP_OPTION_HELP,
  MODEL_OPTIONS_HELP,
  addDatabaseOption,
  addGoalLoopOptions,
  addModelOptions,
  addSelfReferentialOption,
} from '../options.js';
import { restartIfGraphRunsCode } from '../sandbox-process.js';

const EXAMPLES = `
Examples:
  $ meta-agent simulate tutor.autogram.json                           5 conversations of up to 6 replies
  $ meta-agent simulate tutor.autogram.json --conversations 20 --turns 8 --seed 7
  $ meta-agent simulate tutor.autogram.json --json > report.json     summary and transcripts as JSON
  $ meta-agent simulate quiz.csv --userbot-model gpt-4o               a stronger model plays the user

The simulated user follows the graph's "user instructions" (one per transition of a chat node); write
them so that each clearly leads to its transition. An instruction of <end> (the config's endSignal)
ends the conversation instead; interjection nodes with a userInterjection are tried with their
probabilityInterjection (default 0.01); a node's transitionProbs weight its transitions. Low agreement
at a node means its transition question or choices are ambiguous, or the userbot is not following its
instruction. The same seed
gives the same samples (the models may still vary); without --seed a random one is used and printed.
Progress goes to stderr, one line per conversation; the report goes to stdout. Ctrl+C stops the run
(exit 130) and still reports the conversations that finished.

On PostgreSQL (--database): each conversation is a job on the database's "simulations" queue, taken by
this command and by every \`meta-agent worker\` on the same database; the report is the same as without
it. The simulation has an id (printed; choose it with --simulation ID): run the command again with it
(and --conversations, --turns as before) to collect a simulation that was stopped, without simulating
again a conversation that finished. Every process that takes conversations must reach the graph file
at the same path. The queue's limits, the same environment on every machine:
  META_AGENT_SIMULATION_CONCURRENCY   conversations one process carries at once (default 8)
  META_AGENT_SIMULATION_RATE          N/SECONDS: at most N started in any SECONDS, all processes
                                      together, for the model API's rate limit (default 30/60)
${DATABASE_OPTION_HELP}
${GOAL_LOOP_OPTIONS_HELP}
${MCP_OPTION_HELP}
${MODEL_OPTIONS_HELP}`;

/** Registers `simulate`. */
export function register(program: Command): void {
  const command = program
    .command('simulate')
    .description('let a simulated user talk to the agent; report classifier agreement and uncovered edges')
    .argument('<graph>', 'graph file: NAME.autogram.json or an AutoGRAMS .csv spreadsheet')
    .option('-n, --conversations <n>', 'conversations to simulate', positiveInt, 5)
    .option('-t, --turns <n>', 'user replies per conversation at most', positiveInt, 6)
    .option('--seed <n>', 'seed for sampling the transitions (default: random, printed)', seedValue)
    .option('--json', 'print the summary and the transcripts as JSON')
    .option(
      '--simulation <id>',
      'with --database: the simulation to begin or go on with (default: a new one, its id printed)',
    );
  addModelOptions(addGoalLoopOptions(addSelfReferentialOption(addDatabaseOption(command))))
    .addHelpText('after', EXAMPLES)
    .action(async (path: string, options: SimulateOptions) => {
      await restartIfGraphRunsCode(path);
      const { runSimulate } = await import('../actions/simulate.js');
      await runSimulate(path, options);
    });
}

function positiveInt(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value.trim()) || n < 1)
    throw new InvalidArgumentError('expected a whole number of at least 1');
  return n;
}

function seedValue(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value.trim()) || n >= 2 ** 32)
    throw new InvalidArgumentError('expected a whole number from 0 to 4294967295');
  return n;
}
