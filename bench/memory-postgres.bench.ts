/**
 * Long-term memory in PostgreSQL against the files (issue 31): the same 10,000 and 100,000 memories of
 * 384 dimensions (memory-data.ts, as memory.bench.ts), the same 200 queries, searched through each
 * store's own `search` (the query embedded by a lookup, both sides searched, fused), the two stores
 * interleaved query by query so that drift in the machine hits both alike. Per size:
 *
 * - files: `MemoryStore.addMany` of every memory and `close()` (hnswlib index and words saved);
 * - PostgreSQL: the rows as `PostgresMemory.addMany` writes them (terms as a tsvector, the vector, the
 *   namespace's model and dimensions), loaded 1,000 to a statement, then the namespace's HNSW index
 *   built over them (the files' M and efConstruction) — a bulk load, so the benchmark takes minutes;
 * - search: p50 and p99 of each store's `search`, k = 10, after a warm-up round, and recall@10 of each
 *   against exact (brute-force cosine) search over the same vectors.
 *
 * Goal: pgvector's p50 within 3× of hnswlib's. hnswlib answers inside the process; PostgreSQL is a
 * round trip away and parses, plans and reads pages for every query, so parity is not the bar, but a
 * worker's search must stay a small part of a step that waits for a model.
 *
 * The server: META_AGENT_BENCH_POSTGRES names a PostgreSQL with pgvector (the namespaces
 * `bench-10000`… are replaced there); without it, PGlite with its pgvector in a process of its own
 * (pgvector-server.ts): WASM, one query at a time, which makes its figures pessimistic.
 *
 * Run: `npx tsc -p . && node --no-node-snapshot bench/run.js memory-postgres` (minutes on 2 cores).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { openDatabase, type Database } from '../src/postgres/database.js';
import { PostgresMemory } from '../memory/postgres.js';
import { createVectorIndex, MEMORIES, NAMESPACES, prepareMemoryTables } from '../memory/postgres-schema.js';
import { wordsVector } from '../memory/postgres-words.js';
import { MemoryStore, type MemoryHit } from '../memory/store.js';
import {
  clusteredVectors,
  DIMENSIONS,
  exactNeighbours,
  itemNumber,
  itemText,
  lookupEmbedder,
  queryText,
  row,
} from './memory-data.js';
import { percentile, printTable, verdict } from './stats.js';

/** The most pgvector's search p50 may be, as a multiple of hnswlib's. */
export const P50_RATIO_GOAL = 3;

const K = 10;
const SEED = 13;
const LOAD_BATCH = 1_000;
const SERVER_SCRIPT = fileURLToPath(new URL('./pgvector-server.js', import.meta.url));

interface StoreFigures {
  p50Ms: number;
  p99Ms: number;
  recall: number;
}

export interface PostgresMemoryBenchRow {
  memories: number;
  filesBuildMs: number;
  loadMs: number;
  indexMs: number;
  files: StoreFigures;
  postgres: StoreFigures;
}

/** A PostgreSQL with pgvector: the one named, else PGlite in a child process. */
async function server(): Promise<{ url: string; pglite: boolean; stop: () => void }> {
  const named = process.env.META_AGENT_BENCH_POSTGRES;
  if (named) return { url: named, pglite: false, stop: () => undefined };
  const child = spawn(process.execPath, [SERVER_SCRIPT], { stdio: ['pipe', 'pipe', 'inherit'] });
  const url = await firstLine(child);
  return { url, pglite: true, stop: () => child.stdin?.end() };
}

function firstLine(child: ChildProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      out += chunk;
      if (out.includes('\n')) resolve(out.split('\n')[0]!);
    });
    child.on('error', reject);
    child.on('exit', (code) => reject(new Error(`pgvector-server.js exited with ${code}`)));
  });
}

/**
 * Writes `size` memories into `namespace` as PostgresMemory.addMany would, 1,000 rows a statement,
 * then builds its HNSW index; the times of both.
 */
