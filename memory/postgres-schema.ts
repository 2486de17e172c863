/**
 * Memory's tables in PostgreSQL (migrations part `memory`, schema meta_agent) and the pgvector
 * extension they need. A namespace is a row of `memory_namespaces`, holding the model and dimensions
 * its first vectors fixed; its memories are rows of `memories`, with their words as a tsvector (one GIN
 * index for every namespace) and their vectors in an untyped `vector` column. Each namespace that has
 * vectors gets its own HNSW index, partial on the namespace, over the column cast to its dimensions:
 * namespaces of different embedders live side by side, and a search walks only its own graph.
 * pgvector's HNSW takes up to 2,000 dimensions: a namespace of more is searched exactly, row by row.
 */
import { createHash } from 'node:crypto';
import pg from 'pg';
import { UserError } from '../src/errors.js';
import { migrate, SCHEMA, type Database } from '../src/postgres/database.js';
import { DEFAULT_SHAPE } from './vector-index.js';

export const NAMESPACES = `${SCHEMA}.memory_namespaces`;
export const MEMORIES = `${SCHEMA}.memories`;

const STEPS = [
  `create table ${NAMESPACES} (
     namespace text primary key,
     model text,
     dimensions int check (dimensions > 0),
     check ((model is null) = (dimensions is null))
   );
   create table ${MEMORIES} (
     namespace text not null references ${NAMESPACES} (namespace),
     id text not null,
     seq bigint generated always as identity,
     text text not null,
     meta jsonb not null,
     at text not null,
     embedding vector,
     words tsvector not null,
     primary key (namespace, id)
   );
   create index memories_in_order on ${MEMORIES} (namespace, seq);
   create index memories_words on ${MEMORIES} using gin (words);`,
];

/** Makes sure the server has pgvector in this database, then brings memory's tables up to date. */
export async function prepareMemoryTables(db: Database): Promise<void> {
  await ensurePgvector(db);
  await migrate(db, 'memory', STEPS);
}

async function ensurePgvector(db: Database): Promise<void> {
  const { rows } = await db.pool.query(`select 1 from pg_extension where extname = 'vector'`);
  if (rows.length > 0) return;
  try {
    await db.pool.query('create extension if not exists vector');
  } catch (error) {
    throw await noPgvector(db, error);
  }
}

/** What to tell the user when `create extension vector` failed with `error` (anything else: itself). */
async function noPgvector(db: Database, error: unknown): Promise<Error> {
  const code = (error as { code?: string }).code;
  const files = 'or keep memory in files: leave out --database and META_AGENT_DATABASE_URL';
  if (code === '42501')
    return new UserError(
      `the database at ${db.shown} has no pgvector extension, and this user may not create it`,
      1,
      `a superuser runs "create extension vector" in that database once, ${files}`,
    );
  if (code !== '0A000' && code !== '58P01') return error as Error;
  const { rows } = await db.pool.query<{ major: string }>(
    `select current_setting('server_version_num')::int / 10000 as major`,
  );
  const major = rows[0]?.major ?? 'NN';
  return new UserError(
    `the PostgreSQL server at ${db.shown} has no pgvector, which memory needs for its vectors`,
    1,
    `install it on the server (Debian and Ubuntu: apt install postgresql-${major}-pgvector; or run the pgvector/pgvector image), ${files}`,
  );
}

/** The name of `namespace`'s HNSW index (a digest: a namespace name may hold "." and "-"). */
function vectorIndexName(namespace: string): string {
  return `memory_vectors_${createHash('sha256').update(namespace).digest('hex').slice(0, 24)}`;
}

/** `namespace` as a SQL literal: a partial index's predicate, and a query the planner matches to it. */
export function namespaceLiteral(namespace: string): string {
  return pg.escapeLiteral(namespace);
}

/** The most dimensions pgvector's HNSW indexes; vectors of more are searched exactly, row by row. */
export const MAX_INDEXED_DIMENSIONS = 2000;

/**
 * Makes `namespace`'s HNSW index over vectors of `dimensions` (the files' hnswlib parameters). Its
 * predicate names the dimensions too: a row of others is never cast (the cast would fail), such as the
 * old versions of the rows a reindex just changed, which an index built now still meets.
 */
export async function createVectorIndex(
  client: pg.PoolClient,
  namespace: string,
  dimensions: number,
): Promise<void> {
  if (dimensions > MAX_INDEXED_DIMENSIONS) return;
  await client.query(
    `create index if not exists ${vectorIndexName(namespace)} on ${MEMORIES}
       using hnsw ((embedding::vector(${checkedDimensions(dimensions)})) vector_cosine_ops)
       with (m = ${DEFAULT_SHAPE.m}, ef_construction = ${DEFAULT_SHAPE.efConstruction})
       where ${vectorRows(namespace, dimensions)}`,
  );
}

/**
 * The rows of `namespace` with vectors of `dimensions`, as SQL: the index's predicate, which a search
 * repeats word for word so that the planner can use the index.
 */
export function vectorRows(namespace: string, dimensions: number): string {
  return `namespace = ${namespaceLiteral(namespace)} and vector_dims(embedding) = ${checkedDimensions(dimensions)}`;
}

/** Drops `namespace`'s HNSW index, before its vectors change shape. */
export async function dropVectorIndex(client: pg.PoolClient, namespace: string): Promise<void> {
  await client.query(`drop index if exists ${SCHEMA}.${vectorIndexName(namespace)}`);
}

/** `dimensions`, checked to be what SQL may hold as a type modifier. */
export function checkedDimensions(dimensions: number): number {
  if (!Number.isInteger(dimensions) || dimensions <= 0 || dimensions > 16_000)
    throw new RangeError(`${dimensions} is not a number of dimensions pgvector can hold`);
  return dimensions;
}
