/**
 * One context serves every evaluation of a sandbox, so nothing one evaluation does may reach the next:
 * not to builtins, not to the global object, not through its own global object's prototype, not from
 * a promise callback that runs after it. Each case damages something in one evaluation and looks for
 * it in the next.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Sandbox } from '../../src/sandbox/index.js';
import { where } from './helpers.js';

describe('what one evaluation leaves for the next', () => {
  let sandbox: Sandbox;
  beforeAll(async () => {
    sandbox = await Sandbox.create();
    sandbox.exposeAsync('later', { echo: async (value: unknown) => value });
  });
  afterAll(() => sandbox.dispose());

  /** Runs `damage`, then `check` in a later evaluation, and returns the check's value. */
  async function after(damage: string, check: string): Promise<unknown> {
    await sandbox.runCode(damage, {}, where).catch(() => undefined);
    return (await sandbox.runCode(check, {}, where)).value;
  }

  it('keeps builtins as they were: a prototype, a namespace object, a constructor', async () => {
    const damage = [
      'Array.prototype.polluted = 1; Object.prototype.inherited = 2; Math.random = () => 4;',
      'String.prototype.trim = () => "x"; JSON.parse = null; Number.MAX_SAFE_INTEGER = 0;',
      'try { Object.defineProperty(Object.prototype, "sneaky", { get() { return 5 } }) } catch {}',
      'try { Object.setPrototypeOf(Array.prototype, null) } catch {}',
      'try { ({}).__proto__.viaProto = 6 } catch {}',
    ].join('\n');
    const check =
      '[[].polluted, ({}).inherited, Math.random() < 1, " a ".trim(), typeof JSON.parse, ' +
      'Number.MAX_SAFE_INTEGER > 0, ({}).sneaky, Object.getPrototypeOf([]) === Array.prototype, ({}).viaProto]';
    expect(await after(damage, check)).toEqual([
      undefined,
      undefined,
      true,
      'a',
      'function',
      true,
      undefined,
      true,
      undefined,
    ]);
  });

  it('freezes every builtin reachable from the global object but RegExp.prototype and Error', async () => {
    const code = `{
      const seen = new Set([globalThis]), queue = [];
      const add = (value) => {
        if ((typeof value !== 'object' && typeof value !== 'function') || value === null || seen.has(value)) return;
        seen.add(value);
        queue.push(value);
      };
      const addProperties = (object) => {
        for (const key of Reflect.ownKeys(object)) {
          const property = Reflect.getOwnPropertyDescriptor(object, key);
          add(property.value);
          add(property.get);
          add(property.set);
        }
      };
      addProperties(globalThis);
      add(Object.getPrototypeOf(globalThis));
      const segments = new Intl.Segmenter().segment('');
      for (const instance of [function* () {}, async function () {}, async function* () {}, [][Symbol.iterator](),
        new Map().entries(), new Set().values(), ''[Symbol.iterator](), /a/[Symbol.matchAll](''),
        [].values().map((x) => x), Iterator.from({ next() {} }), segments, segments[Symbol.iterator]()])
        add(Object.getPrototypeOf(instance));
      const unfrozen = [];
      while (queue.length > 0) {
        const object = queue.pop();
        add(Object.getPrototypeOf(object));
        addProperties(object);
        if (!Object.isFrozen(object)) unfrozen.push(object === RegExp.prototype ? 'RegExp.prototype' : object === Error ? 'Error' : '?');
      }
      const limit = Object.getOwnPropertyDescriptor(Error, 'stackTraceLimit');
      [seen.size > 500, unfrozen.sort(), Object.isExtensible(Error), limit.writable, limit.configurable]
    }`;
    expect((await sandbox.runCode(code, {}, where)).value).toEqual([
      true,
      ['Error', 'RegExp.prototype'],
      false,
      true,
      false,
    ]);
  });

  it('freezes builtins, so strict code that changes one gets a TypeError', async () => {
    const code = '"use strict"; try { Array.prototype.x = 1; "changed" } catch (e) { e.constructor.name }';
    expect((await sandbox.runCode(code, {}, where)).value).toBe('TypeError');
  });

  it('keeps the intrinsics only an instance leads to: iterators, generators, async functions', async () => {
    const damage = [
      'Object.getPrototypeOf([][Symbol.iterator]()).next = () => ({ done: true });',
      'Object.getPrototypeOf(function* () {}).prototype.extra = 1;',
      'Object.getPrototypeOf(async function () {}).extra = 2;',
      'Object.getPrototypeOf(new Map().entries()).extra = 3;',
    ].join('\n');
    const check =
      '[[...[1, 2]].length, (function* () {})().extra, (async function () {}).extra, new Map().entries().extra]';
    expect(await after(damage, check)).toEqual([2, undefined, undefined, undefined]);
  });

  it('lets code assign properties its own objects inherit from a frozen prototype', async () => {
    const code = [
      '{ class NotFound extends Error { constructor(m) { super(m); this.name = "NotFound" } }',
      'const counts = {}; for (const word of ["constructor", "toString", "a"]) counts[word] = (counts[word] | 0) + 1;',
      'const shown = { toString() { return "shown" } }; const plain = {}; plain.toString = () => "plain";',
      'const error = new Error(); error.message = "set later";',
      '[new NotFound("x").name, counts.constructor, counts.toString, `${shown}`, `${plain}`, error.message] }',
    ].join('\n');
    expect((await sandbox.runCode(code, {}, where)).value).toEqual([
      'NotFound',
      1,
      1,
      'shown',
      'plain',
      'set later',
    ]);
  });

  it('forgets globals made by var, function, assignment, a getter or a symbol', async () => {
    const damage = [
      'var leftover = 1; function helper() {} assigned = 2;',
      'Object.defineProperty(globalThis, "getter", { get() { return 3 }, configurable: true, enumerable: true });',
      'globalThis[Symbol.for("mark")] = 4;',
      'globalThis.__defineGetter__("legacy", () => 5);',
    ].join('\n');
    const check =
      '[typeof leftover, typeof helper, typeof assigned, typeof getter, globalThis[Symbol.for("mark")], typeof legacy]';
    expect(await after(damage, check)).toEqual([
      'undefined',
      'undefined',
      'undefined',
      'undefined',
      undefined,
      'undefined',
    ]);
  });

  it('forgets globals made hidden: not enumerable, through a proxy, or by captureStackTrace', async () => {
    const damage = [
      'Object.defineProperty(globalThis, "hidden", { value: 1, configurable: true });',
      'Reflect.defineProperty(new Proxy(globalThis, {}), "proxied", { value: 2, configurable: true });',
      'Error.captureStackTrace(globalThis);',
    ].join('\n');
    const check = '[typeof hidden, typeof proxied, Object.getOwnPropertyNames(globalThis).includes("stack")]';
    expect(await after(damage, check)).toEqual(['undefined', 'undefined', false]);
  });

  it('puts back builtins the code replaced, deleted or turned into getters', async () => {
    const damage = [
      'JSON = null; delete globalThis.Math; globalThis.Reflect = 1;',
      'Object.defineProperty(globalThis, "Array", { get() { return 7 }, configurable: true });',
      'delete globalThis.Number; globalThis.Number = Number;',
    ].join('\n');
    const check =
      '[typeof JSON.parse, Math.max(1, 2), typeof Reflect.apply, Array.isArray([]), ' +
      'Object.keys(globalThis).includes("Number")]';
    expect(await after(damage, check)).toEqual(['function', 2, 'function', true, false]);
  });

  it('starts afresh after the global object was made permanent in part or whole', async () => {
    for (const damage of [
      'Object.defineProperty(globalThis, "stuck", { value: 1 })',
      'Object.freeze(globalThis)',
      'Object.seal(globalThis)',
      'Object.preventExtensions(globalThis)',
      'Object.setPrototypeOf(globalThis, { inherited: 1 })',
    ]) {
      const damaged = await sandbox.runCode(`${damage}; "done"`, {}, where);
      expect(damaged.value, damage).toBe('done');
      const result = await sandbox.runCode(
        'x = given + 1; [typeof stuck, typeof inherited, Object.isExtensible(globalThis)]',
        { given: 1 },
        where,
      );
      expect(result.value, damage).toEqual(['undefined', 'undefined', true]);
      expect(result.scope, damage).toEqual({ given: 1, x: 2 });
    }
  });

  it('keeps RegExp.prototype, which stays unfrozen for speed, as it was', async () => {
    const damage = [
      'RegExp.prototype.exec = () => null; RegExp.prototype.extra = 1; delete RegExp.prototype.global;',
      'RegExp.prototype[Symbol.for("x")] = 2;',
    ].join('\n');
    expect(await after(damage, '[/a/.test("a"), /a/.extra, /a/g.global, "abc".replace(/b/, "-")]')).toEqual([
      true,
      undefined,
      true,
      'a-c',
    ]);
    const redefined = 'Object.defineProperty(RegExp.prototype, "flags", { get() { return "leaked" } })';
    expect(await after(redefined, '/a/g.flags')).toBe('g');
  });

  it('shows no earlier match through RegExp.$1 and no changed Error.stackTraceLimit', async () => {
    const damage = '/(secret)/.exec("a secret"); Error.stackTraceLimit = 0';
    expect(await after(damage, '[RegExp.$1, RegExp.lastMatch, Error.stackTraceLimit]')).toEqual(['', '', 10]);
  });

  it('forgets what a promise callback did after its evaluation had answered', async () => {
    const damage = 'Promise.resolve().then(() => Promise.resolve()).then(() => { globalThis.late = 1 }); 1';
    expect(await after(damage, 'typeof late')).toBe('undefined');
  });

  it('lends a variable named like a builtin for one evaluation only', async () => {
    expect((await sandbox.runCode('escape + 1', { escape: 1 }, where)).value).toBe(2);
    expect(await sandbox.evaluate('typeof escape', {}, where)).toBe('function');
  });

  it('does not show one evaluation the variables of the one before', async () => {
    await sandbox.runCode('kept = secret', { secret: 's', other: 1 }, where);
    expect(await sandbox.evaluate('[typeof secret, typeof kept, typeof other]', {}, where)).toEqual([
      'undefined',
      'undefined',
      'undefined',
    ]);
  });

  it('copies in only the variables the code names, and every one for code that names globalThis', async () => {
    const scope = { a: 1, b: 2 };
    const globalObject = `Reflect.get(Object.getPrototypeOf(() => 0), "constr" + "uctor")("return th" + "is")()`;
    const unnamed = `[typeof a, Object.keys(${globalObject}).includes(String.fromCharCode(98))]`;
    expect(await sandbox.evaluate(unnamed, scope, where)).toEqual(['number', false]);
    expect(await sandbox.evaluate('typeof globalThis["b"]', scope, where)).toBe('number');
  });

  it('hands back every variable passed in, those the code did not name unchanged and uncopied', async () => {
    const untouched = { deep: [1] };
    const result = await sandbox.runCode('a = a + 1', { a: 1, untouched }, where);
    expect(result.scope).toEqual({ a: 2, untouched: { deep: [1] } });
    expect(result.scope.untouched).toBe(untouched);
  });

  it('refuses an asynchronous host function that code reaches without naming its namespace', async () => {
    const code = [
      '{ const makeFunction = Reflect.get(Object.getPrototypeOf(() => 0), "constr" + "uctor");',
      'try { makeFunction("return th" + "is")()["lat" + "er"].echo(1) } catch (e) { e.message } }',
    ].join('\n');
    expect((await sandbox.runCode(code, {}, where)).value).toBe(
      'later.echo waits for the host, so only code that names later may call it',
    );
    expect(await sandbox.evaluate('later.echo(1)', {}, where)).toBe(1);
  });
});
