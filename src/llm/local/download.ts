/**
 * Downloading a GGUF model from the Hugging Face hub into the cache, as huggingface_hub does it: a HEAD
 * on the file's resolve URL gives its SHA-256 (the etag of a file kept with Git LFS), its size and
 * where its bytes are (a redirect, usually to a CDN). The bytes go to FILE.part, beside a record of the
 * SHA-256 and size they must come to, so an interrupted pull resumes with a Range request; the file
 * takes its name only once both match. HF_TOKEN goes to the hub alone, never to where it redirects.
 */
import { createHash, type Hash } from 'node:crypto';
import { constants } from 'node:fs';
import { lstat, mkdir, open, rename, rm, statfs, type FileHandle } from 'node:fs/promises';
import { dirname } from 'node:path';
import { z } from 'zod';
import { UserError } from '../../errors.js';
import { Interrupted } from '../../interrupt.js';
import { MAX_REDIRECTS, MAX_TIMER_MS, ResponseLimitError, guardedFetch } from '../guarded-fetch.js';
import { millisecondsFromEnv } from '../timeouts.js';
import { replaceFile } from '../../write-file.js';
import { hfModelPath, modelsDir } from './cache-dir.js';
import { formatModelRef, type HfModelRef } from './model-ref.js';
import { partPaths, readCachedModel, readSmallJson, writeManifest, type CachedModel } from './model-store.js';

export type { CachedModel } from './model-store.js';

/** The hub when HF_ENDPOINT does not name another (a mirror), as for huggingface_hub. */
const DEFAULT_HF_ENDPOINT = 'https://huggingface.co';

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
  /** Stops the download, keeping the part file for the next pull; pullModel then rejects with Interrupted. */
  signal?: AbortSignal;
}

/** What the hub says about a file. */
interface FileMetadata {
  sha256: string;
  size: number;
  /** Where its bytes are. */
  url: string;
}

