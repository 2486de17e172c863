/**
 * Engine benchmark: what the interpreter costs per node step, beside LangGraph.js running the same shapes
 * of graph in the same process, and what a step whose code runs in the sandbox costs.
 *
 * - chain of N nodes (10, 100, 1 000): `thought_exact` nodes one after the other, each storing a short
 *   text in a variable; LangGraph: N nodes in a row, each updating two state fields.
 * - loop: a hub and `transition` nodes cycling back to it, left by a `lap.n` transition; LangGraph: two
 *   nodes and a conditional edge back. No model, no sandbox: these rows are the interpreter's own
 *   overhead, held to 20 µs a step.
 * - code node, condition, call argument: a chain of code nodes `x = i`; a counting loop whose `more.*`
 *   wildcard has an `i < n` condition; a chain of function calls `y = id(i + 1)` whose argument is
 *   evaluated in the sandbox. Each is timed per node step, interpreter included (about a microsecond).
 * - cold start: an interpreter, its sandbox and a first code node.
 *
 * Everything runs through `applyFn` with zero-latency in-process models. A sample is one whole run of a
 * graph; its time divided by the nodes it ran is its µs per step. The cases run in rounds, one run of
 * each system and each case per round, so both systems meet the same machine. Figures only: nothing here
 * fails because something is slow; a row whose goal is missed says so.
 *
 * Run: `npx tsc -p . && node --no-node-snapshot dist/bench/engine.bench.js`
 */
import { pathToFileURL } from 'node:url';
import { Annotation, END, START, StateGraph } from '@langchain/langgraph';
import { Interpreter } from '../src/engine/index.js';
import { graphFileSchema, type NodeSpecInput } from '../src/graph/schema.js';
import { StaticGraph } from '../src/graph/view.js';
import { instantModels as models } from './instant-models.js';
import { printTable, quantiles, verdict } from './stats.js';

/** Per-step goals, in µs. */
export const GOALS = { step: 20, codeNode: 50, condition: 20, callArgument: 20 } as const;

/** Per-step times of one engine on one graph. */
export interface StepTimes {
  /** Nodes run per sample (one sample is one whole run of the graph). */
  steps: number;
  samples: number;
  medianUs: number;
  p95Us: number;
}

export interface EngineBenchRow {
  case: string;
  ours: StepTimes;
  langGraph?: StepTimes;
  goalUs?: number;
}

export interface EngineBenchFigures {
  rows: EngineBenchRow[];
  coldStart: { samples: number; medianMs: number; p95Ms: number };
}

function graphOf(name: string, nodes: NodeSpecInput[]): StaticGraph {
  return new StaticGraph(graphFileSchema.parse({ name, nodes }));
}

/** `chain()` and then `c1` … `c{n-1}`, each `last = step i`; the last returns. */
function chainGraph(n: number): StaticGraph {
  const name = (i: number) => (i === 0 ? 'chain()' : `c${i}`);
  return graphOf(
    'chain',
    Array.from({ length: n }, (_, i) => ({
      name: name(i),
      action: 'thought_exact' as const,
      instruction: `last = step ${i}`,
      transitions: [i === n - 1 ? 'return' : name(i + 1)],
    })),
  );
}

/** `loop()` -> `hub` -> `lap.n`: `lap.1` … `lap.{laps-1}` go back to the hub, `lap.{laps}` returns. */
function visitLoopGraph(laps: number): StaticGraph {
  return graphOf('visit_loop', [
    { name: 'loop()', action: 'transition', transitions: ['hub'] },
    { name: 'hub', action: 'transition', transitions: ['lap.n'] },
    ...Array.from({ length: laps }, (_, i) => ({
      name: `lap.${i + 1}`,
      action: 'transition' as const,
      transitions: [i === laps - 1 ? 'return' : 'hub'],
    })),
  ]);
}

/** Conditions the sandbox evaluates each lap of the condition loop. */
const CONDITIONS_PER_LAP = 10;

/**
 * `count(n)` -> `hub` -> `more.*`: the members `more.a` … `more.j` have conditions `n < -i` that the
 * sandbox evaluates and finds false, so the else member `more.k` goes on to `lap.n`, which goes back to
 * the hub until `lap.{laps}` returns. Ten conditions and three steps a lap.
 */
function conditionLoopGraph(laps: number): StaticGraph {
  return graphOf('condition_loop', [
    { name: 'count(n)', action: 'transition', transitions: ['hub'] },
    { name: 'hub', action: 'transition', transitions: ['more.*'] },
    ...Array.from({ length: CONDITIONS_PER_LAP }, (_, i) => ({
      name: `more.${String.fromCharCode(97 + i)}`,
      action: 'transition' as const,
      booleanCondition: `n < ${-i}`,
      transitions: ['return'],
    })),
    {
      name: `more.${String.fromCharCode(97 + CONDITIONS_PER_LAP)}`,
      action: 'transition',
      transitions: ['lap.n'],
    },
    ...Array.from({ length: laps }, (_, i) => ({
      name: `lap.${i + 1}`,
      action: 'transition' as const,
      transitions: [i === laps - 1 ? 'return' : 'hub'],
    })),
  ]);
}

