/**
 * A goal-run command's approval as a DBOS message, so that whoever answers (`meta-agent approve`, a
 * server's answer route) need not be the process that runs the loop, nor on its machine.
 *
 * Each question is a small workflow of its own, `approval:<run>:<step>`, whose whole body is one
 * `DBOS.recv`: a goal run resumes from the store, not by replaying its workflow, so its body cannot call
 * `recv` in an order DBOS could replay; a workflow per question can. The id names the question, so a
 * run that asks again after a restart waits on the same workflow, and an answer sent while nobody
 * waited (or recorded before the process died) is the one it gets. The question is started outside the
 * asking run's workflow (not as its child), for the same reason: a child is recorded in the run's
 * replayed order.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { DBOS, type GetWorkflowsInput, type WorkflowHandle, type WorkflowStatus } from '@dbos-inc/dbos-sdk';
import { parseApproval, type Approval } from '../autonomous/authorize.js';
import type { ApprovalRequest, Approver } from '../autonomous/goal-loop.js';
import { UserError } from '../errors.js';

/** The topic an answer is sent on. */
export const ANSWER_TOPIC = 'answer';

/** How long a question waits for its answer before the run stops asking (it stays saved, unanswered). */
export const ANSWER_WAIT_SECONDS = 7 * 24 * 3600;

const QUESTION = 'goal.approval';

/** The workflow a question waits in: the answer's text, or null when nobody answered in time. */
const question = DBOS.registerWorkflow(
  async (): Promise<string | null> => DBOS.recv<string>(ANSWER_TOPIC, ANSWER_WAIT_SECONDS),
  { name: QUESTION },
);

/** The workflow id of run `run`'s question about step `step`. */
export function questionId(run: string, step: number): string {
  return `approval:${run}:${step}`;
}

/**
 * Runs a function in the context this module was loaded in: outside any workflow, so a question
 * started from inside a run's workflow is not recorded as its child.
 */
const outsideWorkflows = AsyncLocalStorage.snapshot();

/** Thrown into the loop when a question's wait ends without an answer. */
export class NoAnswer extends Error {}

/** The Approver of a run whose answers come as messages; `awaiting` is its open question, for a view. */
export class DurableApprover implements Approver {
  readonly #run: string;
  #open: ApprovalRequest | undefined;
  readonly #stopper = new AbortController();

  constructor(run: string) {
    this.#run = run;
  }

  /** The command waiting for an answer, if one is. */
  get awaiting(): ApprovalRequest | undefined {
    return this.#open;
  }

  /** Withdraws the open question, and any later one, with `reason` (a server that stops). */
  stop(reason: Error): void {
    this.#stopper.abort(reason);
  }

  async ask(request: ApprovalRequest, given: AbortSignal): Promise<Approval> {
    const id = questionId(this.#run, request.step);
    const signal = AbortSignal.any([given, this.#stopper.signal]);
    signal.throwIfAborted();
    const handle = await outsideWorkflows(() => openQuestion(id));
    this.#open = request;
    let stop: (() => void) | undefined;
    const stopped = new Promise<never>((_, reject) => {
      stop = () => reject(signal.reason as Error);
      signal.addEventListener('abort', stop, { once: true });
    });
    try {
      const text = await Promise.race([handle.getResult(), stopped]);
      if (text === null)
        throw new NoAnswer(
          `nobody answered ${request.command} (step ${request.step}) in ${ANSWER_WAIT_SECONDS / 86400} days; the run is saved where it stood`,
        );
      return parseApproval(text);
    } catch (error) {
      // The run stops asking: its question is cancelled, so no process keeps waiting on it. The run
      // is saved at `answered`, and asks again when it goes on (openQuestion resumes this one).
      if (signal.aborted) await outsideWorkflows(() => DBOS.cancelWorkflow(id)).catch(() => undefined);
      throw error;
    } finally {
      signal.removeEventListener('abort', stop!);
      this.#open = undefined;
    }
  }
}

/** The question `id`: started, or the one started before (resumed when a stopped run cancelled it). */
async function openQuestion(id: string): Promise<WorkflowHandle<string | null>> {
  const status = await DBOS.getWorkflowStatus(id);
  if (status?.status === 'CANCELLED') return DBOS.resumeWorkflow<string | null>(id);
  return DBOS.startWorkflow(question, { workflowID: id })();
}

/** What answering needs of DBOS: the static `DBOS` in a launched process, or a `DBOSClient`. */
export interface AnswerSender {
  listWorkflows(input: GetWorkflowsInput): Promise<WorkflowStatus[]>;
  send<T>(destinationID: string, message: T, topic?: string): Promise<void>;
}

/** What an answer reached. */
export type AnswerOutcome =
  | { kind: 'sent'; step: number }
  /** The run has asked before, but nothing is open now. */
  | { kind: 'not-waiting' }
  /** No question of this run is known. */
  | { kind: 'unknown' };

/**
 * Sends `text` (`y`, `y -N`, `n` or feedback) to the open question of run `run` (its id), if it has
 * one. A second answer to the same question is sent too, and never read: the first one counts.
 */
export async function answerQuestion(
  sender: AnswerSender,
  run: string,
  text: string,
): Promise<AnswerOutcome> {
  if (text.trim() === '') throw new UserError('the answer is empty', 2, 'answer y, n, y -N, or feedback');
  const asked = await sender.listWorkflows({
    workflowName: QUESTION,
    workflow_id_prefix: `approval:${run}:`,
    loadInput: false,
    loadOutput: false,
  });
  const open = asked.filter((workflow) => workflow.status === 'PENDING' || workflow.status === 'ENQUEUED');
  if (open.length === 0) return { kind: asked.length > 0 ? 'not-waiting' : 'unknown' };
  const latest = open
    .map((workflow) => ({ id: workflow.workflowID, step: Number(workflow.workflowID.split(':').at(-1)) }))
    .sort((a, b) => b.step - a.step)[0]!;
  await sender.send(latest.id, text, ANSWER_TOPIC);
  return { kind: 'sent', step: latest.step };
}
