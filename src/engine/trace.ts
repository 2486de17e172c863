/**
 * The trace file: every event of a run as one JSON line, with the time it was emitted. Writes are
 * synchronous because the event bus is: lines land in emission order, and a crash loses nothing written.
 */
import { closeSync, openSync, writeSync } from 'node:fs';
import type { EventBus } from '../events.js';

/**
 * Appends every event emitted on `events` to `file` (created when missing). Returns a function that
 * stops tracing and closes the file.
 */
export function attachTrace(events: EventBus, file: string): () => void {
  const fd = openSync(file, 'a');
  const off = events.on((event) => {
    writeSync(fd, JSON.stringify({ time: new Date().toISOString(), ...event }, jsonSafe) + '\n');
  });
  return () => {
    off();
    closeSync(fd);
  };
}

/** Variable values may be anything code produced; the line must still be JSON. */
function jsonSafe(_key: string, value: unknown): unknown {
  return typeof value === 'bigint' ? value.toString() : value;
}
