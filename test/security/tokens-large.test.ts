/**
 * Token counting is synchronous: no budget, deadline or Ctrl+C can stop it once started. A model answer
 * or file of many megabytes without a space (base64, a minified bundle, a model repeating one
 * character) must therefore cost time linear in its length. It used to be quadratic: 20 MiB took
 * minutes. The count runs in a process of its own, killed at a generous bound, so a regression fails
 * the test instead of holding the test run for minutes.
 */
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { TS_CHILD_ARGS } from '../support/ts-child.js';

/** Well above what linear counting takes on a slow, busy machine; far below the quadratic minutes. */
const KILL_AFTER_MS = 90_000;

const MIB = 1024 * 1024;

interface Finished {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Runs `script` (an ES module) with TypeScript sources importable, killed after KILL_AFTER_MS. */
function runCounting(script: string): Promise<Finished> {
  const args = [...TS_CHILD_ARGS, '--input-type=module', '--eval', script];
  return new Promise((resolve, reject) => {
    const running = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    running.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    running.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const timer = setTimeout(() => running.kill('SIGKILL'), KILL_AFTER_MS);
    running.on('error', reject);
    running.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

describe('counting tokens of a huge text without spaces', () => {
  it(
    'counts 20 MiB of one character in linear time, and counts it right',
    async () => {
      const tokens = JSON.stringify(new URL('../../src/llm/tokens.ts', import.meta.url).href);
      const finished = await runCounting(
        `const { countTokens } = await import(${tokens});
         process.stdout.write(String(countTokens('gpt-4o-mini', 'x'.repeat(${20 * MIB}))));`,
      );
      expect(finished.signal, 'killed: counting took minutes, as quadratic counting does').toBeNull();
      expect(finished.stderr).toBe('');
      expect(finished.code).toBe(0);
      // o200k_base spells eight x's as one token.
      expect(Number(finished.stdout)).toBe((20 * MIB) / 8);
    },
    KILL_AFTER_MS + 30_000,
  );

  it(
    'counts 20 MiB of base64-like text (no space, varied characters) in linear time',
    async () => {
      const tokens = JSON.stringify(new URL('../../src/llm/tokens.ts', import.meta.url).href);
      const finished = await runCounting(
        `const { countTokens } = await import(${tokens});
         const text = 'QUJDZGVm+/0123456789'.repeat(${MIB});
         process.stdout.write(String(countTokens('gpt-4o-mini', text)));`,
      );
      expect(finished.signal, 'killed: counting took minutes, as quadratic counting does').toBeNull();
      expect(finished.stderr).toBe('');
      expect(finished.code).toBe(0);
      expect(Number(finished.stdout)).toBeGreaterThan(MIB);
    },
    KILL_AFTER_MS + 30_000,
  );
});
