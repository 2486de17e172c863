/**
 * `meta-agent design DESCRIPTION`: designs an agent graph with the designer meta-autogram and writes
 * `NAME.autogram.json` with its `.dot`, `.svg` and `.html` views. Progress shows in the terminal UI when
 * stdout is a terminal, else as one line per stage on stderr; the summary goes to stdout.
 */
import { InvalidArgumentError, Option, type Command } from 'commander';
import { DEFAULT_DESIGN_LIMITS, LOCAL_CONCURRENCY } from '../../../meta/limits.js';
import type { DesignOptions } from '../actions/design.js';
import { MODEL_OPTIONS_HELP, addModelOptions } from '../options.js';
import { restartForSandbox } from '../sandbox-process.js';

const EXAMPLES = `
Examples:
  $ meta-agent design "a tutor bot that teaches fractions"
  $ meta-agent design "a recruiter that screens candidates" -o agents --name recruiter
  $ meta-agent design "a support bot for a bike shop" --check 5        simulate 5 conversations, repair
  $ meta-agent design "a tutor bot" --base-url http://127.0.0.1:11434/v1 --model llama3.2
  $ meta-agent design "a tutor bot that teaches fractions" --name tutor --force   redesign tutor.*

The designer is itself a graph (meta/designer.autogram.json): outline -> DOT draft -> Graphviz parse
(problems go back to the model) -> every node's fields, written concurrently -> assemble, lint, repair.
When the model's answers cannot be used after the allowed tries, or you press Ctrl+C (exit 130), the
partial work (outline, DOT draft, the model's last answer) is kept in the output folder as NAME.partial.*.
${MODEL_OPTIONS_HELP}`;

/** Registers `design`. */
export function register(program: Command): void {
  const command = program
    .command('design')
    .description('design a new agent graph from a description (the designer is itself an autogram)')
    .argument('<description>', 'what the agent is for, e.g. "a tutor bot that teaches fractions"')
    .option('-o, --output <dir>', 'folder to write the graph and its views into', '.')
    .option('--name <name>', 'the graph name and file name (default: from the description)')
    .option(
      '--force',
      'overwrite an earlier design of the same name (else a name from the description becomes NAME_2, …, and a --name is refused)',
    )
    .option('--check <n>', 'simulate N conversations, report coverage and agreement, repair', positiveInt)
    .addOption(
      new Option(
        '--concurrency <n>',
        `model calls in flight while node fields are written (default ${DEFAULT_DESIGN_LIMITS.concurrency}, or ${LOCAL_CONCURRENCY} for a server on this machine)`,
      ).argParser(positiveInt),
    );
  addModelOptions(command)
    .addHelpText('after', EXAMPLES)
    .action(async (description: string, options: DesignOptions) => {
      // The designer is a graph of code nodes.
      await restartForSandbox();
      const { runDesign } = await import('../actions/design.js');
      await runDesign(description, options);
    });
}

function positiveInt(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError('expected a whole number of at least 1');
  return n;
}
