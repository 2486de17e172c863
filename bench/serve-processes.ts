/**
 * The processes of the serve benchmark, each started as a user starts it: the zero-latency model
 * (instant-server.ts) in a child process; `meta-agent serve` on that model with its JSON request log on
 * stderr, which is where the server's own time per request is read (on the files, or on a PostgreSQL);
 * `meta-agent worker` beside it; and `meta-agent chat --state` on the same model, fed one line at a
 * time through a pipe.
 */
import { fork, spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdir, readFile } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { fileURLToPath, pathToFileURL } from 'node:url';

const BIN = fileURLToPath(new URL('../../bin/meta-agent.js', import.meta.url));
/** The model name the CLI is given; the instant server answers to any. */
const MODEL = 'gpt-4o-mini';
/** A process that takes longer to start, or to answer, is stuck: the benchmark fails. */
const STALL_MS = 30_000;

/** Starts the zero-latency model in its own process; resolves to its base URL (with `/v1`). */
export async function startModel(): Promise<{ url: string; pid: number; stop(): void }> {
  const child = fork(fileURLToPath(new URL('./instant-server.js', import.meta.url)));
  const url = await withinStall(
    new Promise<string>((resolve, reject) => {
      child.once('message', (message) => resolve(message as string));
      child.once('exit', (code) => reject(new Error(`the instant model exited with ${code}`)));
    }),
    'the instant model to start',
  );
  // A model that already ended must not hide, from a `finally`, the error its end caused.
  return { url, pid: child.pid!, stop: () => child.connected && child.disconnect() };
}

/** One chat completion as the server logged it once it had answered. */
export interface LoggedTurn {
  conversation: string;
  status: number;
  /** The server's own time for the request, from its arrival to its answer. */
  ms: number;
}

/** The server's memory after a garbage collection, in bytes. */
export interface ServerMemory {
  rss: number;
  heapUsed: number;
  external: number;
  arrayBuffers: number;
}

export interface ServeProcess {
  url: string;
  pid: number;
  /** The chat completions logged so far, in order. */
  readonly turns: readonly LoggedTurn[];
  /** Resolves once the log holds `count` chat completions (a log line can trail its answer). */
  logged(count: number): Promise<void>;
  /** Collects the server's garbage and reads its memory; only with `probeMemory`. */
  memory(): Promise<ServerMemory>;
  /** SIGTERM, then the process's end (a CPU profile is written then). */
  stop(): Promise<void>;
}

export interface ServeOptions {
  /** Loads memory-probe.ts into the server, for `memory()`. */
  probeMemory?: boolean;
  /** Writes a CPU profile of the server (`node --cpu-prof`) into this folder when it stops. */
  profileDir?: string;
  /** Keeps the conversations in this PostgreSQL (`--database`) instead of the files. */
  database?: string;
  /** More of serve's options (`--max-running 100`). */
  args?: string[];
}

/**
 * `meta-agent serve GRAPH --port 0 --log-format json` on the model at `modelUrl`, keeping its
 * conversations in `dataDir`. The server is started with `--no-node-snapshot`, as it restarts itself
 * anyway (src/cli/sandbox-process.ts), so that the Node options given here stay with it.
 */
export async function startServe(
  graph: string,
  modelUrl: string,
  dataDir: string,
  options: ServeOptions = {},
): Promise<ServeProcess> {
  const node = ['--no-node-snapshot'];
  if (options.probeMemory)
    node.push(
      '--expose-gc',
      '--import',
      pathToFileURL(fileURLToPath(new URL('./memory-probe.js', import.meta.url))).href,
    );
  if (options.profileDir) node.push('--cpu-prof', `--cpu-prof-dir=${options.profileDir}`);
  await mkdir(dataDir, { recursive: true });
  const args = ['serve', graph, '--port', '0', '--log-format', 'json', '--data', dataDir];
  if (options.database) args.push('--database', options.database);
  args.push(...(options.args ?? []));
  const child = spawnCli(node, [...args, '--base-url', modelUrl, '--model', MODEL], dataDir);
  const turns: LoggedTurn[] = [];
  const waiting = new Set<() => void>();
  const memories: ((memory: ServerMemory) => void)[] = [];
  let other = '';
  createInterface({ input: child.stderr }).on('line', (line) => {
    const record = parseRecord(line);
    if (record?.benchMemory) memories.shift()?.(record.benchMemory);
    else if (record?.path === '/v1/chat/completions')
      turns.push({ conversation: record.conversation ?? '', status: record.status ?? 0, ms: record.ms ?? 0 });
    else other = `${other}${line}\n`.slice(-4000);
    for (const wake of waiting) wake();
  });
  const closed = new Promise<void>((resolve) => child.once('close', () => resolve()));
  const url = await withinStall(
    new Promise<string>((resolve, reject) => {
      createInterface({ input: child.stdout }).on('line', (line) => {
        const match = /^listening on (\S+)$/.exec(line);
        if (match) resolve(match[1]!);
      });
      void closed.then(() => reject(new Error(`meta-agent serve exited before listening:\n${other}`)));
    }),
    'meta-agent serve to listen',
  );
  return {
    url,
    pid: child.pid!,
    turns,
    logged: (count) =>
      withinStall(
        new Promise<void>((resolve) => {
          const check = () => {
            if (turns.length < count) return;
            waiting.delete(check);
            resolve();
          };
          waiting.add(check);
          check();
        }),
        `the server's log of ${count} chat completions (it holds ${turns.length}; other output:\n${other})`,
      ),
    memory: () => {
      if (!options.probeMemory) throw new Error('memory() needs a server started with probeMemory');
      const read = new Promise<ServerMemory>((resolve) => memories.push(resolve));
      child.kill('SIGUSR2');
      return withinStall(read, "the server's memory");
    },
    stop: () => {
      child.kill('SIGTERM');
      return withinStall(closed, 'meta-agent serve to stop');
    },
  };
}

