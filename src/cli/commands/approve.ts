/**
 * `meta-agent approve RUN ANSWER`: answers the command a goal run kept in PostgreSQL waits on, from any
 * machine that reaches the database, as a user at the run's prompt would: y, n, y -N, or feedback.
 */
import type { Command } from 'commander';
import type { ApproveOptions } from '../actions/approve.js';
import { addDatabaseOption } from '../options.js';

const EXAMPLES = `
Examples:
  $ meta-agent approve 1a2b3c4d5e6f y                  run the command it waits on
  $ meta-agent approve 1a2b3c4d5e6f y -5               run it and the next 4 without asking
  $ meta-agent approve 1a2b3c4d5e6f n                  stop the run
  $ meta-agent approve 1a2b3c4d5e6f "use notes.md instead"   do not run it; tell the model this

RUN is the id \`meta-agent run --database … --queue\` printed (or the one in a run's events). A run
kept in PostgreSQL that a command needs an answer for waits for one (up to 7 days) wherever it runs;
the answer reaches it through the database. Exit 0 when the answer was sent, 1 when the run is not
waiting for one, 2 when there is no such run.`;

/** Registers `approve`. */
export function register(program: Command): void {
  const command = program
    .command('approve')
    .description('answer the command a goal run kept in PostgreSQL waits on (y, n, y -N, or feedback)')
    .argument('<run>', 'the run’s id')
    .argument('<answer...>', 'y, n, y -N, or feedback for the model')
    .allowUnknownOption()
    .addHelpText('after', EXAMPLES)
    .action(async (run: string, answer: string[], options: ApproveOptions) => {
      const { approveRun } = await import('../actions/approve.js');
      await approveRun(run, answer.join(' '), options);
    });
  addDatabaseOption(command);
}
