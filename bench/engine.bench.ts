/**
 * Engine benchmark: what the interpreter itself costs per node step, beside LangGraph.js running the same
 * shapes of graph in the same process.
 *
 * - chain: N `thought_exact` nodes, each storing a short text in a variable, one after the other.
 * - loop (visit count): a hub and `transition` nodes cycling back to it, left by a `lap.n` transition.
 *   No model, no sandbox: these two rows are the interpreter's own overhead (target ≤ 20 µs a step).
 * - loop with conditions: a counter, `i = i + 1` in a code node and a `more.*` wildcard whose `i < n`
 *   condition the sandbox evaluates. Its figure is mostly the sandbox's (a fresh context per evaluation).
 * - chain of code nodes and cold start (interpreter + isolate + first code node): the sandbox's cost as a
 *   run pays it. The sandbox alone is measured in sandbox.bench.ts.
 *
 * Runs go through `applyFn` with a zero-latency in-process model (no node here calls it, but a run needs
 * one per role). A sample is one whole run; its time divided by the nodes it ran is its µs per step.
 * LangGraph.js gets a StateGraph with the same nodes (trivial state updates) and the same edges, loops
 * through a conditional edge; its steps are counted the same way. Figures only: nothing here asserts a
 * speed.
 *
 * Run: `npx tsc -p . && node --no-node-snapshot dist/bench/engine.bench.js`
 */
import { pathToFileURL } from 'node:url';
import { Annotation, END, START, StateGraph } from '@langchain/langgraph';
import { Interpreter } from '../src/engine/index.js';
import { graphFileSchema, type NodeSpecInput } from '../src/graph/schema.js';
import { StaticGraph } from '../src/graph/view.js';
import type { Completion, LanguageModel, ModelSet } from '../src/llm/types.js';
import { printTable, quantiles } from './stats.js';

/** The interpreter overhead the engine aims for, per node step. */
export const TARGET_US_PER_STEP = 20;

/** Per-step times of one engine on one graph. */
export interface StepTimes {
  /** Nodes run per sample (one sample is one whole run of the graph). */
  steps: number;
  samples: number;
  medianUs: number;
  p95Us: number;
}

/** One graph shape: our interpreter's figures, and LangGraph.js's where it ran the same shape. */
export interface EngineBenchRow {
  case: string;
  ours: StepTimes;
  langGraph?: StepTimes;
  /** LangGraph's median over ours: how many times faster the interpreter takes a step. */
  ratio?: number;
}

/** The figures of a run of the benchmark. */
export interface EngineBenchFigures {
  rows: EngineBenchRow[];
  /** Interpreter + sandbox creation + the first code node, in ms. */
  coldStart: { samples: number; medianMs: number; p95Ms: number };
  /** True when the no-model, no-sandbox rows are within TARGET_US_PER_STEP at the median. */
  meetsTarget: boolean;
}

const COMPLETION: Completion = {
  text: 'ok',
  usage: { promptTokens: 0, completionTokens: 0 },
  model: 'instant',
};

/** A model that answers at once: a run's figures are then the engine's own. */
const instant: LanguageModel = {
  id: 'bench:instant',
  modelName: 'instant',
  scripted: true,
  complete: () => Promise.resolve(COMPLETION),
  stream: (_request, onChunk) => {
    onChunk({ delta: COMPLETION.text });
    return Promise.resolve(COMPLETION);
  },
  embed: (texts) =>
    Promise.resolve({ vectors: texts.map(() => [0]), usage: COMPLETION.usage, model: 'instant' }),
};
const models: ModelSet = { chatbot: instant, classifier: instant, userbot: instant, embedder: instant };

function graphOf(name: string, nodes: NodeSpecInput[]): StaticGraph {
  return new StaticGraph(graphFileSchema.parse({ name, nodes }));
}

