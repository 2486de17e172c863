/**
 * A graph or flow file sets its own sandbox limits, and a file may come from anyone: what it asks for
 * is capped by the user's ceiling (META_AGENT_SANDBOX_TIMEOUT_MS, META_AGENT_SANDBOX_MEMORY_MB, 10 s and
 * 256 MB unless set). Without the cap, `timeoutMs: 2147483647` and `while (true) {}` held `flow run` and
 * `call` for 24 days, and `memoryMb: 100000` let one evaluation take gigabytes.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UserError } from '../../src/errors.js';
import { DEFAULT_SANDBOX_CEILING, resolveLimits, sandboxCeiling } from '../../src/sandbox/limits.js';

const bin = fileURLToPath(new URL('../../bin/meta-agent.js', import.meta.url));

/** Longer than any run here needs by far: a run still going then is held by the file's limits. */
const HELD_MS = 25_000;

interface BoundedRun {
  code: number | null;
  stdout: string;
  stderr: string;
  ms: number;
  /** The most memory the process held, in megabytes (Linux; 0 elsewhere). */
  peakMb: number;
}

/**
 * Runs the built CLI, killed after HELD_MS: a run the file's limits hold cannot answer a Ctrl+C (the
 * host waits on the isolate). Model settings of the calling environment are left out, as runCli does.
 */
function runBounded(args: string[], cwd: string, env: Record<string, string> = {}): Promise<BoundedRun> {
  const clean = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !/^(OPENAI_|META_AGENT_)/.test(name)),
  );
  const started = performance.now();
  const child = spawn(process.execPath, [bin, ...args], {
    cwd,
    env: { ...clean, NO_COLOR: '1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  let peakMb = 0;
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  // The CLI restarts itself in place (execve) to run code: the pid stays, and VmHWM is its high-water mark.
  const watch = setInterval(() => {
    try {
      const hwm = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'));
      if (hwm) peakMb = Math.max(peakMb, Number(hwm[1]) / 1024);
    } catch {
      // Not Linux, or the process has just ended.
    }
  }, 20);
  const kill = setTimeout(() => child.kill('SIGKILL'), HELD_MS);
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => {
      clearInterval(watch);
      clearTimeout(kill);
      resolve({ code, stdout, stderr, ms: performance.now() - started, peakMb });
    });
  });
}

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'meta-agent-limits-'));
  await writeFile(join(dir, 'rules.json'), JSON.stringify({ rules: [{ reply: 'fine' }] }));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

/** Writes a flow of one node whose after-query code is `code`, under `sandbox` limits. */
async function flowFile(name: string, sandbox: object, code: string): Promise<string> {
  const flow = { name, config: { sandbox }, nodes: [{ name: 'a', prompt: 'Go.', afterQuery: { code } }] };
  await writeFile(join(dir, `${name}.flow.json`), JSON.stringify(flow));
  return `${name}.flow.json`;
}

const flowRun = (file: string, env?: Record<string, string>) =>
  runBounded(['flow', 'run', file, '--provider', 'scripted', '--script', 'rules.json'], dir, env);

describe("the user's ceiling on a file's sandbox limits", () => {
  it('is 10 s and 256 MB unless the environment says otherwise', () => {
    expect(sandboxCeiling({})).toEqual(DEFAULT_SANDBOX_CEILING);
    expect(DEFAULT_SANDBOX_CEILING).toEqual({ timeoutMs: 10_000, memoryMb: 256 });
    expect(resolveLimits({ timeoutMs: 2_147_483_647, memoryMb: 100_000 }, sandboxCeiling({}))).toEqual({
      timeoutMs: 10_000,
      memoryMb: 256,
    });
    const env = { META_AGENT_SANDBOX_TIMEOUT_MS: '60000', META_AGENT_SANDBOX_MEMORY_MB: '1024' };
    expect(resolveLimits({ timeoutMs: 30_000, memoryMb: 2048 }, sandboxCeiling(env))).toEqual({
      timeoutMs: 30_000,
      memoryMb: 1024,
    });
    // Below the ceiling, a file's own limits stand.
    expect(resolveLimits({ timeoutMs: 200, memoryMb: 16 }, sandboxCeiling({}))).toEqual({
      timeoutMs: 200,
      memoryMb: 16,
    });
  });

  it('refuses a ceiling that is not a limit, naming the variable (exit 2)', () => {
    for (const [name, value] of [
      ['META_AGENT_SANDBOX_TIMEOUT_MS', 'ten'],
      ['META_AGENT_SANDBOX_TIMEOUT_MS', '0'],
      ['META_AGENT_SANDBOX_MEMORY_MB', '4'],
      ['META_AGENT_SANDBOX_MEMORY_MB', '1.5'],
    ] as const) {
      let error: unknown;
      try {
        sandboxCeiling({ [name]: value });
      } catch (caught) {
        error = caught;
      }
      expect(error).toBeInstanceOf(UserError);
      expect((error as UserError).exitCode).toBe(2);
      expect((error as UserError).message).toContain(`${name} must be a whole number`);
    }
  });
});

