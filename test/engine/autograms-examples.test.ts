import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { topFrame } from '../../src/engine/state.js';
import { loadGraphFile } from '../../src/graph/load.js';
import { StaticGraph } from '../../src/graph/view.js';
import type { ScriptFile } from '../../src/llm/scripted.js';
import { converse as talk } from '../support/agents.js';

// Verbatim copies of the AutoGRAMS repository's examples, kept with the graph fixtures.
const EXAMPLES = fileURLToPath(new URL('../fixtures/graphs', import.meta.url));

/** Runs `replies` (the first reply is the agent's opening) on an example and returns what the agent said and where it went. */
async function converse(csv: string, script: ScriptFile, replies: (string | undefined)[]) {
  const { file } = await loadGraphFile(`${EXAMPLES}/${csv}`);
  return talk(new StaticGraph(file), script, replies);
}

describe('the AutoGRAMS example spreadsheets', () => {
  it('runs simple_example.csv: the yes/no branch decides what the agent talks about', async () => {
    const script: ScriptFile = {
      rules: [
        {
          role: 'classifier',
          match: '/User: yes please\\n\\nDoes the user want to talk about ai\\?/',
          reply: 'Yes',
        },
        { role: 'classifier', match: 'Does the user want to talk about ai?', reply: 'No' },
        {
          role: 'chatbot',
          match: "/Tell the user more about the latest advances in AI[^\\n]*\\nAgent's reply:$/",
          reply: 'AutoGRAMS is out.',
        },
        { role: 'chatbot', match: "/Respond to the user\\.\\nAgent's reply:$/", reply: 'Sure.' },
      ],
    };
    const { said, entered } = await converse('simple_example.csv', script, [undefined, 'yes please', 'cool']);
    expect(said).toEqual([
      'Would you like me to tell you more about  the latest advances in AI?',
      'AutoGRAMS is out.',
      'Sure.',
    ]);
    expect(entered).toEqual(['ask_question', 'tell_about_ai', 'continue_conversation']);
  });

  it('runs fraction_agent.csv: prompts set first, yes/no questions, and the first unit through u.n', async () => {
    const script: ScriptFile = {
      rules: [
        { role: 'classifier', match: 'questions', reply: 'No' },
        {
          role: 'chatbot',
          match:
            '/^You are tutor for the subject of fractions[\\s\\S]*Instruction for Agent: Introduce yourself/',
          reply: 'Hi, I am your fractions tutor.',
        },
      ],
      default: 'Okay.',
    };
    const { said, state, entered } = await converse('fraction_agent.csv', script, [
      undefined,
      'I know a little',
      'ready',
      'sounds good',
    ]);
    expect(said[0]).toBe('Hi, I am your fractions tutor.');
    expect(entered).toEqual(['start1', 'start2', 'i1', 'i2', 'i3', 'u.1']);
    expect(topFrame(state).userPrompt).toBe(
      'You are a student (the user) trying to learn the subject of fractions from a teacher.',
    );
  });
});
