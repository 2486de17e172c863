/**
 * What code nodes print with `console.*`, for the commands that write plain lines (`chat` in a pipe,
 * `call`). It goes to stderr, so stdout keeps only the replies or the result a script reads.
 */
import type { EventBus } from '../events.js';

/** Writes each `code.log` event on `bus` as `[node] text`; returns a function that stops. */
export function printCodeLogs(bus: EventBus, write: (line: string) => void): () => void {
  return bus.on((event) => {
    if (event.type === 'code.log') write(`[${event.node}] ${event.text}\n`);
  });
}
