/**
 * A real HTTP server on 127.0.0.1 (random port) that speaks the OpenAI protocol, for tests that must go
 * through the real openai SDK: chat completions (whole and streamed as SSE with a final usage chunk),
 * native tool calls (`tool_calls`, whole and streamed in pieces), embeddings (float and base64), the
 * model list, and, when `media` says so, images, transcription and speech. Answers are programmable, every request is logged, and faults can be injected per call.
 *
 * ```ts
 * const server = await startOpenAIServer({ answers: ['Hello!', { fault: 'rate-limit' }] });
 * const model = new OpenAIModel({ baseUrl: server.url, model: 'gpt-4o-mini' });
 * // …
 * expect(server.chatRequests()[0]?.max_tokens).toBe(1);
 * await server.close();
 * ```
 *
 * Answer order for a chat completion: the queue (`answers`, `enqueue`) first, then `reply`, then
 * `defaultAnswer`. A `{ toolCalls }` answer calls tools instead of (or after) answering in text:
 *
 * ```ts
 * server.enqueue({ toolCalls: [{ name: 'read_file', arguments: { path: 'notes.md' } }] });
 * ```
 *
 * `rejectTools` makes it a server without native tool calls: 400 to any request that offers `tools`.
 */
import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { countMessageTokens, countTokens, tokenText } from '../../src/llm/tokens.js';

/** The body of a chat completion request, as the server parsed it. */
export interface ChatRequestBody {
  model: string;
  messages: { role: string; content: string }[];
  max_tokens?: number;
  max_completion_tokens?: number;
  temperature?: number;
  stop?: string | string[];
  logit_bias?: Record<string, number>;
  response_format?: { type: string; json_schema?: { name: string; schema: unknown; strict?: boolean } };
  stream?: boolean;
  stream_options?: { include_usage?: boolean };
  /** The functions offered, in OpenAI's shape. */
  tools?: ChatRequestTool[];
  [field: string]: unknown;
}

/** One entry of a request's `tools`. */
export interface ChatRequestTool {
  type: string;
  function: { name: string; description?: string; parameters?: Record<string, unknown> };
}

/** One tool call the server answers with. */
export interface ToolCallAnswer {
  name: string;
  /** JSON text, sent as is, or an object, sent as its JSON text. */
  arguments: string | Record<string, unknown>;
  /** Default `call_test_<completion>_<position>`. */
  id?: string;
}

/** The default message of `rejectTools: true`, as Ollama words it for a model without tool calling. */
export function noToolsMessage(model: string): string {
  return `registry.ollama.ai/library/${model} does not support tools`;
}

/** A failure to inject instead of an answer. */
export type Fault =
  /** 429 with a `retry-after` header (seconds, default 0 so retries are immediate). */
  | { fault: 'rate-limit'; retryAfterSeconds?: number }
  /** 5xx (default 500); `retryAfterSeconds` adds a `retry-after` header to skip the SDK's backoff. */
  | { fault: 'server-error'; status?: number; retryAfterSeconds?: number }
  /** 401 invalid_api_key. */
  | { fault: 'unauthorized' }
  /** 404 model_not_found. */
  | { fault: 'unknown-model' }
  /** 400 (or 422, as pydantic-based servers answer) with the given message. */
  | { fault: 'bad-request'; message?: string; status?: 400 | 422 }
  /** 200 with a body that is not JSON (for a stream: an SSE event that is not JSON). */
  | { fault: 'malformed' }
  /** Sends part of the response, then destroys the connection. */
  | { fault: 'drop' }
  /**
   * A stream that starts, then sends an `error` event, as vLLM and llama.cpp do when generation
   * fails; a whole response gets a plain 500 instead.
   */
  | { fault: 'stream-error'; message?: string }
  /** 200, then one byte (a space) every `intervalMs` (default 200) until the client goes away. */
  | { fault: 'trickle'; intervalMs?: number }
  /**
   * 200, then a keep-alive every `intervalMs` (default 100) until the client goes away, as servers send
   * while a model is busy: an SSE comment (`: keep-alive`) for a stream, a newline for a whole response.
   */
  | { fault: 'keep-alive'; intervalMs?: number }
  /**
   * A stream that never ends: a content chunk every `intervalMs` (default 20) until the client goes
   * away; a whole response gets the start of its JSON, then a trickle of spaces at that pace.
   */
  | { fault: 'endless'; intervalMs?: number }
  /**
   * A valid answer whose text is `bytes` long, sent as it is generated (the server never holds it all):
   * a whole response without content-length unless `declareLength`, a stream in 64 KiB chunks.
   */
  | { fault: 'huge'; bytes: number; declareLength?: boolean }
  /** 200 with an HTML page, as a proxy or a web server at the wrong URL answers, stream or not. */
  | { fault: 'html' }
  /** A redirect (default 307) to `location`, stream or not. */
  | { fault: 'redirect'; location: string; status?: number };

