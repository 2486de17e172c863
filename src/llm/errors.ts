/**
 * Turns what the openai SDK throws, and what guarded-fetch.ts refuses, into one line a user can act on,
 * with a hint. The kind stays on the error so the layers above can react (structured output falls back
 * to a plainer response format on a rejected request) without parsing messages.
 */
import type { APIConnectionError, APIError } from 'openai';
import { UserError } from '../errors.js';
import { MAX_REDIRECTS, ResponseLimitError } from './guarded-fetch.js';
import { loadedOpenAISdk, type OpenAISdk } from './openai-sdk.js';

export type ModelErrorKind =
  | 'auth'
  | 'unreachable'
  | 'connection'
  | 'unknown-model'
  | 'rate-limited'
  | 'timeout'
  | 'server'
  | 'bad-request'
  | 'malformed'
  | 'too-large'
  | 'redirect';

/** What the server itself said, for a failure it reported with an HTTP status. */
export interface ServerReport {
  /** The HTTP status it answered with. */
  status?: number;
  /** The first line of its error message, as it wrote it. */
  serverMessage?: string;
}

/** A model call that failed in a way the user can fix or should know about. */
export class ModelError extends UserError {
  /** The HTTP status, when the server answered with one. */
  readonly status?: number;
  /** The server's own message (first line), when it sent one; `message` is ours. */
  readonly serverMessage?: string;

  constructor(
    readonly kind: ModelErrorKind,
    message: string,
    hint?: string,
    report: ServerReport = {},
  ) {
    super(message, 1, hint);
    if (report.status !== undefined) this.status = report.status;
    if (report.serverMessage !== undefined) this.serverMessage = report.serverMessage;
  }
}

/** Where the failing call went, for the message. */
export interface ModelCallContext {
  baseUrl: string;
  model: string;
  timeoutMs: number;
  maxRetries: number;
}

const CONNECTION_REFUSED = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH']);

/**
 * Maps an SDK failure to a ModelError. Aborts (the caller cancelled) and anything unrecognised are
 * returned unchanged: they are not the server's fault and must keep their identity.
 */
export function toModelError(error: unknown, context: ModelCallContext): unknown {
  if (error instanceof ModelError) return error;
  const limit = causeOfType(error, ResponseLimitError);
  if (limit) return limitError(limit, context.baseUrl);
  const sdk = loadedOpenAISdk();
  const reported = sdk && fromSdk(error, context, sdk);
  if (reported !== undefined) return reported;
  if (error instanceof SyntaxError) return malformedResponse(context.baseUrl);
  if (isStreamInterrupted(error)) {
    return new ModelError(
      'connection',
      `the connection to the model server at ${context.baseUrl} dropped in the middle of a response`,
      'check the server log; try again',
    );
  }
  return error;
}

/**
 * The ModelError for a failure the SDK reported, or the error itself for an abort; undefined for an
 * error that is none of the SDK's.
 */
function fromSdk(error: unknown, context: ModelCallContext, sdk: OpenAISdk): unknown {
  const {
    APIConnectionError,
    APIConnectionTimeoutError,
    APIError,
    APIUserAbortError,
    AuthenticationError,
    BadRequestError,
    NotFoundError,
    PermissionDeniedError,
    RateLimitError,
    UnprocessableEntityError,
  } = sdk;
  if (error instanceof APIUserAbortError) return error;
  const { baseUrl, model } = context;
  const retries = retriesText(context.maxRetries);
  if (error instanceof APIConnectionTimeoutError) {
    return new ModelError(
      'timeout',
      `the model server at ${baseUrl} did not answer within ${formatSeconds(context.timeoutMs)}${retries}`,
      'raise META_AGENT_TIMEOUT_MS (milliseconds) or use a smaller or less busy model',
    );
  }
  if (error instanceof APIConnectionError) return connectionError(error, baseUrl);
  if (error instanceof AuthenticationError || error instanceof PermissionDeniedError) {
    return new ModelError(
      'auth',
      `the model server at ${baseUrl} rejected the API key (${error.status})`,
      'set OPENAI_API_KEY to a valid key for this server',
      reportOf(error),
    );
  }
  if (error instanceof NotFoundError) {
    return new ModelError(
      'unknown-model',
      `model "${model}" is not available at ${baseUrl} (404: unknown model, or the base URL lacks /v1)`,
      'run `meta-agent doctor` to list the models the server offers, then pass --model',
      reportOf(error),
    );
  }
  if (error instanceof RateLimitError) {
    return new ModelError(
      'rate-limited',
      `the model server at ${baseUrl} is still rate-limiting${retries}: ${serverMessage(error)}`,
      rateLimitAdvice(retryAfterMs(error.headers)),
      reportOf(error),
    );
  }
  if (error instanceof BadRequestError || error instanceof UnprocessableEntityError) {
    return new ModelError(
      'bad-request',
      `the model server at ${baseUrl} rejected the request for "${model}": ${serverMessage(error)}`,
      'the server may not support an option meta-agent sent; check its OpenAI compatibility',
      reportOf(error),
    );
  }
  if (
    error instanceof APIError &&
    typeof error.status === 'number' &&
    error.status >= 300 &&
    error.status < 400
  ) {
    return redirectError(error, baseUrl);
  }
  if (error instanceof APIError && typeof error.status === 'number' && error.status >= 500) {
    return new ModelError(
      'server',
      `the model server at ${baseUrl} failed (${error.status})${retries}: ${serverMessage(error)}`,
      'check the server log; try again later',
      reportOf(error),
    );
  }
  if (error instanceof APIError && error.status === undefined) {
    // An `error` event inside a stream: the server started answering, then failed.
    return new ModelError(
      'server',
      `the model server at ${baseUrl} reported an error mid-response: ${serverMessage(error)}`,
      'check the server log; try again later',
      reportOf(error),
    );
  }
  return undefined;
}

