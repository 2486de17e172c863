/**
 * The memory benchmark's second process: opens a namespace another process built and closed, and runs
 * the benchmark's queries through `MemoryStore.search`, to show that the saved index answers as the
 * one built in memory did. Prints one JSON line: how long the open took, and each query's top 10 as
 * the benchmark's item numbers.
 *
 * Usage: `node dist/bench/memory-reload.js FOLDER SEED QUERIES K` (memory.bench.ts spawns it).
 */
import { performance } from 'node:perf_hooks';
import { MemoryStore } from '../memory/store.js';
import { clusteredVectors, itemNumber, lookupEmbedder, queryText } from './memory-data.js';

/** What the benchmark reads from this process's stdout. */
export interface ReloadReport {
  openMs: number;
  /** The first search, which may pay for what the open left to do. */
  firstSearchMs: number;
  /** Per query, the item numbers of its top `k`, closest first. */
  results: number[][];
}

async function main(): Promise<void> {
  const [folder, seed, queries, k] = process.argv.slice(2);
  if (!folder || !seed || !queries || !k) throw new Error('usage: memory-reload.js FOLDER SEED QUERIES K');
  const count = Number(queries);
  const queryVectors = clusteredVectors(count, Number(seed), 2);
  const started = performance.now();
  const store = await MemoryStore.open({ folder, embedder: lookupEmbedder(undefined, queryVectors) });
  const openMs = performance.now() - started;
  const results: number[][] = [];
  let firstSearchMs = 0;
  for (let query = 0; query < count; query++) {
    const searchStarted = performance.now();
    const hits = await store.search(queryText(query), Number(k));
    if (query === 0) firstSearchMs = performance.now() - searchStarted;
    results.push(hits.map((hit) => itemNumber(hit.text)));
  }
  const report: ReloadReport = { openMs, firstSearchMs, results };
  process.stdout.write(`${JSON.stringify(report)}\n`);
}

await main();
