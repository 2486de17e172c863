/**
 * Known routes out of a JavaScript sandbox, each tried from inside. Every attempt must fail or see
 * `undefined`; none may reach a host object.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Sandbox } from '../../src/sandbox/index.js';
import { failure, where } from '../sandbox/helpers.js';

/** The ECMAScript globals a fresh V8 context has, less the four the sandbox removes. */
const ECMASCRIPT_GLOBALS = [
  ...['Object', 'Function', 'Array', 'Number', 'parseFloat', 'parseInt', 'Infinity', 'NaN', 'undefined'],
  ...['Boolean', 'String', 'Symbol', 'Date', 'Promise', 'RegExp', 'Error', 'AggregateError', 'EvalError'],
  ...['RangeError', 'ReferenceError', 'SyntaxError', 'TypeError', 'URIError', 'globalThis', 'JSON', 'Math'],
  ...['Intl', 'ArrayBuffer', 'Uint8Array', 'Int8Array', 'Uint16Array', 'Int16Array', 'Uint32Array'],
  ...['Int32Array', 'BigUint64Array', 'BigInt64Array', 'Uint8ClampedArray', 'Float32Array', 'Float64Array'],
  ...['Float16Array', 'DataView', 'Map', 'BigInt', 'Set', 'Iterator', 'WeakMap', 'WeakSet', 'Proxy'],
  ...['Reflect', 'WeakRef', 'decodeURI', 'decodeURIComponent', 'encodeURI', 'encodeURIComponent'],
  ...['escape', 'unescape', 'eval', 'isFinite', 'isNaN', 'SuppressedError', 'DisposableStack'],
  ...['AsyncDisposableStack'],
];

