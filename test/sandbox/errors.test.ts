import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UserError } from '../../src/errors.js';
import { Sandbox } from '../../src/sandbox/index.js';
import { failure, where } from './helpers.js';

describe('errors of code run in the sandbox', () => {
  let sandbox: Sandbox;
  beforeAll(async () => {
    sandbox = await Sandbox.create();
  });
  afterAll(() => sandbox.dispose());

  it('reports a syntax error with its message, the node and the line', async () => {
    const error = await failure(sandbox.runCode('let a = 1;\nlet b = ;', {}, { node: 'parse' }));
    expect(error.kind).toBe('syntax');
    expect(error.node).toBe('parse');
    expect(error.line).toBe(2);
    expect(error.message).toBe(`node "parse": SyntaxError: Unexpected token ';' (line 2)`);
  });

  it('reports a static import as a syntax error', async () => {
    const error = await failure(sandbox.runCode('import fs from "node:fs"', {}, where));
    expect(error.kind).toBe('syntax');
    expect(error.message).toContain('import statement');
  });

  it('reports a thrown Error with its name, message and line', async () => {
    const error = await failure(
      sandbox.runCode('const a = 1;\n\nthrow new RangeError("too far")', {}, where),
    );
    expect(error.kind).toBe('runtime');
    expect(error.line).toBe(3);
    expect(error.message).toBe('node "calc": RangeError: too far (line 3)');
  });

  it('reports an error raised inside a function at the line it was raised', async () => {
    const code = 'function check(x) {\n  if (x > 1) throw new Error("x is " + x);\n}\ncheck(5)';
    const error = await failure(sandbox.runCode(code, {}, where));
    expect(error.message).toBe('node "calc": Error: x is 5 (line 2)');
  });

  it('reports a TypeError of the code itself', async () => {
    const error = await failure(sandbox.runCode('const user = null;\nuser.name', {}, where));
    expect(error.message).toBe(
      `node "calc": TypeError: Cannot read properties of null (reading 'name') (line 2)`,
    );
  });

  it('reports a thrown string or object by its value', async () => {
    expect((await failure(sandbox.runCode('throw "no answer"', {}, where))).message).toBe(
      'node "calc": the code threw no answer',
    );
    expect((await failure(sandbox.runCode('throw { code: 7 }', {}, where))).message).toBe(
      'node "calc": the code threw {"code":7}',
    );
  });

  it('lets the code catch its own errors', async () => {
    const result = await sandbox.runCode(
      'try { null.x } catch (e) { caught = e.constructor.name }',
      {},
      where,
    );
    expect(result.scope).toEqual({ caught: 'TypeError' });
  });

  it('reports a scope variable named like a read-only global', async () => {
    const error = await failure(sandbox.runCode('undefined', { undefined: 5 }, where));
    expect(error.message).toBe(
      'node "calc": TypeError: variable "undefined" cannot be defined: Cannot redefine property: undefined',
    );
  });

  it('reports a promise rejection nobody handled', async () => {
    const error = await failure(sandbox.runCode('Promise.reject(new Error("lost")); 1', {}, where));
    expect(error.kind).toBe('runtime');
    expect(error.message).toBe('node "calc": a promise was rejected and nothing handled it: lost');
  });

  it('is a UserError that exits 1 and says what to do', async () => {
    const error = await failure(sandbox.runCode('helper = function () {}', {}, where));
    expect(error).toBeInstanceOf(UserError);
    expect(error.exitCode).toBe(1);
    expect(error.hint).toMatch(/plain data/);
  });

  describe('values that cannot leave the sandbox', () => {
    it('names a variable holding a function', async () => {
      const error = await failure(sandbox.runCode('function helper() {}\nresult = helper()', {}, where));
      expect(error.kind).toBe('uncopyable');
      expect(error.message).toBe(
        'node "calc": variable "helper" holds a function, which cannot leave the sandbox',
      );
    });

    it('names the path to a function deep inside a variable', async () => {
      const error = await failure(sandbox.runCode('cfg = { handlers: [1, () => 2] }', {}, where));
      expect(error.message).toBe(
        'node "calc": variable "cfg" holds a function at cfg.handlers[1], which cannot leave the sandbox',
      );
    });

    it('names symbols, BigInts, Dates, Maps and class instances', async () => {
      const cases: [string, string][] = [
        ['v = Symbol("s")', 'a symbol'],
        ['v = 10n', 'a BigInt'],
        ['v = new Date(0)', 'a Date'],
        ['v = { m: new Map() }', 'a Map at v.m'],
        ['class Point {}; v = new Point()', 'a Point'],
      ];
      for (const [code, what] of cases) {
        const error = await failure(sandbox.runCode(`${code};\nv = v`, { v: 0 }, where));
        expect(error.message, code).toBe(
          `node "calc": variable "v" holds ${what}, which cannot leave the sandbox`,
        );
      }
    });

    it('names a cycle', async () => {
      const error = await failure(sandbox.runCode('loop = { name: "a" }; loop.self = loop', {}, where));
      expect(error.message).toBe(
        'node "calc": variable "loop" holds a reference to itself (a cycle) at loop.self, which cannot leave the sandbox',
      );
    });

    it('copies the same object reached twice without calling it a cycle', async () => {
      const result = await sandbox.runCode('const shared = [1]; pair = [shared, shared]', {}, where);
      expect(result.scope.pair).toEqual([[1], [1]]);
    });

    it('refuses data nested more than 1000 levels deep, cutting the path short', async () => {
      const code = 'let deep = {}; for (let i = 0; i < 5000; i++) deep = { deep }';
      const error = await failure(sandbox.runCode(code, {}, where));
      expect(error.kind).toBe('uncopyable');
      expect(error.message).toMatch(
        /^node "calc": variable "deep" holds data nested more than 1000 levels deep at deep\.deep\.deep.{60,}…, which/,
      );
    });

    it('names a completion value that is not plain data', async () => {
      const error = await failure(sandbox.runCode('new Promise(() => {})', {}, where));
      expect(error.message).toBe(
        `node "calc": the value of the code's last statement is a Promise, which cannot leave the sandbox`,
      );
    });

    it('names a scope variable the host passes that cannot be copied in', async () => {
      const error = await failure(sandbox.runCode('fine + callback', { fine: 1, callback: () => 1 }, where));
      expect(error.kind).toBe('uncopyable');
      expect(error.message).toBe(
        'node "calc": variable "callback" holds a function, which cannot be copied into the sandbox',
      );
    });

    it('passes a variable the code does not name back as it is, even one that cannot be copied in', async () => {
      const callback = () => 1;
      const result = await sandbox.runCode('fine + 1', { fine: 1, callback }, where);
      expect(result.scope.callback).toBe(callback);
      expect(result.value).toBe(2);
    });
  });
});
