/**
 * Model servers that answer, but not as a client can live with (issue 16): a body that is not JSON,
 * one that trickles or never ends, one too large to hold, a redirect to another origin. Each must end
 * the call with one clear ModelError, in bounded time and memory, with nothing sent anywhere else.
 */
import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { classify } from '../../src/llm/classify.js';
import { listModels, probeLocalServers } from '../../src/llm/discovery.js';
import { OpenAIModel } from '../../src/llm/openai.js';
import type { OpenAIModelOptions } from '../../src/llm/openai.js';
import { generateObject } from '../../src/llm/structured.js';
import { startOpenAIServer } from '../support/openai-server.js';
import type { ChatAnswer, OpenAIServer } from '../support/openai-server.js';
import { modelFailure } from '../support/model-failure.js';
import { runCli } from '../support/run-cli.js';

const closers: Array<() => Promise<void>> = [];

afterEach(async () => {
  vi.restoreAllMocks();
  await Promise.all(closers.splice(0).map((close) => close()));
});

async function serve(...answers: ChatAnswer[]): Promise<OpenAIServer> {
  const server = await startOpenAIServer({ answers });
  closers.push(() => server.close());
  return server;
}

function modelFor(server: OpenAIServer, options: Partial<OpenAIModelOptions> = {}): OpenAIModel {
  return new OpenAIModel({ baseUrl: server.url, model: 'gpt-4o-mini', apiKey: 'sk-secret', ...options });
}

