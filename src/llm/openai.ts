/**
 * The OpenAI-compatible provider: OpenAI itself and any server speaking its protocol (Ollama, vLLM,
 * LM Studio, llama.cpp). Built on the openai SDK, which supplies bounded retries (honouring
 * `retry-after`) and the wait for an answer's headers; guarded-fetch.ts bounds the answer itself (a body
 * that stalls, one too large, a redirect elsewhere), and each call has a deadline spanning its retries,
 * so no server, however broken, holds a call forever. Failures become one-line ModelErrors (errors.ts).
 * The SDK loads with the first request (openai-sdk.ts), so making a model costs nothing until it is used.
 * Offered tools go out as OpenAI functions and the calls come back on the Completion, whole or assembled
 * from a stream's pieces; a server that refuses tools is told apart by toolsUnsupported (errors.ts).
 */
import type OpenAI from 'openai';
import type {
  ChatCompletionCreateParamsBase,
  ChatCompletionFunctionTool,
} from 'openai/resources/chat/completions';
import { deadlineExceeded, malformedResponse, toModelError } from './errors.js';
import type { ModelCallContext } from './errors.js';
import { DEFAULT_MAX_RESPONSE_BYTES, MAX_TIMER_MS, guardedFetch } from './guarded-fetch.js';
import { loadOpenAISdk, quietSdkLog } from './openai-sdk.js';
import { millisecondsFromEnv } from './timeouts.js';
import { countMessageTokens, countTokens, labelLogitBias } from './tokens.js';
import type {
  Completion,
  CompletionChunk,
  CompletionRequest,
  Embeddings,
  LanguageModel,
  ModelCapabilities,
  ResponseFormat,
  TokenUsage,
  ToolCall,
  ToolSpec,
} from './types.js';

/**
 * Default wait for a server to start answering, and longest silence allowed in the middle of an
 * answer; META_AGENT_TIMEOUT_MS overrides it.
 */
export const DEFAULT_TIMEOUT_MS = 60_000;
/**
 * Default deadline for a whole call, retries included; META_AGENT_DEADLINE_MS overrides it. Ten
 * minutes streams several thousand tokens from a slow local model; an answer still going after that
 * is more likely a server stuck in a loop than one worth waiting for.
 */
export const DEFAULT_DEADLINE_MS = 600_000;
/** Default retries after a 429, 5xx, timeout or connection failure. */
export const DEFAULT_MAX_RETRIES = 2;
/** The key sent to servers that need none (most local ones); the SDK insists on some key. */
export const PLACEHOLDER_API_KEY = 'no-key-needed';

export interface OpenAIModelOptions {
  /** Base URL including the version path, e.g. `https://api.openai.com/v1`. */
  baseUrl: string;
  model: string;
  apiKey?: string;
  /**
   * Wait for the server to start answering, and longest silence in the middle of an answer, in
   * milliseconds. Default: META_AGENT_TIMEOUT_MS, else 60 s.
   */
  timeoutMs?: number;
  /**
   * Longest a call may take, its retries included, in milliseconds. Default: META_AGENT_DEADLINE_MS,
   * else 10 minutes, or as long as every try may wait for its answer to start, when that is longer.
   */
  deadlineMs?: number;
  /** Most bytes one response may have. Default 32 MiB (DEFAULT_MAX_RESPONSE_BYTES). */
  maxResponseBytes?: number;
  /** Default 2. */
  maxRetries?: number;
}

/** A model behind an OpenAI-compatible endpoint. */
export class OpenAIModel implements LanguageModel {
  readonly id: string;
  readonly modelName: string;
  readonly capabilities: ModelCapabilities = {
    toolCalls: true,
    answerLabels: 'logit-bias',
    structuredOutput: true,
    streaming: true,
  };
  readonly answersFrom = 'model';
  readonly baseUrl: string;
  readonly #apiKey: string;
  #client: Promise<OpenAI> | undefined;
  readonly #context: ModelCallContext;
  readonly #deadlineMs: number;
  readonly #maxResponseBytes: number;
  /**
   * OpenAI itself wants `max_completion_tokens` (its reasoning models reject `max_tokens`); the
   * compatible servers still read `max_tokens`.
   */
  readonly #isOpenAI: boolean;

