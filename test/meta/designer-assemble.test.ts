import { describe, expect, it } from 'vitest';
import { assembleGraph, nodeNames } from '../../meta/assemble.js';
import type { DotDraft } from '../../meta/dot-problems.js';
import type { NodeFields } from '../../meta/node-fields.js';
import { lintGraph } from '../../src/aipl/lint.js';
import { hasErrors } from '../../src/graph/lint.js';

const draft: DotDraft = {
  nodes: [
    { id: 'ask', label: 'Ask which topic the user wants' },
    { id: 'start', label: 'Greet the user' },
    { id: 'n1', label: 'Explain fractions simply' },
    { id: 'quit', label: 'Say goodbye' },
  ],
  edges: [
    { from: 'start', to: 'ask', label: 'says hello' },
    { from: 'ask', to: 'n1', label: 'picks fractions' },
    { from: 'ask', to: 'quit', label: 'wants to stop' },
    { from: 'n1', to: 'ask', label: 'understood' },
  ],
  start: 'start',
};

function fields(ways: number, extra: Partial<NodeFields> = {}): NodeFields {
  return {
    action: 'chat',
    instruction: 'Do the thing.',
    userInstructions: Array.from({ length: Math.max(ways, 1) }, (_, i) => `Reply way ${i + 1}.`),
    ...extra,
  };
}

const written: NodeFields[] = [
  fields(2, { transitionQuestion: 'What does the user want?', transitionChoices: ['fractions', 'stop'] }),
  fields(1, { instruction: 'answer = 42 is not an assignment' }),
  fields(1),
  fields(0),
];

describe('designer assembly', () => {
  it('gives every DOT node a valid unique name, using the label when the id says nothing', () => {
    const names = nodeNames(draft);
    expect([...names.values()]).toEqual(['ask', 'start', 'explain_fractions_simply', 'quit_node']);
  });

  it('makes duplicate slugs unique', () => {
    const names = nodeNames({
      nodes: [
        { id: 'Ask Topic', label: 'a' },
        { id: 'ask_topic', label: 'b' },
      ],
      edges: [],
    });
    expect([...names.values()]).toEqual(['ask_topic', 'ask_topic_2']);
  });

  it('puts the start node first, keeps transitions in edge order and ends the conversation at the goodbye', () => {
    const graph = assembleGraph(draft, written, { name: 'tutor', description: 'a tutor bot' });
    expect(graph.config.startNode).toBe('start');
    expect(graph.nodes.map((n) => n.name)).toEqual(['start', 'ask', 'explain_fractions_simply', 'quit_node']);
    const ask = graph.nodes.find((n) => n.name === 'ask')!;
    expect(ask.transitions).toEqual(['explain_fractions_simply', 'quit_node']);
    expect(ask.transitionChoices).toEqual(['fractions', 'stop']);
    expect(graph.nodes.find((n) => n.name === 'quit_node')!.transitions).toEqual(['quit']);
  });

  it('continues a turn left open with one that asks whether the user is done and leads to the goodbye', () => {
    const open: DotDraft = { ...draft, edges: draft.edges.filter((e) => e.from !== 'n1') };
    const graph = assembleGraph(open, written, { name: 'tutor', description: 'a tutor bot' });
    expect(graph.nodes.find((n) => n.name === 'explain_fractions_simply')!.transitions).toEqual([
      'continue_conversation',
    ]);
    expect(graph.nodes.at(-1)).toMatchObject({
      name: 'continue_conversation',
      transitions: ['quit_node', 'continue_conversation'],
      transitionQuestion: expect.stringMatching(/^Is the user done with the conversation/),
      transitionChoices: ['yes', 'no'],
    });
    expect(lintGraph(graph)).toEqual([]);
  });

  it('refuses a draft without a turn that ends the conversation: withEnding completes drafts first', () => {
    const endless: DotDraft = {
      ...draft,
      nodes: draft.nodes.filter((n) => n.id !== 'quit'),
      edges: draft.edges.filter((e) => e.to !== 'quit'),
    };
    expect(() =>
      assembleGraph(endless, written.slice(0, 3), { name: 'tutor', description: 'a tutor bot' }),
    ).toThrow(new RangeError('assemble: the draft has no turn that ends the conversation'));
  });

  it('escapes a leading "x =" so a written instruction is never an assignment', () => {
    const graph = assembleGraph(draft, written, { name: 'tutor', description: 'a tutor bot' });
    expect(graph.nodes.find((n) => n.name === 'start')!.instruction).toBe(
      'answer \\= 42 is not an assignment',
    );
  });

  it('escapes $ in written text, since a designed chatbot has no variables to embed', () => {
    const priced = written.map((f, i) =>
      i === 0
        ? { ...f, instruction: 'Say the course costs $price.', transitionChoices: ['$5 plan', '$pro plan'] }
        : f,
    );
    const ask = assembleGraph(draft, priced, { name: 'tutor', description: 'a tutor bot' }).nodes.find(
      (n) => n.name === 'ask',
    )!;
    expect(ask.instruction).toBe('Say the course costs \\$price.');
    expect(ask.transitionChoices).toEqual(['$5 plan', '\\$pro plan']);
  });

  it('produces a graph the engine linter accepts', () => {
    const graph = assembleGraph(draft, written, { name: 'tutor', description: 'a tutor bot' });
    expect(hasErrors(lintGraph(graph))).toBe(false);
    expect(lintGraph(graph)).toEqual([]);
  });
});
