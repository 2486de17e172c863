import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_SANDBOX_LIMITS } from '../../src/sandbox/index.js';
import { executeJavascript, MAX_JAVASCRIPT_OUTPUT_CHARS } from '../../tools/execute-javascript.js';
import { SandboxCodeRunner } from '../../tools/sandbox-code.js';

describe('execute_javascript in the sandbox', () => {
  let runner: SandboxCodeRunner;
  beforeAll(async () => {
    runner = await SandboxCodeRunner.create();
  });
  afterAll(() => runner.dispose());

  const evaluate = async (code: string): Promise<string> =>
    (await executeJavascript.run({ code }, { code: runner, signal: new AbortController().signal })).output;

  /** The message the runner fails with, and a check that the sandbox still works after it. */
  const failure = async (code: string): Promise<string> => {
    const error = await runner.evaluate(code).then(
      () => expect.fail('the code should have failed'),
      (error: unknown) => error as Error,
    );
    expect(await evaluate('1 + 1')).toBe('Result: 2');
    return error.message;
  };

  it('returns the console output, then the value of the last statement', async () => {
    expect(await evaluate('console.log("a", 1);\nconsole.log({ b: 2 });\n[1, 2].map((x) => x * 2)')).toBe(
      'a 1\n{"b":2}\nResult: [2,4]',
    );
  });

  it('gives strings as they are, and undefined for code whose last statement has no value', async () => {
    expect(await evaluate('"line 1\\nline 2"')).toBe('Result: line 1\nline 2');
    expect(await evaluate('const x = 1;')).toBe('Result: undefined');
  });

  it('lets the code declare top-level functions, classes and dates without returning them', async () => {
    const code =
      'function fib(n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }\n' +
      'class Box { constructor(v) { this.v = v; } }\nvar when = new Date(0);\nfib(10) + new Box(1).v';
    expect(await evaluate(code)).toBe('Result: 56');
  });

  it('starts every call afresh', async () => {
    await evaluate('var counter = 1; globalThis.leftover = 2;');
    expect(await evaluate('[typeof counter, typeof leftover]')).toBe('Result: ["undefined","undefined"]');
  });

  it('lends nothing of the host: no process, require, fetch, module or timers', async () => {
    expect(
      await evaluate(
        '[typeof process, typeof require, typeof fetch, typeof module, typeof setTimeout, typeof Buffer]',
      ),
    ).toBe(`Result: ${JSON.stringify(Array(6).fill('undefined'))}`);
    expect(await failure('require("node:fs").readFileSync("/etc/passwd", "utf8")')).toBe(
      'execute_javascript: ReferenceError: require is not defined (line 1)',
    );
    expect(await failure('import("node:fs")')).toMatch(/^execute_javascript: a promise was rejected/);
  });

  it('stops a loop that never ends at the time limit', async () => {
    expect(await failure('let i = 0;\nwhile (true) i++;')).toBe(
      `execute_javascript: the code ran longer than ${DEFAULT_SANDBOX_LIMITS.timeoutMs} ms and was stopped; ` +
        'look for a loop that never ends, or do less in one call',
    );
  });

  it('stops code that allocates without end at the memory limit', async () => {
    const message = await failure('const all = [];\nwhile (true) all.push(new Array(1e6).fill(1.5));');
    expect(message).toContain(`used more than ${DEFAULT_SANDBOX_LIMITS.memoryMb} MB of memory`);
  });

  it('reports a syntax error with its line', async () => {
    expect(await failure('let a = 1;\nlet b = ;')).toBe(
      "execute_javascript: SyntaxError: Unexpected token ';' (line 2)",
    );
  });

  it('reports a thrown error with its line and what was printed before, without a stack', async () => {
    const message = await failure(
      'console.log("step 1");\nfunction check(x) {\n  if (x > 1) throw new RangeError("too far");\n}\ncheck(5)',
    );
    expect(message).toBe(
      'execute_javascript: RangeError: too far (line 3)\nConsole output before the error:\nstep 1',
    );
  });

  it('asks for plain data when the value cannot leave the sandbox', async () => {
    const message = await failure('(function helper() {})');
    expect(message).toContain("the value of the code's last statement is a function");
    expect(message).toContain('JSON.stringify(value)');
  });

  it('cuts long output, keeping the result and saying how much is missing', async () => {
    const long = await evaluate('"x".repeat(50000)');
    expect(long.length).toBeLessThanOrEqual(MAX_JAVASCRIPT_OUTPUT_CHARS);
    expect(long).toMatch(/\[… \d+ more characters of the result cut\]$/);
    const chatty = await evaluate(
      'for (let i = 0; i < 1000; i++) console.log("line " + i + " ".repeat(40));\n42',
    );
    expect(chatty.length).toBeLessThanOrEqual(MAX_JAVASCRIPT_OUTPUT_CHARS);
    expect(chatty).toMatch(/^line 0 /);
    expect(chatty).toMatch(/more characters of console output cut\]\nResult: 42$/);
  });

  it('is declared for the model as a compute command that needs the code runner', () => {
    expect(executeJavascript).toMatchObject({
      name: 'execute_javascript',
      effect: 'compute',
      needs: ['code'],
    });
    expect(executeJavascript.description).toMatch(
      /JavaScript.*isolated sandbox.*no files, network, environment/,
    );
    expect(executeJavascript.description).toContain('value of the last statement');
    expect(executeJavascript.args.shape.code.description).toBe('full_code_string');
  });
});
