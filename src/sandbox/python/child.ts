/**
 * The Python sandbox's child process: Pyodide (CPython in WebAssembly) behind a line protocol on stdin
 * and stdout (protocol.ts). python-runtime.ts starts it under Node's permission model; this file must
 * import nothing but Node's builtins and Pyodide, the only files the child may read.
 *
 * Once Pyodide has loaded, the child takes from the JavaScript world what Python could use to reach the
 * host (`process`, `fetch` and the other network globals), and serves requests one at a time with
 * blocking reads and writes: a host function called from Python blocks until the parent answers, so
 * Python sees an ordinary call. The parent owns the clock: it kills the child when an evaluation runs
 * too long. Memory is capped here, where WebAssembly memory grows: past the limit, Python gets a
 * MemoryError and the runtime stays usable.
 *
 * Everything written to stdout is a protocol line; Python's output is collected and sent with the answer.
 */
import { Buffer } from 'node:buffer';
import { constants as fsConstants, readSync, writeSync } from 'node:fs';
import { constants as osConstants } from 'node:os';
import type { loadPyodide as LoadPyodide, PyodideAPI } from 'pyodide';
import { runProgram, runtimeFiles, type ProgramFs } from './program-child.js';
import { PROGRAM_RUNNER_SOURCE } from './program-runner-source.js';
import type { ChildMessage, ParentMessage, ProgramRequest } from './protocol.js';
import { RUNNER_SOURCE } from './runner-source.js';

const [pyodideUrl] = process.argv.slice(2);
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

/** Waits a millisecond, blocking: a pipe said it is not ready yet (EAGAIN). */
function pause(): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1);
}

/** Reads newline-ended JSON messages from stdin with blocking reads. */
class LineReader {
  readonly #chunk = Buffer.alloc(1 << 16);
  #pending: Buffer[] = [];

  next<T>(): T | undefined {
    for (;;) {
      const line = this.#takeLine();
      if (line !== undefined) return JSON.parse(line) as T;
      let read: number;
      try {
        read = readSync(0, this.#chunk);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EAGAIN') throw error;
        pause();
        continue;
      }
      if (read === 0) return undefined;
      this.#pending.push(Buffer.from(this.#chunk.subarray(0, read)));
    }
  }

  #takeLine(): string | undefined {
    const last = this.#pending[this.#pending.length - 1];
    if (last === undefined || !last.includes(10)) return undefined;
    const all = Buffer.concat(this.#pending);
    const end = all.indexOf(10);
    const rest = all.subarray(end + 1);
    this.#pending = rest.length > 0 ? [rest] : [];
    return all.toString('utf8', 0, end);
  }
}

const input = new LineReader();
let logs: string[] = [];

const { loadPyodide } = (await import(pyodideUrl!)) as { loadPyodide: typeof LoadPyodide };
// `import js` gives Python this empty object, not the child's global object.
const pyodide: PyodideAPI = await loadPyodide({ jsglobals: Object.create(null) as object });
pyodide.setStdin({ error: true });
pyodide.setStdout({ batched: (line) => log(line) });
pyodide.setStderr({ batched: (line) => log(line) });
pyodide.runPython(RUNNER_SOURCE);
const run = pyodide.globals.get('_meta_agent_run') as (...args: unknown[]) => string;
pyodide.runPython(PROGRAM_RUNNER_SOURCE);
const runPythonProgram = pyodide.globals.get('_meta_agent_run_program') as (
  path: string,
  outputBytes: number,
) => string;
const heap = () => (pyodide as unknown as { _module: { HEAP8: Int8Array } })._module.HEAP8.buffer.byteLength;
const baseline = heap();
stripHostGlobals();
const loadedFiles = runtimeFiles(pyodide.FS as unknown as ProgramFs);
send({ type: 'ready', baselineBytes: baseline });

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
    answer = run(request.mode, request.code, request.scope, JSON.stringify(request.namespaces), hostCall);
  } catch (error) {
    // Not a Python exception (those come back as answers): the runtime itself failed, e.g. its stack ran out.
    send({ type: 'fatal', message: error instanceof Error ? error.message : String(error), logs });
    exit(1);
  }
  send({ type: 'done', answer, logs });
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

/** A host function called from Python: asks the parent and blocks until it answers. */
function hostCall(namespace: string, fn: string, args: string): string {
  send({ type: 'host', namespace, fn, args });
  const reply = input.next<ParentMessage>();
  if (reply === undefined) exit(0);
  if (reply.type !== 'host-result') throw new Error('the sandbox protocol broke');
  if (!reply.ok) throw new Error(reply.error);
  return reply.value;
}

function log(line: string): void {
  if (logs.length < MAX_LOG_LINES)
    logs.push(line.length > MAX_LOG_LINE ? `${line.slice(0, MAX_LOG_LINE)}…` : line);
}

function send(message: ChildMessage): void {
  const bytes = Buffer.from(`${JSON.stringify(message)}\n`);
  let written = 0;
  while (written < bytes.length) {
    try {
      written += writeSync(1, bytes, written);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EAGAIN') throw error;
      pause();
    }
  }
}

/**
 * Takes away what leads from JavaScript to the host's powers. Python reaches JavaScript objects through
 * Pyodide's FFI, and from any object to the global one; code generation from strings is off
 * (`--disallow-code-generation-from-strings`), so what is not reachable cannot be made.
 */
function stripHostGlobals(): void {
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
