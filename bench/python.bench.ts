/**
 * Python sandbox benchmark: what Python code costs a run beside JavaScript. The load time is a fresh
 * runtime's first evaluation (a new child process, Pyodide loaded in it, then `x = 1`), a few times
 * each way, in turns: restored from the build's memory snapshot (goal: under a second, as `doctor`
 * promises) and loaded from scratch.
 * Then, in one warm runtime, the same work in both languages: a condition, a loop's pass (a code node
 * and the condition after it, evaluated in the code's call), a code node with a loop of
 * 10 and of 1000 iterations, and a code node with 10 and with 1000 variables in scope. The two languages
 * take turns in rounds, so that a busy moment slows them alike, and each row gives Python's median as a
 * multiple of JavaScript's, goal ≤ 3× (issue 32: after load, an evaluation costs about what a JavaScript
 * one does), "missed" when over. Figures only: nothing here fails because something is slow.
 *
 * Run: `npx tsc -p . && node --no-node-snapshot dist/bench/python.bench.js`
 */
import { pathToFileURL } from 'node:url';
import { PythonSandbox, Sandbox } from '../src/sandbox/index.js';
import { PythonRuntime, pythonRuntime } from '../src/sandbox/python/python-runtime.js';
import { printTable, quantiles, verdict } from './stats.js';

/** Python's median per evaluation over JavaScript's, at most. */
const PYTHON_GOAL_RATIO = 3;
/** A fresh runtime's first evaluation from the build's snapshot, at most. */
const SNAPSHOT_LOAD_GOAL_MS = 1000;
/** Samples are taken in this many rounds, both languages in turn within each. */
const ROUNDS = 10;

const where = { node: 'bench' };
const LOOP_CONDITION = [{ node: 'loop.a', expression: 'i < 10' }];

export interface PythonLoadRow {
  case: string;
  runs: number;
  medianMs: number;
  p95Ms: number;
}

export interface PythonBenchRow {
  case: string;
  runs: number;
  javascriptUs: number;
  pythonUs: number;
  pythonP95Us: number;
  ratio: number;
}

export interface PythonBenchFigures {
  load: PythonLoadRow[];
  rows: PythonBenchRow[];
}

interface Case {
  name: string;
  javascript: (sandbox: Sandbox) => Promise<unknown>;
  python: (sandbox: PythonSandbox) => Promise<unknown>;
}

/** `total` and `price`, which the code reads, among `count` variables, like a conversation's state. */
function scopeOf(count: number): Record<string, unknown> {
  const scope: Record<string, unknown> = { total: 0, price: 3 };
  for (let i = 2; i < count; i++)
    scope[`v${i}`] = i % 3 === 0 ? i : i % 3 === 1 ? `text ${i}` : { id: i, tags: ['a', 'b'], done: false };
  return scope;
}

function cases(): Case[] {
  const condition = { n: 5 };
  const list: Case[] = [
    {
      name: 'condition n > 1',
      javascript: (sandbox) => sandbox.evaluate('n > 1', condition, where),
      python: (sandbox) => sandbox.evaluate('n > 1', condition, where),
    },
    {
      // A spreadsheet loop's pass: the code node and the wildcard condition after it, in one round trip.
      name: 'loop pass: code node + condition',
      javascript: (sandbox) => sandbox.runCode('i = i + 1', { i: 3 }, where, LOOP_CONDITION),
      python: (sandbox) => sandbox.runCode('i = i + 1', { i: 3 }, where, LOOP_CONDITION),
    },
  ];
  for (const iterations of [10, 1000])
    list.push({
      name: `code node, loop of ${iterations}`,
      javascript: (sandbox) =>
        sandbox.runCode('s = 0; for (let i = 0; i < k; i++) s += i; s', { k: iterations }, where),
      python: (sandbox) =>
        sandbox.runCode('s = 0\nfor i in range(k):\n    s += i\ns', { k: iterations }, where),
    });
  for (const count of [10, 1000]) {
    const scope = scopeOf(count);
    list.push({
      name: `code node, ${count} variables`,
      javascript: (sandbox) => sandbox.runCode('total = total + price * 2', scope, where),
      python: (sandbox) => sandbox.runCode('total = total + price * 2', scope, where),
    });
  }
  return list;
}