describe('meta-agent flow run on a flow that asks for endless time', () => {
  it('stops the endless loop at the cap, and says once that the file asked for more', async () => {
    const file = await flowFile('spin', { timeoutMs: 2_147_483_647 }, 'while (true) {}');
    const result = await flowRun(file, { META_AGENT_SANDBOX_TIMEOUT_MS: '300' });
    expect(result.ms).toBeLessThan(HELD_MS - 5000);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('[flow] a failed: node "a": code ran longer than 300 ms');
    const notices = result.stderr.split('\n').filter((line) => line.startsWith('[sandbox]'));
    expect(notices).toEqual([
      '[sandbox] config.sandbox.timeoutMs is 2147483647, above the cap of 300 ms: using 300 ms ' +
        '(META_AGENT_SANDBOX_TIMEOUT_MS raises the cap)',
    ]);
    expect(result.stderr).not.toContain('looks like a bug');
  });
});

describe('meta-agent flow run on a flow that asks for 100 GB', () => {
  it('stops the allocation at the 256 MB cap: the process never holds gigabytes', async () => {
    // 160 arrays of a million numbers: some 1.3 GB if nothing stops it.
    const code =
      '(() => { const hoard = []; for (let i = 0; i < 160; i++) hoard.push(new Array(1e6).fill(i)); return hoard.length; })()';
    const file = await flowFile('hoard', { timeoutMs: 20_000, memoryMb: 100_000 }, code);
    const result = await flowRun(file);
    if (process.platform === 'linux') {
      expect(result.peakMb).toBeGreaterThan(0);
      expect(result.peakMb).toBeLessThan(1000);
    }
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('[flow] a failed: node "a": code used more than 256 MB of memory');
    expect(result.stderr).toContain('config.sandbox.memoryMb is 100000, above the cap of 256 MB');
  });
});

describe('meta-agent call on a graph that asks for endless time', () => {
  it('stops the endless loop at the cap', async () => {
    const graph = {
      format: 'meta-agent/autogram@1',
      name: 'spin',
      config: { sandbox: { timeoutMs: 2_147_483_647, memoryMb: 64 } },
      nodes: [{ name: 'spin()', action: 'code', instruction: 'while (true) {}', transitions: ['return'] }],
    };
    await writeFile(join(dir, 'spin.autogram.json'), JSON.stringify(graph));
    const result = await runBounded(['call', 'spin.autogram.json', 'spin()'], dir, {
      META_AGENT_SANDBOX_TIMEOUT_MS: '300',
      META_AGENT_PROBE_URLS: 'http://127.0.0.1:9/v1',
    });
    expect(result.ms).toBeLessThan(HELD_MS - 5000);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(
      '[sandbox] config.sandbox.timeoutMs is 2147483647, above the cap of 300 ms',
    );
    expect(result.stderr).toContain(
      'error: node "spin()": code ran longer than 300 ms (config.sandbox.timeoutMs)',
    );
    // Raising the file's limit would change nothing at the cap: the hint names the variable.
    expect(result.stderr).toContain('hint: make the code finish sooner');
    expect(result.stderr).toContain('raise META_AGENT_SANDBOX_TIMEOUT_MS');
  });
});
