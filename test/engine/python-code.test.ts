/**
 * Graphs whose code is Python, run by the interpreter: spreadsheets (Python, as in AutoGRAMS), native
 * graphs that say `language: "python"` for the graph or a node, variables passing between the two
 * languages as JSON, and a self-referential spreadsheet growing its own graph with `self.add_node(…)`
 * as AutoGRAMS' examples/self_referential/self_referential.py does. The real Python runtime runs (built
 * in dist/), loaded once for the file.
 */
import { describe, expect, it } from 'vitest';
import { Interpreter } from '../../src/engine/interpreter.js';
import { pythonRuntime } from '../../src/sandbox/python/python-runtime.js';
import { converse, csvGraph, graphOf, noModels } from '../support/agents.js';

const LOAD_MS = 120_000;

describe('Python code in graphs', () => {
  // First in the file, before anything here loads the runtime.
  it('never loads the Python runtime for JavaScript code, nor for a spreadsheet without code', async () => {
    const javascript = graphOf([
      { name: 'start', action: 'code', instruction: 'x = [1, 2].map((n) => n * 2)', transitions: ['say'] },
      { name: 'say', action: 'chat_exact', instruction: 'x is $x', transitions: ['quit'] },
    ]);
    expect((await converse(javascript, { rules: [] }, [undefined])).said).toEqual(['x is [2,4]']);
    const spreadsheet = csvGraph('Name,Action,Instruction,Transitions\nstart,chat_exact,Hello.,quit\n');
    expect((await converse(spreadsheet, { rules: [] }, [undefined])).said).toEqual(['Hello.']);
    expect(pythonRuntime().starts).toBe(0);
  });

  it(
    "runs a spreadsheet's code, conditions and call arguments as Python, embedding values as str() shows them",
    async () => {
      const graph = csvGraph(`Name,Action,Instruction,Transitions,Boolean Condition
start,python_function,"numbers = [19, 8, -2, 14.5]",flag
flag,python_function,every = all(n > -5 for n in numbers),sort
sort,local_function,ordered = sort_list($numbers),pick.*
sort_list(items),python_function,sorted(items),return
pick.a,chat_exact,Sorted: $ordered (all above -5: $every),quit,"len(ordered) > 3 and all(isinstance(n, (int, float)) for n in ordered)"
pick.b,chat_exact,Too short.,quit
`);
      const { said } = await converse(graph, { rules: [] }, [undefined]);
      expect(said).toEqual(['Sorted: [-2, 8, 14.5, 19] (all above -5: True)']);
    },
    LOAD_MS,
  );

  it('passes variables between Python and JavaScript nodes of one graph as JSON values', async () => {
    const graph = graphOf(
      [
        { name: 'start', action: 'code', instruction: "scores = {'ann': 3, 'bob': 5}", transitions: ['js'] },
        {
          name: 'js',
          action: 'code',
          language: 'javascript',
          instruction: 'best = Object.entries(scores).sort((a, b) => b[1] - a[1])[0][0]',
          transitions: ['top'],
        },
        { name: 'top', action: 'code', instruction: 'top = scores[best]', transitions: ['say'] },
        { name: 'say', action: 'chat_exact', instruction: '$best leads with $top', transitions: ['quit'] },
      ],
      { language: 'python' },
    );
    const { said, state } = await converse(graph, { rules: [] }, [undefined]);
    expect(said).toEqual(['bob leads with 5']);
    expect(state.stack[0]!.variables).toMatchObject({ scores: { ann: 3, bob: 5 }, best: 'bob', top: 5 });
  });

  it("evaluates each condition in its own node's language when a code node of the other leads to them", async () => {
    const graph = graphOf([
      { name: 'start', action: 'code', instruction: 'items = [3, 1, 2]', transitions: ['check.*'] },
      {
        name: 'check.a',
        action: 'chat_exact',
        language: 'python',
        booleanCondition: 'len(items) > 2',
        instruction: 'Many.',
        transitions: ['quit'],
      },
      { name: 'check.b', action: 'chat_exact', instruction: 'Few.', transitions: ['quit'] },
    ]);
    const { said } = await converse(graph, { rules: [] }, [undefined]);
    expect(said).toEqual(['Many.']);
  });

  it("decides a Python condition by Python's truth: an empty list or dict does not hold", async () => {
    const graph = csvGraph(`Name,Action,Instruction,Transitions,Boolean Condition
start,python_function,"found = []",pick.*
pick.a,chat_exact,Found some.,quit,found
pick.b,chat_exact,Found none.,quit
`);
    expect((await converse(graph, { rules: [] }, [undefined])).said).toEqual(['Found none.']);
  });

  it('stops at a value JSON cannot hold, naming the node and the variable', async () => {
    const graph = graphOf(
      [{ name: 'start', action: 'code', instruction: 'seen = {1, 2, 3}', transitions: ['quit'] }],
      { language: 'python' },
    );
    const agent = await Interpreter.create({ graph, models: noModels });
    try {
      const error = await agent.reply(undefined).then(
        () => undefined,
        (reason: unknown) => reason,
      );
      expect(error).toBeInstanceOf(Error);
      expect((error as Error).message).toBe(
        'node "start": variable "seen" holds a set, which JSON cannot hold',
      );
    } finally {
      agent.dispose();
    }
  });

  it('lets a self-referential spreadsheet add a node with self.add_node(…) and go to it at once', async () => {
    const graph = csvGraph(`Name,Action,Instruction,Transitions
start,function,next_node = add_new_node('joke'),$next_node
add_new_node(topic),python_function,"self.add_node(action='chat_exact', name='tell_' + topic, instruction='Here is a ' + topic + '.', transitions=['quit'])",return
`);
    const agent = await Interpreter.create({ graph, models: noModels, selfReferential: true });
    try {
      const { reply } = await agent.reply(undefined);
      expect(reply).toBe('Here is a joke.');
      expect(agent.graph.get('tell_joke')?.action).toBe('chat_exact');
    } finally {
      agent.dispose();
    }
  });

  it("sends what Python prints where console.log's lines go: code.log events naming the node", async () => {
    const graph = csvGraph(`Name,Action,Instruction,Transitions
start,python_function,"print('checking', [1, 2])",say
say,chat_exact,Done.,quit
`);
    const { events } = await converse(graph, { rules: [] }, [undefined]);
    expect(events.filter((event) => event.type === 'code.log')).toEqual([
      { type: 'code.log', node: 'start', text: 'checking [1, 2]' },
    ]);
  });
});
