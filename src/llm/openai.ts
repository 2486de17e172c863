/**
 * The OpenAI-compatible provider: OpenAI itself and any server speaking its protocol (Ollama, vLLM,
 * LM Studio, llama.cpp). Built on the openai SDK, which supplies bounded retries (honouring
 * `retry-after`) and the request timeout; failures become one-line ModelErrors (errors.ts). The SDK loads
 * with the first request (openai-sdk.ts), so making a model costs nothing until it is used.
 */
import type OpenAI from 'openai';
import type { ChatCompletionCreateParamsBase } from 'openai/resources/chat/completions';
import { UserError } from '../errors.js';
import { malformedResponse, toModelError } from './errors.js';
import type { ModelCallContext } from './errors.js';
import { loadOpenAISdk } from './openai-sdk.js';
import { countMessageTokens, countTokens } from './tokens.js';
import type {
  Completion,
  CompletionChunk,
  CompletionRequest,
  Embeddings,
  LanguageModel,
  ResponseFormat,
  TokenUsage,
} from './types.js';

/** Default request timeout; META_AGENT_TIMEOUT_MS overrides it. */
export const DEFAULT_TIMEOUT_MS = 60_000;
/** Default retries after a 429, 5xx, timeout or connection failure. */
export const DEFAULT_MAX_RETRIES = 2;
/** The key sent to servers that need none (most local ones); the SDK insists on some key. */
export const PLACEHOLDER_API_KEY = 'no-key-needed';

export interface OpenAIModelOptions {
  /** Base URL including the version path, e.g. `https://api.openai.com/v1`. */
  baseUrl: string;
  model: string;
  apiKey?: string;
  /** Per request, in milliseconds. Default: META_AGENT_TIMEOUT_MS, else 60 s. */
  timeoutMs?: number;
  /** Default 2. */
  maxRetries?: number;
}

/** A model behind an OpenAI-compatible endpoint. */
export class OpenAIModel implements LanguageModel {
  readonly id: string;
  readonly modelName: string;
  readonly scripted = false;
  readonly baseUrl: string;
  readonly #apiKey: string;
  #client: Promise<OpenAI> | undefined;
  readonly #context: ModelCallContext;
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
    const timeoutMs = options.timeoutMs ?? timeoutFromEnv() ?? DEFAULT_TIMEOUT_MS;
    const maxRetries = options.maxRetries ?? DEFAULT_MAX_RETRIES;
    this.#context = { baseUrl: this.baseUrl, model: this.modelName, timeoutMs, maxRetries };
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
        }),
    );
    return this.#client;
  }

  async complete(request: CompletionRequest): Promise<Completion> {
    try {
      const client = await this.#connect();
      const response = await client.chat.completions.create(
        { ...this.#params(request), stream: false },
        { signal: request.signal },
      );
      const text = response?.choices?.[0]?.message?.content;
      if (!Array.isArray(response?.choices) || (typeof text !== 'string' && text !== null)) {
        throw malformedResponse(this.baseUrl, 'no choices[0].message.content');
      }
      return {
        text: text ?? '',
        model: response.model || this.modelName,
        usage: this.#usage(response.usage, request, text ?? ''),
      };
    } catch (error) {
      throw toModelError(error, this.#context);
    }
  }

  async stream(request: CompletionRequest, onChunk: (chunk: CompletionChunk) => void): Promise<Completion> {
    try {
      const client = await this.#connect();
      const stream = await client.chat.completions.create(
        { ...this.#params(request), stream: true, stream_options: { include_usage: true } },
        { signal: request.signal },
      );
      let text = '';
      let model = this.modelName;
      let reported: OpenAI.CompletionUsage | undefined;
      for await (const chunk of stream) {
        if (chunk.model) model = chunk.model;
        if (chunk.usage) reported = chunk.usage;
        const delta = chunk.choices?.[0]?.delta?.content;
        if (typeof delta === 'string' && delta !== '') {
          text += delta;
          onChunk({ delta });
        }
      }
      return { text, model, usage: this.#usage(reported, request, text) };
    } catch (error) {
      throw toModelError(error, this.#context);
    }
  }

  async embed(texts: string[], signal?: AbortSignal): Promise<Embeddings> {
    try {
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
    } catch (error) {
      throw toModelError(error, this.#context);
    }
  }

  /** Request fields shared by whole and streamed completions; absent options are not sent at all. */
  #params(request: CompletionRequest): ChatCompletionCreateParamsBase {
    return {
      model: this.modelName,
      messages: request.messages,
      ...(request.maxTokens !== undefined &&
        (this.#isOpenAI ? { max_completion_tokens: request.maxTokens } : { max_tokens: request.maxTokens })),
      ...(request.temperature !== undefined && { temperature: request.temperature }),
      ...(request.stop && request.stop.length > 0 && { stop: request.stop }),
      ...(request.logitBias && { logit_bias: request.logitBias }),
      ...(request.responseFormat && { response_format: toResponseFormat(request.responseFormat) }),
    };
  }

  /** The server's usage report, or a tiktoken count when it sends none (many local servers). */
  #usage(
    reported: OpenAI.CompletionUsage | null | undefined,
    request: CompletionRequest,
    text: string,
  ): TokenUsage {
    if (reported && typeof reported.prompt_tokens === 'number') {
      return { promptTokens: reported.prompt_tokens, completionTokens: reported.completion_tokens ?? 0 };
    }
    return {
      promptTokens: countMessageTokens(this.modelName, request.messages),
      completionTokens: countTokens(this.modelName, text),
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

function timeoutFromEnv(): number | undefined {
  const raw = process.env.META_AGENT_TIMEOUT_MS;
  if (!raw) return undefined;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0) {
    throw new UserError(
      `META_AGENT_TIMEOUT_MS must be a positive number of milliseconds, not "${raw}"`,
      2,
      'for example META_AGENT_TIMEOUT_MS=120000 for two minutes',
    );
  }
  return value;
}
