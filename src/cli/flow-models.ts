/**
 * The models of a flow's pass, through the one model resolver (llm/config.ts): the chatbot answers the
 * nodes that name no model; a node's `model` names a role of the flow's `config.models` (`fast`,
 * `reason`: AgentKit's tiers), a built-in chat role (chatbot, classifier, userbot) or else a model
 * itself (`gpt-4o`, `local`). A flow's roles and the models its nodes name are resolved as the
 * built-in chat roles are: `--model` replaces every one of them, `META_AGENT_<ROLE>_MODEL` (and
 * `_BASE_URL`, `_API_KEY`) one role, and the file's choice comes last, its URLs getting no key unless
 * trusted.
 */
import type { FlowFile } from '../flow/schema.js';
import type { GraphModelConfig } from '../llm/config.js';
import type { LanguageModel, ModelSet } from '../llm/types.js';
import { modelsForFile, modelsFromOptions, type ModelSetup } from './model-options.js';
import type { ModelOptionValues } from './options.js';

/** The chat roles every model configuration has; a node may name them. */
const CHAT_ROLES = new Set(['chatbot', 'classifier', 'userbot']);

/** What a pass asks: the models of the built-in roles, and each node's by the name it gives. */
export interface FlowModels {
  models: ModelSet;
  nodeModels: Map<string, LanguageModel>;
}

/** The flow's model settings for the resolver: its roles, and a role for each model a node names. */
function flowModelConfig(flow: FlowFile): GraphModelConfig {
  const config: GraphModelConfig = { ...flow.config.models };
  for (const name of namedModels(flow))
    if (!CHAT_ROLES.has(name) && !Object.hasOwn(config, name)) config[name] = { model: name };
  return config;
}

/**
 * Resolves and builds the flow's models; `noted` says on stderr where the file's own URLs send calls
 * (as `flow run` does; a worker carrying a pass does not).
 */
export async function flowModels(
  flow: FlowFile,
  options: ModelOptionValues,
  noted = true,
  setup: ModelSetup = {},
): Promise<FlowModels> {
  const config = flowModelConfig(flow);
  const resolved = noted
    ? await modelsForFile(options, config, 'flow', setup)
    : await modelsFromOptions(options, config, setup);
  const roles = resolved.roleModels ?? {};
  const nodeModels = new Map<string, LanguageModel>();
  for (const name of namedModels(flow)) {
    const model = roles[name];
    if (model) nodeModels.set(name, model);
  }
  return { models: resolved.models, nodeModels };
}

function namedModels(flow: FlowFile): Set<string> {
  return new Set(flow.nodes.flatMap((node) => (node.model === undefined ? [] : [node.model])));
}
