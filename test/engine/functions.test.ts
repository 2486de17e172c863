import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Interpreter } from '../../src/engine/interpreter.js';
import { variablesInScope } from '../../src/engine/frames.js';
import type { AgentEvent } from '../../src/events.js';
import { EventBus } from '../../src/events.js';
import { lintGraph } from '../../src/aipl/lint.js';
import { fixture, graphOf, noModels, scriptedModels } from '../support/agents.js';

describe('graphs that compute without a model', () => {
  let fib: Interpreter;
  let sort: Interpreter;
  beforeAll(async () => {
    fib = await Interpreter.create({ graph: fixture('fibonacci'), models: noModels });
    sort = await Interpreter.create({ graph: fixture('merge-sort'), models: noModels });
  });
  afterAll(() => {
    fib.dispose();
    sort.dispose();
  });

  it('has fixtures the linter accepts', () => {
    for (const name of ['fibonacci', 'merge-sort', 'scopes']) {
      const errors = lintGraph(fixture(name).file).filter((f) => f.severity === 'error');
      expect(errors, name).toEqual([]);
    }
  });

  it('computes Fibonacci numbers recursively through wildcards and local functions', async () => {
    const values = [];
    for (const n of [1, 2, 3, 7, 12]) values.push((await fib.applyFn('fibonacci', [n])).value);
    expect(values).toEqual([0, 1, 1, 8, 89]);
  });

  it('returns the previous node output on a bare return and a variable on return x', async () => {
    const events = new EventBus();
    const seen: AgentEvent[] = [];
    events.on((e) => seen.push(e));
    const interpreter = await Interpreter.create({ graph: fixture('fibonacci'), models: noModels, events });
    try {
      expect((await interpreter.applyFn('fibonacci(n)', [4])).value).toBe(2);
    } finally {
      interpreter.dispose();
    }
    const returns = seen.filter((e) => e.type === 'transition' && e.kind === 'return');
    expect(returns.map((e) => (e.type === 'transition' ? e.from : ''))).toContain('fibonacci_conditional.a');
    expect(returns.map((e) => (e.type === 'transition' ? e.from : ''))).toContain('fibonacci_sum');
  });

  it('answers in a conversation after calling the function, then quits', async () => {
    const first = await fib.reply(undefined);
    expect(first).toMatchObject({ reply: 'fibonacci(10) = 34', ended: false });
    expect(first.state.stack).toHaveLength(1);
    const second = await fib.reply('thanks', first.state);
    expect(second.ended).toBe(true);
    await expect(fib.reply('hello?', second.state)).rejects.toThrow(/conversation has ended/);
  });

  it('sorts a list with merge sort through code nodes and recursive calls', async () => {
    const input = [5, 3, 9, 1, 4, 1, 8, 2, 7];
    const { value, state } = await sort.applyFn('merge_sort', [input]);
    expect(value).toEqual([1, 1, 2, 3, 4, 5, 7, 8, 9]);
    expect(state.stack).toHaveLength(1);
    expect((await sort.applyFn('merge_sort', [[]])).value).toEqual([]);
  });

  it('refuses a call with the wrong number of arguments', async () => {
    await expect(sort.applyFn('merge_sort', [[1], [2]])).rejects.toThrow(
      'merge_sort(list) takes 1 argument(s), got 2',
    );
    await expect(sort.applyFn('quicksort', [[1]])).rejects.toThrow(
      'the graph has no callable node quicksort(…)',
    );
  });
});

describe('function scopes', () => {
  it('keeps global writes, drops mixed writes and hides the caller from local functions', async () => {
    const interpreter = await Interpreter.create({ graph: fixture('scopes'), models: noModels });
    try {
      const { reply, state } = await interpreter.reply(undefined);
      expect(reply).toBe('done');
      const vars = variablesInScope(state);
      // function (mixed): reads the caller's x, but its writes vanish on return.
      expect(vars.after_mixed).toEqual({ x: 1, seen: 1, inner: 'gone' });
      // global_function: reads and keeps everything it wrote.
      expect(vars.after_global).toEqual({ x: 106, seen: 1, inner: 12 });
      // local_function: sees only its arguments.
      expect(vars.after_local).toEqual({ x: 106, seen: 'invisible', inner: 12 });
    } finally {
      interpreter.dispose();
    }
  });

  it("shows a mixed function the caller's turns but forgets its own, while a global function keeps them", async () => {
    const graph = graphOf([
      { name: 'hello', action: 'chat', instruction: 'Say hello.', transitions: ['call_mixed'] },
      { name: 'call_mixed', action: 'function', instruction: 'm = ponder()', transitions: ['call_global'] },
      {
        name: 'call_global',
        action: 'global_function',
        instruction: 'g = ponder()',
        transitions: ['call_local'],
      },
      { name: 'call_local', action: 'local_function', instruction: 'l = ponder()', transitions: ['end'] },
      { name: 'end', action: 'chat', instruction: 'Sum up.', transitions: ['end'] },
      { name: 'ponder()', action: 'thought', instruction: 'Ponder.', transitions: ['return'] },
    ]);
    // Each rule matches the end of the prompt: the instruction being answered.
    const models = scriptedModels({
      rules: [
        { role: 'chatbot', match: "/Say hello\\.\\nAgent's reply:$/", reply: 'Hello!' },
        // The mixed call comes first and consumes the user's reply; its turn then vanishes with its frame.
        {
          role: 'chatbot',
          match: "/User: hi\\n\\nInstruction for Agent: Ponder\\.\\nAgent's reply:$/",
          reply: 'Pondered once.',
        },
        // The global call still sees the caller's conversation.
        {
          role: 'chatbot',
          match: "/Hello![\\s\\S]*Ponder\\.\\nAgent's reply:$/",
          reply: 'Pondered globally.',
        },
        // The local call sees nothing but its own instruction.
        {
          role: 'chatbot',
          match: "/^Instruction for Agent: Ponder\\.\\nAgent's reply:$/",
          reply: 'Pondered alone.',
        },
        { role: 'chatbot', match: "/Sum up\\.\\nAgent's reply:$/", reply: 'Summed.' },
      ],
    });
    const interpreter = await Interpreter.create({ graph, models });
    try {
      const first = await interpreter.reply(undefined);
      const { state } = await interpreter.reply('hi', first.state);
      const vars = variablesInScope(state);
      expect(vars).toMatchObject({ m: 'Pondered once.', g: 'Pondered globally.', l: 'Pondered alone.' });
      // Only the global call's thought joined the root frame's turns.
      expect(state.stack[0]!.turns.map((t) => `${t.node}: ${t.output}`)).toEqual([
        'hello: Hello!',
        'ponder(): Pondered globally.',
        'end: Summed.',
      ]);
    } finally {
      interpreter.dispose();
    }
  });
});
