/**
 * `meta-agent history FILE`: the versions of a self-edited graph, read from a saved conversation state
 * (its `graph` field) or a graph file (version 0 only); differences between versions; any version
 * written back out as a graph file; and the AIPL log of a conversation whose graph uses AIPL.
 */
import type { Command } from 'commander';
import type { HistoryOptions } from '../actions/history.js';
import { addDatabaseOption } from '../options.js';

const EXAMPLES = `
Examples:
  $ meta-agent history chat-state.json                          list the versions (time, by, op, node)
                                                                 and the AIPL log (turn, name, value, question)
  $ meta-agent history chat-state.json --diff 0 3               what changed from version 0 to 3
  $ meta-agent history chat-state.json --revert 2 -o v2.autogram.json
                                                                 write the graph as it was at version 2
  $ meta-agent history chat-state.json --aipl                   the AIPL log alone, oldest entry first
  $ meta-agent history chat-state.json --aipl --json            the AIPL log as JSON, values uncut

FILE is a conversation state saved by \`chat --state\` (its "graph" field holds the edit history of a
self-referential run, its "aipl" field the AIPL log of a graph with config.aipl), a bare graph history,
or a graph file (which has version 0 only). With --database (or META_AGENT_DATABASE_URL), FILE may also
name a conversation kept there by \`chat --state NAME\`; a name the database does not hold is read as a file.`;

/** Registers `history`. */
export function register(program: Command): void {
  const command = program
    .command('history')
    .description('list, diff and restore the versions of a self-edited graph; show a conversation’s AIPL log')
    .argument('<file>', 'conversation state (.json) or graph file (.autogram.json, .csv)')
    .option('--diff <version...>', 'show node and field differences between two versions: --diff A B')
    .option('--revert <version>', 'write the graph as it was at VERSION (needs -o)')
    .option(
      '-o, --output <file>',
      'graph file to write with --revert (.autogram.json or .csv; - for stdout, as JSON)',
    )
    .option('--aipl', 'print only the AIPL log of a conversation state (turn, name, value, question)')
    .option('--json', 'with --aipl: print the log as a JSON array of its entries');
  addDatabaseOption(command)
    .addHelpText('after', EXAMPLES)
    .action(async (path: string, options: HistoryOptions) => {
      const { runHistory } = await import('../actions/history.js');
      await runHistory(path, options);
    });
}
