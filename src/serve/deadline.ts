/**
 * A request's deadline (`--deadline`): work that takes longer is answered 504 and goes on; what it
 * leaves (a turn's reply, a pass's report) is then at the URL the answer names, also as `Location`.
 */
import { Interrupted, untilAborted } from '../interrupt.js';
import type { ServeContext } from './context.js';
import { ApiError } from './errors.js';

/** `work`'s result, or a 504 once the deadline passes; `what` names the work, `where` its result. */
export async function withinDeadline<T>(
  ctx: Pick<ServeContext, 'limits'>,
  work: Promise<T>,
  what: string,
  where: string,
): Promise<T> {
  try {
    return await untilAborted(work, AbortSignal.timeout(ctx.limits.deadlineMs));
  } catch (error) {
    if (!(error instanceof Interrupted)) throw error;
    throw new ApiError(
      504,
      `${what} took longer than ${ctx.limits.deadlineMs / 1000}s; it goes on, and what it gives will be at GET ${where}`,
      'deadline_exceeded',
      undefined,
      { Location: where },
    );
  }
}
