/**
 * The messages between the Python sandbox's child process (child.ts) and its parent (python-runtime.ts):
 * one JSON object a line on a pipe each way, served one at a time. The parent reads the child's lines
 * as untrusted: code running in the child could write anything there. So the parent's first line is a
 * random key, and each of the child's lines starts with it: Python, which can reach the child's answers
 * pipe but not the key, cannot forge a message (a host call, an answer for a later evaluation).
 */
import type { SnapshotUse } from './memory-snapshot.js';

/** What an evaluation's code is: statements, an expression, or a condition (an expression judged true or false). */
export type EvaluationMode = 'code' | 'expression' | 'condition';

/** Parent to child. */
export type ParentMessage =
  | {
      type: 'evaluate';
      /** `condition`: an expression whose value is its truth, as Python's `if` sees it. */
      mode: EvaluationMode;
      code: string;
      /** The variables, as a JSON object's text. */
      scope: string;
      /** The host namespaces lent, with their functions' names. */
      namespaces: Record<string, string[]>;
      /** Megabytes the code may add to the runtime's memory. */
      memoryMb: number;
      /**
       * For code: the conditions to evaluate after it, in order while none holds, over the variables as
       * it left them (python-sandbox.ts says which may be).
       */
      conditions?: string[];
    }
  | { type: 'host-result'; ok: true; value: string }
  | { type: 'host-result'; ok: false; error: string }
  | ({ type: 'program' } & ProgramRequest);

/**
 * A workspace program to run as `python PATH` in /workspace, a folder of the runtime's memory that holds
 * `files` only for this run (run-program.ts).
 */
export interface ProgramRequest {
  /** The program's path relative to /workspace. */
  path: string;
  files: ProgramFile[];
  memoryMb: number;
  /** Bytes of output kept: the first and the last half of what the program printed. */
  outputBytes: number;
  /** The most files, and bytes in all, the answer brings back; the others are left out, named. */
  maxFilesOut: number;
  maxBytesOut: number;
}

/** A file of /workspace, its bytes in base64. */
export interface ProgramFile {
  path: string;
  data: string;
}

/** A file the program made or changed that does not come back, and why. */
export interface LeftOut {
  path: string;
  reason: string;
}

/** How a program ran, and what it left in /workspace that differs from what it was given. */
export interface ProgramRan {
  /** The Python runner's JSON text (see ProgramAnswer). */
  answer: string;
  /** Files made or changed. */
  files: ProgramFile[];
  /** Files given that are gone. */
  deleted: string[];
  /** The first of them (program-child.ts says how many), and how many more there were. */
  leftOut: LeftOut[];
  moreLeftOut: number;
  /** The program changed the runtime's own files: the parent starts a new runtime for what comes next. */
  restart: boolean;
  /** What reached the runtime's own stdout and stderr (os.write), beside Python's sys.stdout. */
  logs: string[];
}

/** What `_meta_agent_run_program` answers (program-runner-source.ts). */
export interface ProgramAnswer {
  /** The exit status `python PATH` would have. */
  status: number;
  /** stdout and stderr as printed, interleaved, cut in the middle to outputBytes. */
  output: string;
  /** True when the program ended with a MemoryError. */
  memory: boolean;
}

/** Child to parent. */
export type ChildMessage =
  /** Loaded, from the build's snapshot or from scratch. */
  | { type: 'ready'; snapshot: SnapshotUse }
  /** A host function called from Python: `args` is a JSON array's text. */
  | { type: 'host'; namespace: string; fn: string; args: string }
  /**
   * The code has run and a condition of `conditions` starts: each has the evaluation's time of its own,
   * counted from here.
   */
  | { type: 'lap' }
  /** `answer` is the Python runner's JSON text (see Answer). */
  | { type: 'done'; answer: string; logs: string[] }
  | ({ type: 'ran' } & ProgramRan)
  /** The runtime's own files changed since it loaded: the program did not run (program-child.ts). */
  | { type: 'stale' }
  /** The runtime itself failed; the child exits after saying so. */
  | { type: 'fatal'; message: string; logs: string[] };

/** What `_meta_agent_run` answers (runner-source.ts). */
export type Answer =
  | {
      ok: true;
      value: unknown;
      changed: Record<string, unknown>;
      /** What the conditions asked for came to, up to the first that held or failed. */
      conditions?: ConditionAnswer[];
    }
  | Failure;

/** How the runner says an evaluation failed. */
export type Failure =
  | { ok: false; kind: 'syntax' | 'runtime' | 'memory'; message: string; line: number | null }
  | { ok: false; kind: 'uncopyable'; name: string; type: string };

/** One condition evaluated after the code: whether it held, or how it failed. */
export type ConditionAnswer = { ok: true; holds: boolean } | Failure;
