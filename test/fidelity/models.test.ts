/** What reaches an OpenAI-compatible server, as AutoGRAMS' OpenAI chatbot sends it (autograms/models/). */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Interpreter } from '../../src/engine/interpreter.js';
import { StaticGraph } from '../../src/graph/view.js';
import { OpenAIModel } from '../../src/llm/openai.js';
import {
  TEXT_ONLY,
  type ChatMessage,
  type CompletionRequest,
  type LanguageModel,
} from '../../src/llm/types.js';
import { csvGraph, everyRole } from '../support/agents.js';
import { startOpenAIServer, type OpenAIServer } from '../support/openai-server.js';

const PREFIXED = (() => {
  const { file } = csvGraph(`Name,Action,Instruction,Transitions
start1,chat,Greet the user.,answer
answer,chat,Answer the user.,answer
`);
  return new StaticGraph({ ...file, config: { ...file.config, replyStartType: 'prefix' } });
})();

describe('reply_start_type prefix on an OpenAI-compatible server (autograms/models/openai_chatbot.py:84-108; nodes/base_node.py:641-669, 705-722)', () => {
  let server: OpenAIServer;
  let agent: Interpreter;
  beforeAll(async () => {
    server = await startOpenAIServer({
      reply: (body) =>
        body.messages.at(-1)?.content.endsWith('Greet the user.') ? 'Hello!' : 'Here is cake.',
    });
    agent = await Interpreter.create({
      graph: PREFIXED,
      models: everyRole(new OpenAIModel({ baseUrl: server.url, model: 'gpt-4o-mini', maxRetries: 0 })),
    });
  });
  afterAll(async () => {
    agent.dispose();
    await server.close();
  });

  it('starts past replies with the reply start and sends no message for the reply asked for, which the server would take as a finished turn', async () => {
    const first = await agent.reply(undefined);
    const second = await agent.reply('Something sweet?', first.state);
    expect([first.reply, second.reply]).toEqual(['Hello!', 'Here is cake.']);
    expect(server.chatRequests().map((body) => body.messages)).toEqual([
      [{ role: 'user', content: 'You are an agent.\n\nInstruction for Agent: Greet the user.' }],
      [
        { role: 'user', content: 'You are an agent.\n\nInstruction for Agent: Greet the user.' },
        { role: 'assistant', content: "Agent's reply: Hello!" },
        { role: 'user', content: 'User: Something sweet?\n\nInstruction for Agent: Answer the user.' },
      ],
    ]);
  });
});

describe('reply_start_type prefix on a model that continues a last assistant message (autograms/models/huggingface_chatbot.py:76-93)', () => {
  it('is sent the reply start as that message, as the embedded model is, so its reply begins after it', async () => {
    const sent: ChatMessage[][] = [];
    const complete = async (request: CompletionRequest) => {
      sent.push(request.messages);
      return { text: 'Hello!', model: 'continuing', usage: { promptTokens: 1, completionTokens: 1 } };
    };
    const continuing: LanguageModel = {
      id: 'continuing',
      modelName: 'continuing',
      capabilities: { ...TEXT_ONLY, continuesReply: true },
      answersFrom: 'model',
      complete,
      stream: (request) => complete(request),
      embed: () => Promise.reject(new Error('no embeddings here')),
    };
    const agent = await Interpreter.create({ graph: PREFIXED, models: everyRole(continuing) });
    try {
      expect((await agent.reply(undefined)).reply).toBe('Hello!');
    } finally {
      agent.dispose();
    }
    expect(sent).toEqual([
      [
        { role: 'user', content: 'You are an agent.\n\nInstruction for Agent: Greet the user.' },
        { role: 'assistant', content: "Agent's reply:" },
      ],
    ]);
  });
});
