/**
 * The queues durable work goes through, with their limits; every process registers them all at launch
 * (runtime.ts), the same in each, so that the database holds one setting per queue. A queue's global
 * limits (a rate) are the last launched process's: give every machine the same environment.
 */
import type { DBOS } from '@dbos-inc/dbos-sdk';
import { UserError } from '../errors.js';

/** What a queue may limit (DBOS does not export the type by name). */
type QueueParameters = NonNullable<Parameters<typeof DBOS.registerQueue>[1]>;

/** The variables that set the `simulations` queue's limits (documented in `meta-agent simulate --help`). */
export const SIMULATION_CONCURRENCY_ENV = 'META_AGENT_SIMULATION_CONCURRENCY';
export const SIMULATION_RATE_ENV = 'META_AGENT_SIMULATION_RATE';

/** Simulated conversations one process carries at once, unless META_AGENT_SIMULATION_CONCURRENCY says. */
export const DEFAULT_SIMULATION_CONCURRENCY = 8;

/**
 * Simulated conversations started at most per period across every process, unless
 * META_AGENT_SIMULATION_RATE says: a conversation makes a dozen or more model calls, so 30 a minute
 * stays under the few hundred requests a minute of an entry-level API key.
 */
export const DEFAULT_SIMULATION_RATE = '30/60';

/** Goal runs one process carries at once, unless META_AGENT_GOAL_CONCURRENCY says otherwise. */
export const DEFAULT_GOAL_CONCURRENCY = 4;

/** The variables that set the `goals` queue's limits (documented in `meta-agent run --help`). */
export const GOAL_CONCURRENCY_ENV = 'META_AGENT_GOAL_CONCURRENCY';
export const GOAL_RATE_ENV = 'META_AGENT_GOAL_RATE';

export const QUEUES = {
  /** A conversation's turns, one at a time per conversation (the partition is the conversation). */
  turns: { partitionConcurrency: 1, workerConcurrency: 16, minPollingIntervalMs: 50 },
  /**
   * The conversations of `simulate N --database`: a few per process, started no faster than the
   * model's API allows, taken by the command's own process and by every `meta-agent worker`.
   */
  simulations: simulationQueue(process.env),
  /**
   * Goal runs handed to workers (`meta-agent run --queue`): a few per process, since each holds a
   * model conversation and a workspace, and started no faster than the model's API allows.
   */
  goals: goalQueue(process.env),
} satisfies Record<string, QueueParameters>;

export type QueueName = keyof typeof QUEUES;

/**
 * The `simulations` queue's limits from the environment: META_AGENT_SIMULATION_CONCURRENCY
 * conversations per process (default 8), and META_AGENT_SIMULATION_RATE `N/SECONDS`, at most N
 * conversations started in any SECONDS across every process (default 30/60).
 */
export function simulationQueue(env: NodeJS.ProcessEnv): QueueParameters {
  const concurrency = env[SIMULATION_CONCURRENCY_ENV];
  return {
    workerConcurrency: concurrency
      ? wholeNumber(SIMULATION_CONCURRENCY_ENV, concurrency)
      : DEFAULT_SIMULATION_CONCURRENCY,
    minPollingIntervalMs: 100,
    rateLimit: rateOf(SIMULATION_RATE_ENV, env[SIMULATION_RATE_ENV] || DEFAULT_SIMULATION_RATE),
  };
}

/**
 * The `goals` queue's limits from the environment: META_AGENT_GOAL_CONCURRENCY runs per process
 * (default 4), and META_AGENT_GOAL_RATE `N/SECONDS`, at most N runs started in any SECONDS across every
 * process (default none), for a model API that limits requests per minute.
 */
export function goalQueue(env: NodeJS.ProcessEnv): QueueParameters {
  const concurrency = env[GOAL_CONCURRENCY_ENV];
  const rate = env[GOAL_RATE_ENV];
  return {
    workerConcurrency: concurrency
      ? wholeNumber(GOAL_CONCURRENCY_ENV, concurrency)
      : DEFAULT_GOAL_CONCURRENCY,
    minPollingIntervalMs: 200,
    ...(rate && { rateLimit: rateOf(GOAL_RATE_ENV, rate) }),
  };
}

/** `N/SECONDS` as a DBOS rate limit, or a UserError naming the variable. */
function rateOf(name: string, text: string): NonNullable<QueueParameters['rateLimit']> {
  const match = /^\s*(\d+)\s*\/\s*(\d+(?:\.\d+)?)\s*$/.exec(text);
  const [limitPerPeriod, periodSec] = [Number(match?.[1]), Number(match?.[2])];
  if (!match || limitPerPeriod < 1 || periodSec <= 0)
    throw new UserError(
      `${name} must be N/SECONDS (at most N started in any SECONDS), not ${JSON.stringify(text)}`,
      2,
      `e.g. ${name}=60/60 for 60 a minute`,
    );
  return { limitPerPeriod, periodSec };
}

function wholeNumber(name: string, text: string): number {
  const n = Number(text);
  if (!/^\s*\d+\s*$/.test(text) || n < 1)
    throw new UserError(`${name} must be a whole number above 0, not ${JSON.stringify(text)}`, 2);
  return n;
}
