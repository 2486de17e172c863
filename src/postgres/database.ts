/**
 * The one door to PostgreSQL, for every part that keeps its data there (the store, long-term memory,
 * the durable runtime): a pool on a checked URL, connection failures turned into one line a user can
 * act on, and versioned migrations, each part numbering its own so that parts evolve apart.
 */
import pg from 'pg';
import { UserError } from '../errors.js';
import { shownUrl } from './url.js';

export { checkedUrl, DATABASE_ENV, shownUrl } from './url.js';

/** The schema that holds meta-agent's own tables (DBOS keeps its own, `dbos`). */
export const SCHEMA = 'meta_agent';

export interface Database {
  readonly pool: pg.Pool;
  /** The URL with its password hidden, for messages. */
  readonly shown: string;
  close(): Promise<void>;
}

/**
 * A pool on `url`, after one round trip that proves the server answers: a server that is down, a wrong
 * password or a missing database is a UserError naming the URL (without its password).
 */
export async function openDatabase(url: string, options: { poolSize?: number } = {}): Promise<Database> {
  const shown = shownUrl(url);
  const pool = new pg.Pool({
    connectionString: url,
    max: options.poolSize ?? 10,
    connectionTimeoutMillis: 10_000,
  });
  // An idle client's connection that drops (a server restart) is replaced on next use, not thrown.
  pool.on('error', () => undefined);
  try {
    await pool.query('select 1');
  } catch (error) {
    await pool.end().catch(() => undefined);
    throw unreachable(shown, error);
  }
  return { pool, shown, close: () => pool.end() };
}

/** What to tell the user when the server at `shown` could not be used. */
export function unreachable(shown: string, error: unknown): UserError {
  const message = error instanceof Error ? error.message : String(error);
  const code = (error as { code?: string }).code;
  const hint =
    code === 'ECONNREFUSED'
      ? 'start PostgreSQL first (the README says how), or check the host and port'
      : code === '28P01'
        ? 'check the user and password in the URL'
        : code === '3D000'
          ? 'create the database first (createdb NAME), or name one that exists'
          : undefined;
  return new UserError(`cannot use the database at ${shown}: ${message || code}`, 1, hint);
}

/**
 * Runs `work` on one client inside a transaction: committed when it resolves, rolled back when it
 * throws (the error is passed on). The store's record and put functions, and memory's writes, compose in it.
 */
export async function inTransaction<T>(
  pool: pg.Pool,
  work: (client: pg.PoolClient) => Promise<T>,
): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query('begin');
    try {
      const result = await work(client);
      await client.query('commit');
      return result;
    } catch (error) {
      await client.query('rollback').catch(() => undefined);
      throw error;
    }
  } finally {
    client.release();
  }
}

/**
 * Brings `part`'s tables to the newest of `steps` (step i is version i + 1), once across every process
 * that starts at the same time (an advisory lock), each step in its own transaction with its version.
 */
export async function migrate(db: Database, part: string, steps: readonly string[]): Promise<void> {
  const client = await db.pool.connect();
  try {
    await client.query(`select pg_advisory_lock(hashtext('meta_agent.migrate'))`);
    try {
      await client.query(`create schema if not exists ${SCHEMA}`);
      await client.query(
        `create table if not exists ${SCHEMA}.migrations (part text primary key, version int not null, migrated_at timestamptz not null default now())`,
      );
      const { rows } = await client.query<{ version: number }>(
        `select version from ${SCHEMA}.migrations where part = $1`,
        [part],
      );
      const at = rows[0]?.version ?? 0;
      if (at > steps.length)
        throw new UserError(
          `the database holds ${part} tables of version ${at}, newer than this meta-agent knows (${steps.length})`,
          1,
          'upgrade meta-agent on this machine to the version the others run',
        );
      for (let version = at + 1; version <= steps.length; version++) {
        await client.query('begin');
        try {
          await client.query(steps[version - 1]!);
          await client.query(
            `insert into ${SCHEMA}.migrations (part, version) values ($1, $2)
             on conflict (part) do update set version = excluded.version, migrated_at = now()`,
            [part, version],
          );
          await client.query('commit');
        } catch (error) {
          await client.query('rollback').catch(() => undefined);
          throw error;
        }
      }
    } finally {
      await client.query(`select pg_advisory_unlock(hashtext('meta_agent.migrate'))`);
    }
  } finally {
    client.release();
  }
}
