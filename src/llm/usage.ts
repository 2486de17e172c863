/**
 * Usage and cost accounting. A UsageMeter wraps the models of one run, counts calls, tokens and time
 * per role, and reports each call as a `model.call` event (and stream pieces as `model.delta`).
 * Prices cover well-known OpenAI models; anything else (local models, the scripted provider) costs
 * nothing and is shown as local.
 */
import type { EventBus } from '../events.js';
import type {
  Completion,
  CompletionChunk,
  CompletionRequest,
  Embeddings,
  LanguageModel,
  ModelRole,
  ModelSet,
  TokenUsage,
} from './types.js';

/** US dollars per million tokens. */
export interface Price {
  input: number;
  output: number;
}

/** OpenAI list prices (standard tier). Dated model names match their family (`gpt-4o-mini-2024-07-18`). */
export const PRICES: Readonly<Record<string, Price>> = {
  'gpt-5': { input: 1.25, output: 10 },
  'gpt-5-mini': { input: 0.25, output: 2 },
  'gpt-5-nano': { input: 0.05, output: 0.4 },
  'gpt-4.1': { input: 2, output: 8 },
  'gpt-4.1-mini': { input: 0.4, output: 1.6 },
  'gpt-4.1-nano': { input: 0.1, output: 0.4 },
  'gpt-4o': { input: 2.5, output: 10 },
  'gpt-4o-mini': { input: 0.15, output: 0.6 },
  'gpt-4-turbo': { input: 10, output: 30 },
  'gpt-3.5-turbo': { input: 0.5, output: 1.5 },
  o1: { input: 15, output: 60 },
  o3: { input: 2, output: 8 },
  'o3-mini': { input: 1.1, output: 4.4 },
  'o4-mini': { input: 1.1, output: 4.4 },
  'text-embedding-3-small': { input: 0.02, output: 0 },
  'text-embedding-3-large': { input: 0.13, output: 0 },
  'text-embedding-ada-002': { input: 0.1, output: 0 },
};

/** The price of `modelName`, matched by the longest family name; undefined for local or unknown models. */
export function priceOf(modelName: string): Price | undefined {
  let best: string | undefined;
  for (const family of Object.keys(PRICES)) {
    const matches = modelName === family || modelName.startsWith(`${family}-`);
    if (matches && (!best || family.length > best.length)) best = family;
  }
  return best ? PRICES[best] : undefined;
}

/** Dollars for `usage` on `modelName`, or undefined when the model has no known price. */
export function costOf(modelName: string, usage: TokenUsage): number | undefined {
  const price = priceOf(modelName);
  if (!price) return undefined;
  return (usage.promptTokens * price.input + usage.completionTokens * price.output) / 1_000_000;
}

/** What one role, or a whole run, has used. */
export interface UsageTotals {
  calls: number;
  promptTokens: number;
  completionTokens: number;
  /** Time spent waiting for models. */
  ms: number;
  costUsd: number;
  /** True when no call had a known price (local models, the scripted provider). */
  local: boolean;
}

function emptyTotals(): UsageTotals {
  return { calls: 0, promptTokens: 0, completionTokens: 0, ms: 0, costUsd: 0, local: true };
}

/** Counts the calls of one run, per role. */
export class UsageMeter {
  readonly #byRole = new Map<ModelRole, UsageTotals>();

  constructor(private readonly bus?: EventBus) {}

  /** Wraps every model of the set; the wrappers keep the models' ids, names and capabilities. */
  meter(models: ModelSet): ModelSet {
    return {
      chatbot: this.wrap('chatbot', models.chatbot),
      classifier: this.wrap('classifier', models.classifier),
      userbot: this.wrap('userbot', models.userbot),
      embedder: this.wrap('embedder', models.embedder),
    };
  }

  /** Each of `models` metered as a chat model (a flow's nodes' models), by the same keys. */
  meterEach<K>(models: ReadonlyMap<K, LanguageModel>): Map<K, LanguageModel> {
    return new Map([...models].map(([key, model]) => [key, this.wrap('chatbot', model)]));
  }

