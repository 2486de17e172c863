/**
 * A Python code node's conditions evaluated in its own round trip to the runtime (PythonSandbox.runCode
 * with `next`): each as its own evaluation would be, over a fresh copy of the variables the code left,
 * by Python's truth, with a time limit of its own; left to the caller where a host namespace is named or
 * a condition does not end. The real runtime, from the build in dist/.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PythonSandbox, SandboxError } from '../../src/sandbox/index.js';
import { PythonRuntime } from '../../src/sandbox/python/python-runtime.js';
import { where } from './helpers.js';

const LOAD_MS = 120_000;

describe('Python conditions evaluated with their code', () => {
  const runtime = new PythonRuntime();
  let python: PythonSandbox;
  beforeAll(async () => {
    python = PythonSandbox.create({ timeoutMs: 1000 }, runtime);
    python.expose('self', { nodes: () => ['start'] });
    await python.evaluate('1', {}, where);
  }, LOAD_MS);
  afterAll(() => {
    python.dispose();
    runtime.stop();
  });

  it('evaluates them in order up to the first that holds, by Python truth, over the variables the code left', async () => {
    const result = await python.runCode('items = items + [3]', { items: [1, 2], limit: 5 }, where, [
      { node: 'pick.a', expression: '[]' },
      { node: 'pick.b', expression: 'len(items) == 3 and limit == 5' },
      { node: 'pick.c', expression: 'undefined_name' },
    ]);
    expect(result.changed).toEqual({ items: [1, 2, 3] });
    expect(result.conditions).toEqual([false, true]);
  });

  it('gives each condition a fresh copy of the variables, as its own evaluation would have', async () => {
    const result = await python.runCode('n = 1', { items: [1] }, where, [
      { node: 'pick.a', expression: 'items.append(2) or False' },
      { node: 'pick.b', expression: 'items == [1]' },
    ]);
    expect(result.conditions).toEqual([false, true]);
  });

  it('stops at a condition that fails, with the error its own evaluation gives, naming its node', async () => {
    const result = await python.runCode('n = 0', {}, where, [
      { node: 'pick.a', expression: '10 / n > 1' },
      { node: 'pick.b', expression: 'True' },
    ]);
    expect(result.conditions).toHaveLength(1);
    const error = result.conditions[0] as SandboxError;
    expect(error).toBeInstanceOf(SandboxError);
    expect(error.message).toBe('node "pick.a": ZeroDivisionError: division by zero (line 1)');
    await expect(python.holds('10 / n > 1', { n: 0 }, { node: 'pick.a' })).rejects.toThrow(error.message);
  });

  it('leaves the conditions to the caller when the code or a condition names a lent namespace', async () => {
    const next = [{ node: 'pick.a', expression: 'n > 0' }];
    expect((await python.runCode('n = len(self.nodes())', {}, where, next)).conditions).toEqual([]);
    const named = [{ node: 'pick.a', expression: "self.nodes() == ['start']" }];
    expect((await python.runCode('n = 1', {}, where, named)).conditions).toEqual([]);
  });

  it('runs the code again alone when a condition after it runs out of time', async () => {
    const result = await python.runCode('n = n + 1', { n: 1 }, where, [
      { node: 'pick.a', expression: 'all(True for _ in iter(int, 1))' },
    ]);
    expect(result.changed).toEqual({ n: 2 });
    expect(result.conditions).toEqual([]);
    await expect(python.holds('all(True for _ in iter(int, 1))', {}, { node: 'pick.a' })).rejects.toThrow(
      /pick\.a.*(time|ms)/,
    );
  }, 30_000);

  it("gives the code's own timeout as the code's, after it ran again alone", async () => {
    const error = await python
      .runCode('while True:\n    pass', {}, where, [{ node: 'pick.a', expression: 'True' }])
      .then(
        () => undefined,
        (reason: unknown) => reason,
      );
    expect(error).toBeInstanceOf(SandboxError);
    expect(error).toMatchObject({ kind: 'timeout', node: where.node });
  }, 30_000);

  it('refuses a lap Python sends itself beyond the conditions asked for', async () => {
    const forged = "__import__('__main__')._meta_agent_lap()\n__import__('__main__')._meta_agent_lap()";
    const error = await python.runCode(forged, {}, where, [{ node: 'pick.a', expression: 'True' }]).then(
      () => undefined,
      (reason: unknown) => reason,
    );
    expect(error).toBeInstanceOf(SandboxError);
    expect((error as Error).message).toMatch(/broke its protocol/);
  }, 30_000);
});
