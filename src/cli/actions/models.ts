/** What `meta-agent models …` does (declared in ../commands/models.ts), and the pull other commands reuse. */
import { constants } from 'node:fs';
import { access, stat } from 'node:fs/promises';
import { UserError } from '../../errors.js';
import { Interrupted } from '../../interrupt.js';
import { modelsDir } from '../../llm/local/cache-dir.js';
import {
  cachedModel,
  formatSize,
  pullModel,
  type CachedModel,
  type PullOptions,
} from '../../llm/local/download.js';
import {
  DEFAULT_LOCAL_MODEL,
  formatModelRef,
  parseModelRef,
  type HfModelRef,
  type ModelRef,
} from '../../llm/local/model-ref.js';
import { listCachedModels, removeCachedModel } from '../../llm/local/model-store.js';
import {
  RUNTIME_DOWNLOAD_SIZE,
  RUNTIME_PACKAGE,
  RUNTIME_VERSION,
  installRuntime,
  runtimeDir,
  runtimeInstalled,
} from '../../llm/local/runtime.js';
import { downloadProgress } from '../download-progress.js';
import { interruptOnSigint } from '../interrupt.js';
import { writeErr, writeOut } from '../terminal.js';

/** `models list`'s options as commander parses them. */
export interface ModelsListOptions {
  json?: boolean;
}

export async function listLocalModels(options: ModelsListOptions): Promise<void> {
  const models = await listCachedModels();
  const defaultCached = models.some((model) => model.ref === DEFAULT_LOCAL_MODEL.ref);
  if (options.json) {
    const summary = {
      cache: modelsDir(),
      models,
      default: { ...DEFAULT_LOCAL_MODEL, downloaded: defaultCached },
    };
    return void writeOut(`${JSON.stringify(summary, null, 2)}\n`);
  }
  if (models.length === 0) writeErr(`note: the model cache (${modelsDir()}) holds no model yet\n`);
  const refs = [...models.map((model) => model.ref), ...(defaultCached ? [] : [DEFAULT_LOCAL_MODEL.ref])];
  const refWidth = Math.max(...refs.map((ref) => ref.length));
  const sizes = models.map((model) => formatSize(model.size));
  const sizeWidth = Math.max(0, ...sizes.map((size) => size.length));
  const lines = models.map(
    (model, at) => `${model.ref.padEnd(refWidth)}  ${(sizes[at] ?? '').padStart(sizeWidth)}  ${model.path}`,
  );
  if (!defaultCached) {
    const missing = `not downloaded, ${DEFAULT_LOCAL_MODEL.approximateSize}; \`meta-agent models pull\` fetches it`;
    lines.push(`${DEFAULT_LOCAL_MODEL.ref.padEnd(refWidth)}  ${missing}`);
  }
  writeOut(`${lines.join('\n')}\n`);
}

export async function pullLocalModel(text: string): Promise<void> {
  const ref = hfRef(text, 'a .gguf file on disk needs no pull: pass --model local:PATH');
  const cached = await cachedModel(ref);
  if (cached) writeOut(`${cached.ref} is already in the cache: ${cached.path}\n`);
  else {
    const model = await pullWithProgress(ref, process.env);
    writeOut(`downloaded ${model.ref} (${formatSize(model.size)}, SHA-256 checked) to ${model.path}\n`);
  }
  // After a pull, the model runs without a network: the runtime comes with it.
  await ensureRuntime(process.env);
}

/** Installs the embedded model's runtime when it is missing, saying so first (it takes a few seconds). */
export async function ensureRuntime(env: NodeJS.ProcessEnv = process.env): Promise<void> {
  if (runtimeInstalled(env)) return;
  writeErr(
    `installing the embedded model's runtime (${RUNTIME_PACKAGE} ${RUNTIME_VERSION}, ${RUNTIME_DOWNLOAD_SIZE} from the npm registry) into ${runtimeDir(env)}; this happens once\n`,
  );
  await installRuntime(env);
}

export async function removeLocalModel(text: string): Promise<void> {
  const ref = hfRef(text, 'only downloaded models are in the cache; delete a file of your own yourself');
  const removed = await removeCachedModel(ref);
  if (!removed) {
    throw new UserError(
      `${formatModelRef(ref)} is not in the model cache (${modelsDir()})`,
      2,
      '`meta-agent models list` shows what is',
    );
  }
  writeOut(`removed ${removed.ref} (${formatSize(removed.size)}) from ${modelsDir()}\n`);
}

/**
 * The path of the GGUF file `ref` names, ready to load: a file on disk once it is found readable (else
 * a UserError, exit 2), a Hugging Face file once it is in the cache, downloaded first (progress on
 * stderr, Ctrl+C keeps what arrived and ends with exit 130) when it is not.
 */
export async function ensureModelFile(
  ref: ModelRef,
  env: NodeJS.ProcessEnv = process.env,
  onStart?: PullOptions['onStart'],
): Promise<string> {
  if (ref.kind === 'hf') return (await pullWithProgress(ref, env, onStart)).path;
  await checkReadable(ref.path);
  return ref.path;
}

/** The cached model, pulled with the progress display when it is not cached yet. */
async function pullWithProgress(
  ref: HfModelRef,
  env: NodeJS.ProcessEnv,
  onStart?: PullOptions['onStart'],
): Promise<CachedModel> {
  const text = formatModelRef(ref);
  const interrupt = interruptOnSigint();
  const progress = downloadProgress(`downloading ${text}`);
  try {
    return await pullModel(ref, {
      env,
      signal: interrupt.signal,
      onProgress: progress.update,
      ...(onStart && { onStart }),
    });
  } catch (error) {
    if (!(error instanceof Interrupted)) throw error;
    throw new UserError(
      `the download of ${text} was interrupted; what arrived is kept, and the next pull resumes it`,
      130,
      `meta-agent models pull ${text}`,
    );
  } finally {
    progress.end();
    interrupt.dispose();
  }
}

/** `text` as a Hugging Face reference; a path is refused with `pathHint`. */
function hfRef(text: string, pathHint: string): HfModelRef {
  const ref = parseModelRef(text);
  if (ref.kind === 'hf') return ref;
  throw new UserError(`"${text}" is not a Hugging Face reference (hf:OWNER/NAME/FILE.gguf)`, 2, pathHint);
}

async function checkReadable(path: string): Promise<void> {
  const problem = await fileProblem(path);
  if (problem === undefined) return;
  throw new UserError(
    `the model file ${path} cannot be used: ${problem}`,
    2,
    `give the path of a .gguf file, or a Hugging Face model such as ${DEFAULT_LOCAL_MODEL.ref}`,
  );
}

async function fileProblem(path: string): Promise<string | undefined> {
  try {
    if (!(await stat(path)).isFile()) return 'it is not a file';
    await access(path, constants.R_OK);
    return undefined;
  } catch (error) {
    const { code, message } = error as NodeJS.ErrnoException;
    if (code === 'ENOENT') return 'there is no such file';
    return code === 'EACCES' ? 'permission denied' : message;
  }
}
