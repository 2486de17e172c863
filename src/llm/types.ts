/**
 * The one small interface every language-model backend implements. Classification, structured output
 * and retries are layered above it once (see classify.ts, structured.ts), as the Vercel AI SDK does.
 */
import type { ModelRole, TokenUsage } from '../events.js';

/** Declared with the events that report model calls (events.ts is a leaf module). */
export type { ModelRole, TokenUsage };

/** Every role, in the order they are resolved and reported. */
export const ROLES = ['chatbot', 'classifier', 'userbot', 'embedder'] as const satisfies readonly ModelRole[];

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

export type ResponseFormat =
  | { type: 'text' }
  | { type: 'json_object' }
  | {
      type: 'json_schema';
      name: string;
      schema: Record<string, unknown>;
      /** Ask the server to enforce the schema exactly (OpenAI needs every property required for this). */
      strict?: boolean;
    };

export interface CompletionRequest {
  messages: ChatMessage[];
  maxTokens?: number;
  temperature?: number;
  stop?: string[];
  /**
   * The answers wanted, each meant to be one token: the provider pushes their tokens up by `bias`
   * logit points (-100..100, OpenAI's logit_bias scale), looking them up in the model's own tokenizer
   * where it has one.
   */
  answerLabels?: AnswerLabel[];
  responseFormat?: ResponseFormat;
  signal?: AbortSignal;
  /** What the call is for, e.g. `node greet` or `design: outline`; shown in events and traces. */
  purpose?: string;
  /**
   * Functions the model may call instead of answering in text (OpenAI's `tools`); a provider without
   * native tool calls ignores them, and the caller reads the text.
   */
  tools?: ToolSpec[];
}

/** One answer a classifier may give, and how strongly to favour it. */
export interface AnswerLabel {
  text: string;
  bias: number;
}

/** A function offered to the model as a native tool. */
export interface ToolSpec {
  name: string;
  description: string;
  /** JSON Schema of the arguments object. */
  parameters: Record<string, unknown>;
}

/** A native tool call the model made; `arguments` is its JSON text, as the server sent it (unparsed). */
export interface ToolCall {
  id: string;
  name: string;
  arguments: string;
}

export interface Completion {
  text: string;
  usage: TokenUsage;
  /** The model that answered, as the server named it. */
  model: string;
  /** Native tool calls, when the request offered tools and the model used them. */
  toolCalls?: ToolCall[];
}

export interface CompletionChunk {
  /** Text added by this chunk. */
  delta: string;
}

export interface Embeddings {
  vectors: number[][];
  usage: TokenUsage;
  model: string;
}

/**
 * What a model can do, declared by its provider, as a Vercel AI SDK model declares its `supportedUrls`:
 * whoever asks a model chooses how to ask from these, never from which provider it is.
 */
export interface ModelCapabilities {
  /**
   * Offered `tools` may come back as native tool calls. A model without them ignores the tools, so the
   * caller asks for the call in the text instead.
   */
  readonly toolCalls: boolean;
  /**
   * How `answerLabels` push the labels up: `logit-bias`, as a server's `logit_bias` with token ids from
   * tiktoken (sent only for models whose tokenizer tiktoken knows); `token-bias`, on the model's own
   * tokens; `none`, ignored (classify.ts still parses the answer leniently and asks again).
   */
  readonly answerLabels: 'logit-bias' | 'token-bias' | 'none';
  /**
   * A `responseFormat` is honoured: a JSON Schema is enforced by the server (which may refuse it, see
   * structured.ts) or by a grammar. Without it the schema goes in the prompt alone.
   */
  readonly structuredOutput: boolean;
  /** `stream` hands out the text as it is generated, rather than once the answer is whole. */
  readonly streaming: boolean;
  /**
   * A last `assistant` message is continued: the answer starts where it ends (a local model's chat
   * wrapper does this). An OpenAI-compatible server takes it as a finished turn and answers after it.
   */
  readonly continuesReply: boolean;
}

/** The capabilities of a model that takes the messages and nothing else: text in, text out, at once. */
export const TEXT_ONLY: ModelCapabilities = {
  toolCalls: false,
  answerLabels: 'none',
  structuredOutput: false,
  streaming: false,
  continuesReply: false,
};

export interface LanguageModel {
  /** e.g. `openai:gpt-4o-mini@https://api.openai.com/v1` or `scripted:demo.json`. */
  readonly id: string;
  /** The model name sent to the server (used for token encodings and pricing). */
  readonly modelName: string;
  readonly capabilities: ModelCapabilities;
  /**
   * `rules` when no model writes the answers (the scripted provider's rules file): every output that
   * shows them must say so (`[scripted]`). Only that output reads it; what to ask reads `capabilities`.
   */
  readonly answersFrom: 'model' | 'rules';
  complete(request: CompletionRequest): Promise<Completion>;
  /** Streams the text; the returned promise resolves to the whole completion with usage. */
  stream(request: CompletionRequest, onChunk: (chunk: CompletionChunk) => void): Promise<Completion>;
  embed(texts: string[], signal?: AbortSignal): Promise<Embeddings>;
}

/** The models an agent run uses, one per role (they may be the same object). */
export type ModelSet = Record<ModelRole, LanguageModel>;
