/**
 * Runs the built CLI (`bin/meta-agent.js`, which loads `dist/`) as a subprocess, the way a user does.
 * Build first with `npx tsc -p .`. Asynchronous on purpose: a test's loopback server must keep serving
 * while the CLI talks to it.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../', import.meta.url));
const bin = fileURLToPath(new URL('../../bin/meta-agent.js', import.meta.url));
const builtMain = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));

export interface CliResult {
  code: number | null;
  /** The signal that ended the CLI; present only when one did (then `code` is null). */
  signal?: NodeJS.Signals;
  stdout: string;
  stderr: string;
}

export interface RunCliOptions {
  /**
   * Variables for the CLI. Model settings of the calling environment (OPENAI_*, META_AGENT_*) are
   * removed first, and no .env is read, so a developer's own key or server never leaks into a test; the
   * embedded model's cache is an empty folder and its hub unreachable (NO_DOWNLOADS) unless these say
   * otherwise.
   */
  env?: Record<string, string>;
  /** Written to the CLI's stdin, which is then closed (unless `keepStdinOpen`). */
  input?: string;
  /** Leave stdin open after `input`, as a user at a terminal does: the CLI must end by itself. */
  keepStdinOpen?: boolean;
  cwd?: string;
  /** Sends SIGINT (Ctrl+C) once, as soon as what the CLI wrote so far passes this test. */
  interruptWhen?: (stderr: string, stdout: string) => boolean;
  /** Sends SIGINT (Ctrl+C) once this settles: for a moment the CLI shows nothing of, like a call in flight. */
  interruptOn?: Promise<unknown>;
  /** Sends SIGKILL (`kill -9`) as soon as what the CLI wrote so far passes this test. */
  killWhen?: (stderr: string, stdout: string) => boolean;
}

/**
 * Where the embedded model would come from: an empty cache and a hub that cannot be reached, so a
 * test that meets the fallback to the embedded model never downloads anything from the internet. The
 * user's configuration (allow rules, the consent key) is a folder of the test file's own, never the
 * home folder of whoever runs the tests.
 */
const NO_DOWNLOADS = {
  META_AGENT_CACHE_DIR: mkdtempSync(join(tmpdir(), 'meta-agent-cli-cache-')),
  META_AGENT_CONFIG_DIR: mkdtempSync(join(tmpdir(), 'meta-agent-cli-config-')),
  HF_ENDPOINT: 'http://127.0.0.1:9',
  // Nor a developer's own .env in the folder the tests run in (a test of .env sets this empty).
  META_AGENT_ENV_FILE: 'off',
};

/** The configuration folder the CLI run by `runCli` uses (unless a test's `env` names another). */
export const cliConfigDir = NO_DOWNLOADS.META_AGENT_CONFIG_DIR;

/** Starts `meta-agent ...args` in `options.cwd` with `options.env` (see RunCliOptions), its stdio piped. */
export function spawnCli(
  args: string[],
  options: Pick<RunCliOptions, 'env' | 'cwd'> = {},
): ChildProcessWithoutNullStreams {
  if (!existsSync(builtMain)) {
    throw new Error(`the CLI is not built (${builtMain} is missing): run \`npx tsc -p .\` first`);
  }
  return spawn(process.execPath, [bin, ...args], {
    cwd: options.cwd ?? root,
    env: cliEnv(options.env),
    stdio: ['pipe', 'pipe', 'pipe'],
  });
}

/** The variables the CLI runs with: this process's, less its model settings, plus `extra` (see `env`). */
export function cliEnv(extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (value !== undefined && !/^(OPENAI_|META_AGENT_)/.test(name)) env[name] = value;
  }
  return Object.assign(env, { NO_COLOR: '1', ...NO_DOWNLOADS }, extra);
}

/** A folder holding a `meta-agent` command that runs the built CLI, for commands run by a shell. */
export function cliBinDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'meta-agent-bin-'));
  const command = join(dir, 'meta-agent');
  writeFileSync(command, `#!/bin/sh\nexec '${process.execPath}' '${bin}' "$@"\n`, { mode: 0o755 });
  return dir;
}

/** Runs `meta-agent ...args` and resolves when it exits. */
export function runCli(args: string[], options: RunCliOptions = {}): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawnCli(args, options);
    let stdout = '';
    let stderr = '';
    let interrupted = false;
    let killed = false;
    const interruptIfDue = () => {
      if (!interrupted && options.interruptWhen?.(stderr, stdout)) interrupted = child.kill('SIGINT');
      if (!killed && options.killWhen?.(stderr, stdout)) killed = child.kill('SIGKILL');
    };
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
      interruptIfDue();
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
      interruptIfDue();
    });
    void options.interruptOn?.finally(() => {
      if (!interrupted && child.exitCode === null) interrupted = child.kill('SIGINT');
    });
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, stdout, stderr, ...(signal ? { signal } : {}) }));
    if (options.keepStdinOpen) child.stdin.write(options.input ?? '');
    else child.stdin.end(options.input ?? '');
  });
}

/** Each step's command and what it returned, from `meta-agent run --json`'s event stream. */
export function commandResults(result: CliResult): Array<{ name: string; ok: boolean; output: string }> {
  return result.stdout
    .trim()
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as { type: string; name: string; ok: boolean; output: string })
    .filter((event) => event.type === 'goal.result');
}