/** One pull's dealings with the hub. */
interface Pull {
  hf: HfModelRef;
  /** Its text, for messages. */
  ref: string;
  endpoint: URL;
  token: string | undefined;
  idleMs: number;
  signal: AbortSignal | undefined;
  /** The models folder, for messages. */
  cache: string;
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
  const pull: Pull = {
    hf: ref,
    ref: formatModelRef(ref),
    endpoint: hubEndpoint(env),
    token: env.HF_TOKEN || undefined,
    idleMs: millisecondsFromEnv('META_AGENT_TIMEOUT_MS') ?? DEFAULT_IDLE_MS,
    signal: options.signal,
    cache: modelsDir(env),
  };
  try {
    const metadata = await fileMetadata(pull);
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

/** `1.1 GB`, `512 kB`: decimal units, as the hub shows sizes. */
export function formatSize(bytes: number): string {
  if (bytes >= 1e9) return `${(bytes / 1e9).toFixed(1)} GB`;
  if (bytes >= 1e6) return `${(bytes / 1e6).toFixed(1)} MB`;
  if (bytes >= 1e3) return `${Math.round(bytes / 1e3)} kB`;
  return `${bytes} B`;
}

function hubEndpoint(env: NodeJS.ProcessEnv): URL {
  const text = env.HF_ENDPOINT || DEFAULT_HF_ENDPOINT;
  const url = URL.canParse(text) ? new URL(text) : undefined;
  if (!url || (url.protocol !== 'https:' && url.protocol !== 'http:')) {
    throw new UserError(
      `HF_ENDPOINT is not an http(s) URL: "${text}"`,
      2,
      `for example ${DEFAULT_HF_ENDPOINT}`,
    );
  }
  return url;
}

/**
 * The file's SHA-256, size and download URL, from a HEAD that follows redirects on the hub itself (a
 * renamed repository) but stops at the one that carries the file's metadata.
 */
async function fileMetadata(pull: Pull): Promise<FileMetadata> {
  // The file on the main branch, as huggingface_hub asks for it.
  let url = `${pull.endpoint.href.replace(/\/+$/, '')}/${pull.hf.repo}/resolve/main/${pull.hf.file}`;
  for (let hops = 0; ; hops++) {
    const response = await send(pull, url, { method: 'HEAD' }, fetch);
    const location = redirectTarget(response, url);
    const linked = response.headers.get('x-linked-etag') !== null;
    if (location && !linked && new URL(location).origin === pull.endpoint.origin) {
      if (hops >= MAX_REDIRECTS) throw tooManyRedirects(pull, location);
      url = location;
      continue;
    }
    if (!response.ok && !location) throw hubRefused(pull, response.status);
    return metadataOf(pull, response.headers, location ?? url);
  }
}

function metadataOf(pull: Pull, headers: Headers, url: string): FileMetadata {
  const etag = (headers.get('x-linked-etag') ?? headers.get('etag') ?? '')
    .replace(/^W\//, '')
    .replaceAll('"', '');
  const sha256 = etag.toLowerCase();
  if (!/^[0-9a-f]{64}$/.test(sha256)) {
    throw new UserError(
      `${pull.ref} has no SHA-256 on the hub (it is not stored with Git LFS), so its download could not be checked; not downloading it`,
      2,
      'model files on the hub are LFS files: check the file name, or download the file yourself and pass its path',
    );
  }
  const sizeText = headers.get('x-linked-size') ?? headers.get('content-length') ?? '';
  const size = /^\d{1,16}$/.test(sizeText) ? Number(sizeText) : NaN;
  if (!Number.isSafeInteger(size)) {
    throw new UserError(
      `the hub did not say how large ${pull.ref} is; not downloading it`,
      1,
      'try again later',
    );
  }
  if (size === 0) {
    throw new UserError(
      `${pull.ref} is an empty file (0 bytes) on the hub, so it is not a model; not downloading it`,
      2,
      `check the file name; the files are listed at ${pull.endpoint.href.replace(/\/+$/, '')}/${pull.hf.repo}/tree/main`,
    );
  }
  return { sha256, size, url };
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
  const hash = createHash('sha256');
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

/** The response with the file's bytes from `start` (206), or all of them (200), redirects followed. */
async function getBytes(pull: Pull, metadata: FileMetadata, start: number): Promise<Response> {
  const fetcher = guardedFetch({ idleMs: pull.idleMs, maxBytes: metadata.size });
  const headers: Record<string, string> = start > 0 ? { range: `bytes=${start}-` } : {};
  let url = metadata.url;
  for (let hops = 0; ; hops++) {
    const response = await send(pull, url, { method: 'GET', headers }, fetcher);
    const location = redirectTarget(response, url);
    if (location) {
      if (hops >= MAX_REDIRECTS) throw tooManyRedirects(pull, location);
      url = location;
      continue;
    }
    const resumed = response.status === 206 && start > 0 && contentRangeStart(response) === start;
    if (response.status === 200 || resumed) return response;
    await response.body?.cancel().catch(() => undefined);
    throw new UserError(
      `the download of ${pull.ref} failed: ${new URL(url).host} answered ${response.status}`,
      1,
      'try again later; what was downloaded so far is kept',
    );
  }
}

/**
 * One request: to https anywhere, or to the hub's own origin (a local mirror may speak plain http);
 * HF_TOKEN only to the hub; the wait for the response headers bounded. A failure before any answer
 * means the host cannot be reached.
 */
async function send(
  pull: Pull,
  url: string,
  init: RequestInit,
  fetcher: (url: string, init: RequestInit) => Promise<Response>,
): Promise<Response> {
  const target = new URL(url);
  const onHub = target.origin === pull.endpoint.origin;
  if (target.protocol !== 'https:' && !onHub) {
    throw new UserError(
      `the hub sent the download of ${pull.ref} to ${target.origin}, which is not https; not following it`,
      1,
      'check HF_ENDPOINT: a mirror must redirect to https, or serve the files itself',
    );
  }
  const headers = new Headers(init.headers);
  if (pull.token && onHub) headers.set('authorization', `Bearer ${pull.token}`);
  const timer = new AbortController();
  const timeout = setTimeout(() => timer.abort(), Math.min(pull.idleMs, MAX_TIMER_MS));
  const signal = pull.signal ? AbortSignal.any([pull.signal, timer.signal]) : timer.signal;
  try {
    return await fetcher(target.href, { ...init, headers, signal, redirect: 'manual' });
  } catch (error) {
    if (pull.signal?.aborted) throw error;
    const why = timer.signal.aborted ? `no answer in ${pull.idleMs / 1000} s` : errorCode(error);
    throw new UserError(
      `cannot download ${pull.ref}: ${target.host} cannot be reached${why ? ` (${why})` : ''}, and the model is not in the cache (${pull.cache})`,
      2,
      'connect to the internet once, or copy a .gguf file here and pass --model local:PATH, or use a model server (--base-url URL)',
    );
  } finally {
    clearTimeout(timeout);
  }
}

/** Where a 3xx response points, made absolute; undefined for any other response. */
function redirectTarget(response: Response, url: string): string | undefined {
  const location = response.headers.get('location');
  if (response.status < 300 || response.status > 399 || location === null) return undefined;
  return URL.canParse(location, url) ? new URL(location, url).href : undefined;
}

/** The first byte a 206 holds, from `Content-Range: bytes START-END/TOTAL`. */
function contentRangeStart(response: Response): number | undefined {
  const match = /^bytes (\d+)-/.exec(response.headers.get('content-range') ?? '');
  return match ? Number(match[1]) : undefined;
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

function hubRefused(pull: Pull, status: number): UserError {
  const repo = `${pull.endpoint.href.replace(/\/+$/, '')}/${pull.hf.repo}`;
  if (status === 404) {
    return new UserError(
      `no such file on the hub: ${pull.ref}`,
      2,
      `check the owner, repository and file name; the files are listed at ${repo}/tree/main`,
    );
  }
  if (status === 401 || status === 403) {
    return new UserError(
      `the hub refused ${pull.ref} (${status}): the repository is private or gated, or does not exist`,
      2,
      pull.token
        ? `HF_TOKEN was sent: check that its account may read ${repo} (a gated model asks you to accept its terms there)`
        : `set HF_TOKEN to an access token (${pull.endpoint.origin}/settings/tokens) of an account that may read it`,
    );
  }
  return new UserError(`the hub answered ${status} for ${pull.ref}`, 1, 'try again later');
}

function tooManyRedirects(pull: Pull, location: string): UserError {
  return new UserError(
    `the download of ${pull.ref} was redirected more than ${MAX_REDIRECTS} times (last to ${new URL(location).host}); not following`,
    1,
    'try again later',
  );
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

/** The system error code (ECONNREFUSED, ENOTFOUND, …) somewhere down the `cause` chain fetch builds. */
function errorCode(error: unknown): string | undefined {
  for (let current = error, depth = 0; current && typeof current === 'object' && depth < 6; depth++) {
    const { code, errors, cause } = current as { code?: unknown; errors?: unknown[]; cause?: unknown };
    if (typeof code === 'string') return code;
    // A refused dual-stack connect is an AggregateError of one error per address.
    current = Array.isArray(errors) && errors.length > 0 ? errors[0] : cause;
  }
  return undefined;
}
