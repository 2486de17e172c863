/**
 * Long-term memory benchmark (issue 13): a namespace of 10,000 and of 100,000 vectors of 384
 * dimensions (clustered, generated: memory-data.ts), built and searched through `MemoryStore`, the
 * product's own path. Per size:
 *
 * - build: `addMany` of every memory (embedded in batches of 64, each batch appended to the log and
 *   flushed under the namespace's lock, then added to both indexes, the indexes saved as a snapshot
 *   whenever one falls due), and `close()`, which saves them when one is due; the files' sizes;
 * - search, 200 queries drawn like the memories but not among them, k = 10, in rounds after a warm-up
 *   round: the vector index alone (hnswlib through `VectorIndex`, the store's snapshot file loaded
 *   and the records after it added, as `MemoryStore.open` does, since the store does not expose its
 *   index) and the store's hybrid `search` (the query embedded, the vector and words indexes searched
 *   and fused); p50 and p99 of each, and recall@10 of each against exact (brute-force cosine) search
 *   over the same vectors;
 * - reload: a new process (memory-reload.ts) opens the namespace from its folder and runs the same
 *   queries through `search`; its top 10s are compared with this process's, order included.
 *
 * - cold (issue 35), in rounds, the three processes taking turns: hnswlib-node alone reading the
 *   store's index file and answering one query (memory-raw.ts), the anchor; the reload process's
 *   `MemoryStore.open` alone and with its first search by meaning (the open leaves the vectors index
 *   to that search), against the anchor's read alone and with its query; and `meta-agent memory
 *   search` itself, whole process, its wall time and peak memory (peak-at-exit.ts) against the
 *   anchor's; and the folder's bytes against the index file's.
 *
 * The built namespaces are kept between runs in the temporary folder (CACHE, per size and format), as
 * building 100,000 takes minutes; delete it to build them again.
 *
 * Goals: query p50 ≤ 1 ms, recall@10 ≥ 0.95, the same results after a reload; cold open ≤ 2× hnswlib's
 * readIndex, `memory search` ≤ 2× hnswlib's read and query in time and peak memory, the folder ≤ 1.5×
 * the index file. The queries share no
 * word with the memories, so the words side finds nothing and the store's top 10 is the vector
 * index's: its recall is the index's, and its extra time is the store's own (embedding call, log
 * check, words search, fusion).
 *
 * Run: `npx tsc -p . && node scripts/bundle-cli.js && node --no-node-snapshot bench/run.js memory` (about 3 minutes on 2 cores).
 */
import { spawn } from 'node:child_process';
import { mkdir, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { MANIFEST_FILE, type Manifest } from '../memory/manifest.js';
import { MemoryStore } from '../memory/store.js';
import { SEARCH_EF, VectorIndex } from '../memory/vector-index.js';
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
import type { RawReport } from './memory-raw.js';
import type { ReloadReport } from './memory-reload.js';
import { printTable, verdict } from './stats.js';

/** The most a query's median may take. */
export const QUERY_P50_GOAL_MS = 1;
/** The least share of the exact top 10 a search must find. */
export const RECALL_GOAL = 0.95;

/** The most MemoryStore.open, `memory search` and the folder may be of hnswlib's own (issue 35). */
export const OPEN_GOAL = 2;
export const SEARCH_PROCESS_GOAL = 2;
export const DISK_GOAL = 1.5;

const K = 10;
const SEED = 13;
const script = (name: string) => fileURLToPath(new URL(`./${name}`, import.meta.url));
const RELOAD_SCRIPT = script('memory-reload.js');
const RAW_SCRIPT = script('memory-raw.js');
const PEAK_PRELOAD = pathToFileURL(script('peak-at-exit.js')).href;
const CLI = fileURLToPath(new URL('../../bin/meta-agent.js', import.meta.url));
/** Built namespaces, kept between runs; the name says the log format they were built in. */
const CACHE = join(tmpdir(), 'meta-agent-memory-bench-cache', 'format-2');
const NAMESPACE = 'bench';
const MIB = 1024 * 1024;

export interface SearchFigures {
  p50Ms: number;
  p99Ms: number;
  recall: number;
}

export interface MemoryBenchRow {
  memories: number;
  buildMs: number;
  /** Whether the build was kept from an earlier run (CACHE), its figures then that run's. */
  buildKept: boolean;
  closeMs: number;
  logBytes: number;
  /** Records the snapshot holds after close(); a new process adds the others from the log. */
  snapshotRecords: number;
  vectorsBytes: number;
  wordsBytes: number;
  vectorIndex: SearchFigures;
  storeSearch: SearchFigures;
  reload: { openMs: number; firstSearchMs: number; processMs: number; same: number; queries: number };
  cold: ColdFigures;
}

/** Medians over the cold rounds; `raw` is hnswlib-node alone. */
export interface ColdFigures {
  rawOpenMs: number;
  /** hnswlib's read and its first query: what a first search by meaning costs at the least. */
  rawOpenQueryMs: number;
  openMs: number;
  /** MemoryStore.open and its first search by meaning, which loads the vectors index the open left. */
  openSearchMs: number;
  rawProcessMs: number;
  rawPeakBytes: number;
  searchProcessMs: number;
  searchPeakBytes: number;
  indexBytes: number;
  folderBytes: number;
}

/** The sample at index ⌊q·n⌋ of the sorted values (stats.ts's rule). */
function percentile(values: readonly number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
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

interface Finished {
  stdout: string;
  processMs: number;
  peakBytes: number;
}

/** Runs `node ARGS` with peak-at-exit.ts loaded; its stdout, wall time and peak resident memory. */
function node(args: string[], env: NodeJS.ProcessEnv = {}): Promise<Finished> {
  const peakFile = join(
    tmpdir(),
    `meta-agent-bench-peak-${process.pid}-${Math.random().toString(16).slice(2)}`,
  );
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, ['--import', PEAK_PRELOAD, ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, ...env, BENCH_PEAK_FILE: peakFile },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => {
      const processMs = performance.now() - started;
      if (code !== 0) return reject(new Error(`${args.join(' ')} exited with ${code}: ${stderr.trim()}`));
      readFile(peakFile, 'utf8')
        .then((peak) => rm(peakFile).then(() => resolve({ stdout, processMs, peakBytes: Number(peak) })))
        .catch(reject);
    });
  });
}

