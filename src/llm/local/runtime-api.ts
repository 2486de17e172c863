/**
 * The part of node-llama-cpp's API that meta-agent uses. The runtime is not a dependency (its GPU
 * builds weigh hundreds of megabytes; see runtime.ts), so its types are not at hand when we build:
 * these declarations follow node-llama-cpp RUNTIME_VERSION's own, and the tests run them against it.
 */
export type Token = number & { __token: true };

export interface NodeLlamaCpp {
  getLlama(options: {
    gpu: 'auto' | false;
    build: 'never';
    progressLogs: false;
    logLevel: 'error' | 'warn';
    maxThreads?: number;
  }): Promise<Llama>;
  LlamaChat: new (options: { contextSequence: LlamaContextSequence }) => LlamaChat;
  TokenBias: new (tokenizer: Tokenizer) => TokenBias;
}

export interface Llama {
  readonly gpu: string | false;
  readonly cpuMathCores: number;
  readonly buildType: 'localBuild' | 'prebuilt';
  getGpuDeviceNames(): Promise<string[]>;
  loadModel(options: { modelPath: string; gpuLayers?: 'auto' | number }): Promise<LlamaModel>;
  createGrammarForJsonSchema(schema: Record<string, unknown>): Promise<LlamaGrammar>;
  getGrammarFor(type: 'json'): Promise<LlamaGrammar>;
  dispose(): Promise<void>;
}

export type Tokenizer = (text: string) => Token[];

export interface LlamaModel {
  readonly tokenizer: Tokenizer;
  readonly trainContextSize: number;
  readonly gpuLayers: number;
  readonly size: number;
  tokenize(text: string): Token[];
  createContext(options: { contextSize: number | { max: number }; threads?: number }): Promise<LlamaContext>;
  createEmbeddingContext(options: {
    contextSize: number | { max: number };
    threads?: number;
  }): Promise<LlamaEmbeddingContext>;
  dispose(): Promise<void>;
}

export interface LlamaEmbeddingContext {
  getEmbeddingFor(text: string): Promise<{ readonly vector: readonly number[] }>;
  dispose(): Promise<void>;
}

export interface LlamaContext {
  readonly contextSize: number;
  readonly idealThreads: number;
  getSequence(): LlamaContextSequence;
  dispose(): Promise<void>;
}

export interface LlamaContextSequence {
  readonly tokenMeter: { readonly usedInputTokens: number; readonly usedOutputTokens: number };
}

export interface TokenBias {
  set(token: Token, bias: 'never' | number | { logit: number }): this;
}

export type LlamaGrammar = object & { __grammar: true };

export type ChatHistoryItem =
  { type: 'system'; text: string } | { type: 'user'; text: string } | { type: 'model'; response: string[] };

export interface LlamaChat {
  generateResponse(
    history: ChatHistoryItem[],
    options: {
      maxTokens?: number;
      temperature?: number;
      grammar?: LlamaGrammar;
      tokenBias?: TokenBias;
      customStopTriggers?: string[];
      signal?: AbortSignal;
      onTextChunk?: (text: string) => void;
    },
  ): Promise<{ response: string; metadata: { stopReason: string } }>;
  dispose(): void;
}
