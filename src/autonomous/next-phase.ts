/**
 * What the goal loop does next, as a pure decision (the split LangGraph.js makes between `algo` and
 * `loop`): from the run and what the loop knows of this process, the next phase. End because the user
 * stopped the run, ask the model for a step, drop or show a pending command, refuse it, ask the user
 * about it, authorize it, settle it as interrupted, or run it. No I/O, no events, no clock: goal-loop.ts
 * performs what this decides.
 */
import type { Authorization, GoalEndReason } from '../events.js';
import { SIDE_EFFECTS, type Command } from '../../tools/command.js';
import { checkArgs, type CommandRegistry } from '../../tools/registry.js';
import { decide, type Permissions } from './authorize.js';
import type { RunState } from './run-state.js';

/** Refusals in a row, with nobody to ask, that end a run. */
export const MAX_REFUSALS = 2;

/** What the loop knows besides the run. */
export interface LoopView {
  /** The user stopped the run (Ctrl+C twice). */
  stopped: boolean;
  /** The commands the run offers: the pending command is looked up here. */
  registry: Pick<CommandRegistry, 'get'>;
  permissions: Permissions;
  /** `interrupt()` was called (Ctrl+C once): the next command with an effect is asked for. */
  askNext: boolean;
  /** The step whose pending command this process has shown: it answered it, or checked it on resume. */
  shownStep: number | undefined;
  /**
   * The step whose pending command this process has checked or authorized and takes on to its end: a
   * stop is noticed once the command is settled, not half way through carrying it out.
   */
  carrying: number | undefined;
  /** Commands the countdown (`--continuous N`, `y -N`) let run in this process. */
  countdownRan: number;
}

/** The next phase of the run, with what performing it needs. */
export type Phase =
  /** The run ends. */
  | { kind: 'end'; reason: GoalEndReason; detail: string }
  /** No command is pending: ask the model for the next step. */
  | { kind: 'step' }
  /** The pending command cannot run: it goes into the history as refused, the model told `message`. */
  | { kind: 'drop'; message: string }
  /** A pending command from a run file, its arguments checked (`args`): shown before it is asked or run. */
  | { kind: 'show'; args: Record<string, unknown> }
  /** Nobody can be asked and nothing lets it run; `ends`: this refusal ends the run. */
  | { kind: 'refuse'; command: Command; reason: string; ends: boolean }
  /** The user is asked. */
  | { kind: 'ask'; command: Command; reason: string }
  /** It may run without asking. */
  | { kind: 'authorize'; command: Command; by: Authorization }
  /** It has a side effect and was running when the run stopped: it is never run again. */
  | { kind: 'interrupted'; command: Command }
  /** It runs (again, when it has no side effect and a stop cut it short). */
  | { kind: 'execute'; command: Command };

/** The phase that comes next for `state`. */
export function nextPhase(state: RunState, view: LoopView): Phase {
  const { pending } = state;
  const carrying = pending !== undefined && pending.step === view.carrying;
  if (view.stopped && !carrying)
    return { kind: 'end', reason: 'user', detail: 'the user stopped the run (Ctrl+C)' };
  if (!pending) return countdownSpent(state, view) ?? { kind: 'step' };
  const command = view.registry.get(pending.command.name);
  if (!command)
    return {
      kind: 'drop',
      message: `${pending.command.name} is not available in this run any more (it was resumed without what it needs). Choose another command.`,
    };
  // A pending command this process did not see answered comes from a run file: its arguments are
  // checked again, and shown before anything is asked or run, so the user sees what is at stake.
  if (view.shownStep !== pending.step) {
    const checked = checkArgs(command, pending.command.args);
    return checked.ok
      ? { kind: 'show', args: checked.args }
      : { kind: 'drop', message: `${command.name} was not run: ${checked.problem}` };
  }
  if (pending.phase === 'answered') return authorization(command, state, view);
  if (pending.phase === 'running' && SIDE_EFFECTS.has(command.effect))
    return { kind: 'interrupted', command };
  return { kind: 'execute', command };
}

/**
 * The end of a run whose countdown ran out with nobody to ask for more, as AutoGPT's continuous limit
 * ends its loop: another model call would only be answered with a command that cannot run.
 */
function countdownSpent(state: RunState, view: LoopView): Phase | undefined {
  if (view.countdownRan === 0 || state.continuousLeft > 0 || view.permissions.canAsk) return undefined;
  const commands = view.countdownRan === 1 ? 'the 1 command' : `the ${view.countdownRan} commands`;
  return {
    kind: 'end',
    reason: 'continuous_limit',
    detail: `${commands} --continuous allowed ${view.countdownRan === 1 ? 'has' : 'have'} run, and there is no terminal to ask for more`,
  };
}

/** Who lets an answered command run (authorize.ts), and Ctrl+C's say over it. */
function authorization(command: Command, state: RunState, view: LoopView): Phase {
  const decision = decide(command, state, view.permissions);
  switch (decision.kind) {
    case 'refuse':
      return {
        kind: 'refuse',
        command,
        reason: decision.reason,
        ends: state.refusedStreak + 1 >= MAX_REFUSALS,
      };
    case 'ask':
      return { kind: 'ask', command, reason: decision.reason };
    case 'run':
      return view.askNext && view.permissions.canAsk && command.effect !== 'none'
        ? { kind: 'ask', command, reason: 'you pressed Ctrl+C' }
        : { kind: 'authorize', command, by: decision.by };
  }
}