  constructor(options: OpenAIModelOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.modelName = options.model;
    this.id = `openai:${options.model}@${this.baseUrl}`;
    this.#isOpenAI = URL.canParse(this.baseUrl) && new URL(this.baseUrl).hostname === 'api.openai.com';
    const timeoutMs = options.timeoutMs ?? millisecondsFromEnv('META_AGENT_TIMEOUT_MS') ?? DEFAULT_TIMEOUT_MS;
    const maxRetries = options.maxRetries ?? DEFAULT_MAX_RETRIES;
    this.#context = { baseUrl: this.baseUrl, model: this.modelName, timeoutMs, maxRetries };
    this.#deadlineMs =
      options.deadlineMs ??
      millisecondsFromEnv('META_AGENT_DEADLINE_MS') ??
      Math.max(DEFAULT_DEADLINE_MS, timeoutMs * (maxRetries + 1));
    this.#maxResponseBytes = options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
    this.#apiKey = options.apiKey || PLACEHOLDER_API_KEY;
  }

  /** The SDK's client, made (and the SDK loaded) for the first request. */
  #connect(): Promise<OpenAI> {
    this.#client ??= loadOpenAISdk().then(
      ({ default: Client }) =>
        new Client({
          baseURL: this.baseUrl,
          apiKey: this.#apiKey,
          timeout: this.#context.timeoutMs,
          maxRetries: this.#context.maxRetries,
          fetch: guardedFetch({ idleMs: this.#context.timeoutMs, maxBytes: this.#maxResponseBytes }),
          ...quietSdkLog(),
        }),
    );
    return this.#client;
  }

  /**
   * Runs one call under the deadline: past it the call's requests are aborted (retries and the waits
   * between them included) and it fails with a ModelError saying so, whatever the SDK made of the abort.
   * Any other failure becomes a ModelError where it is one.
   */
  async #call<T>(signal: AbortSignal | undefined, call: (signal: AbortSignal) => Promise<T>): Promise<T> {
    const deadline = new AbortController();
    const expired = new Promise<never>((_, reject) =>
      deadline.signal.addEventListener(
        'abort',
        () => reject(deadlineExceeded(this.baseUrl, this.#deadlineMs)),
        { once: true },
      ),
    );
    const timer = setTimeout(() => deadline.abort(), Math.min(this.#deadlineMs, MAX_TIMER_MS));
    try {
      const work = call(signal ? AbortSignal.any([signal, deadline.signal]) : deadline.signal);
      work.catch(() => undefined);
      return await Promise.race([work, expired]);
    } catch (error) {
      throw toModelError(error, this.#context);
    } finally {
      clearTimeout(timer);
    }
  }

  complete(request: CompletionRequest): Promise<Completion> {
    return this.#call(request.signal, async (signal) => {
      const client = await this.#connect();
      const response = await client.chat.completions.create(
        { ...this.#params(request), stream: false },
        { signal },
      );
      const message = response?.choices?.[0]?.message;
      const text = message?.content;
      if (!Array.isArray(response?.choices) || (typeof text !== 'string' && text !== null)) {
        throw malformedResponse(this.baseUrl, 'no choices[0].message.content');
      }
      const toolCalls = wholeToolCalls(message?.tool_calls as unknown, this.baseUrl);
      return {
        text: text ?? '',
        model: response.model || this.modelName,
        usage: this.#usage(response.usage, request, text ?? '', toolCalls),
        ...(toolCalls.length > 0 && { toolCalls }),
      };
    });
  }

  stream(request: CompletionRequest, onChunk: (chunk: CompletionChunk) => void): Promise<Completion> {
    return this.#call(request.signal, async (signal) => {
      const client = await this.#connect();
      const stream = await client.chat.completions.create(
        { ...this.#params(request), stream: true, stream_options: { include_usage: true } },
        { signal },
      );
      let text = '';
      let model = this.modelName;
      let reported: OpenAI.CompletionUsage | undefined;
      let answered = false;
      const calls = new StreamedToolCalls(this.baseUrl);
      for await (const chunk of stream) {
        if (chunk?.model) model = chunk.model;
        if (chunk?.usage) reported = chunk.usage;
        const choice = chunk?.choices?.[0];
        if (choice?.finish_reason) answered = true;
        if (choice?.delta?.tool_calls != null) {
          calls.add(choice.delta.tool_calls as unknown);
          answered = true;
        }
        const delta = choice?.delta?.content;
        if (typeof delta === 'string' && delta !== '') {
          answered = true;
          text += delta;
          onChunk({ delta });
        }
      }
      // The SDK ends a stream quietly when it is aborted.
      request.signal?.throwIfAborted();
      // A page that is not a stream at all, or events that carry nothing, are no (empty) answer.
      if (!answered)
        throw malformedResponse(this.baseUrl, 'the stream ended with no text and no finish_reason');
      const toolCalls = calls.finish();
      return {
        text,
        model,
        usage: this.#usage(reported, request, text, toolCalls),
        ...(toolCalls.length > 0 && { toolCalls }),
      };
    });
  }

  embed(texts: string[], signal?: AbortSignal): Promise<Embeddings> {
    return this.#call(signal, async (signal) => {
      const client = await this.#connect();
      const response = await client.embeddings.create(
        { model: this.modelName, input: texts, encoding_format: 'float' },
        { signal },
      );
      if (!Array.isArray(response?.data) || response.data.length !== texts.length) {
        throw malformedResponse(this.baseUrl, `expected ${texts.length} embeddings`);
      }
      const ordered = [...response.data].sort((a, b) => a.index - b.index);
      return {
        vectors: ordered.map((item) => toVector(item.embedding as unknown, this.baseUrl)),
        model: response.model || this.modelName,
        usage: {
          promptTokens:
            response.usage?.prompt_tokens ??
            texts.reduce((sum, text) => sum + countTokens(this.modelName, text), 0),
          completionTokens: 0,
        },
      };
    });
  }

