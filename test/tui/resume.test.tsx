import { afterEach, describe, expect, it } from 'vitest';
import { cleanup } from 'ink-testing-library';
import { newState, type ConversationState } from '../../src/engine/state.js';
import { mountChat, supportGraph } from './helpers.js';

afterEach(cleanup);

/** The support agent's conversation as a `--state` file holds it after two replies. */
function savedConversation(): ConversationState {
  const state = newState(supportGraph());
  const turn = { instruction: 'as formed', retain: false };
  state.stack[0]!.turns.push(
    { ...turn, node: 'start1', kind: 'chat', userReply: '', output: 'Hello! How can I help?' },
    {
      ...turn,
      node: 'billing',
      kind: 'thought',
      userReply: 'My bill is wrong.',
      output: 'Check the invoice.',
    },
    { ...turn, node: 'answer', kind: 'chat', userReply: '', output: 'Let me check your invoice.' },
  );
  return { ...state, current: 'answer', visits: { start1: 1, billing: 1, answer: 1 }, steps: 3 };
}

describe('a resumed conversation', () => {
  it('shows the earlier turns, with thoughts folded under the reply they led to', () => {
    const ui = mountChat({ resumed: savedConversation() });
    expect(ui.frame()).toContain(
      [
        'Ava › Hello! How can I help?',
        'Sam › My bill is wrong.',
        'Ava › Let me check your invoice.',
        '  ▸ 1 decision · last: thought at billing: Check the invoice.',
      ].join('\n'),
    );
  });

  it('marks the node it stands at and the nodes it visited before anything runs', () => {
    const ui = mountChat({ resumed: savedConversation() });
    const rows = ui.frame().split('\n');
    expect(rows.find((row) => row.includes(' answer chat'))).toMatch(/^[ ›]▶ +answer chat/);
    expect(rows.find((row) => row.includes(' billing thought'))).toMatch(/^ • +billing thought/);
    expect(rows.find((row) => row.includes(' tech function'))).toMatch(/^ {3,}tech function/);
    expect(ui.frame()).toContain('  Node answer');
  });
});
