import { afterEach, describe, expect, it } from 'vitest';
import { OpenAIModel } from '../../src/llm/openai.js';
import { startOpenAIServer } from '../support/openai-server.js';
import type { OpenAIServer } from '../support/openai-server.js';

let server: OpenAIServer | undefined;

afterEach(async () => {
  await server?.close();
  server = undefined;
});

const ask = (content: string) => ({ messages: [{ role: 'user' as const, content }] });

describe('the loopback OpenAI server (test support)', () => {
  it('answers from the queue first, then the reply handler, then the default', async () => {
    server = await startOpenAIServer({
      answers: ['queued'],
      reply: (body) => (body.messages.at(-1)?.content === 'echo' ? 'echoed' : undefined),
      defaultAnswer: 'default',
    });
    const model = new OpenAIModel({ baseUrl: server.url, model: 'gpt-4o-mini' });
    server.enqueue('enqueued');
    const texts = [];
    for (const prompt of ['a', 'b', 'echo', 'c']) texts.push((await model.complete(ask(prompt))).text);
    expect(texts).toEqual(['queued', 'enqueued', 'echoed', 'default']);
  });

  it('logs how many requests were in flight, so tests can assert concurrency', async () => {
    server = await startOpenAIServer({ latencyMs: 200 });
    const model = new OpenAIModel({ baseUrl: server.url, model: 'gpt-4o-mini' });
    await Promise.all([1, 2, 3].map((n) => model.complete(ask(`call ${n}`))));
    expect(server.maxInFlight).toBe(3);
    expect(server.requests.map((request) => request.inFlight).sort()).toEqual([1, 2, 3]);
  });

  it('cuts answers to max_tokens unless told to ignore it', async () => {
    server = await startOpenAIServer({ defaultAnswer: 'one two three four five' });
    const model = new OpenAIModel({ baseUrl: server.url, model: 'gpt-4o-mini' });
    expect((await model.complete({ ...ask('x'), maxTokens: 2 })).text).toBe('one two');
    await server.close();
    server = await startOpenAIServer({ defaultAnswer: 'one two three four five', ignoreLogitBias: true });
    const chatty = new OpenAIModel({ baseUrl: server.url, model: 'gpt-4o-mini' });
    expect((await chatty.complete({ ...ask('x'), maxTokens: 2 })).text).toBe('one two three four five');
  });

  it('lists its models and answers unknown routes with 404', async () => {
    server = await startOpenAIServer({ models: ['a', 'b'] });
    const listing = (await (await fetch(`${server.url}/models`)).json()) as { data: { id: string }[] };
    expect(listing.data.map((model) => model.id)).toEqual(['a', 'b']);
    expect((await fetch(`${server.url}/nowhere`)).status).toBe(404);
  });
});
