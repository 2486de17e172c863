/**
 * Designer benchmark: designs of 5, 20 and 40 nodes against the loopback OpenAI server with 300 ms of
 * latency per call, through the real OpenAI client. Each size runs twice in the same process: with the
 * designer's default concurrency, and one call at a time (concurrency 1) as the baseline. The figures
 * show that the sequential round trips, and so the wall time, do not grow with the node count.
 *
 * Run: `npx tsc -p . && node --no-node-snapshot bench/run.js design` (or dist/bench/design.bench.js)
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { designAgent } from '../meta/design.js';
import { DEFAULT_DESIGN_LIMITS } from '../meta/limits.js';
import { OpenAIModel } from '../src/llm/openai.js';
import type { ModelSet } from '../src/llm/types.js';
import { cooperativeDesigner } from '../test/fixtures/design/replies.js';
import { startOpenAIServer } from '../test/support/openai-server.js';
import { printTable } from './stats.js';

/** Latency the server adds to every call. */
export const LATENCY_MS = 300;

/** Designs of one size at one concurrency, measured. */
export interface DesignBenchRow {
  nodes: number;
  concurrency: number;
  calls: number;
  roundTrips: number;
  /** Runs measured: the concurrent designs are repeated, the slow one-at-a-time baseline runs once. */
  runs: number;
  /** Wall time of a design, median and 95th percentile of the runs. */
  medianSeconds: number;
  p95Seconds: number;
  /** The median in units of one call's latency: what the round trips cost, plus our own overhead. */
  latencies: number;
}

/** Runs of each concurrent design. */
const REPEATS = 5;

/** Designs a graph of `nodes` nodes with `concurrency` calls in flight: its calls, round trips and seconds. */
async function measureOnce(nodes: number, concurrency: number, outDir: string) {
  const server = await startOpenAIServer({ latencyMs: LATENCY_MS, reply: cooperativeDesigner(nodes) });
  try {
    const model = new OpenAIModel({ baseUrl: server.url, model: 'gpt-4o-mini', maxRetries: 0 });
    const models: ModelSet = { chatbot: model, classifier: model, userbot: model, embedder: model };
    const started = performance.now();
    const outcome = await designAgent({
      description: 'a tutor bot that teaches a lesson part by part',
      name: `bench_${nodes}_${concurrency}`,
      outDir,
      models,
      limits: { concurrency },
    });
    const seconds = (performance.now() - started) / 1000;
    if (!outcome.ok)
      throw new Error(`the ${nodes}-node design failed at ${outcome.stage}: ${outcome.reason}`);
    return { calls: outcome.figures.calls, roundTrips: outcome.figures.roundTrips, seconds };
  } finally {
    await server.close();
  }
}

async function measure(
  nodes: number,
  concurrency: number,
  runs: number,
  outDir: string,
): Promise<DesignBenchRow> {
  const samples = [];
  for (let i = 0; i < runs; i++) samples.push(await measureOnce(nodes, concurrency, outDir));
  const seconds = samples.map((s) => s.seconds).sort((a, b) => a - b);
  const at = (q: number) => seconds[Math.min(seconds.length - 1, Math.ceil(q * seconds.length) - 1)]!;
  const { calls, roundTrips } = samples[0]!;
  return {
    nodes,
    concurrency,
    calls,
    roundTrips,
    runs,
    medianSeconds: at(0.5),
    p95Seconds: at(0.95),
    latencies: (at(0.5) * 1000) / LATENCY_MS,
  };
}

/** Runs the benchmark, prints a table and returns its rows (concurrent and baseline for each size). */
export async function runDesignBench(sizes: readonly number[] = [5, 20, 40]): Promise<DesignBenchRow[]> {
  const outDir = await mkdtemp(join(tmpdir(), 'meta-agent-design-bench-'));
  const rows: DesignBenchRow[] = [];
  try {
    // A warm-up design of the largest size loads Graphviz (WASM) and the sandbox and warms the JIT, so
    // the first rows are not charged for what a long-running process pays once.
    await measureOnce(Math.max(...sizes), DEFAULT_DESIGN_LIMITS.concurrency, outDir);
    for (const nodes of sizes) {
      rows.push(await measure(nodes, DEFAULT_DESIGN_LIMITS.concurrency, REPEATS, outDir));
      rows.push(await measure(nodes, 1, 1, outDir));
    }
  } finally {
    await rm(outDir, { recursive: true, force: true });
  }
  printRows(rows);
  return rows;
}

function printRows(rows: readonly DesignBenchRow[]): void {
  printTable(
    `design benchmark: loopback OpenAI server, ${LATENCY_MS} ms latency per call`,
    ['nodes', 'concurrency', 'calls', 'round trips', 'runs', 'median s', 'p95 s', `× ${LATENCY_MS} ms`],
    rows.map((r) => [
      String(r.nodes),
      r.concurrency === 1 ? '1 (baseline)' : String(r.concurrency),
      String(r.calls),
      String(r.roundTrips),
      String(r.runs),
      r.medianSeconds.toFixed(2),
      r.p95Seconds.toFixed(2),
      r.latencies.toFixed(1),
    ]),
    0,
  );
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await runDesignBench();
