/**
 * Flow benchmark: one pass of a flow through the real OpenAI client against a loopback OpenAI server
 * that takes 300 ms to answer each call, at the default concurrency (no `--concurrency`) and one node
 * after another (concurrency 1). The goal, from the flows issue: a flow of 12 nodes whose longest
 * dependency chain is 3 takes 3 round trips by default, counted by the server (a call's round is one
 * more than the highest round answered before it arrived) and in wall time. A second flow of 24 nodes
 * and depth 4 shows it holds as the flow grows: the rounds follow the depth, not the number of nodes.
 *
 * Each flow is built in layers, every node depending on some nodes of the layer before it, so its
 * depth is its number of layers. The server's answer to a node is a short text made from the node's
 * question and a digest of everything it was sent, so a node's output depends on its dependencies'
 * outputs, and the two modes giving the same outputs shows they did the same work; the bench fails if
 * any pass's outputs differ from the first's. The modes take turns within each repetition, so a slow
 * moment of the machine is spread over both.
 *
 * Run: `npx tsc -p . && node --no-node-snapshot bench/run.js flow` (or dist/bench/flow.bench.js)
 */
import { createHash } from 'node:crypto';
import { pathToFileURL } from 'node:url';
import { modelsFromOptions } from '../src/cli/model-options.js';
import { EventBus } from '../src/events.js';
import type { FlowRunStore } from '../src/flow/flow-run-store.js';
import { newFlowRunState } from '../src/flow/run-state.js';
import { runFlowPass } from '../src/flow/runner.js';
import { flowFileSchema, type FlowFile, type FlowNodeInput } from '../src/flow/schema.js';
import type { LanguageModel } from '../src/llm/types.js';
import { UsageMeter } from '../src/llm/usage.js';
import { startOpenAIServer, type ChatRequestBody, type OpenAIServer } from '../test/support/openai-server.js';
import { printTable, quantiles, verdict } from './stats.js';

/** Saves that cost what turning the run into JSON costs, and no disk: the pass's own work is timed. */
const serializingStore: FlowRunStore = {
  load: async () => undefined,
  save: async (_key, state) => void JSON.stringify(state),
};

/** Latency the server adds to every call: one round trip. */
export const LATENCY_MS = 300;
/** What "about N round trips" allows: N round trips and a quarter more. */
const SLACK = 1.25;
/** Measured passes of each flow in each mode, after one warm-up pass of each flow. */
const REPEATS = 5;
/** A pass that takes longer is stuck: it is stopped and the bench fails. */
const STALL_MS = 60_000;
const TOPIC = 'moving a small office to a new building';

/** The flows: how many nodes each layer has. */
const SHAPES = [
  { name: 'A', layers: [6, 4, 2] },
  { name: 'B', layers: [8, 8, 6, 2] },
] as const;

/** `default`: no concurrency given, as `flow run` without `--concurrency`. */
const MODES = [
  { mode: 'default', concurrency: undefined },
  { mode: 'sequential', concurrency: 1 },
] as const;
type Mode = (typeof MODES)[number]['mode'];

/** One flow in one mode, measured. */
export interface FlowBenchRow {
  flow: string;
  nodes: number;
  depth: number;
  mode: Mode;
  /** As given to the runner; undefined: its default. */
  concurrency: number | undefined;
  /** Model calls of one pass (the same in every pass). */
  calls: number;
  /** Steps of one pass: the depth, when every node of a layer is ready together. */
  steps: number;
  /** The most calls the server had in flight at once, over the passes. */
  mostInFlight: number;
  /** Round trips of one pass as the server counts them (the most over the passes). */
  rounds: number;
  /** The rounds the row is held to: the depth (default), or one a node (sequential). */
  goalRounds: number;
  wallMs: { median: number; p95: number };
  /** The median wall time in units of one call's latency. */
  roundTrips: number;
  /** The round trips the row is held to: at most this (default), or between nodes and this (sequential). */
  goalRoundTrips: number;
  met: boolean;
  /** Sequential median over the default's median (on the default row). */
  speedUp?: number;
}

interface Sample {
  ms: number;
  calls: number;
  steps: number;
  inFlight: number;
  rounds: number;
  outputs: string;
}

