import { describe, expect, it } from 'vitest';
import { setVariable } from '../../src/engine/frames.js';
import { newState } from '../../src/engine/state.js';
import { renderTemplate } from '../../src/engine/template.js';
import { planInterjection, planTransition, resolveTarget } from '../../src/engine/transitions.js';
import { UserError } from '../../src/errors.js';
import { graphOf } from '../support/agents.js';

const graph = graphOf([
  {
    name: 'ask',
    action: 'chat',
    instruction: 'Ask $topic.',
    transitions: ['right', 'wrong'],
    transitionQuestion: 'Is the answer about $topic correct?',
    transitionChoices: ['no', 'yes'],
  },
  { name: 'right', action: 'chat', instruction: 'Praise.', transitions: ['cond.*'] },
  { name: 'wrong', action: 'chat', instruction: 'Correct.', transitions: ['u.n', 'right', 'quit'] },
  { name: 'cond.a', action: 'transition', booleanCondition: 'n < 2', transitions: ['return n'] },
  { name: 'cond.b', action: 'transition', booleanCondition: 'n < 5', transitions: ['return'] },
  { name: 'cond.c', action: 'transition', transitions: ['quit'] },
  { name: 'u.1', action: 'chat', instruction: 'First visit.', transitions: ['u.n'] },
  { name: 'u.2', action: 'chat', instruction: 'Second visit.', transitions: ['u.n'] },
  { name: 'help', action: 'chat', instruction: 'Help.', conditionInterjection: 'The user asks for help.' },
  {
    name: 'stop',
    action: 'chat_exact',
    instruction: 'Bye.',
    conditionInterjection: 'The user wants to stop.',
  },
]);
const node = (name: string) => graph.get(name)!;

describe('planning a transition', () => {
  it('goes straight to the only transition', () => {
    expect(planTransition(graph, node('right'), newState(graph))).toEqual({ kind: 'fixed', index: 0 });
  });

  it('asks a yes/no question with yes first, embedding variables in the question', () => {
    const state = newState(graph);
    setVariable(state, 'topic', 'halves');
    const plan = planTransition(graph, node('ask'), state);
    expect(plan).toMatchObject({
      kind: 'ask',
      order: [1, 0],
      question: { question: 'Is the answer about halves correct?', choices: ['yes', 'no'], kind: 'yesno' },
    });
  });

  it('asks a lettered question, answering with the transition name where a choice is missing', () => {
    const plan = planTransition(graph, node('wrong'), newState(graph));
    expect(plan).toMatchObject({
      kind: 'ask',
      order: [0, 1, 2],
      question: { choices: ['u.n', 'right', 'quit'], kind: 'letters' },
    });
  });

  it('refuses a node without transitions, naming it', () => {
    expect(() => planTransition(graph, node('help'), newState(graph))).toThrow(
      /node "help" has no transitions/,
    );
  });

  it('asks the interjection question with every condition and the default answer last', () => {
    const plan = planInterjection(graph, newState(graph));
    expect(plan?.targets).toEqual(['help', 'stop']);
    expect(plan?.question).toMatchObject({
      question: 'Which of the following is True?',
      choices: ['The user asks for help.', 'The user wants to stop.', 'None of the above.'],
      kind: 'letters',
    });
  });
});

describe('resolving a transition string', () => {
  it('offers the wildcard group in alphabetical order with their conditions, the last as else', () => {
    expect(resolveTarget(graph, newState(graph), node('right'), 'cond.*')).toEqual({
      kind: 'branches',
      members: [
        { name: 'cond.a', condition: 'n < 2' },
        { name: 'cond.b', condition: 'n < 5' },
        { name: 'cond.c' },
      ],
    });
  });

  it('picks name.1 on the first visit, name.2 on the second and repeats the last after that', () => {
    const state = newState(graph);
    expect(resolveTarget(graph, state, node('wrong'), 'u.n')).toEqual({ kind: 'node', name: 'u.1' });
    state.visits['u.1'] = 1;
    expect(resolveTarget(graph, state, node('wrong'), 'u.n')).toEqual({ kind: 'node', name: 'u.2' });
    state.visits['u.2'] = 1;
    expect(resolveTarget(graph, state, node('wrong'), 'u.n')).toEqual({ kind: 'node', name: 'u.2' });
  });

  it("re-parses a $var transition's value as a transition string", () => {
    const state = newState(graph);
    setVariable(state, 'next', 'cond.*');
    expect(resolveTarget(graph, state, node('ask'), '$next')).toMatchObject({ kind: 'branches' });
    setVariable(state, 'next', 'return result');
    expect(resolveTarget(graph, state, node('ask'), '$next')).toEqual({
      kind: 'return',
      expression: 'result',
    });
    setVariable(state, 'next', 'wrong');
    expect(resolveTarget(graph, state, node('ask'), '$next')).toEqual({ kind: 'node', name: 'wrong' });
  });

  it('embeds a variable inside a transition string', () => {
    const state = newState(graph);
    setVariable(state, 'visit', 2);
    expect(resolveTarget(graph, state, node('ask'), 'u.$visit')).toEqual({ kind: 'node', name: 'u.2' });
  });

  it('names the node and suggests the closest name for a transition to a missing node', () => {
    const error = catchError(() => resolveTarget(graph, newState(graph), node('ask'), 'rigth'));
    expect(error.message).toBe(
      'node "ask": transition "rigth" leads to "rigth", which is not a node of the graph',
    );
    expect(error.hint).toBe('did you mean "right"?');
  });

  it('names the node and the variable for an unknown $var', () => {
    expect(() => resolveTarget(graph, newState(graph), node('ask'), '$nowhere')).toThrow(
      'node "ask": transition uses $nowhere, but no variable "nowhere" is in scope',
    );
  });
});

describe('$var templates', () => {
  it('embeds strings as they are, numbers as written and objects as JSON', () => {
    const vars = { name: 'Ada', n: 3, list: [1, 2], flag: true };
    expect(
      renderTemplate('$name has $n items: $list ($flag)', vars, { node: 'x', field: 'instruction' }),
    ).toBe('Ada has 3 items: [1,2] (true)');
  });

  it('leaves escaped and non-identifier dollars alone', () => {
    expect(renderTemplate('costs \\$5 or $5', {}, { node: 'x', field: 'instruction' })).toBe(
      'costs $5 or $5',
    );
  });
});

function catchError(fn: () => unknown): UserError {
  try {
    fn();
  } catch (error) {
    if (error instanceof UserError) return error;
    throw error;
  }
  throw new Error('expected a UserError');
}
