/**
 * The store: one owner for everything that must outlive a process. Conversations (their states, with a
 * self-editing agent's graph and its versions inside), goal runs and flow runs are saved only through
 * it, each part keyed so that a write is idempotent: (conversation, turn), (run, step), (run, pass,
 * node). Each layer declares the part it saves through (engine, autonomous, flow); this joins them.
 * A server adds its catalog of conversations (whose each is). files.ts is the default implementation,
 * in-memory.ts keeps everything in the process.
 */
import type { GoalRunStore } from '../autonomous/goal-run-store.js';
import type { ConversationStore } from '../engine/conversation-store.js';
import type { FlowRunStore } from '../flow/flow-run-store.js';
import type { ConversationCatalog } from './catalog.js';

export interface Store {
  conversations: ConversationStore;
  goalRuns: GoalRunStore;
  flowRuns: FlowRunStore;
  /** Which conversations a server holds, and whose they are (catalog.ts). */
  catalog: ConversationCatalog;
}
