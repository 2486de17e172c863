import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UserError } from '../../src/errors.js';
import { DEFAULT_SANDBOX_LIMITS, Sandbox } from '../../src/sandbox/index.js';
import { failure, where } from './helpers.js';

const MEMORY_BOMB = 'const hoard = [];\nwhile (true) hoard.push(new Array(100000).fill(1));';

describe('sandbox limits', () => {
  let sandbox: Sandbox;
  beforeAll(async () => {
    sandbox = await Sandbox.create({ timeoutMs: 200, memoryMb: 16 });
  });
  afterAll(() => sandbox.dispose());

  it('uses 1000 ms and 64 MB unless told otherwise', async () => {
    const plain = await Sandbox.create();
    expect(plain.limits).toEqual({ timeoutMs: 1000, memoryMb: 64 });
    expect(DEFAULT_SANDBOX_LIMITS).toEqual({ timeoutMs: 1000, memoryMb: 64 });
    plain.dispose();
    expect((await Sandbox.create({ memoryMb: 32 })).limits).toEqual({ timeoutMs: 1000, memoryMb: 32 });
  });

  it('rejects limits isolated-vm cannot honour, naming the setting', async () => {
    for (const [limits, setting] of [
      [{ memoryMb: 4 }, 'sandbox.memoryMb'],
      [{ timeoutMs: 0 }, 'sandbox.timeoutMs'],
      [{ timeoutMs: 1.5 }, 'sandbox.timeoutMs'],
    ] as const) {
      const error = await Sandbox.create(limits).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(UserError);
      expect((error as UserError).exitCode).toBe(2);
      expect((error as UserError).message).toContain(setting);
    }
  });

  it('stops an infinite loop and names the node and the limit', async () => {
    const error = await failure(sandbox.runCode('while (true) {}', {}, { node: 'loop' }));
    expect(error.kind).toBe('timeout');
    expect(error.node).toBe('loop');
    expect(error.message).toBe('node "loop": code ran longer than 200 ms (config.sandbox.timeoutMs)');
    expect(error.hint).toContain('sandbox.timeoutMs');
  });

  it('stops an infinite loop in an expression', async () => {
    expect((await failure(sandbox.evaluate('(() => { for (;;); })()', {}, where))).kind).toBe('timeout');
  });

  it('stops an infinite loop in a promise callback', async () => {
    const error = await failure(sandbox.runCode('Promise.resolve().then(() => { for (;;); }); 1', {}, where));
    expect(error.kind).toBe('timeout');
  });

  it('stops a loop the code hides in the getter of what it throws', async () => {
    const code = 'throw { get message() { for (;;); } }';
    expect((await failure(sandbox.runCode(code, {}, where))).kind).toBe('timeout');
  });

  it('stops a loop hidden in the getter of a rejection nobody handles', async () => {
    const code = 'Promise.reject({ get message() { for (;;); } }); 1';
    expect((await failure(sandbox.runCode(code, {}, where))).kind).toBe('timeout');
    expect((await sandbox.runCode('2 + 2', {}, where)).value).toBe(4);
  });

  it('stops such a loop in code whose call is asynchronous, as it waits for the host', async () => {
    const waiting = await Sandbox.create({ timeoutMs: 200 });
    try {
      waiting.exposeAsync('host', { now: async () => 1 });
      const code = 'host.now(); Promise.reject({ get message() { for (;;); } }); 1';
      expect((await failure(waiting.runCode(code, {}, where))).kind).toBe('timeout');
      expect(await waiting.evaluate('host.now() + 1', {}, where)).toBe(2);
    } finally {
      waiting.dispose();
    }
  });

  it('stops a loop hidden in the getter of a variable it hands back', async () => {
    const code = 'Object.defineProperty(globalThis, "trap", { get() { for (;;); }, enumerable: true })';
    expect((await failure(sandbox.runCode(code, {}, where))).kind).toBe('timeout');
  });

  it('keeps working after a timeout', async () => {
    await failure(sandbox.runCode('while (true) {}', {}, where));
    expect((await sandbox.runCode('n * 2', { n: 21 }, where)).value).toBe(42);
  });

  it('stops a memory bomb and names the node and the limit', async () => {
    const roomy = await Sandbox.create({ timeoutMs: 20_000, memoryMb: 16 });
    try {
      const error = await failure(roomy.runCode(MEMORY_BOMB, {}, { node: 'bomb' }));
      expect(error.kind).toBe('memory');
      expect(error.message).toBe(
        'node "bomb": code used more than 16 MB of memory (config.sandbox.memoryMb)',
      );
      expect(error.hint).toContain('sandbox.memoryMb');
    } finally {
      roomy.dispose();
    }
  });

  it('starts a fresh isolate after a memory kill and keeps its exposed functions', async () => {
    const roomy = await Sandbox.create({ timeoutMs: 20_000, memoryMb: 16 });
    try {
      roomy.expose('host', { twice: (n: number) => n * 2 });
      await failure(roomy.runCode(MEMORY_BOMB, {}, where));
      const result = await roomy.runCode('out = host.twice(n)', { n: 5 }, where);
      expect(result.scope).toEqual({ n: 5, out: 10 });
      expect(await roomy.evaluate('[1, 2].length', {}, where)).toBe(2);
    } finally {
      roomy.dispose();
    }
  });

  it('serves concurrent calls one at a time, each with its own scope', async () => {
    const calls = Array.from({ length: 10 }, (_, i) => sandbox.runCode('seen = n; n * n', { n: i }, where));
    const results = await Promise.all(calls);
    expect(results.map((r) => r.value)).toEqual([0, 1, 4, 9, 16, 25, 36, 49, 64, 81]);
    expect(results.map((r) => r.scope.seen)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
  });

  it('refuses work once disposed', async () => {
    const short = await Sandbox.create();
    short.dispose();
    await expect(short.runCode('1', {}, where)).rejects.toThrow('the sandbox was disposed');
  });
});
