import { describe, expect, it } from 'vitest';
import { pushFrame } from '../../src/engine/frames.js';
import { chatPrompt, classifierHistory, classifierPrompt, userbotPrompt } from '../../src/engine/prompt.js';
import { newState, topFrame, type ConversationState, type Turn } from '../../src/engine/state.js';
import type { NodeSpecInput } from '../../src/graph/schema.js';
import type { StaticGraph } from '../../src/graph/view.js';
import { graphOf } from '../support/agents.js';

const nodes: NodeSpecInput[] = [
  { name: 'greet', action: 'chat', instruction: 'Greet the user.', transitions: ['think'] },
  { name: 'think', action: 'thought', instruction: 'Decide what the user needs.', transitions: ['answer'] },
  { name: 'answer', action: 'chat', instruction: 'Answer the user.', transitions: ['answer'] },
];

function stateWith(graph: StaticGraph, turns: Turn[], pendingUser = ''): ConversationState {
  const state = newState(graph);
  topFrame(state).turns.push(...turns);
  state.pendingUser = pendingUser;
  return state;
}

const greetTurn: Turn = {
  node: 'greet',
  kind: 'chat',
  instruction: 'Greet the user.',
  userReply: '',
  output: 'Hi!',
};

describe('chat prompt formation (seed 001)', () => {
  const graph = graphOf(nodes, { prompt: 'You are a tutor.' });

  it('puts the prompt before the first input and ends the last input with the reply start', () => {
    const state = stateWith(graph, []);
    const { messages, replyStart } = chatPrompt(graph, graph.get('greet')!, state, 'Greet the user.');
    expect(replyStart).toBe("Agent's reply:");
    expect(messages).toEqual([
      { role: 'user', content: "You are a tutor.\n\nInstruction for Agent: Greet the user.\nAgent's reply:" },
    ]);
  });

  it('fills the instruction template with the user reply, agent name and instruction', () => {
    const state = stateWith(graph, [greetTurn], 'I need help with fractions');
    const { messages } = chatPrompt(graph, graph.get('answer')!, state, 'Answer the user.');
    expect(messages).toEqual([
      { role: 'user', content: "You are a tutor.\n\nInstruction for Agent: Greet the user.\nAgent's reply:" },
      { role: 'assistant', content: 'Hi!' },
      {
        role: 'user',
        content:
          "User: I need help with fractions\n\nInstruction for Agent: Answer the user.\nAgent's reply:",
      },
    ]);
  });

  it('keeps only the user reply as the input of a past chat turn that answered one', () => {
    const answered: Turn = {
      node: 'answer',
      kind: 'chat',
      instruction: 'Answer the user.',
      userReply: 'What is a half?',
      output: 'One of two equal parts.',
    };
    const state = stateWith(graph, [greetTurn, answered], 'Thanks');
    const { messages } = chatPrompt(graph, graph.get('answer')!, state, 'Answer the user.');
    expect(messages[2]).toEqual({ role: 'user', content: "User: What is a half?\nAgent's reply:" });
    expect(messages[3]).toEqual({ role: 'assistant', content: 'One of two equal parts.' });
  });

  it('keeps both the user reply and the instruction for a past thought turn, and leaves the last response empty after it', () => {
    const thought: Turn = {
      node: 'think',
      kind: 'thought',
      instruction: 'Decide what the user needs.',
      userReply: 'I am lost',
      output: 'They need an overview.',
    };
    const state = stateWith(graph, [greetTurn, thought]);
    const { messages } = chatPrompt(graph, graph.get('answer')!, state, 'Answer the user.');
    expect(messages.slice(2)).toEqual([
      {
        role: 'user',
        content: "User: I am lost\n\nInstruction for Agent: Decide what the user needs.\nAgent's reply:",
      },
      { role: 'assistant', content: 'They need an overview.' },
      { role: 'user', content: "Instruction for Agent: Answer the user.\nAgent's reply:" },
    ]);
  });

  it('puts the reply start at the start of replies in prefix mode, the one to come given apart', () => {
    const prefixGraph = graphOf(nodes, { replyStartType: 'prefix', agentName: 'Tutor' });
    const state = stateWith(prefixGraph, [greetTurn], 'hello');
    const { messages, replyStart, prefix } = chatPrompt(
      prefixGraph,
      prefixGraph.get('answer')!,
      state,
      'Answer the user.',
    );
    expect(replyStart).toBe("Tutor's reply:");
    expect(prefix).toBe("Tutor's reply:");
    expect(messages).toEqual([
      { role: 'user', content: 'Instruction for Tutor: Greet the user.' },
      { role: 'assistant', content: "Tutor's reply: Hi!" },
      { role: 'user', content: 'User: hello\n\nInstruction for Tutor: Answer the user.' },
    ]);
  });

  it("uses a node's own reply start and instruction template", () => {
    const custom = graphOf([
      { ...nodes[0]!, replyStart: 'Answer:', instructionTemplate: '<instruction> (after: <last_response>)' },
    ]);
    const state = stateWith(custom, [], 'hey');
    const { messages } = chatPrompt(custom, custom.get('greet')!, state, 'Greet the user.');
    expect(messages).toEqual([{ role: 'user', content: 'Greet the user. (after: User: hey)\nAnswer:' }]);
  });

  it('sees only the turns of a local function inside one', () => {
    const state = stateWith(graph, [greetTurn]);
    pushFrame(state, { scope: 'local_function', args: {}, defaults: { prompt: 'Fresh.', userPrompt: '' } });
    const { messages } = chatPrompt(graph, graph.get('think')!, state, 'Decide what the user needs.');
    expect(messages).toEqual([
      {
        role: 'user',
        content: "Fresh.\n\nInstruction for Agent: Decide what the user needs.\nAgent's reply:",
      },
    ]);
  });

  it("sees the caller's turns and prompt inside a mixed function", () => {
    const state = stateWith(graph, [greetTurn]);
    pushFrame(state, { scope: 'function', args: {}, defaults: { prompt: 'Fresh.', userPrompt: '' } });
    const { messages } = chatPrompt(graph, graph.get('think')!, state, 'Decide.');
    expect(messages.map((m) => m.content)).toEqual([
      "You are a tutor.\n\nInstruction for Agent: Greet the user.\nAgent's reply:",
      'Hi!',
      "Instruction for Agent: Decide.\nAgent's reply:",
    ]);
  });
});

