/** `--trace FILE`, as every command that runs an agent takes it. */
import { attachTrace } from '../engine/trace.js';
import { UserError } from '../errors.js';
import type { EventBus } from '../events.js';

/** Appends every event on `bus` to `file`; a file that cannot be opened is the user's error (exit 2). */
export function traceTo(bus: EventBus, file: string): () => void {
  try {
    return attachTrace(bus, file);
  } catch (error) {
    throw new UserError(`--trace: cannot write ${file}: ${(error as Error).message}`, 2);
  }
}