/** Runs the benchmark, prints a table and returns its rows. */
export async function runFlowBench(): Promise<FlowBenchRow[]> {
  const server = await startOpenAIServer({ latencyMs: LATENCY_MS, reply: answer });
  try {
    // The model as `meta-agent` builds it for `--base-url URL --model gpt-4o-mini`.
    const { models } = await modelsFromOptions({ baseUrl: server.url, model: 'gpt-4o-mini' });
    const flows = SHAPES.map((shape) => ({ ...shape, flow: layeredFlow(shape.name, shape.layers) }));
    // A first pass of each flow loads the SDK and the server's tokenizer and opens the connections.
    const reference = new Map<string, string>();
    for (const { name, flow } of flows)
      reference.set(name, (await pass(flow, models.chatbot, undefined, server)).outputs);
    const samples = new Map(
      flows.flatMap(({ name }) => MODES.map(({ mode }) => [key(name, mode), [] as Sample[]])),
    );
    for (let repeat = 0; repeat < REPEATS; repeat++)
      for (const { name, flow } of flows)
        for (const { mode, concurrency } of MODES) {
          const sample = await pass(flow, models.chatbot, concurrency, server);
          if (sample.outputs !== reference.get(name))
            throw new Error(
              `flow ${name}, ${mode} pass ${repeat + 1}: its outputs differ from the first pass's: ${firstDifference(reference.get(name)!, sample.outputs)}`,
            );
          samples.get(key(name, mode))!.push(sample);
        }
    const rows = flows.flatMap(({ name, layers }) => rowsOf(name, layers, samples));
    printRows(rows);
    return rows;
  } finally {
    await server.close();
  }
}

function key(flow: string, mode: Mode): string {
  return `${flow}/${mode}`;
}

/**
 * A flow of `layers.length` layers: node j of a layer of n nodes depends on every node i of the layer
 * before with i mod n = j, and on node (j + 1) mod (size of that layer), so every node but the last
 * layer's has a dependent and the longest chain is the number of layers.
 */
export function layeredFlow(name: string, layers: readonly number[]): FlowFile {
  const nodeName = (layer: number, j: number) => `L${layer + 1}_${j + 1}`;
  const nodes: FlowNodeInput[] = [];
  for (const [layer, size] of layers.entries()) {
    const before = layer === 0 ? 0 : layers[layer - 1]!;
    for (let j = 0; j < size; j++) {
      const deps = new Set<number>();
      for (let i = j; i < before; i += size) deps.add(i);
      if (before > 0) deps.add((j + 1) % before);
      nodes.push({
        name: nodeName(layer, j),
        prompt: `Part ${j + 1} of stage ${layer + 1}: one line on $db.topic$.`,
        dependencies: [...deps].sort((a, b) => a - b).map((i) => nodeName(layer - 1, i)),
      });
    }
  }
  return flowFileSchema.parse({
    name: `bench-${name}`,
    inputs: { topic: {} },
    config: { system: 'You plan one part of a task in one line.' },
    nodes,
  });
}

/**
 * The server's answer: a short line from the node's question and a digest of all it was sent, so a
 * node's output changes whenever its dependencies' outputs do.
 */
function answer(body: ChatRequestBody): string {
  const question = body.messages.at(-1)?.content ?? '';
  const digest = createHash('sha256').update(JSON.stringify(body.messages)).digest('hex').slice(0, 8);
  return `Noted (${question.split(':')[0]}), ref ${digest}.`;
}

/** One pass of a new run of `flow`, saved (serialized) after every step as a run is. */
async function pass(
  flow: FlowFile,
  model: LanguageModel,
  concurrency: number | undefined,
  server: OpenAIServer,
): Promise<Sample> {
  const events = new EventBus();
  let steps = 0;
  events.on((event) => {
    if (event.type === 'flow.step') steps += 1;
  });
  const first = server.requests.length;
  const started = performance.now();
  const report = await runFlowPass(
    {
      flow,
      state: newFlowRunState(flow),
      model: new UsageMeter(events).wrap('chatbot', model),
      events,
      ...(concurrency !== undefined && { concurrency }),
      keptAt: { store: serializingStore, key: 'bench' },
      signal: AbortSignal.timeout(STALL_MS),
    },
    { topic: TOPIC },
  );
  const ms = performance.now() - started;
  if (!report.complete)
    throw new Error(
      `a pass of ${flow.name} did not complete${report.interrupted ? ` within ${STALL_MS / 1000} s` : ''}: ${JSON.stringify(report.results)}`,
    );
  const requests = server.requests.slice(first).filter((r) => r.path === '/v1/chat/completions');
  return {
    ms,
    calls: requests.length,
    steps,
    inFlight: Math.max(...requests.map((r) => r.inFlight)),
    // Rounds carry on from the passes before: this pass's first call is one past their last.
    rounds: Math.max(...requests.map((r) => r.round)) - Math.min(...requests.map((r) => r.round)) + 1,
    outputs: JSON.stringify(report.outputs),
  };
}