/** Runs memory-reload.ts in a new Node process on `folder`; its report and wall time. */
async function reloadInNewProcess(folder: string, queries: number): Promise<ReloadReport & Finished> {
  const finished = await node([RELOAD_SCRIPT, folder, String(SEED), String(queries), String(K)]);
  return { ...(JSON.parse(finished.stdout) as ReloadReport), ...finished };
}

function median(values: readonly number[]): number {
  return percentile(values, 0.5);
}

/**
 * `rounds` rounds of: hnswlib alone on the index file, a reload (one query), `meta-agent memory search`
 * in `workspace`; and the folder's bytes against the index file's.
 */
async function cold(
  workspace: string,
  folder: string,
  indexFile: string,
  rounds: number,
): Promise<ColdFigures> {
  const raw: Array<RawReport & Finished> = [];
  const opens: ReloadReport[] = [];
  const searches: Finished[] = [];
  for (let round = 0; round < rounds; round++) {
    const finished = await node([RAW_SCRIPT, join(folder, indexFile), String(SEED)]);
    raw.push({ ...(JSON.parse(finished.stdout) as RawReport), ...finished });
    opens.push(await reloadInNewProcess(folder, 1));
    // No model server: the query goes by words, after the open that every search pays.
    searches.push(
      await node([CLI, 'memory', 'search', queryText(0), '-w', workspace, '-n', NAMESPACE, '--json'], {
        META_AGENT_PROBE_URLS: 'http://127.0.0.1:9/v1',
      }),
    );
  }
  let folderBytes = 0;
  for (const name of await readdir(folder)) folderBytes += (await stat(join(folder, name))).size;
  return {
    rawOpenMs: median(raw.map((each) => each.openMs)),
    rawOpenQueryMs: median(raw.map((each) => each.openMs + each.queryMs)),
    openMs: median(opens.map((each) => each.openMs)),
    openSearchMs: median(opens.map((each) => each.openMs + each.firstSearchMs)),
    rawProcessMs: median(raw.map((each) => each.processMs)),
    rawPeakBytes: median(raw.map((each) => each.peakBytes)),
    searchProcessMs: median(searches.map((each) => each.processMs)),
    searchPeakBytes: median(searches.map((each) => each.peakBytes)),
    indexBytes: (await stat(join(folder, indexFile))).size,
    folderBytes,
  };
}

/** The figures of a build kept in CACHE. */
interface Built {
  buildMs: number;
  closeMs: number;
}

/** The namespace of `size` memories, built now or kept from an earlier run. */
async function built(
  size: number,
  vectors: Float32Array,
  queryVectors: Float32Array,
): Promise<{ workspace: string; folder: string; store: MemoryStore; built: Built & { cached: boolean } }> {
  const workspace = join(CACHE, String(size));
  const folder = join(workspace, '.meta-agent', 'memory', NAMESPACE);
  const figures = join(workspace, 'built.json');
  const open = () => MemoryStore.open({ folder, embedder: lookupEmbedder(vectors, queryVectors) });
  const kept = await readFile(figures, 'utf8').catch(() => undefined);
  if (kept !== undefined) {
    console.log(`memory: ${size.toLocaleString('en-US')} memories kept from an earlier run in ${workspace}`);
    return {
      workspace,
      folder,
      store: await open(),
      built: { ...(JSON.parse(kept) as Built), cached: true },
    };
  }
  await rm(workspace, { recursive: true, force: true });
  await mkdir(workspace, { recursive: true });
  const store = await open();
  const entries = Array.from({ length: size }, (_, item) => ({ text: itemText(item) }));
  console.log(`memory: adding ${size.toLocaleString('en-US')} memories…`);
  let started = performance.now();
  await store.addMany(entries);
  const buildMs = performance.now() - started;
  started = performance.now();
  await store.close();
  const made: Built = { buildMs, closeMs: performance.now() - started };
  await writeFile(figures, JSON.stringify(made));
  return { workspace, folder, store, built: { ...made, cached: false } };
}

