/**
 * The goal loop's hold on its run value: the time the run has taken (this session's and before it),
 * and what the phases of a step do to the run: tell the model something, move the pending command into
 * the history, save, end. The loop (goal-loop.ts) and its model step (model-step.ts) share one.
 */
import type { EventBus, FileTouch, GoalEndReason } from '../events.js';
import { spendOf } from './budget.js';
import type { HistoryEntry, PendingCommand, RunState } from './run-state.js';

/** Thrown inside the loop to end the run; caught once in `GoalLoop.run`. */
export class RunEnded extends Error {}

/** What a pending command becomes in the history. */
export type Settlement =
  | { kind: 'refused'; message: string }
  | { kind: 'interrupted' }
  | { kind: 'command'; ok: boolean; output: string; files: FileTouch[] };

export class RunBook {
  readonly state: RunState;
  readonly events: EventBus;
  readonly #save: (state: RunState) => Promise<void>;
  readonly #clock: () => number;
  #sessionStart = 0;
  #elapsedBefore = 0;

  constructor(
    state: RunState,
    events: EventBus,
    save: (state: RunState) => Promise<void>,
    clock: () => number,
  ) {
    this.state = state;
    this.events = events;
    this.#save = save;
    this.#clock = clock;
  }

  /** Starts this session's time: the run's elapsed time goes on from what the run file says. */
  open(): void {
    this.#sessionStart = this.#clock();
    this.#elapsedBefore = this.state.used.elapsedMs;
  }

  /** Milliseconds the run has taken, this session's included. */
  elapsed(): number {
    return this.#elapsedBefore + (this.#clock() - this.#sessionStart);
  }

  emitSpend(): void {
    this.events.emit({ type: 'goal.spend', ...spendOf(this.state, this.elapsed()) });
  }

  /** Tells the model (in the history) and the user (as a warning) something between steps. */
  notice(kind: 'loop' | 'budget' | 'resume', message: string): void {
    const step = this.state.used.steps;
    this.state.history.push({ kind: 'notice', step, text: message });
    this.events.emit({ type: 'goal.warning', step, kind, message });
  }

  /** Moves the pending command into the history as `entry` and saves (unless the caller saves next). */
  async settle(pending: PendingCommand, entry: Settlement, save = true): Promise<void> {
    const { step, thoughts, command } = pending;
    this.state.history.push({ ...entry, step, thoughts, command } as HistoryEntry);
    delete this.state.pending;
    if (save) await this.save();
  }

  async save(): Promise<void> {
    this.state.used.elapsedMs = Math.round(this.elapsed());
    await this.#save(this.state);
  }

  async end(reason: GoalEndReason, detail: string): Promise<void> {
    this.state.ended = { reason, detail };
    await this.save();
  }

  /** Ends the run from inside a phase; `GoalLoop.run` catches what this returns when thrown, and saves. */
  endNow(reason: GoalEndReason, detail: string): RunEnded {
    this.state.ended = { reason, detail };
    return new RunEnded(detail);
  }
}

/** `text`, cut to `max` characters with a line saying how much was cut. */
export function cap(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}\n… (${text.length - max} more characters cut)`;
}
