/**
 * Sandbox benchmark: what running JavaScript in the sandbox costs a run. Cold start is `Sandbox.create`
 * plus the first `runCode` (a new isolate and its context); the warm rows reuse one sandbox, as a run
 * does, for a code node, a condition and a call argument, each with 3 variables in scope and with the
 * same 3 among 100 (the other 97 untouched), so that the two rows differ only by what the code does not
 * use. Each row names its goal for the median and says "missed" when the median is over it; a
 * 100-variable row also gives its median as a multiple of its 3-variable row's. A second table is a
 * loop pass through the interpreter (a code node and a condition) beside raw isolated-vm doing the same
 * work in one `evalSync` with a copy-in (sandbox-loop.ts), goal ≤ 2× raw.
 * Figures only: nothing here fails because something is slow.
 *
 * Run: `npx tsc -p . && node --no-node-snapshot dist/bench/sandbox.bench.js`
 */
import { pathToFileURL } from 'node:url';
import { Sandbox } from '../src/sandbox/index.js';
import { LOOP_PASS_GOAL_RATIO, measureLoopPass, type LoopPassRow } from './sandbox-loop.js';
import { printTable, quantiles, verdict } from './stats.js';

/** Microseconds over a number of runs. */
export interface SandboxBenchRow {
  case: string;
  runs: number;
  medianUs: number;
  p95Us: number;
  /** The median to stay under, in microseconds; absent where there is none (cold start). */
  goalUs?: number;
  /** For a 100-variable row: its median over the median of the same case with 3 variables. */
  vsThreeVariables?: number;
}

/** The figures: cold start first, then the warm cases. */
export interface SandboxBenchFigures {
  coldStart: SandboxBenchRow;
  warm: SandboxBenchRow[];
  loopPass: LoopPassRow[];
}

const where = { node: 'bench' };

/** Goals for the median, in microseconds (issue 11). */
const CODE_NODE_GOAL_US = 50;
const CONDITION_GOAL_US = 20;
const CALL_ARGUMENT_GOAL_US = 20;

/** Samples are taken in this many rounds over all warm cases, so that a busy moment hits them alike. */
const ROUNDS = 10;

/** The variables every warm case reads, and `extra` more it never touches, like a conversation's state. */
function scopeOf(extra: number): Record<string, unknown> {
  const scope: Record<string, unknown> = { total: 0, price: 3, items: [1, 2, 3] };
  for (let i = 0; i < extra; i++)
    scope[`v${i}`] = i % 3 === 0 ? i : i % 3 === 1 ? `text ${i}` : { id: i, tags: ['a', 'b'], done: false };
  return scope;
}

interface WarmCase {
  name: string;
  goalUs: number;
  once: () => Promise<unknown>;
}

/** The warm cases, each with 3 and with 100 variables in scope. */
function warmCases(sandbox: Sandbox): WarmCase[] {
  const cases: WarmCase[] = [];
  for (const [label, scope] of [
    ['3 variables', scopeOf(0)],
    ['100 variables', scopeOf(97)],
  ] as const) {
    cases.push(
      {
        name: `code node, ${label}`,
        goalUs: CODE_NODE_GOAL_US,
        once: () => sandbox.runCode('total = total + price * 2; items.push(total); total', scope, where),
      },
      {
        name: `code node with let/const, ${label}`,
        goalUs: CODE_NODE_GOAL_US,
        once: () => sandbox.runCode('const next = total + price; let label = `#${next}`; next', scope, where),
      },
      {
        name: `condition, ${label}`,
        goalUs: CONDITION_GOAL_US,
        once: () => sandbox.evaluate('total > 3 && items.length < 10', scope, where),
      },
      {
        name: `call argument, ${label}`,
        goalUs: CALL_ARGUMENT_GOAL_US,
        once: () => sandbox.evaluate('items.slice(1)', scope, where),
      },
    );
  }
  return cases;
}