/**
 * A tool-call answer whose `message.tool_calls` (a stream: one chunk's `delta.tool_calls`) is
 * `toolCalls` exactly as given, however wrong its shape (chat completions only).
 */
export interface MalformedToolCalls {
  fault: 'malformed-tool-calls';
  toolCalls: unknown;
}

/** What the server answers to one chat completion. */
export type ChatAnswer =
  | string
  | ((Fault | MalformedToolCalls) & { delayMs?: number })
  | {
      text: string;
      /** Override the usage reported; `false` reports none (the client must count tokens itself). */
      usage?: { promptTokens: number; completionTokens: number } | false;
      /** Wait this long before answering (on top of the server's `latencyMs`). */
      delayMs?: number;
    }
  | {
      /**
       * Calls these tools: `message.tool_calls` with finish_reason `tool_calls`; streamed, each call's
       * id and name come first and its arguments follow in a few pieces, as OpenAI sends them.
       */
      toolCalls: ToolCallAnswer[];
      /** Text the model says before calling (`content`; none by default: `null`). */
      text?: string;
      /** As for a text answer; by default the text and each call's name and arguments are counted. */
      usage?: { promptTokens: number; completionTokens: number } | false;
      /** Wait this long before answering (on top of the server's `latencyMs`). */
      delayMs?: number;
      /**
       * `ollama` streams every call whole in one piece, all at `index` 0 with their own ids, as Ollama
       * does; default `openai`.
       */
      streamLike?: 'openai' | 'ollama';
    };

/** One request as received, in arrival order. */
export interface ReceivedRequest {
  method: string;
  /** Path without the query string, e.g. `/v1/chat/completions`. */
  path: string;
  headers: Record<string, string | string[] | undefined>;
  /** Parsed JSON body (undefined for GET or an unparsable body). */
  body: unknown;
  /** The body's bytes as sent (a multipart upload's, say). */
  raw: Buffer;
  /** Requests being handled when this one arrived, itself included. */
  inFlight: number;
  /**
   * For a chat completion, its round: one more than the highest round among the chat completions
   * answered before it arrived. Calls a client makes at once share a round; a call made after another's
   * answer is in the next, so the highest round is the number of round trips a client waited for in a
   * row, whatever the latency.
   */
  round: number;
}