/** A bare server for what the OpenAI test server does not fake (model lists); its URL ends in /v1. */
async function rawServer(handle: (req: IncomingMessage, res: ServerResponse) => void): Promise<string> {
  const server = createServer((req, res) => {
    res.on('error', () => undefined);
    handle(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
}

const hello = { messages: [{ role: 'user' as const, content: 'Say hello' }] };

describe('a server that answers 200 with something other than JSON', () => {
  it('fails a whole response that is an HTML page', async () => {
    const server = await serve({ fault: 'html' });
    const error = await modelFailure(modelFor(server).complete(hello));
    expect(error.kind).toBe('malformed');
    expect(error.message).toContain(`the model server at ${server.url} sent a malformed response`);
  });

  it('fails a stream that is an HTML page instead of an empty success', async () => {
    const server = await serve({ fault: 'html' });
    const error = await modelFailure(modelFor(server).stream(hello, () => undefined));
    expect(error.kind).toBe('malformed');
    expect(error.message).toBe(
      `the model server at ${server.url} sent a malformed response (the stream ended with no text and no finish_reason)`,
    );
  });

  it('fails a stream whose events carry no answer, and takes an empty one that finishes', async () => {
    const url = await rawServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(
        'data: {"id": "x", "choices": []}\n\ndata: {"id": "x", "choices": [{"delta": {}}]}\n\ndata: [DONE]\n\n',
      );
    });
    const empty = new OpenAIModel({ baseUrl: url, model: 'gpt-4o-mini' });
    expect((await modelFailure(empty.stream(hello, () => undefined))).kind).toBe('malformed');
    const server = await serve('');
    expect((await modelFor(server).stream(hello, () => undefined)).text).toBe('');
  });

  it('fails a stream of events that are not JSON without the SDK logging to the console', async () => {
    const logged = ['error', 'warn', 'info', 'debug', 'log'].map((level) =>
      vi.spyOn(console, level as 'error').mockImplementation(() => undefined),
    );
    const server = await serve({ fault: 'malformed' });
    const error = await modelFailure(modelFor(server).stream(hello, () => undefined));
    expect(error.kind).toBe('malformed');
    for (const spy of logged) expect(spy).not.toHaveBeenCalled();
  });

  it('fails classification and structured output the same way', async () => {
    const server = await serve({ fault: 'html' }, { fault: 'html' });
    const model = modelFor(server, { maxRetries: 0 });
    const classified = classify(model, { prompt: 'Which?', choices: ['a', 'b'] });
    expect((await modelFailure(classified)).kind).toBe('malformed');
    const generated = generateObject(model, z.object({ name: z.string() }), hello.messages);
    expect((await modelFailure(generated)).kind).toBe('malformed');
  });
});

describe('a server that trickles', () => {
  it('gives up on a stream that stops sending for longer than the timeout', async () => {
    const server = await serve({ fault: 'trickle', intervalMs: 2_000 });
    const error = await modelFailure(modelFor(server, { timeoutMs: 200 }).stream(hello, () => undefined));
    expect(error.kind).toBe('timeout');
    expect(error.message).toBe(
      `the model server at ${server.url} sent no part of an answer for 0.2 s, only keep-alives, so the call was stopped`,
    );
    expect(error.hint).toContain('META_AGENT_TIMEOUT_MS');
  });

  it('gives up on a whole response that stops sending for longer than the timeout', async () => {
    const server = await serve({ fault: 'trickle', intervalMs: 2_000 });
    const error = await modelFailure(modelFor(server, { timeoutMs: 200, maxRetries: 0 }).complete(hello));
    expect(error.kind).toBe('timeout');
    expect(error.message).toContain(`the model server at ${server.url}`);
  });

  it('gives up on a stream of keep-alive comments after the timeout, not at the deadline', async () => {
    const server = await serve({ fault: 'keep-alive', intervalMs: 50 });
    const error = await modelFailure(modelFor(server, { timeoutMs: 500 }).stream(hello, () => undefined));
    expect(error.kind).toBe('timeout');
    expect(error.message).toBe(
      `the model server at ${server.url} sent no part of an answer for 0.5 s, only keep-alives, so the call was stopped`,
    );
    await vi.waitFor(() => expect(server.inFlight).toBe(0));
  }, 10_000);

  it('stops a stream that keeps trickling past the deadline', async () => {
    const server = await serve({ fault: 'trickle', intervalMs: 50 });
    const model = modelFor(server, { timeoutMs: 1_000, deadlineMs: 600 });
    const error = await modelFailure(model.stream(hello, () => undefined));
    expect(error.kind).toBe('timeout');
    expect(error.message).toBe(
      `the model server at ${server.url} did not finish answering within 0.6 s, so the call was stopped`,
    );
    expect(error.hint).toContain('META_AGENT_DEADLINE_MS');
    await vi.waitFor(() => expect(server.inFlight).toBe(0));
  });

  it('stops a whole response that keeps trickling past the deadline', async () => {
    const server = await serve({ fault: 'trickle', intervalMs: 50 });
    const model = modelFor(server, { timeoutMs: 2_000, deadlineMs: 600 });
    const error = await modelFailure(model.complete(hello));
    expect(error.message).toContain('did not finish answering within 0.6 s');
    await vi.waitFor(() => expect(server.inFlight).toBe(0));
  });

  it('counts the retries inside the deadline', async () => {
    const server = await startOpenAIServer({ reply: () => ({ text: 'late', delayMs: 400 }) });
    closers.push(() => server.close());
    const model = modelFor(server, { timeoutMs: 300, maxRetries: 5, deadlineMs: 700 });
    const error = await modelFailure(model.complete(hello));
    expect(error.message).toContain('did not finish answering within 0.7 s');
    expect(server.chatRequests().length).toBeLessThan(6);
  });
});

describe('a stream that never ends', () => {
  it('is stopped at the deadline, keeping the deltas already shown, and the request is closed', async () => {
    const server = await serve({ fault: 'endless', intervalMs: 20 });
    const deltas: string[] = [];
    const model = modelFor(server, { deadlineMs: 500 });
    const error = await modelFailure(model.stream(hello, (chunk) => deltas.push(chunk.delta)));
    expect(error.kind).toBe('timeout');
    expect(error.message).toContain('did not finish answering within 0.5 s');
    expect(deltas.length).toBeGreaterThan(0);
    await vi.waitFor(() => expect(server.inFlight).toBe(0));
  });

  it('still ends when the caller aborts, with the abort', async () => {
    const server = await serve({ fault: 'endless', intervalMs: 20 });
    const controller = new AbortController();
    const streamed = modelFor(server).stream({ ...hello, signal: controller.signal }, () =>
      controller.abort(),
    );
    await expect(streamed).rejects.toMatchObject({ name: 'AbortError' });
  });
});

describe('a server that sends too much', () => {
  const cap = 256 * 1024;

  it('cuts off a whole response past the cap', async () => {
    const server = await serve({ fault: 'huge', bytes: 4 * 1024 * 1024 });
    const error = await modelFailure(modelFor(server, { maxResponseBytes: cap }).complete(hello));
    expect(error.kind).toBe('too-large');
    expect(error.message).toBe(
      `the model server at ${server.url} sent a response larger than 256 KiB; it was cut off`,
    );
    await vi.waitFor(() => expect(server.inFlight).toBe(0));
  });

  it('cuts off a stream past the cap, with no retry', async () => {
    const server = await serve({ fault: 'huge', bytes: 4 * 1024 * 1024 });
    const error = await modelFailure(
      modelFor(server, { maxResponseBytes: cap }).stream(hello, () => undefined),
    );
    expect(error.kind).toBe('too-large');
    expect(server.chatRequests()).toHaveLength(1);
  });

  it('refuses a declared length past the cap before reading the body', async () => {
    const server = await serve({ fault: 'huge', bytes: 4 * 1024 * 1024, declareLength: true });
    const error = await modelFailure(modelFor(server, { maxResponseBytes: cap }).complete(hello));
    expect(error.kind).toBe('too-large');
  });

  it('takes an answer just under the cap', async () => {
    const server = await serve({ fault: 'huge', bytes: 128 * 1024 });
    const completion = await modelFor(server, { maxResponseBytes: cap }).complete(hello);
    expect(completion.text).toHaveLength(128 * 1024);
  });

  it('cuts off an answer past the default cap of 32 MiB', async () => {
    const server = await serve({ fault: 'huge', bytes: 40 * 1024 * 1024 });
    const error = await modelFailure(modelFor(server).complete(hello));
    expect(error.message).toContain('larger than 32 MiB');
  });
});

describe('a redirect', () => {
  it('to another origin is not followed: the other server gets no request, prompt or key', async () => {
    const elsewhere = await serve('You should not see this');
    for (const status of [307, 308, 302, 301]) {
      const server = await serve({
        fault: 'redirect',
        status,
        location: `${elsewhere.url}/chat/completions`,
      });
      const error = await modelFailure(modelFor(server).complete(hello));
      expect(error.kind).toBe('redirect');
      expect(error.message).toBe(
        `the model server at ${server.url} redirected to another origin (${elsewhere.url}/chat/completions); ` +
          'not following, so the prompt and key were not sent there',
      );
    }
    const server = await serve({ fault: 'redirect', location: `${elsewhere.url}/chat/completions` });
    const error = await modelFailure(modelFor(server).stream(hello, () => undefined));
    expect(error.kind).toBe('redirect');
    expect(elsewhere.requests).toEqual([]);
  });

  it('within the same origin is followed, with the same request', async () => {
    const server = await serve({ fault: 'redirect', location: '/v1/chat/completions?moved=1' }, 'Moved here');
    const completion = await modelFor(server).complete(hello);
    expect(completion.text).toBe('Moved here');
    const [first, second] = server.requests;
    expect(second?.body).toEqual(first?.body);
    expect(second?.headers.authorization).toBe('Bearer sk-secret');
  });

  it('within the same origin is refused after a few hops', async () => {
    const server = await startOpenAIServer({
      reply: () => ({ fault: 'redirect', location: '/v1/chat/completions' }),
    });
    closers.push(() => server.close());
    const error = await modelFailure(modelFor(server).complete(hello));
    expect(error.kind).toBe('redirect');
    expect(error.message).toContain('redirected more than 5 times');
    expect(server.chatRequests()).toHaveLength(6);
  });
});

describe('listing and probing models', () => {
  it('refuses a model list redirected to another origin', async () => {
    const elsewhere = await serve();
    const url = await rawServer((_req, res) => {
      res.writeHead(302, { location: `${elsewhere.url}/models` });
      res.end();
    });
    const error = await modelFailure(listModels(url, { apiKey: 'sk-secret' }));
    expect(error.kind).toBe('redirect');
    expect(elsewhere.requests).toEqual([]);
  });

  it('cuts off an endless model list', async () => {
    const url = await rawServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"data": [');
      const piece = '{"id": "m"},'.repeat(10_000);
      const more = () => {
        while (!res.destroyed && res.write(piece));
        if (!res.destroyed) res.once('drain', more);
      };
      more();
    });
    const error = await modelFailure(listModels(url));
    expect(error.kind).toBe('too-large');
  });

  it('finds no server where one trickles or sends too much', async () => {
    const trickling = await rawServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{');
    });
    const huge = await rawServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': 1024 ** 3 });
      res.write('{');
    });
    expect(await probeLocalServers([trickling, huge])).toBeUndefined();
  });
});

