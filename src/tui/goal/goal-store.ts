/**
 * The goal view's state outside React: the event fold (view-state.ts), the question the loop is waiting
 * on, and the one-line notice. It subscribes to the bus as soon as it is created, so no event emitted
 * between mounting the view and React's first effect is lost, and it is the run's `Approver`: `ask`
 * shows the question and resolves when the view calls `answer`.
 */
import type { ApprovalRequest, Approver } from '../../autonomous/goal-loop.js';
import type { Approval } from '../../autonomous/authorize.js';
import type { RunState } from '../../autonomous/run-state.js';
import type { EventBus } from '../../events.js';
import { initialGoalView, reduceGoalView, type GoalView } from './view-state.js';
import { shownArgs, untrusted, type ShownArg } from './shown-text.js';

/** A question on screen: the command and why it is asked. */
export interface ShownRequest {
  step: number;
  command: string;
  args: ShownArg[];
  reason: string;
}

/** Everything the goal view draws. */
export interface GoalScreen {
  view: GoalView;
  /** The command waiting for the user's answer. */
  asking?: ShownRequest;
  /** A one-line notice from the CLI (after the first Ctrl+C). */
  notice?: string;
  /** The run is over: nothing more is asked. */
  closed: boolean;
  /** When the view was mounted, and the run's elapsed time then (a resumed run's earlier sessions). */
  startedAt: number;
  elapsedBefore: number;
}

export interface GoalStore {
  getState(): GoalScreen;
  subscribe(listener: () => void): () => void;
  /** Asks the user through the view; resolves with their answer, rejects when `signal` aborts. */
  readonly approver: Approver;
  /** The user's answer to the question on screen; ignored when none is. */
  answer(approval: Approval): void;
  notice(text: string): void;
  /** The run ended: stop asking (a question still open is rejected). */
  close(): void;
  /** Stops listening to the bus. */
  dispose(): void;
}

export interface GoalStoreOptions {
  /** The run as it is before the loop starts: its header, a resumed run's steps, its spend. */
  state?: RunState;
  /** Milliseconds, for the elapsed clock; default `Date.now`. */
  now?: () => number;
}

/** Creates the store and subscribes it to `bus`. */
export function createGoalStore(bus: EventBus, options: GoalStoreOptions = {}): GoalStore {
  const now = options.now ?? Date.now;
  let screen: GoalScreen = {
    view: initialGoalView(options.state),
    closed: false,
    startedAt: now(),
    elapsedBefore: options.state?.used.elapsedMs ?? 0,
  };
  const listeners = new Set<() => void>();
  let pending: { resolve: (approval: Approval) => void; reject: (reason: unknown) => void } | undefined;

  const set = (next: GoalScreen): void => {
    if (next === screen) return;
    screen = next;
    for (const listener of listeners) listener();
  };
  const clearQuestion = (): void => {
    pending = undefined;
    const { asking: _asked, ...rest } = screen;
    set(rest);
  };
  const unsubscribe = bus.on((event) => {
    const view = reduceGoalView(screen.view, event);
    if (view !== screen.view) set({ ...screen, view });
  });

  const approver: Approver = {
    ask(request: ApprovalRequest, signal: AbortSignal): Promise<Approval> {
      if (screen.closed) return Promise.reject(new Error('the run view is closed: nobody can answer'));
      if (signal.aborted) return Promise.reject(signal.reason);
      // One question at a time: a new one replaces one nobody answered.
      pending?.reject(new Error('a newer question replaced this one'));
      return new Promise<Approval>((resolve, reject) => {
        const onAbort = () => {
          clearQuestion();
          reject(signal.reason);
        };
        signal.addEventListener('abort', onAbort, { once: true });
        const settle = () => signal.removeEventListener('abort', onAbort);
        pending = {
          resolve: (approval) => {
            settle();
            resolve(approval);
          },
          reject: (reason) => {
            settle();
            reject(reason);
          },
        };
        set({
          ...screen,
          asking: {
            step: request.step,
            command: untrusted(request.command, 200),
            args: shownArgs(request.args),
            reason: untrusted(request.reason, 500),
          },
        });
      });
    },
  };

  return {
    getState: () => screen,
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    approver,
    answer(approval) {
      const question = pending;
      if (!question) return;
      // The answer acts on what the notice announced (the next command is asked): it is done with.
      const { notice: _said, ...rest } = screen;
      screen = rest;
      clearQuestion();
      question.resolve(approval);
    },
    notice(text) {
      set({ ...screen, notice: untrusted(text, 300) });
    },
    close() {
      const question = pending;
      if (question) {
        clearQuestion();
        question.reject(new Error('the run ended before the question was answered'));
      }
      set({ ...screen, closed: true });
    },
    dispose: unsubscribe,
  };
}
