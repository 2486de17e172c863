/**
 * Downloading a GGUF model from the Hugging Face hub into the cache, as huggingface_hub does it: a HEAD
 * on the file's resolve URL gives its SHA-256 (the etag of a file kept with Git LFS), its size and
 * where its bytes are (a redirect, usually to a CDN). The bytes go to FILE.part, beside a record of the
 * SHA-256 and size they must come to, so an interrupted pull resumes with a Range request; the file
 * takes its name only once both match. The requests to the hub, and what its refusals mean, are in
 * hub.ts; this file keeps the part file, checks it and puts it in place.
 */
import type { Hash } from 'node:crypto';
import { constants } from 'node:fs';
import { lstat, mkdir, open, rename, rm, statfs, type FileHandle } from 'node:fs/promises';
import { dirname } from 'node:path';
import { z } from 'zod';
import { UserError } from '../../errors.js';
import { Interrupted } from '../../interrupt.js';
import { nodeCrypto } from '../../lazy-crypto.js';
import { ResponseLimitError } from '../guarded-fetch.js';
import { millisecondsFromEnv } from '../timeouts.js';
import { replaceFile } from '../../write-file.js';
import { hfModelPath, modelsDir } from './cache-dir.js';
import { errorCode, fileMetadata, getBytes, hubEndpoint, type FileMetadata, type Pull } from './hub.js';
import { formatModelRef, type HfModelRef } from './model-ref.js';
import { partPaths, readCachedModel, readSmallJson, writeManifest, type CachedModel } from './model-store.js';

export type { CachedModel } from './model-store.js';

/** Longest wait for the hub to answer, or for the next bytes of a download, unless META_AGENT_TIMEOUT_MS says. */
const DEFAULT_IDLE_MS = 60_000;

/**
 * The slowest a download may go, averaged over each idle wait (a minute unless META_AGENT_TIMEOUT_MS
 * says): the idle timeout alone lets a server that sends a byte a second hold a pull for years.
 */
export const MIN_BYTES_PER_SECOND = 1024;

// A planted symlink at the part file must be discarded, not followed (see openPart).
const NO_FOLLOW = constants.O_NOFOLLOW ?? 0;
const NO_BLOCK = constants.O_NONBLOCK ?? 0;

/** How far a download has come, reported as bytes arrive. */
export interface DownloadProgress {
  /** Bytes of the file on disk, those kept from an earlier pull included. */
  received: number;
  /** The file's size. */
  total: number;
  /** Bytes kept from an earlier, interrupted pull (0 when this one started from nothing). */
  resumedFrom: number;
}

export interface PullOptions {
  /** Where HF_ENDPOINT, HF_TOKEN and the cache folder's variables are read. Default: process.env. */
  env?: NodeJS.ProcessEnv;
  onProgress?: (progress: DownloadProgress) => void;
  /**
   * Called once the hub has said the file is there, before any of its bytes arrive: what is said of a
   * download is said only when one starts, not on the way to an error that the hub cannot be reached.
   */
  onStart?: (size: number) => void;
  /** Stops the download, keeping the part file for the next pull; pullModel then rejects with Interrupted. */
  signal?: AbortSignal;
}

const PartRecord = z.object({ sha256: z.string(), size: z.number() });

/** What the cache holds for `ref`, without going to the network; undefined when it is not there whole. */
export function cachedModel(
  ref: HfModelRef,
  env: NodeJS.ProcessEnv = process.env,
): Promise<CachedModel | undefined> {
  return readCachedModel(hfModelPath(ref, env), env);
}

/**
 * The cached model for `ref`, downloaded first when it is not in the cache yet (resuming what an earlier
 * pull left). Failures are UserErrors: exit 2 when the hub cannot be reached or has no such file, 1
 * when the download failed (what arrived is kept unless it was corrupt).
 */
