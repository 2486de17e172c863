/**
 * A turn that failed, as the client is told: the agent's own failure (a node's error, a model that
 * cannot be reached) in its words, which name the node; one past the request's deadline as a 504 (the
 * turn goes on, and is kept); anything else as an internal error whose details go to the operator
 * only, since a stack trace is of no use to the client and may say too much.
 */
import { isUserError } from '../errors.js';
import type { ServeContext } from './context.js';
import type { LiveConversation, TurnResult } from './conversations.js';
import { withinDeadline } from './deadline.js';
import { ApiError } from './errors.js';

/** `turn`'s result, or the failure the client is told (see above). */
export function withDeadline(
  ctx: ServeContext,
  conversation: LiveConversation,
  turn: Promise<TurnResult>,
): Promise<TurnResult> {
  return withinDeadline(ctx, turn, 'the agent', `/v1/conversations/${conversation.id}`).catch(
    (error: unknown) => {
      throw turnFailure(error, ctx);
    },
  );
}

export function turnFailure(error: unknown, ctx: Pick<ServeContext, 'onProblem'>): ApiError {
  if (error instanceof ApiError) return error;
  if (isUserError(error)) return new ApiError(500, error.message, 'agent_failed');
  ctx.onProblem(error instanceof Error ? (error.stack ?? error.message) : String(error));
  return new ApiError(500, 'the server failed while answering; its log says why', 'internal_error');
}
