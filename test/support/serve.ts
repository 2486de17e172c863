/**
 * `meta-agent serve` as a user starts it: the built CLI in a subprocess, ready once it prints its
 * `listening on URL` line. `stop` sends a signal and resolves with how the process ended.
 */
import { once } from 'node:events';
import { spawnCli, type CliResult, type RunCliOptions } from './run-cli.js';

export interface ServeProcess {
  url: string;
  /** What the server wrote to stderr so far (the request log, notes). */
  stderr(): string;
  /** Sends `signal` (SIGTERM by default) and resolves once the process has exited. */
  stop(signal?: NodeJS.Signals): Promise<CliResult>;
}

/** Starts `meta-agent serve ...args` (add `--port 0`); rejects with its output if it exits first. */
export async function startServe(
  args: string[],
  options: Pick<RunCliOptions, 'env' | 'cwd'> = {},
): Promise<ServeProcess> {
  const child = spawnCli(['serve', ...args], options);
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
  const url = await new Promise<string>((resolve, reject) => {
    const check = () => {
      const match = /^listening on (\S+)$/m.exec(stdout);
      if (match) resolve(match[1]!);
    };
    child.stdout.on('data', check);
    void exited.then((result) =>
      reject(new Error(`serve exited (${result.code}) before listening:\n${result.stderr}`)),
    );
  });
  return {
    url,
    stderr: () => stderr,
    stop: async (signal = 'SIGTERM') => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}
