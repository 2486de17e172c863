/**
 * Which model, endpoint and key each role uses. Precedence, highest first:
 * per-role CLI flag > global CLI flag > per-role env (META_AGENT_<ROLE>_MODEL, _BASE_URL, _API_KEY) >
 * global env (META_AGENT_MODEL, OPENAI_BASE_URL, OPENAI_API_KEY) > the graph's `config.models` > defaults.
 * With no key and no base URL, a local server on its usual port is used when one answers, else the
 * embedded model (local/local-model.ts). A role whose model is `local` or `local:REF` (a GGUF path or
 * an `hf:` reference) uses the embedded model whatever the URLs say, so a server and the embedded
 * model can share the work, and `--provider local` sends every role there.
 * A graph file is untrusted: the URL it names gets no API key unless the user trusts that server
 * (META_AGENT_TRUSTED_URLS), since a shared graph must not be able to send the user's key anywhere.
 * The openai SDK (behind openai.ts and discovery.ts) loads only once an OpenAI-compatible endpoint is
 * used: a scripted run never loads it; nor does one on the embedded model, whose runtime loads with
 * its first call.
 */
import { UserError } from '../errors.js';
import { DEFAULT_LOCAL_MODEL, parseModelRef } from './local/model-ref.js';
import { createScriptedModels } from './scripted.js';
import { ROLES } from './types.js';
import type { LanguageModel, ModelRole, ModelSet } from './types.js';

export { ROLES };
export const OPENAI_BASE_URL = 'https://api.openai.com/v1';
export const DEFAULT_OPENAI_CHAT_MODEL = 'gpt-4o-mini';
export const DEFAULT_OPENAI_EMBEDDING_MODEL = 'text-embedding-3-small';

export type ModelProvider = 'openai' | 'scripted' | 'local';

/** A model name that picks the embedded model: `local` (the default GGUF) or `local:REF`. */
const LOCAL_PREFIX = /^local(?::|$)/;

/**
 * A graph file's own model choices (`config.models`), the lowest-priority settings. A flow file may add
 * chat roles of its own (`fast`, `reason`): they are resolved as the built-in chat roles are.
 */
export type GraphModelConfig = Partial<Record<string, { model?: string; baseUrl?: string }>>;

/** Settings from the command line (see cli/options.ts). */
export interface ModelFlags {
  provider?: ModelProvider;
  /** The scripted provider's rules file; implies `provider: 'scripted'`. */
  script?: string;
  /** Model for the chat roles (chatbot, classifier, userbot); the embedder keeps its own. */
  model?: string;
  baseUrl?: string;
  roleModels?: Partial<Record<ModelRole, string>>;
}

export interface ModelConfigInput {
  flags?: ModelFlags;
  /** Default `process.env`. */
  env?: NodeJS.ProcessEnv;
  graph?: GraphModelConfig;
  /**
   * Whether roles left with no server fall back to the embedded model (default true). Memory turns it
   * off: its embedder is optional, and words alone beat downloading a chat model to embed with.
   */
  embeddedFallback?: boolean;
}

/** Where one role's calls go, and why. */
export type ResolvedEndpoint = { model: string; source: string } & (
  | {
      provider: 'openai';
      baseUrl: string;
      apiKey?: string;
      /** The graph file, not the user, chose the URL. */
      urlFromGraph?: true;
      /** The variable whose key was not sent, because the URL came from the graph and is not trusted. */
      withheldKey?: string;
    }
  | { provider: 'scripted'; script: string }
  | {
      provider: 'local';
      /** The GGUF: an `hf:` reference or a file path, as named. */
      model: string;
      /** Chosen because no server was configured or found, not by the user. */
      automatic?: true;
    }
);

/** Every built-in role's endpoint; a flow's own roles, when it has some, are further keys. */
export type ResolvedEndpoints = Record<ModelRole, ResolvedEndpoint>;

export interface ResolvedModels {
  models: ModelSet;
  endpoints: ResolvedEndpoints;
  /** The model of every role, a flow file's own roles too (`fast`, `reason`), sharing `models`' objects. */
  roleModels?: Record<string, LanguageModel>;
}

/** Resolves the endpoints and builds the models (roles with identical settings share one object). */
export async function resolveModels(input: ModelConfigInput = {}): Promise<ResolvedModels> {
  const endpoints = await resolveEndpoints(input);
  const roleModels = await createRoleModels(endpoints);
  return { endpoints, models: pickRoles(roleModels), roleModels };
}

