/**
 * Where goal runs last between steps: the goal loop's side of the store (src/store implements it, as
 * run files by default). A run is named by its key (for files, the run file's path).
 */
import type { RunState } from './run-state.js';

export interface GoalRunStore {
  /** Makes room for the new run `state` and returns its key; `names` say whose run it is (agent, node). */
  create(state: RunState, names: readonly string[]): Promise<string>;
  /** The run saved under `key`; a key with no run, or a run that cannot be used, is a UserError. */
  load(key: string): Promise<RunState>;
  /**
   * Records the run at a phase of its step. A command's result is recorded under (run, step) once: a
   * store may refuse a save that changes the result of a step it holds, which is how a side effect is
   * kept from being recorded, and so run, twice.
   */
  save(key: string, state: RunState): Promise<void>;
}