/** `chain()` and then `c1` … `c{n-1}`, each `last = step i`; the last returns. */
function chainGraph(n: number, action: 'thought_exact' | 'thought' = 'thought_exact'): StaticGraph {
  const name = (i: number) => (i === 0 ? 'chain()' : `c${i}`);
  return graphOf(
    'chain',
    Array.from({ length: n }, (_, i) => ({
      name: name(i),
      action,
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

/** `count(n)` sets i = 0; `tick` adds one; `more.a` (i < n) goes back to tick, `more.b` returns i. */
function conditionLoopGraph(): StaticGraph {
  return graphOf('condition_loop', [
    { name: 'count(n)', action: 'code', instruction: 'i = 0', transitions: ['tick'] },
    { name: 'tick', action: 'code', instruction: 'i = i + 1', transitions: ['more.*'] },
    { name: 'more.a', action: 'transition', booleanCondition: 'i < n', transitions: ['tick'] },
    { name: 'more.b', action: 'transition', transitions: ['return i'] },
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

/** One timed run of a graph, returning the nodes it ran. */
type Run = () => Promise<number>;

/** Per-step times of `samples` runs of `fn(...args)` on `graph`, after a fifth as many warm-up runs. */
async function measureOurs(
  graph: StaticGraph,
  fn: string,
  args: unknown[],
  samples: number,
): Promise<StepTimes> {
  const agent = await Interpreter.create({ graph, models });
  try {
    return await measure(async () => (await agent.applyFn(fn, args)).state.steps, samples);
  } finally {
    agent.dispose();
  }
}

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

/**
 * START -> tick -> more, and a conditional edge from `more` back to `tick` while fewer than `laps` ticks
 * ran, else END: the shape of both our loops (two nodes per lap).
 */
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

/** Per-step times of `samples` runs, after a fifth as many warm-up runs (JIT, caches). */
async function measure(run: Run, samples: number): Promise<StepTimes> {
  for (let i = 0; i < Math.ceil(samples / 5); i++) await run();
  const perStep: number[] = [];
  let steps = 0;
  for (let i = 0; i < samples; i++) {
    const started = performance.now();
    steps = await run();
    perStep.push(((performance.now() - started) * 1000) / steps);
  }
  const { median, p95 } = quantiles(perStep);
  return { steps, samples, medianUs: median, p95Us: p95 };
}

function row(name: string, ours: StepTimes, langGraph?: StepTimes): EngineBenchRow {
  return langGraph
    ? { case: name, ours, langGraph, ratio: langGraph.medianUs / ours.medianUs }
    : { case: name, ours };
}

/** Options of a benchmark run: graph sizes and how many whole runs are timed. */
export interface EngineBenchOptions {
  /** Nodes in the chains. */
  chainNodes: number;
  /** Nodes in the short chain of model-calling thought nodes (its prompts grow with the chain). */
  shortChainNodes: number;
  /** Laps of the loops (two node steps each). */
  laps: number;
  /** Timed runs of each graph without model or sandbox; the slower rows take fewer. */
  samples: number;
}

const DEFAULTS: EngineBenchOptions = { chainNodes: 100, shortChainNodes: 10, laps: 50, samples: 2000 };

/** Runs the benchmark, prints a table and returns the figures. */
export async function runEngineBench(options: Partial<EngineBenchOptions> = {}): Promise<EngineBenchFigures> {
  const { chainNodes, shortChainNodes, laps, samples } = { ...DEFAULTS, ...options };
  // LangGraph and the sandbox take about half a millisecond a step: fewer runs give as steady a median.
  const slow = Math.max(10, Math.ceil(samples / 40));

  const lgChain = await measure(langGraphChain(chainNodes), slow);
  const lgLoop = await measure(langGraphLoop(laps), slow);
  const overhead = [
    row('chain, thought_exact', await measureOurs(chainGraph(chainNodes), 'chain', [], samples), lgChain),
    row('loop, visit count', await measureOurs(visitLoopGraph(laps), 'loop', [], samples), lgLoop),
  ];
  const rows = [
    ...overhead,
    row(
      `chain, thought (model), ${shortChainNodes} nodes`,
      await measureOurs(chainGraph(shortChainNodes, 'thought'), 'chain', [], samples),
    ),
    row(
      `chain, thought (model), ${chainNodes} nodes`,
      await measureOurs(chainGraph(chainNodes, 'thought'), 'chain', [], Math.ceil(samples / 10)),
    ),
    row(
      'loop with conditions (sandbox)',
      await measureOurs(conditionLoopGraph(), 'count', [laps], slow),
      lgLoop,
    ),
    row('chain, code nodes (sandbox)', await measureOurs(codeChainGraph(chainNodes), 'code', [], slow)),
  ];
  const coldStart = await measureColdStart(20);
  const meetsTarget = overhead.every((r) => r.ours.medianUs <= TARGET_US_PER_STEP);
  const figures = { rows, coldStart, meetsTarget };
  printFigures(figures);
  return figures;
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

function printFigures({ rows, coldStart, meetsTarget }: EngineBenchFigures): void {
  const us = (x: number | undefined) => (x === undefined ? '–' : x.toFixed(1));
  printTable(
    `engine benchmark: interpreter vs LangGraph.js, zero-latency model, Node ${process.version}`,
    ['case', 'steps', 'runs', 'µs/step', 'p95', 'LangGraph µs/step', 'p95', 'LangGraph ÷ ours'],
    rows.map((r) => [
      r.case,
      String(r.ours.steps),
      String(r.ours.samples),
      us(r.ours.medianUs),
      us(r.ours.p95Us),
      us(r.langGraph?.medianUs),
      us(r.langGraph?.p95Us),
      r.ratio === undefined ? '–' : `${r.ratio.toFixed(1)}×`,
    ]),
  );
  console.log(
    `cold start (interpreter + isolate + first code node): median ${coldStart.medianMs.toFixed(1)} ms, p95 ${coldStart.p95Ms.toFixed(1)} ms`,
  );
  console.log(
    `target ≤ ${TARGET_US_PER_STEP} µs/step without model or sandbox: ${meetsTarget ? 'met' : 'missed'}`,
  );
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await runEngineBench();
