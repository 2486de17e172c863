/**
 * Readies the embedded model before a command's work starts, so nothing is downloaded in the middle
 * of a conversation or under the terminal UI: on first use it says what will happen (how much, to
 * where, and how to use a server instead), downloads the GGUF with its progress, and installs the
 * runtime. Later runs find both in the cache and say in one line which model answers.
 */
import type { ResolvedEndpoint, ResolvedEndpoints } from '../llm/config.js';
import { modelsDir } from '../llm/local/cache-dir.js';
import { cachedModel } from '../llm/local/download.js';
import { DEFAULT_LOCAL_MODEL, parseModelRef } from '../llm/local/model-ref.js';
import { ensureModelFile, ensureRuntime } from './actions/models.js';
import { writeErr } from './terminal.js';

/** How to use a server instead, for the first-use notice. */
export const USE_A_SERVER =
  'to use a model server instead, set OPENAI_API_KEY (OpenAI) or pass --base-url URL (Ollama, LM Studio, vLLM, llama.cpp server)';

type LocalEndpoint = Extract<ResolvedEndpoint, { provider: 'local' }>;

/** Downloads and installs what the endpoints' embedded models still lack, saying so first. */
export async function prepareLocalModels(
  endpoints: ResolvedEndpoints,
  env: NodeJS.ProcessEnv = process.env,
): Promise<void> {
  const local = new Map<string, LocalEndpoint>();
  for (const endpoint of Object.values(endpoints)) {
    if (endpoint.provider === 'local') local.set(endpoint.model, endpoint);
  }
  for (const endpoint of local.values()) await prepare(endpoint, env);
  if (local.size > 0) await ensureRuntime(env);
}

async function prepare(endpoint: LocalEndpoint, env: NodeJS.ProcessEnv): Promise<void> {
  const ref = parseModelRef(endpoint.model);
  const why = endpoint.automatic ? 'no model server is configured or answering, so ' : '';
  if (ref.kind === 'file' || (await cachedModel(ref, env))) {
    if (endpoint.automatic) writeErr(`[models] ${why}the embedded model ${endpoint.model} answers\n`);
    await ensureModelFile(ref, env);
    return;
  }
  const size = endpoint.model === DEFAULT_LOCAL_MODEL.ref ? ` (${DEFAULT_LOCAL_MODEL.approximateSize})` : '';
  writeErr(
    `[models] ${why}meta-agent runs the embedded model ${endpoint.model}. First use downloads it${size} into ${modelsDir(env)}, once; an interrupted download resumes.\n` +
      `[models] ${USE_A_SERVER}\n`,
  );
  await ensureModelFile(ref, env);
}
