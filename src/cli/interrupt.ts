/**
 * What Ctrl+C does, for every command that handles it: work that keeps what it has (`design`,
 * `simulate`, a memory import, a model pull) stops on the first press; work that saves as it goes
 * (`run`, `flow run`) stops and is given a moment to save before the process exits 130; and a process
 * that only waits for its child leaves Ctrl+C to the child.
 */

/**
 * How long work that saves as it goes may take to save once Ctrl+C has stopped it, before the process
 * exits 130 anyway.
 */
const EXIT_GRACE_MS = 3000;

/**
 * An AbortSignal that SIGINT aborts, until `dispose()`; `interrupt()` aborts it too (the view's quit key).
 * A second Ctrl+C ends the process at once, as Node does by default.
 */
export function interruptOnSigint(): { signal: AbortSignal; interrupt: () => void; dispose: () => void } {
  const controller = new AbortController();
  const interrupt = () => controller.abort();
  process.once('SIGINT', interrupt);
  return { signal: controller.signal, interrupt, dispose: () => process.off('SIGINT', interrupt) };
}

/** How `stopOnCtrlC` handles Ctrl+C. */
export interface StopOptions {
  /** What the first press does instead of stopping (the run view asks before the next command). */
  first?: () => void;
  /**
   * What a press does once the work is stopping: `exit` ends the process at once with 130; `wait` leaves
   * the work the rest of its grace to save.
   */
  afterStop: 'exit' | 'wait';
}

/**
 * Ctrl+C for work that saves as it goes: a press (the second, when `first` takes the first) stops it,
 * aborting `signal`, and the process exits 130 once the work has had EXIT_GRACE_MS to save, so a step
 * that does not stop cannot hold it. Until `dispose()`.
 */
export function stopOnCtrlC({ first, afterStop }: StopOptions): { signal: AbortSignal; dispose: () => void } {
  const controller = new AbortController();
  let presses = 0;
  const handler = () => {
    presses += 1;
    if (presses === 1 && first) return first();
    if (controller.signal.aborted) {
      if (afterStop === 'exit') process.exit(130);
      return;
    }
    controller.abort();
    setTimeout(() => process.exit(130), EXIT_GRACE_MS).unref();
  };
  process.on('SIGINT', handler);
  return { signal: controller.signal, dispose: () => process.off('SIGINT', handler) };
}

/**
 * Ctrl+C left to a child that runs the command on the same console (Windows), which gets it too and
 * decides what it does; this process only waits for the child to exit.
 */
export function leaveCtrlCToChild(): void {
  process.on('SIGINT', () => undefined);
}
