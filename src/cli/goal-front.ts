/**
 * A goal run's front end in the terminal, whoever carries the loop (this process from a run file, or a
 * durable workflow in it): the run view in a terminal (it answers the run's questions), one line per
 * step in a pipe, or JSON events; Ctrl+C once asks before the next command, twice stops the run; then
 * the summary, where to continue the run, and the exit code.
 */
import { spendOf } from '../autonomous/budget.js';
import type { GoalLoop, Approver } from '../autonomous/goal-loop.js';
import type { RunState } from '../autonomous/run-state.js';
import type { EventBus } from '../events.js';
import { printEvents } from './chat-lines.js';
import { continueAdvice } from './continue-run.js';
import { printGoalLines, runSummary } from './goal-lines.js';
import { stopOnCtrlC } from './interrupt.js';
import { writeErr, writeOut } from './terminal.js';

export interface FrontSetup {
  bus: EventBus;
  state: RunState;
  model: { modelName: string; answersFrom: 'model' | 'rules' };
  /** Where the run is kept, as the view and the first line say it. */
  keptIn: string;
  /** How the user names the run again, after `meta-agent run` (`--resume FILE`). */
  resume: string;
  json?: boolean;
  interactive: boolean;
  /** Everyone listens now: say what was held back until they did. */
  listening?(): void;
}

/** What the front end lends the loop. */
export interface Front {
  /** The run view's: present when a user can answer in this terminal. */
  approver?: Approver;
  /** Stops the run as the user's (Ctrl+C twice; once without the view). */
  signal: AbortSignal;
  /** Given the loop once it runs, for Ctrl+C once. */
  started(loop: GoalLoop): void;
  /** Tells the user something in the view. */
  notice(message: string): void;
}

/** Runs `carry` (the loop, to its end) with the front end, and reports how the run ended. */
export async function runInFront(
  setup: FrontSetup,
  carry: (front: Front) => Promise<RunState>,
): Promise<void> {
  const { bus, state, model, keptIn, resume, json, interactive } = setup;
  const stopPrinting = json
    ? printEvents(bus, (line) => writeOut(line))
    : interactive
      ? undefined
      : printGoalLines(bus, (line) => writeOut(line));
  writeErr(`[run] saving to ${keptIn} after every step\n`);
  const ui = interactive
    ? (await import('../tui/goal/index.js')).renderGoalUI({
        bus,
        state,
        model: model.modelName,
        scripted: model.answersFrom === 'rules',
        savedTo: keptIn,
      })
    : undefined;
  setup.listening?.();
  let loop: GoalLoop | undefined;
  // In the run view, Ctrl+C once asks before the next command and twice stops the run (saved at its last
  // phase) and exits 130. Without the view there is nobody to ask, so the first press stops it.
  const ctrlC = stopOnCtrlC({
    first: ui
      ? () => {
          loop?.interrupt();
          ui.notice('Ctrl+C: the next command will be asked for; press Ctrl+C again to save and exit');
        }
      : undefined,
    afterStop: 'wait',
  });
  try {
    const ended = await carry({
      ...(ui && { approver: ui.approver }),
      signal: ctrlC.signal,
      started: (given) => {
        loop = given;
      },
      notice: (message) => ui?.notice(message),
    });
    // The view's last frame stays on screen; the summary comes after it, as in a pipe.
    ui?.finish();
    ui?.unmount();
    if (!json) writeOut(`${runSummary(ended.ended, spendOf(ended, ended.used.elapsedMs))}\n`);
    if (ended.ended?.reason !== 'task_complete') writeErr(`[run] ${continueAdvice(ended, resume)}\n`);
    process.exitCode = exitCodeOf(ended, ctrlC.signal.aborted);
  } catch (error) {
    writeErr(`[run] the run is saved; continue it with meta-agent run ${resume}\n`);
    throw error;
  } finally {
    ctrlC.dispose();
    ui?.unmount();
    stopPrinting?.();
  }
}

function exitCodeOf(state: RunState, interrupted: boolean): number {
  if (interrupted) return 130;
  const reason = state.ended?.reason;
  return reason === 'task_complete' || reason === 'user' ? 0 : 1;
}
