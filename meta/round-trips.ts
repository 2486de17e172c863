/**
 * Counts model calls and the sequential round trips among them (the critical path): a call that starts
 * after another has answered is one round trip deeper than it. Concurrent calls share a depth, so a
 * design whose per-node calls overlap costs one round trip for all of them, however many nodes it has.
 */
import type {
  Completion,
  CompletionChunk,
  CompletionRequest,
  Embeddings,
  LanguageModel,
  ModelSet,
} from '../src/llm/types.js';

/** What a tracker has seen so far. */
export interface RoundTripFigures {
  /** Model calls made (completions, streams and embeddings). */
  calls: number;
  /** Length of the longest chain of calls each started after the previous one answered. */
  roundTrips: number;
}

/** Records every call of the models it wraps, and the answers; one tracker per design run. */
export class RoundTripTracker {
  #calls = 0;
  /** Deepest call that has answered: a call starting now waits on it, so it sits one deeper. */
  #answeredDepth = 0;
  #deepest = 0;
  /** The last answer per call purpose, kept so a failed design can show what the model wrote. */
  readonly #answers = new Map<string, string>();
  #latest: string | undefined;

  /** The figures so far. */
  figures(): RoundTripFigures {
    return { calls: this.#calls, roundTrips: this.#deepest };
  }

  /** The last answer given for `purpose`, or the last answer of all when no purpose is named. */
  lastAnswer(purpose?: string): string | undefined {
    return purpose === undefined ? this.#latest : this.#answers.get(purpose);
  }

  /** Wraps every role's model; a model shared by several roles is wrapped once. */
  wrapSet(models: ModelSet): ModelSet {
    const wrapped = new Map<LanguageModel, LanguageModel>();
    const wrap = (model: LanguageModel): LanguageModel => {
      let w = wrapped.get(model);
      if (!w) wrapped.set(model, (w = this.wrap(model)));
      return w;
    };
    return Object.fromEntries(Object.entries(models).map(([role, model]) => [role, wrap(model)])) as ModelSet;
  }

  /** A model that behaves as `model` and reports each call to this tracker. */
  wrap(model: LanguageModel): LanguageModel {
    const track = <T>(call: () => Promise<T>): Promise<T> => this.#track(call);
    return {
      id: model.id,
      modelName: model.modelName,
      capabilities: model.capabilities,
      answersFrom: model.answersFrom,
      complete: (request: CompletionRequest): Promise<Completion> =>
        track(() => model.complete(request).then((c) => this.#answered(request, c))),
      stream: (request: CompletionRequest, onChunk: (chunk: CompletionChunk) => void): Promise<Completion> =>
        track(() => model.stream(request, onChunk).then((c) => this.#answered(request, c))),
      embed: (texts: string[], signal?: AbortSignal): Promise<Embeddings> =>
        track(() => model.embed(texts, signal)),
    };
  }

  #answered(request: CompletionRequest, completion: Completion): Completion {
    this.#latest = completion.text;
    if (request.purpose !== undefined) this.#answers.set(request.purpose, completion.text);
    return completion;
  }

  async #track<T>(call: () => Promise<T>): Promise<T> {
    this.#calls++;
    const depth = this.#answeredDepth + 1;
    this.#deepest = Math.max(this.#deepest, depth);
    try {
      return await call();
    } finally {
      this.#answeredDepth = Math.max(this.#answeredDepth, depth);
    }
  }
}
