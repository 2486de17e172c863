import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { autogramsConfig, graphFromCsv, graphToCsv } from '../../src/graph/csv.js';
import { lintGraph } from '../../src/aipl/lint.js';
import { graphFileSchema } from '../../src/graph/schema.js';
import { startNodeOf } from '../../src/graph/structure.js';

const fixture = (name: string): string =>
  readFileSync(new URL(`../fixtures/graphs/${name}`, import.meta.url), 'utf8');

function importCsv(text: string, name = 'agent') {
  return graphFromCsv(text, { name, source: `${name}.csv` });
}

describe('AutoGRAMS spreadsheet import', () => {
  it('imports the simple example with its yes/no branch', () => {
    const { file, warnings } = importCsv(fixture('simple_example.csv'), 'simple_example');
    expect(file.nodes).toHaveLength(4);
    expect(file.name).toBe('simple_example');
    const ask = file.nodes[0]!;
    expect(ask).toMatchObject({
      name: 'ask_question',
      action: 'chat_exact',
      transitions: ['tell_about_ai', 'ask_user_preference'],
      transitionQuestion: 'Does the user want to talk about ai?',
      transitionChoices: ['yes', 'no'],
    });
    expect(warnings).toEqual([]);
    expect(lintGraph(file)).toEqual([]);
  });

  it('imports the fraction tutor with choices and user instructions in the right fields', () => {
    const { file } = importCsv(fixture('fraction_agent.csv'), 'fraction_agent');
    expect(file.nodes).toHaveLength(23);
    const m3c = file.nodes.find((n) => n.name === 'm3c')!;
    expect(m3c.transitions).toEqual(['m4', 'm3c', 'm3b', 'm3i', 'm3e']);
    expect(m3c.transitionQuestion).toBe('Which of the following is true?');
    expect(m3c.transitionChoices).toHaveLength(5);
    expect(m3c.transitionChoices[4]).toBe('The user said they want to see the answer');
    expect(m3c.userInstructions).toEqual([
      'give the correct answer',
      'give another wrong answer',
      'ask a question',
      "say you'd like to try again",
      "say you'd like to see the answer",
    ]);
    const i3 = file.nodes.find((n) => n.name === 'i3')!;
    expect(i3.transitions).toEqual(['u.n', 'i3b']);
    expect(file.nodes.find((n) => n.name === 'start1')).toMatchObject({
      action: 'set_prompt',
      transitions: ['start2'],
    });
    expect(startNodeOf(file)).toBe('start1');
  });

  it('validates the fraction tutor without errors', () => {
    const { file } = importCsv(fixture('fraction_agent.csv'));
    expect(lintGraph(file).filter((f) => f.severity === 'error')).toEqual([]);
  });

  it('reads every column of the fraction tutor without a warning: AutoGRAMS uses or ignores each one', () => {
    const { warnings } = importCsv(fixture('fraction_agent.csv'), 'fraction_agent');
    expect(warnings).toEqual([]);
  });

  it('warns about columns that are not AutoGRAMS columns, those with values apart, so none is dropped silently', () => {
    const csv = 'Name,Action,Instruction,Transitions,Priority,Owner\na,chat,Hi,a,high,\n';
    const { warnings } = importCsv(csv);
    expect(warnings).toEqual([
      'agent.csv: these columns are not AutoGRAMS columns, so their values were ignored: Priority',
      'agent.csv: these empty columns are not AutoGRAMS columns: Owner',
    ]);
  });

  it('reads list and number columns: weight lists, required revisits, probabilities and context', () => {
    const csv =
      'Name,Action,Transitions,Prerequisite States,Up Weight States,Transition Probs,Transition Context,Probability Interjection,Condition Interjection\n' +
      'a,chat,"a, b","x, y",z,"0.75, 0.25",2,0.5,The user is lost\n';
    expect(importCsv(csv).file.nodes[0]).toMatchObject({
      prerequisiteNodes: ['x', 'y'],
      upWeightNodes: ['z'],
      transitionProbs: [0.75, 0.25],
      transitionContext: 2,
      probabilityInterjection: 0.5,
    });
  });

  it('names the line, node and field of a number column that holds text', () => {
    const csv = 'Name,Action,Transition Context\na,chat,two\n';
    expect(() => importCsv(csv)).toThrow(/agent\.csv line 2 \(node a\): transitionContext/);
  });

  it('matches headers regardless of case, spaces and underscores', () => {
    const csv =
      'NAME,action,transition_question,Transition   Choice A,TRANSITION_CHOICE_B,Transitions\n' +
      'a,chat,Go on?,yes,no,"a, b"\nb,chat,,,,a\n';
    const { file } = importCsv(csv);
    expect(file.nodes[0]).toMatchObject({ transitions: ['a', 'b'], transitionChoices: ['yes', 'no'] });
  });

  it('reads python_function as a code node', () => {
    const { file } = importCsv('Name,Action,Instruction,Transitions\na,python_function,x = 1,quit\n');
    expect(file.nodes[0]!.action).toBe('code');
  });

  it('names the line and node of an unknown action', () => {
    const csv = 'Name,Action,Instruction\nfirst,chat,Hi\n\nsecond,chatt,"two\nlines"\n';
    expect(() => importCsv(csv)).toThrow(
      /agent\.csv line 4 \(node second\): action: invalid value "chatt"; expected one of chat, chat_exact/,
    );
  });

  it('refuses a spreadsheet without a Name column', () => {
    expect(() => importCsv('Action,Instruction\nchat,Hi\n')).toThrow(/no "Name" column/);
  });
});

