import { describe, expect, it } from 'vitest';
import { lintGraph } from '../../src/aipl/lint.js';
import { lintFlow } from '../../src/flow/lint.js';
import { fileOf } from '../support/agents.js';
import { flowOf } from '../support/flow.js';

const messages = (flow: Parameters<typeof lintFlow>[0]) =>
  lintFlow(flow).map((f) => `${f.severity} ${f.node ?? '(flow)'}: ${f.message}`);

describe('lintFlow', () => {
  it('finds nothing wrong with a sound flow', () => {
    const flow = flowOf(
      [
        { name: 'a', prompt: 'About $db.topic$.' },
        { name: 'b', prompt: 'More.', dependencies: ['a'], compose: '$out.a$\n$prompt$' },
      ],
      { inputs: { topic: {} } },
    );
    expect(lintFlow(flow)).toEqual([]);
  });

  it('names a cycle, a dependency that is no node, and a reference to a node that is not a dependency', () => {
    const flow = flowOf([
      { name: 'a', prompt: 'a', dependencies: ['c'] },
      { name: 'b', prompt: 'b', dependencies: ['a', 'plann'] },
      { name: 'c', prompt: 'c', dependencies: ['b'] },
      { name: 'plan', prompt: 'Use $out.a$.' },
    ]);
    expect(messages(flow)).toEqual([
      'error b: it depends on "plann", which is not a node; did you mean "plan"?',
      'error plan: its prompt uses $out.a$, but it does not depend on "a"',
      'error (flow): the dependencies form a cycle: a → b → c → a',
    ]);
  });

  it('reports code that does not parse, a schema that cannot be used, and a fallback never used', () => {
    const flow = flowOf([
      { name: 'a', prompt: 'a', afterQuery: { code: 'if (answer {' } },
      { name: 'b', prompt: 'b', afterQuery: { schema: { type: 'no-such-type' } } },
      { name: 'c', prompt: 'c', fallback: 'x' },
    ]);
    const found = messages(flow);
    expect(found[0]).toMatch(/^error a: its afterQuery code does not parse: SyntaxError/);
    expect(found[1]).toMatch(/^error b: its afterQuery schema cannot be used/);
    expect(found[2]).toMatch(/^warning c: it has a fallback but no afterQuery step/);
  });

  it('warns about a database key nothing provides, and a compose template without the prompt', () => {
    const flow = flowOf([{ name: 'a', prompt: 'Use $db.plan.steps$.', compose: 'Just this.' }]);
    expect(messages(flow)).toEqual([
      'warning a: its prompt uses $db.plan.steps$, but neither the database nor an input has "plan"',
      'warning a: its compose template leaves out $prompt$, so its own prompt is never asked',
    ]);
  });
});

describe('a flow node in a graph', () => {
  it('must name a flow file on its first line and give inputs as name = value', () => {
    const graph = fileOf([
      { name: 'ok', action: 'flow', instruction: 'x = plan.flow.json\ntask = $goal', transitions: ['bad'] },
      { name: 'bad', action: 'flow', instruction: 'plan.json', transitions: ['worse'] },
      { name: 'worse', action: 'flow', instruction: 'plan.flow.json\ntask: fly' },
    ]);
    const problems = lintGraph(graph)
      .filter((f) => f.severity === 'error')
      .map((f) => `${f.node}: ${f.message}`);
    expect(problems).toEqual([
      'bad: a flow node\'s first line names a flow file (NAME.flow.json), got "plan.json"',
      'worse: a flow node\'s input line must read "name = value", got "task: fly"',
    ]);
  });
});
