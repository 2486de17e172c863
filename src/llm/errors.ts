/**
 * Turns what the openai SDK throws into one line a user can act on, with a hint. The kind stays on the
 * error so the layers above can react (structured output falls back to a plainer response format on a
 * rejected request) without parsing messages.
 */
import type { APIConnectionError, APIError } from 'openai';
import { UserError } from '../errors.js';
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
  | 'malformed';

/** A model call that failed in a way the user can fix or should know about. */
export class ModelError extends UserError {
  constructor(
    readonly kind: ModelErrorKind,
    message: string,
    hint?: string,
  ) {
    super(message, 1, hint);
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
    );
  }
  if (error instanceof NotFoundError) {
    return new ModelError(
      'unknown-model',
      `model "${model}" is not available at ${baseUrl} (404: unknown model, or the base URL lacks /v1)`,
      'run `meta-agent doctor` to list the models the server offers, then pass --model',
    );
  }
  if (error instanceof RateLimitError) {
    return new ModelError(
      'rate-limited',
      `the model server at ${baseUrl} is still rate-limiting${retries}: ${serverMessage(error)}`,
      'wait a minute and try again, or run fewer calls at once',
    );
  }
  if (error instanceof BadRequestError) {
    return new ModelError(
      'bad-request',
      `the model server at ${baseUrl} rejected the request for "${model}": ${serverMessage(error)}`,
      'the server may not support an option meta-agent sent; check its OpenAI compatibility',
    );
  }
  if (error instanceof APIError && typeof error.status === 'number' && error.status >= 500) {
    return new ModelError(
      'server',
      `the model server at ${baseUrl} failed (${error.status})${retries}: ${serverMessage(error)}`,
      'check the server log; try again later',
    );
  }
  if (error instanceof APIError && error.status === undefined) {
    // An `error` event inside a stream: the server started answering, then failed.
    return new ModelError(
      'server',
      `the model server at ${baseUrl} reported an error mid-response: ${serverMessage(error)}`,
      'check the server log; try again later',
    );
  }
  return undefined;
}

/** A response that does not have the shape the OpenAI protocol promises. */
export function malformedResponse(baseUrl: string, detail?: string): ModelError {
  return new ModelError(
    'malformed',
    `the model server at ${baseUrl} sent a malformed response${detail ? ` (${detail})` : ''}`,
    `check that ${baseUrl} speaks the OpenAI API (the base URL usually ends in /v1)`,
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
