/**
 * `meta-agent worker` as a user starts it: the built CLI in a subprocess, ready once it prints its
 * `worker ID taking work from QUEUES` line. `stop` sends a signal and resolves with how it ended.
 */
import { once } from 'node:events';
import { spawnCli, type CliResult, type RunCliOptions } from './run-cli.js';

export interface WorkerProcess {
  /** Its executor id, as the durable runtime knows it. */
  executorId: string;
  pid: number;
  stderr(): string;
  /** Sends `signal` (SIGTERM by default) and resolves once the process has exited. */
  stop(signal?: NodeJS.Signals): Promise<CliResult>;
}

/** Starts `meta-agent worker ...args`; rejects with its output if it exits before it is ready. */
export async function startWorker(
  args: string[],
  options: Pick<RunCliOptions, 'env' | 'cwd'> = {},
): Promise<WorkerProcess> {
  const child = spawnCli(['worker', ...args], options);
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = once(child, 'close').then(([code, signal]) => ({
    code: code as number | null,
    stdout,
    stderr,
    ...(signal ? { signal: signal as NodeJS.Signals } : {}),
  }));
  const executorId = await new Promise<string>((resolve, reject) => {
    const check = () => {
      const match = /^worker (\S+) taking work from /m.exec(stdout);
      if (match) resolve(match[1]!);
    };
    child.stdout.on('data', check);
    void exited.then((result) =>
      reject(new Error(`worker exited (${result.code}) before it was ready:\n${result.stderr}`)),
    );
  });
  return {
    executorId,
    pid: child.pid!,
    stderr: () => stderr,
    stop: async (signal = 'SIGTERM') => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}
