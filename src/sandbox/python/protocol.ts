/**
 * The messages between the Python sandbox's child process (child.ts) and its parent (python-runtime.ts):
 * one JSON object a line, in both directions, served one at a time. The parent reads the child's lines
 * as untrusted: code running in the child could write anything there. So the parent's first line is a
 * random key, and each of the child's lines starts with it: Python, which can reach the child's stdout
 * but not the key, cannot forge a message (a host call, an answer for a later evaluation).
 */

/** Parent to child. */
export type ParentMessage =
  | {
      type: 'evaluate';
      mode: 'code' | 'expression';
      code: string;
      /** The variables, as a JSON object's text. */
      scope: string;
      /** The host namespaces lent, with their functions' names. */
      namespaces: Record<string, string[]>;
      /** Megabytes the code may add to the runtime's memory. */
      memoryMb: number;
    }
  | { type: 'host-result'; ok: true; value: string }
  | { type: 'host-result'; ok: false; error: string };

/** Child to parent. */
export type ChildMessage =
  | { type: 'ready'; baselineBytes: number }
  /** A host function called from Python: `args` is a JSON array's text. */
  | { type: 'host'; namespace: string; fn: string; args: string }
  /** `answer` is the Python runner's JSON text (see Answer). */
  | { type: 'done'; answer: string; logs: string[] }
  /** The runtime itself failed; the child exits after saying so. */
  | { type: 'fatal'; message: string; logs: string[] };

/** What `_meta_agent_run` answers (runner-source.ts). */
export type Answer =
  | { ok: true; value: unknown; changed: Record<string, unknown> }
  | { ok: false; kind: 'syntax' | 'runtime' | 'memory'; message: string; line: number | null }
  | { ok: false; kind: 'uncopyable'; name: string; type: string };
