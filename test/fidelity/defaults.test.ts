/**
 * A spreadsheet carries no config, so it runs under AutoGRAMS' defaults
 * (autograms/autogram_config.py); a native graph keeps the config it states.
 */
import { describe, expect, it } from 'vitest';
import { assembleGraph } from '../../meta/assemble.js';
import { converse, csvGraph, graphOf, promptsOf } from '../support/agents.js';

const TUTOR = `Name,Action,Instruction,Transitions,Transition Question,Transition Choice A,Transition Choice B
greet,chat_exact,Shall we start with fractions?,"explain,greet",Does the user want to start?,yes,no
explain,chat,Explain what a fraction is.,check,,,
check,chat,Ask whether that made sense.,"done,explain",Did the explanation make sense to the user?,yes,no
done,chat,Say goodbye.,done,,,
`;

const script = {
  rules: [
    { role: 'classifier' as const, reply: 'Yes' },
    {
      role: 'chatbot' as const,
      match: 'Explain what a fraction is.',
      reply: 'A fraction is a part of a whole.',
    },
    { role: 'chatbot' as const, match: 'Ask whether that made sense.', reply: 'Did that make sense?' },
    { role: 'chatbot' as const, reply: 'Goodbye!' },
  ],
};

describe("a spreadsheet runs under AutoGRAMS' defaults", () => {
  it('has the default prompts, classifier context and sampling (autograms/autogram_config.py:12, 42-43, 69; models/openai_chatbot.py:122)', () => {
    const { config } = csvGraph(TUTOR);
    expect(config).toMatchObject({
      prompt: 'You are an agent.',
      userPrompt: 'You are a user.',
      transitionContext: 1,
      generation: { temperature: 0.7, maxTokens: 512 },
      questionPrompt: 'I need you to solve a multiple choice question.',
      interjectionDownWeight: 1,
      endSignal: '<end>',
    });
  });

  it('sends the default prompt first and samples at temperature 0.7 with 512 tokens (autograms/memory.py:44, models/openai_chatbot.py:305-338)', async () => {
    const { calls } = await converse(csvGraph(TUTOR), script, [undefined, 'yes please']);
    const chat = calls.find((c) => c.role === 'chatbot')!;
    expect(chat.messages[0]!.content).toMatch(/^You are an agent\.\n\n/);
    expect(chat.request).toMatchObject({ temperature: 0.7, maxTokens: 512 });
  });

  it('shows the classifier the last exchange only (autograms/nodes/base_node.py:263, 632-634, 899)', async () => {
    const { said, calls } = await converse(csvGraph(TUTOR), script, [
      undefined,
      'yes please',
      'got it',
      'yes',
    ]);
    expect(said).toEqual([
      'Shall we start with fractions?',
      'A fraction is a part of a whole.',
      'Did that make sense?',
      'Goodbye!',
    ]);
    const last = promptsOf(calls, 'classifier').at(-1)!;
    expect(last).toContain(
      'Did that make sense?\n\nUser: yes\n\nDid the explanation make sense to the user?',
    );
    expect(last).not.toContain('A fraction is a part of a whole.');
    expect(last).not.toContain('yes please');
  });
});

describe('a native graph keeps its explicit config', () => {
  const nodes = [
    { name: 'ask', action: 'chat_exact' as const, instruction: 'Ready?', transitions: ['next'] },
    {
      name: 'next',
      action: 'chat' as const,
      instruction: 'Go on.',
      transitions: ['next', 'ask'],
      transitionQuestion: 'Is the user done?',
      transitionChoices: ['no', 'yes'],
    },
  ];
  const rules = {
    rules: [
      { role: 'classifier' as const, reply: 'No' },
      { role: 'chatbot' as const, reply: 'Going on.' },
    ],
  };

  it('shows the classifier every turn in scope when its config sets no transitionContext', async () => {
    const { calls } = await converse(graphOf(nodes), rules, [undefined, 'first', 'second']);
    expect(promptsOf(calls, 'classifier').at(-1)).toContain('User: first');
    expect(graphOf(nodes).config.prompt).toBe('');
  });

  it('shows the classifier the last exchange when its config says transitionContext 1', async () => {
    const { calls } = await converse(graphOf(nodes, { transitionContext: 1 }), rules, [
      undefined,
      'first',
      'second',
    ]);
    const last = promptsOf(calls, 'classifier').at(-1)!;
    expect(last).not.toContain('User: first');
    expect(last).toContain('User: second');
  });

  it('is written by the designer with its classifier context stated', () => {
    const graph = assembleGraph(
      {
        start: 'a',
        nodes: [
          { id: 'a', label: 'Greet' },
          { id: 'goodbye', label: 'Say goodbye' },
        ],
        edges: [{ from: 'a', to: 'goodbye', label: 'The user is done' }],
      },
      [
        { action: 'chat', instruction: 'Greet the user.', userInstructions: ['Say hi.'] },
        { action: 'chat', instruction: 'Say goodbye.', userInstructions: ['Bye.'] },
      ],
      { name: 'greeter', description: 'greets' },
    );
    expect(graph.config.transitionContext).toBe(1);
  });
});