/** `meta-agent worker GRAPH --database URL` on the model at `modelUrl`, once it says it takes work. */
export async function startWorker(
  graph: string,
  modelUrl: string,
  database: string,
  cwd: string,
): Promise<{ pid: number; stop(): Promise<void> }> {
  const args = ['worker', graph, '--database', database, '--base-url', modelUrl, '--model', MODEL];
  const child = spawnCli(['--no-node-snapshot'], args, cwd);
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr = `${stderr}${chunk}`.slice(-4000)));
  const closed = new Promise<void>((resolve) => child.once('close', () => resolve()));
  await withinStall(
    new Promise<void>((resolve, reject) => {
      createInterface({ input: child.stdout }).on('line', (line) => {
        if (line.startsWith('worker ')) resolve();
      });
      void closed.then(() => reject(new Error(`meta-agent worker exited before it took work:\n${stderr}`)));
    }),
    'meta-agent worker to take work',
  );
  return {
    pid: child.pid!,
    stop: () => {
      child.kill('SIGTERM');
      return withinStall(closed, 'meta-agent worker to stop');
    },
  };
}

export interface ChatProcess {
  pid: number;
  /** Sends `text` as one line and resolves with the milliseconds until the reply's line came back. */
  reply(text: string): Promise<number>;
  /** Ends the input, as a user's pipe ends, and waits for the process to finish. */
  stop(): Promise<void>;
}

/**
 * `meta-agent chat GRAPH --state FILE` on the model at `modelUrl`, in lines through a pipe. Resolves
 * once the agent's opening reply is out, so nothing of the process's start is in what `reply` times.
 */
export async function startChat(
  graph: string,
  modelUrl: string,
  stateFile: string,
  cwd: string,
): Promise<ChatProcess> {
  const child = spawnCli(
    [],
    ['chat', graph, '--state', stateFile, '--base-url', modelUrl, '--model', MODEL],
    cwd,
  );
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr = `${stderr}${chunk}`.slice(-4000)));
  // A line written after the process has gone fails; its end is reported by the reply awaited.
  child.stdin.on('error', () => undefined);
  const lines: string[] = [];
  let wake = () => {};
  createInterface({ input: child.stdout }).on('line', (line) => {
    lines.push(line);
    wake();
  });
  const closed = new Promise<void>((resolve) => child.once('close', () => resolve()));
  void closed.then(() => wake());
  const nextLine = () =>
    withinStall(
      new Promise<string>((resolve, reject) => {
        const check = () => {
          if (lines.length > 0) resolve(lines.shift()!);
          else if (child.exitCode !== null)
            reject(new Error(`meta-agent chat exited (${child.exitCode}):\n${stderr}`));
        };
        wake = check;
        check();
      }),
      `a reply from meta-agent chat (stderr so far:\n${stderr})`,
    );
  await nextLine();
  return {
    pid: child.pid!,
    reply: async (text) => {
      const started = performance.now();
      child.stdin.write(`${text}\n`);
      await nextLine();
      return performance.now() - started;
    },
    stop: () => {
      child.stdin.end();
      return withinStall(closed, 'meta-agent chat to finish');
    },
  };
}

/**
 * The CPU milliseconds process `pid` has used so far, all its threads (Linux: /proc/PID/stat, whose
 * user and system times are in clock ticks of 10 ms).
 */
export async function cpuMsOf(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  // The fields after the command name, which is in parentheses and may hold spaces.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/**
 * `node NODE… bin/meta-agent.js ARGS…` in `cwd`, with the environment of a user who has configured no
 * model (the command line names it) and whose own configuration folder is not read.
 */
function spawnCli(node: string[], args: string[], cwd: string): ChildProcessWithoutNullStreams {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env))
    if (!/^(OPENAI_|META_AGENT_|NODE_OPTIONS$)/.test(name)) env[name] = value;
  Object.assign(env, { NO_COLOR: '1', META_AGENT_CONFIG_DIR: `${cwd}/.config` });
  const child = spawn(process.execPath, [...node, BIN, ...args], {
    cwd,
    env,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  // A process that cannot start closes with no output; the waits on it say so.
  child.on('error', () => undefined);
  return child;
}

interface LogRecord {
  path?: string;
  status?: number;
  ms?: number;
  conversation?: string;
  benchMemory?: ServerMemory;
}

function parseRecord(line: string): LogRecord | undefined {
  if (!line.startsWith('{')) return undefined;
  try {
    return JSON.parse(line) as LogRecord;
  } catch {
    return undefined;
  }
}

/** `promise`, or a failure naming what was awaited once STALL_MS pass. */
function withinStall<T>(promise: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const stalled = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`waited ${STALL_MS / 1000} s for ${what}`)), STALL_MS);
  });
  return Promise.race([promise, stalled]).finally(() => clearTimeout(timer));
}
