/**
 * The Python sandbox's child process: Pyodide (CPython in WebAssembly) behind a line protocol on two
 * pipes of its own, file descriptors 3 (requests in) and 4 (answers out) (protocol.ts). python-runtime.ts starts it under Node's permission model; this file must
 * import nothing but Node's builtins and Pyodide, the only files the child may read.
 *
 * Once Pyodide has loaded, the child takes from the JavaScript world what Python could use to reach the
 * host (`process`, `fetch` and the other network globals), and serves requests one at a time with
 * blocking reads and writes: a host function called from Python blocks until the parent answers, so
 * Python sees an ordinary call. The parent owns the clock: it kills the child when an evaluation runs
 * too long. Memory is capped here, where WebAssembly memory grows: past the limit, Python gets a
 * MemoryError and the runtime stays usable.
 *
 * Everything this file writes to descriptor 4 is a protocol line, prefixed with the key the parent sent
 * first; Python's output is collected and sent with the answer. The child's stdin and stdout are not
 * connected: Node makes those non-blocking as soon as anything touches them, and a read that must poll
 * answers later than one that blocks.
 */
import { constants as fsConstants, readFileSync, readSync, writeSync } from 'node:fs';
import { constants as osConstants } from 'node:os';
import type { loadPyodide as LoadPyodide } from 'pyodide';
import { loadRuntime } from './memory-snapshot.js';
import { runProgram, runtimeFiles, type ProgramFs } from './program-child.js';
import type { ChildMessage, ParentMessage, ProgramRequest } from './protocol.js';

/** Pyodide's module, and the build's snapshot of the runtime where the parent found one. */
const [pyodideUrl, snapshotFile] = process.argv.slice(2);
/** The pipes of the protocol, as python-runtime.ts passes them. */
const REQUESTS_FD = 3;
const ANSWERS_FD = 4;
const WASM_PAGE = 65_536;
/** Lines of output kept per evaluation, and characters a line: code that prints without end is cut. */
const MAX_LOG_LINES = 1000;
const MAX_LOG_LINE = 10_000;

const exit: (code: number) => never = process.exit.bind(process);
/** Bytes the runtime's WebAssembly memory may reach; set per request, once the runtime has loaded. */
let memoryCap = Number.POSITIVE_INFINITY;

/** What this file uses of WebAssembly.Memory (Node's types leave WebAssembly out). */
interface WasmMemory {
  buffer: ArrayBuffer;
  grow(delta: number): number;
}
const memoryPrototype = (globalThis as unknown as { WebAssembly: { Memory: { prototype: WasmMemory } } })
  .WebAssembly.Memory.prototype;
const grow = memoryPrototype.grow;
memoryPrototype.grow = function limitedGrow(this: WasmMemory, delta: number) {
  // Emscripten's allocator treats a failed grow as out of memory: Python raises MemoryError.
  if (this.buffer.byteLength + delta * WASM_PAGE > memoryCap) throw new RangeError('memory limit');
  return grow.call(this, delta);
};

// Node's permission model refuses process.binding; Pyodide's file-system layer only wants the constants.
(process as unknown as { binding: (name: string) => unknown }).binding = (name: string) => {
  if (name === 'constants') return { fs: fsConstants, os: osConstants };
  throw new Error(`process.binding(${name}) is not available`);
};

/**
 * The waits between reads of a pipe that is not ready, in milliseconds, where the system hands the
 * child a non-blocking one (EAGAIN): short at first, as a host function's answer or the next evaluation
 * often follows within microseconds, then longer, so that an idle runtime costs no CPU.
 */
const FIRST_PAUSE_MS = 0.01;
const LONGEST_PAUSE_MS = 1;