/** The first node whose output differs between two passes' outputs (as JSON). */
function firstDifference(expected: string, actual: string): string {
  const a = JSON.parse(expected) as Record<string, unknown>;
  const b = JSON.parse(actual) as Record<string, unknown>;
  const node = [...new Set([...Object.keys(a), ...Object.keys(b)])].find(
    (name) => JSON.stringify(a[name]) !== JSON.stringify(b[name]),
  );
  return node === undefined
    ? 'same values, another order'
    : `${node}: ${JSON.stringify(a[node])} then ${JSON.stringify(b[node])}`;
}

function rowsOf(name: string, layers: readonly number[], samples: Map<string, Sample[]>): FlowBenchRow[] {
  const nodes = layers.reduce((sum, size) => sum + size, 0);
  const depth = layers.length;
  const rows = MODES.map(({ mode, concurrency }): FlowBenchRow => {
    const s = samples.get(key(name, mode))!;
    const wallMs = quantiles(s.map((sample) => sample.ms));
    const roundTrips = wallMs.median / LATENCY_MS;
    // Default: about one round trip a step. Sequential: one a node, which it cannot go below.
    const least = mode === 'default' ? 0 : nodes;
    const goalRounds = mode === 'default' ? depth : nodes;
    const goalRoundTrips = goalRounds * SLACK;
    const rounds = Math.max(...s.map((sample) => sample.rounds));
    return {
      flow: `${name}: ${nodes} nodes, depth ${depth} (${layers.join('→')})`,
      nodes,
      depth,
      mode,
      concurrency,
      calls: s[0]!.calls,
      steps: s[0]!.steps,
      mostInFlight: Math.max(...s.map((sample) => sample.inFlight)),
      rounds,
      goalRounds,
      wallMs,
      roundTrips,
      goalRoundTrips,
      met: rounds <= goalRounds && roundTrips >= least && roundTrips <= goalRoundTrips,
    };
  });
  const [byDefault, sequential] = rows as [FlowBenchRow, FlowBenchRow];
  byDefault.speedUp = sequential.wallMs.median / byDefault.wallMs.median;
  return rows;
}

function printRows(rows: readonly FlowBenchRow[]): void {
  printTable(
    `flow benchmark: one pass through the OpenAI client, loopback server, ${LATENCY_MS} ms a call; medians of ${REPEATS} passes a mode, modes interleaved; outputs identical in both modes and every pass`,
    [
      'flow',
      'mode',
      'concurrency',
      'calls',
      'steps',
      'in flight',
      'rounds',
      'goal (rounds)',
      'wall ms',
      'p95',
      'round trips',
      'goal (round trips)',
      'verdict',
      'speed-up',
    ],
    rows.map((r) => [
      r.flow,
      r.mode,
      r.concurrency === undefined ? 'default' : String(r.concurrency),
      String(r.calls),
      String(r.steps),
      String(r.mostInFlight),
      String(r.rounds),
      r.mode === 'default' ? `≤ ${r.goalRounds} (depth)` : `${r.goalRounds} (one a node)`,
      r.wallMs.median.toFixed(0),
      r.wallMs.p95.toFixed(0),
      r.roundTrips.toFixed(2),
      r.mode === 'default'
        ? `≤ ${figure(r.goalRoundTrips)} (depth ${r.depth} + 25%)`
        : `${r.nodes}–${figure(r.goalRoundTrips)} (one a node)`,
      verdict(r.met),
      r.speedUp === undefined ? '' : `${r.speedUp.toFixed(1)}×`,
    ]),
    2,
  );
}

/** A goal as written: at most two decimals, none when whole. */
function figure(value: number): string {
  return String(Number(value.toFixed(2)));
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await runFlowBench();