  /** A model that does what `model` does and reports each call as `role`. */
  wrap(role: ModelRole, model: LanguageModel): LanguageModel {
    const record = (purpose: string, usage: TokenUsage, started: number, answeredBy: string) =>
      this.#record(role, model, purpose, usage, performance.now() - started, answeredBy);
    return {
      id: model.id,
      modelName: model.modelName,
      capabilities: model.capabilities,
      answersFrom: model.answersFrom,
      complete: async (request: CompletionRequest): Promise<Completion> => {
        const started = performance.now();
        const completion = await model.complete(request);
        record(purposeOf(request), completion.usage, started, completion.model);
        return completion;
      },
      stream: async (
        request: CompletionRequest,
        onChunk: (chunk: CompletionChunk) => void,
      ): Promise<Completion> => {
        const started = performance.now();
        const purpose = purposeOf(request);
        const completion = await model.stream(request, (chunk) => {
          this.bus?.emit({ type: 'model.delta', role, purpose, delta: chunk.delta });
          onChunk(chunk);
        });
        record(purpose, completion.usage, started, completion.model);
        return completion;
      },
      embed: async (texts: string[], signal?: AbortSignal): Promise<Embeddings> => {
        const started = performance.now();
        const embeddings = await model.embed(texts, signal);
        record(
          `embed ${texts.length} ${texts.length === 1 ? 'text' : 'texts'}`,
          embeddings.usage,
          started,
          embeddings.model,
        );
        return embeddings;
      },
    };
  }

  /** Totals per role that made at least one call. */
  byRole(): Partial<Record<ModelRole, UsageTotals>> {
    return Object.fromEntries([...this.#byRole].map(([role, totals]) => [role, { ...totals }]));
  }

  /** Totals over all roles. */
  total(): UsageTotals {
    const sum = emptyTotals();
    for (const totals of this.#byRole.values()) {
      sum.calls += totals.calls;
      sum.promptTokens += totals.promptTokens;
      sum.completionTokens += totals.completionTokens;
      sum.ms += totals.ms;
      sum.costUsd += totals.costUsd;
      sum.local &&= totals.local;
    }
    return sum;
  }

  #record(
    role: ModelRole,
    model: LanguageModel,
    purpose: string,
    usage: TokenUsage,
    ms: number,
    answeredBy: string,
  ): void {
    const totals = this.#byRole.get(role) ?? emptyTotals();
    const cost = costOf(model.modelName, usage);
    totals.calls += 1;
    totals.promptTokens += usage.promptTokens;
    totals.completionTokens += usage.completionTokens;
    totals.ms += ms;
    totals.costUsd += cost ?? 0;
    totals.local &&= cost === undefined;
    this.#byRole.set(role, totals);
    this.bus?.emit({
      type: 'model.call',
      role,
      model: answeredBy || model.modelName,
      purpose,
      usage,
      ...(cost !== undefined && { costUsd: cost }),
      ms: Math.round(ms),
      scripted: model.answersFrom === 'rules',
    });
  }
}

/** One line for a terminal: `12 calls · 1,234 in / 56 out tokens · $0.0012 · 3.4 s` (or `local`). */
export function formatUsage(totals: UsageTotals): string {
  const count = new Intl.NumberFormat('en-US');
  const parts = [
    `${totals.calls} ${totals.calls === 1 ? 'call' : 'calls'}`,
    `${count.format(totals.promptTokens)} in / ${count.format(totals.completionTokens)} out tokens`,
    totals.local ? 'local' : formatDollars(totals.costUsd),
    `${(totals.ms / 1000).toFixed(1)} s`,
  ];
  return parts.join(' · ');
}

function formatDollars(amount: number): string {
  if (amount === 0) return '$0';
  if (amount < 0.0001) return '<$0.0001';
  return amount < 0.01 ? `$${amount.toFixed(4)}` : `$${amount.toFixed(2)}`;
}

function purposeOf(request: CompletionRequest): string {
  return request.purpose ?? 'unlabelled call';
}