export interface OpenAIServerOptions {
  /** Answers consumed in order by chat completions before `reply` is consulted. */
  answers?: ChatAnswer[];
  /** Computes an answer for each chat completion once the queue is empty; undefined: the default. */
  reply?: (
    body: ChatRequestBody,
    request: ReceivedRequest,
  ) => ChatAnswer | undefined | Promise<ChatAnswer | undefined>;
  /** Answer when neither the queue nor `reply` gives one. Default `Hello from the test server.` */
  defaultAnswer?: string;
  /** Model ids listed by GET /v1/models. Default `['gpt-4o-mini', 'text-embedding-3-small']`. */
  models?: string[];
  /** Answer 404 model_not_found to chat and embedding requests for models not in `models`. */
  rejectUnknownModels?: boolean;
  /** When set, every request with another bearer token gets 401. */
  apiKey?: string;
  /** Answer 400 to chat requests whose `response_format.type` is one of these. */
  rejectResponseFormats?: Array<'json_schema' | 'json_object'>;
  /**
   * Answer 400 to chat requests that offer `tools`, with this message, or with `true` Ollama's for a
   * model without tool calling (noToolsMessage).
   */
  rejectTools?: true | string;
  /**
   * Act like a server that ignores `logit_bias` and `max_tokens` (many local servers): the answer is
   * sent whole. Otherwise both are honoured: the answer is cut to `max_tokens` tokens and, when
   * `logit_bias` pushes tokens up, it is one of those tokens.
   */
  ignoreLogitBias?: boolean;
  /** Report token usage (whole responses, and streams that ask for it). Default true. */
  sendUsage?: boolean;
  /** Wait this long before every chat and embedding answer. */
  latencyMs?: number;
  /** Wait this long before answering GET /v1/models (`latencyMs` does not apply to it). */
  modelsDelayMs?: number;
  /** How embeddings are encoded: as the request asks (default), or always one way. */
  embeddingEncoding?: 'as-requested' | 'float' | 'base64';
  /** Length of embedding vectors. Default 8. */
  embeddingDimensions?: number;
  /** Injected before embedding requests, consumed in order. */
  embeddingFaults?: Fault[];
  /**
   * The media endpoints it serves; one left out answers 404, as a server without it does: `image` is
   * sent base64 (`b64_json`) to POST /v1/images/generations, `transcript` to POST
   * /v1/audio/transcriptions (multipart: see `raw`), `speech` as audio/wav to POST /v1/audio/speech.
   */
  media?: { image?: Uint8Array; transcript?: string; speech?: Uint8Array };
}

/** A running test server. */
export interface OpenAIServer {
  /** Base URL including `/v1`, as OPENAI_BASE_URL takes it. */
  readonly url: string;
  readonly port: number;
  /** Every request received, in order. */
  readonly requests: ReceivedRequest[];
  /** The bodies of the chat completion requests, in order. */
  chatRequests(): ChatRequestBody[];
  /** The highest number of requests handled at once so far. */
  readonly maxInFlight: number;
  /** Requests being handled now (a client that gave up has closed its connection). */
  readonly inFlight: number;
  /** Appends answers to the queue. */
  enqueue(...answers: ChatAnswer[]): void;
  /** Stops listening and cuts open connections. */
  close(): Promise<void>;
}

const DEFAULT_MODELS = ['gpt-4o-mini', 'text-embedding-3-small'];

