/**
 * Long-term memory in PostgreSQL, shared by every worker that names the same database: one namespace's
 * rows (postgres-schema.ts), searched as the files are (store.ts) with the same fusion (fusion.ts) of
 * the same two sides: vectors, here through pgvector's HNSW, and words, here through Postgres's full
 * text search over the files' own terms (postgres-words.ts), ranked by `ts_rank` (term frequency with
 * the document's length) where the files rank by BM25.
 *
 * Embedders follow the files' rule (embedding.ts): the first vectors fix the namespace's model and
 * dimensions, in its row; an embedder of another model or shape makes search go by words alone, said
 * once, until `reindex` embeds every memory again. A writer locks the namespace's row, so that rule
 * holds across processes: a vector that no longer fits the row is not kept (its memory is found by its
 * words), as the files keep no vector of another model.
 *
 * A search is one round trip (several statements in one simple query: their values are literals this
 * module makes, a checked namespace name and finite numbers), so that pgvector's `ef_search` can be set
 * for it alone.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { inTransaction, openDatabase, type Database } from '../src/postgres/database.js';
import { embedAll, Embedding, type Embedder } from './embedding.js';
import { MemoryDamaged } from './files.js';
import { fuse, type Ranked } from './fusion.js';
import type { DatabaseMemoryStats, Memory, MemoryHit, MemoryItem } from './memory.js';
import { namespaceProblem } from './namespaces.js';
import {
  checkedDimensions,
  createVectorIndex,
  dropVectorIndex,
  MEMORIES,
  namespaceLiteral,
  NAMESPACES,
  prepareMemoryTables,
  vectorRows,
} from './postgres-schema.js';
import { wordsQuery, wordsVector } from './postgres-words.js';
import { checkText, EMBED_BATCH } from './store.js';
import { SEARCH_EF } from './vector-index.js';

/** The model and dimensions a namespace's first vectors fixed (none yet: both undefined). */
interface Shape {
  model: string | undefined;
  dimensions: number | undefined;
}

/** A namespace's row as pg gives it. */
interface ShapeRow {
  model: string | null;
  dimensions: number | null;
}

interface ItemRow {
  id: string;
  text: string;
  meta: Record<string, string>;
  at: string;
  embedded: boolean;
}

const ITEM_COLUMNS = 'id, text, meta, at, embedding is not null as embedded';

/** Tries of a batch whose random ids met one already there. */
const ID_ATTEMPTS = 3;

export interface PostgresMemoryOptions {
  db: Database;
  namespace: string;
  embedder?: Embedder;
  /** Told once when search goes by words alone. */
  onNotice?: (message: string) => void;
  /** Closes `db` when the memory closes (it was opened for this memory alone). */
  closesDatabase?: boolean;
}

export class PostgresMemory implements Memory {
  readonly namespace: string;
  readonly #db: Database;
  readonly #literal: string;
  readonly #embedding: Embedding;
  readonly #closesDatabase: boolean;
  #shape: Shape = { model: undefined, dimensions: undefined };

  private constructor(options: PostgresMemoryOptions) {
    this.namespace = options.namespace;
    this.#db = options.db;
    this.#literal = namespaceLiteral(options.namespace);
    this.#embedding = new Embedding(options.embedder, options.onNotice ?? (() => undefined));
    this.#closesDatabase = options.closesDatabase ?? false;
  }

  /**
   * Opens `namespace` in the database (none yet is an empty one), after making memory's tables there.
   * A server without pgvector is a UserError saying what to do.
   */
  static async open(options: PostgresMemoryOptions): Promise<PostgresMemory> {
    const problem = namespaceProblem(options.namespace);
    if (problem) throw new RangeError(problem);
    await prepareMemoryTables(options.db);
    const memory = new PostgresMemory(options);
    const { rows } = await options.db.pool.query<ShapeRow>(
      `select model, dimensions from ${NAMESPACES} where namespace = $1`,
      [options.namespace],
    );
    memory.#follow(rows[0]);
    return memory;
  }

  async add(text: string, meta: Record<string, string> = {}, signal?: AbortSignal): Promise<string> {
    const [id] = await this.addMany([{ text, meta }], signal);
    return id!;
  }

