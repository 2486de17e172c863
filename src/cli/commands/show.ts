/** `meta-agent show FILE`: a readable summary of a graph or a flow, node by node with its edges. */
import type { Command } from 'commander';

const EXAMPLES = `
Examples:
  $ meta-agent show tutor.autogram.json
  $ meta-agent show fraction_agent.csv
  $ meta-agent show research.flow.json

A graph's node: name, action and marks ([start], [function], [interjection: …]), an excerpt of its
instruction, the transition question (?), and one line per edge: → target [choice].
A flow's node: name, the nodes whose answers it reads ([dependencies: …]), the nodes it only runs after
([after: …]), its model ([model: …]), what its answer goes through ([schema], [code], [fallback]), an
excerpt of its prompt and of its compose template.`;

/** Registers `show`. */
export function register(program: Command): void {
  program
    .command('show')
    .description('summarize a graph or flow: its nodes, actions, instructions and edges')
    .argument('<graph>', 'graph file (NAME.autogram.json, AutoGRAMS .csv) or flow file (NAME.flow.json)')
    .addHelpText('after', EXAMPLES)
    .action(async (path: string) => {
      const { runShow } = await import('../actions/show.js');
      await runShow(path);
    });
}
