/**
 * Embedded model benchmark: a GGUF run in this process by node-llama-cpp, through `LocalModel`, the
 * product's own path (the chat template, the one context sequence, streaming by text chunks, usage
 * from the sequence's token meter). The model is the tests' tiny GGUF (test/support/tiny-gguf.ts) with
 * RANDOM WEIGHTS, at 2 layers (its default) and 8: its answers are noise, so the figures time the
 * runtime's path (load, prompt evaluation, sampling, detokenizing, the chunks' way back to us), not what
 * a real model of some billions of parameters would do on this machine. Each size runs with the
 * default threads (what `threads.ts` chooses for this machine as it is: its free cores) and with 1
 * (META_AGENT_LOCAL_THREADS=1). Per configuration:
 *
 * - load: a new `LocalModel`'s first `info()` (the runtime's `getLlama`, the model, its context); the
 *   runtime's module is imported once a process, before the first load, and timed on its own;
 * - first token: from the call to `stream` to its first `onChunk`, a short prompt (a few dozen tokens)
 *   whose first words change every run, so its tokens are evaluated again and not reused from the
 *   sequence's KV cache;
 * - generation: the tokens of a 64-token answer after the first one, over the time from the first chunk
 *   to the answer's end (temperature 0, so every run writes all 64: random weights never pick the end
 *   token there);
 * - answer: the whole call of the 64-token answer, from `stream` to its end: what a user waits for;
 * - prompt: a prompt of about 300 tokens, answered with one token; its evaluated tokens (`usage`, which
 *   counts only the tokens the call evaluated) over the whole call, that one token included.
 *
 * The configurations take turns within each round, the first alternating, after one warm-up round
 * (the same calls, with 8-token answers): up to 5 rounds, a configuration sitting out the later ones
 * once its runs have taken 2.5 s (at least one run each), so that a busy machine, where 2 threads can
 * take seconds an answer, keeps the bench to about 30 s. The `runs` column says how many each had.
 * Goals, generous for a 2-core CPU shared with other work: load ≤ 1 s (the first load of a process,
 * the runtime's import included), first token ≤ 100 ms, ≥ 200 tokens/s of generation, and the default
 * threads never slower than one thread. That last is measured apart, after the rounds: PAIRS answers of
 * PAIRED_TOKENS tokens by the default and by one thread, back to back, the first alternating; the
 * median of the pairs' time ratios (default ÷ one thread) must be ≤ ANSWER_NOISE, which allows for
 * the noise of a busy machine (a pair can differ by 2× when both run the same thread count). The
 * prompt rows have no goal.
 *
 * Run: `npx tsc -p . && NODE_ENV=production node --no-node-snapshot bench/run.js local`
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { LocalModel, type LocalModelInfo } from '../src/llm/local/local-model.js';
import { RUNTIME_VERSION, installRuntime, loadRuntime } from '../src/llm/local/runtime.js';
import { localTestEnv } from '../test/support/local-runtime.js';
import { writeTinyGguf } from '../test/support/tiny-gguf.js';
import { printTable, quantiles, verdict } from './stats.js';

/**
 * The tests' shared runtime, node_modules/.cache/meta-agent-runtime at the repository's root. Reckoned
 * from here rather than taken from test/support, whose path is right from the sources (as vitest runs
 * them) but not from dist/, where this bench runs.
 */
const RUNTIME_DIR = fileURLToPath(new URL('../../node_modules/.cache/meta-agent-runtime', import.meta.url));

const LAYERS = [2, 8] as const;
/** The default threads (undefined: META_AGENT_LOCAL_THREADS unset) and one thread. */
const THREADS = [undefined, 1] as const;
/** Tokens of the answers whose generation is timed. */
const ANSWER_TOKENS = 64;
/** Tokens of the warm-up round's answers, which are not counted: enough to take the whole path once. */
const WARM_UP_TOKENS = 8;
/** Measured rounds at most, after one warm-up round. */
const ROUNDS = 5;
/** Measured runs of every configuration, however long they take. */
const MIN_RUNS = 1;
/**
 * A configuration sits out the later rounds once its measured runs have taken this long: on a busy
 * machine, 2 threads can take seconds for an answer, and the bench stays within about 30 s.
 */
const CONFIG_BUDGET_MS = 2_500;

const LOAD_GOAL_MS = 1_000;
const FIRST_TOKEN_GOAL_MS = 100;
const TOKENS_PER_S_GOAL = 200;
/** Answers of the default and of one thread, back to back, for the ratio that has the goal. */
const PAIRS = 20;
const PAIRED_TOKENS = 16;
/** How much slower than one thread the default's median pair may be and still count as no slower. */
const ANSWER_NOISE = 1.25;