function pickRoles(models: Record<string, LanguageModel>): ModelSet {
  const { chatbot, classifier, userbot, embedder } = models;
  return { chatbot: chatbot!, classifier: classifier!, userbot: userbot!, embedder: embedder! };
}

interface Setting {
  value: string;
  source: string;
  /** Set by the graph file rather than by the user (flags, environment). */
  fromGraph?: boolean;
}

/** Applies the precedence, probes for a local server if nothing is configured, and fills in models. */
export async function resolveEndpoints(input: ModelConfigInput = {}): Promise<ResolvedEndpoints> {
  const flags = input.flags ?? {};
  const env = input.env ?? process.env;
  const fileRoles = Object.keys(input.graph ?? {}).filter((role) => !ROLES.includes(role as ModelRole));
  if (flags.provider === 'scripted' || (flags.script !== undefined && flags.provider === undefined)) {
    return scriptedEndpoints(flags.script, fileRoles);
  }
  if (flags.script !== undefined) {
    throw new UserError('--script only applies to --provider scripted', 2);
  }
  if (flags.provider === 'local' && flags.baseUrl !== undefined) {
    throw new UserError(
      '--base-url does not apply to --provider local',
      2,
      'name a GGUF with --model instead',
    );
  }

  const partial = [...ROLES, ...fileRoles].map((role) => {
    const ROLE = role.toUpperCase();
    const chatRole = role !== 'embedder';
    const model = first([
      [flags.roleModels?.[role as ModelRole], `--${role}-model`],
      [chatRole ? flags.model : undefined, '--model'],
      [env[`META_AGENT_${ROLE}_MODEL`], `META_AGENT_${ROLE}_MODEL`],
      [chatRole ? env.META_AGENT_MODEL : undefined, 'META_AGENT_MODEL'],
      [input.graph?.[role]?.model, `the graph's config.models.${role}`, true],
    ]);
    if (model?.fromGraph) checkGraphModel(model);
    const roleKey = `META_AGENT_${ROLE}_API_KEY`;
    const keyVariable = env[roleKey] ? roleKey : env.OPENAI_API_KEY ? 'OPENAI_API_KEY' : undefined;
    let apiKey = keyVariable ? env[keyVariable] : undefined;
    let baseUrl = first([
      [flags.baseUrl, '--base-url'],
      [env[`META_AGENT_${ROLE}_BASE_URL`], `META_AGENT_${ROLE}_BASE_URL`],
      [env.OPENAI_BASE_URL, 'OPENAI_BASE_URL'],
      [input.graph?.[role]?.baseUrl, `the graph's config.models.${role}`, true],
    ]);
    let withheldKey: string | undefined;
    if (baseUrl) {
      baseUrl = { ...baseUrl, value: checkedUrl(baseUrl) };
      if (apiKey && baseUrl.fromGraph && !trusted(baseUrl.value, env)) {
        withheldKey = keyVariable;
        apiKey = undefined;
      }
    } else if (apiKey) baseUrl = { value: OPENAI_BASE_URL, source: `OpenAI, as ${keyVariable} is set` };
    const local = flags.provider === 'local' || (model !== undefined && LOCAL_PREFIX.test(model.value));
    return { role, model, baseUrl, apiKey, withheldKey, local };
  });

  const endpoints: Record<string, ResolvedEndpoint> = {};
  const chatModel = partial.find((entry) => entry.role === 'chatbot')?.model;
  for (const entry of partial) {
    // An embedder not named otherwise embeds with the chatbot's GGUF, as on a local server.
    const model =
      entry.model ?? (entry.role === 'embedder' && flags.provider === 'local' ? chatModel : undefined);
    if (entry.local) endpoints[entry.role] = localEndpoint(model);
  }
  const listings = new Map<string, string[]>();
  const unplaced = partial.filter((entry) => !entry.local && !entry.baseUrl);
  if (unplaced.length > 0) {
    const { probeLocalServers, probeUrls } = await import('./discovery.js');
    const urls = probeUrls(env);
    const found = await probeLocalServers(urls);
    if (found) {
      listings.set(found.baseUrl, found.models);
      for (const entry of unplaced) {
        entry.baseUrl = { value: found.baseUrl, source: `the local server found at ${found.baseUrl}` };
      }
    } else {
      const named = unplaced.find((entry) => entry.model);
      if (input.embeddedFallback === false || flags.provider === 'openai' || named) {
        throw nothingConfigured(urls);
      }
      const why = urls.length > 0 ? `; none answered at ${urls.join(' or ')}` : '';
      for (const entry of unplaced) {
        endpoints[entry.role] = {
          provider: 'local',
          model: DEFAULT_LOCAL_MODEL.ref,
          automatic: true,
          source: `the embedded model, as no model server is configured${why}`,
        };
      }
    }
  }

  for (const { role, model, baseUrl, apiKey, withheldKey } of partial) {
    if (endpoints[role]) continue;
    const url = baseUrl as Setting;
    const chosen =
      model ?? (await defaultModel(role as ModelRole, url.value, apiKey, listings, endpoints.chatbot));
    endpoints[role] = {
      provider: 'openai',
      model: chosen.value,
      baseUrl: url.value,
      ...(apiKey ? { apiKey } : {}),
      ...(url.fromGraph ? { urlFromGraph: true } : {}),
      ...(withheldKey ? { withheldKey } : {}),
      source: `model from ${chosen.source}; URL from ${url.source}`,
    };
  }
  return endpoints as ResolvedEndpoints & Record<string, ResolvedEndpoint>;
}