/** HTTP statuses a server rejecting `tools` answers with: llama.cpp says 500, OpenRouter 404. */
const TOOL_REJECTION_STATUSES = new Set([400, 404, 422, 500, 501]);
/** The part of a message that names tool calling. */
const NAMES_TOOLS =
  /\btools?\b|\btool[ _-]?(?:choice|call(?:ing|s)?|use)\b|\bfunctions?[ _-]?call(?:ing|s)?\b/i;
/** The part that says it is not available, or not without a server flag. */
const REFUSES =
  /support|not (?:allowed|permitted|enabled|available)|requires?\b|--jinja|--enable|cannot|can't|unrecognized|unknown/i;

/**
 * True when `error` is a server refusing the `tools` field itself (the server or model has no native
 * tool calling), as opposed to any other failure: the caller can then ask again without tools. Only an
 * explicit message counts (Ollama's `… does not support tools`, vLLM's `"auto" tool choice requires
 * --enable-auto-tool-choice …`, llama.cpp's `tools param requires --jinja flag`, OpenRouter's `No
 * endpoints found that support tool use`): a bare 400 is as often a request too long or malformed, and
 * dropping the tools would hide that.
 */
export function toolsUnsupported(error: unknown): boolean {
  if (!(error instanceof ModelError) || error.serverMessage === undefined) return false;
  if (error.status !== undefined && !TOOL_REJECTION_STATUSES.has(error.status)) return false;
  return NAMES_TOOLS.test(error.serverMessage) && REFUSES.test(error.serverMessage);
}

/** A response that does not have the shape the OpenAI protocol promises. */
export function malformedResponse(baseUrl: string, detail?: string): ModelError {
  return new ModelError(
    'malformed',
    `the model server at ${baseUrl} sent a malformed response${detail ? ` (${detail})` : ''}`,
    `check that ${baseUrl} speaks the OpenAI API (the base URL usually ends in /v1)`,
  );
}

/** A model call that outlived its deadline (META_AGENT_DEADLINE_MS), its retries included. */
export function deadlineExceeded(baseUrl: string, deadlineMs: number): ModelError {
  return new ModelError(
    'timeout',
    `the model server at ${baseUrl} did not finish answering within ${formatSeconds(deadlineMs)}, so the call was stopped`,
    'raise META_AGENT_DEADLINE_MS (milliseconds) for very long answers, or ask for a shorter one',
  );
}

function limitError(error: ResponseLimitError, baseUrl: string): ModelError {
  if (error.limit === 'stalled' && error.keptAlive) {
    return new ModelError(
      'timeout',
      `the model server at ${baseUrl} sent no part of an answer for ${formatSeconds(error.value)}, only keep-alives, so the call was stopped`,
      'check the server log; raise META_AGENT_TIMEOUT_MS (milliseconds) if the model is only slow to start',
    );
  }
  if (error.limit === 'stalled') {
    return new ModelError(
      'timeout',
      `the model server at ${baseUrl} stopped sending for ${formatSeconds(error.value)} in the middle of a response`,
      'check the server log; raise META_AGENT_TIMEOUT_MS (milliseconds) if it is only slow',
    );
  }
  return new ModelError(
    'too-large',
    `the model server at ${baseUrl} sent a response larger than ${formatBytes(error.value)}; it was cut off`,
    'the model may be repeating itself endlessly: ask for a shorter answer (max tokens) or check the server',
  );
}

/**
 * A 3xx the SDK saw: guarded-fetch.ts hands one back only when it will not follow it (another origin,
 * too many redirects, no usable location), and the request has then gone nowhere else.
 */
function redirectError(error: APIError, baseUrl: string): ModelError {
  const location = error.headers?.get('location') ?? '';
  const origin = (url: string) => (URL.canParse(url) ? new URL(url).origin : undefined);
  const target = origin(location);
  if (target !== undefined && target !== origin(baseUrl)) {
    return new ModelError(
      'redirect',
      `the model server at ${baseUrl} redirected to another origin (${location}); not following, so the prompt and key were not sent there`,
      'if you trust that server, point OPENAI_BASE_URL or --base-url at it directly',
    );
  }
  return new ModelError(
    'redirect',
    target === undefined
      ? `the model server at ${baseUrl} answered with a redirect (${error.status}) that cannot be followed`
      : `the model server at ${baseUrl} redirected more than ${MAX_REDIRECTS} times (last to ${location}); not following`,
    'check the base URL: it usually ends in /v1 and names the server itself, not a proxy in front of it',
  );
}

