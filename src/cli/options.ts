/**
 * Options several commands declare: the model options and --self-referential. Every command module
 * imports this at start-up, so it declares options only; turning them into models is model-options.ts.
 * API keys are deliberately not options: they come from the environment only, so they stay out of
 * shell history and process listings.
 */
import { Option } from 'commander';
import type { Command } from 'commander';

/** The model options as commander parses them. */
export interface ModelOptionValues {
  model?: string;
  baseUrl?: string;
  provider?: 'openai' | 'scripted';
  script?: string;
  classifierModel?: string;
  userbotModel?: string;
  embedderModel?: string;
}

/** Help text for the model options, for a command's `addHelpText('after', …)`. */
export const MODEL_OPTIONS_HELP = `
Models: any OpenAI-compatible server. Set OPENAI_API_KEY for OpenAI, or OPENAI_BASE_URL / --base-url for a
local server (Ollama http://127.0.0.1:11434/v1, LM Studio http://127.0.0.1:1234/v1, vLLM, llama.cpp).
With nothing set, a local server on its usual port is used when one answers. Keys come from the
environment only (OPENAI_API_KEY, META_AGENT_<ROLE>_API_KEY); see .env.example for every variable.`;

/** Adds --model, --base-url, --provider, --script and the per-role model flags to `command`. */
export function addModelOptions(command: Command): Command {
  return command
    .option(
      '-m, --model <name>',
      'model for the chatbot, classifier and userbot (e.g. gpt-4o-mini, llama3.2)',
    )
    .option('--base-url <url>', 'OpenAI-compatible endpoint, e.g. http://127.0.0.1:11434/v1')
    .addOption(
      new Option('--provider <provider>', 'openai (any compatible server) or scripted (rules file)').choices([
        'openai',
        'scripted',
      ]),
    )
    .option('--script <file>', 'rules file for --provider scripted: deterministic answers, no server')
    .option('--classifier-model <name>', 'model that picks transitions (one-token answers)')
    .option('--userbot-model <name>', 'model that plays the user in simulations')
    .option('--embedder-model <name>', 'model for embeddings (default text-embedding-3-small on OpenAI)');
}

/** Adds --self-referential, shared by the commands that run graphs. */
export function addSelfReferentialOption(command: Command): Command {
  return command.option(
    '--self-referential',
    'let code nodes edit the running graph through `self` (also "selfReferential": true in the graph config)',
  );
}
