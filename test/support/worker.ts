/**
 * `meta-agent worker` as a user starts it: the built CLI in a subprocess, ready once it prints its
 * `worker ID taking work from QUEUES` line. `stop` sends a signal and resolves with how it ended.
 */
import type { RunCliOptions } from './run-cli.js';
import { startUntilReady, type ReadyProcess } from './ready-process.js';

export interface WorkerProcess extends Omit<ReadyProcess, 'ready'> {
  /** Its executor id, as the durable runtime knows it. */
  executorId: string;
}

/** Starts `meta-agent worker ...args`; rejects with its output if it exits before it is ready. */
export async function startWorker(
  args: string[],
  options: Pick<RunCliOptions, 'env' | 'cwd'> = {},
): Promise<WorkerProcess> {
  const { ready, ...started } = await startUntilReady(
    ['worker', ...args],
    /^worker (\S+) taking work from /m,
    options,
  );
  return { ...started, executorId: ready };
}