  async addMany(
    entries: ReadonlyArray<{ text: string; meta?: Record<string, string> }>,
    signal?: AbortSignal,
    onProgress?: (done: number, total: number) => void,
  ): Promise<string[]> {
    for (const { text } of entries) checkText(text);
    const ids: string[] = [];
    for (let start = 0; start < entries.length; start += EMBED_BATCH) {
      const batch = entries.slice(start, start + EMBED_BATCH);
      const embedded = await this.#embedding.embed(
        batch.map((entry) => entry.text),
        () => this.#shape.dimensions,
        signal,
      );
      const at = new Date().toISOString();
      ids.push(
        ...(await this.#insert(
          batch.map((entry, i) => ({
            text: entry.text,
            meta: entry.meta ?? {},
            at,
            vector: embedded?.vectors[i],
          })),
          embedded?.model,
        )),
      );
      onProgress?.(ids.length, entries.length);
    }
    return ids;
  }

  async search(query: string, k: number, signal?: AbortSignal): Promise<MemoryHit[]> {
    return this.#search(query, k, signal, true);
  }

  async list(): Promise<MemoryItem[]> {
    const { rows } = await this.#db.pool.query<ItemRow>(
      `select ${ITEM_COLUMNS} from ${MEMORIES} where namespace = $1 order by seq`,
      [this.namespace],
    );
    return rows.map(item);
  }

  async forget(ids: readonly string[]): Promise<string[]> {
    const wanted = [...new Set(ids)];
    if (wanted.length === 0) return [];
    const { rows } = await this.#db.pool.query<{ id: string }>(
      `delete from ${MEMORIES} where namespace = $1 and id = any($2::text[]) returning id`,
      [this.namespace, wanted],
    );
    const forgotten = new Set(rows.map((row) => row.id));
    return wanted.filter((id) => forgotten.has(id));
  }

  async forgetMatching(text: string): Promise<string[]> {
    const { rows } = await this.#db.pool.query<{ id: string; seq: string }>(
      `delete from ${MEMORIES} where namespace = $1 and strpos(lower(text), lower($2)) > 0 returning id, seq`,
      [this.namespace, text],
    );
    return rows.sort((a, b) => Number(a.seq) - Number(b.seq)).map((row) => row.id);
  }

  /**
   * Embeds every memory again, holding the namespace's row the while, so that no worker adds a vector
   * of the old embedder meanwhile; one transaction, so an interruption leaves the namespace as it was.
   */
  async reindex(signal?: AbortSignal, onProgress?: (done: number, total: number) => void): Promise<number> {
    const embedder = this.#embedding.embedder;
    if (!embedder) throw new MemoryDamaged('reindexing needs an embedder: configure an embedding model');
    return inTransaction(this.#db.pool, async (client) => {
      await this.#lockNamespace(client);
      const { rows } = await client.query<{ id: string; text: string }>(
        `select id, text from ${MEMORIES} where namespace = $1 order by seq`,
        [this.namespace],
      );
      const vectors: Array<string | null> = [];
      let dimensions: number | undefined;
      for (let start = 0; start < rows.length; start += EMBED_BATCH) {
        const batch = rows.slice(start, start + EMBED_BATCH);
        const made = await embedAll(
          embedder,
          batch.map((row) => row.text),
          dimensions,
          signal,
        );
        dimensions ??= made[0]!.length;
        for (const vector of made)
          vectors.push(vector.some((value) => value !== 0) ? vectorLiteral(vector) : null);
        onProgress?.(Math.min(start + EMBED_BATCH, rows.length), rows.length);
      }
      signal?.throwIfAborted();
      await dropVectorIndex(client, this.namespace);
      const shape: Shape = { model: dimensions === undefined ? undefined : embedder.modelName, dimensions };
      await client.query(`update ${NAMESPACES} set model = $2, dimensions = $3 where namespace = $1`, [
        this.namespace,
        shape.model ?? null,
        shape.dimensions ?? null,
      ]);
      await client.query(
        `update ${MEMORIES} m set embedding = u.embedding::vector
           from unnest($2::text[], $3::text[]) as u(id, embedding)
          where m.namespace = $1 and m.id = u.id`,
        [this.namespace, rows.map((row) => row.id), vectors],
      );
      if (dimensions !== undefined) await createVectorIndex(client, this.namespace, dimensions);
      this.#shape = shape;
      this.#embedding.reindexed();
      return rows.length;
    });
  }

  async stats(): Promise<DatabaseMemoryStats> {
    const { rows } = await this.#db.pool.query<{ items: string; embedded: string }>(
      `select count(*) as items, count(embedding) as embedded from ${MEMORIES} where namespace = $1`,
      [this.namespace],
    );
    await this.#reread();
    const { model, dimensions } = this.#shape;
    const wordsOnly = this.#embedding.wordsOnly;
    return {
      database: this.#db.shown,
      items: Number(rows[0]!.items),
      embedded: Number(rows[0]!.embedded),
      ...(model !== undefined && { model }),
      ...(dimensions !== undefined && { dimensions }),
      ...(wordsOnly !== undefined && { wordsOnly }),
    };
  }

  async namespaces(): Promise<string[]> {
    const { rows } = await this.#db.pool.query<{ namespace: string }>(
      `select namespace from ${NAMESPACES} order by namespace collate "C"`,
    );
    return rows.map((row) => row.namespace);
  }

  async close(): Promise<void> {
    if (this.#closesDatabase) await this.#db.close();
  }

  /**
   * The search: both sides in one round trip, with the namespace's row; when that row says another
   * process changed the namespace's shape (a reindex), the query is embedded anew and asked again once.
   */
  async #search(
    query: string,
    k: number,
    signal: AbortSignal | undefined,
    again: boolean,
  ): Promise<MemoryHit[]> {
    const wanted = Math.max(k * 3, 20);
    const { dimensions } = this.#shape;
    const vector =
      dimensions !== undefined && query.trim() !== ''
        ? (await this.#embedding.embed([query], () => this.#shape.dimensions, signal))?.vectors[0]
        : undefined;
    const words = wordsQuery(query);
    const statements = [`select model, dimensions from ${NAMESPACES} where namespace = ${this.#literal}`];
    if (vector) statements.push(...this.#meaningStatements(vector, wanted));
    if (words) statements.push(this.#wordsStatement(words, wanted));
    const results = (await this.#db.pool.query(statements.join(';\n'))) as unknown as pg.QueryResult[];
    const [shapeResult, ...rest] = Array.isArray(results) ? results : [results];
    if (again && this.#follow(shapeResult!.rows[0] as ShapeRow | undefined))
      return this.#search(query, k, signal, false);
    const found = new Map<string, ItemRow>();
    const ranked = (rows: Array<ItemRow & { distance?: number }>): Ranked[] =>
      rows.map((row) => {
        found.set(row.id, row);
        return {
          id: row.id,
          ...(row.distance !== undefined && { similarity: Number((1 - row.distance).toFixed(4)) }),
        };
      });
    // The meaning side's rows follow its set_config; the words side's come last.
    const meaning = vector ? ranked(rest[1]!.rows) : [];
    const lexical = words ? ranked(rest.at(-1)!.rows) : [];
    const textOf = (id: string) => found.get(id)?.text ?? '';
    return fuse(meaning, lexical, query, textOf, k).map((hit) => ({ ...item(found.get(hit.id)!), ...hit }));
  }

  /** `ef_search` for this search alone (at least the files' SEARCH_EF), then the nearest vectors. */
  #meaningStatements(vector: readonly number[], wanted: number): string[] {
    const dimensions = checkedDimensions(vector.length);
    const distance = `embedding::vector(${dimensions}) <=> '${vectorLiteral(vector)}'::vector(${dimensions})`;
    return [
      `select set_config('hnsw.ef_search', '${Math.max(SEARCH_EF, wanted)}', true)`,
      // Ordered by the column's name, the vector is read and compared once a row, and the index still serves.
      `select ${ITEM_COLUMNS}, ${distance} as distance from ${MEMORIES}
        where ${vectorRows(this.namespace, dimensions)} order by distance limit ${wanted}`,
    ];
  }

  #wordsStatement(words: string, wanted: number): string {
    const query = `${pg.escapeLiteral(words)}::tsquery`;
    return `select ${ITEM_COLUMNS}, ts_rank(words, ${query}, 1) as rank from ${MEMORIES}
      where namespace = ${this.#literal} and words @@ ${query}
      order by rank desc, seq limit ${wanted}`;
  }

  /**
   * Inserts a batch under the namespace's row lock: the first vectors fix its shape (and make its
   * index); a vector of another model or dimensions than the row's is left out.
   */
  async #insert(
    batch: Array<{ text: string; meta: Record<string, string>; at: string; vector: number[] | undefined }>,
    model: string | undefined,
  ): Promise<string[]> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await inTransaction(this.#db.pool, async (client) => {
          const shape = await this.#lockNamespace(client);
          const first = batch.find((entry) => entry.vector)?.vector;
          if (shape.dimensions === undefined && first && model !== undefined) {
            shape.model = model;
            shape.dimensions = checkedDimensions(first.length);
            await client.query(`update ${NAMESPACES} set model = $2, dimensions = $3 where namespace = $1`, [
              this.namespace,
              model,
              shape.dimensions,
            ]);
            await createVectorIndex(client, this.namespace, shape.dimensions);
            this.#follow({ model, dimensions: shape.dimensions });
          }
          const fits = (vector: number[] | undefined) =>
            vector !== undefined && model === shape.model && vector.length === shape.dimensions;
          const ids = batch.map(() => randomBytes(6).toString('hex'));
          await client.query(
            `insert into ${MEMORIES} (namespace, id, text, meta, at, embedding, words)
             select $1, id, text, meta, at, embedding::vector, words::tsvector
               from unnest($2::text[], $3::text[], $4::jsonb[], $5::text[], $6::text[], $7::text[])
                 as u(id, text, meta, at, embedding, words)`,
            [
              this.namespace,
              ids,
              batch.map((entry) => entry.text),
              batch.map((entry) => JSON.stringify(entry.meta)),
              batch.map((entry) => entry.at),
              batch.map((entry) => (fits(entry.vector) ? vectorLiteral(entry.vector!) : null)),
              batch.map((entry) => wordsVector(entry.text)),
            ],
          );
          return ids;
        });
      } catch (error) {
        // 48 random bits met an id already there: the batch, all or nothing, goes again with new ones.
        if ((error as { code?: string }).code !== '23505' || attempt >= ID_ATTEMPTS) throw error;
      }
    }
  }

  /** Makes the namespace's row when there is none, and locks it; its shape, as this process now follows. */
  async #lockNamespace(client: pg.PoolClient): Promise<Shape> {
    await client.query(`insert into ${NAMESPACES} (namespace) values ($1) on conflict do nothing`, [
      this.namespace,
    ]);
    const { rows } = await client.query<ShapeRow>(
      `select model, dimensions from ${NAMESPACES} where namespace = $1 for update`,
      [this.namespace],
    );
    this.#follow(rows[0]);
    return { ...this.#shape };
  }

  async #reread(): Promise<void> {
    const { rows } = await this.#db.pool.query<ShapeRow>(
      `select model, dimensions from ${NAMESPACES} where namespace = $1`,
      [this.namespace],
    );
    this.#follow(rows[0]);
  }

  /**
   * The namespace's row as read now (none yet: no shape): a change of shape decides anew whether the
   * embedder's vectors fit. Whether it changed.
   */
  #follow(row: ShapeRow | undefined): boolean {
    const shape: Shape = { model: row?.model ?? undefined, dimensions: row?.dimensions ?? undefined };
    if (shape.model === this.#shape.model && shape.dimensions === this.#shape.dimensions) return false;
    this.#shape = shape;
    this.#embedding.follow(shape);
    return true;
  }
}

/**
 * Opens `namespace` in the database at `url`, on a pool of its own that closes with the memory. One
 * connection: memory's calls come one at a time.
 */
export async function openPostgresMemory(
  url: string,
  options: Omit<PostgresMemoryOptions, 'db' | 'closesDatabase'>,
): Promise<PostgresMemory> {
  const db = await openDatabase(url, { poolSize: 1 });
  try {
    return await PostgresMemory.open({ ...options, db, closesDatabase: true });
  } catch (error) {
    await db.close();
    throw error;
  }
}

/** A vector in pgvector's text form: finite numbers, as the embedder gave them. */
function vectorLiteral(vector: readonly number[]): string {
  return `[${vector.join(',')}]`;
}

function item(row: ItemRow): MemoryItem {
  return { id: row.id, text: row.text, meta: row.meta, at: row.at, embedded: row.embedded };
}
