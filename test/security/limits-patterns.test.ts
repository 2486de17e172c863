/**
 * A flow's afterQuery JSON Schema is the file's, and so are its regular expressions (`pattern`,
 * `patternProperties`, a `propertyNames` pattern). Matched in the host, `^(a+)+$` against 36 `a`s and a
 * `!` held the process at full CPU for minutes (catastrophic backtracking). They match in an isolate
 * of their own under the sandbox's time limit, and one that runs past it fails the node in one line.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { PatternError, PatternSandbox, withSandboxedRegExps } from '../../src/sandbox/patterns.js';

const bin = fileURLToPath(new URL('../../bin/meta-agent.js', import.meta.url));

/** Far longer than a bounded run needs; the host's own match of the pattern below takes minutes. */
const HELD_MS = 30_000;

/** Backtracks exponentially in the number of `a`s before a character that cannot match. */
const CATASTROPHIC = '^(a+)+$';

/** Enough `a`s for the host to take seconds over it, and the sandbox to stop it. */
const SLOW_TEXT = `${'a'.repeat(25)}!`;

/** Runs the built CLI, killed after HELD_MS: a process stuck in a host regex cannot answer Ctrl+C. */
function runBounded(
  args: string[],
  cwd: string,
): Promise<{ code: number | null; stderr: string; ms: number }> {
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !/^(OPENAI_|META_AGENT_)/.test(name)),
  );
  const started = performance.now();
  const child = spawn(process.execPath, [bin, ...args], {
    cwd,
    env: { ...env, NO_COLOR: '1' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const kill = setTimeout(() => child.kill('SIGKILL'), HELD_MS);
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(kill);
      resolve({ code, stderr, ms: performance.now() - started });
    });
  });
}

let patterns: PatternSandbox | undefined;
afterEach(() => patterns?.dispose());

/** The zod type of `schema` as the flow runner makes it, its patterns matched in `patterns`. */
function answerType(schema: object, timeoutMs = 100): z.ZodType {
  patterns = new PatternSandbox({ timeoutMs });
  return withSandboxedRegExps(patterns, () => z.fromJSONSchema(schema as never));
}

/** What `parse` threw, and how long it took. */
function timed(parse: () => unknown): { error: unknown; ms: number } {
  const started = performance.now();
  try {
    parse();
    return { error: undefined, ms: performance.now() - started };
  } catch (error) {
    return { error, ms: performance.now() - started };
  }
}

describe('a JSON Schema pattern from a file', () => {
  it('is stopped at the time limit, with an error naming the pattern', () => {
    const type = answerType({ type: 'string', pattern: CATASTROPHIC });
    const { error, ms } = timed(() => type.safeParse(SLOW_TEXT));
    expect(error).toBeInstanceOf(PatternError);
    expect((error as PatternError).exitCode).toBe(2);
    expect((error as PatternError).message).toBe(
      'pattern "^(a+)+$" took longer than 100 ms matching a text of 26 characters (config.sandbox.timeoutMs)',
    );
    expect(ms).toBeLessThan(1000);
  });

  it('still decides matches, and leaves the host RegExp as it was', () => {
    const type = answerType({
      type: 'object',
      properties: { code: { type: 'string', pattern: '^[A-Z]{3}-\\d+$' } },
      required: ['code'],
    });
    expect(type.safeParse({ code: 'ABC-42' }).success).toBe(true);
    expect(type.safeParse({ code: 'abc-42' }).success).toBe(false);
    expect(globalThis.RegExp).toBe(/x/.constructor);
    expect(/^(a+)+$/.test('aaa')).toBe(true);
  });

  it('in patternProperties and propertyNames is stopped too', () => {
    const keyed = answerType({
      type: 'object',
      patternProperties: { [CATASTROPHIC]: { type: 'number' } },
      additionalProperties: false,
    });
    expect(keyed.safeParse({ aaa: 1 }).success).toBe(true);
    expect(timed(() => keyed.safeParse({ [SLOW_TEXT]: 1 })).error).toBeInstanceOf(PatternError);
    const named = answerType({ type: 'object', propertyNames: { pattern: CATASTROPHIC } });
    expect(named.safeParse({ aaa: 1 }).success).toBe(true);
    expect(timed(() => named.safeParse({ [SLOW_TEXT]: 1 })).error).toBeInstanceOf(PatternError);
  });

  it('leaves the pattern sandbox usable after a pattern ran too long', () => {
    const type = answerType({ type: 'string', pattern: CATASTROPHIC });
    expect(timed(() => type.safeParse(SLOW_TEXT)).error).toBeInstanceOf(PatternError);
    expect(type.safeParse('aaaa').success).toBe(true);
    expect(type.safeParse('aab').success).toBe(false);
  });
});

describe('meta-agent flow run with a catastrophic afterQuery pattern', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'meta-agent-patterns-'));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('fails the node within seconds, in one line, instead of holding the process', async () => {
    const flow = {
      name: 'redos',
      nodes: [
        {
          name: 'word',
          prompt: 'A word?',
          afterQuery: {
            schema: {
              type: 'object',
              properties: { w: { type: 'string', pattern: CATASTROPHIC } },
              required: ['w'],
            },
          },
        },
      ],
    };
    await writeFile(join(dir, 'redos.flow.json'), JSON.stringify(flow));
    const answer = JSON.stringify({ w: `${'a'.repeat(36)}!` });
    await writeFile(join(dir, 'rules.json'), JSON.stringify({ rules: [{ reply: answer }] }));
    const result = await runBounded(
      ['flow', 'run', 'redos.flow.json', '--provider', 'scripted', '--script', 'rules.json'],
      dir,
    );
    expect(result.ms).toBeLessThan(15_000);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(
      '[flow] word failed: pattern "^(a+)+$" took longer than 1000 ms matching a text of 37 characters',
    );
    expect(result.stderr).not.toContain('looks like a bug');
  });
});