async function load(db: Database, namespace: string, vectors: Float32Array, size: number) {
  await db.pool.query(`delete from ${MEMORIES} where namespace = $1`, [namespace]);
  await db.pool.query(`delete from ${NAMESPACES} where namespace = $1`, [namespace]);
  await db.pool.query(`insert into ${NAMESPACES} (namespace, model, dimensions) values ($1, $2, $3)`, [
    namespace,
    lookupEmbedder(vectors, vectors).modelName,
    DIMENSIONS,
  ]);
  const at = new Date().toISOString();
  let started = performance.now();
  for (let start = 0; start < size; start += LOAD_BATCH) {
    const items = Array.from({ length: Math.min(LOAD_BATCH, size - start) }, (_, i) => start + i);
    await db.pool.query(
      `insert into ${MEMORIES} (namespace, id, text, meta, at, embedding, words)
       select $1, id, text, '{}', $2, embedding::vector, words::tsvector
         from unnest($3::text[], $4::text[], $5::text[], $6::text[]) as u(id, text, embedding, words)`,
      [
        namespace,
        at,
        items.map(() => randomBytes(6).toString('hex')),
        items.map(itemText),
        items.map((item) => `[${row(vectors, item).join(',')}]`),
        items.map((item) => wordsVector(itemText(item))),
      ],
    );
  }
  // What autovacuum does on a server after such a load (PGlite runs none): without statistics the planner
  // reads every row of the namespace for words instead of asking the GIN index.
  await db.pool.query(`analyze ${MEMORIES}`);
  const loadMs = performance.now() - started;
  started = performance.now();
  const client = await db.pool.connect();
  try {
    // The graph of 100,000 vectors is built in memory only when it fits maintenance_work_mem.
    await client.query(`set maintenance_work_mem = '1GB'`);
    await createVectorIndex(client, namespace, DIMENSIONS);
    await client.query('reset maintenance_work_mem');
  } finally {
    client.release();
  }
  return { loadMs, indexMs: performance.now() - started };
}

async function measure(
  size: number,
  dir: string,
  db: Database,
  queryVectors: Float32Array,
  rounds: number,
): Promise<PostgresMemoryBenchRow> {
  const count = size.toLocaleString('en-US');
  const queries = queryVectors.length / DIMENSIONS;
  const vectors = clusteredVectors(size, SEED, 1);
  const embedder = lookupEmbedder(vectors, queryVectors);

  console.log(`memory-postgres: adding ${count} memories to the files…`);
  const files = await MemoryStore.open({ folder: join(dir, `memories-${size}`), embedder });
  const started = performance.now();
  await files.addMany(Array.from({ length: size }, (_, item) => ({ text: itemText(item) })));
  await files.close();
  const filesBuildMs = performance.now() - started;

  console.log(`memory-postgres: loading ${count} memories into PostgreSQL, then its HNSW index…`);
  const namespace = `bench-${size}`;
  const { loadMs, indexMs } = await load(db, namespace, vectors, size);
  const postgres = await PostgresMemory.open({ db, namespace, embedder });

  console.log(`memory-postgres: searching ${count} memories, the two stores in turn…`);
  const samples = { files: [] as number[], postgres: [] as number[] };
  const top = { files: [] as number[][], postgres: [] as number[][] };
  const timed = async (search: () => Promise<MemoryHit[]>) => {
    const at = performance.now();
    const hits = await search();
    return { ms: performance.now() - at, items: hits.map((hit) => itemNumber(hit.text)) };
  };
  for (let round = 0; round <= rounds; round++) {
    for (let query = 0; query < queries; query++) {
      const text = queryText(query);
      const fromFiles = await timed(() => files.search(text, K));
      const fromPostgres = await timed(() => postgres.search(text, K));
      if (round === 0) {
        top.files.push(fromFiles.items);
        top.postgres.push(fromPostgres.items);
      } else {
        samples.files.push(fromFiles.ms);
        samples.postgres.push(fromPostgres.ms);
      }
    }
  }
  const exact = Array.from({ length: queries }, (_, query) =>
    exactNeighbours(vectors, queryVectors, query, K),
  );
  const figures = (values: number[], found: number[][]): StoreFigures => ({
    p50Ms: percentile(values, 0.5),
    p99Ms: percentile(values, 0.99),
    recall: recallAt(found, exact),
  });
  return {
    memories: size,
    filesBuildMs,
    loadMs,
    indexMs,
    files: figures(samples.files, top.files),
    postgres: figures(samples.postgres, top.postgres),
  };
}

