/**
 * A turn that failed, as the client is told: the agent's own failure (a node's error, a model that
 * cannot be reached) in its words, which name the node; anything else as an internal error whose
 * details go to the operator only, since a stack trace is of no use to the client and may say too much.
 */
import { isUserError } from '../errors.js';
import type { ServeContext } from './context.js';
import { ApiError } from './errors.js';

export function turnFailure(error: unknown, ctx: Pick<ServeContext, 'onProblem'>): ApiError {
  if (error instanceof ApiError) return error;
  if (isUserError(error)) return new ApiError(500, error.message, 'agent_failed');
  ctx.onProblem(error instanceof Error ? (error.stack ?? error.message) : String(error));
  return new ApiError(500, 'the server failed while answering; its log says why', 'internal_error');
}
