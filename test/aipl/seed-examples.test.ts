/**
 * Golden tests: every template of seed 002, parsed and rendered against scripted answers. The scripts
 * answer what the seed says the model is asked: update questions from the conversation, soft functions
 * as true/false, and text read as a number.
 */
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parseTemplate } from '../../src/aipl/parse.js';
import type { ScriptFile } from '../../src/llm/scripted.js';
import { asked, renderAipl } from '../support/aipl.js';
import { ADVANCED_EXAMPLE, BASIC_EXAMPLE, UPDATE_EXAMPLE, UPDATE_FORMS } from './seed-examples.js';

const SEED = fileURLToPath(new URL('../../../shared/seeds/002_5ba443d2e53b1045.txt', import.meta.url));

describe.skipIf(!existsSync(SEED))(
  `the copies of the seed’s templates${existsSync(SEED) ? '' : ` (skipped: no seed at ${SEED})`}`,
  () => {
    it('are the seed’s code blocks, verbatim', () => {
      const blocks = [...readFileSync(SEED, 'utf8').matchAll(/```\n([\s\S]*?)```/g)].map((m) => m[1]);
      expect(blocks).toEqual([...UPDATE_FORMS, UPDATE_EXAMPLE, BASIC_EXAMPLE, ADVANCED_EXAMPLE]);
    });
  },
);

const conversation = [
  { role: 'assistant' as const, content: 'Hi! How is your day going?' },
  {
    role: 'user' as const,
    content:
      'Busy. I drove my two kids to school, then met Mia, my wife, for lunch near Ohio State, where I studied.',
  },
];

const answers: ScriptFile = {
  rules: [
    { role: 'chatbot', match: "What is Ava's wife's name?", reply: 'Mia' },
    { role: 'chatbot', match: 'Where did Sam go to school?', reply: 'Ohio State' },
    { role: 'chatbot', match: 'What number does this text state? "two kids"', reply: '2' },
  ],
};

describe('the seed’s update example', () => {
  it('asks both questions when the user has children, and stores the answers in the template’s order', async () => {
    const out = await renderAipl(UPDATE_EXAMPLE, {
      values: { 'userinfo.children': '2' },
      script: answers,
      conversation,
    });
    expect(out.text).toBe('\n\n');
    expect(asked(out.calls).map((text) => text.split('\n')[0])).toEqual([
      "Answer this question about the conversation above: What is Ava's wife's name?",
      'Answer this question about the conversation above: Where did Sam go to school?',
    ]);
    expect(out.stored.map(({ name, value }) => [name, value])).toEqual([
      ['userinfo.wifename', 'Mia'],
      ['userinfo.school', 'Ohio State'],
    ]);
    expect(out.calls).toHaveLength(2);
  });

  it('asks the questions from the conversation alone: no system message, nothing but the question after it', async () => {
    const out = await renderAipl(UPDATE_EXAMPLE, { script: answers, conversation });
    expect(out.calls).toHaveLength(1);
    expect(out.calls[0]!.messages).toEqual([
      ...conversation,
      {
        role: 'user',
        content:
          'Answer this question about the conversation above: Where did Sam go to school?\nAnswer with the answer alone, in a few words. If the conversation does not tell, answer "unknown".',
      },
    ]);
  });

  it('reads "two kids" as a number by asking the model, as the seed’s last comment says', async () => {
    const out = await renderAipl(UPDATE_EXAMPLE, {
      values: { 'userinfo.children': 'two kids' },
      script: answers,
      conversation,
    });
    expect(asked(out.calls)[0]).toBe(
      'What number does this text state? "two kids"\nAnswer with the number alone, in digits, or "unknown".',
    );
    expect(out.stored.map((entry) => entry.name)).toEqual(['userinfo.wifename', 'userinfo.school']);
  });

  it('asks nothing before the user has said anything', async () => {
    const out = await renderAipl(UPDATE_EXAMPLE, { values: { 'userinfo.children': '2' } });
    expect(out.calls).toHaveLength(0);
    expect(out.stored).toEqual([]);
  });
});