/** About 300 tokens in the tiny model's vocabulary (mostly a token a character). */
const LONG_TEXT = 'The quick brown fox jumps over the lazy dog, then naps in the sun. '.repeat(5);

interface Config {
  label: string;
  layers: number;
  /** Undefined: the default. */
  threads: number | undefined;
  bytes: number;
  model: LocalModel;
}

interface Samples {
  loadMs: number;
  firstTokenMs: number[];
  /** Milliseconds a token after the first, one a run. */
  msPerToken: number[];
  completionTokens: number[];
  shortPromptTokens: number[];
  longPromptTokens: number[];
  /** Milliseconds of the whole long-prompt call over the tokens it evaluated, one a run. */
  msPerPromptToken: number[];
  /** Milliseconds of the whole 64-token answer, one a run. */
  answerMs: number[];
  /** Milliseconds its measured runs took. */
  spentMs: number;
}

/** One configuration's figures. */
export interface LocalBenchRow {
  model: string;
  layers: number;
  /** Undefined: the default (info.threads says what it chose). */
  threads: number | undefined;
  info: LocalModelInfo;
  loadMs: number;
  firstTokenMs: { median: number; p95: number };
  tokensPerS: { median: number; p95: number };
  promptTokensPerS: { median: number; p95: number };
  answerMs: { median: number; p95: number };
  /** For the default: its answer's time over one thread's, in pairs (see PAIRS). */
  pairedRatio?: { median: number; p95: number; pairs: number };
  /** Median tokens of the short prompt and of the long one that each call evaluated. */
  shortPromptTokens: number;
  longPromptTokens: number;
  /** Median tokens of the timed answers (asked for 64). */
  answerTokens: number;
  runs: number;
}

export interface LocalBenchFigures {
  importMs: number;
  /** What a process's first load takes: the runtime's import, then the first configuration's load. */
  firstLoadMs: number;
  rows: LocalBenchRow[];
}

/** Runs the benchmark, prints a table and returns its figures. */
export async function runLocalBench(): Promise<LocalBenchFigures> {
  const env = (threads: number | undefined) => {
    const { META_AGENT_LOCAL_THREADS: _one, ...rest } = localTestEnv({ META_AGENT_RUNTIME_DIR: RUNTIME_DIR });
    return threads === undefined ? rest : { ...rest, META_AGENT_LOCAL_THREADS: String(threads) };
  };
  const dir = mkdtempSync(join(tmpdir(), 'local-bench-'));
  const caches: string[] = [];
  try {
    await installRuntime({ ...process.env, META_AGENT_RUNTIME_DIR: RUNTIME_DIR });
    const configs: Config[] = [];
    for (const layers of LAYERS) {
      const path = join(dir, `tiny-${layers}-layers.gguf`);
      const bytes = writeTinyGguf(path, { layers });
      for (const threads of THREADS) {
        const configEnv = env(threads);
        caches.push(configEnv.META_AGENT_CACHE_DIR!);
        configs.push({
          label: `${layers} layers, ${(bytes / 1024).toFixed(0)} KB`,
          layers,
          threads,
          bytes,
          model: new LocalModel({ ref: { kind: 'file', path }, env: configEnv }),
        });
      }
    }

    // The import of node-llama-cpp happens once a process, on the first load; timed apart from it.
    const importStarted = performance.now();
    await loadRuntime({ META_AGENT_RUNTIME_DIR: RUNTIME_DIR });
    const importMs = performance.now() - importStarted;

    const samples = new Map<Config, Samples>();
    const infos = new Map<Config, LocalModelInfo>();
    for (const config of configs) {
      const started = performance.now();
      const info = await config.model.info();
      const loadMs = performance.now() - started;
      if (config.threads !== undefined && info.threads !== config.threads)
        throw new Error(
          `${config.label}: asked for ${config.threads} threads, the model runs ${info.threads}`,
        );
      infos.set(config, info);
      samples.set(config, {
        loadMs,
        firstTokenMs: [],
        msPerToken: [],
        completionTokens: [],
        shortPromptTokens: [],
        longPromptTokens: [],
        msPerPromptToken: [],
        answerMs: [],
        spentMs: 0,
      });
    }

    // Round 0 warms up (the first prompt of a context, the chunks' path) and is not counted. A
    // configuration sits out the later rounds once its measured calls have taken CONFIG_BUDGET_MS.
    let run = 0;
    for (let round = 0; round <= ROUNDS; round++) {
      for (const config of round % 2 === 0 ? configs : [...configs].reverse()) {
        const s = samples.get(config)!;
        if (round > 0 && s.firstTokenMs.length >= MIN_RUNS && s.spentMs >= CONFIG_BUDGET_MS) continue;
        run += 1;
        const started = performance.now();
        const answer = await streamAnswer(config, run, round === 0 ? WARM_UP_TOKENS : ANSWER_TOKENS);
        const prompt = await longPrompt(config, run);
        if (round === 0) continue;
        s.spentMs += performance.now() - started;
        s.firstTokenMs.push(answer.firstTokenMs);
        s.msPerToken.push(answer.afterFirstMs / (answer.completionTokens - 1));
        s.completionTokens.push(answer.completionTokens);
        s.shortPromptTokens.push(answer.promptTokens);
        s.longPromptTokens.push(prompt.promptTokens);
        s.msPerPromptToken.push(prompt.ms / prompt.promptTokens);
        s.answerMs.push(answer.firstTokenMs + answer.afterFirstMs);
      }
    }

    const rows = configs.map((config) => rowOf(config, infos.get(config)!, samples.get(config)!));
    for (const layers of LAYERS) {
      const pair = (threads: number | undefined) =>
        configs.find((config) => config.layers === layers && config.threads === threads)!;
      const ratios = await pairedRatios(pair(undefined), pair(1), run);
      run += 2 * PAIRS;
      rows.find((row) => row.layers === layers && row.threads === undefined)!.pairedRatio = {
        ...quantiles(ratios),
        pairs: ratios.length,
      };
    }
    const figures = { importMs, firstLoadMs: importMs + rows[0]!.loadMs, rows };
    printFigures(figures);
    return figures;
  } finally {
    rmSync(dir, { recursive: true, force: true });
    for (const cache of caches) rmSync(cache, { recursive: true, force: true });
  }
}