/**
 * The embedded model a role's setting names: `local` alone is the default GGUF; `local:REF` (or, under
 * --provider local, REF alone) names one. Parsed here, so a bad reference fails before any work.
 */
function localEndpoint(setting: Setting | undefined): ResolvedEndpoint {
  const model = setting && namesGguf(setting) ? setting : undefined;
  const named = model?.value.replace(LOCAL_PREFIX, '') || DEFAULT_LOCAL_MODEL.ref;
  parseModelRef(named);
  return {
    provider: 'local',
    model: named,
    source: model ? `the embedded model from ${model.source}` : 'the embedded model',
  };
}

/**
 * Whether a setting names a GGUF under --provider local: one given by flag, or one that says so
 * (`local:…`, `hf:…`, `….gguf`). A server model's name in the environment or the graph (llama3.2,
 * gpt-4o-mini) is no file, so the default GGUF stands in for it.
 */
function namesGguf(setting: Setting): boolean {
  return setting.source.startsWith('--') || /^(local(:|$)|hf:)|\.gguf$/i.test(setting.value);
}

/** Builds one model per distinct endpoint and hands it to every role that uses it. */
export async function createModels(endpoints: ResolvedEndpoints): Promise<ModelSet> {
  return pickRoles(await createRoleModels(endpoints));
}

/**
 * A model for every role of `endpoints`, a flow's own roles too; roles with identical settings share
 * one model.
 */
export async function createRoleModels(
  endpoints: Record<string, ResolvedEndpoint>,
): Promise<Record<string, LanguageModel>> {
  const all = Object.values(endpoints);
  const scripted = all.find((endpoint) => endpoint.provider === 'scripted');
  if (scripted?.provider === 'scripted') {
    // A flow's own roles are chat roles: the script answers them as the chatbot.
    const set: Record<string, LanguageModel> = { ...(await createScriptedModels(scripted.script)) };
    return Object.fromEntries(Object.keys(endpoints).map((role) => [role, set[role] ?? set.chatbot!]));
  }
  const { OpenAIModel } = all.some((endpoint) => endpoint.provider === 'openai')
    ? await import('./openai.js')
    : { OpenAIModel: undefined };
  const { LocalModel } = all.some((endpoint) => endpoint.provider === 'local')
    ? await import('./local/local-model.js')
    : { LocalModel: undefined };
  const built = new Map<string, LanguageModel>();
  const modelFor = (endpoint: ResolvedEndpoint): LanguageModel => {
    if (endpoint.provider === 'scripted') throw new Error('mixed scripted and model endpoints');
    const key = JSON.stringify(
      endpoint.provider === 'local' ? [endpoint.model] : [endpoint.baseUrl, endpoint.model, endpoint.apiKey],
    );
    let model = built.get(key);
    if (!model) {
      model =
        endpoint.provider === 'local'
          ? new LocalModel!({ ref: parseModelRef(endpoint.model) })
          : new OpenAIModel!({ baseUrl: endpoint.baseUrl, model: endpoint.model, apiKey: endpoint.apiKey });
      built.set(key, model);
    }
    return model;
  };
  return Object.fromEntries(Object.entries(endpoints).map(([role, endpoint]) => [role, modelFor(endpoint)]));
}

function scriptedEndpoints(script: string | undefined, fileRoles: readonly string[]): ResolvedEndpoints {
  if (!script) {
    throw new UserError(
      '--provider scripted needs a rules file',
      2,
      'pass --script FILE (a JSON file of rules)',
    );
  }
  const endpoint: ResolvedEndpoint = {
    provider: 'scripted',
    model: 'scripted',
    script,
    source: `the script ${script}`,
  };
  const roles = [...ROLES, ...fileRoles].map((role) => [role, endpoint]);
  return Object.fromEntries(roles) as ResolvedEndpoints;
}

