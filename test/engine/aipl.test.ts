import { describe, expect, it } from 'vitest';
import { saveState, loadState } from '../../src/engine/state.js';
import { applyDelta, stateDelta } from '../../src/engine/state-delta.js';
import type { NodeSpecInput } from '../../src/graph/schema.js';
import type { ScriptFile } from '../../src/llm/scripted.js';
import { converse, graphOf, promptsOf } from '../support/agents.js';

const PROMPT = [
  'You are {char}, helping {user}.',
  '(= "What is the user\'s name?" -> user.name)',
  'The user is called {user.name:not known yet}.',
  '((user.name == "")',
  'Ask for their name.',
  ')',
].join('\n');

const nodes: NodeSpecInput[] = [
  { name: 'hello', action: 'chat', instruction: 'Say hello.', transitions: ['talk'] },
  { name: 'talk', action: 'chat', instruction: 'Answer, using {user.name:their name}.', transitions: ['talk'] },
];

const script: ScriptFile = {
  rules: [
    { role: 'chatbot', match: "/I am Dana[\\s\\S]*What is the user's name\\?/", reply: 'Dana' },
    { role: 'chatbot', match: "What is the user's name?", reply: 'unknown' },
    { role: 'chatbot', match: 'Answer, using', reply: 'Nice to meet you.' },
    { role: 'chatbot', match: 'Say hello.', reply: 'Hello! Who am I talking to?' },
  ],
};

describe('an autogram with AIPL templates', () => {
  it('renders the prompt every turn from the state the model updates', async () => {
    const graph = graphOf(nodes, { prompt: PROMPT, aipl: {}, agentName: 'Ava', userName: 'Sam' });
    const talk = await converse(graph, script, [undefined, 'hi', 'I am Dana']);
    const prompts = promptsOf(talk.calls, 'chatbot').filter((p) => p.startsWith('You are'));
    expect(prompts[0]).toContain('The user is called not known yet.\nAsk for their name.');
    expect(prompts.at(-1)).toContain('The user is called Dana.\n\nInstruction');
    expect(prompts.at(-1)).toContain('Answer, using Dana.');
    expect(talk.state.aipl).toEqual({
      turn: 2,
      log: [{ name: 'user.name', value: 'Dana', turn: 2, question: "What is the user's name?" }],
    });
    const phases = talk.events.filter((e) => e.type === 'aipl.phase');
    expect(phases.length).toBeGreaterThan(0);
    const restored = loadState(saveState(talk.state));
    expect(restored.aipl).toEqual(talk.state.aipl);
  });

  it('journals the log by what a reply added', async () => {
    const graph = graphOf(nodes, { prompt: PROMPT, aipl: {} });
    const before = await converse(graph, script, [undefined, 'hi']);
    const after = await converse(graph, script, [undefined, 'hi', 'I am Dana']);
    const delta = stateDelta(before.state, after.state);
    expect(delta.aipl).toMatchObject({ keep: 0 });
    void applyDelta;
  });
});
