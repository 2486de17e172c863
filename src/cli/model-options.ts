/**
 * The model options every command that talks to models shares, and their conversion into models.
 * API keys are deliberately not options: they come from the environment only, so they stay out of
 * shell history and process listings.
 */
import { Option } from 'commander';
import type { Command } from 'commander';
import { resolveEndpoints, resolveModels } from '../llm/config.js';
import type { GraphModelConfig, ModelFlags, ResolvedEndpoints, ResolvedModels } from '../llm/config.js';

/** The options as commander parses them. */
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

/** The parsed options as config flags. */
export function modelFlags(options: ModelOptionValues): ModelFlags {
  return {
    provider: options.provider,
    script: options.script,
    model: options.model,
    baseUrl: options.baseUrl,
    roleModels: {
      classifier: options.classifierModel,
      userbot: options.userbotModel,
      embedder: options.embedderModel,
    },
  };
}

/** Models for every role from the options, the environment and, lowest, the graph's own config. */
export function modelsFromOptions(
  options: ModelOptionValues,
  graph?: GraphModelConfig,
): Promise<ResolvedModels> {
  return resolveModels({ flags: modelFlags(options), graph });
}

/** Where each role's calls would go, without building the models (for `doctor`). */
export function endpointsFromOptions(
  options: ModelOptionValues,
  graph?: GraphModelConfig,
): Promise<ResolvedEndpoints> {
  return resolveEndpoints({ flags: modelFlags(options), graph });
}