/** Waits `ms` milliseconds, blocking. */
function pause(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/**
 * Reads newline-ended lines from the requests pipe with blocking reads. Bytes are copied into arrays of their own,
 * never into Node's shared Buffer pool, so no Buffer that Python might reach holds the protocol's key.
 */
class LineReader {
  readonly #chunk = new Uint8Array(1 << 16);
  #pending = new Uint8Array(0);

  /** The next message, undefined once the parent has closed the pipe. */
  next<T>(): T | undefined {
    const line = this.line();
    return line === undefined ? undefined : (JSON.parse(line) as T);
  }

  line(): string | undefined {
    let wait = FIRST_PAUSE_MS;
    for (;;) {
      const end = this.#pending.indexOf(10);
      if (end >= 0) {
        const line = new TextDecoder().decode(this.#pending.subarray(0, end));
        this.#pending = this.#pending.slice(end + 1);
        return line;
      }
      let read: number;
      try {
        read = readSync(REQUESTS_FD, this.#chunk);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EAGAIN') throw error;
        pause(wait);
        wait = Math.min(wait * 2, LONGEST_PAUSE_MS);
        continue;
      }
      if (read === 0) return undefined;
      const joined = new Uint8Array(this.#pending.length + read);
      joined.set(this.#pending);
      joined.set(this.#chunk.subarray(0, read), this.#pending.length);
      this.#pending = joined;
    }
  }
}

const input = new LineReader();
/**
 * The parent's first line: the key every line this child sends starts with. Python may reach the answers
 * pipe (Pyodide's JavaScript side keeps Node's file system in reach) but never learns the key, which lives only in this module's scope, so a line it forges is refused.
 */
const key = input.line() ?? exit(0);
let logs: string[] = [];

const { loadPyodide } = (await import(pyodideUrl!)) as { loadPyodide: typeof LoadPyodide };
const { pyodide, snapshot } = await loadRuntime(loadPyodide, readSnapshot());
pyodide.setStdin({ error: true });
pyodide.setStdout({ batched: (line) => log(line) });
pyodide.setStderr({ batched: (line) => log(line) });
pyodide.globals.set('_meta_agent_host_call', hostCall);
// A condition after the code starts, after a phase that took a millisecond or more (runner-source.ts).
pyodide.globals.set('_meta_agent_lap', () => send({ type: 'lap' }));
(pyodide.globals.get('_meta_agent_programs_start_here') as () => void)();
const run = pyodide.globals.get('_meta_agent_run') as (...args: unknown[]) => string;
const runPythonProgram = pyodide.globals.get('_meta_agent_run_program') as (
  path: string,
  outputBytes: number,
) => string;
const heap = () => (pyodide as unknown as { _module: { HEAP8: Int8Array } })._module.HEAP8.buffer.byteLength;
const baseline = heap();
stripHostGlobals();
const loadedFiles = runtimeFiles(pyodide.FS as unknown as ProgramFs);
send({ type: 'ready', snapshot });

for (;;) {
  const request = input.next<ParentMessage>();
  if (request === undefined) exit(0);
  if (request.type === 'program') {
    serveProgram(request);
    continue;
  }
  if (request.type !== 'evaluate') continue;
  memoryCap = baseline + request.memoryMb * 1024 * 1024;
  logs = [];
  let answer: string;
  try {
    const conditions = request.conditions ? JSON.stringify(request.conditions) : '';
    answer = run(request.mode, request.code, request.scope, JSON.stringify(request.namespaces), conditions);
  } catch (error) {
    // Not a Python exception (those come back as answers): the runtime itself failed, e.g. its stack ran out.
    send({ type: 'fatal', message: error instanceof Error ? error.message : String(error), logs });
    exit(1);
  }
  send({ type: 'done', answer, logs });
}

/** The snapshot's bytes; undefined where there is none, or it cannot be read (then Python loads from scratch). */
function readSnapshot(): Uint8Array | undefined {
  try {
    return snapshotFile ? readFileSync(snapshotFile) : undefined;
  } catch {
    return undefined;
  }
}

/** Runs a workspace program (program-child.ts) and answers what it did. */
function serveProgram(request: ProgramRequest): void {
  memoryCap = baseline + request.memoryMb * 1024 * 1024;
  logs = [];
  let ran: ReturnType<typeof runProgram>;
  try {
    ran = runProgram(pyodide.FS as unknown as ProgramFs, request, runPythonProgram, loadedFiles);
  } catch (error) {
    send({ type: 'fatal', message: error instanceof Error ? error.message : String(error), logs });
    exit(1);
  }
  send(ran === 'stale' ? { type: 'stale' } : { type: 'ran', ...ran, logs });
}

/**
 * A host function called from Python: asks the parent and blocks until it answers. The answer is JSON
 * text, `{ ok, value }` or `{ ok: false, error }`, which the runner turns into a value or a RuntimeError.
 */
function hostCall(namespace: string, fn: string, args: string): string {
  send({ type: 'host', namespace, fn, args });
  const reply = input.next<ParentMessage>();
  if (reply === undefined) exit(0);
  if (reply.type !== 'host-result') exit(1);
  return reply.ok ? `{"ok":true,"value":${reply.value}}` : JSON.stringify({ ok: false, error: reply.error });
}

function log(line: string): void {
  if (logs.length < MAX_LOG_LINES)
    logs.push(line.length > MAX_LOG_LINE ? `${line.slice(0, MAX_LOG_LINE)}…` : line);
}

function send(message: ChildMessage): void {
  const bytes = new TextEncoder().encode(`${key}${JSON.stringify(message)}\n`);
  let written = 0;
  while (written < bytes.length) {
    try {
      written += writeSync(ANSWERS_FD, bytes, written);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EAGAIN') throw error;
      pause(LONGEST_PAUSE_MS);
    }
  }
}

/**
 * Takes away what leads from JavaScript to the host's powers. Python reaches JavaScript objects through
 * Pyodide's FFI, and from any object to the global one; code generation from strings is off
 * (`--disallow-code-generation-from-strings`), so what is not reachable cannot be made.
 */
function stripHostGlobals(): void {
  // The process object may still be reachable through some object Pyodide keeps: its ways to Node's
  // modules, native code and other processes go first.
  const processObject = process as unknown as Record<string, unknown>;
  for (const name of [
    'getBuiltinModule',
    'binding',
    '_linkedBinding',
    'dlopen',
    'kill',
    'chdir',
    'mainModule',
  ])
    delete processObject[name];
  const global = globalThis as Record<string, unknown>;
  for (const name of [
    'process',
    'fetch',
    'WebSocket',
    'EventSource',
    'Request',
    'Response',
    'Headers',
    'FormData',
    'navigator',
    'require',
    'module',
    'Buffer',
  ])
    delete global[name];
}
