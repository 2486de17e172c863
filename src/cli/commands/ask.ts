/** `meta-agent ask TEXT`: one chat completion from the chatbot model, streamed to stdout. */
import type { Command } from 'commander';
import type { AskOptions } from '../actions/ask.js';
import { MODEL_OPTIONS_HELP, addModelOptions } from '../options.js';

const EXAMPLES = `
Examples:
  $ meta-agent ask "Say hello in French"
  $ meta-agent ask "Summarise AutoGRAMS in one line" --model gpt-4o
  $ meta-agent ask "Why is the sky blue?" --base-url http://127.0.0.1:11434/v1 --model llama3.2
  $ meta-agent ask "Hi" --system "Answer like a pirate."
  $ meta-agent ask "Hi" --provider scripted --script rules.json

The answer goes to stdout as it arrives; the model, tokens, cost and time go to stderr, so
\`meta-agent ask "…" > answer.txt\` keeps only the answer.
${MODEL_OPTIONS_HELP}`;

/** Registers `ask`. */
export function register(program: Command): void {
  const command = program
    .command('ask')
    .description('send one message to the chatbot model and stream the answer (a quick check of your setup)')
    .argument('<text>', 'the message to send')
    .option('-s, --system <text>', 'system prompt to send before the message');
  addModelOptions(command)
    .addHelpText('after', EXAMPLES)
    .action(async (text: string, options: AskOptions) => {
      const { runAsk } = await import('../actions/ask.js');
      await runAsk(text, options);
    });
}
