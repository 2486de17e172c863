/**
 * `fetch` with the limits a model server cannot be trusted to keep: a response body that stops
 * arriving, or sends only keep-alives, fails after an idle timeout, one larger than a cap fails once
 * the cap is passed (without holding more than the cap), and a redirect is followed only within the
 * origin the request went to, so a prompt and its API key never reach a server the user did not name.
 * The openai SDK takes it as its `fetch` (openai.ts, discovery.ts); what it refuses becomes a
 * ModelError in errors.ts.
 *
 * The wait for the response headers is the caller's to bound (the SDK's `timeout`, a probe's signal);
 * so is the total time of a call, which spans the SDK's retries (openai.ts).
 */

/**
 * Default cap on one response body. The longest answers current models give (some 128k output
 * tokens) come to about 0.5 MB as text, and about 25 MB as a stream, whose every token travels in a
 * JSON envelope of some 200 bytes; 32 MiB lets those through, and an embedding batch of several
 * hundred vectors, while a runaway server is stopped long before memory is in danger.
 */
export const DEFAULT_MAX_RESPONSE_BYTES = 32 * 1024 * 1024;

/** The longest delay a Node timer takes; a longer one fires at once. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/** Same-origin redirects followed for one request before it is refused. */
export const MAX_REDIRECTS = 5;

/** The limits put on each response. */
export interface FetchLimits {
  /** Longest silence allowed between two pieces of a response body, in milliseconds. */
  idleMs: number;
  /** Most bytes a response body may have (after decompression: what memory holds). */
  maxBytes: number;
  /**
   * Makes, for each response, the test of whether a piece of its body moves it on; pieces that do not
   * (keep-alives: see answer-progress.ts) do not reset the idle timeout. Default: every byte counts.
   */
  progress?: () => (chunk: Uint8Array) => boolean;
}

/** Which limit a response broke. */
export type ResponseLimit = 'stalled' | 'too-large';

/** A response body cut off for breaking a limit; errors.ts turns it into a ModelError. */
export class ResponseLimitError extends Error {
  override readonly name = 'ResponseLimitError';

  constructor(
    readonly limit: ResponseLimit,
    /** The limit's value: milliseconds for `stalled`, bytes for `too-large`. */
    readonly value: number,
    /** For `stalled`: bytes kept arriving meanwhile, none of them progress (keep-alives). */
    readonly keptAlive = false,
  ) {
    super(
      limit === 'stalled'
        ? `the response ${keptAlive ? 'sent only keep-alives' : 'stalled'} for ${value} ms`
        : `the response exceeded ${value} bytes`,
    );
  }
}

type Fetch = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

/**
 * A fetch that applies `limits` to every response, on top of `base` (the global fetch by default).
 * A redirect it will not follow (to another origin, one past MAX_REDIRECTS, or one that would need
 * to re-send a body it cannot replay) is returned as the 3xx response itself, its `location` made
 * absolute, so the caller sees an unsuccessful status and nothing was sent anywhere else.
 */
export function guardedFetch(limits: FetchLimits, base: Fetch = fetch): Fetch {
  return async (input, init = {}) => {
    const abort = new AbortController();
    const signal = init.signal ? AbortSignal.any([init.signal, abort.signal]) : abort.signal;
    const replayable = !(input instanceof Request) && (init.body == null || typeof init.body === 'string');
    let url = input instanceof Request ? input.url : String(input);
    let request: RequestInit = { ...init, signal, redirect: 'manual' };
    for (let redirects = 0; ; redirects++) {
      const response = await base(input instanceof Request ? input : url, request);
      const location = redirectTarget(response, url);
      if (location === undefined) return limitBody(response, limits, abort);
      await response.body?.cancel().catch(() => undefined);
      const sameOrigin = new URL(location).origin === new URL(url).origin;
      if (!sameOrigin || !replayable || redirects >= MAX_REDIRECTS) {
        return refusedRedirect(response, location);
      }
      request = redirectedRequest(request, response.status);
      url = location;
    }
  };
}

/** Where a 3xx response points, resolved against the URL it answered; undefined for any other. */
function redirectTarget(response: Response, url: string): string | undefined {
  if (response.status < 300 || response.status > 399) return undefined;
  const location = response.headers.get('location');
  if (location === null || !URL.canParse(location, url)) return undefined;
  return new URL(location, url).href;
}

/** The request a redirect asks for: as fetch does, 303 (and 301/302 after a POST) becomes a GET. */
function redirectedRequest(request: RequestInit, status: number): RequestInit {
  const method = (request.method ?? 'GET').toUpperCase();
  if (!(status === 303 && method !== 'HEAD') && !((status === 301 || status === 302) && method === 'POST')) {
    return request;
  }
  const headers = new Headers(request.headers);
  for (const name of ['content-type', 'content-length', 'content-encoding', 'content-language']) {
    headers.delete(name);
  }
  return { ...request, method: 'GET', body: null, headers };
}

/** The 3xx with only its (absolute) location: nothing in it, body or header, asks for more. */
function refusedRedirect(response: Response, location: string): Response {
  return new Response(null, {
    status: response.status,
    statusText: response.statusText,
    headers: { location },
  });
}

/** The response with its body read through the idle timeout and the byte cap. */
function limitBody(response: Response, limits: FetchLimits, abort: AbortController): Response {
  const source = response.body;
  if (!source) return response;
  const reader = source.getReader();
  const declared = Number(response.headers.get('content-length') ?? 0);
  const progressed = limits.progress?.() ?? (() => true);
  let received = 0;
  // When the body last moved on (counted from the read after the piece that did), and whether bytes
  // that did not move it on have arrived since.
  let quietSince: number | undefined;
  let keptAlive = false;
  let failure: ResponseLimitError | undefined;
  const fail = (error: ResponseLimitError): ResponseLimitError => {
    failure ??= error;
    abort.abort(failure);
    return failure;
  };
  const body = new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        if (declared > limits.maxBytes) throw fail(new ResponseLimitError('too-large', limits.maxBytes));
        // Only a read in progress is timed: a consumer that is slow to ask is not a silent server.
        quietSince ??= Date.now();
        const left = limits.idleMs - (Date.now() - quietSince);
        const stall = () => fail(new ResponseLimitError('stalled', limits.idleMs, keptAlive));
        if (left <= 0) throw stall();
        const stalled = setTimeout(stall, Math.min(left, MAX_TIMER_MS));
        try {
          const { done, value } = await reader.read();
          if (done) return controller.close();
          received += value.byteLength;
          if (received > limits.maxBytes) throw fail(new ResponseLimitError('too-large', limits.maxBytes));
          if (progressed(value)) {
            quietSince = undefined;
            keptAlive = false;
          } else {
            keptAlive = true;
          }
          controller.enqueue(value);
        } catch (error) {
          throw failure ?? error;
        } finally {
          clearTimeout(stalled);
        }
      },
      cancel(reason) {
        return reader.cancel(reason);
      },
    },
    { highWaterMark: 0 },
  );
  const guarded = new Response(body, {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  });
  Object.defineProperty(guarded, 'url', { value: response.url });
  return guarded;
}
