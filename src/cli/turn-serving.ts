/**
 * What `serve` and `worker` share on Postgres: the database (a pool sized for the turns in flight), the
 * store on it, the served turns' table and notices, and the durable runtime launched once the process's
 * hub is there to run the turns it takes.
 */
import { newExecutorId, type Durable } from '../durable/runtime.js';
import { QUEUES } from '../durable/queues.js';
import { isUserError } from '../errors.js';
import { openDatabase, unreachable, type Database } from '../postgres/database.js';
import type { ConversationHub } from '../serve/conversations.js';
import { DurableTurns, serveTurns } from '../serve/durable-turns.js';
import { ServedNotices } from '../serve/served-notices.js';
import { migrateServedTurns } from '../serve/served-turns.js';
import { migrateStore, postgresStore } from '../store/postgres.js';
import type { Store } from '../store/store.js';
import { startDurable } from './durable-workflows.js';
import { CLAIMANT } from './store-for.js';
import type { McpServers } from '../mcp/servers.js';

export interface TurnServing {
  db: Database;
  store: Store;
  /** How this process starts turns (a server; a worker starts none). */
  turns: DurableTurns;
  /** The store key of served conversation `id`: `serve:ID` (so `chat --state serve:ID` goes on with it). */
  keyOf(id: string): string;
  /** Launches the durable runtime as `role`, its turns run by `hub`; `listen` limits its queues. */
  launch(role: string, hub: ConversationHub, listen?: readonly string[]): Promise<Durable>;
  close(): Promise<void>;
}

/** Connections beyond the turns in flight: the routes' reads, the heartbeat and the reaper. */
const SPARE_CONNECTIONS = 8;

/** Opens the database at `url` for a process that runs up to `maxRunning` turns it starts itself. */
export async function openTurnServing(
  url: string,
  options: { maxRunning: number; onProblem(message: string): void; mcp?: McpServers },
): Promise<TurnServing> {
  // Each turn in flight holds a connection (its conversation's lock); the queue adds its own.
  const poolSize = options.maxRunning + QUEUES.turns.workerConcurrency + SPARE_CONNECTIONS;
  const db = await openDatabase(url, { poolSize });
  let notices: ServedNotices;
  try {
    await migrateStore(db);
    await migrateServedTurns(db);
    notices = await ServedNotices.listen(db, url, options.onProblem);
  } catch (error) {
    await db.close().catch(() => undefined);
    throw isUserError(error) ? error : unreachable(db.shown, error);
  }
  const keyOf = (id: string) => `serve:${id}`;
  const store = postgresStore(db, { claimant: CLAIMANT });
  return {
    db,
    store,
    turns: new DurableTurns(db, notices, options.maxRunning),
    keyOf,
    launch: (role, hub, listen) => {
      const executorId = newExecutorId(role);
      serveTurns({ db, hub, keyOf, notices, name: `${role} ${executorId}`, onProblem: options.onProblem });
      return startDurable({
        db,
        url,
        role,
        executorId,
        store,
        onProblem: options.onProblem,
        ...(listen && { listen }),
        ...(options.mcp && { mcp: options.mcp }),
      });
    },
    close: async () => {
      await notices.close();
      await db.close();
    },
  };
}