export async function pullModel(ref: HfModelRef, options: PullOptions = {}): Promise<CachedModel> {
  const env = options.env ?? process.env;
  const path = hfModelPath(ref, env);
  const cached = await readCachedModel(path, env);
  if (cached) return cached;
  const pull = pullOf(ref, env, options.signal);
  try {
    const metadata = await fileMetadata(pull);
    options.onStart?.(metadata.size);
    await mkdir(dirname(path), { recursive: true });
    const part = await openPart(path, metadata);
    let sha256: string;
    try {
      await checkSpace(pull, dirname(path), metadata.size - part.kept);
      sha256 = await download(pull, metadata, path, part, options.onProgress);
      await moveIntoPlace(pull, path, part.handle);
    } finally {
      await part.handle.close();
    }
    const model = {
      ref: pull.ref,
      path,
      size: metadata.size,
      sha256,
      downloadedAt: new Date().toISOString(),
    };
    await writeManifest(model);
    await rm(partPaths(path).record, { force: true });
    return model;
  } catch (error) {
    if (options.signal?.aborted) throw new Interrupted();
    throw cacheError(error, pull);
  }
}

/**
 * The size of `ref` on the hub, asked as a pull would ask (one HEAD, nothing downloaded): a UserError
 * as pullModel's when the hub cannot be reached or refuses, so `doctor` can say what a first run would.
 */
export async function hubFileSize(ref: HfModelRef, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  return (await fileMetadata(pullOf(ref, env, undefined))).size;
}

function pullOf(ref: HfModelRef, env: NodeJS.ProcessEnv, signal: AbortSignal | undefined): Pull {
  return {
    hf: ref,
    ref: formatModelRef(ref),
    endpoint: hubEndpoint(env),
    token: env.HF_TOKEN || undefined,
    idleMs: millisecondsFromEnv('META_AGENT_TIMEOUT_MS') ?? DEFAULT_IDLE_MS,
    signal,
    cache: modelsDir(env),
  };
}

/** `1.1 GB`, `512 kB`: decimal units, as the hub shows sizes. */
export function formatSize(bytes: number): string {
  if (bytes >= 1e9) return `${(bytes / 1e9).toFixed(1)} GB`;
  if (bytes >= 1e6) return `${(bytes / 1e6).toFixed(1)} MB`;
  if (bytes >= 1e3) return `${Math.round(bytes / 1e3)} kB`;
  return `${bytes} B`;
}

/** The part file, open for reading and writing, and how many of its bytes this download keeps. */
interface Part {
  handle: FileHandle;
  kept: number;
}

/**
 * The part file for this download: the one an earlier pull left, with all its bytes, when the record
 * beside it expects the same file; else a new, empty one beside a new record. Whatever is at the part
 * path that is not a regular file of its own (a symlink, a hard link, a folder, a FIFO) is discarded
 * and never followed, so no planted link makes a pull write the hub's bytes elsewhere. Checked on the
 * opened file, so nothing swapped in after the check is written to either.
 */
async function openPart(path: string, metadata: FileMetadata): Promise<Part> {
  const { part, record } = partPaths(path);
  const expected = PartRecord.safeParse(await readSmallJson(record));
  const found = await openOwnFile(part);
  if (found) {
    const { size } = await found.stat();
    if (
      expected.success &&
      expected.data.sha256 === metadata.sha256 &&
      expected.data.size === metadata.size &&
      size <= metadata.size
    ) {
      return { handle: found, kept: size };
    }
    await found.close();
  }
  await rm(part, { recursive: true, force: true });
  await replaceFile(record, `${JSON.stringify({ sha256: metadata.sha256, size: metadata.size })}\n`);
  const flags = constants.O_RDWR | constants.O_CREAT | constants.O_EXCL | NO_FOLLOW;
  return { handle: await open(part, flags, 0o644), kept: 0 };
}

/**
 * `file` opened for reading and writing when it is a regular file with no other hard link; undefined
 * when there is nothing there, or something else, which the caller then removes (rm never follows).
 */
