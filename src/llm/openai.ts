/**
 * The OpenAI-compatible provider: OpenAI itself and any server speaking its protocol (Ollama, vLLM,
 * LM Studio, llama.cpp). Built on the openai SDK, which supplies bounded retries (honouring
 * `retry-after`) and the wait for an answer's headers; guarded-fetch.ts bounds the answer itself (a body
 * that stalls or sends only keep-alives, one too large, a redirect elsewhere), and each call has a deadline spanning its retries,
 * so no server, however broken, holds a call forever. Failures become one-line ModelErrors (errors.ts).
 * The SDK loads with the first request (openai-sdk.ts), so making a model costs nothing until it is used.
 * Offered tools go out as OpenAI functions and the calls come back on the Completion, whole or assembled
 * from a stream's pieces; a server that refuses tools is told apart by toolsUnsupported (errors.ts).
 * What a request carries is built in openai-request.ts; what comes back is read in openai-response.ts.
 */
import type OpenAI from 'openai';
import { answerProgress } from './answer-progress.js';
import { deadlineExceeded, malformedResponse, toModelError } from './errors.js';
import type { ModelCallContext } from './errors.js';
import { DEFAULT_MAX_RESPONSE_BYTES, MAX_TIMER_MS, guardedFetch } from './guarded-fetch.js';
import { chatParams } from './openai-request.js';
import { StreamedToolCalls, completionUsage, toVector, wholeToolCalls } from './openai-response.js';
import { loadOpenAISdk, quietSdkLog } from './openai-sdk.js';
import { millisecondsFromEnv } from './timeouts.js';
import { countTokens } from './tokens.js';
import type {
  Completion,
  CompletionChunk,
  CompletionRequest,
  Embeddings,
  LanguageModel,
  ModelCapabilities,
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
    continuesReply: false,
  };
  readonly answersFrom = 'model';
  readonly baseUrl: string;
  readonly #apiKey: string;
  #client: Promise<OpenAI> | undefined;
  readonly #context: ModelCallContext;
  readonly #deadlineMs: number;
  readonly #maxResponseBytes: number;
  /** The server is OpenAI itself, which takes some fields under other names (see chatParams). */
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
          fetch: guardedFetch({
            idleMs: this.#context.timeoutMs,
            maxBytes: this.#maxResponseBytes,
            progress: answerProgress,
          }),
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
        { ...chatParams(this.modelName, this.#isOpenAI, request), stream: false },
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
        usage: completionUsage(this.modelName, response.usage, request, text ?? '', toolCalls),
        ...(toolCalls.length > 0 && { toolCalls }),
      };
    });
  }

  stream(request: CompletionRequest, onChunk: (chunk: CompletionChunk) => void): Promise<Completion> {
    return this.#call(request.signal, async (signal) => {
      const client = await this.#connect();
      const stream = await client.chat.completions.create(
        {
          ...chatParams(this.modelName, this.#isOpenAI, request),
          stream: true,
          stream_options: { include_usage: true },
        },
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
        usage: completionUsage(this.modelName, reported, request, text, toolCalls),
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
}
