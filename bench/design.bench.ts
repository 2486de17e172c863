/**
 * Designer benchmark: designs of 5, 20 and 40 nodes against loopback OpenAI servers, through the real
 * OpenAI client, as the designer designs for a server on this machine ("local": few calls in flight)
 * and for one elsewhere ("remote"). For each case:
 *
 * - the sequential model round trips and the wall time, with 300 ms of latency per call;
 * - the CPU time of a design in a warm process, with a server that answers at once;
 * - the CPU time of a whole `meta-agent design` process (start-up included), with that same server.
 *
 * The cases take turns within each repetition, so a slow moment of the machine is spread over them all.
 * The servers run in a child process (design-servers.ts), so their work is not in the CPU figures.
 *
 * Run: `npx tsc -p . && node scripts/bundle-cli.js && node --no-node-snapshot bench/run.js design` (or dist/bench/design.bench.js)
 */
import { fork, spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { designAgent } from '../meta/design.js';
import { designConcurrency } from '../meta/limits.js';
import { agentOpener } from '../src/agent/open.js';
import { EventBus } from '../src/events.js';
import { OpenAIModel } from '../src/llm/openai.js';
import type { ModelSet } from '../src/llm/types.js';
import { inMemoryStore } from '../src/store/in-memory.js';
import type { DesignServerSpec } from './design-servers.js';
import { printTable, quantiles } from './stats.js';

/** Latency the servers add to every call, for the round-trip and wall-time figures. */
export const LATENCY_MS = 300;
const SIZES = [5, 20, 40] as const;
/** Where the designer takes the server to be: the local case is the loopback URL it really has. */
const PLACES = ['local', 'remote'] as const;
type Place = (typeof PLACES)[number];
/** A server off this machine, for the concurrency the designer would choose for it. */
const REMOTE_URL = 'https://api.openai.com/v1';
const DESCRIPTION = 'a tutor bot that teaches a lesson part by part';

/** A design, or a child process starting or designing, that takes longer is stuck: the bench fails. */
const STALL_MS = 60_000;

/** Repetitions of each measured design, and of the slower whole-process ones. */
const REPEATS = 5;
const PROCESS_REPEATS = 3;

/** The goals each figure is held to. */
const GOALS = {
  roundTrips: 6,
  /** Wall time in call latencies: the round trips, plus overhead that should not add a whole one. */
  latencies: 6,
  /** A design's own CPU should be a small part of one call's latency. */
  designCpuMs: LATENCY_MS / 10,
  /** A whole process, start-up included, should cost less CPU than one call takes. */
  processCpuMs: LATENCY_MS,
};

/** One case: a size and a place, measured. */
export interface DesignBenchRow {
  nodes: number;
  place: Place;
  concurrency: number;
  calls: number;
  roundTrips: number;
  /** Median wall time of a design with latency, in units of one call's latency. */
  latencies: number;
  /** Median CPU milliseconds of a design in a warm process, with no latency. */
  designCpuMs: number;
  /** Median CPU milliseconds of a whole `meta-agent design` process, with no latency. */
  processCpuMs: number;
}

interface Case {
  nodes: number;
  place: Place;
  concurrency: number;
  /** The servers drawing graphs of this size, with and without latency. */
  slowUrl: string;
  fastUrl: string;
}

interface Samples {
  calls: number;
  roundTrips: number;
  seconds: number[];
  designCpuMs: number[];
  processCpuMs: number[];
}

/** Runs the benchmark, prints a table and returns its rows. */
export async function runDesignBench(): Promise<DesignBenchRow[]> {
  const outDir = await mkdtemp(join(tmpdir(), 'meta-agent-design-bench-'));
  const servers = await startServers(
    SIZES.flatMap((nodes) => [
      { nodes, latencyMs: LATENCY_MS },
      { nodes, latencyMs: 0 },
    ]),
  );
  try {
    const cases = SIZES.flatMap((nodes, i) =>
      PLACES.map((place) => caseOf(nodes, place, servers.urls[2 * i]!, servers.urls[2 * i + 1]!)),
    );
    // A first design of each case loads Graphviz (WASM) and the sandbox and warms the JIT, so the
    // measured designs are not charged for what a long-running process pays once.
    for (const c of cases) await design(c, c.fastUrl, outDir);
    const samples = new Map(cases.map((c) => [c, emptySamples()]));
    for (let repeat = 0; repeat < REPEATS; repeat++) {
      for (const c of cases) {
        const s = samples.get(c)!;
        const slow = await design(c, c.slowUrl, outDir);
        Object.assign(s, { calls: slow.calls, roundTrips: slow.roundTrips });
        s.seconds.push(slow.seconds);
        s.designCpuMs.push((await design(c, c.fastUrl, outDir)).cpuMs);
        if (repeat < PROCESS_REPEATS) s.processCpuMs.push(await designProcess(c, outDir));
      }
    }
    const rows = cases.map((c) => rowOf(c, samples.get(c)!));
    printRows(rows);
    return rows;
  } finally {
    servers.stop();
    await rm(outDir, { recursive: true, force: true });
  }
}

function caseOf(nodes: number, place: Place, slowUrl: string, fastUrl: string): Case {
  const concurrency = designConcurrency(place === 'local' ? fastUrl : REMOTE_URL);
  return { nodes, place, concurrency, slowUrl, fastUrl };
}

function emptySamples(): Samples {
  return { calls: 0, roundTrips: 0, seconds: [], designCpuMs: [], processCpuMs: [] };
}

/** Starts the servers in their own process; resolves to their URLs, in the order asked. */
async function startServers(specs: DesignServerSpec[]): Promise<{ urls: string[]; stop: () => void }> {
  const child = fork(fileURLToPath(new URL('./design-servers.js', import.meta.url)), [JSON.stringify(specs)]);
  const urls = await new Promise<string[]>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill();
      reject(new Error(`the benchmark's servers did not start within ${STALL_MS / 1000} s`));
    }, STALL_MS);
    child.once('message', (message) => {
      clearTimeout(timer);
      resolve(message as string[]);
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the benchmark's servers exited with ${code}`));
    });
  });
  return { urls, stop: () => child.disconnect() };
}

