/**
 * `meta-agent doctor`: checks what meta-agent needs, one line each with the fix when something is
 * wrong: Node, the isolated-vm sandbox, Graphviz, the model configuration, each endpoint and its
 * models, and a one-token classification round trip. Exit 0 when all is well, 1 when a check failed,
 * 2 when no model is configured at all.
 */
import type { Command } from 'commander';
import { MODEL_OPTIONS_HELP, addModelOptions, type ModelOptionValues } from '../options.js';
import { restartForSandbox } from '../sandbox-process.js';

const EXAMPLES = `
Examples:
  $ meta-agent doctor                                        whatever the environment configures
  $ meta-agent doctor --base-url http://127.0.0.1:11434/v1   check an Ollama server
  $ meta-agent doctor --model gpt-4o --classifier-model gpt-4o-mini

Exit status: 0 every check passed, 1 a check failed, 2 no model is configured.
${MODEL_OPTIONS_HELP}`;

/** Registers `doctor`. */
export function register(program: Command): void {
  const command = program
    .command('doctor')
    .description('check Node, the sandbox, Graphviz and your model server, and say how to fix what fails');
  addModelOptions(command)
    .addHelpText('after', EXAMPLES)
    .action(async (options: ModelOptionValues) => {
      // One of the checks runs code in the sandbox.
      await restartForSandbox();
      const { runDoctor } = await import('../actions/doctor.js');
      await runDoctor(options);
    });
}
