/**
 * What the Postgres store's parts share: the store's tables (created and migrated as the part `store`
 * under the `meta_agent` schema), the one kind of connection their queries run on, a transaction, and
 * the unique-key check that makes a write idempotent across processes. A unique key's row holds a digest
 * of the value first recorded under it; `insert … on conflict do nothing` then a read of the digest
 * decides, without a read-then-write race, whether a write is new, a harmless repeat or a DuplicateWrite.
 */
import type pg from 'pg';
import { migrate, SCHEMA, type Database } from '../postgres/database.js';

export { inTransaction } from '../postgres/database.js';
import { digestOf } from './digest.js';
import { DuplicateWrite } from './in-memory.js';

/**
 * Anything a query can run on: the pool (each query on its own) or a client the caller holds, inside a
 * transaction of its own (see inTransaction) when several writes must land together.
 */
export type Queryable = pg.Pool | pg.PoolClient;

/** The store's migrations, in order; each is one version of the part `store`. Never edit a released one. */
export const STORE_MIGRATIONS: readonly string[] = [
  `
  create table ${SCHEMA}.conversations (
    key text primary key,
    turn integer not null,
    snapshot_turn integer not null,
    state json not null,
    snapshot_bytes integer not null,
    tail_bytes integer not null default 0,
    updated_at timestamptz not null default now()
  );
  create table ${SCHEMA}.conversation_turns (
    key text not null,
    turn integer not null,
    digest text not null,
    base integer,
    delta json not null,
    recorded_at timestamptz not null default now(),
    primary key (key, turn)
  );
  create table ${SCHEMA}.goal_runs (
    key text primary key,
    state json not null,
    updated_at timestamptz not null default now()
  );
  create table ${SCHEMA}.goal_run_steps (
    key text not null,
    step integer not null,
    digest text not null,
    primary key (key, step)
  );
  create table ${SCHEMA}.goal_run_claims (
    key text not null,
    step integer not null,
    claimant text not null,
    claimed_at timestamptz not null default now(),
    primary key (key, step)
  );
  create table ${SCHEMA}.flow_runs (
    key text primary key,
    state json not null,
    updated_at timestamptz not null default now()
  );
  create table ${SCHEMA}.flow_run_results (
    key text not null,
    pass integer not null,
    node text not null,
    digest text not null,
    primary key (key, pass, node)
  );
  create table ${SCHEMA}.catalog (
    id text primary key,
    graph text not null,
    owner text not null,
    created text not null,
    updated text collate "C" not null,
    history text
  );
  create index catalog_owner_history on ${SCHEMA}.catalog (owner, history);
  create index catalog_owner_updated on ${SCHEMA}.catalog (owner, updated desc);
  `,
];

/** Creates or migrates the store's tables; every process may call it, the work is done once. */
export function migrateStore(db: Database): Promise<void> {
  return migrate(db, 'store', STORE_MIGRATIONS);
}

/** One unique key of a write: its columns' values beyond the part's key, a name for messages, its value. */
export interface UniqueItem {
  columns: readonly (string | number)[];
  name: string;
  value: unknown;
  /** Values of the table's `extra` columns, kept with a new row (a held row keeps its own). */
  extra?: readonly unknown[];
}

/**
 * Records `items` under `key` in `table`, whose primary key is (key, ...columns) and which has a
 * `digest` column (and the `extra` columns each item gives values for): a new item is recorded, one
 * held with the same digest is left alone, one held with another digest is a DuplicateWrite naming
 * `part` and the key (inside a transaction, nothing of the write is kept then). Returns the names of
 * the items recorded for the first time.
 */
export async function recordUnique(
  db: Queryable,
  table: string,
  columns: readonly string[],
  part: string,
  key: string,
  items: readonly UniqueItem[],
  extra: readonly string[] = [],
): Promise<string[]> {
  if (items.length === 0) return [];
  const digests = items.map((item) => digestOf(item.value));
  const id = (values: readonly unknown[]) => values.map(String).join('\0');
  const width = columns.length + 1 + extra.length;
  const inserted = await db.query<Record<string, unknown>>(
    `insert into ${SCHEMA}.${table} (key, ${[...columns, 'digest', ...extra].join(', ')})
     values ${items.map((_, i) => `($1, ${placeholders(2 + i * width, width)})`).join(', ')}
     on conflict do nothing returning ${columns.join(', ')}`,
    [key, ...items.flatMap((item, i) => [...item.columns, digests[i], ...(item.extra ?? [])])],
  );
  const fresh = new Set(inserted.rows.map((row) => id(columns.map((column) => row[column]))));
  const recorded = items.filter((item) => fresh.has(id(item.columns)));
  const held = items.flatMap((item, i) => (fresh.has(id(item.columns)) ? [] : [i]));
  if (held.length === 0) return recorded.map((item) => item.name);
  const found = await db.query<Record<string, unknown>>(
    `select ${columns.join(', ')}, digest from ${SCHEMA}.${table} where key = $1 and (${columns.join(', ')}) in
     (${held.map((_, n) => `(${placeholders(2 + n * columns.length, columns.length)})`).join(', ')})`,
    [key, ...held.flatMap((i) => items[i]!.columns)],
  );
  const stored = new Map(found.rows.map((row) => [id(columns.map((column) => row[column])), row['digest']]));
  for (const i of held)
    if (stored.get(id(items[i]!.columns)) !== digests[i])
      throw new DuplicateWrite(`${part} ${key}: ${items[i]!.name} is recorded already, differently`);
  return recorded.map((item) => item.name);
}

/** `$from, $from+1, …`, `count` of them. */
function placeholders(from: number, count: number): string {
  return Array.from({ length: count }, (_, i) => `$${from + i}`).join(', ');
}
