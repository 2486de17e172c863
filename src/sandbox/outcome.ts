/**
 * What a call into the sandbox came to: the guest's answer (guest.ts) as a result or the SandboxError
 * it describes, and a call that failed as the error that says why (time, memory, variables that could
 * not be copied in, a rejection nobody handled).
 */
import type ivm from 'isolated-vm';
import type { GuestFailure, GuestMode, GuestOutcome } from './guest.js';
import { isolatedVm } from './isolated-vm.js';
import type { SandboxLimits } from './limits.js';
import { memoryError, PLAIN_DATA_HINT, SandboxError, timeoutError } from './sandbox-error.js';

/** A path in a message is cut after this many characters (deeply nested data has long ones). */
const MAX_PATH_CHARS = 80;

/** isolated-vm's message when its own time limit stops a call. */
const TIMED_OUT = 'Script execution timed out.';

/** A successful guest outcome. */
export type Finished = Extract<GuestOutcome, { ok: true }>;

/** Turns what the guest reported into a result or the error it describes. */
export function acceptOutcome(outcome: GuestOutcome, node: string, mode: GuestMode): Finished {
  if (outcome.ok) return outcome;
  throw outcomeError(outcome, node, mode);
}

/** The error a failure the guest reported describes. */
export function outcomeError(outcome: GuestFailure, node: string, mode: GuestMode): Error {
  if (outcome.problem === 'syntax')
    return new SandboxError('syntax', node, `SyntaxError: ${outcome.message}`);
  if (outcome.problem === 'thrown') {
    const detail = outcome.name ? `${outcome.name}: ${outcome.message}` : `the code threw ${outcome.message}`;
    return new SandboxError('runtime', node, detail, undefined, outcome.line, outcome.logs);
  }
  if (outcome.problem === 'tampered') return new Error('a fresh sandbox context was found tampered with');
  const nested = outcome.path !== '' && outcome.path !== outcome.variable;
  const path =
    outcome.path.length > MAX_PATH_CHARS ? `${outcome.path.slice(0, MAX_PATH_CHARS)}…` : outcome.path;
  const detail =
    outcome.variable !== undefined
      ? `variable "${outcome.variable}" holds ${outcome.what}${nested ? ` at ${path}` : ''}`
      : `the value of ${mode === 'code' ? "the code's last statement" : 'the expression'} ` +
        (nested ? `has ${outcome.what} at ${path}` : `is ${outcome.what}`);
  return new SandboxError('uncopyable', node, `${detail}, which cannot leave the sandbox`, PLAIN_DATA_HINT);
}

/** How a call into the isolate ended when it failed: what the sandbox knows of it. */
export interface FailedCall {
  isolate: ivm.Isolate;
  stoppedByWatchdog: boolean;
  /** The sandbox was disposed meanwhile. */
  disposed: boolean;
  node: string;
  limits: Readonly<SandboxLimits>;
  /** The user's cap on the limits (see limits.ts). */
  ceiling: Readonly<SandboxLimits>;
}

/** Names what went wrong when a call into the isolate failed. */
export function callFailure(error: unknown, call: FailedCall): Error {
  const { node, limits, ceiling } = call;
  if (error instanceof SandboxError) return error;
  if (call.disposed) return new Error('the sandbox was disposed while code was running');
  if (call.stoppedByWatchdog) return timeoutError(node, limits, ceiling);
  // A dead isolate we did not kill: isolated-vm disposes it when the memory limit is hit.
  if (call.isolate.isDisposed) return memoryError(node, limits, ceiling);
  const message = error instanceof Error ? error.message : String(error);
  if (message === TIMED_OUT) return timeoutError(node, limits, ceiling);
  // The code's own throws are caught inside; what still fails a call is a rejection nobody handled.
  return new SandboxError(
    'runtime',
    node,
    `a promise was rejected and nothing handled it: ${message}`,
    'code nodes are synchronous: handle promise rejections, or avoid promises',
  );
}

/** The error for variables that cannot be copied in, naming the first that cannot. */
export function uncopyableVariables(variables: Record<string, unknown>, node: string): SandboxError {
  const culprit = Object.keys(variables).find((name) => !isCopyable(variables[name]));
  const detail = culprit
    ? `variable "${culprit}" holds ${describeHostValue(variables[culprit])}, which cannot be copied into the sandbox`
    : 'the variables cannot be copied into the sandbox';
  return new SandboxError('uncopyable', node, detail, PLAIN_DATA_HINT);
}

export function isCopyable(value: unknown): boolean {
  try {
    new (isolatedVm().ExternalCopy)(value).release();
    return true;
  } catch {
    return false;
  }
}

function describeHostValue(value: unknown): string {
  if (typeof value === 'function') return 'a function';
  if (typeof value === 'symbol') return 'a symbol';
  return 'a value that is not plain data';
}