/** An answer of `maxTokens` to a short prompt, streamed: the time to its first chunk and after it. */
async function streamAnswer(config: Config, run: number, maxTokens: number) {
  let firstChunkAt: number | undefined;
  const started = performance.now();
  const completion = await config.model.stream(
    {
      // The first words change every run, so the prompt is evaluated again, not found in the KV cache.
      messages: [{ role: 'user', content: `Question ${run}: is the sky red or blue? Answer yes or no.` }],
      maxTokens,
      temperature: 0,
    },
    () => {
      firstChunkAt ??= performance.now();
    },
  );
  const ended = performance.now();
  if (firstChunkAt === undefined)
    throw new Error(`${config.label}, run ${run}: the answer streamed no chunk`);
  const { promptTokens, completionTokens } = completion.usage;
  if (completionTokens < 2)
    throw new Error(`${config.label}, run ${run}: the answer has ${completionTokens} token, no rate to time`);
  return {
    firstTokenMs: firstChunkAt - started,
    afterFirstMs: ended - firstChunkAt,
    promptTokens,
    completionTokens,
  };
}

/** PAIRS answers by each, back to back, the first alternating: the default's time over one thread's. */
async function pairedRatios(fallback: Config, one: Config, firstRun: number): Promise<number[]> {
  const timed = async (config: Config, run: number) => {
    const answer = await streamAnswer(config, run, PAIRED_TOKENS);
    return answer.firstTokenMs + answer.afterFirstMs;
  };
  const ratios: number[] = [];
  for (let i = 0; i < PAIRS; i++) {
    const run = firstRun + 2 * i;
    let defaultMs: number;
    let oneMs: number;
    if (i % 2 === 0) {
      defaultMs = await timed(fallback, run);
      oneMs = await timed(one, run + 1);
    } else {
      oneMs = await timed(one, run + 1);
      defaultMs = await timed(fallback, run);
    }
    ratios.push(defaultMs / oneMs);
  }
  return ratios;
}

/** A prompt of about 300 tokens answered with one token: the whole call, and the tokens it evaluated. */
async function longPrompt(config: Config, run: number) {
  const started = performance.now();
  const completion = await config.model.complete({
    messages: [{ role: 'user', content: `Note ${run}: ${LONG_TEXT}` }],
    maxTokens: 1,
    temperature: 0,
  });
  return { ms: performance.now() - started, promptTokens: completion.usage.promptTokens };
}

function rowOf(config: Config, info: LocalModelInfo, s: Samples): LocalBenchRow {
  // Rates from the quantiles of the time a token: the 95th percentile is the slow end.
  const rate = (msPerToken: number[]) => {
    const q = quantiles(msPerToken);
    return { median: 1000 / q.median, p95: 1000 / q.p95 };
  };
  return {
    model: config.label,
    layers: config.layers,
    threads: config.threads,
    info,
    loadMs: s.loadMs,
    firstTokenMs: quantiles(s.firstTokenMs),
    tokensPerS: rate(s.msPerToken),
    promptTokensPerS: rate(s.msPerPromptToken),
    answerMs: quantiles(s.answerMs),
    shortPromptTokens: quantiles(s.shortPromptTokens).median,
    longPromptTokens: quantiles(s.longPromptTokens).median,
    answerTokens: quantiles(s.completionTokens).median,
    runs: s.firstTokenMs.length,
  };
}

