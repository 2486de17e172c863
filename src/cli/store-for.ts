/**
 * The store a command keeps its work in: the files, as always, when no database is named; PostgreSQL
 * when `--database` or META_AGENT_DATABASE_URL names one (then `--state NAME`, a run's key and a flow
 * run's name are keys in the database, not paths). Every command that saves through the store opens it
 * here, so the choice is made in one place.
 */
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { isUserError } from '../errors.js';
import type { Database } from '../postgres/database.js';
import { fileStore } from '../store/files.js';
import type { Store } from '../store/store.js';
import { databaseUrl } from './database.js';

/** An open store; close it when the command is done (it ends the database's pool). */
export interface OpenedStore {
  store: Store;
  /** The database the store is on; undefined for the files. */
  db?: Database;
  /** Whether keys are names in a database rather than paths (for what a command says to the user). */
  inDatabase: boolean;
  close(): Promise<void>;
}

/** Who this process claims goal steps as: unique per process, readable in a message. */
export const CLAIMANT = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;

/**
 * The store for the `--database` value `option` (else META_AGENT_DATABASE_URL, else the files, kept in
 * `folder` where they have no path of their own). A bad URL is a UserError (exit 2), a server that
 * cannot be used one too (exit 1, the password never shown); the store's tables are made or migrated
 * before this returns.
 */
export async function openStore(
  option: string | undefined,
  folder?: string,
  env: NodeJS.ProcessEnv = process.env,
): Promise<OpenedStore> {
  const url = databaseUrl(option, env);
  if (url === undefined) return { store: fileStore(folder), inDatabase: false, close: async () => undefined };
  // The PostgreSQL client loads only for a command that uses it.
  const [{ openDatabase, unreachable }, { migrateStore, postgresStore }] = await Promise.all([
    import('../postgres/database.js'),
    import('../store/postgres.js'),
  ]);
  const db = await openDatabase(url);
  try {
    await migrateStore(db);
  } catch (error) {
    await db.close().catch(() => undefined);
    throw isUserError(error) ? error : unreachable(db.shown, error);
  }
  return { store: postgresStore(db, { claimant: CLAIMANT }), db, inDatabase: true, close: () => db.close() };
}
