/**
 * The limits one sandbox enforces on every evaluation, with their defaults and the checks that turn a
 * bad setting into an error the user can fix (the names match the graph config keys `sandbox.*`).
 *
 * A graph or flow file sets its own limits, and a file may come from anyone: so what it asks for is
 * capped by a ceiling that only the user sets, in the environment. Every sandbox is made here (code
 * nodes of graphs, after-query steps of flows, flows a graph runs, pattern tests), so this is the one
 * place the cap is applied, and the one place that says so.
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

/**
 * The most a file may ask for unless the environment says otherwise: ten times the default time (an
 * evaluation is one code node or condition, not a whole run, so ten seconds of CPU is already a lot)
 * and four times the default memory (isolated-vm may overshoot its heap limit, so the process stays
 * well under a gigabyte).
 */
export const DEFAULT_SANDBOX_CEILING: Readonly<SandboxLimits> = Object.freeze({
  timeoutMs: 10_000,
  memoryMb: 256,
});

/** The environment variables that set the ceiling, one a limit. */
export const SANDBOX_CEILING_VARIABLES: Readonly<Record<keyof SandboxLimits, string>> = Object.freeze({
  timeoutMs: 'META_AGENT_SANDBOX_TIMEOUT_MS',
  memoryMb: 'META_AGENT_SANDBOX_MEMORY_MB',
});

/** isolated-vm refuses smaller heaps. */
const MIN_MEMORY_MB = 8;

/** The smallest value each limit may take. */
const MINIMUM: Readonly<Record<keyof SandboxLimits, number>> = { timeoutMs: 1, memoryMb: MIN_MEMORY_MB };

/** Each limit's unit, in words and as a suffix. */
const UNIT: Readonly<Record<keyof SandboxLimits, { words: string; short: string }>> = {
  timeoutMs: { words: 'milliseconds', short: 'ms' },
  memoryMb: { words: 'megabytes', short: 'MB' },
};

/** Notices already written: each is said once a process, however many sandboxes a run makes. */
const noticed = new Set<string>();

/**
 * The user's ceiling: META_AGENT_SANDBOX_TIMEOUT_MS and META_AGENT_SANDBOX_MEMORY_MB, else
 * DEFAULT_SANDBOX_CEILING. A UserError (exit 2) when one is set to something that is not a limit.
 */
export function sandboxCeiling(env: NodeJS.ProcessEnv = process.env): Readonly<SandboxLimits> {
  const read = (key: keyof SandboxLimits): number => {
    const name = SANDBOX_CEILING_VARIABLES[key];
    const raw = env[name]?.trim();
    if (!raw) return DEFAULT_SANDBOX_CEILING[key];
    const value = Number(raw);
    if (!Number.isSafeInteger(value) || value < MINIMUM[key])
      throw new UserError(
        `${name} must be a whole number of ${UNIT[key].words}, at least ${MINIMUM[key]}, not "${raw}"`,
        2,
        `for example ${name}=${DEFAULT_SANDBOX_CEILING[key]} (the default)`,
      );
    return value;
  };
  return Object.freeze({ timeoutMs: read('timeoutMs'), memoryMb: read('memoryMb') });
}

/**
 * Fills in defaults, rejects settings isolated-vm cannot honour, and lowers each limit to `ceiling`,
 * saying once on stderr when a limit asked for more.
 */
export function resolveLimits(
  limits: Partial<SandboxLimits> = {},
  ceiling: Readonly<SandboxLimits> = sandboxCeiling(),
): Readonly<SandboxLimits> {
  const resolved = {
    timeoutMs: limits.timeoutMs ?? DEFAULT_SANDBOX_LIMITS.timeoutMs,
    memoryMb: limits.memoryMb ?? DEFAULT_SANDBOX_LIMITS.memoryMb,
  };
  for (const key of ['timeoutMs', 'memoryMb'] as const) {
    const value = resolved[key];
    if (!Number.isInteger(value) || value < MINIMUM[key])
      throw new UserError(
        `sandbox.${key} must be a whole number of ${UNIT[key].words}, at least ${MINIMUM[key]} (got ${String(value)})`,
        2,
        `set sandbox.${key} in the graph config, e.g. ${DEFAULT_SANDBOX_LIMITS[key]}`,
      );
    if (value > ceiling[key]) {
      resolved[key] = ceiling[key];
      notice(
        `[sandbox] config.sandbox.${key} is ${value}, above the cap of ${ceiling[key]} ${UNIT[key].short}: ` +
          `using ${ceiling[key]} ${UNIT[key].short} (${SANDBOX_CEILING_VARIABLES[key]} raises the cap)`,
      );
    }
  }
  return Object.freeze(resolved);
}

/**
 * Whether `limits` reach `ceiling` for `key`: then raising the file's setting changes nothing, and an
 * error says which variable would.
 */
export function atCeiling(
  key: keyof SandboxLimits,
  limits: Readonly<SandboxLimits>,
  ceiling: Readonly<SandboxLimits> | undefined,
): boolean {
  return ceiling !== undefined && limits[key] >= ceiling[key];
}

/**
 * Written here rather than by each command: sandboxes are made deep inside runs (a flow a graph runs,
 * a code node's first evaluation), where no command is at hand, and the line must not be lost.
 */
function notice(line: string): void {
  if (noticed.has(line)) return;
  noticed.add(line);
  process.stderr.write(`${line}\n`);
}
