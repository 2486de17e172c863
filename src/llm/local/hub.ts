/**
 * The Hugging Face hub's side of a pull, as huggingface_hub asks it: a HEAD on the file's resolve URL
 * for its SHA-256, size and where its bytes are, then a GET of those bytes (from an offset, to resume),
 * redirects followed by hand. Every request goes to https, or to the hub's own origin; HF_TOKEN goes to
 * the hub alone, never to where it redirects; each wait for an answer is bounded. What the hub's
 * refusals mean is said here, as UserErrors. download.ts does the rest: the part file, the check, the
 * cache.
 */
import { UserError } from '../../errors.js';
import { MAX_REDIRECTS, MAX_TIMER_MS, guardedFetch } from '../guarded-fetch.js';
import type { HfModelRef } from './model-ref.js';

/** The hub when HF_ENDPOINT does not name another (a mirror), as for huggingface_hub. */
const DEFAULT_HF_ENDPOINT = 'https://huggingface.co';

/** What the hub says about a file. */
export interface FileMetadata {
  sha256: string;
  size: number;
  /** Where its bytes are. */
  url: string;
}

/** One pull's dealings with the hub. */
export interface Pull {
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

/** The hub to pull from: HF_ENDPOINT (a mirror) when it is set, else huggingface.co. */
export function hubEndpoint(env: NodeJS.ProcessEnv): URL {
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
export async function fileMetadata(pull: Pull): Promise<FileMetadata> {
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

/** The response with the file's bytes from `start` (206), or all of them (200), redirects followed. */
export async function getBytes(pull: Pull, metadata: FileMetadata, start: number): Promise<Response> {
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

/** The system error code (ECONNREFUSED, ENOTFOUND, …) somewhere down the `cause` chain fetch builds. */
export function errorCode(error: unknown): string | undefined {
  for (let current = error, depth = 0; current && typeof current === 'object' && depth < 6; depth++) {
    const { code, errors, cause } = current as { code?: unknown; errors?: unknown[]; cause?: unknown };
    if (typeof code === 'string') return code;
    // A refused dual-stack connect is an AggregateError of one error per address.
    current = Array.isArray(errors) && errors.length > 0 ? errors[0] : cause;
  }
  return undefined;
}