/** `code()` and `k1` … `k{n-1}`, each a code node `x = i`; the last returns. */
function codeChainGraph(n: number): StaticGraph {
  const name = (i: number) => (i === 0 ? 'code()' : `k${i}`);
  return graphOf(
    'code_chain',
    Array.from({ length: n }, (_, i) => ({
      name: name(i),
      action: 'code' as const,
      instruction: `x = ${i}`,
      transitions: [i === n - 1 ? 'return' : name(i + 1)],
    })),
  );
}

/**
 * `calls()` and `f1` … `f{n-1}`, each a function node `y = id(i + 1)` whose argument the sandbox
 * evaluates; `id(v)` returns at once. Two steps a call.
 */
function callChainGraph(n: number): StaticGraph {
  const name = (i: number) => (i === 0 ? 'calls()' : `f${i}`);
  return graphOf('call_chain', [
    ...Array.from({ length: n }, (_, i) => ({
      name: name(i),
      action: 'local_function' as const,
      instruction: `y = id(${i} + 1)`,
      transitions: [i === n - 1 ? 'return' : name(i + 1)],
    })),
    { name: 'id(v)', action: 'transition', transitions: ['return'] },
  ]);
}

/** One timed run of a graph, returning the nodes it ran. */
type Run = () => Promise<number>;

/** The state every LangGraph node updates: `steps` counts the nodes run, `last` is the chain's text. */
const BenchState = Annotation.Root({
  steps: Annotation<number>,
  last: Annotation<string>,
});

/** Nodes are added in a loop, so the builder is typed with node names as plain strings. */
type Builder = StateGraph<typeof BenchState.spec, typeof BenchState.State, typeof BenchState.Update, string>;

/** START -> c0 -> … -> c{n-1} -> END, each node `{ steps: steps + 1, last: 'step i' }`. */
function langGraphChain(n: number): Run {
  const builder = new StateGraph(BenchState) as unknown as Builder;
  for (let i = 0; i < n; i++)
    builder.addNode(`c${i}`, (s: typeof BenchState.State) => ({ steps: s.steps + 1, last: `step ${i}` }));
  builder.addEdge(START, 'c0');
  for (let i = 1; i < n; i++) builder.addEdge(`c${i - 1}`, `c${i}`);
  builder.addEdge(`c${n - 1}`, END);
  const graph = builder.compile();
  return async () => (await graph.invoke({ steps: 0, last: '' }, { recursionLimit: n + 10 })).steps;
}

/** START -> tick -> more, and a conditional edge from `more` back to `tick` until `laps` laps ran. */
function langGraphLoop(laps: number): Run {
  const builder = new StateGraph(BenchState) as unknown as Builder;
  builder.addNode('tick', (s: typeof BenchState.State) => ({ steps: s.steps + 1 }));
  builder.addNode('more', (s: typeof BenchState.State) => ({ steps: s.steps + 1 }));
  builder.addEdge(START, 'tick');
  builder.addEdge('tick', 'more');
  builder.addConditionalEdges('more', (s: typeof BenchState.State) => (s.steps < 2 * laps ? 'tick' : END));
  const graph = builder.compile();
  return async () => (await graph.invoke({ steps: 0, last: '' }, { recursionLimit: 2 * laps + 10 })).steps;
}

/** A case: our run of a graph, LangGraph's run of the same shape where there is one, and its rounds. */
interface Case {
  name: string;
  ours: Run;
  langGraph?: Run;
  rounds: number;
  goalUs?: number;
}

/** Times every case in rounds (each round runs each case once on each system), after warm-up rounds. */
async function measureInterleaved(cases: Case[]): Promise<EngineBenchRow[]> {
  const samples = cases.map(() => ({ ours: [] as number[], langGraph: [] as number[], steps: [0, 0] }));
  const time = async (run: Run, into: number[], steps: number[], which: number, warm: boolean) => {
    const started = performance.now();
    const ran = await run();
    if (warm) return;
    into.push(((performance.now() - started) * 1000) / ran);
    steps[which] = ran;
  };
  const most = Math.max(...cases.map((c) => c.rounds));
  const warmUp = Math.ceil(most / 10);
  for (let round = 0; round < warmUp + most; round++)
    for (const [i, c] of cases.entries()) {
      if (round >= warmUp + c.rounds) continue;
      const s = samples[i]!;
      await time(c.ours, s.ours, s.steps, 0, round < warmUp);
      if (c.langGraph) await time(c.langGraph, s.langGraph, s.steps, 1, round < warmUp);
    }
  return cases.map((c, i) => {
    const s = samples[i]!;
    const times = (values: number[], steps: number): StepTimes => {
      const { median, p95 } = quantiles(values);
      return { steps, samples: values.length, medianUs: median, p95Us: p95 };
    };
    return {
      case: c.name,
      ours: times(s.ours, s.steps[0]!),
      ...(c.langGraph && { langGraph: times(s.langGraph, s.steps[1]!) }),
      ...(c.goalUs !== undefined && { goalUs: c.goalUs }),
    };
  });
}

