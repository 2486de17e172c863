/**
 * The model options (declared in options.ts) turned into models: this loads the model clients, so only
 * the commands' implementations import it.
 */
import { resolveEndpoints, resolveModels } from '../llm/config.js';
import type { GraphModelConfig, ModelFlags, ResolvedEndpoints, ResolvedModels } from '../llm/config.js';
import type { ModelOptionValues } from './options.js';

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
