/**
 * `meta-agent serve` through the real `openai` client, as any OpenAI-compatible chat client talks to
 * it: the built CLI listens on loopback, and its agent's model is a loopback OpenAI server that echoes
 * the message tag (`msg-…`) it was last shown, so every reply says which message it answered.
 */
import { mkdtempSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  startOpenAIServer,
  type ChatAnswer,
  type ChatRequestBody,
  type OpenAIServer,
} from '../support/openai-server.js';
import { runCli } from '../support/run-cli.js';
import { startServe, type ServeProcess } from '../support/serve.js';

const ECHO = resolve('test/fixtures/serve/echo.autogram.json');
const LONG = 'It is long enough to reach the client in several pieces, as a model streams it. ';

let model: OpenAIServer;

/**
 * `You said msg-x.` and, for a tag with `long`, more; a tag with `slow` takes a second and a half, and
 * `msg-fail` is refused as a bad request.
 */
function echo(body: ChatRequestBody): ChatAnswer {
  const tags = JSON.stringify(body.messages).match(/msg-[\w-]+/g) ?? [];
  const tag = tags.at(-1) ?? 'nothing';
  if (tag === 'msg-fail') return { fault: 'bad-request', message: 'the model refuses this one' };
  const text = `You said ${tag}.${tag.includes('long') ? ` ${LONG.repeat(3).trim()}` : ''}`;
  return tag.includes('slow') ? { text, delayMs: 1500 } : text;
}

beforeAll(async () => {
  model = await startOpenAIServer({ reply: echo });
});
afterAll(async () => {
  await model?.close();
});

/** A server of the echo agent keeping its conversations in `data` (a fresh folder by default). */
function serve(
  data = freshFolder(),
  args: string[] = [],
  env: Record<string, string> = {},
): Promise<ServeProcess> {
  return startServe(
    [ECHO, '--port', '0', '--data', data, '--base-url', model.url, '--model', 'gpt-4o-mini', ...args],
    { env, cwd: data },
  );
}

function freshFolder(): string {
  return mkdtempSync(join(tmpdir(), 'meta-agent-serve-'));
}

function client(server: ServeProcess, apiKey = 'none'): OpenAI {
  return new OpenAI({ baseURL: `${server.url}/v1`, apiKey, maxRetries: 0 });
}

/** Says `text` in conversation `id` (no id: as a plain client, with `history` before it). */
async function say(
  openai: OpenAI,
  text: string,
  id?: string,
  history: OpenAI.ChatCompletionMessageParam[] = [],
) {
  const { data, response } = await openai.chat.completions
    .create(
      { model: 'echo', messages: [...history, { role: 'user', content: text }] },
      id === undefined ? {} : { headers: { 'X-Conversation-Id': id } },
    )
    .withResponse();
  return { reply: data.choices[0]!.message.content, id: response.headers.get('x-conversation-id')!, data };
}

async function conversation(server: ServeProcess, id: string, apiKey?: string) {
  const response = await fetch(`${server.url}/v1/conversations/${id}`, {
    headers: apiKey ? { Authorization: `Bearer ${apiKey}` } : {},
  });
  return { status: response.status, body: (await response.json()) as { messages: unknown[]; node: string } };
}

