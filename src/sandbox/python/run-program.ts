/**
 * A Python program run from files, as `python PATH` runs one, in the process's Python runtime
 * (python-runtime.ts): the files are copied into the runtime's /workspace, a file system in its memory
 * that holds them for this run only, and what the program made, changed or deleted there comes back.
 * The child has no access to the host's files, and gets none here: what to copy in, and what to do with
 * what comes back, is the caller's (tools/python-files.ts, through the workspace jail).
 *
 * The answer comes from a process that ran untrusted code: its shape is checked, and its caps enforced
 * again here.
 */
import type { LeftOut, ProgramAnswer } from './protocol.js';
import { pythonRuntime, PythonStartError, type PythonRuntime } from './python-runtime.js';

/** A program and the files of its folder. */
export interface ProgramInput {
  /** The program, relative to the folder; one of `files`. */
  path: string;
  /** Relative paths (no `..`, no leading `/`) and their bytes. */
  files: ReadonlyMap<string, Uint8Array>;
  timeoutMs: number;
  /** Megabytes the program may add to the runtime's memory. */
  memoryMb: number;
  /** Bytes of output kept: its first and last half. */
  outputBytes: number;
  /** The most files, and bytes in all, that come back. */
  maxFilesOut: number;
  maxBytesOut: number;
}

/** How the program ended, and the folder's changes when it ran to its end. */
export type ProgramOutcome =
  | {
      ended: 'exited';
      /** The exit status `python PATH` would have: 0, SystemExit's code, 1 after an uncaught exception. */
      status: number;
      /** stdout and stderr, interleaved as printed (a traceback included), cut in the middle. */
      output: string;
      /** The program ended with a MemoryError. */
      memory: boolean;
      /** Files made or changed, with their new bytes. */
      written: Map<string, Uint8Array>;
      deleted: string[];
      /** Files made or changed that did not come back, and why. */
      leftOut: LeftOut[];
      moreLeftOut: number;
    }
  /** It ran past `timeoutMs`; the runtime was stopped, and its files with it. */
  | { ended: 'timeout' }
  /** The runtime failed (its stack ran out, it broke its protocol) or could not start. */
  | { ended: 'failed'; message: string };

/**
 * Runs `input.path` over `input.files` in `runtime` (default: the process's); never rejects for what
 * the program does.
 */
export async function runPythonProgram(
  input: ProgramInput,
  runtime: PythonRuntime = pythonRuntime(),
): Promise<ProgramOutcome> {
  let ended;
  try {
    ended = await runtime.runProgram({
      path: input.path,
      files: [...input.files].map(([path, data]) => ({ path, data: Buffer.from(data).toString('base64') })),
      timeoutMs: input.timeoutMs,
      memoryMb: input.memoryMb,
      outputBytes: input.outputBytes,
      maxFilesOut: input.maxFilesOut,
      maxBytesOut: input.maxBytesOut,
    });
  } catch (error) {
    if (error instanceof PythonStartError) return { ended: 'failed', message: error.message };
    throw error;
  }
  if (ended.kind === 'timeout') return { ended: 'timeout' };
  if (ended.kind === 'failed') return { ended: 'failed', message: ended.message };
  const { ran } = ended;
  const answer = programAnswer(ran.answer);
  if (answer === undefined) return { ended: 'failed', message: 'the Python runtime broke its protocol' };
  const written = new Map<string, Uint8Array>();
  const leftOut = [...ran.leftOut];
  let bytes = 0;
  for (const file of ran.files) {
    const data = Buffer.from(file.data, 'base64');
    if (written.size >= input.maxFilesOut || bytes + data.length > input.maxBytesOut)
      leftOut.push({ path: file.path, reason: 'it passes the caps on what comes back' });
    else {
      written.set(file.path, data);
      bytes += data.length;
    }
  }
  const logs = ran.logs.length > 0 ? `\n${ran.logs.join('\n')}` : '';
  return {
    ended: 'exited',
    status: answer.status,
    output: `${answer.output}${logs}`,
    memory: answer.memory,
    written,
    deleted: ran.deleted.filter((path) => input.files.has(path)),
    leftOut,
    moreLeftOut: ran.moreLeftOut,
  };
}

function programAnswer(text: string): ProgramAnswer | undefined {
  try {
    const answer = JSON.parse(text) as Partial<ProgramAnswer> | null;
    if (
      typeof answer?.status === 'number' &&
      typeof answer.output === 'string' &&
      typeof answer.memory === 'boolean'
    )
      return answer as ProgramAnswer;
  } catch {
    // Not JSON: said below, as a broken protocol.
  }
  return undefined;
}
