/**
 * The conditions a caller passes with a code node (`runCode`'s `next`) are evaluated in the code's own
 * call into the isolate, and must come to exactly what `evaluate` would give each over the variables
 * the code left: the same values, builtins and errors, and a time limit of their own.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Sandbox, SandboxError, type NextCondition } from '../../src/sandbox/index.js';
import { failure, where } from './helpers.js';

/** The conditions of the wildcard members `more.a`, `more.b`, … */
function next(...expressions: string[]): NextCondition[] {
  return expressions.map((expression, i) => ({ expression, node: `more.${'abcdef'[i]!}` }));
}

describe('conditions evaluated with the code before them', () => {
  let sandbox: Sandbox;
  beforeAll(async () => {
    sandbox = await Sandbox.create({ timeoutMs: 300 });
    sandbox.expose('meta', { answer: () => 42 });
  });
  afterAll(() => sandbox.dispose());

  it('answers each in order over the variables the code left, up to the first that holds', async () => {
    const conditions = next('i > n', 'list.length === 1 && made === "x" && n === 3', 'true');
    const result = await sandbox.runCode(
      'i = i + 1; list.push(i); made = "x"',
      { i: 1, n: 3, list: [] },
      where,
      conditions,
    );
    expect(result.changed).toEqual({ i: 2, list: [2], made: 'x' });
    expect(result.conditions).toEqual([false, true]);
    const one = await sandbox.evaluate(conditions[1]!.expression, result.scope, where);
    expect(one).toBe(true);
  });

  it('gives each condition fresh builtins, fresh copies and the variables as the caller has them', async () => {
    const result = await sandbox.runCode(
      'Math = null; delete keep; list.push(1); [1].constructor.prototype.push = 0',
      { keep: 5, list: [] },
      where,
      next('(list.push(2), Math.max(keep, list.length) !== 5)', 'list.length === 1 && [].push.length === 1'),
    );
    expect(result.conditions).toEqual([false, true]);
  });

  it('keeps nothing from one evaluation of a condition to the next', async () => {
    const marks =
      '(function f() { const c = f.caller; if (c) c.marks = (c.marks || 0) + 1; return c && c.marks; })()';
    const conditions = next(`(${marks}, false)`, `${marks} > 1`);
    for (let pass = 0; pass < 3; pass++)
      expect((await sandbox.runCode('x = 1', {}, where, conditions)).conditions).toEqual([false, false]);
  });

  it('gives the error of the first condition that fails, naming its node, and evaluates none after it', async () => {
    const result = await sandbox.runCode('x = 1', {}, where, next('x === 2', 'x > 0 && missing', 'true'));
    expect(result.changed).toEqual({ x: 1 });
    expect(result.conditions).toHaveLength(2);
    const error = result.conditions[1];
    expect(error).toBeInstanceOf(SandboxError);
    expect(error).toMatchObject({ kind: 'runtime', node: 'more.b' });
    expect((error as Error).message).toMatch(/missing is not defined/);
  });

  it('refuses a value that cannot leave the sandbox, as evaluate does', async () => {
    const result = await sandbox.runCode('x = 1', {}, where, next('() => x'));
    expect(result.conditions[0]).toMatchObject({ kind: 'uncopyable', node: 'more.a' });
  });

  it('leaves a condition that runs out of time to the caller, who gets its own timeout', async () => {
    const runaway = '(() => { while (true) {} })()';
    const result = await sandbox.runCode('x = 1', {}, where, next('x > 1', runaway));
    expect(result.changed).toEqual({ x: 1 });
    expect(result.conditions).toEqual([]);
    const error = await failure(sandbox.evaluate(runaway, result.scope, { node: 'more.b' }));
    expect(error).toMatchObject({ kind: 'timeout', node: 'more.b' });
  });

  it('leaves to the caller conditions that do not parse, and those after them', async () => {
    const result = await sandbox.runCode('x = 1', {}, where, next('x > 1', 'x >', 'true'));
    expect(result.conditions).toEqual([false]);
  });

  it('leaves to the caller conditions that call the host, and all of them when the code does', async () => {
    expect(
      (await sandbox.runCode('x = 1', {}, where, next('x > 1', 'meta.answer() === 42'))).conditions,
    ).toEqual([false]);
    expect((await sandbox.runCode('x = meta.answer()', {}, where, next('x > 1'))).conditions).toEqual([]);
  });

  it('runs no condition after code that fails', async () => {
    const error = await failure(sandbox.runCode('throw new Error("stop")', {}, where, next('true')));
    expect(error).toMatchObject({ kind: 'runtime', node: where.node });
  });
});