async function openOwnFile(file: string): Promise<FileHandle | undefined> {
  let handle: FileHandle;
  try {
    handle = await open(file, constants.O_RDWR | NO_FOLLOW | NO_BLOCK);
  } catch (error) {
    // ELOOP (EMLINK on the BSDs): a symlink; EISDIR: a folder; ENXIO: a socket.
    if (['ENOENT', 'ELOOP', 'EISDIR', 'ENXIO', 'EMLINK'].includes(errorCode(error) ?? '')) return undefined;
    throw error;
  }
  const stats = await handle.stat();
  if (stats.isFile() && stats.nlink === 1) return handle;
  await handle.close();
  return undefined;
}

/**
 * Renames the verified part file to the model's name, and makes sure what took the name is the file
 * that was downloaded and checked (not something swapped in at the part path meanwhile).
 */
async function moveIntoPlace(pull: Pull, path: string, handle: FileHandle): Promise<void> {
  await rename(partPaths(path).part, path);
  const [moved, downloaded] = await Promise.all([lstat(path), handle.stat()]);
  if (moved.ino !== downloaded.ino || moved.dev !== downloaded.dev) {
    await rm(path, { recursive: true, force: true });
    throw corrupt(pull, 'its part file was replaced while it was being checked');
  }
}

/**
 * Whether `needed` more bytes fit in `dir`. Nothing to fit (a resumed pull that has every byte) is
 * never refused; neither is a file system that reports no size at all (some network and FUSE ones
 * say 0 blocks), where the writes themselves will tell.
 */
async function checkSpace(pull: Pull, dir: string, needed: number): Promise<void> {
  if (needed <= 0) return;
  const { bavail, bsize, blocks } = await statfs(dir);
  if (blocks === 0) return;
  const free = bavail * bsize;
  if (free < needed) {
    throw new UserError(
      `not enough disk space for ${pull.ref}: it needs ${formatSize(needed)} and ${dir} has ${formatSize(free)} free`,
      1,
      'free some space, or set META_AGENT_CACHE_DIR to a folder on a disk with room',
    );
  }
}

/**
 * Downloads the bytes the part file lacks (all of them when the server ignores the Range) and checks
 * the whole; resolves to its SHA-256. A corrupt download is deleted; an interrupted one is kept.
 */
async function download(
  pull: Pull,
  metadata: FileMetadata,
  path: string,
  { handle: file, kept }: Part,
  onProgress: PullOptions['onProgress'],
): Promise<string> {
  const { part, record } = partPaths(path);
  const hash = nodeCrypto().createHash('sha256');
  if (kept < metadata.size) {
    const response = await getBytes(pull, metadata, kept);
    // A server that ignores the Range sends the whole file: it replaces the part.
    const start = response.status === 206 ? kept : 0;
    if (start > 0) await hashFile(pull, file, start, hash);
    else await file.truncate(0);
    let received: number;
    try {
      const to = { file, hash, start, total: metadata.size, windowMs: pull.idleMs, onProgress };
      received = await writeBody(response, to);
    } catch (error) {
      if (!(error instanceof ResponseLimitError && error.limit === 'too-large'))
        throw cutOff(pull, error, part);
      await rm(part, { force: true });
      throw corrupt(pull, `it came to more than the ${metadata.size} bytes the hub gave`);
    }
    if (received < metadata.size) throw cutOff(pull, undefined, part);
  } else {
    await hashFile(pull, file, kept, hash);
  }
  const sha256 = hash.digest('hex');
  if (sha256 !== metadata.sha256) {
    await Promise.all([rm(part, { force: true }), rm(record, { force: true })]);
    throw corrupt(pull, `its SHA-256 is ${sha256}, the hub gave ${metadata.sha256}`);
  }
  return sha256;
}

/** A download slower than MIN_BYTES_PER_SECOND over a whole window: stopped, what arrived kept. */
class TooSlow extends Error {
  override readonly name = 'TooSlow';

  constructor(
    readonly bytes: number,
    readonly ms: number,
  ) {
    super(`${bytes} bytes in ${ms} ms`);
  }
}

interface BodyTarget {
  file: FileHandle;
  hash: Hash;
  /** Where in the file the body's first byte goes. */
  start: number;
  total: number;
  /** How long the rate is averaged over before MIN_BYTES_PER_SECOND is enforced. */
  windowMs: number;
  onProgress: PullOptions['onProgress'];
}

