import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Interpreter } from '../../src/engine/interpreter.js';
import { OpenAIModel } from '../../src/llm/openai.js';
import { startOpenAIServer, type ChatRequestBody, type OpenAIServer } from '../support/openai-server.js';
import { everyRole, graphOf } from '../support/agents.js';

const graph = graphOf(
  [
    {
      name: 'start1',
      action: 'chat',
      instruction: 'Ask the user what they would like to drink.',
      transitions: ['tea', 'coffee'],
      transitionQuestion: 'What does the user want?',
      transitionChoices: ['Tea', 'Coffee'],
    },
    { name: 'tea', action: 'thought', instruction: 'note = Note the tea order.', transitions: ['serve'] },
    { name: 'coffee', action: 'chat', instruction: 'Say coffee is out.', transitions: ['start1'] },
    {
      name: 'serve',
      action: 'chat',
      instruction: 'Serve the tea, mentioning: $note',
      transitions: ['start1'],
    },
  ],
  { prompt: 'You run a cafe.', agentName: 'Barista' },
);

/** Classifier requests are the ones limited to one token; chat requests answer by the instruction they end with. */
function answer(body: ChatRequestBody): string {
  if (body.max_tokens === 1) return 'A';
  const last = body.messages.at(-1)?.content ?? '';
  if (last.includes('what they would like to drink')) return 'What would you like?';
  if (last.includes('Note the tea order')) return 'one green tea';
  if (last.includes('Serve the tea')) return 'Here is your green tea.';
  return 'unexpected';
}

describe('a conversation through the OpenAI provider and a loopback server', () => {
  let server: OpenAIServer;
  let agent: Interpreter;
  beforeAll(async () => {
    server = await startOpenAIServer({ reply: answer });
    const model = new OpenAIModel({ baseUrl: server.url, model: 'gpt-4o-mini', maxRetries: 0 });
    agent = await Interpreter.create({ graph, models: everyRole(model) });
  });
  afterAll(async () => {
    agent.dispose();
    await server.close();
  });

  it('sends the seed-001 prompts, and classifies with one token and a logit bias', async () => {
    const first = await agent.reply(undefined);
    expect(first.reply).toBe('What would you like?');
    const second = await agent.reply('green tea, please', first.state);
    expect(second.reply).toBe('Here is your green tea.');

    const [opening, classifier, thought, serve] = server.chatRequests();
    expect(opening?.messages).toEqual([
      {
        role: 'user',
        content:
          "You run a cafe.\n\nInstruction for Barista: Ask the user what they would like to drink.\nBarista's reply:",
      },
    ]);

    expect(classifier?.max_tokens).toBe(1);
    expect(classifier?.temperature).toBe(0);
    const biases = Object.values(classifier?.logit_bias ?? {});
    expect(biases.length).toBeGreaterThanOrEqual(2);
    expect(biases.every((bias) => bias > 0)).toBe(true);
    expect(classifier?.messages).toEqual([
      {
        role: 'user',
        content: [
          'I need you to solve a multiple choice question.',
          "Instruction for Barista: Ask the user what they would like to drink.\nBarista's reply:",
          'What would you like?',
          'User: green tea, please',
          'What does the user want?\nA. Tea\nB. Coffee\nAnswer with the letter only.',
        ].join('\n\n'),
      },
    ]);

    // The thought consumed the user's reply: it appears with the thought's instruction...
    expect(thought?.messages).toEqual([
      {
        role: 'user',
        content:
          "You run a cafe.\n\nInstruction for Barista: Ask the user what they would like to drink.\nBarista's reply:",
      },
      { role: 'assistant', content: 'What would you like?' },
      {
        role: 'user',
        content: "User: green tea, please\n\nInstruction for Barista: Note the tea order.\nBarista's reply:",
      },
    ]);
    // ...so the chat node after it has no last response, and sees the thought as a past turn.
    expect(serve?.messages.slice(2)).toEqual([
      {
        role: 'user',
        content: "User: green tea, please\n\nInstruction for Barista: Note the tea order.\nBarista's reply:",
      },
      { role: 'assistant', content: 'one green tea' },
      {
        role: 'user',
        content: "Instruction for Barista: Serve the tea, mentioning: one green tea\nBarista's reply:",
      },
    ]);
    expect(serve?.stream).toBe(true);
  });
});

describe('a server that ignores logit_bias', () => {
  it('still takes the transition the classifier names in a longer answer', async () => {
    const server = await startOpenAIServer({
      ignoreLogitBias: true,
      reply: (body) => (body.max_tokens === 1 ? 'The answer is B.' : answer(body)),
    });
    const model = new OpenAIModel({ baseUrl: server.url, model: 'gpt-4o-mini', maxRetries: 0 });
    const agent = await Interpreter.create({
      graph,
      models: everyRole(model),
    });
    try {
      const first = await agent.reply(undefined);
      const { state } = await agent.reply('coffee', first.state);
      expect(state.current).toBe('coffee');
    } finally {
      agent.dispose();
      await server.close();
    }
  });
});

describe('the history the classifier is sent', () => {
  it('is a window of its own, smaller than the chatbot’s, for a one-token answer', async () => {
    // Each exchange is some 600 tokens (2,000 characters from the agent, 1,000 from the user), so 16 of
    // them overflow the chatbot's default window of 8,000 tokens.
    const long = (word: string, characters: number) => `${word} `.repeat(characters / (word.length + 1));
    const talk = graphOf([
      {
        name: 'talk',
        action: 'chat',
        instruction: 'Keep talking.',
        transitions: ['talk', 'talk'],
        transitionQuestion: 'Does the user go on?',
        transitionChoices: ['Yes', 'No'],
      },
    ]);
    const server = await startOpenAIServer({
      reply: (body) => (body.max_tokens === 1 ? 'A' : long('agent', 2000)),
    });
    const model = new OpenAIModel({ baseUrl: server.url, model: 'gpt-4o-mini', maxRetries: 0 });
    const agent = await Interpreter.create({ graph: talk, models: everyRole(model) });
    try {
      let state = (await agent.reply(undefined)).state;
      for (let i = 0; i < 16; i++) state = (await agent.reply(`${i} ${long('user', 1000)}`, state)).state;
      const requests = server.chatRequests();
      const size = (body: ChatRequestBody) =>
        body.messages.reduce((sum, m) => sum + String(m.content).length, 0);
      const classifier = requests.filter((body) => body.max_tokens === 1).at(-1)!;
      const chatbot = requests.filter((body) => body.max_tokens !== 1).at(-1)!;
      // The chatbot keeps its window (some 8,000 tokens); the classifier reads the newest 2,048 at most.
      expect(size(chatbot)).toBeGreaterThan(30_000);
      expect(size(classifier)).toBeLessThan(11_000);
      expect(String(classifier.messages[0]!.content)).toContain('User: 15 user user');
    } finally {
      agent.dispose();
      await server.close();
    }
  });
});
