/**
 * The media endpoints' client (src/llm/media.ts) against a loopback server that answers as a model
 * server may, well or badly: every failure is one line, and nothing larger than its cap is kept.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { MAX_IMAGE_BYTES, MAX_SPEECH_BYTES, OpenAIMedia, mediaFor } from '../../src/llm/media.js';

type Handler = (req: IncomingMessage, res: ServerResponse, body: Buffer) => void;

let close: (() => Promise<void>) | undefined;
afterEach(async () => {
  await close?.();
  close = undefined;
});

/** A server on 127.0.0.1 answering every request with `handler`; its base URL ends in /v1. */
async function serve(handler: Handler): Promise<string> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => handler(req, res, Buffer.concat(chunks)));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  close = () =>
    new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
}

const json = (res: ServerResponse, status: number, body: unknown) =>
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));

const signal = new AbortController().signal;
const JPEG = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 16, 0x4a, 0x46, 0x49, 0x46]);

describe('OpenAIMedia', () => {
  it('decodes a base64 image, sending the key and asking base64 of a model that needs asking', async () => {
    let seen: { auth?: string; body?: unknown } = {};
    const url = await serve((req, res, body) => {
      seen = { auth: req.headers.authorization, body: JSON.parse(body.toString()) };
      json(res, 200, { data: [{ b64_json: JPEG.toString('base64') }] });
    });
    const media = new OpenAIMedia(url, 'sk-test', {
      image: 'dall-e-3',
      transcription: 'whisper-1',
      speech: 'tts-1',
      voice: 'alloy',
    });
    const image = await media.generateImage('a fox', signal);
    expect(image.extension).toBe('jpg');
    expect(Buffer.from(image.bytes)).toEqual(JPEG);
    expect(seen).toEqual({
      auth: 'Bearer sk-test',
      body: { model: 'dall-e-3', prompt: 'a fox', n: 1, response_format: 'b64_json' },
    });
  });

  it('refuses an answer that is a URL, or bytes that are no image', async () => {
    let answer: unknown = { data: [{ url: 'https://images.example/1.png' }] };
    const url = await serve((_req, res) => json(res, 200, answer));
    const media = new OpenAIMedia(url, undefined);
    await expect(media.generateImage('a fox', signal)).rejects.toThrow(
      `${url}/images/generations answered with a URL instead of the image itself (b64_json was asked for)`,
    );
    answer = { data: [{ b64_json: Buffer.from('<script>').toString('base64') }] };
    await expect(media.generateImage('a fox', signal)).rejects.toThrow(
      'answered with data that is not a PNG, JPEG or WebP image',
    );
  });

  it("says the server's own error message in one line", async () => {
    const url = await serve((_req, res) =>
      json(res, 400, { error: { message: 'Your prompt\nwas rejected by the safety system.' } }),
    );
    await expect(new OpenAIMedia(url, undefined).generateImage('x', signal)).rejects.toThrow(
      `${url}/images/generations refused to generate images: HTTP 400: Your prompt was rejected by the safety system.`,
    );
  });

  it('stops reading an image or speech answer past its cap', async () => {
    const url = await serve((req, res) => {
      res.writeHead(200, { 'content-type': req.url?.includes('speech') ? 'audio/wav' : 'application/json' });
      // Sent in pieces without a declared length, as a runaway server would.
      const piece = Buffer.alloc(1024 * 1024, 65);
      const write = (left: number): void => {
        if (left === 0 || res.destroyed) return void res.end();
        res.write(piece, () => write(left - 1));
      };
      write(Math.ceil(MAX_IMAGE_BYTES / piece.length) * 2);
    });
    const media = new OpenAIMedia(url, undefined);
    await expect(media.generateImage('x', signal)).rejects.toThrow(
      /the response exceeded \d+ bytes, so it was not read/,
    );
    await expect(media.speech('hello', signal)).rejects.toThrow(
      `the response exceeded ${MAX_SPEECH_BYTES} bytes, so it was not read`,
    );
  });

  it('refuses a recording over 25 MiB before sending anything', async () => {
    let requests = 0;
    const url = await serve((_req, res) => {
      requests += 1;
      json(res, 200, { text: 'never' });
    });
    await expect(
      new OpenAIMedia(url, undefined).transcribe(new Uint8Array(26 * 1024 * 1024), 'long.mp3', signal),
    ).rejects.toThrow('the audio file is larger than 25 MiB, more than transcription takes');
    expect(requests).toBe(0);
  });
});

describe('mediaFor', () => {
  it("uses the chatbot's server and key, with the model names of the environment", () => {
    const media = mediaFor(
      { provider: 'openai', baseUrl: 'http://127.0.0.1:1/v1', apiKey: 'k', model: 'm', source: 'test' },
      { META_AGENT_IMAGE_MODEL: 'flux', META_AGENT_SPEECH_VOICE: 'nova' },
    );
    expect(media?.baseUrl).toBe('http://127.0.0.1:1/v1');
    expect(media?.models).toEqual({
      image: 'flux',
      transcription: 'whisper-1',
      speech: 'tts-1',
      voice: 'nova',
    });
  });

  it('has none for a scripted chatbot, or a server a graph file chose', () => {
    expect(mediaFor({ provider: 'scripted', script: 'r.json', model: 'scripted', source: 'test' }, {})).toBe(
      undefined,
    );
    expect(
      mediaFor(
        { provider: 'openai', baseUrl: 'http://x/v1', model: 'm', source: 'graph', urlFromGraph: true },
        {},
      ),
    ).toBe(undefined);
  });
});
