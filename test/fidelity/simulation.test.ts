/** User simulation as AutoGRAMS' `simulate_user` does it (autograms/autogram.py:320-375). */
import { describe, expect, it } from 'vitest';
import type { ScriptFile } from '../../src/llm/scripted.js';
import { csvGraph, promptsOf, simulate as simulateGraph } from '../support/agents.js';

async function simulate(csv: string, script: ScriptFile, turns = 5) {
  const { report, calls } = await simulateGraph(csvGraph(csv), script, { count: 1, turns, seed: 1 });
  return { conversation: report.conversations[0]!, calls };
}

describe('user simulation', () => {
  it('ends the simulated conversation at a user instruction of <end> instead of saying it (autograms/autogram.py:359-360)', async () => {
    const csv = `Name,Action,Instruction,Transitions,User Instruction Transition A
ask,chat_exact,Are you happy with the offer?,done,say yes
done,chat_exact,Great - we will be in touch.,over,<end>
over,chat_exact,The conversation has ended.,over,
`;
    const { conversation, calls } = await simulate(csv, { rules: [{ role: 'userbot', reply: 'Yes.' }] });
    expect(conversation.endedBy).toBe('user');
    expect(conversation.turns.map((t) => t.agent)).toEqual(['Great - we will be in touch.']);
    expect(promptsOf(calls, 'userbot')).toHaveLength(1);
  });

  it("asks the userbot with AutoGRAMS' user instruction template (autograms/autogram_config.py:17, 19)", async () => {
    const csv = `Name,Action,Instruction,Transitions,User Instruction Transition A
ask,chat_exact,What is your name?,ask,say your name
`;
    const { calls } = await simulate(csv, { rules: [{ role: 'userbot', reply: "User's reply: Ada" }] }, 1);
    expect(promptsOf(calls, 'userbot')[0]).toBe(
      "You are a user.\n\nWhat is your name?\n\nInstruction for user: say your name\nUser's reply:",
    );
  });

  it("simulates interjections with the node's user instruction and probability (autograms/autogram.py:345-356, autogram_utils.py:752-783)", async () => {
    const csv = `Name,Action,Instruction,Transitions,User Instruction Transition A,Condition Interjection,User Interjection,Probability Interjection
ask,chat_exact,Which topic?,ask,name a topic,,,
change,chat_exact,Let us change the topic.,ask,,The user wants another topic.,say you are bored,1
`;
    const { conversation, calls } = await simulate(
      csv,
      {
        rules: [
          { role: 'userbot', match: 'say you are bored', reply: 'This is boring.' },
          { role: 'userbot', reply: 'History.' },
          { role: 'classifier', reply: ['A', 'B'] },
        ],
      },
      2,
    );
    expect(conversation.turns[0]).toMatchObject({
      user: 'This is boring.',
      agent: 'Let us change the topic.',
    });
    expect(conversation.turns[0]!.sampled).toBeUndefined();
    expect(promptsOf(calls, 'userbot')[0]).toContain('Instruction for user: say you are bored');
  });
});