/**
 * The model a role uses when none is named: OpenAI's defaults on api.openai.com; elsewhere a model the
 * server lists, preferring an embedding model for the embedder and a chat model for the rest.
 */
async function defaultModel(
  role: ModelRole,
  baseUrl: string,
  apiKey: string | undefined,
  listings: Map<string, string[]>,
  chatbot: ResolvedEndpoint | undefined,
): Promise<Setting> {
  if (new URL(baseUrl).hostname === 'api.openai.com') {
    const value = role === 'embedder' ? DEFAULT_OPENAI_EMBEDDING_MODEL : DEFAULT_OPENAI_CHAT_MODEL;
    return { value, source: 'the default for OpenAI' };
  }
  const isEmbedding = (name: string) => /embed/i.test(name);
  const sameServerAsChatbot = chatbot?.provider === 'openai' && chatbot.baseUrl === baseUrl;
  if (role === 'embedder') {
    const embedding = listings.get(baseUrl)?.find(isEmbedding);
    if (embedding) return { value: embedding, source: `the embedding model listed by ${baseUrl}` };
    // Local servers embed with chat models too; asking the server only for this would make a
    // command fail on an embedder it may never use.
    if (sameServerAsChatbot) return { value: chatbot.model, source: "the chatbot's model" };
  }
  let models = listings.get(baseUrl);
  if (!models) {
    const { listModels } = await import('./discovery.js');
    models = await listModels(baseUrl, { apiKey });
    listings.set(baseUrl, models);
  }
  const value = models.find((name) => !isEmbedding(name)) ?? models[0];
  if (!value) {
    throw new UserError(
      `the model server at ${baseUrl} lists no models`,
      2,
      'load or pull a model there (for Ollama: `ollama pull llama3.2`), or name one with --model',
    );
  }
  return { value, source: `the first model listed by ${baseUrl}` };
}

/**
 * A graph file may ask for the embedded model (`local`) but not name a GGUF of its own: the file is
 * untrusted, and a model reference it chose would make meta-agent download and parse whatever file it
 * points to.
 */
function checkGraphModel(model: Setting): void {
  if (LOCAL_PREFIX.test(model.value) && model.value !== 'local') {
    throw new UserError(
      `${model.source} is "${model.value}": a graph file may ask for the embedded model ("local") but not name a GGUF`,
      2,
      'choose the GGUF yourself: --model local:REF, a per-role flag such as --classifier-model, or META_AGENT_MODEL',
    );
  }
}

function nothingConfigured(probed: readonly string[]): UserError {
  const tried = probed.length > 0 ? `, and no local server answered at ${probed.join(' or ')}` : '';
  return new UserError(
    `no model server is configured: set OPENAI_API_KEY (OpenAI) or OPENAI_BASE_URL (a local server)${tried}`,
    2,
    'alternatively pass --base-url URL and --model NAME, e.g. --base-url http://127.0.0.1:11434/v1 --model llama3.2 (Ollama)',
  );
}

function first(candidates: [string | undefined, string, fromGraph?: boolean][]): Setting | undefined {
  for (const [value, source, fromGraph] of candidates) {
    if (value !== undefined && value.trim() !== '')
      return { value: value.trim(), source, ...(fromGraph ? { fromGraph } : {}) };
  }
  return undefined;
}

/**
 * Whether the user trusts a server with their key: OpenAI itself, which the key was made for, or a
 * server whose origin META_AGENT_TRUSTED_URLS lists.
 */
function trusted(baseUrl: string, env: NodeJS.ProcessEnv): boolean {
  const origin = new URL(baseUrl).origin;
  if (origin === new URL(OPENAI_BASE_URL).origin) return true;
  const listed = (env.META_AGENT_TRUSTED_URLS ?? '').split(',').map((url) => url.trim());
  return listed.some((url) => URL.canParse(url) && new URL(url).origin === origin);
}

function checkedUrl(pick: Setting): string {
  const protocol = URL.canParse(pick.value) ? new URL(pick.value).protocol : undefined;
  if (protocol !== 'http:' && protocol !== 'https:') {
    throw new UserError(
      `${pick.source} is "${pick.value}", which is not an http(s) URL`,
      2,
      'use the server base URL, e.g. http://127.0.0.1:11434/v1',
    );
  }
  return pick.value.replace(/\/+$/, '');
}