/** Starts a server on 127.0.0.1 with a random free port. */
export async function startOpenAIServer(options: OpenAIServerOptions = {}): Promise<OpenAIServer> {
  const queue: ChatAnswer[] = [...(options.answers ?? [])];
  const embeddingFaults: Fault[] = [...(options.embeddingFaults ?? [])];
  const requests: ReceivedRequest[] = [];
  const sockets = new Set<Socket>();
  const models = options.models ?? DEFAULT_MODELS;
  let inFlight = 0;
  let maxInFlight = 0;
  let completionCount = 0;
  let answeredRound = 0;

  const server = createServer((req, res) => {
    inFlight += 1;
    maxInFlight = Math.max(maxInFlight, inFlight);
    const round = answeredRound + 1;
    res.on('close', () => {
      inFlight -= 1;
      if (req.method === 'POST' && req.url?.split('?')[0] === '/v1/chat/completions')
        answeredRound = Math.max(answeredRound, round);
    });
    // A client that went away (timeout, abort) makes later writes fail; that is not a test failure.
    res.on('error', () => undefined);
    void handle(req, res, round).catch((error: unknown) => {
      if (!res.headersSent) sendError(res, 500, String(error), 'server_error');
      else res.destroy();
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });

  async function handle(req: IncomingMessage, res: ServerResponse, round: number): Promise<void> {
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    const raw = await readBody(req);
    const received: ReceivedRequest = {
      method: req.method ?? 'GET',
      path,
      headers: req.headers,
      body: parseJson(raw.toString('utf8')),
      raw,
      inFlight,
      round,
    };
    requests.push(received);

    if (options.apiKey !== undefined && req.headers.authorization !== `Bearer ${options.apiKey}`) {
      return sendFault(res, { fault: 'unauthorized' });
    }
    if (req.method === 'GET' && path === '/v1/models') {
      await sleep(options.modelsDelayMs ?? 0);
      if (res.destroyed) return;
      return sendJson(res, 200, {
        object: 'list',
        data: models.map((id) => ({ id, object: 'model', created: 0, owned_by: 'test-server' })),
      });
    }
    if (req.method === 'POST' && path === '/v1/chat/completions') {
      return chat(received, res);
    }
    if (req.method === 'POST' && path === '/v1/embeddings') {
      return embeddings(received, res);
    }
    const media = options.media;
    if (req.method === 'POST' && path === '/v1/images/generations' && media?.image) {
      return sendJson(res, 200, {
        created: 0,
        data: [{ b64_json: Buffer.from(media.image).toString('base64') }],
      });
    }
    if (req.method === 'POST' && path === '/v1/audio/transcriptions' && media?.transcript !== undefined) {
      return sendJson(res, 200, { text: media.transcript });
    }
    if (req.method === 'POST' && path === '/v1/audio/speech' && media?.speech) {
      res.writeHead(200, { 'content-type': 'audio/wav', 'content-length': media.speech.byteLength });
      return void res.end(media.speech);
    }
    sendError(res, 404, `no route for ${req.method} ${path}`, 'not_found');
  }

  async function chat(received: ReceivedRequest, res: ServerResponse): Promise<void> {
    const body = received.body as ChatRequestBody | undefined;
    if (!body || typeof body.model !== 'string' || !Array.isArray(body.messages)) {
      return sendError(res, 400, 'model and messages are required', 'invalid_request_error');
    }
    if (options.rejectUnknownModels && !models.includes(body.model)) {
      return sendFault(res, { fault: 'unknown-model' }, body.model);
    }
    const format = body.response_format?.type;
    if (format && (options.rejectResponseFormats as string[] | undefined)?.includes(format)) {
      return sendError(res, 400, `response_format ${format} is not supported`, 'invalid_request_error');
    }
    if (options.rejectTools !== undefined && Array.isArray(body.tools) && body.tools.length > 0) {
      const message = options.rejectTools === true ? noToolsMessage(body.model) : options.rejectTools;
      return sendError(res, 400, message, 'invalid_request_error');
    }
    const answer = queue.shift() ?? (await options.reply?.(body, received)) ?? defaultAnswer();
    const normalized = typeof answer === 'string' ? { text: answer } : answer;
    await sleep((options.latencyMs ?? 0) + (normalized.delayMs ?? 0));
    if (res.destroyed) return;
    if ('fault' in normalized && normalized.fault === 'malformed-tool-calls') {
      return sendToolCalls(res, `chatcmpl-test-${++completionCount}`, body, {
        text: null,
        calls: normalized.toolCalls,
        usage: undefined,
        streamLike: 'raw',
      });
    }
    if ('fault' in normalized) {
      if (isHostile(normalized)) return sendHostile(res, normalized, body);
      return body.stream ? streamFault(res, normalized, body.model) : sendFault(res, normalized, body.model);
    }
    if ('toolCalls' in normalized) {
      completionCount += 1;
      const calls = normalized.toolCalls.map((call, position) => ({
        id: call.id ?? `call_test_${completionCount}_${position}`,
        name: call.name,
        arguments: typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments),
      }));
      const text = normalized.text ?? null;
      const usage =
        normalized.usage === false || options.sendUsage === false
          ? undefined
          : (normalized.usage ?? {
              promptTokens: countMessageTokens(body.model, body.messages),
              completionTokens: calls.reduce(
                (sum, call) =>
                  sum + countTokens(body.model, call.name) + countTokens(body.model, call.arguments),
                text ? countTokens(body.model, text) : 0,
              ),
            });
      return sendToolCalls(res, `chatcmpl-test-${completionCount}`, body, {
        text,
        calls,
        usage,
        streamLike: normalized.streamLike ?? 'openai',
      });
    }
    const text = shapeAnswer(normalized.text, body);
    const usage =
      normalized.usage === false || options.sendUsage === false
        ? undefined
        : (normalized.usage ?? {
            promptTokens: countMessageTokens(body.model, body.messages),
            completionTokens: countTokens(body.model, text),
          });
    completionCount += 1;
    const id = `chatcmpl-test-${completionCount}`;
    const finishReason = text.length < normalized.text.length ? 'length' : 'stop';
    if (body.stream) return streamAnswer(res, id, body, text, usage, finishReason);
    sendJson(res, 200, {
      id,
      object: 'chat.completion',
      created: Math.floor(Date.now() / 1000),
      model: body.model,
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: text },
          finish_reason: finishReason,
          logprobs: null,
        },
      ],
      ...(usage ? { usage: usageJson(usage) } : {}),
    });
  }

  function defaultAnswer(): string {
    return options.defaultAnswer ?? 'Hello from the test server.';
  }

  /** Applies max_tokens and logit_bias the way a model that honours them would. */
  function shapeAnswer(text: string, body: ChatRequestBody): string {
    if (options.ignoreLogitBias) return text;
    const favoured = Object.entries(body.logit_bias ?? {})
      .filter(([, bias]) => bias >= 50)
      .map(([id]) => tokenText(body.model, Number(id)));
    let shaped = text;
    if (favoured.length > 0) shaped = pickFavoured(text, favoured);
    const limit = limitOf(body);
    if (limit !== undefined) shaped = firstTokens(body.model, shaped, limit);
    return shaped;
  }

  async function embeddings(received: ReceivedRequest, res: ServerResponse): Promise<void> {
    const body = received.body as { model?: unknown; input?: unknown; encoding_format?: unknown } | undefined;
    const model = typeof body?.model === 'string' ? body.model : '';
    const input = typeof body?.input === 'string' ? [body.input] : body?.input;
    if (!model || !Array.isArray(input) || !input.every((item) => typeof item === 'string')) {
      return sendError(
        res,
        400,
        'model and input (string or string[]) are required',
        'invalid_request_error',
      );
    }
    if (options.rejectUnknownModels && !models.includes(model)) {
      return sendFault(res, { fault: 'unknown-model' }, model);
    }
    await sleep(options.latencyMs ?? 0);
    const fault = embeddingFaults.shift();
    if (fault) return sendFault(res, fault, model);
    const encoding =
      options.embeddingEncoding === 'float' || options.embeddingEncoding === 'base64'
        ? options.embeddingEncoding
        : body?.encoding_format === 'base64'
          ? 'base64'
          : 'float';
    const dimensions = options.embeddingDimensions ?? 8;
    const tokens = input.reduce((sum, text) => sum + countTokens(model, text), 0);
    sendJson(res, 200, {
      object: 'list',
      model,
      data: input.map((text, index) => {
        const vector = testEmbedding(text, dimensions);
        return { object: 'embedding', index, embedding: encoding === 'base64' ? toBase64(vector) : vector };
      }),
      ...(options.sendUsage === false ? {} : { usage: { prompt_tokens: tokens, total_tokens: tokens } }),
    });
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}/v1`,
    port,
    requests,
    chatRequests: () =>
      requests
        .filter((request) => request.path === '/v1/chat/completions' && request.body)
        .map((request) => request.body as ChatRequestBody),
    get maxInFlight() {
      return maxInFlight;
    },
    get inFlight() {
      return inFlight;
    },
    enqueue: (...answers) => queue.push(...answers),
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/**
 * A loopback URL where nothing listens, for "no server" paths and probes. A port a server just closed
 * could go to another test file's server meanwhile; test servers take ports the system picks, never
 * one below 1024. Port 4 is assigned to nothing, and fetch does not refuse it as it does the discard
 * port (9) ("bad port").
 */
export async function closedUrl(): Promise<string> {
  return 'http://127.0.0.1:4/v1';
}

/**
 * The vector the server returns for `text`: deterministic and easy to predict in a test, element i is
 * ((sum of char codes + i) mod 10) / 10.
 */
export function testEmbedding(text: string, dimensions = 8): number[] {
  let sum = 0;
  for (const char of text) sum += char.codePointAt(0) ?? 0;
  return Array.from({ length: dimensions }, (_, index) => ((sum + index) % 10) / 10);
}

function limitOf(body: ChatRequestBody): number | undefined {
  return body.max_completion_tokens ?? body.max_tokens;
}

/** The favoured token the answer starts with, or that occurs earliest in it as a word, or the first. */
function pickFavoured(text: string, favoured: string[]): string {
  const trimmed = text.trimStart();
  const starting = favoured.find((token) => token.trim() !== '' && trimmed.startsWith(token.trim()));
  if (starting !== undefined) return starting;
  let best: { token: string; at: number } | undefined;
  for (const token of favoured) {
    const word = token.trim();
    if (word === '') continue;
    const at = text.search(new RegExp(`\\b${word.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\b`));
    if (at >= 0 && (!best || at < best.at)) best = { token, at };
  }
  return best?.token ?? favoured[0] ?? '';
}

function firstTokens(model: string, text: string, limit: number): string {
  const words = text.match(/\s*\S+\s*/g) ?? [];
  let result = '';
  for (const word of words) {
    if (countTokens(model, (result + word).trimEnd()) > limit) break;
    result += word;
  }
  // A single word longer than the limit still yields its first characters, like a truncated token.
  return result === '' && text !== '' ? text.slice(0, Math.max(1, limit)) : result.trimEnd();
}

function streamAnswer(
  res: ServerResponse,
  id: string,
  body: ChatRequestBody,
  text: string,
  usage: { promptTokens: number; completionTokens: number } | undefined,
  finishReason: string,
): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const chunk = (choices: unknown[], extra: Record<string, unknown> = {}) =>
    res.write(
      `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created: 0, model: body.model, choices, ...extra })}\n\n`,
    );
  chunk([{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }]);
  for (const piece of text.match(/\s*\S+\s*/g) ?? []) {
    chunk([{ index: 0, delta: { content: piece }, finish_reason: null }]);
  }
  chunk([{ index: 0, delta: {}, finish_reason: finishReason }]);
  if (usage && body.stream_options?.include_usage) chunk([], { usage: usageJson(usage) });
  res.end('data: [DONE]\n\n');
}

/** A tool-call answer: `calls` as they are sent, or (`raw`) whatever a malformed answer holds. */
type ToolCallReply =
  | {
      text: string | null;
      calls: Array<{ id: string; name: string; arguments: string }>;
      usage: { promptTokens: number; completionTokens: number } | undefined;
      streamLike: 'openai' | 'ollama';
    }
  | { text: null; calls: unknown; usage: undefined; streamLike: 'raw' };

/** Answers with tool calls, whole or (when the request asks) streamed. */
function sendToolCalls(res: ServerResponse, id: string, body: ChatRequestBody, reply: ToolCallReply): void {
  const whole = (call: { id: string; name: string; arguments: string }) => ({
    id: call.id,
    type: 'function',
    function: { name: call.name, arguments: call.arguments },
  });
  if (!body.stream) {
    sendJson(res, 200, {
      id,
      object: 'chat.completion',
      created: Math.floor(Date.now() / 1000),
      model: body.model,
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant',
            content: reply.text,
            tool_calls: reply.streamLike === 'raw' ? reply.calls : reply.calls.map(whole),
          },
          finish_reason: 'tool_calls',
          logprobs: null,
        },
      ],
      ...(reply.usage ? { usage: usageJson(reply.usage) } : {}),
    });
    return;
  }
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const chunk = (choices: unknown[], extra: Record<string, unknown> = {}) =>
    res.write(
      `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created: 0, model: body.model, choices, ...extra })}\n\n`,
    );
  const delta = (fields: Record<string, unknown>) =>
    chunk([{ index: 0, delta: fields, finish_reason: null }]);
  delta({ role: 'assistant', content: reply.text === null ? null : '' });
  for (const piece of reply.text?.match(/\s*\S+\s*/g) ?? []) delta({ content: piece });
  if (reply.streamLike === 'raw') {
    delta({ tool_calls: reply.calls });
  } else if (reply.streamLike === 'ollama') {
    for (const call of reply.calls) delta({ tool_calls: [{ index: 0, ...whole(call) }] });
  } else {
    for (const [index, call] of reply.calls.entries()) {
      delta({
        tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.name, arguments: '' } }],
      });
      for (const piece of splitInto(call.arguments, 3)) {
        delta({ tool_calls: [{ index, function: { arguments: piece } }] });
      }
    }
  }
  chunk([{ index: 0, delta: {}, finish_reason: 'tool_calls' }]);
  if (reply.usage && body.stream_options?.include_usage) chunk([], { usage: usageJson(reply.usage) });
  res.end('data: [DONE]\n\n');
}

/** `text` in `count` pieces of about equal length (fewer when it is shorter), none empty. */
function splitInto(text: string, count: number): string[] {
  const size = Math.max(1, Math.ceil(text.length / count));
  const pieces: string[] = [];
  for (let at = 0; at < text.length; at += size) pieces.push(text.slice(at, at + size));
  return pieces;
}

function streamFault(res: ServerResponse, fault: Fault, model: string): void {
  if (fault.fault === 'malformed') {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.end('data: {"choices": [ this is not json\n\ndata: [DONE]\n\n');
    return;
  }
  if (fault.fault === 'drop' || fault.fault === 'stream-error') {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(
      `data: ${JSON.stringify({ id: 'chatcmpl-partial', object: 'chat.completion.chunk', created: 0, model, choices: [{ index: 0, delta: { content: 'Partial ' }, finish_reason: null }] })}\n\n`,
    );
    if (fault.fault === 'drop') setTimeout(() => res.destroy(), 20);
    else res.end(`data: ${JSON.stringify({ error: { message: fault.message ?? 'generation failed' } })}\n\n`);
    return;
  }
  sendFault(res, fault, model);
}

type HostileFault = Extract<
  Fault,
  { fault: 'trickle' | 'keep-alive' | 'endless' | 'huge' | 'html' | 'redirect' }
>;

function isHostile(fault: Fault): fault is HostileFault {
  return ['trickle', 'keep-alive', 'endless', 'huge', 'html', 'redirect'].includes(fault.fault);
}

/** The faults of a server that answers, but not as a client can live with. */
async function sendHostile(res: ServerResponse, fault: HostileFault, body: ChatRequestBody): Promise<void> {
  const contentType = body.stream ? 'text/event-stream' : 'application/json';
  const chunk = (content: string, finishReason: string | null = null) =>
    `data: ${JSON.stringify({ id: 'chatcmpl-hostile', object: 'chat.completion.chunk', created: 0, model: body.model, choices: [{ index: 0, delta: { content }, finish_reason: finishReason }] })}\n\n`;
  switch (fault.fault) {
    case 'redirect':
      res.writeHead(fault.status ?? 307, { location: fault.location, 'content-length': 0 });
      return void res.end();
    case 'html':
      res.writeHead(200, { 'content-type': 'text/html' });
      return void res.end('<html><body><h1>Welcome to nginx!</h1></body></html>\n');
    case 'trickle':
      res.writeHead(200, { 'content-type': contentType });
      while (!res.destroyed) {
        res.write(' ');
        await sleep(fault.intervalMs ?? 200);
      }
      return;
    case 'keep-alive':
      res.writeHead(200, { 'content-type': contentType });
      while (!res.destroyed) {
        res.write(body.stream ? ': keep-alive\n\n' : '\n');
        await sleep(fault.intervalMs ?? 100);
      }
      return;
    case 'endless':
      res.writeHead(200, { 'content-type': contentType });
      if (!body.stream) res.write('{"id": "chatcmpl-endless", "choices": [');
      while (!res.destroyed) {
        res.write(body.stream ? chunk('and on ') : ' ');
        await sleep(fault.intervalMs ?? 20);
      }
      return;
    case 'huge': {
      // Words, not one long run of a letter, which tiktoken takes seconds to count.
      const piece = 'all work and no play '.repeat(64 * 1024).slice(0, 64 * 1024);
      const pieces = Math.ceil(fault.bytes / piece.length);
      const start = body.stream
        ? ''
        : `{"id":"chatcmpl-huge","object":"chat.completion","created":0,"model":${JSON.stringify(body.model)},"choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":"`;
      const end = body.stream ? `${chunk('', 'stop')}data: [DONE]\n\n` : '"}}]}';
      const length =
        Buffer.byteLength(start) +
        pieces * Buffer.byteLength(body.stream ? chunk(piece) : piece) +
        Buffer.byteLength(end);
      res.writeHead(200, {
        'content-type': contentType,
        ...(fault.declareLength && { 'content-length': length }),
      });
      res.write(start);
      for (let sent = 0; sent < pieces && !res.destroyed; sent++) {
        // Waits for the client to take each piece, so the server holds little of it.
        if (!res.write(body.stream ? chunk(piece) : piece)) await drained(res);
      }
      return void res.end(end);
    }
  }
}