function printFigures({ importMs, firstLoadMs, rows }: LocalBenchFigures): void {
  const ms = (x: number) => (x >= 100 ? x.toFixed(0) : x.toFixed(1));
  const rate = (x: number) => x.toFixed(0);
  const first = rows[0]!;
  const table: string[][] = [
    ['runtime', '', `import of node-llama-cpp, once a process`, '1', ms(importMs), '', '', ''],
    [
      first.model,
      threadsText(first),
      'first load of a process ms (import + load)',
      '1',
      ms(firstLoadMs),
      '',
      `≤ ${LOAD_GOAL_MS} ms`,
      verdict(firstLoadMs <= LOAD_GOAL_MS),
    ],
  ];
  for (const r of rows)
    table.push(
      [
        r.model,
        threadsText(r),
        'load ms',
        '1',
        ms(r.loadMs),
        '',
        `≤ ${LOAD_GOAL_MS} ms`,
        verdict(r.loadMs <= LOAD_GOAL_MS),
      ],
      [
        r.model,
        threadsText(r),
        `first token ms (${r.shortPromptTokens}-token prompt)`,
        String(r.runs),
        ms(r.firstTokenMs.median),
        ms(r.firstTokenMs.p95),
        `≤ ${FIRST_TOKEN_GOAL_MS} ms`,
        verdict(r.firstTokenMs.median <= FIRST_TOKEN_GOAL_MS),
      ],
      [
        r.model,
        threadsText(r),
        `generation tokens/s (${r.answerTokens}-token answer)`,
        String(r.runs),
        rate(r.tokensPerS.median),
        rate(r.tokensPerS.p95),
        `≥ ${TOKENS_PER_S_GOAL}/s`,
        verdict(r.tokensPerS.median >= TOKENS_PER_S_GOAL),
      ],
      ...answerRows(r),
      [
        r.model,
        threadsText(r),
        `prompt tokens/s (${r.longPromptTokens}-token prompt)`,
        String(r.runs),
        rate(r.promptTokensPerS.median),
        rate(r.promptTokensPerS.p95),
        '–',
        '',
      ],
    );
  const info = first.info;
  printTable(
    `local benchmark: the embedded model through LocalModel, node-llama-cpp ${RUNTIME_VERSION} on ${info.gpu} (${info.gpuLayers} layers offloaded), context ${info.contextSize}; ` +
      `tiny GGUF with RANDOM WEIGHTS: the figures time the runtime's path, not a real model; ` +
      `medians of up to ${ROUNDS} rounds after a warm-up round, configurations interleaved`,
    ['model (random weights)', 'threads', 'measure', 'runs', 'median', 'p95 (slow end)', 'goal', 'verdict'],
    table,
    3,
  );
  const [one, five] = loadavg();
  console.log(
    `load average at the end: ${one!.toFixed(2)} (1 min), ${five!.toFixed(2)} (5 min); ` +
      'threads beyond the cores other work leaves free wait on each other at every step; the default takes only the free ones.',
  );
}

/** `1`, or `default: 2` (what the default chose). */
function threadsText(row: LocalBenchRow): string {
  return row.threads === undefined ? `default: ${row.info.threads}` : String(row.threads);
}

/** The whole answer's row, and for the default its paired ratio to one thread, which has the goal. */
function answerRows(row: LocalBenchRow): string[][] {
  const ms = (x: number) => x.toFixed(x >= 100 ? 0 : 1);
  const answer = [
    row.model,
    threadsText(row),
    `answer ms (${row.answerTokens} tokens, whole call)`,
    String(row.runs),
    ms(row.answerMs.median),
    ms(row.answerMs.p95),
    '–',
    '',
  ];
  const ratio = row.pairedRatio;
  if (!ratio) return [answer];
  return [
    answer,
    [
      row.model,
      threadsText(row),
      `answer time ÷ 1 thread's (${PAIRED_TOKENS} tokens, in pairs)`,
      String(ratio.pairs),
      ratio.median.toFixed(2),
      ratio.p95.toFixed(2),
      `≤ ${ANSWER_NOISE} (no slower)`,
      verdict(ratio.median <= ANSWER_NOISE),
    ],
  ];
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await runLocalBench();
