/**
 * Where flow runs last between steps: the flow runner's side of the store (src/store implements it, as
 * one JSON file per run by default). A run is named by its key (for files, the `--state` path).
 */
import type { FlowRunState } from './run-state.js';
import type { FlowFile } from './schema.js';

export interface FlowRunStore {
  /** The run of `flow` saved under `key`; undefined when there is none yet. Another flow's run is refused. */
  load(key: string, flow: FlowFile): Promise<FlowRunState | undefined>;
  /**
   * Records the run after a step of its pass. A node's committed result is recorded under (run, pass,
   * node) once: a store may refuse a save that changes one it holds.
   */
  save(key: string, state: FlowRunState): Promise<void>;
}
