import { describe, expect, it } from 'vitest';
import { fitToContext } from '../../src/flow/fit-context.js';
import { countMessageTokens } from '../../src/llm/tokens.js';
import type { ChatMessage } from '../../src/llm/types.js';

const modelName = 'gpt-4o-mini';
const words = (word: string, n: number) => Array.from({ length: n }, (_, i) => `${word}${i}`).join(' ');

const messages: ChatMessage[] = [
  { role: 'system', content: 'You plan tasks.' },
  { role: 'user', content: `Oldest: ${words('old', 300)}` },
  { role: 'assistant', content: `Older answer: ${words('mid', 300)}` },
  { role: 'system', content: 'The manual: be brief.' },
  { role: 'user', content: `Newer: ${words('new', 100)}` },
  { role: 'assistant', content: 'A short answer.' },
  { role: 'user', content: 'Write the plan.' },
];

describe('fitting a flow node’s messages to the context', () => {
  it('leaves messages that fit as they are', () => {
    const fitted = fitToContext('plan', messages, { contextTokens: 8192, modelName });
    expect(fitted).toMatchObject({ ok: true, messages, trim: { dropped: 0, cut: 0 } });
  });

  it('keeps system messages and the prompt whole, dropping or cutting the others oldest first', () => {
    const fitted = fitToContext('plan', messages, { contextTokens: 2048, answerTokens: 1536, modelName });
    if (!fitted.ok) throw new Error(fitted.error);
    const kept = fitted.messages;
    expect(countMessageTokens(modelName, kept)).toBeLessThanOrEqual(2048 - 1536);
    expect(kept.filter((m) => m.role === 'system')).toEqual(messages.filter((m) => m.role === 'system'));
    expect(kept.at(-1)).toEqual(messages.at(-1));
    expect(kept.map((m) => m.content)).not.toContain(messages[1]!.content);
    expect(kept.slice(-3)).toEqual(messages.slice(-3));
    expect(fitted.trim).toMatchObject({ dropped: 1, cut: 1 });
    expect(kept.find((m) => m.content.startsWith('Older answer'))!.content).toMatch(/tokens cut/);
  });

  it('fails, naming the node, its tokens and the context, when the kept messages alone do not fit', () => {
    const fitted = fitToContext('plan', messages, { contextTokens: 600, answerTokens: 590, modelName });
    expect(fitted).toEqual({
      ok: false,
      error: expect.stringMatching(
        /^node "plan": its system messages and prompt take \d+ tokens, and its answer needs 590 more, past the model's 600-token context/,
      ),
    });
  });
});
