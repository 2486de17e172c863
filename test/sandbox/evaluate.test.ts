import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Sandbox } from '../../src/sandbox/index.js';
import { failure, where } from './helpers.js';

describe('evaluate: one expression over the scope', () => {
  let sandbox: Sandbox;
  beforeAll(async () => {
    sandbox = await Sandbox.create();
  });
  afterAll(() => sandbox.dispose());

  it('evaluates a boolean condition over the scope', async () => {
    const scope = { attempts: 3, answer: 'yes' };
    expect(await sandbox.evaluate('attempts > 2 && answer === "yes"', scope, where)).toBe(true);
    expect(await sandbox.evaluate('attempts > 5', scope, where)).toBe(false);
  });

  it('evaluates to a copy of an object or array', async () => {
    const value = await sandbox.evaluate(
      '({ first: items[0], rest: items.slice(1) })',
      { items: [1, 2, 3] },
      where,
    );
    expect(value).toEqual({ first: 1, rest: [2, 3] });
  });

  it('reads an expression that spans lines or ends in a comment', async () => {
    expect(await sandbox.evaluate('a +\n b // the sum', { a: 1, b: 2 }, where)).toBe(3);
  });

  it('leaves the scope alone: assignments and mutations inside are discarded', async () => {
    const scope = { count: 1, list: [1] };
    expect(await sandbox.evaluate('(count = 99, list.push(2), count)', scope, where)).toBe(99);
    expect(scope).toEqual({ count: 1, list: [1] });
    expect(await sandbox.evaluate('typeof count', {}, where)).toBe('undefined');
  });

  it('refuses statements as a syntax error', async () => {
    const error = await failure(sandbox.evaluate('x = 1; x', {}, where));
    expect(error.kind).toBe('syntax');
    expect(error.message).toMatch(/^node "calc": SyntaxError: /);
  });

  it('refuses an empty expression', async () => {
    const error = await failure(sandbox.evaluate('  ', {}, where));
    expect(error.message).toBe('node "calc": the expression is empty');
  });

  it('reports an error thrown while evaluating, with the node', async () => {
    const error = await failure(sandbox.evaluate('missing.field', {}, { node: 'check' }));
    expect(error.kind).toBe('runtime');
    expect(error.message).toBe('node "check": ReferenceError: missing is not defined (line 1)');
  });

  it('refuses a value that is not plain data', async () => {
    const error = await failure(sandbox.evaluate('() => 1', {}, where));
    expect(error.kind).toBe('uncopyable');
    expect(error.message).toBe(
      'node "calc": the value of the expression is a function, which cannot leave the sandbox',
    );
  });
});