describe('the CLI against a hostile server', () => {
  it('exits 1 with one clear line when a 200 answer is not JSON', async () => {
    const server = await serve({ fault: 'html' });
    const result = await runCli(['ask', 'hi', '--base-url', server.url, '--model', 'gpt-4o-mini']);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toBe(
      `error: the model server at ${server.url} sent a malformed response (the stream ended with no text and no finish_reason)\n` +
        `hint: check that ${server.url} speaks the OpenAI API (the base URL usually ends in /v1)\n`,
    );
  });

  it('prints only its own error for a stream of events that are not JSON', async () => {
    const server = await serve({ fault: 'malformed' });
    const result = await runCli(['ask', 'hi', '--base-url', server.url, '--model', 'gpt-4o-mini']);
    expect(result.code).toBe(1);
    expect(result.stderr).not.toMatch(/Could not parse|From chunk/);
    expect(result.stderr.split('\n')[0]).toBe(
      `error: the model server at ${server.url} sent a malformed response`,
    );
  });

  it('ends with an error instead of hanging on a trickling server', async () => {
    const server = await serve({ fault: 'trickle', intervalMs: 2_000 });
    const result = await runCli(['ask', 'hi', '--model', 'gpt-4o-mini'], {
      env: { OPENAI_BASE_URL: server.url, META_AGENT_TIMEOUT_MS: '300' },
    });
    expect(result.code).toBe(1);
    expect(result.stderr.split('\n')[0]).toBe(
      `error: the model server at ${server.url} sent no part of an answer for 0.3 s, only keep-alives, so the call was stopped`,
    );
  });

  it('ends at META_AGENT_TIMEOUT_MS, not the deadline, on a server that sends only keep-alives', async () => {
    const server = await serve({ fault: 'keep-alive', intervalMs: 50 });
    const result = await runCli(['ask', 'hi', '--model', 'gpt-4o-mini'], {
      env: { OPENAI_BASE_URL: server.url, META_AGENT_TIMEOUT_MS: '500' },
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      `error: the model server at ${server.url} sent no part of an answer for 0.5 s, only keep-alives, so the call was stopped\n` +
        'hint: check the server log; raise META_AGENT_TIMEOUT_MS (milliseconds) if the model is only slow to start\n',
    );
  }, 10_000);

  it('ends an endless stream at META_AGENT_DEADLINE_MS', async () => {
    const server = await serve({ fault: 'endless', intervalMs: 20 });
    const result = await runCli(['ask', 'hi', '--model', 'gpt-4o-mini'], {
      env: { OPENAI_BASE_URL: server.url, META_AGENT_DEADLINE_MS: '500' },
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(
      `error: the model server at ${server.url} did not finish answering within 0.5 s, so the call was stopped\n`,
    );
  });

  it('rejects a META_AGENT_DEADLINE_MS that is not a positive number as a usage error', async () => {
    const server = await serve();
    const result = await runCli(['ask', 'hi', '--model', 'gpt-4o-mini'], {
      env: { OPENAI_BASE_URL: server.url, META_AGENT_DEADLINE_MS: '-1' },
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('META_AGENT_DEADLINE_MS must be a positive number of milliseconds');
  });
});
