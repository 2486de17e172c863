/**
 * The process Python runs in: Pyodide in a child Node process (child.ts), started on the first Python
 * evaluation and shared by every Python sandbox of this process, so the runtime loads once however many
 * agents run. Evaluations are served one at a time, in order.
 *
 * The child is contained by the operating system's process boundary and Node's permission model, not
 * by anything Python or Pyodide promise: it may read only Pyodide's files and its own, and may not
 * write files, start processes or threads, load native addons or use WASI or the inspector; it gets no
 * environment variables (no credentials), and code generation from strings is off. What it says is
 * read as untrusted: a line that is too long, lacks the key sent to it at start, or is not a message of
 * the protocol ends it.
 *
 * Time is kept here: an evaluation that runs past its limit (time spent in host functions not counted)
 * gets the child killed; the next evaluation starts a new one. So is memory, on Linux, beyond the cap
 * the child puts on WebAssembly memory: Python reaches JavaScript's typed arrays through Pyodide's FFI,
 * so the child is killed when its resident memory passes what it held once loaded, plus the
 * evaluation's limit and its JavaScript heap.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { pathToFileURL } from 'node:url';
import { packageRoot } from '../../package-root.js';
import type { HostReply } from '../guest.js';
import { snapshotPath, type SnapshotUse } from './memory-snapshot.js';
import type {
  Answer,
  ChildMessage,
  ConditionAnswer,
  EvaluationMode,
  ParentMessage,
  ProgramRan,
  ProgramRequest,
} from './protocol.js';

/** Time the runtime may take to load, whatever the evaluations' limit: Pyodide takes seconds. */
const START_TIMEOUT_MS = 120_000;
/** The longest line the child may send: an answer with large variables, but not without end. */
const MAX_LINE_BYTES = 64 * 1024 * 1024;
/** The JavaScript heap of the child (Python's memory is WebAssembly memory, capped in the child). */
const CHILD_HEAP_MB = 256;
/**
 * How often the child's resident memory is read while it evaluates. Python can allocate outside
 * WebAssembly memory and the JavaScript heap both (a typed array made through Pyodide's FFI lives in
 * neither), so the child is also held to its memory at start, the evaluation's limit and its heap.
 */
const RESIDENT_CHECK_MS = 10;

/** One evaluation, as the runtime runs it. */
export interface Evaluation {
  mode: EvaluationMode;
  code: string;
  /** The variables as a JSON object's text. */
  scope: string;
  namespaces: Record<string, string[]>;
  timeoutMs: number;
  memoryMb: number;
  /** For code: conditions to evaluate after it (see ParentMessage). */
  conditions?: string[];
  /** Answers a host function call from Python. */
  callHost(namespace: string, fn: string, args: unknown[]): HostReply | Promise<HostReply>;
}

/** How an evaluation ended, short of the Python runner's own answer. */
export type Ended =
  | { kind: 'answered'; answer: Answer; logs: string[] }
  | { kind: 'timeout'; logs: string[] }
  /** The child's resident memory passed its bound, and it was killed. */
  | { kind: 'memory'; logs: string[] }
  /** The runtime died or broke the protocol: `message` says how. */
  | { kind: 'failed'; message: string; logs: string[] };

/** A workspace program, as the runtime runs it (run-program.ts). */
export interface ProgramRun extends ProgramRequest {
  timeoutMs: number;
}

/** How a program's run ended: the child's answer, unchecked, or why there is none. */
export type ProgramEnded =
  | { kind: 'ran'; ran: ProgramRan }
  | { kind: 'timeout' }
  | { kind: 'failed'; message: string; logs: string[] };

/** A program's run on one runtime: 'stale' when the runtime's files had changed since it loaded, and nothing ran. */
type ProgramAttempt = ProgramEnded | { kind: 'stale' };

