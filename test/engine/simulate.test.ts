import { describe, expect, it } from 'vitest';
import { Interpreter } from '../../src/engine/interpreter.js';
import { seededRandom, simulateConversations } from '../../src/engine/simulate.js';
import { graphOf, scriptedModels } from '../support/agents.js';

const quiz = graphOf(
  [
    {
      name: 'ask',
      action: 'chat_exact',
      instruction: 'What is 2 + 2?',
      transitions: ['right', 'wrong'],
      transitionQuestion: "Is the user's answer correct?",
      transitionChoices: ['yes', 'no'],
      userInstructions: ['give the correct answer', 'give a wrong answer'],
    },
    {
      name: 'right',
      action: 'chat_exact',
      instruction: 'Correct!',
      transitions: ['ask'],
      userInstructions: ['say thanks'],
    },
    {
      name: 'wrong',
      action: 'chat_exact',
      instruction: 'Not quite.',
      transitions: ['ask'],
      userInstructions: ['say ok'],
    },
  ],
  { userPrompt: 'You are a pupil.' },
);

/** A userbot that follows its instruction, and a classifier that always says the answer was correct. */
const models = scriptedModels({
  rules: [
    {
      role: 'userbot',
      match: '/^You are a pupil\\.[\\s\\S]*Instruction for user: give the correct answer/',
      reply: "User's reply: 4",
    },
    { role: 'userbot', match: 'Instruction for user: give a wrong answer', reply: '5' },
    { role: 'userbot', match: 'Instruction for user: say', reply: 'ok' },
    { role: 'classifier', match: "Is the user's answer correct?", reply: 'Yes' },
  ],
});

describe('user simulation', () => {
  it('samples transitions, has the userbot follow them, and measures the classifier against the samples', async () => {
    const agent = await Interpreter.create({ graph: quiz, models });
    try {
      const report = await simulateConversations(agent, { count: 3, turns: 4, rng: seededRandom(7) });
      const asks = report.conversations.flatMap((c) => c.turns).filter((t) => t.node === 'ask');
      expect(asks.length).toBeGreaterThan(0);
      for (const turn of asks) {
        expect(turn.user).toBe(turn.sampled === 0 ? '4' : '5');
        // The classifier always says "correct": it agrees exactly when the correct answer was sampled.
        expect(turn.agreed).toBe(turn.sampled === 0);
        expect(turn.taken).toBe(0);
      }
      expect(report.nodes.ask).toEqual({
        samples: asks.length,
        agreed: asks.filter((t) => t.sampled === 0).length,
      });
      // Single-transition nodes ask no question, so they have no agreement to measure.
      expect(report.nodes.right).toBeUndefined();
      expect(report.neverCovered).toContainEqual({ node: 'ask', transition: 'wrong' });
      expect(report.neverCovered).not.toContainEqual({ node: 'ask', transition: 'right' });
      expect(report.conversations[0]?.opening).toBe('What is 2 + 2?');
    } finally {
      agent.dispose();
    }
  });

  it('gives the same conversations for the same seed', async () => {
    const agent = await Interpreter.create({ graph: quiz, models });
    try {
      const once = await simulateConversations(agent, { count: 2, turns: 5, rng: seededRandom(42) });
      const again = await simulateConversations(agent, { count: 2, turns: 5, rng: seededRandom(42) });
      const transcript = (r: typeof once) =>
        r.conversations.map((c) => c.turns.map((t) => [t.node, t.user, t.agent]));
      expect(transcript(again)).toEqual(transcript(once));
      const samples = once.conversations.flatMap((c) => c.turns.map((t) => t.sampled));
      expect(new Set(samples).size).toBeGreaterThan(1);
    } finally {
      agent.dispose();
    }
  });
});