async function measure(
  size: number,
  queryVectors: Float32Array,
  rounds: number,
  coldRounds: number,
): Promise<MemoryBenchRow> {
  const queries = queryVectors.length / DIMENSIONS;
  const queryRows = Array.from({ length: queries }, (_, query) => row(queryVectors, query));
  const vectors = clusteredVectors(size, SEED, 1);
  const { workspace, folder, store, built: made } = await built(size, vectors, queryVectors);
  const { buildMs, closeMs } = made;
  let started: number;
  const stats = await store.stats();

  // The vector index as MemoryStore.open builds it in a new process: the snapshot's file, then the
  // records after it. Its labels are the items' numbers (added in order, none forgotten).
  const manifest = JSON.parse(await readFile(join(folder, MANIFEST_FILE), 'utf8')) as Manifest;
  const snapshot = manifest.snapshot;
  if (!snapshot?.vectors || manifest.dimensions === undefined)
    throw new Error(`the store left no vectors snapshot in ${folder}`);
  const indexPath = join(folder, snapshot.vectors.file);
  const index = await VectorIndex.load(
    indexPath,
    [await readFile(indexPath)],
    { dimensions: manifest.dimensions, m: manifest.m, efConstruction: manifest.efConstruction },
    snapshot.records,
    [],
  );
  for (let item = snapshot.records; item < size; item++) index.add(item, row(vectors, item));

  console.log(`memory: searching ${size.toLocaleString('en-US')} memories…`);
  const vectorSamples: number[] = [];
  const storeSamples: number[] = [];
  const vectorTop: number[][] = [];
  const storeTop: number[][] = [];
  for (let round = 0; round <= rounds; round++) {
    for (let query = 0; query < queries; query++) {
      started = performance.now();
      const found = index.search(queryRows[query]!, K);
      const vectorMs = performance.now() - started;
      started = performance.now();
      const hits = await store.search(queryText(query), K);
      const storeMs = performance.now() - started;
      if (round === 0) {
        if (hits.some((hit) => hit.via.includes('words')))
          throw new Error(
            `the words side found memories for ${queryText(query)}: the queries must share no word`,
          );
        vectorTop.push(found.map(({ label }) => label));
        storeTop.push(hits.map((hit) => itemNumber(hit.text)));
      } else {
        vectorSamples.push(vectorMs);
        storeSamples.push(storeMs);
      }
    }
  }
  const exact = Array.from({ length: queries }, (_, query) =>
    exactNeighbours(vectors, queryVectors, query, K),
  );

  console.log(`memory: reopening ${size.toLocaleString('en-US')} memories in a new process…`);
  const reload = await reloadInNewProcess(folder, queries);
  console.log(`memory: cold opens and searches of ${size.toLocaleString('en-US')} memories…`);
  const coldFigures = await cold(workspace, folder, snapshot.vectors.file, coldRounds);
  const same = storeTop.filter((top, query) => top.join() === reload.results[query]?.join()).length;
  const figures = (samples: number[], top: number[][]): SearchFigures => ({
    p50Ms: percentile(samples, 0.5),
    p99Ms: percentile(samples, 0.99),
    recall: recallAt(top, exact),
  });
  return {
    memories: size,
    buildMs,
    buildKept: made.cached,
    closeMs,
    logBytes: stats.logBytes,
    snapshotRecords: snapshot.records,
    vectorsBytes: snapshot.vectors.bytes,
    wordsBytes: snapshot.words.bytes,
    vectorIndex: figures(vectorSamples, vectorTop),
    storeSearch: figures(storeSamples, storeTop),
    reload: {
      openMs: reload.openMs,
      firstSearchMs: reload.firstSearchMs,
      processMs: reload.processMs,
      same,
      queries,
    },
    cold: coldFigures,
  };
}