/** Runs every case `runs` times, in rounds, after a warm-up (compile caches, JIT). */
async function timeCases(cases: readonly WarmCase[], runs: number): Promise<number[][]> {
  const times = cases.map((): number[] => []);
  for (const { once } of cases) for (let i = 0; i < Math.min(500, runs); i++) await once();
  for (let round = 0; round < ROUNDS; round++)
    for (const [index, { once }] of cases.entries())
      for (let i = 0; i < Math.ceil(runs / ROUNDS); i++) {
        const started = performance.now();
        await once();
        times[index]!.push((performance.now() - started) * 1000);
      }
  return times;
}

function summarize(name: string, timesUs: number[], goalUs?: number): SandboxBenchRow {
  const { median, p95 } = quantiles(timesUs);
  return { case: name, runs: timesUs.length, medianUs: median, p95Us: p95, ...(goalUs && { goalUs }) };
}

/** Rounds of the loop pass, each a sample of 100 passes on both sides. */
const LOOP_ROUNDS = 40;

/** Runs the benchmark, prints its tables and returns the figures. */
export async function runSandboxBench(runs = 2000, coldRuns = 20): Promise<SandboxBenchFigures> {
  const coldTimes: number[] = [];
  for (let i = 0; i < coldRuns; i++) {
    const started = performance.now();
    const sandbox = await Sandbox.create();
    await sandbox.runCode('x = 1', {}, where);
    coldTimes.push((performance.now() - started) * 1000);
    sandbox.dispose();
  }
  const coldStart = summarize('cold start: create + first runCode', coldTimes);

  const sandbox = await Sandbox.create();
  try {
    const cases = warmCases(sandbox);
    const times = await timeCases(cases, runs);
    const warm = cases.map(({ name, goalUs }, i) => summarize(name, times[i]!, goalUs));
    for (const row of warm) {
      const threeVariables = warm.find((r) => r.case === row.case.replace('100 variables', '3 variables'));
      if (threeVariables && threeVariables !== row)
        row.vsThreeVariables = row.medianUs / threeVariables.medianUs;
    }
    printRows([coldStart, ...warm]);
    const loopPass = await measureLoopPass(LOOP_ROUNDS);
    printLoopPass(loopPass);
    return { coldStart, warm, loopPass };
  } finally {
    sandbox.dispose();
  }
}

/** How much dearer 97 variables the code does not touch may make an evaluation than none. */
const UNTOUCHED_VARIABLES_GOAL = 1.2;

function printRows(rows: readonly SandboxBenchRow[]): void {
  printTable(
    `sandbox benchmark: isolated-vm, Node ${process.version}`,
    ['case', 'runs', 'median µs', 'p95 µs', 'goal', '', 'vs 3 variables', 'goal', ''],
    rows.map((r) => [
      r.case,
      String(r.runs),
      r.medianUs.toFixed(1),
      r.p95Us.toFixed(1),
      r.goalUs === undefined ? '' : `≤ ${r.goalUs}`,
      r.goalUs === undefined ? '' : verdict(r.medianUs <= r.goalUs),
      r.vsThreeVariables === undefined ? '' : `${r.vsThreeVariables.toFixed(2)}×`,
      r.vsThreeVariables === undefined ? '' : `≤ ${UNTOUCHED_VARIABLES_GOAL}×`,
      r.vsThreeVariables === undefined ? '' : verdict(r.vsThreeVariables <= UNTOUCHED_VARIABLES_GOAL),
    ]),
  );
}

function printLoopPass(rows: readonly LoopPassRow[]): void {
  printTable(
    'loop pass: the interpreter through a code node and a condition, beside raw isolated-vm (one evalSync with a copy-in), interleaved',
    ['case', 'samples', 'ours µs', 'raw µs', 'ours ÷ raw', 'goal', ''],
    rows.map((r) => [
      r.case,
      String(r.samples),
      r.oursUs.toFixed(1),
      r.rawUs.toFixed(1),
      `${r.ratio.toFixed(2)}×`,
      `≤ ${LOOP_PASS_GOAL_RATIO}× raw`,
      verdict(r.ratio <= LOOP_PASS_GOAL_RATIO),
    ]),
  );
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await runSandboxBench();
