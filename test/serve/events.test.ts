/**
 * A served conversation's event stream: the events `chat --json` prints, as SSE, resumable with
 * `Last-Event-ID`; and a conversation opened natively, with the agent's opening turn.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOpenAIServer, type OpenAIServer } from '../support/openai-server.js';
import { startServe, type ServeProcess } from '../support/serve.js';

const ECHO = resolve('test/fixtures/serve/echo.autogram.json');

interface SseEvent {
  id?: string;
  event?: string;
  data: string;
}

/** The first events of `path`'s stream, until `enough` says so; the stream is then closed. */
async function readEvents(
  url: string,
  headers: Record<string, string>,
  enough: (events: SseEvent[]) => boolean,
): Promise<SseEvent[]> {
  const controller = new AbortController();
  const response = await fetch(url, { headers, signal: controller.signal });
  expect(response.headers.get('content-type')).toContain('text/event-stream');
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  const events: SseEvent[] = [];
  let buffer = '';
  while (!enough(events)) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += value;
    let end: number;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const event: SseEvent = { data: '' };
      for (const line of block.split('\n')) {
        const [field, ...rest] = line.split(':');
        const value = rest.join(':').replace(/^ /, '');
        if (field === 'id') event.id = value;
        else if (field === 'event') event.event = value;
        else if (field === 'data') event.data += value;
      }
      if (event.data) events.push(event);
    }
  }
  controller.abort();
  return events;
}

describe('a served conversation’s events', () => {
  let model: OpenAIServer;
  let server: ServeProcess;
  beforeAll(async () => {
    model = await startOpenAIServer({ defaultAnswer: 'Hello there.' });
    const data = mkdtempSync(join(tmpdir(), 'meta-agent-serve-events-'));
    server = await startServe(
      [ECHO, '--port', '0', '--data', data, '--base-url', model.url, '--model', 'gpt-4o-mini'],
      { cwd: data },
    );
  });
  afterAll(async () => {
    await server?.stop();
    await model?.close();
  });

  it('opens a conversation with the agent’s opening turn, then streams its events from where a client left off', async () => {
    const opened = await fetch(`${server.url}/v1/conversations`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ graph: 'echo', id: 'watched' }),
    });
    expect(opened.status).toBe(201);
    expect(await opened.json()).toMatchObject({ id: 'watched', node: 'listen', reply: 'Hello there.' });

    const stream = `${server.url}/v1/conversations/watched/events`;
    const all = await readEvents(stream, {}, (events) => events.some((e) => e.event === 'reply'));
    expect(all.map((e) => e.event)).toEqual(
      expect.arrayContaining(['run.started', 'transition', 'node.entered', 'model.call', 'reply']),
    );
    expect(JSON.parse(all.find((e) => e.event === 'reply')!.data)).toEqual({
      type: 'reply',
      node: 'listen',
      text: 'Hello there.',
    });

    await fetch(`${server.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-Conversation-Id': 'watched' },
      body: JSON.stringify({ model: 'echo', messages: [{ role: 'user', content: 'hi' }] }),
    });
    const lastSeen = all.find((e) => e.event === 'reply')!.id!;
    const missed = await readEvents(stream, { 'Last-Event-ID': lastSeen }, (events) =>
      events.some((e) => e.event === 'reply'),
    );
    expect(missed[0]).toMatchObject({ event: 'user', data: JSON.stringify({ type: 'user', text: 'hi' }) });
    expect(missed.map((e) => e.id)).not.toContain(lastSeen);
  });

  it('refuses to open a conversation with a graph it does not serve', async () => {
    const response = await fetch(`${server.url}/v1/conversations`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ graph: 'nope' }),
    });
    expect(response.status).toBe(404);
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe('model_not_found');
  });
});
