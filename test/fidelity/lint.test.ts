/** What the linter says about AutoGRAMS constructs: at most a warning for those that may run, an error for those AutoGRAMS refuses. */
import { describe, expect, it } from 'vitest';
import { lintGraph } from '../../src/aipl/lint.js';
import type { NodeSpecInput } from '../../src/graph/schema.js';
import { fileOf } from '../support/agents.js';

const lint = (nodes: NodeSpecInput[]) => lintGraph(fileOf(nodes));

describe('lint of AutoGRAMS constructs', () => {
  it('warns, not errs, about a return that only a $var transition inside a function can reach (autograms/autogram_utils.py:322-345)', () => {
    const findings = lint([
      { name: 'start', action: 'function', instruction: 'x = route("done")', transitions: ['start'] },
      { name: 'route(target)', action: 'transition', transitions: ['$target'] },
      { name: 'done', action: 'thought_exact', instruction: 'finished', transitions: ['return'] },
    ]);
    expect(findings.filter((f) => f.severity === 'error')).toEqual([]);
    expect(findings).toContainEqual(
      expect.objectContaining({
        severity: 'warning',
        node: 'done',
        message: 'returns, but only a $variable transition inside a function can lead here',
      }),
    );
  });

  it('still errs about a return no function can reach at all', () => {
    const findings = lint([
      { name: 'start', action: 'chat', transitions: ['$next'] },
      { name: 'done', action: 'chat', transitions: ['return'] },
    ]);
    expect(findings).toContainEqual(
      expect.objectContaining({
        severity: 'error',
        node: 'done',
        message: expect.stringContaining('return outside a function'),
      }),
    );
  });

  it('warns that a wildcard group without conditions or weights always takes its first member (autograms/autogram_utils.py:386-438)', () => {
    const findings = lint([
      { name: 'a', action: 'chat', transitions: ['p.*'] },
      { name: 'p.a', action: 'chat', transitions: ['a'] },
      { name: 'p.b', action: 'chat', booleanCondition: 'x > 1', transitions: ['a'] },
    ]);
    expect(findings.filter((f) => f.severity === 'error')).toEqual([]);
    expect(findings.map((f) => `${f.node}: ${f.message}`)).toEqual([
      'p.a: "p.*" always leads here: its members have no boolean conditions and no weight lists',
      'p.b: its booleanCondition is never evaluated: "p.a" has none, so "p.*" is chosen by score',
    ]);
  });

  it('refuses a p.* group or a name.n with fewer than two members, as AutoGRAMS refuses to load it (autograms/graph_utils/graph.py:201-233)', () => {
    const findings = lint([
      { name: 'a', action: 'chat', transitions: ['p.*'] },
      { name: 'p.a', action: 'chat', transitions: ['u.n'] },
      { name: 'u.1', action: 'chat', transitions: ['q.*'] },
      { name: 'q.b', action: 'chat', transitions: ['a'] },
    ]);
    expect(
      findings.filter((f) => f.severity === 'error').map((f) => `${f.node}: ${f.message} (${f.hint})`),
    ).toEqual([
      'a: transition "p.*" needs nodes "p.a" and "p.b" at least; there is no "p.b" (a wildcard chooses among two nodes or more; with one, lead to "p.a" itself)',
      'p.a: transition "u.n" needs nodes "u.1" and "u.2" at least; there is no "u.2" (with one node, lead to "u.1" itself)',
      'u.1: transition "q.*" needs nodes "q.a" and "q.b" at least; there is no "q.a" (undefined)',
    ]);
  });

  it('refuses "$" followed by a space where variables are embedded, with AutoGRAMS\' advice to write "\\$" (autograms/autogram_utils.py:483-510, 590-654)', () => {
    const findings = lint([
      {
        name: 'a',
        action: 'chat_exact',
        instruction: 'It costs $ 5, or \\$ 6, or $7, or $',
        transitions: ['b'],
      },
      {
        name: 'b',
        action: 'chat',
        instruction: 'Answer.?{ Mind the $ sign.}',
        transitions: ['c', 'b'],
        transitionQuestion: 'Did the user pay $ 5?',
        transitionChoices: ['yes', 'no'],
      },
      { name: 'c', action: 'code', instruction: "price = '$ ' + 5", transitions: ['d'] },
      // AutoGRAMS never reads a transition node's instruction.
      { name: 'd', action: 'transition', instruction: 'costs $ 5', transitions: ['a'] },
    ]);
    expect(
      findings.filter((f) => f.severity === 'error').map((f) => `${f.node}: ${f.message} (${f.hint})`),
    ).toEqual([
      'a: space after "$" in its instruction ("costs $ 5,"): "$" starts a variable name (if you meant a dollar sign, write "\\$" instead)',
      'b: space after "$" in its instruction ("the $ sign.}"): "$" starts a variable name (if you meant a dollar sign, write "\\$" instead)',
      'b: space after "$" in its transitionQuestion ("pay $ 5?"): "$" starts a variable name (if you meant a dollar sign, write "\\$" instead)',
      'c: space after "$" in its instruction ("\'$ \'"): "$" starts a variable name (if you meant a dollar sign, write "\\$" instead)',
    ]);
  });

  it('warns about settings that name missing nodes or that the node never reads', () => {
    const findings = lint([
      {
        name: 'a',
        action: 'chat',
        transitions: ['a'],
        requiredRevisit: ['b'],
        userInterjection: 'hi',
        transitionProbs: [1, 0],
      },
    ]);
    expect(findings.map((f) => f.message)).toEqual([
      'requiredRevisit names "b", which is not a node',
      'requiredRevisit is read only by function nodes, not by a chat node',
      'has 2 transitionProbs for 1 transitions',
      'userInterjection is read only by interjection nodes (with a conditionInterjection)',
    ]);
  });
});