/** How an evaluation or program ends when the child exited, or sent what the protocol does not allow. */
const stopped = (): Failed => ({ kind: 'failed', message: 'the Python runtime stopped', logs: [] });
const broken = (): Failed => ({ kind: 'failed', message: 'the Python runtime broke its protocol', logs: [] });
type Failed = Extract<Ended, { kind: 'failed' }>;

const STALE_TWICE: ProgramEnded = {
  kind: 'failed',
  message: 'the Python runtime was changed before the program could run, twice',
  logs: [],
};

/** Thrown when the runtime cannot be started at all (not built, Pyodide missing, load failure). */
export class PythonStartError extends Error {}

/** The one runtime of this process; undefined until the first Python evaluation. */
let shared: PythonRuntime | undefined;

/** The process's Python runtime, started when first used. */
export function pythonRuntime(): PythonRuntime {
  return (shared ??= new PythonRuntime());
}

/** How a runtime starts. */
export interface PythonRuntimeOptions {
  /**
   * The memory snapshot children restore: by default the build's (memory-snapshot.ts) where it is
   * there; null loads Python from scratch.
   */
  snapshot?: string | null;
}

export class PythonRuntime {
  readonly #snapshotFile: string | null | undefined;
  /** The child, started or starting. */
  #child: Promise<LiveChild> | undefined;
  #queue: Promise<unknown> = Promise.resolve();
  /** Times the runtime was started in this process: a test can see that it loads once. */
  starts = 0;
  /** How the last start used the build's snapshot; undefined before a start has finished. */
  snapshot: SnapshotUse | undefined;

  constructor(options: PythonRuntimeOptions = {}) {
    this.#snapshotFile = options.snapshot;
  }

