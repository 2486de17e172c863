/**
 * Finding model servers and their models: `GET /models` on an OpenAI-compatible endpoint, and a quick
 * probe of the ports local servers use by default, so meta-agent works with nothing configured when
 * Ollama or LM Studio is running. Both read the answer through guarded-fetch.ts, as model calls do.
 */
import { answerProgress } from './answer-progress.js';
import { connect } from 'node:net';
import { malformedResponse, toModelError } from './errors.js';
import { guardedFetch } from './guarded-fetch.js';
import { PLACEHOLDER_API_KEY } from './openai.js';
import { loadOpenAISdk, quietSdkLog } from './openai-sdk.js';
import { millisecondsFromEnv } from './timeouts.js';

/** Where local servers listen by default, in the order they are tried. */
export const DEFAULT_PROBE_URLS: readonly string[] = [
  'http://127.0.0.1:11434/v1', // Ollama
  'http://127.0.0.1:1234/v1', // LM Studio
];

/** How long a local probe waits: a server on loopback answers in milliseconds or not at all. */
const PROBE_TIMEOUT_MS = 800;

/**
 * Cap on a model list. Hosted services listing hundreds of models, descriptions and all, send well
 * under a megabyte; 4 MiB is room to spare, and little memory when a server sends something else.
 */
const MODEL_LIST_MAX_BYTES = 4 * 1024 * 1024;

export interface ListModelsOptions {
  apiKey?: string;
  /** Default: META_AGENT_TIMEOUT_MS, else 10 s. */
  timeoutMs?: number;
}

/** The model ids the server at `baseUrl` lists; failures are ModelErrors (no retries). */
export async function listModels(baseUrl: string, options: ListModelsOptions = {}): Promise<string[]> {
  const timeoutMs = options.timeoutMs ?? millisecondsFromEnv('META_AGENT_TIMEOUT_MS') ?? 10_000;
  const { default: Client } = await loadOpenAISdk();
  const client = new Client({
    baseURL: baseUrl,
    apiKey: options.apiKey || PLACEHOLDER_API_KEY,
    timeout: timeoutMs,
    maxRetries: 0,
    fetch: guardedFetch({ idleMs: timeoutMs, maxBytes: MODEL_LIST_MAX_BYTES, progress: answerProgress }),
    ...quietSdkLog(),
  });
  try {
    const page = await client.models.list();
    const ids = Array.isArray(page?.data) ? page.data.map((model) => model?.id) : undefined;
    if (!ids || !ids.every((id) => typeof id === 'string')) {
      throw malformedResponse(baseUrl, 'GET /models did not return a list of models');
    }
    return ids;
  } catch (error) {
    throw toModelError(error, { baseUrl, model: '(listing models)', timeoutMs, maxRetries: 0 });
  }
}

/** A local server that answered the probe. */
export interface ProbedServer {
  baseUrl: string;
  models: string[];
}

/** The probe URLs: META_AGENT_PROBE_URLS (comma-separated) or, when unset or empty, the defaults. */
export function probeUrls(env: NodeJS.ProcessEnv): string[] {
  const configured = env.META_AGENT_PROBE_URLS?.trim();
  if (!configured) return [...DEFAULT_PROBE_URLS];
  return configured
    .split(',')
    .map((url) => url.trim())
    .filter((url) => url !== '');
}

/** The first of `urls` (in order) whose server lists its models; all are asked at once. */
export async function probeLocalServers(urls: readonly string[]): Promise<ProbedServer | undefined> {
  const answers = await Promise.all(
    urls.map(async (baseUrl) => {
      const models = await probe(baseUrl);
      return models && { baseUrl, models };
    }),
  );
  return answers.find((answer) => answer !== undefined);
}

/**
 * The models the server at `baseUrl` lists, or undefined when it does not answer in time with a list.
 * A plain request, not the SDK's, and only once something listens there: most often nothing does, and
 * a command whose graph calls no model should not load the SDK, nor even fetch (tens of milliseconds
 * the first time), only to find that out.
 */
async function probe(baseUrl: string): Promise<string[] | undefined> {
  const signal = AbortSignal.timeout(PROBE_TIMEOUT_MS);
  try {
    const url = new URL(baseUrl);
    if (!(await listening(url, signal))) return undefined;
    const limited = guardedFetch({ idleMs: PROBE_TIMEOUT_MS, maxBytes: MODEL_LIST_MAX_BYTES });
    const response = await limited(`${baseUrl.replace(/\/+$/, '')}/models`, {
      headers: { authorization: `Bearer ${PLACEHOLDER_API_KEY}` },
      signal,
    });
    if (!response.ok) return undefined;
    const page = (await response.json()) as { data?: unknown } | null;
    const ids = Array.isArray(page?.data)
      ? page.data.map((model) => (model as { id?: unknown } | null)?.id)
      : undefined;
    return ids?.every((id): id is string => typeof id === 'string') ? ids : undefined;
  } catch {
    // Not answering, refusing, timing out or sending something else all mean: no server here.
    return undefined;
  }
}

/** Whether something accepts a connection at the URL's host and port before `signal` aborts. */
function listening(url: URL, signal: AbortSignal): Promise<boolean> {
  const port = Number(url.port) || (url.protocol === 'https:' ? 443 : 80);
  return new Promise((resolve) => {
    const socket = connect({ host: url.hostname.replace(/^\[(.*)\]$/, '$1'), port });
    const settle = (accepted: boolean) => {
      socket.destroy();
      signal.removeEventListener('abort', refuse);
      resolve(accepted);
    };
    const refuse = () => settle(false);
    signal.addEventListener('abort', refuse, { once: true });
    socket.once('connect', () => settle(true)).once('error', refuse);
  });
}
