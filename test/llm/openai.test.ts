import { afterEach, describe, expect, it } from 'vitest';
import { OpenAIModel } from '../../src/llm/openai.js';
import { countMessageTokens, countTokens } from '../../src/llm/tokens.js';
import { startOpenAIServer, testEmbedding } from '../support/openai-server.js';
import type { OpenAIServer, OpenAIServerOptions } from '../support/openai-server.js';

let server: OpenAIServer | undefined;

afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function modelAgainst(options: OpenAIServerOptions, model = 'gpt-4o-mini'): Promise<OpenAIModel> {
  server = await startOpenAIServer(options);
  return new OpenAIModel({ baseUrl: server.url, model, apiKey: 'sk-test' });
}

const hello = { messages: [{ role: 'user' as const, content: 'Say hello' }] };

describe('OpenAIModel', () => {
  it('completes a chat and reports the usage the server sent', async () => {
    const model = await modelAgainst({
      answers: [{ text: 'Hello there!', usage: { promptTokens: 11, completionTokens: 3 } }],
    });
    const completion = await model.complete({ ...hello, maxTokens: 20, temperature: 0.2, stop: ['\n'] });
    expect(completion).toEqual({
      text: 'Hello there!',
      model: 'gpt-4o-mini',
      usage: { promptTokens: 11, completionTokens: 3 },
    });
    const [request] = server!.chatRequests();
    expect(request).toMatchObject({ model: 'gpt-4o-mini', max_tokens: 20, temperature: 0.2, stop: ['\n'] });
    expect(server!.requests[0]?.headers.authorization).toBe('Bearer sk-test');
  });

  it('leaves out options the caller did not set', async () => {
    const model = await modelAgainst({});
    await model.complete(hello);
    const [request] = server!.chatRequests();
    for (const field of ['max_tokens', 'temperature', 'stop', 'logit_bias', 'response_format']) {
      expect(request).not.toHaveProperty(field);
    }
  });

  it('streams deltas as they come and resolves with the whole text and the final usage chunk', async () => {
    const model = await modelAgainst({
      answers: [{ text: 'One two three four', usage: { promptTokens: 9, completionTokens: 4 } }],
    });
    const deltas: string[] = [];
    const completion = await model.stream(hello, (chunk) => deltas.push(chunk.delta));
    expect(deltas).toEqual(['One ', 'two ', 'three ', 'four']);
    expect(completion).toEqual({
      text: 'One two three four',
      model: 'gpt-4o-mini',
      usage: { promptTokens: 9, completionTokens: 4 },
    });
    expect(server!.chatRequests()[0]).toMatchObject({
      stream: true,
      stream_options: { include_usage: true },
    });
  });

  it('counts tokens itself when a streaming server reports no usage', async () => {
    const model = await modelAgainst({ sendUsage: false, answers: ['Counted by tiktoken instead'] });
    const completion = await model.stream(hello, () => undefined);
    expect(completion.usage).toEqual({
      promptTokens: countMessageTokens('gpt-4o-mini', hello.messages),
      completionTokens: countTokens('gpt-4o-mini', 'Counted by tiktoken instead'),
    });
  });

  it('counts tokens itself when a whole response has no usage', async () => {
    const model = await modelAgainst({ sendUsage: false, answers: ['No usage here'] });
    const completion = await model.complete(hello);
    expect(completion.usage.completionTokens).toBe(countTokens('gpt-4o-mini', 'No usage here'));
  });

  it('sends json_schema response formats the way the API expects', async () => {
    const model = await modelAgainst({ answers: ['{}'] });
    await model.complete({
      ...hello,
      responseFormat: { type: 'json_schema', name: 'thing', schema: { type: 'object' }, strict: true },
    });
    expect(server!.chatRequests()[0]?.response_format).toEqual({
      type: 'json_schema',
      json_schema: { name: 'thing', schema: { type: 'object' }, strict: true },
    });
  });

  it('embeds with float vectors in input order', async () => {
    const model = await modelAgainst({}, 'text-embedding-3-small');
    const result = await model.embed(['alpha', 'beta']);
    expect(result.vectors).toEqual([testEmbedding('alpha'), testEmbedding('beta')]);
    expect(result.usage.promptTokens).toBeGreaterThan(0);
    expect(server!.requests[0]?.body).toMatchObject({ encoding_format: 'float', input: ['alpha', 'beta'] });
  });

  it('decodes base64 embeddings from a server that sends them regardless of the request', async () => {
    const model = await modelAgainst(
      { embeddingEncoding: 'base64', embeddingDimensions: 4 },
      'text-embedding-3-small',
    );
    const result = await model.embed(['alpha']);
    const expected = Array.from(new Float32Array(testEmbedding('alpha', 4)));
    expect(result.vectors).toEqual([expected]);
  });
});
