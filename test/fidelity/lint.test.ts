/** What the linter says about AutoGRAMS constructs that may run: at most a warning. */
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
