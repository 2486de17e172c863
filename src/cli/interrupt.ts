/**
 * Ctrl+C for the commands that do long model work (`design`, `simulate`): the first one aborts the
 * signal, so the command can stop and keep what it has; a second one ends the process at once, as
 * Node does by default.
 */

/** An AbortSignal that SIGINT aborts, until `dispose()`; `interrupt()` aborts it too (the view's quit key). */
export function interruptOnSigint(): { signal: AbortSignal; interrupt: () => void; dispose: () => void } {
  const controller = new AbortController();
  const interrupt = () => controller.abort();
  process.once('SIGINT', interrupt);
  return { signal: controller.signal, interrupt, dispose: () => process.off('SIGINT', interrupt) };
}