/**
 * A fresh runtime's first evaluation (a new child process, Pyodide's load, `x = 1`), `runs` times from
 * the build's snapshot and from scratch, in turns.
 */
async function measureLoad(runs: number): Promise<PythonLoadRow[]> {
  const ways = [
    { case: "restored from the build's snapshot", snapshot: undefined, times: [] as number[] },
    { case: 'loaded from scratch', snapshot: null, times: [] as number[] },
  ];
  for (let i = 0; i < runs; i++) {
    for (const way of ways) {
      const runtime = new PythonRuntime({ snapshot: way.snapshot });
      const sandbox = PythonSandbox.create({ timeoutMs: 1000 }, runtime);
      const started = performance.now();
      await sandbox.runCode('x = 1', {}, where);
      way.times.push(performance.now() - started);
      if (way.snapshot === undefined && runtime.snapshot !== 'restored')
        throw new Error(`the build's snapshot was not restored (${runtime.snapshot}): run \`npm run build\``);
      sandbox.dispose();
      runtime.stop();
    }
  }
  return ways.map((way) => {
    const { median, p95 } = quantiles(way.times);
    return { case: way.case, runs, medianMs: median, p95Ms: p95 };
  });
}

/** Both languages, every case, in rounds after a warm-up; microseconds per evaluation. */
async function measureEvaluations(runs: number): Promise<PythonBenchRow[]> {
  const javascript = await Sandbox.create();
  const python = PythonSandbox.create();
  try {
    const all = cases();
    const times = all.map(() => ({ javascript: [] as number[], python: [] as number[] }));
    for (const { javascript: js, python: py } of all)
      for (let i = 0; i < Math.min(100, runs); i++) {
        await js(javascript);
        await py(python);
      }
    for (let round = 0; round < ROUNDS; round++)
      for (const [index, { javascript: js, python: py }] of all.entries())
        for (let i = 0; i < Math.ceil(runs / ROUNDS); i++) {
          let started = performance.now();
          await js(javascript);
          times[index]!.javascript.push((performance.now() - started) * 1000);
          started = performance.now();
          await py(python);
          times[index]!.python.push((performance.now() - started) * 1000);
        }
    return all.map(({ name }, index) => {
      const js = quantiles(times[index]!.javascript);
      const py = quantiles(times[index]!.python);
      return {
        case: name,
        runs: times[index]!.python.length,
        javascriptUs: js.median,
        pythonUs: py.median,
        pythonP95Us: py.p95,
        ratio: py.median / js.median,
      };
    });
  } finally {
    javascript.dispose();
    python.dispose();
  }
}

/** Runs the benchmark, prints its tables and returns the figures. */
export async function runPythonBench(runs = 1000, loadRuns = 5): Promise<PythonBenchFigures> {
  const load = await measureLoad(loadRuns);
  printTable(
    `Python runtime load: Pyodide in a new child process, and a first evaluation; Node ${process.version}`,
    ['first evaluation of a fresh runtime', 'runs', 'median ms', 'p95 ms', 'goal', ''],
    load.map((row) => {
      const goal = row.case === load[0]!.case;
      return [
        row.case,
        String(row.runs),
        row.medianMs.toFixed(0),
        row.p95Ms.toFixed(0),
        goal ? `≤ ${SNAPSHOT_LOAD_GOAL_MS} ms` : '',
        goal ? verdict(row.medianMs <= SNAPSHOT_LOAD_GOAL_MS) : '',
      ];
    }),
  );
  const rows = await measureEvaluations(runs);
  printTable(
    'per evaluation, warm: Python (Pyodide, child process) beside JavaScript (isolated-vm), interleaved',
    ['case', 'runs', 'JavaScript µs', 'Python µs', 'Python p95 µs', 'Python ÷ JS', 'goal', ''],
    rows.map((r) => [
      r.case,
      String(r.runs),
      r.javascriptUs.toFixed(1),
      r.pythonUs.toFixed(1),
      r.pythonP95Us.toFixed(1),
      `${r.ratio.toFixed(2)}×`,
      `≤ ${PYTHON_GOAL_RATIO}×`,
      verdict(r.ratio <= PYTHON_GOAL_RATIO),
    ]),
  );
  pythonRuntime().stop();
  return { load, rows };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await runPythonBench();
