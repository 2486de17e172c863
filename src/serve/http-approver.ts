/**
 * The goal loop's Approver for a run served over HTTP: a command the server's flags do not let run
 * waits here until its owner answers it (POST /v1/runs/ID/answer) with what a terminal user would type:
 * `y`, `y -N`, `n`, or feedback for the model. Nothing else lets it run: no answer, no command.
 *
 * When the server stops, a question still open is withdrawn: the loop saves the run where it stood
 * (the command unanswered, so it is asked again when the run goes on) instead of holding the shutdown.
 */
import { parseApproval, type Approval } from '../autonomous/authorize.js';
import type { ApprovalRequest, Approver } from '../autonomous/goal-loop.js';
import { ApiError } from './errors.js';

/** Thrown into the loop when the server stops while a command waits for its answer. */
export class ServerStopping extends Error {
  constructor() {
    super('the server stopped while the run waited for an answer; it is saved where it stood');
  }
}

/** The answer to an answer for a run that asks nothing now. */
export function notAwaiting(): ApiError {
  return new ApiError(
    409,
    'the run is not waiting for an answer; GET the run (or follow its events) to see when it asks',
    'run_not_awaiting',
    'answer',
  );
}

interface Question {
  request: ApprovalRequest;
  /** Ends the wait with an answer, or with why there will be none. */
  settle(outcome: { approval: Approval } | { error: Error }): void;
}

export class HttpApprover implements Approver {
  #open: Question | undefined;
  #stopped = false;

  /** The command waiting for an answer, if one is. */
  get awaiting(): ApprovalRequest | undefined {
    return this.#open?.request;
  }

  ask(request: ApprovalRequest, signal: AbortSignal): Promise<Approval> {
    if (this.#stopped) return Promise.reject(new ServerStopping());
    return new Promise<Approval>((resolve, reject) => {
      const question: Question = {
        request,
        settle: (outcome) => {
          signal.removeEventListener('abort', abort);
          if (this.#open === question) this.#open = undefined;
          if ('approval' in outcome) resolve(outcome.approval);
          else reject(outcome.error);
        },
      };
      const abort = () => question.settle({ error: signal.reason as Error });
      signal.addEventListener('abort', abort, { once: true });
      this.#open = question;
    });
  }

  /**
   * Answers the waiting command with what a user typed: `y`, `y -N`, `n`, or feedback (`a`, always,
   * lets the command run for the rest of this run only: a client cannot change what the server's user
   * allows). A 409 when nothing waits: the run is working, or has ended.
   */
  answer(text: string): Approval {
    if (!this.#open) throw notAwaiting();
    const approval = parseApproval(text);
    this.#open.settle({ approval });
    return approval;
  }

  /** Withdraws the open question, and any later one, with ServerStopping. */
  stop(): void {
    this.#stopped = true;
    this.#open?.settle({ error: new ServerStopping() });
  }
}