  /** Request fields shared by whole and streamed completions; absent options are not sent at all. */
  #params(request: CompletionRequest): ChatCompletionCreateParamsBase {
    const logitBias = request.answerLabels && labelLogitBias(this.modelName, request.answerLabels);
    return {
      model: this.modelName,
      messages: request.messages,
      ...(request.maxTokens !== undefined &&
        (this.#isOpenAI ? { max_completion_tokens: request.maxTokens } : { max_tokens: request.maxTokens })),
      ...(request.temperature !== undefined && { temperature: request.temperature }),
      ...(request.stop && request.stop.length > 0 && { stop: request.stop }),
      ...(logitBias && { logit_bias: logitBias }),
      ...(request.responseFormat && { response_format: toResponseFormat(request.responseFormat) }),
      ...(request.tools && request.tools.length > 0 && { tools: request.tools.map(toTool) }),
    };
  }

  /**
   * The server's usage report, or a tiktoken count when it sends none (many local servers): the
   * messages and the offered tools' declarations in, the text and the tool calls (names and
   * arguments) out.
   */
  #usage(
    reported: OpenAI.CompletionUsage | null | undefined,
    request: CompletionRequest,
    text: string,
    toolCalls: ToolCall[],
  ): TokenUsage {
    if (reported && typeof reported.prompt_tokens === 'number') {
      return { promptTokens: reported.prompt_tokens, completionTokens: reported.completion_tokens ?? 0 };
    }
    const count = (content: string) => (content === '' ? 0 : countTokens(this.modelName, content));
    const tools = request.tools && request.tools.length > 0 ? JSON.stringify(request.tools) : '';
    return {
      promptTokens: countMessageTokens(this.modelName, request.messages) + count(tools),
      completionTokens: toolCalls.reduce(
        (sum, call) => sum + count(call.name) + count(call.arguments),
        count(text),
      ),
    };
  }
}

function toResponseFormat(format: ResponseFormat): ChatCompletionCreateParamsBase['response_format'] {
  if (format.type !== 'json_schema') return { type: format.type };
  return {
    type: 'json_schema',
    json_schema: { name: format.name, schema: format.schema, strict: format.strict ?? false },
  };
}

function toTool(tool: ToolSpec): ChatCompletionFunctionTool {
  return {
    type: 'function',
    function: { name: tool.name, description: tool.description, parameters: tool.parameters },
  };
}

/**
 * The function calls of a whole answer's `message.tool_calls` (absent or null: none). Calls of other
 * kinds (OpenAI's custom tools, never offered here) are left out; anything not shaped like a call is a
 * malformed response.
 */
function wholeToolCalls(value: unknown, baseUrl: string): ToolCall[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw malformedResponse(baseUrl, 'message.tool_calls is not a list');
  const calls: ToolCall[] = [];
  for (const [index, item] of value.entries()) {
    if (!isObject(item)) throw malformedResponse(baseUrl, `tool_calls[${index}] is not an object`);
    if (item.type !== undefined && item.type !== 'function') continue;
    const fn = item.function;
    if (!isObject(fn) || typeof fn.name !== 'string' || fn.name === '') {
      throw malformedResponse(baseUrl, `tool_calls[${index}] has no function name`);
    }
    calls.push({
      id: idText(item.id) || syntheticId(index),
      name: fn.name,
      arguments: argumentsText(fn.arguments, baseUrl, `tool_calls[${index}]`),
    });
  }
  return calls;
}

