/** `meta-agent show GRAPH`: a readable summary of a graph, node by node with its edges. */
import type { Command } from 'commander';

const EXAMPLES = `
Examples:
  $ meta-agent show tutor.autogram.json
  $ meta-agent show fraction_agent.csv

Each node: name, action and marks ([start], [function], [interjection: …]), an excerpt of its
instruction, the transition question (?), and one line per edge: → target [choice].`;

/** Registers `show`. */
export function register(program: Command): void {
  program
    .command('show')
    .description('summarize a graph: its nodes, actions, instructions and edges')
    .argument('<graph>', 'graph file: NAME.autogram.json or an AutoGRAMS .csv spreadsheet')
    .addHelpText('after', EXAMPLES)
    .action(async (path: string) => {
      const { runShow } = await import('../actions/show.js');
      await runShow(path);
    });
}