/** The mean share of each exact top k that `found` holds. */
function recallAt(found: readonly number[][], exact: readonly number[][]): number {
  let hits = 0;
  exact.forEach((truth, query) => {
    const wanted = new Set(truth);
    hits += found[query]!.filter((item) => wanted.has(item)).length;
  });
  return hits / (exact.length * K);
}

export async function runMemoryPostgresBench(
  options: { sizes?: number[]; queries?: number; rounds?: number } = {},
): Promise<PostgresMemoryBenchRow[]> {
  const sizes = options.sizes ?? [10_000, 100_000];
  const queryVectors = clusteredVectors(options.queries ?? 200, SEED, 2);
  const rounds = options.rounds ?? 5;
  const dir = await mkdtemp(join(tmpdir(), 'meta-agent-memory-postgres-bench-'));
  const started = await server();
  const db = await openDatabase(started.url, { poolSize: 1 });
  const rows: PostgresMemoryBenchRow[] = [];
  try {
    await prepareMemoryTables(db);
    for (const size of sizes) rows.push(await measure(size, dir, db, queryVectors, rounds));
  } finally {
    await db.close();
    started.stop();
    await rm(dir, { recursive: true, force: true });
  }

  const count = (n: number) => n.toLocaleString('en-US');
  const seconds = (ms: number) => (ms / 1000).toFixed(1);
  const where = started.pglite
    ? 'pgvector runs in PGlite (PostgreSQL in WASM, one query at a time, its own process): pessimistic figures'
    : 'pgvector on the server META_AGENT_BENCH_POSTGRES names';
  printTable(
    `\nmemory-postgres: building, ${DIMENSIONS} dimensions; ${where}`,
    ['memories', 'files build s', 'postgres load s', 'HNSW index s'],
    rows.map((row) => [
      count(row.memories),
      seconds(row.filesBuildMs),
      seconds(row.loadMs),
      seconds(row.indexMs),
    ]),
  );
  printTable(
    `\nmemory-postgres: search, k = ${K}, ${count(queryVectors.length / DIMENSIONS)} queries × ${rounds} rounds, stores interleaved; goal: pgvector p50 ≤ ${P50_RATIO_GOAL}× hnswlib's`,
    ['memories', 'store', 'p50 ms', 'p99 ms', `recall@${K}`, '÷ hnswlib p50', 'goal'],
    rows.flatMap((row) => {
      const ratio = row.postgres.p50Ms / row.files.p50Ms;
      return [
        [
          count(row.memories),
          'files (hnswlib)',
          row.files.p50Ms.toFixed(3),
          row.files.p99Ms.toFixed(3),
          row.files.recall.toFixed(3),
          '1.0',
          '',
        ],
        [
          count(row.memories),
          'postgres (pgvector)',
          row.postgres.p50Ms.toFixed(3),
          row.postgres.p99Ms.toFixed(3),
          row.postgres.recall.toFixed(3),
          ratio.toFixed(1),
          verdict(ratio <= P50_RATIO_GOAL),
        ],
      ];
    }),
    2,
  );
  console.log(`${where}.`);
  return rows;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await runMemoryPostgresBench();
