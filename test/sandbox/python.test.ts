/**
 * The Python sandbox as code nodes use it: Python statements and expressions over JSON variables, what
 * comes back, the errors a user reads, host namespaces, and limits. It runs the real runtime (Pyodide
 * in its child process, from the build in dist/), loaded once for the whole file.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PythonSandbox } from '../../src/sandbox/index.js';
import { PythonRuntime, pythonRuntime } from '../../src/sandbox/python/python-runtime.js';
import { failure, where } from './helpers.js';

// The first evaluation loads the runtime: seconds on a busy machine.
const LOAD_MS = 120_000;

describe('Python code nodes', () => {
  let python: PythonSandbox;
  const added: unknown[] = [];
  beforeAll(async () => {
    python = PythonSandbox.create({ timeoutMs: 3000 });
    python.expose('self', {
      addNode: (fields: { name: string }) => {
        added.push(fields);
        return fields.name;
      },
      nodes: () => [{ name: 'start', action: 'chat' }],
      refuse: () => {
        throw new Error('node "x" already exists');
      },
    });
    python.exposeAsync('memory', { search: async (query: string) => [`found ${query}`] });
    await python.evaluate('1', {}, where);
  }, LOAD_MS);
  afterAll(() => python.dispose());

  it("gives the value of an assignment and AutoGRAMS' builtins and modules (len, math, list slicing)", async () => {
    const result = await python.runCode(
      'n = math.floor(len(list1) / 2)',
      { list1: [8, 19, -2, 14.5] },
      where,
    );
    expect(result.value).toBe(2);
    expect(result.changed).toEqual({ n: 2 });
    expect((await python.runCode('list1[-n:]', { list1: [8, 19, -2, 14.5], n: 2 }, where)).value).toEqual([
      -2, 14.5,
    ]);
  });

  it('sends back changes made in place, new variables, and nothing of what stayed the same', async () => {
    const result = await python.runCode(
      'list.append(merged, 3)\ntotal = sum(merged)',
      { merged: [1, 2], untouched: { a: [1] } },
      where,
    );
    expect(result.changed).toEqual({ merged: [1, 2, 3], total: 6 });
    expect(result.scope).toEqual({ merged: [1, 2, 3], untouched: { a: [1] }, total: 6 });
  });

  it('runs statements, functions and imports; the helpers it defines stay behind', async () => {
    const code = [
      'import statistics',
      'def double(x):',
      '    return 2 * x',
      'values = [double(v) for v in range(4)]',
      'statistics.mean(values)',
    ].join('\n');
    const result = await python.runCode(code, {}, where);
    expect(result.value).toBe(3);
    expect(result.changed).toEqual({ values: [0, 2, 4, 6] });
  });

  it('evaluates conditions and call arguments as Python expressions', async () => {
    expect(await python.evaluate('len1 == 1 and not done', { len1: 1, done: false }, where)).toBe(true);
    expect(await python.evaluate('[x * 2 for x in items]', { items: [1, 2] }, where)).toEqual([2, 4]);
    expect(await python.evaluate("{'k': None, 'ok': True}", {}, where)).toEqual({ k: null, ok: true });
  });

  it("judges a condition by Python's truth, where an empty list, dict or string is false", async () => {
    const scope = { none: [], empty: {}, blank: '', some: [0], zero: 0.0 };
    const holding = await Promise.all(Object.keys(scope).map((name) => python.holds(name, scope, where)));
    expect(holding).toEqual([false, false, false, true, false]);
  });

  it('collects what print writes, as console.log is collected', async () => {
    const result = await python.runCode('print("Incorrect input")\nprint(1, [2])', {}, where);
    expect(result.logs).toEqual(['Incorrect input', '1 [2]']);
  });

  it('lends host namespaces, with snake_case names and keyword arguments made one object', async () => {
    const code =
      'name = self.add_node(action="chat", name="joke", transitions=["dynamic_node"], transition_question="q")';
    const result = await python.runCode(code, {}, where);
    expect(result.changed).toEqual({ name: 'joke' });
    expect(added.at(-1)).toEqual({
      action: 'chat',
      name: 'joke',
      transitions: ['dynamic_node'],
      transitionQuestion: 'q',
    });
    expect((await python.runCode('found = memory.search("tea")', {}, where)).changed).toEqual({
      found: ['found tea'],
    });
    expect((await python.evaluate('self.nodes()[0]["name"]', {}, where)) as string).toBe('start');
  });

  it('raises a host refusal inside Python, where the code may catch it', async () => {
    const code = 'try:\n    self.refuse()\nexcept Exception as error:\n    said = str(error)';
    expect((await python.runCode(code, {}, where)).changed).toEqual({ said: 'node "x" already exists' });
    const error = await failure(python.runCode('self.missing()', {}, where));
    expect(error.message).toMatch(/self has no function 'missing'; it has: addNode, nodes, refuse/);
  });

  it('names the node, the Python error and its line', async () => {
    const error = await failure(python.runCode('a = 1\nb = c + 1', {}, where));
    expect(error.kind).toBe('runtime');
    expect(error.message).toBe(`node "calc": NameError: name 'c' is not defined (line 2)`);
    const syntax = await failure(python.runCode('x = = 1', {}, where));
    expect(syntax.kind).toBe('syntax');
    expect(syntax.message).toBe('node "calc": SyntaxError: invalid syntax (line 1)');
  });

  it('refuses a value JSON cannot hold, naming its variable', async () => {
    const error = await failure(python.runCode('seen = {1, 2}', {}, where));
    expect(error.kind).toBe('uncopyable');
    expect(error.message).toBe('node "calc": variable "seen" holds a set, which JSON cannot hold');
    expect(error.hint).toMatch(/list\(a_set\)/);
    const passedIn = await failure(python.runCode('x = big', { big: 10n, other: 10n }, where));
    expect(passedIn.message).toMatch(/variable "big" holds a value JSON cannot hold/);
  });

  it(
    'stops a loop that never ends at the time limit, and the next evaluation works',
    async () => {
      const error = await failure(python.runCode('while True:\n    pass', {}, where));
      expect(error.kind).toBe('timeout');
      expect(error.message).toMatch(/code ran longer than 3000 ms/);
      expect(await python.evaluate('6 * 7', {}, where)).toBe(42);
    },
    LOAD_MS,
  );

  it('refuses memory past the limit with a memory error, and the runtime stays usable', async () => {
    const error = await failure(python.runCode('block = bytearray(600 * 1024 * 1024)', {}, where));
    expect(error.kind).toBe('memory');
    expect(await python.evaluate('sum(range(10))', {}, where)).toBe(45);
  });

  it(
    "keeps what code leaves in Python's own state to its runtime: another runtime (a server's other owner) never sees it",
    async () => {
      await python.runCode("import builtins\nbuiltins.planted = 'here'", {}, where);
      expect(await python.evaluate('planted', {}, where)).toBe('here');
      const runtime = new PythonRuntime();
      const owner = PythonSandbox.create({}, runtime);
      try {
        expect(await owner.evaluate("'planted' in dir(__import__('builtins'))", {}, where)).toBe(false);
      } finally {
        owner.dispose();
        runtime.stop();
      }
    },
    LOAD_MS,
  );

  it('loads the runtime once for every Python sandbox of the process', async () => {
    const starts = pythonRuntime().starts;
    const other = PythonSandbox.create();
    expect(await other.evaluate('"again"', {}, where)).toBe('again');
    expect(pythonRuntime().starts).toBe(starts);
    other.dispose();
  });
});