/** One design in this process: its calls, round trips, wall seconds and CPU milliseconds. */
async function design(c: Case, url: string, outDir: string) {
  const model = new OpenAIModel({ baseUrl: url, model: 'gpt-4o-mini', maxRetries: 0 });
  const models: ModelSet = { chatbot: model, classifier: model, userbot: model, embedder: model };
  const cpu = process.cpuUsage();
  const started = performance.now();
  const outcome = await designAgent({
    description: DESCRIPTION,
    name: `bench_${c.nodes}_${c.place}`,
    outDir,
    models,
    open: agentOpener({ models, events: new EventBus(), store: inMemoryStore(), folder: outDir }),
    limits: { concurrency: c.concurrency },
    signal: AbortSignal.timeout(STALL_MS),
  });
  const seconds = (performance.now() - started) / 1000;
  const { user, system } = process.cpuUsage(cpu);
  if (!outcome.ok)
    throw new Error(`the ${c.nodes}-node design failed at ${outcome.stage}: ${outcome.reason}`);
  const { calls, roundTrips } = outcome.figures;
  return { calls, roundTrips, seconds, cpuMs: (user + system) / 1000 };
}

/**
 * One `meta-agent design` process, as a user runs it: the CPU milliseconds it used in all. Each writes
 * to a folder of its own, as a first design does: `design` refuses to overwrite a graph without --force.
 */
async function designProcess(c: Case, outDir: string): Promise<number> {
  const runDir = await mkdtemp(join(outDir, 'process-'));
  const cpuFile = join(runDir, 'process-cpu-ms');
  const cli = fileURLToPath(new URL('../../bin/meta-agent.js', import.meta.url));
  const preload = pathToFileURL(fileURLToPath(new URL('./cpu-at-exit.js', import.meta.url))).href;
  const args = ['--no-node-snapshot', '--import', preload, cli, 'design', DESCRIPTION];
  args.push('-o', runDir, '--name', `process_${c.nodes}_${c.place}`, '--concurrency', String(c.concurrency));
  const { OPENAI_API_KEY: _unused, ...env } = process.env;
  const child = spawn(process.execPath, args, {
    env: { ...env, OPENAI_BASE_URL: c.fastUrl, META_AGENT_MODEL: 'gpt-4o-mini', BENCH_CPU_FILE: cpuFile },
    stdio: ['ignore', 'ignore', 'pipe'],
    timeout: STALL_MS,
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
  if (code !== 0) throw new Error(`meta-agent design exited with ${code}: ${stderr.trim()}`);
  return Number(await readFile(cpuFile, 'utf8'));
}

function rowOf(c: Case, s: Samples): DesignBenchRow {
  return {
    nodes: c.nodes,
    place: c.place,
    concurrency: c.concurrency,
    calls: s.calls,
    roundTrips: s.roundTrips,
    latencies: (quantiles(s.seconds).median * 1000) / LATENCY_MS,
    designCpuMs: quantiles(s.designCpuMs).median,
    processCpuMs: quantiles(s.processCpuMs).median,
  };
}

/** A figure with its goal beside it, and `missed` when it is over the goal. */
function againstGoal(value: number, goal: number, digits: number): string {
  return `${value.toFixed(digits)} (≤ ${goal})${value > goal ? ' missed' : ''}`;
}

function printRows(rows: readonly DesignBenchRow[]): void {
  printTable(
    `design benchmark: loopback OpenAI servers; ${LATENCY_MS} ms per call for round trips and wall time, none for CPU; medians of ${REPEATS} designs (${PROCESS_REPEATS} processes)`,
    [
      'nodes',
      'server',
      'concurrency',
      'calls',
      'round trips',
      `wall × ${LATENCY_MS} ms`,
      'design CPU ms',
      'process CPU ms',
    ],
    rows.map((r) => [
      String(r.nodes),
      r.place,
      String(r.concurrency),
      String(r.calls),
      againstGoal(r.roundTrips, GOALS.roundTrips, 0),
      againstGoal(r.latencies, GOALS.latencies, 1),
      againstGoal(r.designCpuMs, GOALS.designCpuMs, 0),
      againstGoal(r.processCpuMs, GOALS.processCpuMs, 0),
    ]),
    2,
  );
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await runDesignBench();
