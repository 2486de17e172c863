import { afterEach, describe, expect, it } from 'vitest';
import { OpenAIModel } from '../../src/llm/openai.js';
import type { OpenAIModelOptions } from '../../src/llm/openai.js';
import { closedUrl, startOpenAIServer } from '../support/openai-server.js';
import { modelFailure } from '../support/model-failure.js';
import type { OpenAIServer, OpenAIServerOptions } from '../support/openai-server.js';

let server: OpenAIServer | undefined;

afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function modelAgainst(
  options: OpenAIServerOptions,
  model: Partial<OpenAIModelOptions> = {},
): Promise<OpenAIModel> {
  server = await startOpenAIServer(options);
  return new OpenAIModel({ baseUrl: server.url, model: 'gpt-4o-mini', maxRetries: 1, ...model });
}

const hello = { messages: [{ role: 'user' as const, content: 'Say hello' }] };

describe('model call failures', () => {
  it('retries once after a 429 with retry-after and then answers', async () => {
    const model = await modelAgainst({
      answers: [{ fault: 'rate-limit', retryAfterSeconds: 0 }, 'Recovered'],
    });
    expect((await model.complete(hello)).text).toBe('Recovered');
    expect(server!.chatRequests()).toHaveLength(2);
  });

  it('reports rate limiting that outlasts the retries', async () => {
    const model = await modelAgainst({ reply: () => ({ fault: 'rate-limit' }) });
    const error = await modelFailure(model.complete(hello));
    expect(error.kind).toBe('rate-limited');
    expect(error.message).toBe(
      `the model server at ${server!.url} is still rate-limiting after 1 retry: Rate limit reached for requests`,
    );
    expect(server!.chatRequests()).toHaveLength(2);
  });

  it('reports a server error that outlasts the retries', async () => {
    const model = await modelAgainst({
      reply: () => ({ fault: 'server-error', status: 503, retryAfterSeconds: 0 }),
    });
    const error = await modelFailure(model.complete(hello));
    expect(error.kind).toBe('server');
    expect(error.message).toMatch(/failed \(503\) after 1 retry: The server had an error/);
  });

  it('says the server rejected the key on 401 and points at OPENAI_API_KEY', async () => {
    const model = await modelAgainst({ apiKey: 'sk-right' }, { apiKey: 'sk-wrong' });
    const error = await modelFailure(model.complete(hello));
    expect(error.message).toBe(`the model server at ${server!.url} rejected the API key (401)`);
    expect(error.hint).toContain('OPENAI_API_KEY');
    expect(server!.requests).toHaveLength(1);
  });

  it('names the model and the URL when the model is unknown, pointing at doctor', async () => {
    const model = await modelAgainst({ rejectUnknownModels: true }, { model: 'gpt-99' });
    const error = await modelFailure(model.complete(hello));
    expect(error.kind).toBe('unknown-model');
    expect(error.message).toContain(`model "gpt-99" is not available at ${server!.url}`);
    expect(error.hint).toContain('meta-agent doctor');
  });

  it('says no server answered when nothing listens at the URL', async () => {
    const url = await closedUrl();
    const model = new OpenAIModel({ baseUrl: url, model: 'gpt-4o-mini', maxRetries: 0 });
    const error = await modelFailure(model.complete(hello));
    expect(error.kind).toBe('unreachable');
    expect(error.message).toBe(`no model server answered at ${url}`);
    expect(error.hint).toContain('OPENAI_BASE_URL');
    expect(error.hint).toContain('--base-url');
  });

  it('gives up on a slow server after the timeout, saying how long it waited', async () => {
    const model = await modelAgainst(
      { answers: [{ text: 'late', delayMs: 5_000 }] },
      { timeoutMs: 200, maxRetries: 0 },
    );
    const error = await modelFailure(model.complete(hello));
    expect(error.kind).toBe('timeout');
    expect(error.message).toBe(`the model server at ${server!.url} did not answer within 0.2 s`);
    expect(error.hint).toContain('META_AGENT_TIMEOUT_MS');
  });

  it('reports a body that is not JSON as a malformed response', async () => {
    const model = await modelAgainst({ answers: [{ fault: 'malformed' }] });
    const error = await modelFailure(model.complete(hello));
    expect(error.kind).toBe('malformed');
    expect(error.message).toBe(`the model server at ${server!.url} sent a malformed response`);
  });

  it('reports a stream event that is not JSON as a malformed response', async () => {
    const model = await modelAgainst({ answers: [{ fault: 'malformed' }] });
    const error = await modelFailure(model.stream(hello, () => undefined));
    expect(error.kind).toBe('malformed');
  });

  it('reports a connection dropped in the middle of a stream', async () => {
    const model = await modelAgainst({ answers: [{ fault: 'drop' }] });
    const deltas: string[] = [];
    const error = await modelFailure(model.stream(hello, (chunk) => deltas.push(chunk.delta)));
    expect(error.kind).toBe('connection');
    expect(error.message).toBe(
      `the connection to the model server at ${server!.url} dropped in the middle of a response`,
    );
    expect(deltas).toEqual(['Partial ']);
  });

  it('reports an error event in the middle of a stream as a server failure with its message', async () => {
    const model = await modelAgainst({ answers: [{ fault: 'stream-error', message: 'CUDA out of memory' }] });
    const error = await modelFailure(model.stream(hello, () => undefined));
    expect(error.kind).toBe('server');
    expect(error.message).toBe(
      `the model server at ${server!.url} reported an error mid-response: CUDA out of memory`,
    );
  });

  it('reports a connection dropped in the middle of a whole response', async () => {
    const model = await modelAgainst({ answers: [{ fault: 'drop' }] }, { maxRetries: 0 });
    const error = await modelFailure(model.complete(hello));
    expect(error.kind).toBe('connection');
  });

  it('reports a rejected request with the server message', async () => {
    const model = await modelAgainst({
      answers: [{ fault: 'bad-request', message: 'temperature must be <= 2' }],
    });
    const error = await modelFailure(model.complete(hello));
    expect(error.kind).toBe('bad-request');
    expect(error.message).toBe(
      `the model server at ${server!.url} rejected the request for "gpt-4o-mini": temperature must be <= 2`,
    );
  });

  it('maps embedding failures the same way', async () => {
    const model = await modelAgainst({ embeddingFaults: [{ fault: 'unauthorized' }] });
    const error = await modelFailure(model.embed(['x']));
    expect(error.kind).toBe('auth');
  });
});
