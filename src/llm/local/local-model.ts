/**
 * The embedded model: a GGUF file run in this process by node-llama-cpp, behind the same interface as
 * a server's model. What a server approximates, it does exactly: structured answers are generated
 * under a grammar made from the JSON Schema, so they parse the first time, and a classifier's labels
 * are looked up in the model's own tokenizer and pushed up by a token bias.
 *
 * Nothing loads until the first call. Calls take turns on one context sequence: on a CPU a second
 * sequence would share the same cores, and one sequence lets each call reuse the KV cache of the
 * prompt prefix it shares with the call before.
 */
import { UserError } from '../../errors.js';
import { ModelError } from '../errors.js';
import type {
  AnswerLabel,
  ChatMessage,
  Completion,
  CompletionChunk,
  CompletionRequest,
  Embeddings,
  LanguageModel,
  ModelCapabilities,
  ResponseFormat,
} from '../types.js';
import { cachedModel } from './download.js';
import { formatModelRef, sizeNote, type ModelRef } from './model-ref.js';
import type {
  ChatHistoryItem,
  Llama,
  LlamaChat,
  LlamaContextSequence,
  LlamaEmbeddingContext,
  LlamaGrammar,
  LlamaModel,
  NodeLlamaCpp,
  Token,
} from './runtime-api.js';
import { RUNTIME_VERSION, loadRuntime } from './runtime.js';
import { requestedThreads, threadsFor } from './threads.js';

/** The context a model gets unless it was trained on less: room for a designer's longest prompts. */
const MAX_CONTEXT = 8192;

/**
 * Sampling temperature when the caller names none, as llama.cpp's server has it: greedy decoding makes
 * small models repeat themselves. Classifier questions ask for 0.
 */
const DEFAULT_TEMPERATURE = 0.8;

/** What the embedded model runs on, for `doctor` and the notices. */
export interface LocalModelInfo {
  runtime: string;
  path: string;
  /** `cpu`, or the GPU backend (cuda, vulkan, metal). */
  gpu: string;
  gpuDevices: string[];
  /** Layers offloaded to the GPU. */
  gpuLayers: number;
  threads: number;
  contextSize: number;
}

interface Loaded {
  runtime: NodeLlamaCpp;
  llama: Llama;
  model: LlamaModel;
  chat: LlamaChat;
  sequence: LlamaContextSequence;
  info: LocalModelInfo;
}

export interface LocalModelOptions {
  ref: ModelRef;
  /** Default `process.env`: META_AGENT_LOCAL_THREADS, META_AGENT_LOCAL_GPU and the cache's location. */
  env?: NodeJS.ProcessEnv;
}

export class LocalModel implements LanguageModel {
  readonly id: string;
  readonly modelName: string;
  /** Offered tools are not passed to the runtime, so a caller must ask for calls in the text. */
  readonly capabilities: ModelCapabilities = {
    toolCalls: false,
    answerLabels: 'token-bias',
    structuredOutput: true,
    streaming: true,
    continuesReply: true,
  };
  readonly answersFrom = 'model';
  readonly ref: ModelRef;
  readonly #env: NodeJS.ProcessEnv;
  #loaded: Promise<Loaded> | undefined;
  #embedder: Promise<LlamaEmbeddingContext> | undefined;
  /** The end of the last call in line: each call starts when the one before it has settled. */
  #turn: Promise<unknown> = Promise.resolve();
  readonly #grammars = new Map<string, Promise<LlamaGrammar>>();

  constructor(options: LocalModelOptions) {
    this.ref = options.ref;
    this.#env = options.env ?? process.env;
    const named = formatModelRef(options.ref);
    this.id = `local:${named}`;
    this.modelName = (named.split('/').at(-1) ?? named).replace(/\.gguf$/i, '');
  }

