import { describe, expect, it } from 'vitest';
import { lintGraph } from '../../src/aipl/lint.js';
import type { Finding } from '../../src/graph/lint.js';
import { closestName } from '../../src/graph/names.js';
import type { GraphConfig, NodeSpecInput } from '../../src/graph/schema.js';
import { startNodeOf } from '../../src/graph/structure.js';
import { fileOf } from '../support/agents.js';

function lint(nodes: NodeSpecInput[], config: Partial<GraphConfig> = {}): Finding[] {
  return lintGraph(fileOf(nodes, config));
}

/** A yes/no question for a node whose transitions are [stay, leave]. */
const doneChoices = { transitionQuestion: 'Is the user done?', transitionChoices: ['no', 'yes'] };
const quitChoices = { transitionQuestion: 'Another question?', transitionChoices: ['yes', 'no'] };

const errors = (findings: Finding[]) => findings.filter((f) => f.severity === 'error');
const warnings = (findings: Finding[]) => findings.filter((f) => f.severity === 'warning');

describe('lintGraph', () => {
  it('finds nothing wrong with a small well-formed chat loop', () => {
    expect(
      lint([{ name: 'hello', action: 'chat', instruction: 'Greet the user', transitions: ['hello'] }]),
    ).toEqual([]);
  });

  it('reports a transition to a missing node by name, suggesting the closest one', () => {
    const findings = lint([
      { name: 'ask', action: 'chat', transitions: ['anser'] },
      { name: 'answer', action: 'chat', transitions: ['ask'] },
    ]);
    expect(errors(findings)).toEqual([
      {
        severity: 'error',
        node: 'ask',
        message: 'transition to missing node "anser"',
        hint: 'did you mean "answer"?',
      },
    ]);
  });

  it('reports duplicate node names once', () => {
    const findings = lint([
      { name: 'a', action: 'chat', transitions: ['a'] },
      { name: 'a', action: 'chat', transitions: ['a'] },
      { name: 'a', action: 'chat', transitions: ['a'] },
    ]);
    expect(errors(findings).map((f) => f.message)).toEqual(['duplicate node name "a"']);
  });

  it('reports node names that transitions could never name', () => {
    const findings = lint([
      { name: 'a', action: 'chat', transitions: ['a'] },
      { name: 'quit', action: 'chat' },
      { name: 'x,y', action: 'chat' },
    ]);
    expect(errors(findings).map((f) => f.node)).toEqual(['quit', 'x,y']);
  });

  it('refuses control characters in node names, naming the character', () => {
    const findings = lint([
      { name: 'a', action: 'chat', transitions: ['a\u0000b'] },
      { name: 'a\u0000b', action: 'chat', transitions: ['a'] },
      { name: 'line\nbreak', action: 'chat', transitions: ['a'] },
      { name: 'tab\there', action: 'chat', transitions: ['a'] },
      { name: 'c1\u0085', action: 'chat', transitions: ['a'] },
    ]);
    expect(errors(findings)).toEqual([
      {
        severity: 'error',
        node: 'a\u0000b',
        message:
          'invalid node name: "a\\u0000b" contains the control character U+0000; names are printable text',
      },
      expect.objectContaining({ node: 'line\nbreak', message: expect.stringContaining('U+000A') }),
      expect.objectContaining({ node: 'tab\there', message: expect.stringContaining('U+0009') }),
      expect.objectContaining({ node: 'c1\u0085', message: expect.stringContaining('U+0085') }),
    ]);
  });

  it('accepts names in any script, emoji and symbols included', () => {
    const names = ['café', 'über_schritt', '質問', 'step→next', 'wave 👋', 'a\u00a0b'];
    const findings = lint(
      names.map((name, i) => ({ name, action: 'chat', transitions: [names[(i + 1) % 6]!] })),
    );
    expect(errors(findings)).toEqual([]);
  });

  it('reports a start node that does not exist', () => {
    const findings = lint([{ name: 'a', action: 'chat', transitions: ['a'] }], { startNode: 'strat' });
    expect(errors(findings)).toEqual([
      expect.objectContaining({ message: 'the start node "strat" (config.startNode) does not exist' }),
    ]);
  });

  it('needs a transition question and one choice per transition when there are several transitions', () => {
    const findings = lint([
      { name: 'a', action: 'chat', transitions: ['a', 'b'], transitionChoices: ['yes'] },
      { name: 'b', action: 'chat', transitions: ['a'] },
    ]);
    expect(errors(findings).map((f) => f.message)).toEqual([
      'has 2 transitions but no transitionQuestion',
      'has 2 transitions but 1 transitionChoices',
    ]);
  });

  it('needs no question for a single wildcard, return or variable transition', () => {
    const findings = lint([
      { name: 'a', action: 'chat', transitions: ['$next'] },
      { name: 'f()', action: 'thought', transitions: ['return'] },
      { name: 'call', action: 'function', instruction: 'f()', transitions: ['p.*'] },
      { name: 'p.a', action: 'chat', booleanCondition: 'true', transitions: ['a'] },
      { name: 'p.b', action: 'chat', transitions: ['call'] },
    ]);
    expect(errors(findings)).toEqual([]);
  });

  it('refuses more than 26 choices', () => {
    const names = Array.from({ length: 27 }, (_, i) => `n${i}`);
    const findings = lint([
      {
        name: 'hub',
        action: 'chat',
        transitions: names,
        transitionQuestion: 'Which?',
        transitionChoices: names,
      },
      ...names.map((name) => ({ name, action: 'chat' as const, transitions: ['hub'] })),
    ]);
    expect(errors(findings).map((f) => f.message)).toEqual([
      'has 27 transitions; a multiple-choice question offers at most 26 (A-Z)',
    ]);
  });

  it('reports a wildcard transition without its group', () => {
    const findings = lint([{ name: 'a', action: 'chat', transitions: ['check.*'] }]);
    expect(errors(findings)).toEqual([
      expect.objectContaining({ node: 'a', message: expect.stringContaining('there is no "check.a"') }),
    ]);
  });

  it('needs a booleanCondition on every wildcard member but the last once the first has one', () => {
    const findings = lint([
      { name: 'a', action: 'chat', transitions: ['p.*'] },
      { name: 'p.a', action: 'chat', booleanCondition: 'x', transitions: ['a'] },
      { name: 'p.b', action: 'chat', transitions: ['a'] },
      { name: 'p.c', action: 'chat', transitions: ['a'] },
    ]);
    expect(errors(findings)).toEqual([
      expect.objectContaining({
        node: 'p.b',
        message: 'is tried by "p.*" before "p.c" but has no booleanCondition',
      }),
    ]);
  });

  it('warns when the last wildcard member has a condition, since it is the else branch', () => {
    const findings = lint([
      { name: 'a', action: 'chat', transitions: ['p.*'] },
      { name: 'p.a', action: 'chat', booleanCondition: 'x', transitions: ['a'] },
      { name: 'p.b', action: 'chat', booleanCondition: 'y', transitions: ['a'] },
    ]);
    expect(errors(findings)).toEqual([]);
    expect(warnings(findings)).toEqual([
      expect.objectContaining({ node: 'p.b', message: expect.stringContaining('else branch') }),
    ]);
  });

  it('warns about a wildcard member after a gap in the letters', () => {
    const findings = lint([
      { name: 'a', action: 'chat', transitions: ['p.*'] },
      { name: 'p.a', action: 'chat', booleanCondition: 'x > 1', transitions: ['a'] },
      { name: 'p.b', action: 'chat', transitions: ['a'] },
      { name: 'p.d', action: 'chat', transitions: ['a'] },
    ]);
    expect(warnings(findings).map((f) => f.node)).toEqual(['p.d', 'p.d']);
    expect(warnings(findings)[0]!.message).toContain('never reached by "p.*"');
  });

  it('needs base.1 and base.2 for a visit transition', () => {
    const findings = lint([
      { name: 'a', action: 'chat', transitions: ['u.n'] },
      { name: 'u.2', action: 'chat', transitions: ['a'] },
    ]);
    expect(errors(findings)).toEqual([
      expect.objectContaining({
        node: 'a',
        message: 'transition "u.n" needs nodes "u.1" and "u.2" at least; there is no "u.1"',
      }),
    ]);
  });

  it('reports a malformed callable name', () => {
    const findings = lint([
      { name: 'a', action: 'chat', transitions: ['a'] },
      { name: 'f(1x)', action: 'thought', transitions: ['return'] },
    ]);
    expect(errors(findings).map((f) => [f.node, f.message])).toContainEqual([
      'f(1x)',
      'malformed callable name "f(1x)"; write f(a, b)',
    ]);
  });

  it('reports a call to a function that no node defines', () => {
    const findings = lint([
      { name: 'a', action: 'function', instruction: 'y = summarize(x)', transitions: ['a'] },
      { name: 'summarize', action: 'thought', transitions: ['a'] },
    ]);
    expect(errors(findings)).toContainEqual({
      severity: 'error',
      node: 'a',
      message: 'calls "summarize", but no node is named "summarize(…)"',
      hint: 'node "summarize" is not callable; name it "summarize(…)" with its parameters',
    });
  });

  it('reports a call with the wrong number of arguments', () => {
    const findings = lint([
      { name: 'a', action: 'local_function', instruction: 'y = f(x)', transitions: ['a'] },
      { name: 'f(p, q)', action: 'thought', transitions: ['return p'] },
    ]);
    expect(errors(findings)).toEqual([
      expect.objectContaining({ node: 'a', message: 'calls f with 1 argument, but "f(p, q)" takes 2' }),
    ]);
  });

  it('reports a function node whose instruction is not a call', () => {
    const findings = lint([
      { name: 'a', action: 'function', instruction: 'summarize it', transitions: ['a'] },
    ]);
    expect(errors(findings)[0]!.message).toContain('must be a call like "y = f(x)"');
  });

  it('warns about nodes no start node, function or interjection reaches', () => {
    const findings = lint([
      { name: 'start', action: 'chat', transitions: ['start'] },
      { name: 'orphan', action: 'chat', transitions: ['start'] },
      { name: 'helper()', action: 'thought', transitions: ['inner'] },
      { name: 'inner', action: 'thought', transitions: ['return'] },
      {
        name: 'stop',
        action: 'chat_exact',
        conditionInterjection: 'The user wants to stop',
        transitions: ['quit'],
      },
    ]);
    expect(warnings(findings)).toEqual([expect.objectContaining({ node: 'orphan' })]);
    expect(warnings(findings)[0]!.message).toContain('unreachable');
  });

  it('reports return outside a function', () => {
    const findings = lint([{ name: 'a', action: 'thought', transitions: ['return x'] }]);
    expect(errors(findings)).toEqual([
      expect.objectContaining({ node: 'a', message: expect.stringContaining('return outside a function') }),
    ]);
  });

  it('warns about a non-chat node with no transitions, where the conversation would stop', () => {
    const findings = lint([
      { name: 'a', action: 'chat', transitions: ['b'] },
      { name: 'b', action: 'thought' },
    ]);
    expect(warnings(findings)).toEqual([
      expect.objectContaining({ node: 'b', message: expect.stringContaining('conversation would stop') }),
    ]);
    expect(lint([{ name: 'bye', action: 'chat_exact', instruction: 'Goodbye!' }])).toEqual([]);
  });

  it('warns when simulated-user instructions do not match the transitions', () => {
    const findings = lint([
      { name: 'a', action: 'chat', transitions: ['a'], userInstructions: ['hi', 'bye'] },
    ]);
    expect(warnings(findings)[0]!.message).toBe('has 2 userInstructions for 1 transitions');
  });

  it('warns when every choice of a question leads to the same node, since the question decides nothing', () => {
    const findings = lint([
      {
        name: 'quiz',
        action: 'chat',
        transitions: ['feedback', 'feedback'],
        transitionQuestion: 'Was the answer right?',
        transitionChoices: ['yes', 'no'],
      },
      { name: 'feedback', action: 'chat', transitions: ['quiz', 'quit'], ...quitChoices },
    ]);
    expect(findings).toEqual([
      {
        severity: 'warning',
        node: 'quiz',
        message: 'every choice of its question leads to "feedback", so the question decides nothing',
        hint: 'keep one transition and drop the question, or lead the choices to different nodes',
      },
    ]);
  });

  it('warns about a goodbye after which the conversation goes on, where no path leads to quit', () => {
    const ask: NodeSpecInput = {
      name: 'ask',
      action: 'chat',
      transitions: ['ask', 'goodbye'],
      ...doneChoices,
    };
    const goodbye = (transitions: string[]): NodeSpecInput => ({
      name: 'goodbye',
      action: 'chat_exact',
      instruction: 'Goodbye, and thanks!',
      transitions,
    });
    const open: NodeSpecInput = {
      name: 'open',
      action: 'chat',
      instruction: 'Respond.',
      transitions: ['open'],
    };
    expect(lint([ask, goodbye(['open']), open])).toEqual([
      {
        severity: 'warning',
        node: 'goodbye',
        message: 'says goodbye, but the conversation cannot end after it: no path from it leads to quit',
        hint: 'give it the transition "quit", so the conversation ends after the goodbye',
      },
    ]);
    expect(lint([ask, goodbye(['quit'])])).toEqual([]);
  });

  it('leaves open-ended chats alone, as AutoGRAMS writes them, and goodbyes that end some other way', () => {
    // A chat that never ends: the user leaves, the graph does not (AutoGRAMS' own examples).
    expect(
      lint([{ name: 'chat', action: 'chat', instruction: 'Respond to the user.', transitions: ['chat'] }]),
    ).toEqual([]);
    // Where a simulated user leaves (the end signal), the author has said the conversation ends.
    const goodbye = {
      name: 'bye',
      action: 'chat' as const,
      instruction: 'Say goodbye.',
      transitions: ['bye'],
    };
    expect(lint([{ ...goodbye, userInstructions: ['<end>'] }])).toEqual([]);
    // An interjection that quits can follow any chat node.
    expect(
      lint([
        goodbye,
        {
          name: 'stop',
          action: 'chat_exact',
          conditionInterjection: 'The user wants to stop',
          transitions: ['quit'],
        },
      ]),
    ).toEqual([]);
    // A path may end where the linter cannot follow: a $variable or a function call.
    expect(lint([{ ...goodbye, transitions: ['$next'] }])).toEqual([]);
  });

  it('lists graph-level findings first, then findings in node order', () => {
    const findings = lint(
      [
        { name: 'a', action: 'chat', transitions: ['zz'] },
        { name: 'b', action: 'chat', transitions: ['yy'] },
      ],
      { startNode: 'nope' },
    );
    expect(findings.map((f) => f.node)).toEqual([undefined, 'a', 'b']);
  });
});

describe('startNodeOf', () => {
  it('prefers config.startNode, then start1, then the first node', () => {
    const nodes: NodeSpecInput[] = [
      { name: 'first', action: 'chat' },
      { name: 'start1', action: 'chat' },
    ];
    expect(startNodeOf(fileOf(nodes, { startNode: 'first' }))).toBe('first');
    expect(startNodeOf(fileOf(nodes))).toBe('start1');
    expect(startNodeOf(fileOf(nodes.slice(0, 1)))).toBe('first');
  });
});

describe('closestName', () => {
  it('suggests a name one slip away, a swap of two letters included, but not an unrelated short name', () => {
    expect(closestName('anser', ['answer', 'ask'])).toBe('answer');
    expect(closestName('rigth', ['right', 'wrong'])).toBe('right');
    expect(closestName('b', ['a'])).toBeUndefined();
    expect(closestName('summary', ['greeting'])).toBeUndefined();
  });
});
