/**
 * The memory benchmark's anchor: hnswlib-node alone, in a new process, on the index file the store
 * saved. Reads it (`readIndex`) and answers one query of the benchmark's, as little as a process can
 * do to search those vectors. Prints one JSON line: how long the read and the query took.
 *
 * Usage: `node dist/bench/memory-raw.js INDEX_FILE SEED` (memory.bench.ts spawns it).
 */
import hnswlib from 'hnswlib-node';
import { performance } from 'node:perf_hooks';
import { clusteredVectors, DIMENSIONS, row } from './memory-data.js';

/** What the benchmark reads from this process's stdout. */
export interface RawReport {
  openMs: number;
  queryMs: number;
}

const [file, seed] = process.argv.slice(2);
if (!file || !seed) throw new Error('usage: memory-raw.js INDEX_FILE SEED');
const started = performance.now();
const index = new hnswlib.HierarchicalNSW('cosine', DIMENSIONS);
await index.readIndex(file);
const openMs = performance.now() - started;
const queried = performance.now();
index.setEf(64);
index.searchKnn(row(clusteredVectors(1, Number(seed), 2), 0), 10);
const report: RawReport = { openMs, queryMs: performance.now() - queried };
process.stdout.write(`${JSON.stringify(report)}\n`);