describe('the history window', () => {
  /** 1000 exchanges: "question i" answered by "answer i". */
  const turns: Turn[] = Array.from({ length: 1000 }, (_, i) => ({
    node: 'answer',
    kind: 'chat',
    instruction: 'Answer the user.',
    userReply: `question ${i}`,
    output: `answer ${i}`,
  }));
  /** Counts words: easy to check by hand. */
  const words = (text: string) => text.split(/\s+/).filter(Boolean).length;

  it('keeps the newest turns that fit, with the prompt before the first one kept', () => {
    const graph = graphOf(nodes, { prompt: 'You are a tutor.', historyTokens: 100 });
    const state = stateWith(graph, turns, 'last question');
    const { messages } = chatPrompt(graph, graph.get('answer')!, state, 'Answer the user.', {
      tokens: 100,
      count: words,
    });
    // An exchange costs 5 + 2 words and 8 tokens of framing: the last 6 fit in 100.
    expect(messages).toHaveLength(2 * 6 + 1);
    expect(messages[0]).toEqual({
      role: 'user',
      content: "You are a tutor.\n\nUser: question 994\nAgent's reply:",
    });
    expect(messages.at(-2)).toEqual({ role: 'assistant', content: 'answer 999' });
    expect(messages.at(-1)!.content).toMatch(
      /^User: last question\n\nInstruction for Agent: Answer the user\./,
    );
  });

  it('leaves out nothing while the turns are shorter than the window, and nothing at all when it is 0', () => {
    const counted: string[] = [];
    const count = (text: string) => (counted.push(text), words(text));
    for (const tokens of [1_000_000, 0]) {
      const graph = graphOf(nodes, { historyTokens: tokens });
      const { messages } = chatPrompt(graph, graph.get('answer')!, stateWith(graph, turns), 'Go.', {
        tokens,
        count,
      });
      expect(messages).toHaveLength(2 * 1000 + 1);
    }
    // A turn has at least a byte a token: turns that fit in bytes need no tokenizer.
    expect(counted).toEqual([]);
  });

  it('applies to the classifier too, unless a transition context keeps fewer exchanges', () => {
    const graph = graphOf(nodes, { historyTokens: 100 });
    const state = stateWith(graph, turns, 'q');
    const window = { tokens: 100, count: words };
    expect(classifierHistory(graph, state, undefined, window).split('\n\n')).toHaveLength(2 * 6 + 1);
    expect(classifierHistory(graph, state, 1, window)).toBe('answer 999\n\nUser: q');
  });

  it('counts with the tokenizer of current OpenAI models by default', () => {
    const graph = graphOf(nodes, { historyTokens: 200 });
    const { messages } = chatPrompt(graph, graph.get('answer')!, stateWith(graph, turns), 'Go.');
    expect(messages.length).toBeGreaterThan(2 * 5);
    expect(messages.length).toBeLessThan(2 * 30);
  });
});

describe('classifier prompt (Appendix B)', () => {
  const graph = graphOf(nodes);

  it('concatenates the conversation into one block, oldest first, ending with the user reply', () => {
    const state = stateWith(graph, [greetTurn], 'yes please');
    expect(classifierHistory(graph, state)).toBe(
      "Instruction for Agent: Greet the user.\nAgent's reply:\n\nHi!\n\nUser: yes please",
    );
  });

  it('keeps only the last exchanges when a transition context is set', () => {
    const second: Turn = { node: 'answer', kind: 'chat', instruction: 'x', userReply: 'q1', output: 'a1' };
    const state = stateWith(graph, [greetTurn, second], 'q2');
    expect(classifierHistory(graph, state, 1)).toBe('a1\n\nUser: q2');
  });

  it('puts the question prompt, the conversation and the question in one text', () => {
    expect(
      classifierPrompt(
        'I need you to solve a multiple choice question.',
        'Hi!\n\nUser: yes',
        'Does the user agree?',
      ),
    ).toBe('I need you to solve a multiple choice question.\n\nHi!\n\nUser: yes\n\nDoes the user agree?');
  });
});

describe('userbot prompt (Appendix D)', () => {
  it('shows the conversation from the user side and asks for a reply following the instruction', () => {
    const graph = graphOf(nodes);
    const messages = userbotPrompt(
      graph.config,
      'You are a student.',
      [{ agent: 'Hi!', user: 'hello' }, { agent: 'Ready?' }],
      'say you are ready',
    );
    expect(messages).toEqual([
      { role: 'user', content: 'You are a student.\n\nHi!' },
      { role: 'assistant', content: 'hello' },
      { role: 'user', content: "Ready?\n\nInstruction for user: say you are ready\nUser's reply:" },
    ]);
  });
});
