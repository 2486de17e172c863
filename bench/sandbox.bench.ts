/**
 * Sandbox benchmark: what running JavaScript in the sandbox costs a run. Cold start is `Sandbox.create`
 * plus the first `runCode` (a new isolate); the warm rows reuse one isolate, as a run does, for many
 * code nodes with a small scope and with a 100-variable scope, and for a condition (`evaluate`).
 * Figures only: nothing here asserts a speed.
 *
 * Run: `npx tsc -p . && node --no-node-snapshot dist/bench/sandbox.bench.js`
 */
import { pathToFileURL } from 'node:url';
import { Sandbox } from '../src/sandbox/index.js';
import { printTable, quantiles } from './stats.js';

/** Milliseconds over a number of runs. */
export interface SandboxBenchRow {
  case: string;
  runs: number;
  medianMs: number;
  p95Ms: number;
}

/** The figures: cold start first, then the warm cases. */
export interface SandboxBenchFigures {
  coldStart: SandboxBenchRow;
  warm: SandboxBenchRow[];
}

const where = { node: 'bench' };

/** A scope of `count` variables of mixed kinds, like a conversation's state. */
function scopeOf(count: number): Record<string, unknown> {
  const scope: Record<string, unknown> = {};
  for (let i = 0; i < count; i++)
    scope[`v${i}`] = i % 3 === 0 ? i : i % 3 === 1 ? `text ${i}` : { id: i, tags: ['a', 'b'], done: false };
  return scope;
}

async function timeRuns(name: string, runs: number, once: () => Promise<unknown>): Promise<SandboxBenchRow> {
  for (let i = 0; i < Math.min(100, runs); i++) await once(); // warm-up: compile caches, JIT
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const started = performance.now();
    await once();
    times.push(performance.now() - started);
  }
  return summarize(name, times);
}

function summarize(name: string, times: number[]): SandboxBenchRow {
  const { median, p95 } = quantiles(times);
  return { case: name, runs: times.length, medianMs: median, p95Ms: p95 };
}

/** Runs the benchmark, prints a table and returns the figures. */
export async function runSandboxBench(runs = 2000, coldRuns = 20): Promise<SandboxBenchFigures> {
  const coldTimes: number[] = [];
  for (let i = 0; i < coldRuns; i++) {
    const started = performance.now();
    const sandbox = await Sandbox.create();
    await sandbox.runCode('x = 1', {}, where);
    coldTimes.push(performance.now() - started);
    sandbox.dispose();
  }
  const coldStart = summarize('cold start: create + first runCode', coldTimes);

  const sandbox = await Sandbox.create();
  try {
    const small = { total: 0, price: 3, items: [] as number[] };
    const large = scopeOf(100);
    const warm = [
      await timeRuns('runCode, 3 variables', runs, () =>
        sandbox.runCode('total = total + price * 2; items.push(total); total', small, where),
      ),
      await timeRuns('runCode, 3 variables, let/const', runs, () =>
        sandbox.runCode('const next = total + price; let label = `#${next}`; next', small, where),
      ),
      await timeRuns('runCode, 100 variables', runs, () =>
        sandbox.runCode('v2.done = true; result = v0 + v3', large, where),
      ),
      await timeRuns('evaluate, 3 variables', runs, () =>
        sandbox.evaluate('total > 3 && items.length < 10', small, where),
      ),
      await timeRuns('evaluate, 100 variables', runs, () => sandbox.evaluate('v3 > 1', large, where)),
    ];
    printRows([coldStart, ...warm]);
    return { coldStart, warm };
  } finally {
    sandbox.dispose();
  }
}

function printRows(rows: readonly SandboxBenchRow[]): void {
  printTable(
    `sandbox benchmark: isolated-vm, Node ${process.version}`,
    ['case', 'runs', 'median ms', 'p95 ms'],
    rows.map((r) => [r.case, String(r.runs), r.medianMs.toFixed(3), r.p95Ms.toFixed(3)]),
  );
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await runSandboxBench();
