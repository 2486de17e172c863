import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Sandbox } from '../../src/sandbox/index.js';
import { failure, where } from './helpers.js';

/** Resolves after `ms` milliseconds of real time. */
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

describe('async host functions exposed to the sandbox', () => {
  let sandbox: Sandbox;
  const received: unknown[] = [];
  beforeAll(async () => {
    // A short limit, so waits longer than it prove they are not charged to it.
    sandbox = await Sandbox.create({ timeoutMs: 100 });
    sandbox.exposeAsync('meta', {
      later: async (value: { n: number }) => {
        received.push(value);
        await sleep(10);
        return { doubled: value.n * 2 };
      },
      slow: async () => {
        await sleep(400);
        return 'done';
      },
      reject: async (message: string) => {
        await sleep(1);
        throw new Error(message);
      },
      plain: (n: number) => n + 1,
      giveFunction: async () => () => 1,
    });
    sandbox.expose('self', { name: () => 'sync' });
  });
  afterAll(() => sandbox.dispose());

  it('hands the code the resolved value, as if the call were synchronous', async () => {
    received.length = 0;
    const result = await sandbox.runCode('r = meta.later({ n: 21 }); r.doubled + meta.plain(1)', {}, where);
    expect(result).toMatchObject({ value: 44, scope: { r: { doubled: 42 } } });
    expect(received).toEqual([{ n: 21 }]);
  });

  it('works in conditions and beside synchronous namespaces', async () => {
    expect(
      await sandbox.evaluate('meta.later({ n: 2 }).doubled === 4 && self.name() === "sync"', {}, where),
    ).toBe(true);
  });

  it('raises a rejection inside as an Error the code can catch', async () => {
    const result = await sandbox.runCode(
      'let m; try { meta.reject("no model") } catch (e) { m = e.message }',
      {},
      where,
    );
    expect(result.scope).toEqual({ m: 'no model' });
  });

  it('does not charge the time spent waiting to the time limit', async () => {
    const result = await sandbox.runCode('a = meta.slow(); b = meta.slow(); a + b', {}, where);
    expect(result.value).toBe('donedone');
  });

  it('still stops code that runs too long after a wait', async () => {
    const error = await failure(sandbox.runCode('meta.slow(); while (true) {}', {}, where));
    expect(error.kind).toBe('timeout');
    // The sandbox recovers: the next evaluation runs in a fresh isolate with the namespace still lent.
    expect(await sandbox.evaluate('meta.plain(1)', {}, where)).toBe(2);
  });

  it('refuses a resolved value that cannot be copied in, with a catchable error', async () => {
    const error = await failure(sandbox.runCode('meta.giveFunction()', {}, where));
    expect(error.message).toMatch(
      /meta\.giveFunction returned a value that cannot be copied into the sandbox/,
    );
  });

  it('keeps a synchronous namespace refusing promises', async () => {
    const strict = await Sandbox.create();
    try {
      strict.expose('self', { later: async () => 1 });
      const error = await failure(strict.runCode('self.later()', {}, where));
      expect(error.message).toMatch(/returned a Promise; host functions must be synchronous/);
    } finally {
      strict.dispose();
    }
  });
});
