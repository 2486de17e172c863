import { describe, expect, it } from 'vitest';
import { lintGraph } from '../../src/aipl/lint.js';
import { graphFromCsv, graphToCsv } from '../../src/graph/csv.js';
import { codeLanguage, usesPython } from '../../src/graph/language.js';
import { parseGraphObject } from '../../src/graph/load.js';
import type { GraphConfig, NodeSpecInput } from '../../src/graph/schema.js';
import { fileOf, graphOf } from '../support/agents.js';

const importCsv = (text: string) => graphFromCsv(text, { name: 'agent', source: 'agent.csv' });

/** Python code a JavaScript parser refuses, and a condition likewise. */
const PYTHON_CODE = 'xs = [3, 1, 2]\nfirst = xs[1:]\nprint(first)';
const PYTHON_CONDITION = 'len(xs) > 1 and not done';

describe('the code language of a graph and its nodes', () => {
  it('is the node’s own, else the graph’s, else JavaScript', () => {
    expect(codeLanguage({})).toBe('javascript');
    expect(codeLanguage({ language: 'python' })).toBe('python');
    expect(codeLanguage({ language: 'python' }, {})).toBe('python');
    expect(codeLanguage({ language: 'python' }, { language: 'javascript' })).toBe('javascript');
    expect(codeLanguage({}, { language: 'python' })).toBe('python');
  });

  it('is a field of the graph file and its schema, and nothing else', () => {
    const { file } = parseGraphObject(
      {
        config: { language: 'python' },
        nodes: [{ name: 'a', action: 'code', language: 'javascript', transitions: ['quit'] }],
      },
      'a.autogram.json',
    );
    expect(file.config.language).toBe('python');
    expect(file.nodes[0]!.language).toBe('javascript');
    expect(() =>
      parseGraphObject({ config: { language: 'ruby' }, nodes: [{ name: 'a', action: 'chat' }] }, 'b.json'),
    ).toThrow(/language/);
  });

  it('loads Python only for a graph with Python code, a condition, call arguments or a returned expression', () => {
    const chat: NodeSpecInput = { name: 'hi', action: 'chat', instruction: 'Say $x.', transitions: ['quit'] };
    const python = (nodes: NodeSpecInput[], config: Partial<GraphConfig> = { language: 'python' }) =>
      usesPython(graphOf(nodes, config));
    expect(python([chat])).toBe(false);
    expect(python([{ ...chat, transitions: ['return'] }])).toBe(false);
    expect(python([{ name: 'c', action: 'code', instruction: 'x = 1', transitions: ['quit'] }])).toBe(true);
    expect(python([{ ...chat, transitions: ['return x'] }])).toBe(true);
    expect(python([{ ...chat, name: 'p.a', booleanCondition: 'x > 1' }])).toBe(true);
    expect(
      python([
        { name: 'call', action: 'function', instruction: 'y = f(x)', transitions: ['quit'] },
        { name: 'f(a)', action: 'thought', instruction: 'About $a', transitions: ['return'] },
      ]),
    ).toBe(true);
    expect(
      python([
        { name: 'call', action: 'function', instruction: 'y = f()', transitions: ['quit'] },
        { name: 'f()', action: 'thought', instruction: 'Hi', transitions: ['return'] },
      ]),
    ).toBe(false);
    const code: NodeSpecInput = { name: 'c', action: 'code', instruction: 'x = 1', transitions: ['quit'] };
    expect(python([code], {})).toBe(false);
    expect(python([{ ...code, language: 'python' }], {})).toBe(true);
    expect(python([{ ...code, language: 'javascript' }])).toBe(false);
  });
});

describe('the load-time syntax check', () => {
  const nodes = (language?: 'python' | 'javascript'): NodeSpecInput[] => [
    { name: 'start1', action: 'code', instruction: PYTHON_CODE, transitions: ['p.*'], language },
    { name: 'p.a', action: 'chat', booleanCondition: PYTHON_CONDITION, transitions: ['quit'], language },
    { name: 'p.b', action: 'chat', transitions: ['quit'] },
  ];
  const syntax = (findings: { message: string }[]) =>
    findings.filter((f) => f.message.includes('not valid JavaScript')).map((f) => f.message);

  it('checks JavaScript, and leaves Python to be checked when it runs', () => {
    expect(syntax(lintGraph(fileOf(nodes())))).toHaveLength(2);
    expect(syntax(lintGraph(fileOf(nodes(), { language: 'python' })))).toEqual([]);
    expect(syntax(lintGraph(fileOf(nodes('python'))))).toEqual([]);
    expect(syntax(lintGraph(fileOf(nodes('javascript'), { language: 'python' })))).toHaveLength(2);
  });

  it('passes an AutoGRAMS spreadsheet whose code is Python', () => {
    const { file } = importCsv(
      `Name,Action,Instruction,Transitions,Boolean Condition\nstart1,python_function,"${PYTHON_CODE}",p.*,\np.a,chat,Hi,quit,${PYTHON_CONDITION}\np.b,chat,Bye,quit,\n`,
    );
    expect(syntax(lintGraph(file))).toEqual([]);
  });
});

describe('the language of an AutoGRAMS spreadsheet', () => {
  const sheet =
    'Name,Action,Instruction,Transitions\nstart1,python_function,x = 1,show\nshow,code,y = 2,quit\n';

  it('reads a spreadsheet as a Python graph, python_function and code rows both as code', () => {
    const { file } = importCsv(sheet);
    expect(file.config.language).toBe('python');
    expect(file.nodes.map((n) => n.action)).toEqual(['code', 'code']);
  });

  it('writes a Python graph’s code nodes as python_function, as AutoGRAMS reads them', () => {
    const { text, warnings } = graphToCsv(importCsv(sheet).file);
    expect(text).toBe(
      'Name,Action,Instruction,Transitions\nstart1,python_function,x = 1,show\nshow,python_function,y = 2,quit\n',
    );
    expect(warnings).toEqual([]);
    expect(importCsv(text).file).toEqual(importCsv(sheet).file);
  });

  it('writes a JavaScript graph’s code as it is, under our action code, and names the nodes to port', () => {
    const file = fileOf([
      { name: 'start1', action: 'code', instruction: 'xs.push(1)', transitions: ['p.*'] },
      { name: 'p.a', action: 'chat', booleanCondition: 'ok === true', transitions: ['quit'] },
      { name: 'p.b', action: 'chat', transitions: ['quit'] },
      { name: 'py', action: 'code', instruction: 'xs.append(1)', transitions: ['quit'], language: 'python' },
    ]);
    const { text, warnings } = graphToCsv(file);
    expect(
      text
        .split('\n')
        .slice(1, 5)
        .map((line) => line.split(',')[1]),
    ).toEqual(['code', 'chat', 'chat', 'python_function']);
    expect(warnings).toContainEqual(
      'a CSV file is read back as Python, AutoGRAMS\' language, but the code, conditions or call arguments of nodes "start1", "p.a" are JavaScript: they are written as they are; port them to Python, or use .autogram.json to keep them JavaScript',
    );
  });

  it('writes a JavaScript graph without code as it would a Python one: it reads back the same', () => {
    const file = fileOf(
      [{ name: 'hi', action: 'chat', instruction: 'Say hi.', transitions: ['quit'] }],
      importCsv(sheet).file.config,
    );
    const javascript = { ...file, config: { ...file.config, language: undefined } };
    expect(graphToCsv(javascript)).toEqual(graphToCsv(file));
    expect(graphToCsv(javascript).warnings).toEqual([]);
  });
});
