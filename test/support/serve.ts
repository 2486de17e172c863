/**
 * `meta-agent serve` as a user starts it: the built CLI in a subprocess, ready once it prints its
 * `listening on URL` line. `stop` sends a signal and resolves with how the process ended.
 */
import type { RunCliOptions } from './run-cli.js';
import { startUntilReady, type ReadyProcess } from './ready-process.js';

export interface ServeProcess extends Omit<ReadyProcess, 'ready'> {
  url: string;
}

/** Starts `meta-agent serve ...args` (add `--port 0`); rejects with its output if it exits first. */
export async function startServe(
  args: string[],
  options: Pick<RunCliOptions, 'env' | 'cwd'> = {},
): Promise<ServeProcess> {
  const { ready, ...started } = await startUntilReady(['serve', ...args], /^listening on (\S+)$/m, options);
  return { ...started, url: ready };
}
