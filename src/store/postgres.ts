/**
 * The store in PostgreSQL, for work shared by several processes or machines (`--database`, or
 * META_AGENT_DATABASE_URL): the four parts on tables of the schema `meta_agent`, made and migrated on
 * first use (the part `store`). Keys are names the user chooses (`chat --state NAME`, a run's id, a
 * flow run's name), not paths. The keys are unique as in-memory.ts makes them, here by unique indexes:
 * a turn, a goal step's result and a flow node's committed result are each recorded once, and a
 * different value under a held key is a DuplicateWrite; a goal step's `running` phase is a claim of
 * this store's `claimant`. What is read back is checked as a file would be (a row is untrusted input).
 *
 * The SQL of each part is a set of functions over a Queryable, in the sibling modules, so a caller can
 * put several writes in one transaction (inTransaction): serve saves a turn's state
 * (recordConversationState), its catalog entry (putCatalogEntry) and the reply it served together.
 */
import type { ConversationState } from '../engine/state.js';
import type { Database } from '../postgres/database.js';
import { catalogInDatabase } from './postgres-catalog.js';
import { loadConversationState, recordConversationState } from './postgres-conversations.js';
import { loadFlowRunState, saveFlowRunState } from './postgres-flow-runs.js';
import { createGoalRun, loadGoalRun, saveGoalRun } from './postgres-goal-runs.js';
import { inTransaction, migrateStore } from './postgres-sql.js';
import type { Store } from './store.js';

export { catalogInDatabase, createCatalogEntry, putCatalogEntry } from './postgres-catalog.js';
export {
  conversationSource,
  loadConversationAt,
  loadConversationState,
  recordConversationState,
  storedTurn,
} from './postgres-conversations.js';
export { loadFlowRunState, saveFlowRunState } from './postgres-flow-runs.js';
export { ClaimHeld, claimStep, createGoalRun, loadGoalRun, saveGoalRun } from './postgres-goal-runs.js';
export { inTransaction, migrateStore, STORE_MIGRATIONS, type Queryable } from './postgres-sql.js';

export interface PostgresStoreOptions {
  /** Who this store claims goal steps as: one id per process (two stores with one claimant are one). */
  claimant: string;
}

/** States this process loaded or saved last, kept to make a turn's row hold only what a reply changed. */
const REMEMBERED = 1000;

/**
 * The store on `db`. Its tables are made or migrated before its first query (openStore does it at once,
 * so a problem shows before any work). The conversations it loads are read from the database every time
 * (another process may have moved them on).
 */
export function postgresStore(db: Database, options: PostgresStoreOptions): Store {
  const { pool } = db;
  let migrated: Promise<void> | undefined;
  /** `work`, once the tables are there. */
  const ready = <T>(work: () => Promise<T>): Promise<T> => (migrated ??= migrateStore(db)).then(work);
  const remembered = new Map<string, ConversationState>();
  const remember = (key: string, state: ConversationState) => {
    remembered.delete(key);
    remembered.set(key, state);
    if (remembered.size > REMEMBERED) remembered.delete(remembered.keys().next().value!);
  };
  /** The step each run this store loaded was running already (see saveGoalRun). */
  const inherited = new Map<string, number>();
  const catalog = catalogInDatabase(pool);
  return {
    conversations: {
      load: (key) =>
        ready(async () => {
          const state = await loadConversationState(pool, key);
          if (state) remember(key, state);
          return state;
        }),
      save: (key, state) =>
        ready(async () => {
          await inTransaction(pool, (client) =>
            recordConversationState(client, key, state, remembered.get(key)),
          );
          remember(key, state);
        }),
    },
    goalRuns: {
      create: (state) => ready(() => createGoalRun(pool, state)),
      load: (key) =>
        ready(async () => {
          const state = await loadGoalRun(pool, key);
          if (state.pending?.phase === 'running') inherited.set(key, state.pending.step);
          else inherited.delete(key);
          return state;
        }),
      save: (key, state) =>
        ready(() =>
          inTransaction(pool, (client) =>
            saveGoalRun(client, key, state, options.claimant, inherited.get(key)),
          ),
        ),
    },
    flowRuns: {
      load: (key, flow) => ready(() => loadFlowRunState(pool, key, flow)),
      save: (key, state) =>
        ready(() => inTransaction(pool, (client) => saveFlowRunState(client, key, state))),
    },
    catalog: {
      get: (id) => ready(() => catalog.get(id)),
      put: (entry) => ready(() => catalog.put(entry)),
      list: (owner) => ready(() => catalog.list(owner)),
      byHistory: (owner, history) => ready(() => catalog.byHistory(owner, history)),
    },
  };
}