function connectionError(error: APIConnectionError, baseUrl: string): ModelError {
  const code = causeCode(error);
  if (code === undefined || CONNECTION_REFUSED.has(code)) {
    return new ModelError(
      'unreachable',
      `no model server answered at ${baseUrl}`,
      'start the server (for example `ollama serve`), or point OPENAI_BASE_URL or --base-url at one that runs',
    );
  }
  return new ModelError(
    'connection',
    `the connection to the model server at ${baseUrl} failed (${code})`,
    'check the server log; try again',
  );
}

/** The first error of class `type` down the `cause` chain (the SDK wraps what fetch throws). */
function causeOfType<T>(error: unknown, type: abstract new (...args: never[]) => T): T | undefined {
  for (let current = error, depth = 0; current && depth < 6; depth++) {
    if (current instanceof type) return current;
    if (typeof current !== 'object') return undefined;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

/** The system error code (ECONNREFUSED, UND_ERR_SOCKET, …) somewhere down the `cause` chain. */
function causeCode(error: unknown): string | undefined {
  for (let current = error, depth = 0; current && depth < 6; depth++) {
    if (typeof current !== 'object') return undefined;
    const { code, errors } = current as { code?: unknown; errors?: unknown };
    if (typeof code === 'string') return code;
    // Node reports a refused dual-stack connect as an AggregateError of one error per address.
    if (Array.isArray(errors) && errors.length > 0) return causeCode(errors[0]);
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

function isStreamInterrupted(error: unknown): boolean {
  const code = causeCode(error);
  return (
    code === 'UND_ERR_SOCKET' ||
    code === 'ECONNRESET' ||
    (error instanceof TypeError && /terminated/i.test(error.message))
  );
}

/**
 * How long a rate-limited server asked to wait: `retry-after-ms` (OpenAI's), else `retry-after` in
 * seconds or as an HTTP date; undefined when it said nothing usable, or nothing to wait.
 */
function retryAfterMs(headers: Headers | undefined, now = Date.now()): number | undefined {
  const ms = Number(headers?.get('retry-after-ms') ?? NaN);
  if (Number.isFinite(ms) && ms > 0) return ms;
  const text = headers?.get('retry-after')?.trim() ?? '';
  if (/^\d+(\.\d+)?$/.test(text)) return Number(text) > 0 ? Number(text) * 1000 : undefined;
  const date = Date.parse(text);
  return Number.isFinite(date) && date > now ? date - now : undefined;
}

/** What to do about a rate limit: wait (as long as the server asked, when it did), then look at why. */
function rateLimitAdvice(waitMs: number | undefined): string {
  const wait =
    waitMs === undefined
      ? 'wait a minute and try again'
      : `the server asked to wait ${formatWait(waitMs)} (Retry-After): try again after that`;
  return `${wait}; if it keeps happening, check the rate limits of your plan or account, or run fewer calls at once (design --concurrency)`;
}

/** `45 s`, `3 min`, `2 h`: a wait as a person reads it. */
function formatWait(ms: number): string {
  const seconds = Math.ceil(ms / 1000);
  if (seconds < 120) return `${seconds} s`;
  if (seconds < 7200) return `${Math.ceil(seconds / 60)} min`;
  return `${Math.ceil(seconds / 3600)} h`;
}

function reportOf(error: APIError): ServerReport {
  return {
    ...(typeof error.status === 'number' && { status: error.status }),
    serverMessage: serverMessage(error),
  };
}

function serverMessage(error: APIError): string {
  const body = error.error as { message?: unknown } | undefined;
  const text = typeof body?.message === 'string' ? body.message : error.message;
  return firstLine(text.replace(/^\d{3}\s+/, ''));
}

function firstLine(text: string): string {
  const line = text.split('\n', 1)[0] ?? '';
  return line.length > 200 ? `${line.slice(0, 200)}…` : line;
}

function retriesText(maxRetries: number): string {
  if (maxRetries === 0) return '';
  return ` after ${maxRetries} ${maxRetries === 1 ? 'retry' : 'retries'}`;
}

function formatSeconds(ms: number): string {
  const seconds = ms / 1000;
  return `${Number.isInteger(seconds) ? seconds : seconds.toFixed(1)} s`;
}

function formatBytes(bytes: number): string {
  for (const [unit, size] of [
    ['GiB', 2 ** 30],
    ['MiB', 2 ** 20],
    ['KiB', 2 ** 10],
  ] as const) {
    if (bytes >= size)
      return `${Number.isInteger(bytes / size) ? bytes / size : (bytes / size).toFixed(1)} ${unit}`;
  }
  return `${bytes} bytes`;
}
