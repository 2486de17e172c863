/**
 * The models in the cache, as their manifests describe them. A manifest (FILE.json beside the model
 * FILE) is written only once the file is complete and verified, so a model counts as cached when its
 * manifest is valid, names the reference its place in the cache belongs to, and gives the size the file
 * has. Whatever else lies in the folder (part files, a manifest edited by hand or by something else) is
 * not a model: it is skipped, never trusted. The cache's own small files are read only when they are
 * regular files (never through a symlink), and written by renaming a new file over whatever is there,
 * so a link planted at their names is replaced rather than written through.
 */
import { constants } from 'node:fs';
import { open, readdir, rm, rmdir, stat } from 'node:fs/promises';
import { dirname, join, sep } from 'node:path';
import { z } from 'zod';
import { UserError } from '../../errors.js';
import { replaceFile } from '../../write-file.js';
import { hfModelPath, modelsDir } from './cache-dir.js';
import { formatModelRef, parseModelRef, type HfModelRef } from './model-ref.js';

/** A model file in the cache, verified when it was downloaded. */
export interface CachedModel {
  /** Its reference, `hf:owner/name/file.gguf`. */
  ref: string;
  /** The file's absolute path. */
  path: string;
  /** Its size in bytes. */
  size: number;
  /** Its SHA-256, lowercase hex, as the hub gave it and the download matched. */
  sha256: string;
  /** When the download completed (ISO 8601). */
  downloadedAt: string;
}

const Manifest = z.object({
  ref: z.string(),
  size: z.number().int().nonnegative(),
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
  downloadedAt: z.string(),
});

/** Far more than a manifest needs: a larger file is not one, and is not read. */
const MANIFEST_MAX_BYTES = 64 * 1024;

/** The files a model's download leaves beside it: the bytes so far, and what they must come to. */
export function partPaths(modelPath: string): { part: string; record: string } {
  return { part: `${modelPath}.part`, record: `${modelPath}.part.json` };
}

/** The model cached at `modelPath` (a path hfModelPath gives), or undefined when it is not whole. */
export async function readCachedModel(
  modelPath: string,
  env: NodeJS.ProcessEnv = process.env,
): Promise<CachedModel | undefined> {
  const manifest = await readSmallJson(`${modelPath}.json`);
  const parsed = Manifest.safeParse(manifest);
  if (!parsed.success) return undefined;
  const ref = refOf(parsed.data.ref);
  if (!ref || hfModelPath(ref, env) !== modelPath) return undefined;
  const file = await stat(modelPath).catch(() => undefined);
  if (!file?.isFile() || file.size !== parsed.data.size) return undefined;
  return { ...parsed.data, path: modelPath };
}

/** Records `model` as complete: its manifest, written atomically beside it. */
export async function writeManifest(model: CachedModel): Promise<void> {
  const { ref, size, sha256, downloadedAt } = model;
  await replaceFile(
    `${model.path}.json`,
    `${JSON.stringify({ ref, size, sha256, downloadedAt }, null, 2)}\n`,
  );
}

/** Every model in the cache, by reference. */
export async function listCachedModels(env: NodeJS.ProcessEnv = process.env): Promise<CachedModel[]> {
  const root = join(modelsDir(env), 'hf');
  let entries;
  try {
    entries = await readdir(root, { recursive: true, withFileTypes: true });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw new UserError(
      `cannot read the model cache ${root}: ${(error as Error).message}`,
      2,
      'check its permissions, or set META_AGENT_CACHE_DIR to another folder',
    );
  }
  const manifests = entries.filter((entry) => entry.isFile() && entry.name.endsWith('.gguf.json'));
  const models = await Promise.all(
    manifests.map((entry) =>
      readCachedModel(join(entry.parentPath, entry.name.slice(0, -'.json'.length)), env),
    ),
  );
  return models
    .filter((model): model is CachedModel => model !== undefined)
    .sort((a, b) => a.ref.localeCompare(b.ref));
}

/**
 * Removes a model from the cache: the file, its manifest and any partial download of it, then the
 * folders left empty. Resolves to the model that was cached, or undefined when there was none (a
 * partial download is removed all the same).
 */
export async function removeCachedModel(
  ref: HfModelRef,
  env: NodeJS.ProcessEnv = process.env,
): Promise<CachedModel | undefined> {
  const path = hfModelPath(ref, env);
  const model = await readCachedModel(path, env);
  const { part, record } = partPaths(path);
  await Promise.all([path, `${path}.json`, part, record].map((file) => rm(file, { force: true })));
  const root = join(modelsDir(env), 'hf');
  for (let dir = dirname(path); dir.startsWith(`${root}${sep}`); dir = dirname(dir)) {
    if (
      !(await rmdir(dir).then(
        () => true,
        () => false,
      ))
    )
      break;
  }
  return model;
}

/** A reference read from a manifest, or undefined when it is not a valid hf reference. */
function refOf(text: string): HfModelRef | undefined {
  try {
    const ref = parseModelRef(text);
    return ref.kind === 'hf' && formatModelRef(ref) === text ? ref : undefined;
  } catch {
    return undefined;
  }
}

// Absent on Windows, where the checks on the opened file are what is left.
const NO_FOLLOW = constants.O_NOFOLLOW ?? 0;
const NO_BLOCK = constants.O_NONBLOCK ?? 0;

/**
 * The JSON value of a small file; undefined when it is missing, too large, not JSON, or not a regular
 * file (a symlink is not followed: what it points to is not the cache's).
 */
export async function readSmallJson(path: string): Promise<unknown> {
  const handle = await open(path, constants.O_RDONLY | NO_FOLLOW | NO_BLOCK).catch(() => undefined);
  if (!handle) return undefined;
  try {
    const found = await handle.stat();
    if (!found.isFile() || found.size > MANIFEST_MAX_BYTES) return undefined;
    return JSON.parse(await handle.readFile('utf8')) as unknown;
  } catch {
    return undefined;
  } finally {
    await handle.close();
  }
}
