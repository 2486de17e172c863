/**
 * A long-running CLI command as a user starts it (`serve`, `worker`): the built CLI in a subprocess,
 * ready once its stdout holds the line `ready` matches. `stop` sends a signal and resolves with how the
 * process ended.
 */
import { once } from 'node:events';
import { spawnCli, type CliResult, type RunCliOptions } from './run-cli.js';

export interface ReadyProcess {
  /** The ready line's first group. */
  ready: string;
  pid: number;
  /** What it wrote to stderr so far (the request log, notes). */
  stderr(): string;
  /** Sends `signal` (SIGTERM by default) and resolves once the process has exited. */
  stop(signal?: NodeJS.Signals): Promise<CliResult>;
}

/** Starts `meta-agent ...args`; rejects with its output if it exits before its ready line. */
export async function startUntilReady(
  args: string[],
  ready: RegExp,
  options: Pick<RunCliOptions, 'env' | 'cwd'> = {},
): Promise<ReadyProcess> {
  const child = spawnCli(args, options);
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
  const found = await new Promise<string>((resolve, reject) => {
    const check = () => {
      const match = ready.exec(stdout);
      if (match) resolve(match[1]!);
    };
    child.stdout.on('data', check);
    void exited.then((result) =>
      reject(new Error(`${args[0]} exited (${result.code}) before it was ready:\n${result.stderr}`)),
    );
  });
  return {
    ready: found,
    pid: child.pid!,
    stderr: () => stderr,
    stop: async (signal = 'SIGTERM') => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}
