/**
 * What runs inside a graph prints beside its replies, for the commands that write plain lines (`chat`
 * in a pipe, `call`): what code nodes print with `console.*`, and the steps of a goal_loop node's run.
 * It goes to stderr, so stdout keeps only the replies or the result a script reads.
 */
import type { EventBus } from '../events.js';
import { printGoalLines } from './goal-lines.js';

/**
 * Writes each `code.log` event on `bus` as `[node] text`, and each goal-loop step as
 * `[goal_loop] step N · …`; returns a function that stops.
 */
export function printCodeLogs(bus: EventBus, write: (line: string) => void): () => void {
  const stopLogs = bus.on((event) => {
    if (event.type === 'code.log') write(`[${event.node}] ${event.text}\n`);
  });
  const stopSteps = printGoalLines(bus, (line) => write(`[goal_loop] ${line}`));
  return () => {
    stopLogs();
    stopSteps();
  };
}