describe('escapes from the sandbox', () => {
  let sandbox: Sandbox;
  const reports: string[] = [];
  beforeAll(async () => {
    sandbox = await Sandbox.create({ timeoutMs: 2000 });
    sandbox.expose('host', {
      report: (line: string) => void reports.push(line),
      echo: (value: unknown) => value,
    });
    sandbox.exposeAsync('later', { echo: async (value: unknown) => value });
  });
  afterAll(() => sandbox.dispose());

  it('has nothing of Node: no process, require, module, Buffer, timers, fetch or file system', async () => {
    const names = [
      ...['process', 'require', 'module', 'exports', '__dirname', '__filename', 'Buffer', 'global'],
      ...['setTimeout', 'setInterval', 'setImmediate', 'queueMicrotask', 'structuredClone', 'fetch'],
      ...['XMLHttpRequest', 'WebSocket', 'fs', 'ivm', '$0', '$1'],
    ];
    const types = await sandbox.evaluate(`[${names.map((n) => `typeof ${n}`).join(', ')}]`, {}, where);
    expect(types).toEqual(names.map(() => 'undefined'));
  });

  it('has only ECMAScript builtins, console, its two hooks, the scope and the namespaces as globals', async () => {
    const globals = (await sandbox.evaluate(
      'Object.getOwnPropertyNames(globalThis)',
      { mine: 1 },
      where,
    )) as string[];
    const expected = [
      ...ECMASCRIPT_GLOBALS,
      'console',
      '__sandboxCapture',
      '__sandboxFail',
      'mine',
      'host',
      'later',
    ];
    expect([...globals].sort()).toEqual([...expected].sort());
  });

  it('removes Atomics, SharedArrayBuffer, WebAssembly and FinalizationRegistry', async () => {
    const check =
      '[typeof Atomics, typeof SharedArrayBuffer, typeof WebAssembly, typeof FinalizationRegistry]';
    expect(await sandbox.evaluate(check, {}, where)).toEqual([
      'undefined',
      'undefined',
      'undefined',
      'undefined',
    ]);
  });

  it('finds no process through this.constructor.constructor', async () => {
    const error = await failure(
      sandbox.runCode('this.constructor.constructor("return process")()', {}, where),
    );
    expect(error.message).toBe('node "calc": ReferenceError: process is not defined (line 1)');
  });

  it('finds only the sandbox global through the Function constructor of an exposed function', async () => {
    const code = '{ const g = host.echo.constructor("return this")(); [g === globalThis, typeof g.process] }';
    expect((await sandbox.runCode(code, {}, where)).value).toEqual([true, 'undefined']);
  });

  it('finds no process through the constructors of async and generator functions', async () => {
    const generator = await failure(
      sandbox.runCode('(function* () {}).constructor("yield process")().next()', {}, where),
    );
    expect(generator.message).toContain('process is not defined');
    reports.length = 0;
    const code = '(async () => {}).constructor("return process")().catch((e) => host.report(e.message)); 1';
    await sandbox.runCode(code, {}, where);
    expect(reports).toEqual(['process is not defined']);
  });

  it('fails a dynamic import()', async () => {
    reports.length = 0;
    const code =
      'import("node:fs").then(() => host.report("loaded"), (e) => host.report("failed: " + e.message)); 1';
    await sandbox.runCode(code, {}, where);
    expect(reports).toEqual(['failed: Not supported']);
    const error = await failure(sandbox.runCode('import("node:child_process"); 1', {}, where));
    expect(error.message).toBe('node "calc": a promise was rejected and nothing handled it: Not supported');
  });

  it('cannot set Error.prepareStackTrace to reach stack frames', async () => {
    const code = [
      'Error.prepareStackTrace = (error, frames) => frames.map((f) => f.getThis());',
      'try { host.echo(1)(); } catch (e) { stackType = typeof e.stack; }',
      'strictRefused = (() => { "use strict"; try { Error.prepareStackTrace = () => 1; return false } catch { return true } })();',
      'pinned = Error.prepareStackTrace === undefined',
    ].join('\n');
    expect((await sandbox.runCode(code, {}, where)).scope).toEqual({
      stackType: 'string',
      strictRefused: true,
      pinned: true,
    });
  });

  it('leaves no isolated-vm handle (a Reference, a Callback) reachable from the globals', async () => {
    // A walk over every object reachable by properties and prototypes from globalThis and from what the
    // exposed functions (synchronous and awaited) give back; any applySync/derefInto/copySync/copyInto
    // would be a host handle.
    const code = `{
      const seen = new Set(), queue = [globalThis, host.echo({ a: [1] }), later.echo({ b: [2] })];
      const handles = [];
      while (queue.length) {
        const value = queue.pop();
        if ((typeof value !== 'object' && typeof value !== 'function') || value === null || seen.has(value)) continue;
        seen.add(value);
        for (const key of Reflect.ownKeys(value)) {
          if (['applySync', 'derefInto', 'copySync', 'copyInto', 'applySyncPromise'].includes(key)) handles.push(String(key));
          const descriptor = Reflect.getOwnPropertyDescriptor(value, key);
          if (descriptor && 'value' in descriptor) queue.push(descriptor.value);
        }
        queue.push(Reflect.getPrototypeOf(value));
      }
      [seen.size > 500, handles]
    }`;
    expect((await sandbox.runCode(code, {}, where)).value).toEqual([true, []]);
  });

  it('keeps eval and new Function inside the sandbox', async () => {
    const code =
      '[eval("typeof process"), new Function("return typeof require")(), (0, eval)("typeof Buffer")]';
    expect((await sandbox.runCode(code, {}, where)).value).toEqual(['undefined', 'undefined', 'undefined']);
  });

  it('cannot replace the hooks that catch its errors', async () => {
    const code = '__sandboxFail = null; Object.freeze(globalThis);\nthrow new Error("still caught")';
    const error = await failure(sandbox.runCode(code, {}, where));
    expect(error.message).toBe('node "calc": Error: still caught (line 2)');
  });

  it('cannot close the wrapper around it with a stray brace', async () => {
    const code = '}\nthrow { get message() { for (;;); } }\n{';
    expect((await failure(sandbox.runCode(code, {}, where))).kind).toBe('syntax');
    const expression = '1) + (2';
    expect(await sandbox.evaluate(expression, {}, where)).toBe(3);
    expect((await failure(sandbox.evaluate('1)} catch (e) {} {(1', {}, where))).kind).toBe('syntax');
  });

  it('cannot reach the guest through the caller of a sloppy getter the guest reads', async () => {
    const code = [
      'out = {};',
      'Object.defineProperty(out, "caller", {',
      '  get: function () { return String(arguments.callee.caller) }, enumerable: true });',
    ].join('\n');
    expect((await sandbox.runCode(code, {}, where)).scope).toEqual({ out: { caller: 'null' } });
  });

  it('cannot reach the host through a getter the guest reads while copying back', async () => {
    const code = `out = { get sneaky() { return typeof process + "/" + typeof require } }`;
    expect((await sandbox.runCode(code, {}, where)).scope).toEqual({
      out: { sneaky: 'undefined/undefined' },
    });
  });

  it('cannot keep running after its evaluation: no timers, and pending promises go nowhere', async () => {
    reports.length = 0;
    await sandbox
      .runCode('new Promise(() => {}).then(() => host.report("late"))', {}, where)
      .catch(() => undefined);
    await sandbox.runCode('1', {}, where);
    expect(reports).toEqual([]);
  });

  /**
   * Routes to the host's `process` or `require`, each a statement that sets `found` if it gets one.
   * A route that throws has failed; one that finds something must find nothing of Node's.
   */
  const ROUTES = [
    'found = this.constructor.constructor("return process")()',
    'found = Function("return this")().process',
    'found = globalThis.process ?? globalThis.require',
    'found = (() => {}).constructor("return process")()',
    'found = host.echo.constructor("return process")()',
    'found = Object.getPrototypeOf(host.echo).constructor("return process")()',
    'found = Object.getPrototypeOf(host).constructor.constructor("return process")()',
    'found = host.echo({}).constructor.constructor("return process")()',
    'found = host.echo([]).constructor.constructor("return require")()',
    'found = later.echo.constructor("return process")()',
    'found = host.echo.call.call(host.echo.constructor, null, "return process")()',
    'found = Reflect.construct(Function, ["return process"])()',
    'found = [].constructor.constructor("return process")()',
    'found = "".sub.constructor("return process")()',
    'found = Intl.constructor.constructor("return process")()',
    'found = console.log.constructor("return process")()',
    'found = console.constructor.constructor("return process")()',
    'found = __sandboxCapture.constructor("return process")()',
    'found = __sandboxFail.constructor("return process")()',
    'found = Object.getOwnPropertyDescriptor(globalThis, "process")?.value',
    'found = eval("typeof process === \'undefined\' ? undefined : process")',
    'found = (0, eval)("this").process',
    'found = new Function("return globalThis")().require',
    'found = Object.getPrototypeOf(function* () {}).constructor("return process")().next().value',
    'class P extends Promise {} found = P.constructor("return process")()',
    'found = Symbol.constructor.constructor("return process")()',
    'try { host.echo(1)(); } catch (e) { found = e.constructor.constructor("return process")() }',
    'try { host.echo(() => 1); } catch (e) { found = e.constructor.constructor("return process")() }',
    'try { null.x } catch (e) { found = e.constructor.constructor("return process")() }',
    'Error.prepareStackTrace = (e, frames) => frames; try { host.echo(1)() } catch (e) { found = Array.isArray(e.stack) ? e.stack[0]?.getThis?.() : undefined }',
    'const o = {}; Error.captureStackTrace?.(o); found = typeof o.stack === "object" ? o.stack : undefined',
    'const f = function () { return f.caller }; found = f()?.constructor?.("return process")?.()',
    'host.echo({ get x() { found = arguments.callee.caller; return 1 } })',
    'host.echo({ toJSON() { found = arguments.callee.caller; return 1 } })',
    'host.report({ toString() { found = this.constructor.constructor("return process")(); return "" } })',
    'host.echo(new Proxy({}, { ownKeys(t) { found = this; return [] }, get(t, k) { found = k; return 1 } }))',
    'Object.prototype.__defineGetter__("trap", function () { found = this }); host.echo({}); delete Object.prototype.trap',
    'host.echo(JSON.parse(\'{"__proto__": {"polluted": true}}\'))',
    'found = later.echo({ a: 1 })?.constructor?.constructor("return process")()',
    'found = String(host.echo("x").constructor.constructor("return typeof require")())',
  ];

  it(`holds every one of ${ROUTES.length} routes to the host`, async () => {
    const escaped: string[] = [];
    for (const route of ROUTES) {
      // In a block, so the probe leaves no variables behind: only its verdict comes back.
      const probe = `{
        let found;
        try { ${route} } catch {}
        const nodeish = (v) => (typeof v === 'object' || typeof v === 'function') && v !== null &&
          (typeof v.pid === 'number' || typeof v.binding === 'function' || typeof v.mainModule !== 'undefined');
        nodeish(found) || found === 'function' ? 'escaped' : 'held';
      }`;
      const outcome = await sandbox.runCode(probe, {}, where).then(
        ({ value }) => value,
        (error: unknown) => `failed: ${String(error)}`,
      );
      if (outcome !== 'held') escaped.push(`${route} -> ${String(outcome)}`);
    }
    expect(escaped).toEqual([]);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.prototype).not.toHaveProperty('trap');
  });
});