  /** Loads the runtime and the model (once) and says what they run on. */
  async info(): Promise<LocalModelInfo> {
    return (await this.#load()).info;
  }

  complete(request: CompletionRequest): Promise<Completion> {
    return this.#inTurn(() => this.#generate(request));
  }

  stream(request: CompletionRequest, onChunk: (chunk: CompletionChunk) => void): Promise<Completion> {
    return this.#inTurn(() => this.#generate(request, onChunk));
  }

  embed(texts: string[], signal?: AbortSignal): Promise<Embeddings> {
    return this.#inTurn(async () => {
      const { model, info } = await this.#load();
      this.#embedder ??= model.createEmbeddingContext({
        contextSize: { max: MAX_CONTEXT },
        threads: info.threads,
      });
      const embedder = await this.#embedder;
      const vectors: number[][] = [];
      let promptTokens = 0;
      for (const text of texts) {
        signal?.throwIfAborted();
        promptTokens += model.tokenize(text).length;
        vectors.push([...(await embedder.getEmbeddingFor(text)).vector]);
      }
      return { vectors, usage: { promptTokens, completionTokens: 0 }, model: this.modelName };
    });
  }

  #inTurn<T>(work: () => Promise<T>): Promise<T> {
    const result = this.#turn.then(work, work);
    this.#turn = result.catch(() => undefined);
    return result;
  }

  async #generate(
    request: CompletionRequest,
    onChunk?: (chunk: CompletionChunk) => void,
  ): Promise<Completion> {
    request.signal?.throwIfAborted();
    const loaded = await this.#load();
    const { chat, sequence } = loaded;
    const { usedInputTokens, usedOutputTokens } = sequence.tokenMeter;
    const grammar = request.responseFormat && (await this.#grammar(loaded, request.responseFormat));
    const tokenBias = request.answerLabels && labelBias(loaded, request.answerLabels);
    let response: string;
    try {
      ({ response } = await chat.generateResponse(history(request.messages), {
        maxTokens: request.maxTokens ?? roomLeft(loaded, request.messages),
        temperature: request.temperature ?? DEFAULT_TEMPERATURE,
        ...(grammar && { grammar }),
        ...(tokenBias && { tokenBias }),
        ...(request.stop && request.stop.length > 0 && { customStopTriggers: request.stop }),
        ...(request.signal && { signal: request.signal }),
        ...(onChunk && { onTextChunk: (delta: string) => onChunk({ delta }) }),
      }));
    } catch (error) {
      if (request.signal?.aborted) throw error;
      throw new ModelError(
        'server',
        `the embedded model ${this.modelName} failed: ${(error as Error).message}`,
      );
    }
    return {
      text: response,
      usage: {
        promptTokens: sequence.tokenMeter.usedInputTokens - usedInputTokens,
        completionTokens: sequence.tokenMeter.usedOutputTokens - usedOutputTokens,
      },
      model: this.modelName,
    };
  }

  /**
   * The grammar for a response format: the schema's own where node-llama-cpp can express it, any JSON
   * where it cannot (structured.ts then checks the answer against the schema, as it does a server's).
   */
  #grammar({ llama }: Loaded, format: ResponseFormat): Promise<LlamaGrammar> | undefined {
    if (format.type === 'text') return undefined;
    const key = format.type === 'json_schema' ? JSON.stringify(format.schema) : 'json';
    let grammar = this.#grammars.get(key);
    if (!grammar) {
      grammar =
        format.type === 'json_schema'
          ? llama.createGrammarForJsonSchema(format.schema).catch(() => llama.getGrammarFor('json'))
          : llama.getGrammarFor('json');
      this.#grammars.set(key, grammar);
    }
    return grammar;
  }

  #load(): Promise<Loaded> {
    this.#loaded ??= this.#open();
    return this.#loaded;
  }

  async #open(): Promise<Loaded> {
    const path = await modelPath(this.ref, this.#env);
    const runtime = await loadRuntime(this.#env);
    const gpuOff = /^(off|cpu)$/i.test(this.#env.META_AGENT_LOCAL_GPU?.trim() ?? '');
    const llama = await runtime.getLlama({
      gpu: gpuOff ? false : 'auto',
      build: 'never',
      progressLogs: false,
      logLevel: 'error',
    });
    let model: LlamaModel;
    try {
      model = await llama.loadModel({ modelPath: path });
    } catch (error) {
      throw new UserError(
        `cannot load the model ${path}: ${(error as Error).message}`,
        2,
        'is it a GGUF file of an architecture llama.cpp runs? `meta-agent models rm` and pull it again if it was cut short',
      );
    }
    const context = await model.createContext({
      contextSize: Math.min(model.trainContextSize, MAX_CONTEXT),
      threads: requestedThreads(this.#env) ?? threadsFor(llama.cpuMathCores),
    });
    const sequence = context.getSequence();
    return {
      runtime,
      llama,
      model,
      sequence,
      chat: new runtime.LlamaChat({ contextSequence: sequence }),
      info: {
        runtime: `node-llama-cpp ${RUNTIME_VERSION} (${llama.buildType === 'prebuilt' ? 'prebuilt' : 'local build'})`,
        path,
        gpu: llama.gpu || 'cpu',
        gpuDevices: llama.gpu ? await llama.getGpuDeviceNames() : [],
        gpuLayers: model.gpuLayers,
        threads: context.idealThreads,
        contextSize: context.contextSize,
      },
    };
  }
}

/** The GGUF file of `ref`: a path as given, or a downloaded model from the cache. */
async function modelPath(ref: ModelRef, env: NodeJS.ProcessEnv): Promise<string> {
  if (ref.kind === 'file') return ref.path;
  const cached = await cachedModel(ref, env);
  if (cached) return cached.path;
  const named = formatModelRef(ref);
  throw new UserError(
    `the model ${named} is not downloaded yet`,
    2,
    `\`meta-agent models pull ${named}\` fetches it${sizeNote(named)}`,
  );
}

/** Tokens a chat template adds around each message, at most, in the templates we know. */
const TEMPLATE_TOKENS_PER_MESSAGE = 8;

/**
 * What is left of the context after the prompt: the most an answer may take when the caller sets no
 * limit. Without it a model that never stops (a small one looping, or one writing a string that never
 * closes) would go on forever, the runtime dropping the oldest tokens to make room.
 */
function roomLeft({ model, info }: Loaded, messages: readonly ChatMessage[]): number {
  const prompt = messages.reduce(
    (total, message) => total + model.tokenize(message.content).length + TEMPLATE_TOKENS_PER_MESSAGE,
    TEMPLATE_TOKENS_PER_MESSAGE,
  );
  return Math.max(1, info.contextSize - prompt);
}

/** Our messages as node-llama-cpp's chat history, which its chat wrapper formats for the model. */
function history(messages: readonly ChatMessage[]): ChatHistoryItem[] {
  return messages.map((message) =>
    message.role === 'assistant'
      ? { type: 'model', response: [message.content] }
      : { type: message.role, text: message.content },
  );
}

/**
 * A token bias on each label's single-token spellings, with and without a leading space, in the
 * model's own tokenizer; labels that take several tokens are left out, as labelLogitBias does.
 */
function labelBias({ runtime, model }: Loaded, labels: readonly AnswerLabel[]) {
  const bias = new runtime.TokenBias(model.tokenizer);
  const seen = new Set<Token>();
  for (const label of labels) {
    for (const spelling of [label.text, ` ${label.text}`]) {
      const tokens = model.tokenize(spelling);
      const token = tokens.length === 1 ? tokens[0] : undefined;
      if (token === undefined || seen.has(token)) continue;
      seen.add(token);
      bias.set(token, { logit: label.bias });
    }
  }
  return seen.size > 0 ? bias : undefined;
}