describe('the seed’s basic template', () => {
  it('renders defaults, and empty text for a name without one', async () => {
    const out = await renderAipl(BASIC_EXAMPLE);
    expect(out.text).toBe(
      "Ava's mood is happy enough and they currently have\n12 cookies. They are aware of the following dangers:\n\n\nAva is aware that the current date is Tuesday, November 24, 2026 and the current time is\n18:05\n",
    );
    expect(out.calls).toHaveLength(0);
  });

  it('renders the last value stored for each name, whatever the case it is written in', async () => {
    const out = await renderAipl(BASIC_EXAMPLE, {
      state: {
        turn: 3,
        log: [
          { name: 'mood.recent', value: 'wary', turn: 1, question: '' },
          { name: 'environment.dangers', value: 'wolves', turn: 2, question: '' },
          { name: 'mood.recent', value: 'cheerful', turn: 3, question: '' },
        ],
      },
    });
    expect(out.text).toBe(
      "Ava's mood is cheerful and they currently have\n12 cookies. They are aware of the following dangers:\nwolves\n\nAva is aware that the current date is Tuesday, November 24, 2026 and the current time is\n18:05\n",
    );
  });
});

describe('the seed’s advanced template', () => {
  const soft = (angry: string, calm: string, evening: string): ScriptFile => ({
    rules: [
      { role: 'classifier', match: 'isAngryConversation("the user is furious")', reply: angry },
      { role: 'classifier', match: 'isCalmCharacter("stoic")', reply: calm },
      { role: 'classifier', match: 'isEvening("The current time is 18:05")', reply: evening },
      ...answers.rules,
    ],
  });
  const values = { 'conversation.summary': 'the user is furious', 'userinfo.personality': 'stoic' };

  it('renders both blocks when both conditions hold, and drops the lines that only held AIPL', async () => {
    const out = await renderAipl(ADVANCED_EXAMPLE, { values, script: soft('A', 'A', 'A'), conversation });
    expect(out.text).toBe(
      [
        'This sentence will always be rendered.',
        'This will only be rendered if the condition above is true',
        "The LLM will evaluate the above 'soft code' functions and provide a",
        'boolean response',
        '    This nested sentence will only be rendered if both conditions are true',
        'This sentence will also always be rendered',
        '',
      ].join('\n'),
    );
    expect(out.stored.map((entry) => entry.name)).toEqual(['userinfo.school']);
  });

  it('asks the soft functions without the conversation, in the seed’s words', async () => {
    const out = await renderAipl(ADVANCED_EXAMPLE, { values, script: soft('A', 'A', 'A'), conversation });
    const softCalls = out.calls.filter((call) => call.role === 'classifier');
    expect(softCalls.map((call) => call.messages)).toContainEqual([
      {
        role: 'user',
        content:
          'How would the following function evaluate if it MUST return true or false? isEvening("The current time is 18:05")\nA. true\nB. false\nAnswer with the letter only.',
      },
    ]);
  });

  it('leaves out the nested block, and its update, when only the outer condition holds', async () => {
    const out = await renderAipl(ADVANCED_EXAMPLE, { values, script: soft('A', 'A', 'B'), conversation });
    expect(out.text).toBe(
      [
        'This sentence will always be rendered.',
        'This will only be rendered if the condition above is true',
        "The LLM will evaluate the above 'soft code' functions and provide a",
        'boolean response',
        'This sentence will also always be rendered',
        '',
      ].join('\n'),
    );
    expect(out.stored).toEqual([]);
  });

  it('does not ask the right side of && when the left is false', async () => {
    const out = await renderAipl(ADVANCED_EXAMPLE, { values, script: soft('B', 'A', 'A'), conversation });
    expect(out.text).toBe(
      'This sentence will always be rendered.\nThis sentence will also always be rendered\n',
    );
    expect(asked(out.calls).some((text) => text.includes('isCalmCharacter'))).toBe(false);
  });

  it('runs the conditional update at its end when the user has children', async () => {
    const out = await renderAipl(ADVANCED_EXAMPLE, {
      values: { ...values, 'userinfo.children': '2' },
      script: soft('B', 'A', 'A'),
      conversation,
    });
    expect(out.stored.map(({ name, value }) => [name, value])).toEqual([['userinfo.wifename', 'Mia']]);
  });
});

describe('the update forms the seed gives', () => {
  it('read as text while their question is a placeholder, not a quoted string', () => {
    expect(parseTemplate(UPDATE_FORMS[0]!).parts).toEqual([{ kind: 'text', text: UPDATE_FORMS[0] }]);
    expect(() => parseTemplate(UPDATE_FORMS[1]!)).toThrow(/1:4: expected a quoted question, found "q"/);
  });
});
