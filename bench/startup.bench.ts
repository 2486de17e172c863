/**
 * Start-up benchmark: the wall time of whole `meta-agent` processes, from spawn to exit (to the first
 * reply on stdout for `chat`), beside `node -e 0`, the floor no Node program goes below. The goals are
 * times over that floor (issue #35): the machine's own speed is taken out.
 *
 * - `--help`, and `validate`, `show` and `call` on a small graph (10 nodes, a function of code nodes
 *   and boolean conditions, which `call` runs in the sandbox, in a process restarted with
 *   `--no-node-snapshot`);
 * - `chat` on a graph without code: once to the first reply of a model (a zero-latency
 *   OpenAI-compatible server in a process of its own, bench/instant-server.ts), once with the
 *   scripted provider, which counts the tokens itself (tiktoken builds its o200k encoder first), and
 *   once where the graph writes the first reply (`chat_exact`);
 * - what bounds `call`: Node started without its snapshot (`node --no-node-snapshot -e 0`), and a
 *   script that does nothing but restart itself with that flag, as `call` does.
 *
 * The commands take turns, one run of each per round after a warm-up round, so a slow moment of the
 * machine is spread over them all; "over node" is the median of each round's difference to that round's
 * `node -e 0`, and the goal is met when it is at most the goal.
 * The CLI is started as a user's shell starts it (with the Node options of the bin's shebang line, and
 * no NODE_OPTIONS), with no model configured and no local server found (the probe goes to a closed port).
 *
 * Run: `npx tsc -p . && node scripts/bundle-cli.js && node dist/bench/startup.bench.js` (or `node
 * bench/run.js startup`): it times the bundled CLI, which tsc alone does not rebuild.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { startModel } from './serve-processes.js';
import { printTable, quantiles, verdict } from './stats.js';

const BIN = fileURLToPath(new URL('../../bin/meta-agent.js', import.meta.url));
const ROUNDS = 20;
/** Where no server listens (the discard port): the local-server probe finds nothing at once. */
const NO_SERVER = 'http://127.0.0.1:9/v1';

/** A small graph with one function: code nodes and a wildcard chosen by conditions. */
const CALL_GRAPH = {
  format: 'meta-agent/autogram@1',
  name: 'scorer',
  description: 'Scores a number; a chat around it.',
  nodes: [
    { name: 'start1', action: 'chat_exact', instruction: 'Give me a number.', transitions: ['reply'] },
    { name: 'reply', action: 'chat', instruction: 'Thank the user.', transitions: ['more'] },
    {
      name: 'more',
      action: 'chat_exact',
      instruction: 'Another one?',
      transitions: ['start1', 'quit'],
      transitionQuestion: 'Does the user want another one?',
      transitionChoices: ['yes', 'no'],
    },
    { name: 'score(n)', action: 'code', instruction: 'm = Math.max(0, n)', transitions: ['twice'] },
    { name: 'twice', action: 'code', instruction: 'd = m * 2', transitions: ['grade.*'] },
    {
      name: 'grade.a',
      action: 'code',
      instruction: "g = 'high'",
      booleanCondition: 'd >= 100',
      transitions: ['done'],
    },
    {
      name: 'grade.b',
      action: 'code',
      instruction: "g = 'mid'",
      booleanCondition: 'd >= 10',
      transitions: ['done'],
    },
    { name: 'grade.c', action: 'code', instruction: "g = 'low'", transitions: ['done'] },
    { name: 'done', action: 'transition', transitions: ['report'] },
    { name: 'report', action: 'code', instruction: '({ n, d, grade: g })', transitions: ['return'] },
  ],
};

/** Two chat nodes without code; the first reply from the scripted chatbot or written in the graph. */
function chatGraph(first: 'chat' | 'chat_exact') {
  return {
    format: 'meta-agent/autogram@1',
    name: `greeter_${first}`,
    nodes: [
      { name: 'start1', action: first, instruction: 'Hello! How can I help?', transitions: ['ask'] },
      { name: 'ask', action: 'chat', instruction: 'Answer the user.', transitions: ['quit'] },
    ],
  };
}

const SCRIPT = {
  rules: [{ role: 'chatbot', match: 'Hello! How can I help?', reply: 'Hello! How can I help?' }],
};
const FIRST_REPLY = 'Hello! How can I help?';
/** What the zero-latency model says (bench/instant-server.ts), alone on its line. */
const MODEL_REPLY = 'ok\n';

/** Restarts itself without the snapshot, as bin/meta-agent.js does for code, and does nothing else. */
const RESTART_ONLY = `if (!process.execArgv.includes('--no-node-snapshot'))
  process.execve(process.execPath, [process.execPath, '--no-node-snapshot', ...process.argv.slice(1)]);`;

interface Command {
  name: string;
  /** What the process runs: \`node\` and its arguments. */
  args: string[];
  /** For chat: the run ends when this appears on stdout. Otherwise at exit, which must be 0. */
  until?: string;
  /** Most milliseconds over `node -e 0`. */
  goalMs?: number;
}

/**
 * The Node options the bin's shebang line gives (`#!/usr/bin/env -S node --flag` gives `--flag`): the
 * CLI runs as a user's shell starts it, but with this process's Node.
 */
async function shebangOptions(): Promise<string[]> {
  const line = (await readFile(BIN, 'utf8')).split('\n', 1)[0] ?? '';
  return /^#!.*?\bnode(?:\s+(.*))?$/.exec(line)?.[1]?.split(/\s+/).filter(Boolean) ?? [];
}

