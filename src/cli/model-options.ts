/**
 * The model options (declared in options.ts) turned into models: this loads the model clients, so only
 * the commands' implementations import it.
 */
import { resolve } from 'node:path';
import { resolveEndpoints, resolveModels } from '../llm/config.js';
import type { GraphModelConfig, ModelFlags, ResolvedEndpoints, ResolvedModels } from '../llm/config.js';
import type { ModelOptionValues } from './options.js';
import { writeErr } from './terminal.js';

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

export interface ModelSetup {
  /**
   * Whether roles left with no server fall back to the embedded model (default true); false keeps
   * the error for a command that can do without models.
   */
  embeddedFallback?: boolean;
  /**
   * What to do about an embedded model that is not ready (not downloaded, or no runtime): `fetch` it
   * now (the default); fetch it on its first call (`fetch-on-first-call`), so a graph of code and
   * exact-text nodes runs without it; or fail that first call, saying how to fetch it
   * (`fail-on-first-call`), where a download's progress could not be shown.
   */
  notReady?: NotReady;
}

export type NotReady = 'fetch' | 'fetch-on-first-call' | 'fail-on-first-call';

/**
 * Models for every role from the options, the environment and, lowest, the graph's own config. An
 * embedded model is made ready first (downloaded and installed on first use, with progress), unless
 * `notReady` says otherwise.
 */
export async function modelsFromOptions(
  options: ModelOptionValues,
  graph?: GraphModelConfig,
  { embeddedFallback = true, notReady = 'fetch' }: ModelSetup = {},
): Promise<ResolvedModels> {
  const resolved = await resolveModels({ flags: modelFlags(options), graph, embeddedFallback });
  if (!Object.values(resolved.endpoints).some((endpoint) => endpoint.provider === 'local')) return resolved;
  const { localModelsReady, prepareLocalModels, rolesPreparedOnFirstCall } = await import('./local-setup.js');
  if (notReady !== 'fetch' && !(await localModelsReady(resolved.endpoints))) {
    return rolesPreparedOnFirstCall(resolved, notReady === 'fetch-on-first-call');
  }
  await prepareLocalModels(resolved.endpoints);
  return resolved;
}

/** What kind of file names its own model servers, as a note says it. */
export type ModelFileKind = 'graph' | 'flow';

/**
 * Models for running a graph or flow file whose config may name its own servers: those of
 * modelsFromOptions, after a note on stderr of what the file sends where (graphEndpointNote). Graphs and
 * flows both come here, so a shared file of either kind gets the same note and keeps the same keys back.
 */
export async function modelsForFile(
  options: ModelOptionValues,
  models: GraphModelConfig | undefined,
  kind: ModelFileKind,
  setup: ModelSetup = {},
): Promise<ResolvedModels> {
  const resolved = await modelsFromOptions(options, models, setup);
  const note = graphEndpointNote(resolved.endpoints, kind);
  if (note) writeErr(note);
  return resolved;
}

/**
 * The model options as a durable workflow keeps them in its input, for whichever process carries it:
 * plain JSON, only the model flags, the script's path made absolute. Never a key: keys are not options,
 * each process reads its own environment's.
 */
export function modelOptionsToKeep(options: ModelOptionValues): ModelOptionValues {
  const { model, baseUrl, provider, script, classifierModel, userbotModel, embedderModel } = options;
  const kept = { model, baseUrl, provider, classifierModel, userbotModel, embedderModel };
  return JSON.parse(
    JSON.stringify({ ...kept, ...(script !== undefined && { script: resolve(script) }) }),
  ) as ModelOptionValues;
}

/**
 * Whether any model option was given: then a model that cannot be resolved is the user's error to fix,
 * where a command that can do without models would otherwise go on without them.
 */
export function hasModelFlags(options: ModelOptionValues): boolean {
  const flags = [
    options.model,
    options.baseUrl,
    options.provider,
    options.script,
    options.classifierModel,
    options.userbotModel,
    options.embedderModel,
  ];
  return flags.some((flag) => flag !== undefined);
}

/** Where each role's calls would go, without building the models (for `doctor`). */
export function endpointsFromOptions(
  options: ModelOptionValues,
  graph?: GraphModelConfig,
): Promise<ResolvedEndpoints> {
  return resolveEndpoints({ flags: modelFlags(options), graph });
}

/**
 * What the user should know when the graph (or flow) file picked a server: that server gets the
 * conversation, and, unless trusted, none of the user's keys. Undefined when no role uses a URL from
 * the file.
 */
export function graphEndpointNote(
  endpoints: ResolvedEndpoints,
  kind: ModelFileKind = 'graph',
): string | undefined {
  const byUrl = new Map<string, { roles: string[]; withheld: Set<string> }>();
  for (const [role, endpoint] of Object.entries(endpoints)) {
    if (endpoint.provider !== 'openai' || !endpoint.urlFromGraph) continue;
    const entry = byUrl.get(endpoint.baseUrl) ?? { roles: [], withheld: new Set() };
    entry.roles.push(role);
    if (endpoint.withheldKey) entry.withheld.add(endpoint.withheldKey);
    byUrl.set(endpoint.baseUrl, entry);
  }
  if (byUrl.size === 0) return undefined;
  const lines = [...byUrl].map(([url, { roles, withheld }]) => {
    const keys = [...withheld].join(' and ');
    const key = keys ? `; ${keys} is not sent there (list it in META_AGENT_TRUSTED_URLS to send it)` : '';
    return `[models] the ${kind} sends the ${roles.join(', ')} calls to ${url}${key}\n`;
  });
  return lines.join('');
}