/**
 * A run of `fn(...args)` on `graph` by an interpreter of its own (kept for the whole benchmark), counting
 * what it ran in units of `stepsPerUnit` node steps (a lap, a call).
 */
async function ours(
  graph: StaticGraph,
  fn: string,
  agents: Interpreter[],
  { args = [], stepsPerUnit = 1 }: { args?: unknown[]; stepsPerUnit?: number } = {},
): Promise<Run> {
  const agent = await Interpreter.create({ graph, models });
  agents.push(agent);
  return async () => (await agent.applyFn(fn, args)).state.steps / stepsPerUnit;
}

/** Runs the benchmark, prints a table and returns the figures. `scale` multiplies the rounds. */
export async function runEngineBench(options: { scale?: number } = {}): Promise<EngineBenchFigures> {
  const scale = options.scale ?? 1;
  const rounds = (n: number) => Math.max(3, Math.round(n * scale));
  const agents: Interpreter[] = [];
  try {
    const cases: Case[] = [];
    for (const [nodes, count] of [
      [10, 400],
      [100, 60],
      [1000, 12],
    ] as const)
      cases.push({
        name: `chain, ${nodes} nodes`,
        ours: await ours(chainGraph(nodes), 'chain', agents),
        langGraph: langGraphChain(nodes),
        rounds: rounds(count),
        goalUs: GOALS.step,
      });
    cases.push(
      {
        name: 'loop, 50 laps',
        ours: await ours(visitLoopGraph(50), 'loop', agents),
        langGraph: langGraphLoop(50),
        rounds: rounds(60),
        goalUs: GOALS.step,
      },
      {
        name: 'code node (sandbox), 100 in a row',
        ours: await ours(codeChainGraph(100), 'code', agents),
        rounds: rounds(60),
        goalUs: GOALS.codeNode,
      },
      {
        name: 'condition (sandbox), µs a condition, 10 to 3 steps',
        ours: await ours(conditionLoopGraph(50), 'count', agents, {
          args: [1],
          stepsPerUnit: 3 / CONDITIONS_PER_LAP,
        }),
        rounds: rounds(60),
        goalUs: GOALS.condition,
      },
      {
        name: 'call argument (sandbox), µs a call of 2 steps',
        ours: await ours(callChainGraph(100), 'calls', agents, { stepsPerUnit: 2 }),
        rounds: rounds(60),
        goalUs: GOALS.callArgument,
      },
    );
    const rows = await measureInterleaved(cases);
    const coldStart = await measureColdStart(20);
    const figures = { rows, coldStart };
    printFigures(figures);
    return figures;
  } finally {
    for (const agent of agents) agent.dispose();
  }
}

/** A new interpreter with its own sandbox, running one code node: what the first code node of a run costs. */
async function measureColdStart(samples: number): Promise<EngineBenchFigures['coldStart']> {
  const graph = codeChainGraph(1);
  const times: number[] = [];
  for (let i = 0; i < samples; i++) {
    const started = performance.now();
    const agent = await Interpreter.create({ graph, models });
    await agent.applyFn('code', []);
    times.push(performance.now() - started);
    agent.dispose();
  }
  const { median, p95 } = quantiles(times);
  return { samples, medianMs: median, p95Ms: p95 };
}

function printFigures({ rows, coldStart }: EngineBenchFigures): void {
  const us = (x: number | undefined) => (x === undefined ? '–' : x.toFixed(1));
  printTable(
    `engine benchmark: interpreter vs LangGraph.js, interleaved, zero-latency models, Node ${process.version}`,
    [
      'case (µs a step unless it says)',
      'runs',
      'µs',
      'p95',
      'LangGraph µs',
      'p95',
      'LangGraph ÷ ours',
      'goal',
      '',
    ],
    rows.map((r) => [
      r.case,
      String(r.ours.samples),
      us(r.ours.medianUs),
      us(r.ours.p95Us),
      us(r.langGraph?.medianUs),
      us(r.langGraph?.p95Us),
      r.langGraph ? `${(r.langGraph.medianUs / r.ours.medianUs).toFixed(1)}×` : '–',
      r.goalUs === undefined ? '' : `≤ ${r.goalUs} µs`,
      r.goalUs === undefined ? '' : verdict(r.ours.medianUs <= r.goalUs),
    ]),
  );
  console.log(
    `cold start (interpreter + isolate + first code node): median ${coldStart.medianMs.toFixed(1)} ms, p95 ${coldStart.p95Ms.toFixed(1)} ms`,
  );
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await runEngineBench();