  /** Runs one evaluation, after those queued before it. */
  evaluate(evaluation: Evaluation): Promise<Ended> {
    return this.#serial(() =>
      this.#onChild(
        (child) => child.evaluate(evaluation),
        (ended) => ended.kind === 'answered',
      ),
    );
  }

  /** Runs a workspace program, after the evaluations queued before it. */
  runProgram(program: ProgramRun): Promise<ProgramEnded> {
    return this.#serial(async () => {
      const once = () =>
        this.#onChild(
          (child) => child.runProgram(program),
          (ended) => ended.kind === 'ran' && !ended.ran.restart,
        );
      const ended = await once();
      // A runtime an evaluation changed ran nothing: the program runs on a new one, which none has changed.
      const again = ended.kind === 'stale' ? await once() : ended;
      return again.kind === 'stale' ? STALE_TWICE : again;
    });
  }

  /** Stops the runtime; the next evaluation starts (and loads) a new one. */
  stop(): void {
    const child = this.#child;
    this.#child = undefined;
    child?.then(
      (live) => live.kill(),
      () => undefined,
    );
  }

  #serial<T>(work: () => Promise<T>): Promise<T> {
    const result = this.#queue.then(work);
    this.#queue = result.catch(() => undefined);
    return result;
  }

  /**
   * `use` of the live child. A child whose work did not end as `keep` says (or threw) is killed, and a
   * new one starts loading at once: the next evaluation should not wait seconds for it.
   */
  async #onChild<T>(use: (child: LiveChild) => Promise<T>, keep: (result: T) => boolean): Promise<T> {
    const child = await this.#live();
    let kept = false;
    try {
      const result = await use(child);
      kept = keep(result);
      return result;
    } finally {
      if (!kept) {
        child.kill();
        this.#restart().catch(() => undefined);
      }
    }
  }

  /** The running child, started (or restarted) when there is none. */
  async #live(): Promise<LiveChild> {
    // A runtime loading in the background keeps nothing alive; waiting for it must.
    const hold = setInterval(() => undefined, 60_000);
    try {
      const child = await (this.#child ?? this.#restart());
      return child.alive ? child : await this.#restart();
    } finally {
      clearInterval(hold);
    }
  }

  #restart(): Promise<LiveChild> {
    this.starts++;
    const starting = LiveChild.start(this.#snapshotFile);
    // A start that failed is tried again by the next evaluation, not remembered.
    starting.then(
      (child) => (this.snapshot = child.snapshot),
      () => {
        if (this.#child === starting) this.#child = undefined;
      },
    );
    return (this.#child = starting);
  }
}

/** The children alive in this process, and whether they are killed when it exits. */
const living = new Set<LiveChild>();
let killingOnExit = false;

/** Kills `child` when this process exits: one busy in a loop would outlive it (an idle one ends with its pipe). */
function killedOnExit(child: LiveChild): void {
  if (!killingOnExit) process.once('exit', () => living.forEach((each) => each.kill()));
  killingOnExit = true;
  living.add(child);
}

/** A started child and the lines it sends. */
class LiveChild {
  readonly #process: ChildProcess;
  /** The protocol's pipes: requests to the child (its descriptor 3), its answers (its descriptor 4). */
  readonly #requests: Writable;
  readonly #lines: LineQueue;
  /** What each of the child's lines starts with (protocol.ts). */
  readonly #key = randomBytes(16).toString('hex');
  /** The child's resident memory once loaded; undefined where the system does not tell it (not Linux). */
  #loadedBytes: number | undefined;
  #exited = false;
  /** How the child used the build's snapshot. */
  snapshot: SnapshotUse = 'absent';

  private constructor(child: ChildProcess, requests: Writable, answers: Readable) {
    this.#process = child;
    this.#requests = requests;
    this.#lines = new LineQueue(MAX_LINE_BYTES);
    answers.on('data', (chunk: Buffer) => this.#lines.push(chunk));
    killedOnExit(this);
    const ended = () => {
      this.#exited = true;
      this.#lines.end();
      living.delete(this);
    };
    child.on('exit', ended);
    // A child that could not be started (no process slots, no file descriptors) says so here, not by exiting.
    child.on('error', ended);
    // A child killed mid-write must not crash us with EPIPE.
    requests.on('error', () => undefined);
    answers.on('error', () => undefined);
    // An idle runtime does not keep this process alive; an evaluation's own timer does while it runs.
    child.unref();
    for (const stream of [requests, answers, child.stderr])
      (stream as unknown as { unref?: () => void } | null)?.unref?.();
  }

  /** A child restoring `snapshot` (null: none; undefined: the build's, where it is there). */
  static async start(snapshot: string | null | undefined): Promise<LiveChild> {
    const root = packageRoot();
    const childFile = join(root, 'dist', 'src', 'sandbox', 'python', 'child.js');
    if (!existsSync(childFile))
      throw new PythonStartError(
        `the Python sandbox is not built (${childFile} is missing): run \`npm run build\``,
      );
    let pyodideEntry: string;
    try {
      pyodideEntry = createRequire(join(root, 'package.json')).resolve('pyodide/pyodide.mjs');
    } catch {
      throw new PythonStartError('the pyodide package is not installed: run `npm install`');
    }
    const restored = snapshot === undefined ? builtSnapshot(root, dirname(pyodideEntry)) : snapshot;
    const child = spawn(
      process.execPath,
      [
        '--permission',
        `--allow-fs-read=${dirname(pyodideEntry)}`,
        `--allow-fs-read=${dirname(childFile)}`,
        // Node reads the nearest package.json to know child.js is a module.
        `--allow-fs-read=${join(root, 'package.json')}`,
        ...(restored === null ? [] : [`--allow-fs-read=${restored}`]),
        '--disallow-code-generation-from-strings',
        `--max-old-space-size=${CHILD_HEAP_MB}`,
        '--no-warnings',
        childFile,
        pathToFileURL(pyodideEntry).href,
        ...(restored === null ? [] : [restored]),
      ],
      // The protocol has pipes of its own: reads of the child's stdin poll (child.ts).
      { cwd: dirname(pyodideEntry), env: {}, stdio: ['ignore', 'ignore', 'pipe', 'pipe', 'pipe'] },
    );
    const [requests, answers] = [child.stdio[3], child.stdio[4]] as [Writable | null, Readable | null];
    if (child.pid === undefined || !requests || !answers || !child.stderr) {
      child.on('error', () => undefined);
      throw new PythonStartError('the Python runtime could not be started: the system refused a new process');
    }
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      if (stderr.length < 4096) stderr += chunk.toString();
    });
    const live = new LiveChild(child, requests, answers);
    requests.write(`${live.#key}\n`);
    const ready = await live.#next(START_TIMEOUT_MS, false);
    if (typeof ready !== 'object' || ready.type !== 'ready') {
      live.kill();
      const why = ready === 'timeout' ? `it did not load in ${START_TIMEOUT_MS / 1000} s` : lastLine(stderr);
      throw new PythonStartError(`the Python runtime did not start: ${why || 'it exited'}`);
    }
    live.#loadedBytes = residentBytes(child.pid);
    live.snapshot = ready.snapshot;
    return live;
  }

  get alive(): boolean {
    return !this.#exited;
  }

  kill(): void {
    if (!this.#exited) this.#process.kill('SIGKILL');
  }

  /** Runs one evaluation, killing the child if its resident memory passes its bound meanwhile. */
  async evaluate(evaluation: Evaluation): Promise<Ended> {
    const ended = await this.#watchingMemory(evaluation.memoryMb, () => this.#serve(evaluation));
    return ended === 'memory' ? { kind: 'memory', logs: [] } : ended;
  }

  /**
   * `work`, or 'memory' when the child's resident memory passed what it loaded with, `memoryMb` and its
   * JavaScript heap meanwhile (the child is then killed). Unwatched where /proc does not tell.
   */
  async #watchingMemory<T>(memoryMb: number, work: () => Promise<T>): Promise<T | 'memory'> {
    if (this.#loadedBytes === undefined) return work();
    const bound = this.#loadedBytes + (memoryMb + CHILD_HEAP_MB) * 1024 * 1024;
    let over = false;
    const watch = setInterval(() => {
      if ((residentBytes(this.#process.pid) ?? 0) <= bound) return;
      over = true;
      this.kill();
    }, RESIDENT_CHECK_MS);
    try {
      const result = await work();
      return over ? 'memory' : result;
    } finally {
      clearInterval(watch);
    }
  }

  async #serve(evaluation: Evaluation): Promise<Ended> {
    const { callHost, timeoutMs, ...request } = evaluation;
    this.#send({ type: 'evaluate', ...request });
    let left = timeoutMs;
    let laps = 0;
    for (;;) {
      const started = performance.now();
      const message = await this.#next(left);
      left -= performance.now() - started;
      if (message === 'timeout') return { kind: 'timeout', logs: [] };
      if (message === undefined) return stopped();
      if (message === 'broken') return broken();
      switch (message.type) {
        case 'done': {
          const answer = parseAnswer(message.answer);
          return answer === undefined ? broken() : { kind: 'answered', answer, logs: message.logs };
        }
        case 'fatal':
          return { kind: 'failed', message: message.message, logs: message.logs };
        case 'host': {
          // Time in the host is not the code's: the clock stops until the host answers.
          const reply = await answerHost(callHost, message);
          this.#send({ type: 'host-result', ...reply });
          break;
        }
        case 'lap':
          // Each condition after the code has the time of its own an evaluation has. Python can send a
          // lap itself, as it can reach anything of the runner: one per condition asked for, at most,
          // bounds the code to that many more limits.
          if (++laps > (request.conditions?.length ?? 0)) return broken();
          left = timeoutMs;
          break;
        case 'ready':
          return broken();
      }
    }
  }

  /**
   * Runs a program: one request, one answer, no host calls; the clock runs from the request on, and
   * its memory is watched as an evaluation's is.
   */
  async runProgram(program: ProgramRun): Promise<ProgramAttempt> {
    const ended = await this.#watchingMemory(program.memoryMb, () => this.#runProgram(program));
    return ended === 'memory'
      ? { kind: 'failed', message: `the program used more than ${program.memoryMb} MB of memory`, logs: [] }
      : ended;
  }

  async #runProgram(program: ProgramRun): Promise<ProgramAttempt> {
    const { timeoutMs, ...request } = program;
    this.#send({ type: 'program', ...request });
    const message = await this.#next(timeoutMs);
    if (message === 'timeout') return { kind: 'timeout' };
    if (message === undefined) return stopped();
    if (message === 'broken') return broken();
    switch (message.type) {
      case 'ran': {
        const { type: _ran, ...ran } = message;
        return { kind: 'ran', ran };
      }
      case 'stale':
        return { kind: 'stale' };
      case 'fatal':
        return { kind: 'failed', message: message.message, logs: message.logs };
      default:
        return broken();
    }
  }

  #send(message: ParentMessage): void {
    if (!this.#exited) this.#requests.write(`${JSON.stringify(message)}\n`);
  }

  /** The child's next message, 'timeout' after `ms`, undefined once it exited, 'broken' for a bad line. */
  async #next(ms: number, keepAlive = true): Promise<ChildMessage | 'timeout' | 'broken' | undefined> {
    const line = await this.#lines.next(Math.max(ms, 0), keepAlive);
    if (line === 'ended') return undefined;
    if (line === 'timeout') return line;
    if (line === 'overflow' || !line.text.startsWith(this.#key)) return 'broken';
    try {
      const message = JSON.parse(line.text.slice(this.#key.length)) as unknown;
      return isChildMessage(message) ? message : 'broken';
    } catch {
      return 'broken';
    }
  }
}

/** The build's snapshot for this Pyodide, null where the build made none. */
function builtSnapshot(root: string, pyodideDir: string): string | null {
  const path = snapshotPath(root, pyodideDir);
  return existsSync(path) ? path : null;
}

/** Calls the host function and shapes its reply for the child: a result as JSON text, or an error. */
async function answerHost(
  callHost: Evaluation['callHost'],
  message: Extract<ChildMessage, { type: 'host' }>,
): Promise<{ ok: true; value: string } | { ok: false; error: string }> {
  let args: unknown;
  try {
    args = JSON.parse(message.args);
  } catch {
    return { ok: false, error: 'the arguments were not JSON' };
  }
  const reply = await callHost(message.namespace, message.fn, Array.isArray(args) ? args : []);
  if (!reply.ok) return { ok: false, error: reply.message };
  let value: string | undefined;
  try {
    value = JSON.stringify(reply.value ?? null) as string | undefined;
  } catch {
    value = undefined;
  }
  if (value === undefined)
    return { ok: false, error: `${message.namespace}.${message.fn} returned a value JSON cannot hold` };
  return { ok: true, value };
}

function isChildMessage(value: unknown): value is ChildMessage {
  if (typeof value !== 'object' || value === null) return false;
  const message = value as Record<string, unknown>;
  switch (message.type) {
    case 'lap':
      return true;
    case 'ready':
      return (
        message.snapshot === 'restored' || message.snapshot === 'refused' || message.snapshot === 'absent'
      );
    case 'host':
      return (
        typeof message.namespace === 'string' &&
        typeof message.fn === 'string' &&
        typeof message.args === 'string'
      );
    case 'done':
      return typeof message.answer === 'string' && isLogs(message.logs);
    case 'fatal':
      return typeof message.message === 'string' && isLogs(message.logs);
    case 'ran':
      return isProgramRan(message);
    case 'stale':
      return true;
    default:
      return false;
  }
}

function isProgramRan(message: Record<string, unknown>): boolean {
  const isFile = (file: unknown) =>
    typeof file === 'object' &&
    file !== null &&
    typeof (file as Record<string, unknown>).path === 'string' &&
    typeof (file as Record<string, unknown>).data === 'string';
  const isLeftOut = (file: unknown) =>
    typeof file === 'object' &&
    file !== null &&
    typeof (file as Record<string, unknown>).path === 'string' &&
    typeof (file as Record<string, unknown>).reason === 'string';
  return (
    typeof message.answer === 'string' &&
    Array.isArray(message.files) &&
    message.files.every(isFile) &&
    Array.isArray(message.deleted) &&
    message.deleted.every((path) => typeof path === 'string') &&
    Array.isArray(message.leftOut) &&
    message.leftOut.every(isLeftOut) &&
    typeof message.moreLeftOut === 'number' &&
    typeof message.restart === 'boolean' &&
    isLogs(message.logs)
  );
}

function isLogs(value: unknown): value is string[] {
  return Array.isArray(value) && value.every((line) => typeof line === 'string');
}

function parseAnswer(text: string): Answer | undefined {
  try {
    const answer = JSON.parse(text) as Answer;
    if (typeof answer !== 'object' || answer === null || typeof answer.ok !== 'boolean') return undefined;
    if (answer.ok)
      return typeof answer.changed === 'object' &&
        answer.changed !== null &&
        (answer.conditions === undefined ||
          (Array.isArray(answer.conditions) && answer.conditions.every(isConditionAnswer)))
        ? answer
        : undefined;
    return isFailure(answer) ? answer : undefined;
  } catch {
    return undefined;
  }
}

function isConditionAnswer(answer: ConditionAnswer): boolean {
  if (typeof answer !== 'object' || answer === null) return false;
  return answer.ok === true ? typeof answer.holds === 'boolean' : isFailure(answer);
}

/** The runner's functions are Python code has reach to: an answer is what the protocol says or nothing. */
function isFailure(answer: Answer | ConditionAnswer): boolean {
  if (answer.ok !== false) return false;
  if (answer.kind === 'uncopyable') return typeof answer.name === 'string' && typeof answer.type === 'string';
  const { kind, message, line } = answer;
  const known = kind === 'syntax' || kind === 'runtime' || kind === 'memory';
  return known && typeof message === 'string' && (line === null || Number.isSafeInteger(line));
}

/** A process's resident memory in bytes, from /proc (Linux); undefined where that cannot be read. */
function residentBytes(pid: number | undefined): number | undefined {
  try {
    const kilobytes = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return kilobytes ? Number(kilobytes[1]) * 1024 : undefined;
  } catch {
    return undefined;
  }
}

function lastLine(text: string): string {
  return text.trim().split('\n').pop() ?? '';
}

/** Newline-ended lines from a stream, waited for one at a time. */
class LineQueue {
  readonly #lines: string[] = [];
  #pending: Buffer[] = [];
  #pendingBytes = 0;
  #ended = false;
  #overflow = false;
  #waiter: (() => void) | undefined;

  constructor(readonly maxBytes: number) {}

  push(chunk: Buffer): void {
    let start = 0;
    for (let end = chunk.indexOf(10); end >= 0; end = chunk.indexOf(10, start)) {
      this.#pending.push(chunk.subarray(start, end));
      this.#lines.push(Buffer.concat(this.#pending).toString('utf8'));
      this.#pending = [];
      this.#pendingBytes = 0;
      start = end + 1;
    }
    if (start < chunk.length) {
      this.#pending.push(chunk.subarray(start));
      this.#pendingBytes += chunk.length - start;
      if (this.#pendingBytes > this.maxBytes) this.#overflow = true;
    }
    this.#wake();
  }

  end(): void {
    this.#ended = true;
    this.#wake();
  }

  /** The next line; `keepAlive`: whether waiting for it keeps the process alive. */
  async next(ms: number, keepAlive: boolean): Promise<{ text: string } | 'timeout' | 'overflow' | 'ended'> {
    const deadline = performance.now() + ms;
    for (;;) {
      if (this.#lines.length > 0) return { text: this.#lines.shift()! };
      if (this.#overflow) return 'overflow';
      if (this.#ended) return 'ended';
      const left = deadline - performance.now();
      if (left <= 0) return 'timeout';
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        if (!keepAlive) timer.unref();
        this.#waiter = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.#waiter = undefined;
    }
  }

  #wake(): void {
    this.#waiter?.();
  }
}
