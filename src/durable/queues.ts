/**
 * The queues durable work goes through, with their limits; every process registers them all at launch
 * (runtime.ts), the same in each, so that the database holds one setting per queue. A queue's global
 * limits (a rate) are the last launched process's: give every machine the same environment.
 */
import type { DBOS } from '@dbos-inc/dbos-sdk';
import { UserError } from '../errors.js';

/** What a queue may limit (DBOS does not export the type by name). */
type QueueParameters = NonNullable<Parameters<typeof DBOS.registerQueue>[1]>;

/** Goal runs one process carries at once, unless META_AGENT_GOAL_CONCURRENCY says otherwise. */
export const DEFAULT_GOAL_CONCURRENCY = 4;

/** The variables that set the `goals` queue's limits (documented in `meta-agent run --help`). */
export const GOAL_CONCURRENCY_ENV = 'META_AGENT_GOAL_CONCURRENCY';
export const GOAL_RATE_ENV = 'META_AGENT_GOAL_RATE';

export const QUEUES = {
  /** A conversation's turns, one at a time per conversation (the partition is the conversation). */
  turns: { partitionConcurrency: 1, workerConcurrency: 16, minPollingIntervalMs: 50 },
  /**
   * Goal runs handed to workers (`meta-agent run --queue`): a few per process, since each holds a
   * model conversation and a workspace, and started no faster than the model's API allows.
   */
  goals: goalQueue(process.env),
} satisfies Record<string, QueueParameters>;

export type QueueName = keyof typeof QUEUES;

/**
 * The `goals` queue's limits from the environment: META_AGENT_GOAL_CONCURRENCY runs per process
 * (default 4), and META_AGENT_GOAL_RATE `N/SECONDS`, at most N runs started in any SECONDS across every
 * process (default none), for a model API that limits requests per minute.
 */
export function goalQueue(env: NodeJS.ProcessEnv): QueueParameters {
  const concurrency = env[GOAL_CONCURRENCY_ENV];
  const rate = env[GOAL_RATE_ENV];
  const workerConcurrency = concurrency
    ? wholeNumber(GOAL_CONCURRENCY_ENV, concurrency)
    : DEFAULT_GOAL_CONCURRENCY;
  return {
    workerConcurrency,
    minPollingIntervalMs: 200,
    ...(rate && { rateLimit: rateOf(rate) }),
  };
}

function rateOf(text: string): { limitPerPeriod: number; periodSec: number } {
  const match = /^\s*(\d+)\s*\/\s*(\d+(?:\.\d+)?)\s*$/.exec(text);
  if (!match || Number(match[1]) < 1 || Number(match[2]) <= 0)
    throw new UserError(
      `${GOAL_RATE_ENV} must be N/SECONDS (e.g. 60/60 for 60 runs started a minute), not ${JSON.stringify(text)}`,
      2,
    );
  return { limitPerPeriod: Number(match[1]), periodSec: Number(match[2]) };
}

function wholeNumber(name: string, text: string): number {
  const n = Number(text);
  if (!/^\s*\d+\s*$/.test(text) || n < 1)
    throw new UserError(`${name} must be a whole number above 0, not ${JSON.stringify(text)}`, 2);
  return n;
}