export async function runMemoryBench(
  options: { sizes?: number[]; queries?: number; rounds?: number; coldRounds?: number } = {},
): Promise<MemoryBenchRow[]> {
  const sizes = options.sizes ?? [10_000, 100_000];
  const queryVectors = clusteredVectors(options.queries ?? 200, SEED, 2);
  const queries = queryVectors.length / DIMENSIONS;
  const rounds = options.rounds ?? 5;
  const rows: MemoryBenchRow[] = [];
  for (const size of sizes) rows.push(await measure(size, queryVectors, rounds, options.coldRounds ?? 3));

  const count = (n: number) => n.toLocaleString('en-US');
  const seconds = (ms: number) => (ms / 1000).toFixed(1);
  const mib = (bytes: number) => (bytes / MIB).toFixed(1);
  printTable(
    `\nmemory: build and reload, ${DIMENSIONS} dimensions; goal: the same top ${K} in a new process`,
    [
      'memories',
      'build s',
      'µs/memory',
      'close s',
      'snapshot holds',
      'log MiB',
      'hnsw MiB',
      'words MiB',
      'reopen s',
      '1st search ms',
      'process s',
      'same results',
      'goal',
    ],
    rows.map((row) => [
      count(row.memories),
      `${seconds(row.buildMs)}${row.buildKept ? ' (kept)' : ''}`,
      ((row.buildMs * 1000) / row.memories).toFixed(0),
      seconds(row.closeMs),
      count(row.snapshotRecords),
      mib(row.logBytes),
      mib(row.vectorsBytes),
      mib(row.wordsBytes),
      seconds(row.reload.openMs),
      row.reload.firstSearchMs.toFixed(1),
      seconds(row.reload.processMs),
      `${row.reload.same}/${row.reload.queries}`,
      verdict(row.reload.same === row.reload.queries),
    ]),
  );
  console.log(
    'build: addMany of every memory (log appended and flushed per batch of 64, snapshots as they fall due);\n' +
      'close: the snapshot, when due; snapshot holds: the records the saved indexes hold; reopen:\n' +
      'MemoryStore.open in the new process, then its first search; process: its whole life, searches included.',
  );
  printTable(
    `\nmemory: search, k = ${K}, ${count(queries)} queries × ${rounds} rounds, hnswlib ef ${SEARCH_EF}; goals: p50 ≤ ${QUERY_P50_GOAL_MS} ms, recall@${K} ≥ ${RECALL_GOAL} against exact search`,
    ['memories', 'search', 'p50 ms', 'p99 ms', `recall@${K}`, 'p50 goal', 'recall goal'],
    rows.flatMap((row) =>
      (
        [
          ['vector index', row.vectorIndex],
          ['store.search (hybrid)', row.storeSearch],
        ] as const
      ).map(([name, figures]) => [
        count(row.memories),
        name,
        figures.p50Ms.toFixed(3),
        figures.p99Ms.toFixed(3),
        figures.recall.toFixed(3),
        verdict(figures.p50Ms <= QUERY_P50_GOAL_MS),
        verdict(figures.recall >= RECALL_GOAL),
      ]),
    ),
    2,
  );
  const ratio = (ours: number, raw: number) => ours / raw;
  printTable(
    `\nmemory: cold, medians of ${options.coldRounds ?? 3} rounds (hnswlib alone, MemoryStore.open, \`memory search\` taking turns); raw: hnswlib-node alone`,
    ['memories', 'figure', 'raw', 'ours', 'ratio', 'goal', 'verdict'],
    rows.flatMap(({ memories, cold: c }) =>
      (
        [
          [
            'open + first search (readIndex + query / MemoryStore.open + search), s',
            c.rawOpenQueryMs / 1000,
            c.openSearchMs / 1000,
            OPEN_GOAL,
          ],
          ['open alone (readIndex / MemoryStore.open), s', c.rawOpenMs / 1000, c.openMs / 1000, OPEN_GOAL],
          [
            'memory search, whole process, s',
            c.rawProcessMs / 1000,
            c.searchProcessMs / 1000,
            SEARCH_PROCESS_GOAL,
          ],
          [
            'memory search, peak memory, MiB',
            c.rawPeakBytes / MIB,
            c.searchPeakBytes / MIB,
            SEARCH_PROCESS_GOAL,
          ],
          ['on disk (index file / folder), MB', c.indexBytes / 1e6, c.folderBytes / 1e6, DISK_GOAL],
        ] as const
      ).map(([figure, raw, ours, goal]) => [
        count(memories),
        figure,
        raw.toFixed(2),
        ours.toFixed(2),
        `${ratio(ours, raw).toFixed(2)}×`,
        `≤ ${goal}×`,
        verdict(ratio(ours, raw) <= goal),
      ]),
    ),
    2,
  );
  console.log(
    'raw: memory-raw.ts, a process that reads the index file with hnswlib-node and answers one query;\n' +
      '`memory search`: bin/meta-agent.js, no model server, so the query goes by words, and the vectors file is\n' +
      'not read (MemoryStore.open leaves it for the first search by meaning, which the first row measures).',
  );
  return rows;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await runMemoryBench();
