/** `meta-agent validate FILE…`: every lint finding of graph and flow files, and an exit code for CI. */
import type { Command } from 'commander';
import type { ValidateOptions } from '../actions/validate.js';

const EXAMPLES = `
Examples:
  $ meta-agent validate tutor.autogram.json          findings, then a count line
  $ meta-agent validate fraction_agent.csv           an AutoGRAMS spreadsheet
  $ meta-agent validate graphs/*.autogram.json       several files at once
  $ meta-agent validate research.flow.json           a flow: cycles, unknown dependencies, bad code
  $ meta-agent validate tutor.autogram.json --json   machine-readable findings

Exit code: 0 when no file has errors (warnings are fine); 1 when a graph or flow has errors or a file is
not one at all (empty, not JSON or CSV, against the schema); 2 when a file cannot be read (missing, a
folder, an unknown extension).`;

/** Registers `validate`. */
export function register(program: Command): void {
  program
    .command('validate')
    .description('check graph and flow files for errors and warnings (exit 1 on errors)')
    .argument('<graph...>', 'graph files (NAME.autogram.json, AutoGRAMS .csv) or flow files (NAME.flow.json)')
    .option('--json', 'print the findings as JSON')
    .addHelpText('after', EXAMPLES)
    .action(async (paths: string[], options: ValidateOptions) => {
      const { runValidate } = await import('../actions/validate.js');
      await runValidate(paths, options);
    });
}