/** One call being assembled from a stream's pieces. */
interface PartialCall {
  /** The `index` the server gave its pieces. */
  index: number | undefined;
  id: string;
  name: string;
  /** The pieces of the arguments, joined once at the end. */
  pieces: string[];
  /** False for a call of another kind than function (OpenAI's custom tools): left out. */
  function: boolean;
}

/**
 * Assembles the tool calls of a stream from its `delta.tool_calls` pieces, as OpenAI sends them: the
 * first piece of a call has its `index`, `id` and `function.name`; later ones the same `index` and more
 * of `function.arguments`, to be concatenated. Ollama gives every call `index` 0, each whole with its
 * own `id`: a piece with a name and a new id at an index already taken is a new call (a piece without a
 * name continues the call, whatever its id: some servers send a fresh one with every piece). A piece
 * without an index goes by the latest call the same way.
 */
class StreamedToolCalls {
  readonly #calls: PartialCall[] = [];

  constructor(private readonly baseUrl: string) {}

  /** Takes one chunk's `delta.tool_calls`. */
  add(pieces: unknown): void {
    if (!Array.isArray(pieces)) throw malformedResponse(this.baseUrl, 'delta.tool_calls is not a list');
    for (const piece of pieces) {
      if (!isObject(piece))
        throw malformedResponse(this.baseUrl, 'a delta.tool_calls piece is not an object');
      const call = this.#callFor(piece);
      if (piece.type !== undefined && piece.type !== 'function') call.function = false;
      const fn = piece.function;
      if (fn === undefined || fn === null) continue;
      if (!isObject(fn)) throw malformedResponse(this.baseUrl, 'a delta.tool_calls piece has a bad function');
      if (typeof fn.name === 'string' && fn.name !== '' && call.name === '') call.name = fn.name;
      if (fn.arguments !== undefined && fn.arguments !== null) {
        call.pieces.push(argumentsText(fn.arguments, this.baseUrl, 'a delta.tool_calls piece'));
      }
    }
  }

  /** The assembled function calls, in the order they began. */
  finish(): ToolCall[] {
    return this.#calls
      .filter((call) => call.function)
      .map((call, position) => {
        if (call.name === '') {
          throw malformedResponse(this.baseUrl, `streamed tool call ${position} has no function name`);
        }
        const joined = call.pieces.join('');
        return {
          id: call.id || syntheticId(position),
          name: call.name,
          arguments: joined === '' ? '{}' : joined,
        };
      });
  }

  #callFor(piece: Record<string, unknown>): PartialCall {
    const index = typeof piece.index === 'number' ? piece.index : undefined;
    const id = idText(piece.id);
    const latest =
      index === undefined ? this.#calls.at(-1) : this.#calls.findLast((call) => call.index === index);
    const named =
      isObject(piece.function) && typeof piece.function.name === 'string' && piece.function.name !== '';
    if (latest && (id === '' || latest.id === '' || latest.id === id || !named)) {
      if (latest.id === '') latest.id = id;
      return latest;
    }
    const call: PartialCall = { index, id, name: '', pieces: [], function: true };
    this.#calls.push(call);
    return call;
  }
}

/**
 * A call's arguments as the JSON text the server sent. Some servers (older Ollama) send an object:
 * it is written back as JSON text. Absent arguments are an empty object.
 */
function argumentsText(value: unknown, baseUrl: string, where: string): string {
  if (typeof value === 'string') return value;
  if (value === undefined || value === null) return '{}';
  if (isObject(value)) return JSON.stringify(value);
  throw malformedResponse(baseUrl, `${where} has arguments that are neither text nor an object`);
}

/** A call's id as text ('' when there is none); a few servers send numbers. */
function idText(value: unknown): string {
  return typeof value === 'string' ? value : typeof value === 'number' ? String(value) : '';
}

/** An id for a call the server sent none for (some local servers), unique within the answer. */
function syntheticId(position: number): string {
  return `call_${position}`;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Floats as sent, or base64 little-endian float32 from servers that encode regardless of the request. */
function toVector(embedding: unknown, baseUrl: string): number[] {
  if (Array.isArray(embedding) && embedding.every((value) => typeof value === 'number')) return embedding;
  if (typeof embedding === 'string') {
    // Copied into a fresh buffer: Float32Array needs 4-byte alignment that pooled Buffers lack.
    const bytes = new Uint8Array(Buffer.from(embedding, 'base64'));
    if (bytes.length % 4 === 0) return Array.from(new Float32Array(bytes.buffer));
  }
  throw malformedResponse(baseUrl, 'an embedding is neither a list of numbers nor base64 float32');
}