/**
 * Writes a response's body to the part file and the hash, reporting progress; resolves to the bytes the
 * part then holds. More than `total` is a ResponseLimitError, as guarded-fetch.ts raises it; less than
 * MIN_BYTES_PER_SECOND over a window is TooSlow.
 */
async function writeBody(response: Response, to: BodyTarget): Promise<number> {
  const { file, hash, start, total, onProgress } = to;
  let received = start;
  let window = { since: Date.now(), from: received };
  onProgress?.({ received, total, resumedFrom: start });
  for await (const chunk of response.body ?? []) {
    if (received + chunk.byteLength > total) throw new ResponseLimitError('too-large', total);
    hash.update(chunk);
    await file.write(chunk, 0, chunk.byteLength, received);
    received += chunk.byteLength;
    onProgress?.({ received, total, resumedFrom: start });
    const ms = Date.now() - window.since;
    if (ms < to.windowMs || received === total) continue;
    const bytes = received - window.from;
    if ((bytes * 1000) / ms < MIN_BYTES_PER_SECOND) throw new TooSlow(bytes, ms);
    window = { since: Date.now(), from: received };
  }
  return received;
}

/** Hashes the first `length` bytes of the part file. */
async function hashFile(pull: Pull, file: FileHandle, length: number, hash: Hash): Promise<void> {
  const buffer = Buffer.allocUnsafe(1024 * 1024);
  for (let position = 0; position < length;) {
    const { bytesRead } = await file.read(buffer, 0, Math.min(buffer.length, length - position), position);
    // Only another process cutting the file short meanwhile (a second pull of the same model) gets here.
    if (bytesRead === 0) {
      throw new UserError(
        `the download of ${pull.ref} stopped: its part file shrank to ${position} bytes while it was read`,
        1,
        'is another pull of the same model running? Pull it again once that one is done',
      );
    }
    hash.update(buffer.subarray(0, bytesRead));
    position += bytesRead;
  }
}

/** A download that stopped before its end; the part file stays for the next pull to resume. */
function cutOff(pull: Pull, error: unknown, part: string): UserError {
  const waited = error instanceof ResponseLimitError || error instanceof TooSlow;
  return new UserError(
    `the download of ${pull.ref} stopped: ${stopReason(error)}`,
    1,
    `what arrived is kept in ${part}; \`meta-agent models pull ${pull.ref}\` resumes it` +
      (waited ? ' (META_AGENT_TIMEOUT_MS sets the wait, in milliseconds)' : ''),
  );
}

function stopReason(error: unknown): string {
  if (error instanceof ResponseLimitError) return `no data for ${error.value / 1000} s`;
  if (error instanceof TooSlow) {
    return `only ${formatSize(error.bytes)} arrived in ${(error.ms / 1000).toFixed(1)} s, under the ${formatSize(MIN_BYTES_PER_SECOND)}/s a download must keep up`;
  }
  return `the connection closed${errorCode(error) ? ` (${errorCode(error)})` : ''}`;
}

function corrupt(pull: Pull, why: string): UserError {
  return new UserError(
    `the download of ${pull.ref} was corrupt (${why}); it was deleted`,
    1,
    'pull it again; if it fails again, the hub or a proxy between is serving a damaged file',
  );
}

/** A file system failure as a UserError naming the cache; anything else as it is. */
function cacheError(error: unknown, pull: Pull): unknown {
  const code = errorCode(error);
  if (error instanceof UserError || !code || !(error instanceof Error && 'syscall' in error)) return error;
  const full = code === 'ENOSPC' || code === 'EDQUOT';
  return new UserError(
    `cannot write ${pull.ref} into the model cache ${pull.cache}: ${error.message}`,
    full ? 1 : 2,
    full
      ? 'free some space, or set META_AGENT_CACHE_DIR to a folder on a disk with room'
      : 'set META_AGENT_CACHE_DIR to a folder you can write to',
  );
}
