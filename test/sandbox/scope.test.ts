import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Sandbox } from '../../src/sandbox/index.js';
import { where } from './helpers.js';

describe('runCode: variables in and out', () => {
  let sandbox: Sandbox;
  beforeAll(async () => {
    sandbox = await Sandbox.create();
  });
  afterAll(() => sandbox.dispose());

  it('sees the scope as globals and returns the completion value of the last statement', async () => {
    const result = await sandbox.runCode(
      'const total = price * qty;\ntotal + 1',
      { price: 3, qty: 4 },
      where,
    );
    expect(result.value).toBe(13);
  });

  it('keeps the completion value of the last statement when declarations follow it', async () => {
    expect((await sandbox.runCode('x = 5; let y = 1; var z = 2', {}, where)).value).toBe(5);
    expect((await sandbox.runCode('if (true) { "then" } else { "else" }', {}, where)).value).toBe('then');
    expect((await sandbox.runCode('let only = 1', {}, where)).value).toBeUndefined();
  });

  it('puts in changed only variables the code names; the others come back as they were passed', async () => {
    const untouched = { deep: [1, 2, 3] };
    const result = await sandbox.runCode('list.push(n); made = 1', { list: [], n: 7, untouched }, where);
    expect(result.changed).toMatchObject({ list: [7], made: 1 });
    expect(Object.keys(result.changed)).not.toContain('untouched');
    expect(result.scope).toEqual({ list: [7], n: 7, made: 1, untouched });
    expect(result.scope.untouched).toBe(untouched);
  });

  it('copies assignments to existing variables back', async () => {
    const result = await sandbox.runCode('count = count + 1; name += "!"', { count: 1, name: 'hi' }, where);
    expect(result.scope).toEqual({ count: 2, name: 'hi!' });
  });

  it('copies back a push into an array and a change deep inside an object', async () => {
    const scope = { list: [1, 2, 3], obj: { a: { b: 1 } } };
    const result = await sandbox.runCode('list.push(4); obj.a.b = 2; obj.a.c = [true]', scope, where);
    expect(result.scope).toEqual({ list: [1, 2, 3, 4], obj: { a: { b: 2, c: [true] } } });
    expect(scope).toEqual({ list: [1, 2, 3], obj: { a: { b: 1 } } });
  });

  it('returns new variables made by assignment, var, let and const', async () => {
    const code = 'assigned = 1; var declared = "two"; let lexical = [3]; const constant = { four: 4 }';
    const result = await sandbox.runCode(code, {}, where);
    expect(result.scope).toEqual({ assigned: 1, declared: 'two', lexical: [3], constant: { four: 4 } });
  });

  it('returns var, let and const variables of strict code', async () => {
    const code = '"use strict";\nvar a = 1; let b = 2; const c = 3;';
    expect((await sandbox.runCode(code, {}, where)).scope).toEqual({ a: 1, b: 2, c: 3 });
  });

  it('runs code that opens with "use strict" as strict code', async () => {
    const result = await sandbox.runCode(
      '"use strict"; (function () { return this === undefined })()',
      {},
      where,
    );
    expect(result.value).toBe(true);
  });

  it('returns a variable declared without a value as undefined', async () => {
    const result = await sandbox.runCode('let later; var unset;', {}, where);
    expect(result.scope).toHaveProperty('later', undefined);
    expect(result.scope).toHaveProperty('unset', undefined);
  });

  it('returns the new value of a scope variable the code redeclares with let', async () => {
    expect((await sandbox.runCode('let n = 10;', { n: 1 }, where)).scope).toEqual({ n: 10 });
  });

  it('returns a variable the code creates through globalThis, whatever its name', async () => {
    const result = await sandbox.runCode('globalThis["not an identifier"] = 1', {}, where);
    expect(result.scope).toEqual({ 'not an identifier': 1 });
  });

  it('does not take names the global object inherits, like constructor and toString, for variables', async () => {
    const code = 'same = ({}).constructor === Object && typeof toString === "function" && typeof __proto__';
    expect((await sandbox.runCode(code, {}, where)).scope).toEqual({ same: 'object' });
  });

  it('returns the scope unchanged when the code does not touch it', async () => {
    const scope = { a: 1, b: 'two', c: null, d: [1, [2]], e: { f: { g: false } } };
    expect((await sandbox.runCode('1 + 1', scope, where)).scope).toEqual(scope);
  });

  it('copies plain data exactly: null, undefined, NaN, -0 and nested arrays', async () => {
    const result = await sandbox.runCode('out = [null, undefined, NaN, -0, [[1]]]', {}, where);
    expect(result.scope.out).toEqual([null, undefined, NaN, -0, [[1]]]);
    expect(Object.is((result.scope.out as unknown[])[3], -0)).toBe(true);
  });

  it('passes in exactly what JSON would not carry: undefined, NaN, -0, Infinity, holes, a Date', async () => {
    // eslint-disable-next-line no-sparse-arrays -- a hole, which JSON would make null
    const holes = [1, , 3];
    const scope = { u: [undefined], n: NaN, z: { deep: -0 }, inf: -Infinity, holes, when: new Date(0) };
    const seen = await sandbox.evaluate(
      '[u.length, u[0] === undefined, Number.isNaN(n), Object.is(z.deep, -0), inf, 1 in holes, when.getTime()]',
      scope,
      where,
    );
    expect(seen).toEqual([1, true, true, true, -Infinity, false, 0]);
  });

  it('passes in and hands back text with any characters, and a variable named __proto__', async () => {
    const scope = { text: 'a"\\\n\u2028\ud800é', __proto__: null } as Record<string, unknown>;
    Object.defineProperty(scope, '__proto__', { value: { own: 1 }, enumerable: true });
    const result = await sandbox.runCode('copy = text + "!"; own = __proto__.own; copy', scope, where);
    expect(result.value).toBe('a"\\\n\u2028\ud800é!');
    expect(result.changed).toMatchObject({ copy: 'a"\\\n\u2028\ud800é!', own: 1 });
  });

  it('hands back plain host objects', async () => {
    const result = await sandbox.runCode('o = { a: { b: 1 } }', {}, where);
    expect(Object.getPrototypeOf(result.scope.o)).toBe(Object.prototype);
    expect(Object.getPrototypeOf((result.scope.o as { a: object }).a)).toBe(Object.prototype);
  });

  it('starts every call from only the scope passed in', async () => {
    await sandbox.runCode(
      'leftover = 1; let hidden = 2; Math.extra = 3; Array.prototype.polluted = 4; JSON = null',
      {},
      where,
    );
    const check =
      '[typeof leftover, typeof hidden, typeof Math.extra, typeof [].polluted, typeof JSON.parse, typeof given]';
    const result = await sandbox.runCode(check, { given: 1 }, where);
    expect(result.value).toEqual(['undefined', 'undefined', 'undefined', 'undefined', 'function', 'number']);
  });

  it('offers JSON and Math', async () => {
    const result = await sandbox.runCode('JSON.stringify({ max: Math.max(1, 7, 3) })', {}, where);
    expect(result.value).toBe('{"max":7}');
  });

  it('collects console output, one line a call, objects as JSON', async () => {
    const code = 'console.log("total", 3, { a: [1] }); console.warn("careful"); console.error(undefined)';
    expect((await sandbox.runCode(code, {}, where)).logs).toEqual([
      'total 3 {"a":[1]}',
      'careful',
      'undefined',
    ]);
  });

  it('hands what the code printed before it threw to the error', async () => {
    const failed = sandbox.runCode('console.log("step 1"); null.x', {}, where);
    await expect(failed).rejects.toMatchObject({ kind: 'runtime', logs: ['step 1'] });
  });

  it('keeps console frozen and at most 1000 lines', async () => {
    const code =
      'console.log = null; for (let i = 0; i < 1500; i++) console.log(i); Object.isFrozen(console)';
    const result = await sandbox.runCode(code, {}, where);
    expect(result.value).toBe(true);
    expect(result.logs).toHaveLength(1000);
    expect(result.logs[999]).toBe('999');
  });
});