describe('AutoGRAMS spreadsheet export', () => {
  it('keeps a graph equal through import, export and import', () => {
    for (const name of ['simple_example.csv', 'fraction_agent.csv']) {
      const first = importCsv(fixture(name)).file;
      const second = importCsv(graphToCsv(first).text).file;
      expect(second).toEqual(first);
    }
  });

  it('round-trips every node field a spreadsheet holds', () => {
    const file = graphFileSchema.parse({
      name: 'agent',
      nodes: [
        {
          name: 'ask',
          action: 'chat',
          instruction: 'answer = Ask "why?", then wait\nfor the reply',
          transitions: ['check.*', 'summarize(text)', 'return answer'],
          transitionQuestion: 'What now?',
          transitionChoices: ['a', 'b', 'c'],
          userInstructions: ['say a', '', 'say c'],
          category: 'intro',
          notes: 'first',
          replyStart: 'Tutor:',
          instructionTemplate: '<instruction>',
          transitionContext: 2,
          questionPrompt: 'Read the reply closely.',
          conversationScope: 'intro',
          transitionProbs: [0.5, 0.25, 0.25],
        },
        { name: 'check.a', action: 'transition', booleanCondition: 'x > 1', transitions: ['ask'] },
        {
          name: 'check.b',
          action: 'transition',
          conditionInterjection: 'The user is rude',
          exampleInterjection: 'User: you are useless',
          userInterjection: 'be rude',
          probabilityInterjection: 0.2,
          prerequisiteNodes: ['ask'],
          blockingNodes: ['check.a'],
          upWeightNodes: ['ask', 'check.a'],
          downWeightNodes: ['check.b'],
          transitions: ['ask'],
        },
        { name: 'summarize(text)', action: 'function', instruction: 'x = f()', requiredRevisit: ['ask'] },
      ],
      config: autogramsConfig(),
    });
    expect(importCsv(graphToCsv(file).text).file).toEqual(file);
  });

  it('writes AutoGRAMS headers', () => {
    const { file } = importCsv(fixture('simple_example.csv'));
    const header = graphToCsv(file).text.split('\n')[0];
    expect(header).toBe(
      'Name,Action,Instruction,Transitions,Transition Question,Transition Choice A,Transition Choice B',
    );
  });

  it('warns that a spreadsheet cannot hold a config other than the AutoGRAMS defaults it is read back with', () => {
    const file = graphFileSchema.parse({
      config: { agentName: 'Tutor' },
      nodes: [{ name: 'a', action: 'chat' }],
    });
    expect(graphToCsv(file).warnings[0]).toMatch(/config .* not saved/);
    expect(graphToCsv({ ...file, config: autogramsConfig() }).warnings).toEqual([]);
  });
});
