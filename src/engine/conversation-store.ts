/**
 * Where conversations last between replies: the engine's side of the store (src/store implements it,
 * as files by default). A conversation is named by its key (for files, the state file's path).
 */
import type { ConversationState } from './state.js';

export interface ConversationStore {
  /** The state saved last under `key`; undefined when there is none yet (a new conversation). */
  load(key: string): Promise<ConversationState | undefined>;
  /**
   * Records the state a reply ended at, under (key, turn) where the turn is `state.steps`, which every
   * reply advances. Saving the same turn again with the same state changes nothing, so a retried save
   * is harmless; a store may refuse a different state under a turn it holds.
   */
  save(key: string, state: ConversationState): Promise<void>;
}
