/**
 * Errors as OpenAI's clients expect them: `{"error": {"message", "type", "param", "code"}}` with the
 * status that says what went wrong, so the `openai` SDKs raise their own typed errors (BadRequestError,
 * AuthenticationError, NotFoundError, ConflictError, RateLimitError, …) from our answers.
 */
import type { Context } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';

export type ApiStatus = 400 | 401 | 403 | 404 | 409 | 413 | 415 | 422 | 429 | 500 | 503 | 504;

/** OpenAI's `type` for each status we answer with. */
const TYPES: Record<ApiStatus, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found_error',
  409: 'conflict_error',
  413: 'invalid_request_error',
  415: 'invalid_request_error',
  422: 'invalid_request_error',
  429: 'rate_limit_error',
  500: 'server_error',
  503: 'server_error',
  504: 'timeout_error',
};

/** A request we refuse, or a turn that failed: answered as OpenAI answers errors. */
export class ApiError extends Error {
  constructor(
    readonly status: ApiStatus,
    message: string,
    /** A short machine-readable name: `model_not_found`, `conversation_busy`, … */
    readonly code: string,
    /** The request field at fault, when one is. */
    readonly param?: string,
    /** Extra response headers (Retry-After on 429 and 503). */
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

/** The body OpenAI's clients parse. */
export function errorBody(status: ApiStatus, message: string, code: string, param?: string) {
  return { error: { message, type: TYPES[status], param: param ?? null, code } };
}

/** Answers `error` in OpenAI's error shape. */
export function errorResponse(c: Context, error: ApiError): Response {
  for (const [name, value] of Object.entries(error.headers)) c.header(name, value);
  return c.json(
    errorBody(error.status, error.message, error.code, error.param),
    error.status as ContentfulStatusCode,
  );
}
