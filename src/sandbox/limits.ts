/**
 * The limits one sandbox enforces on every evaluation, with their defaults and the checks that turn a
 * bad setting into an error the user can fix (the names match the graph config keys `sandbox.*`).
 */
import { UserError } from '../errors.js';

/** What one evaluation (a code node, a condition, an argument) may use. */
export interface SandboxLimits {
  /** Time one evaluation may run in the isolate, in milliseconds (time spent waiting on host functions is not counted). */
  timeoutMs: number;
  /** Memory the isolate may use, in megabytes (isolated-vm treats it as a guideline; 8 is its minimum). */
  memoryMb: number;
}

/** The limits used where none are given. */
export const DEFAULT_SANDBOX_LIMITS: Readonly<SandboxLimits> = Object.freeze({
  timeoutMs: 1000,
  memoryMb: 64,
});

/** isolated-vm refuses smaller heaps. */
const MIN_MEMORY_MB = 8;

/** Fills in defaults and rejects settings isolated-vm cannot honour. */
export function resolveLimits(limits: Partial<SandboxLimits> = {}): Readonly<SandboxLimits> {
  const resolved = {
    timeoutMs: limits.timeoutMs ?? DEFAULT_SANDBOX_LIMITS.timeoutMs,
    memoryMb: limits.memoryMb ?? DEFAULT_SANDBOX_LIMITS.memoryMb,
  };
  if (!Number.isInteger(resolved.timeoutMs) || resolved.timeoutMs < 1)
    throw new UserError(
      `sandbox.timeoutMs must be a whole number of milliseconds, at least 1 (got ${String(resolved.timeoutMs)})`,
      2,
      `set sandbox.timeoutMs in the graph config, e.g. ${DEFAULT_SANDBOX_LIMITS.timeoutMs}`,
    );
  if (!Number.isInteger(resolved.memoryMb) || resolved.memoryMb < MIN_MEMORY_MB)
    throw new UserError(
      `sandbox.memoryMb must be a whole number of megabytes, at least ${MIN_MEMORY_MB} (got ${String(resolved.memoryMb)})`,
      2,
      `set sandbox.memoryMb in the graph config, e.g. ${DEFAULT_SANDBOX_LIMITS.memoryMb}`,
    );
  return Object.freeze(resolved);
}
