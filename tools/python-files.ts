/**
 * execute_python_file's runner: a workspace program run in the Python sandbox (src/sandbox/python), on
 * a copy of the workspace. The sandbox's process cannot open a file of the host, so the files travel:
 * read here through the jail (the checks of read_file: no symlink out, nothing of .meta-agent, size
 * caps), copied into the runtime's memory for this run; what the program made, changed or deleted there
 * comes back and is written or deleted here through the same jail, which refuses what it always
 * refuses. A program that writes /tmp, `../x` or `/etc/x` changes its copy only.
 */
import { runPythonProgram } from '../src/sandbox/python/run-program.js';
import type { PythonRuntime } from '../src/sandbox/index.js';
import type { PythonFileRun, PythonFiles, WorkspaceFiles } from './command.js';
import { LIST_NOTE } from './workspace.js';
import { workspacePath } from './workspace-path.js';

/** The most files, and bytes in all, copied into the sandbox for a program, and back out of it. */
export const MAX_PROGRAM_FILES = 1000;
export const MAX_PROGRAM_BYTES = 16 * 1024 * 1024;
/** Bytes of output kept: the first and last half of what the program printed. */
export const PROGRAM_OUTPUT_BYTES = 6_000;

export class WorkspacePython implements PythonFiles {
  constructor(
    readonly workspace: WorkspaceFiles,
    readonly timeoutMs: number,
    readonly memoryMb: number,
    /** The runtime programs run in; default: the process's. */
    readonly runtime?: PythonRuntime,
  ) {}

  /**
   * Runs `file` (a workspace path ending in .py) as `python FILE` in the workspace's copy.
   * @throws Error (JailError among them) when the file cannot be the program: its message is for the model.
   */
  async run(file: string): Promise<PythonFileRun> {
    const path = workspacePath(file);
    if (!path.toLowerCase().endsWith('.py'))
      throw new Error(`${path} is not a Python file: execute_python_file runs .py files only.`);
    const program = await this.workspace.readBytes(path, MAX_PROGRAM_BYTES);
    const { files, notCopiedIn } = await this.#copyIn(path, program);
    const outcome = await runPythonProgram(
      {
        path,
        files,
        timeoutMs: this.timeoutMs,
        memoryMb: this.memoryMb,
        outputBytes: PROGRAM_OUTPUT_BYTES,
        maxFilesOut: MAX_PROGRAM_FILES,
        maxBytesOut: MAX_PROGRAM_BYTES,
      },
      this.runtime,
    );
    const run = { written: [], deleted: [], refused: [], notCopiedIn };
    if (outcome.ended === 'timeout') return { ...run, ended: { timedOut: true }, output: '' };
    if (outcome.ended === 'failed') return { ...run, ended: { failed: outcome.message }, output: '' };
    const back = await this.#copyBack(outcome.written, outcome.deleted);
    const refused = [...back.refused, ...outcome.leftOut];
    if (outcome.moreLeftOut > 0)
      refused.push({ path: '…', reason: `${outcome.moreLeftOut} more files that did not come back` });
    return {
      ended: { status: outcome.status, memory: outcome.memory },
      output: outcome.output,
      written: back.written,
      deleted: back.deleted,
      refused,
      notCopiedIn,
    };
  }

  /** The program and the workspace's other files, within the caps, program first. */
  async #copyIn(path: string, program: Uint8Array) {
    const files = new Map<string, Uint8Array>([[path, program]]);
    const notCopiedIn: PythonFileRun['notCopiedIn'] = [];
    let bytes = program.length;
    const listed = await this.workspace.list('.');
    if (listed.at(-1) === LIST_NOTE) {
      listed.pop();
      notCopiedIn.push({ path: '…', reason: 'the workspace has more files than are listed' });
    }
    for (const other of listed) {
      if (other === path) continue;
      if (files.size >= MAX_PROGRAM_FILES) {
        notCopiedIn.push({ path: other, reason: `only ${MAX_PROGRAM_FILES} files are copied in` });
        continue;
      }
      try {
        const data = await this.workspace.readBytes(other, MAX_PROGRAM_BYTES - bytes);
        files.set(other, data);
        bytes += data.length;
      } catch (error) {
        notCopiedIn.push({ path: other, reason: (error as Error).message });
      }
    }
    return { files, notCopiedIn };
  }

  /** Writes and deletes through the jail what the program changed; what it refuses is said, not thrown. */
  async #copyBack(written: ReadonlyMap<string, Uint8Array>, deleted: readonly string[]) {
    const done = {
      written: [] as string[],
      deleted: [] as string[],
      refused: [] as PythonFileRun['refused'],
    };
    for (const [path, data] of written)
      try {
        await this.workspace.write(path, data);
        done.written.push(workspacePath(path));
      } catch (error) {
        done.refused.push({ path, reason: (error as Error).message });
      }
    for (const path of deleted)
      try {
        await this.workspace.remove(path);
        done.deleted.push(workspacePath(path));
      } catch (error) {
        done.refused.push({ path, reason: (error as Error).message });
      }
    return done;
  }
}
