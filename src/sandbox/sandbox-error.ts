/**
 * The one error the sandbox raises for anything the code did: which node, what kind of failure, and a
 * message a user can act on without a stack trace.
 */
import { raiseConfigHint, UserError } from '../errors.js';
import { atCeiling, SANDBOX_CEILING_VARIABLES, type SandboxLimits } from './limits.js';

/**
 * - `timeout`: ran past `sandbox.timeoutMs`;
 * - `memory`: ran past `sandbox.memoryMb` (the isolate was discarded; the next evaluation gets a fresh one);
 * - `syntax`: the code does not parse;
 * - `runtime`: the code threw (or left a rejected promise nobody handled);
 * - `uncopyable`: a value that is not plain data (a function, a symbol, a Date…) had to cross the boundary.
 */
export type SandboxErrorKind = 'timeout' | 'memory' | 'syntax' | 'runtime' | 'uncopyable';

/** A failure of code run in the sandbox, named by node. The message starts with `node "NAME":`. */
export class SandboxError extends UserError {
  constructor(
    readonly kind: SandboxErrorKind,
    /** The node whose code failed. */
    readonly node: string,
    /** What went wrong, without the node prefix. */
    readonly detail: string,
    hint?: string,
    /** The line of the code where it failed, when known (1-based). */
    readonly line?: number,
    /** What the code printed before it threw: often the clue to why. */
    readonly logs: readonly string[] = [],
  ) {
    super(`node "${node}": ${detail}${line === undefined ? '' : ` (line ${line})`}`, 1, hint);
  }
}

/**
 * Code that ran past the time limit, or was stopped by the watchdog. At the user's `ceiling`, the hint
 * names the variable that raises it: raising the file's setting would change nothing.
 */
export function timeoutError(node: string, limits: SandboxLimits, ceiling?: SandboxLimits): SandboxError {
  return new SandboxError(
    'timeout',
    node,
    `code ran longer than ${limits.timeoutMs} ms (config.sandbox.timeoutMs)`,
    `make the code finish sooner (look for a loop that never ends), or ${raiseHint('timeoutMs', limits, ceiling)}`,
  );
}

/** Code that ran past the memory limit. */
export function memoryError(node: string, limits: SandboxLimits, ceiling?: SandboxLimits): SandboxError {
  return new SandboxError(
    'memory',
    node,
    `code used more than ${limits.memoryMb} MB of memory (config.sandbox.memoryMb)`,
    `keep less data in memory at once, or ${raiseHint('memoryMb', limits, ceiling)}`,
  );
}

function raiseHint(
  key: keyof SandboxLimits,
  limits: SandboxLimits,
  ceiling: SandboxLimits | undefined,
): string {
  return atCeiling(key, limits, ceiling)
    ? `raise ${SANDBOX_CEILING_VARIABLES[key]}, the cap on config.sandbox.${key} (now ${limits[key]})`
    : raiseConfigHint(`sandbox.${key}`);
}

/** Said of every value that cannot cross the boundary. */
export const PLAIN_DATA_HINT =
  'variables and values crossing the sandbox must be plain data: numbers, strings, booleans, null, ' +
  'arrays and plain objects; keep helper functions inside a block or a function so they stay local';