describe('meta-agent serve, OpenAI-compatible', () => {
  let server: ServeProcess;
  let openai: OpenAI;
  beforeAll(async () => {
    server = await serve();
    openai = client(server);
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('lists the served graph as a model', async () => {
    const models = await openai.models.list();
    expect(models.data.map((m) => m.id)).toEqual(['echo']);
  });

  it('holds a conversation of several turns, each reply a chat.completion with its usage', async () => {
    const first = await say(openai, 'msg-n1', 'plain');
    expect(first.id).toBe('plain');
    expect(first.data.object).toBe('chat.completion');
    expect(first.data.choices[0]!.finish_reason).toBe('stop');
    expect(first.data.usage!.total_tokens).toBeGreaterThan(0);
    expect(first.reply).toBe('You said msg-n1.');
    expect((await say(openai, 'msg-n2', 'plain')).reply).toBe('You said msg-n2.');
    expect((await say(openai, 'msg-n3', 'plain')).reply).toBe('You said msg-n3.');
    const { body } = await conversation(server, 'plain');
    expect(body).toMatchObject({ id: 'plain', graph: 'echo', node: 'listen', ended: false });
    expect(body.messages).toEqual([
      { role: 'user', content: 'msg-n1' },
      { role: 'assistant', content: 'You said msg-n1.' },
      { role: 'user', content: 'msg-n2' },
      { role: 'assistant', content: 'You said msg-n2.' },
      { role: 'user', content: 'msg-n3' },
      { role: 'assistant', content: 'You said msg-n3.' },
    ]);
  });

  it('streams a conversation of several turns as chat.completion.chunks, usage in the last', async () => {
    for (const tag of ['msg-long-s1', 'msg-long-s2']) {
      const stream = await openai.chat.completions.create(
        { model: 'echo', messages: [{ role: 'user', content: tag }], stream: true },
        { headers: { 'X-Conversation-Id': 'streamed' } },
      );
      const chunks: OpenAI.ChatCompletionChunk[] = [];
      for await (const chunk of stream) chunks.push(chunk);
      const text = chunks.map((chunk) => chunk.choices[0]?.delta.content ?? '').join('');
      expect(text).toBe(`You said ${tag}. ${LONG.repeat(3).trim()}`);
      expect(chunks.filter((chunk) => chunk.choices[0]?.delta.content).length).toBeGreaterThan(1);
      expect(chunks.every((chunk) => chunk.object === 'chat.completion.chunk')).toBe(true);
      expect(chunks.at(-1)!.choices[0]!.finish_reason).toBe('stop');
      expect(chunks.at(-1)!.usage!.completion_tokens).toBeGreaterThan(0);
    }
    expect((await conversation(server, 'streamed')).body.messages).toHaveLength(4);
  });

  it('keeps two conversations apart: neither the replies nor the prompts mix', async () => {
    await say(openai, 'msg-a1', 'alice');
    await say(openai, 'msg-b1', 'bob');
    const before = model.chatRequests().length;
    expect((await say(openai, 'msg-a2', 'alice')).reply).toBe('You said msg-a2.');
    const prompt = JSON.stringify(model.chatRequests().slice(before));
    expect(prompt).toContain('msg-a1');
    expect(prompt).not.toContain('msg-b1');
    expect((await conversation(server, 'bob')).body.messages).toEqual([
      { role: 'user', content: 'msg-b1' },
      { role: 'assistant', content: 'You said msg-b1.' },
    ]);
  });

  it('recognises a plain client by the history it sends back, and starts anew on a fresh one', async () => {
    const first = await say(openai, 'msg-h1');
    const history: OpenAI.ChatCompletionMessageParam[] = [
      { role: 'system', content: 'a client of its own' },
      { role: 'user', content: 'msg-h1' },
      { role: 'assistant', content: first.reply! },
    ];
    const second = await say(openai, 'msg-h2', undefined, history);
    expect(second.id).toBe(first.id);
    expect((await conversation(server, first.id)).body.messages).toHaveLength(4);
    const fresh = await say(openai, 'msg-h1');
    expect(fresh.id).not.toBe(first.id);
  });

  it('refuses a history it holds no conversation for, in OpenAI’s error shape', async () => {
    const history: OpenAI.ChatCompletionMessageParam[] = [
      { role: 'user', content: 'msg-x' },
      { role: 'assistant', content: 'a reply this server never gave' },
    ];
    const error = await say(openai, 'msg-y', undefined, history).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.NotFoundError);
    expect((error as InstanceType<typeof OpenAI.APIError>).code).toBe('conversation_not_found');
  });

  it('answers an unknown model with 404, naming the graphs it serves', async () => {
    const error = await openai.chat.completions
      .create({ model: 'nope', messages: [{ role: 'user', content: 'hi' }] })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.NotFoundError);
    expect((error as Error).message).toContain('echo');
  });

  it('answers a body that is not JSON with 400, and one of 10 MB with 413', async () => {
    const post = (body: string) =>
      fetch(`${server.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body,
      });
    const bad = await post('{"model": "echo", ');
    expect(bad.status).toBe(400);
    expect(await bad.json()).toEqual({
      error: {
        message: 'the request body is not JSON',
        type: 'invalid_request_error',
        param: null,
        code: 'invalid_json',
      },
    });
    const huge = await post(
      JSON.stringify({ model: 'echo', messages: [{ role: 'user', content: 'x'.repeat(10 * 1024 * 1024) }] }),
    );
    expect(huge.status).toBe(413);
    expect(((await huge.json()) as { error: { code: string } }).error.code).toBe('body_too_large');
    const none = await post(JSON.stringify({ model: 'echo', messages: [] }));
    expect(none.status).toBe(400);
  });

  it('makes a second message wait for the turn in flight, or refuses it with 409 when asked not to wait', async () => {
    const first = say(openai, 'msg-slow-1', 'busy');
    await new Promise((resolve) => setTimeout(resolve, 400));
    const refused = await openai.chat.completions
      .create(
        { model: 'echo', messages: [{ role: 'user', content: 'msg-refused' }] },
        { headers: { 'X-Conversation-Id': 'busy', Prefer: 'wait=0' } },
      )
      .catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(OpenAI.ConflictError);
    expect((refused as InstanceType<typeof OpenAI.APIError>).code).toBe('conversation_busy');
    const second = say(openai, 'msg-2', 'busy');
    expect((await first).reply).toBe('You said msg-slow-1.');
    expect((await second).reply).toBe('You said msg-2.');
    expect((await conversation(server, 'busy')).body.messages).toEqual([
      { role: 'user', content: 'msg-slow-1' },
      { role: 'assistant', content: 'You said msg-slow-1.' },
      { role: 'user', content: 'msg-2' },
      { role: 'assistant', content: 'You said msg-2.' },
    ]);
  });

  it('answers 429 once too many messages wait in one conversation, and answers those that wait', async () => {
    const first = say(openai, 'msg-slow-q', 'queue');
    await new Promise((resolve) => setTimeout(resolve, 400));
    const waiting = Array.from({ length: 8 }, (_, i) => say(openai, `msg-w${i}`, 'queue'));
    await new Promise((resolve) => setTimeout(resolve, 200));
    const refused = await say(openai, 'msg-over', 'queue').catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(OpenAI.RateLimitError);
    expect((await first).reply).toBe('You said msg-slow-q.');
    expect((await Promise.all(waiting)).map((answer) => answer.reply)).toEqual(
      Array.from({ length: 8 }, (_, i) => `You said msg-w${i}.`),
    );
  });

  it('answers a turn whose model fails with 500, saying why, and keeps the turns around it', async () => {
    await say(openai, 'msg-f1', 'failing');
    const failed = await say(openai, 'msg-fail', 'failing').catch((e: unknown) => e);
    expect(failed).toBeInstanceOf(OpenAI.InternalServerError);
    expect((failed as InstanceType<typeof OpenAI.APIError>).code).toBe('agent_failed');
    expect((failed as Error).message).toContain('listen');
    expect((await say(openai, 'msg-f2', 'failing')).reply).toBe('You said msg-f2.');
    expect((await conversation(server, 'failing')).body.messages).toHaveLength(4);
  });

  it('refuses what a web page elsewhere could send: a body not sent as JSON, a host that is not loopback', async () => {
    const plain = await fetch(`${server.url}/v1/conversations`, {
      method: 'POST',
      headers: { 'Content-Type': 'text/plain' },
      body: JSON.stringify({ graph: 'echo' }),
    });
    expect(plain.status).toBe(415);
    const { port } = new URL(server.url);
    const status = await new Promise<number | undefined>((resolve, reject) =>
      request({
        port: Number(port),
        host: '127.0.0.1',
        path: '/v1/models',
        headers: { Host: `rebound.example:${port}` },
      })
        .on('response', (response) => {
          response.resume();
          resolve(response.statusCode);
        })
        .on('error', reject)
        .end(),
    );
    expect(status).toBe(403);
  });

  it('answers /healthz without a key', async () => {
    const response = await fetch(`${server.url}/healthz`);
    expect(await response.json()).toEqual({ ok: true, served: ['echo'] });
  });
});

describe('meta-agent serve across a restart', () => {
  it('goes on with a conversation, by its id or its history, after SIGTERM and a new start', async () => {
    const data = freshFolder();
    const first = await serve(data);
    const opened = await say(client(first), 'msg-r1', 'kept');
    const plain = await say(client(first), 'msg-p1');
    expect((await first.stop('SIGTERM')).code).toBe(0);

    const second = await serve(data);
    try {
      expect((await say(client(second), 'msg-r2', 'kept')).reply).toBe('You said msg-r2.');
      const history: OpenAI.ChatCompletionMessageParam[] = [
        { role: 'user', content: 'msg-p1' },
        { role: 'assistant', content: plain.reply! },
      ];
      expect((await say(client(second), 'msg-p2', undefined, history)).id).toBe(plain.id);
      expect((await conversation(second, 'kept')).body.messages).toEqual([
        { role: 'user', content: 'msg-r1' },
        { role: 'assistant', content: opened.reply },
        { role: 'user', content: 'msg-r2' },
        { role: 'assistant', content: 'You said msg-r2.' },
      ]);
    } finally {
      expect((await second.stop('SIGINT')).code).toBe(130);
    }
  });
});

describe('meta-agent serve, finishing what it started', () => {
  it('lets the turn in flight finish on SIGTERM, answers it, saves it and exits 0', async () => {
    const data = freshFolder();
    const first = await serve(data);
    const answer = say(client(first), 'msg-slow-t', 'term');
    await new Promise((resolve) => setTimeout(resolve, 400));
    const stopped = first.stop('SIGTERM');
    expect((await answer).reply).toBe('You said msg-slow-t.');
    const result = await stopped;
    expect(result.code).toBe(0);
    expect(result.stderr).toContain('stopping');
    const second = await serve(data);
    try {
      expect((await conversation(second, 'term')).body.messages).toHaveLength(2);
    } finally {
      await second.stop();
    }
  });

  it('answers a turn past --deadline with 504, and keeps the reply it then gives', async () => {
    const server = await serve(freshFolder(), ['--deadline', '1']);
    try {
      const late = await say(client(server), 'msg-slow-d', 'late').catch((e: unknown) => e);
      expect(late).toBeInstanceOf(OpenAI.APIError);
      expect((late as InstanceType<typeof OpenAI.APIError>).status).toBe(504);
      await new Promise((resolve) => setTimeout(resolve, 1000));
      expect((await conversation(server, 'late')).body.messages).toEqual([
        { role: 'user', content: 'msg-slow-d' },
        { role: 'assistant', content: 'You said msg-slow-d.' },
      ]);
    } finally {
      await server.stop();
    }
  });
});

describe('meta-agent serve with API keys', () => {
  let server: ServeProcess;
  beforeAll(async () => {
    server = await serve(freshFolder(), ['--log-format', 'json'], { META_AGENT_API_KEYS: 'key-one,key-two' });
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('answers 401 without a key, or with one it does not hold', async () => {
    for (const apiKey of ['none', 'key-three']) {
      const error = await client(server, apiKey)
        .models.list()
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(OpenAI.AuthenticationError);
    }
    expect((await fetch(`${server.url}/v1/models`)).status).toBe(401);
  });

  it('shows each key its own conversations only', async () => {
    await say(client(server, 'key-one'), 'msg-secret', 'mine');
    expect((await conversation(server, 'mine', 'key-one')).status).toBe(200);
    expect((await conversation(server, 'mine', 'key-two')).status).toBe(404);
    const list = await fetch(`${server.url}/v1/conversations`, {
      headers: { Authorization: 'Bearer key-two' },
    });
    expect(JSON.stringify(await list.json())).not.toContain('mine');
    const taken = await say(client(server, 'key-two'), 'msg-steal', 'mine').catch((e: unknown) => e);
    expect(taken).toBeInstanceOf(OpenAI.ConflictError);
    const events = await fetch(`${server.url}/v1/conversations/mine/events`, {
      headers: { Authorization: 'Bearer key-two' },
    });
    expect(events.status).toBe(404);
  });

  it('logs one JSON line per request, naming the key’s owner, never the key', async () => {
    await client(server, 'key-one').models.list();
    const lines = server
      .stderr()
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines.at(-1)).toMatchObject({ method: 'GET', path: '/v1/models', status: 200 });
    expect(lines.at(-1)!.owner).toMatch(/^key-[0-9a-f]{12}$/);
    expect(server.stderr()).not.toContain('key-one');
  });
});

describe('meta-agent serve, a conversation that has ended', () => {
  it('answers its last words, then refuses further messages with 409, streamed or not', async () => {
    const server = await serve(freshFolder(), [resolve('test/fixtures/serve/farewell.autogram.json')]);
    try {
      const farewell = client(server);
      const ask = (stream: boolean) =>
        farewell.chat.completions.create(
          { model: 'farewell', messages: [{ role: 'user', content: 'msg-bye' }], stream },
          { headers: { 'X-Conversation-Id': 'over' } },
        );
      const last = (await ask(false)) as OpenAI.ChatCompletion;
      expect(last.choices[0]!.message.content).toBe('You said msg-bye.');
      for (const stream of [false, true]) {
        const refused = await ask(stream).catch((e: unknown) => e);
        expect(refused).toBeInstanceOf(OpenAI.ConflictError);
        expect((refused as InstanceType<typeof OpenAI.APIError>).code).toBe('conversation_ended');
      }
      expect((await conversation(server, 'over')).body).toMatchObject({ ended: true, node: 'bye' });
    } finally {
      await server.stop();
    }
  });
});

describe('meta-agent serve, refusing to start', () => {
  it('refuses a --host others can reach when it has no keys', async () => {
    const result = await runCli(['serve', ECHO, '--host', '0.0.0.0', '--port', '0', '--base-url', model.url]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('needs API keys');
    expect(result.stdout).toBe('');
  });
});
