/**
 * The queues durable work goes through, with their limits; every process registers them all at launch
 * (runtime.ts), the same in each, so that the database holds one setting per queue.
 */
import type { DBOS } from '@dbos-inc/dbos-sdk';

/** What a queue may limit (DBOS does not export the type by name). */
type QueueParameters = NonNullable<Parameters<typeof DBOS.registerQueue>[1]>;

export const QUEUES = {
  /** A conversation's turns, one at a time per conversation (the partition is the conversation). */
  turns: { partitionConcurrency: 1, workerConcurrency: 16, minPollingIntervalMs: 50 },
} satisfies Record<string, QueueParameters>;

export type QueueName = keyof typeof QUEUES;