function commands(dir: string, node: string[], modelUrl: string): Command[] {
  const graph = join(dir, 'scorer.autogram.json');
  const cli = (...args: string[]) => [...node, BIN, ...args];
  const chat = join(dir, 'chat.autogram.json');
  const scripted = (file: string) => cli('chat', join(dir, file), '--script', join(dir, 'script.json'));
  return [
    { name: 'node -e 0', args: ['-e', '0'] },
    { name: '--help', args: cli('--help'), goalMs: 75 },
    { name: 'validate', args: cli('validate', graph), goalMs: 125 },
    { name: 'show', args: cli('show', graph), goalMs: 125 },
    { name: 'call score(42)', args: cli('call', graph, 'score(42)'), goalMs: 100 },
    {
      name: 'chat, model reply',
      args: cli('chat', chat, '--base-url', modelUrl, '--model', 'gpt-4o-mini'),
      until: MODEL_REPLY,
      goalMs: 150,
    },
    { name: 'chat, scripted reply', args: scripted('chat.autogram.json'), until: FIRST_REPLY },
    { name: 'chat, exact reply', args: scripted('exact.autogram.json'), until: FIRST_REPLY, goalMs: 150 },
    { name: 'node --no-node-snapshot', args: ['--no-node-snapshot', '-e', '0'] },
    { name: 'restart only', args: [join(dir, 'restart.mjs')] },
  ];
}

/** The CLI's environment as a user's without a model configured; NODE_OPTIONS would change what starts. */
function cliEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env))
    if (!/^(OPENAI_|META_AGENT_|NODE_OPTIONS$)/.test(name)) env[name] = value;
  return { ...env, META_AGENT_PROBE_URLS: NO_SERVER, NO_COLOR: '1' };
}

/** Milliseconds from spawn to exit, or to `until` on stdout (the process is then ended). */
function timeOnce(command: Command, env: NodeJS.ProcessEnv): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, command.args, {
      env,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    let elapsed: number | undefined;
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
      if (command.until !== undefined && elapsed === undefined && stdout.includes(command.until)) {
        elapsed = performance.now() - started;
        child.kill();
      }
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('error', reject);
    // The next run starts only once this process is gone, so two never overlap.
    child.on('close', (code) => {
      const exited = performance.now() - started;
      if (command.until !== undefined && elapsed !== undefined) resolve(elapsed);
      else if (command.until === undefined && code === 0) resolve(exited);
      else reject(new Error(`${command.name} failed (exit ${code}):\n${stderr || stdout}`));
    });
    // chat waits for the user with its input open; the others get none.
    if (command.until === undefined) child.stdin.end();
  });
}

export interface StartupBenchRow {
  command: string;
  runs: number;
  medianMs: number;
  p95Ms: number;
  /** Median of each round's time less that round's `node -e 0`. */
  overNodeMs: number;
  /** Most milliseconds over `node -e 0`. */
  goalMs?: number;
  met?: boolean;
}

export async function runStartupBench(options: { rounds?: number } = {}): Promise<StartupBenchRow[]> {
  const rounds = options.rounds ?? ROUNDS;
  const dir = await mkdtemp(join(tmpdir(), 'startup-bench-'));
  const model = await startModel();
  try {
    await writeFile(join(dir, 'scorer.autogram.json'), JSON.stringify(CALL_GRAPH));
    await writeFile(join(dir, 'chat.autogram.json'), JSON.stringify(chatGraph('chat')));
    await writeFile(join(dir, 'exact.autogram.json'), JSON.stringify(chatGraph('chat_exact')));
    await writeFile(join(dir, 'script.json'), JSON.stringify(SCRIPT));
    await writeFile(join(dir, 'restart.mjs'), RESTART_ONLY);
    const list = commands(dir, await shebangOptions(), model.url);
    const env = cliEnv();
    const times = list.map(() => [] as number[]);
    // Round -1 warms the disk cache and Node's; it is not counted.
    for (let round = -1; round < rounds; round++)
      for (const [i, command] of list.entries()) {
        const ms = await timeOnce(command, env);
        if (round >= 0) times[i]!.push(ms);
      }
    const floor = times[0]!;
    const rows = list.map((command, i): StartupBenchRow => {
      const { median, p95 } = quantiles(times[i]!);
      const row: StartupBenchRow = {
        command: command.name,
        runs: rounds,
        medianMs: median,
        p95Ms: p95,
        overNodeMs: quantiles(times[i]!.map((ms, round) => ms - floor[round]!)).median,
      };
      if (command.goalMs !== undefined)
        Object.assign(row, { goalMs: command.goalMs, met: row.overNodeMs <= command.goalMs });
      return row;
    });
    print(rows);
    return rows;
  } finally {
    model.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

function print(rows: readonly StartupBenchRow[]): void {
  const ms = (value: number) => value.toFixed(0);
  printTable(
    `start-up benchmark: whole processes, interleaved, ${rows[0]?.runs ?? 0} rounds, Node ${process.version}`,
    ['command', 'runs', 'median ms', 'p95 ms', 'over node ms', 'goal', ''],
    rows.map((row) => [
      row.command,
      String(row.runs),
      ms(row.medianMs),
      ms(row.p95Ms),
      row.command === 'node -e 0' ? '–' : ms(row.overNodeMs),
      row.goalMs === undefined ? '' : `≤ ${row.goalMs} ms over node`,
      row.met === undefined ? '' : verdict(row.met),
    ]),
  );
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await runStartupBench();
