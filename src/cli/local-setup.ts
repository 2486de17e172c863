/**
 * Readies the embedded model before a command's work starts, so nothing is downloaded in the middle
 * of a conversation or under the terminal UI: on first use, once the hub has answered, it says what
 * will happen (how much, to where, and how to use a server instead), downloads the GGUF with its
 * progress, and installs the runtime; offline it ends in the one line that says the hub is out of reach.
 * Later runs find both in the cache and say in one line which model answers.
 */
import { UserError } from '../errors.js';
import type { ResolvedEndpoint, ResolvedEndpoints, ResolvedModels } from '../llm/config.js';
import { modelsDir } from '../llm/local/cache-dir.js';
import { cachedModel } from '../llm/local/download.js';
import { DEFAULT_LOCAL_MODEL, parseModelRef, sizeNote } from '../llm/local/model-ref.js';
import { runtimeInstalled } from '../llm/local/runtime.js';
import type { LanguageModel, ModelSet } from '../llm/types.js';
import { ensureModelFile, ensureRuntime } from './actions/models.js';
import { writeErr } from './terminal.js';

/** How to use a server instead, for the first-use notice. */
export const USE_A_SERVER =
  'to use a model server instead, set OPENAI_API_KEY (OpenAI) or pass --base-url URL (Ollama, LM Studio, vLLM, llama.cpp server)';

export type LocalEndpoint = Extract<ResolvedEndpoint, { provider: 'local' }>;

/** The distinct embedded models of `endpoints`. */
export function localEndpoints(endpoints: ResolvedEndpoints): LocalEndpoint[] {
  const local = new Map<string, LocalEndpoint>();
  for (const endpoint of Object.values(endpoints)) {
    if (endpoint.provider === 'local') local.set(endpoint.model, endpoint);
  }
  return [...local.values()];
}

/** Downloads and installs what the endpoints' embedded models still lack, saying so first. */
export async function prepareLocalModels(
  endpoints: ResolvedEndpoints,
  env: NodeJS.ProcessEnv = process.env,
): Promise<void> {
  const local = localEndpoints(endpoints);
  for (const endpoint of local) await prepare(endpoint, env);
  if (local.length > 0) await ensureRuntime(env);
}

/** Whether every embedded model of `endpoints` can load now, without a download or an install. */
export async function localModelsReady(
  endpoints: ResolvedEndpoints,
  env: NodeJS.ProcessEnv = process.env,
): Promise<boolean> {
  if (!runtimeInstalled(env)) return false;
  for (const { model } of localEndpoints(endpoints)) {
    const ref = parseModelRef(model);
    if (ref.kind === 'hf' && !(await cachedModel(ref, env))) return false;
  }
  return true;
}

/**
 * The models, each embedded one preparing the embedded models (once, for all of them) on its first
 * call: what prepareLocalModels says and fetches comes when a model is first needed, and a failure
 * (offline, say) is that call's error. Without `fetch`, that first call fails, saying how to fetch.
 */
export function preparedOnFirstCall(resolved: ResolvedModels, fetch: boolean): ModelSet {
  return rolesPreparedOnFirstCall(resolved, fetch).models;
}

/** preparedOnFirstCall for every role, a flow's own (`roleModels`) too, sharing one preparation. */
export function rolesPreparedOnFirstCall(
  { models, endpoints, roleModels }: ResolvedModels,
  fetch: boolean,
): ResolvedModels {
  let prepared: Promise<void> | undefined;
  const ready = () =>
    (prepared ??= fetch ? prepareLocalModels(endpoints) : Promise.reject(notFetched(endpoints)));
  const wrapped = new Map<LanguageModel, LanguageModel>();
  const wrap = (model: LanguageModel, endpoint: ResolvedEndpoint): LanguageModel => {
    if (endpoint.provider !== 'local') return model;
    let lazy = wrapped.get(model);
    if (!lazy) {
      lazy = {
        id: model.id,
        modelName: model.modelName,
        capabilities: model.capabilities,
        answersFrom: model.answersFrom,
        complete: async (request) => (await ready(), model.complete(request)),
        stream: async (request, onChunk) => (await ready(), model.stream(request, onChunk)),
        embed: async (texts, signal) => (await ready(), model.embed(texts, signal)),
      };
      wrapped.set(model, lazy);
    }
    return lazy;
  };
  const byRole = endpoints as Record<string, ResolvedEndpoint>;
  return {
    endpoints,
    models: {
      chatbot: wrap(models.chatbot, endpoints.chatbot),
      classifier: wrap(models.classifier, endpoints.classifier),
      userbot: wrap(models.userbot, endpoints.userbot),
      embedder: wrap(models.embedder, endpoints.embedder),
    },
    ...(roleModels && {
      roleModels: Object.fromEntries(
        Object.entries(roleModels).map(([role, model]) => [role, wrap(model, byRole[role]!)]),
      ),
    }),
  };
}

async function prepare(endpoint: LocalEndpoint, env: NodeJS.ProcessEnv): Promise<void> {
  const ref = parseModelRef(endpoint.model);
  const why = endpoint.automatic ? 'no model server is configured or answering, so ' : '';
  if (ref.kind === 'file' || (await cachedModel(ref, env))) {
    if (endpoint.automatic) writeErr(`[models] ${why}the embedded model ${endpoint.model} answers\n`);
    // A cached model was verified when it was downloaded; a file of the user's is checked here.
    if (ref.kind === 'file') await ensureModelFile(ref, env);
    return;
  }
  // Said once the hub has answered: offline, the run ends in its one line saying the hub is out of reach.
  await ensureModelFile(ref, env, () =>
    writeErr(
      `[models] ${why}meta-agent runs the embedded model ${endpoint.model}. First use downloads it${sizeNote(endpoint.model)} into ${modelsDir(env)}, once; an interrupted download resumes.\n` +
        `[models] ${USE_A_SERVER}\n`,
    ),
  );
}

/** Why the full-screen view does not fetch an embedded model, and how to get it. */
function notFetched(endpoints: ResolvedEndpoints): UserError {
  const [first] = localEndpoints(endpoints);
  const model = first?.model ?? DEFAULT_LOCAL_MODEL.ref;
  return new UserError(
    `the embedded model ${model} is not downloaded yet, and the full-screen view cannot show its download`,
    2,
    `\`meta-agent models pull${model === DEFAULT_LOCAL_MODEL.ref ? '' : ` ${model}`}\` fetches it${sizeNote(model)}, as does running once with --no-tui; ${USE_A_SERVER}`,
  );
}