/** Resolves when `res` can take more, or is gone. */
function drained(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done).off('close', done);
      resolve();
    };
    res.on('drain', done).on('close', done);
  });
}

function sendFault(res: ServerResponse, fault: Fault, model = 'the model'): void {
  switch (fault.fault) {
    case 'rate-limit':
      res.setHeader('retry-after', String(fault.retryAfterSeconds ?? 0));
      return sendError(res, 429, 'Rate limit reached for requests', 'rate_limit_exceeded');
    case 'server-error':
      if (fault.retryAfterSeconds !== undefined)
        res.setHeader('retry-after', String(fault.retryAfterSeconds));
      return sendError(
        res,
        fault.status ?? 500,
        'The server had an error processing your request',
        'server_error',
      );
    case 'unauthorized':
      return sendError(res, 401, 'Incorrect API key provided', 'invalid_api_key');
    case 'unknown-model':
      return sendError(res, 404, `The model \`${model}\` does not exist`, 'model_not_found');
    case 'bad-request':
      return sendError(res, fault.status ?? 400, fault.message ?? 'Bad request', 'invalid_request_error');
    case 'malformed':
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"id": "chatcmpl-broken", "choices": [ this is not json');
      return;
    case 'stream-error':
      return sendError(res, 500, fault.message ?? 'generation failed', 'server_error');
    case 'drop':
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '500' });
      res.write('{"id": "chatcmpl-drop", "choices": [');
      setTimeout(() => res.destroy(), 20);
      return;
  }
}

function sendError(res: ServerResponse, status: number, message: string, code: string): void {
  sendJson(res, status, { error: { message, type: code, param: null, code } });
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

function usageJson(usage: { promptTokens: number; completionTokens: number }) {
  return {
    prompt_tokens: usage.promptTokens,
    completion_tokens: usage.completionTokens,
    total_tokens: usage.promptTokens + usage.completionTokens,
  };
}

function toBase64(vector: number[]): string {
  return Buffer.from(new Float32Array(vector).buffer).toString('base64');
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

function parseJson(text: string): unknown {
  if (text === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function sleep(ms: number): Promise<void> {
  return ms > 0 ? new Promise((resolve) => setTimeout(resolve, ms)) : Promise.resolve();
}
