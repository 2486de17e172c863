/**
 * Turning memories into vectors, and whether search can use them. Embeddings come from the embedder
 * when one answers. When none does (no server, no embedding model, another model than the
 * namespace's), memory searches by words alone and says so once; it never pretends.
 */
import { MemoryDamaged } from './files.js';
import type { Manifest } from './manifest.js';

/** What is embedded of a memory: its beginning, within every embedding model's input limit. */
export const EMBED_CHARS = 8_000;

/** What turns texts into vectors: an OpenAI-compatible `/v1/embeddings` model (llm/), or a test's. */
export interface Embedder {
  readonly modelName: string;
  embed(texts: string[], signal?: AbortSignal): Promise<{ vectors: number[][] }>;
}

/** Vectors of texts (none for a text without direction), and the model that made them. */
export interface Embedded {
  model: string;
  vectors: Array<number[] | undefined>;
}

/** A namespace's embedder, and why its search goes by words alone when it does. */
export class Embedding {
  readonly embedder: Embedder | undefined;
  readonly #notice: (message: string) => void;
  #wordsOnly: string | undefined;
  #noticed = false;

  /** Until it `follow`s the namespace's manifest, it knows only whether there is an embedder. */
  constructor(embedder: Embedder | undefined, notice: (message: string) => void) {
    this.embedder = embedder;
    this.#notice = notice;
    this.#wordsOnly = embedder ? undefined : 'no embedder is configured';
  }

  /** Why search goes by words alone, when it does. */
  get wordsOnly(): string | undefined {
    return this.#wordsOnly;
  }

  /**
   * The namespace's manifest (or its row in Postgres) was read (again): whether its vectors suit the
   * embedder is decided anew.
   */
  follow(manifest: Pick<Manifest, 'model'>): void {
    if (this.embedder) this.#wordsOnly = modelMismatch(manifest, this.embedder);
  }

  /** Every memory was embedded again by the embedder: search goes by meaning, a failure is told anew. */
  reindexed(): void {
    this.#wordsOnly = undefined;
    this.#noticed = false;
  }

  /**
   * Vectors for `texts`, or undefined when search goes by words alone (said once). They must have the
   * namespace's `dimensions` as they are once the vectors come (undefined: as many as the first has).
   */
  async embed(
    texts: string[],
    dimensions: () => number | undefined,
    signal?: AbortSignal,
  ): Promise<Embedded | undefined> {
    const embedder = this.embedder;
    if (!embedder || this.#wordsOnly !== undefined) return this.#wordsOnlyNotice();
    try {
      const { vectors } = await embedder.embed(
        texts.map((text) => text.slice(0, EMBED_CHARS)),
        signal,
      );
      try {
        checkVectors(vectors, texts.length, dimensions() ?? vectors[0]?.length ?? 0);
      } catch (problem) {
        return this.#wordsOnlyNotice(`the embedder ${embedder.modelName} ${(problem as Error).message}`);
      }
      return {
        model: embedder.modelName,
        vectors: vectors.map((vector) => (vector.some((value) => value !== 0) ? vector : undefined)),
      };
    } catch (error) {
      if (signal?.aborted) throw error;
      return this.#wordsOnlyNotice(`no embeddings (${(error as Error).message})`);
    }
  }

  /** Says once why search goes by words alone (`reason`: a new one, from now on). */
  #wordsOnlyNotice(reason?: string): undefined {
    if (reason !== undefined) this.#wordsOnly = reason;
    if (!this.#noticed) {
      this.#noticed = true;
      this.#notice(`memory searches by words only: ${this.#wordsOnly}`);
    }
    return undefined;
  }
}

/**
 * The embedder's vectors for `texts`, of `dimensions` each (undefined: as many as the first has), for
 * reindexing: anything else from the embedder is MemoryDamaged, since words alone would not do.
 */
export async function embedAll(
  embedder: Embedder,
  texts: string[],
  dimensions: number | undefined,
  signal?: AbortSignal,
): Promise<number[][]> {
  const { vectors } = await embedder.embed(
    texts.map((text) => text.slice(0, EMBED_CHARS)),
    signal,
  );
  try {
    checkVectors(vectors, texts.length, dimensions ?? vectors[0]?.length ?? 0);
  } catch (error) {
    throw new MemoryDamaged(`the embedder ${embedder.modelName} ${(error as Error).message}`);
  }
  return vectors;
}

/** Throws, saying what is wrong, unless `vectors` are `count` vectors of `dimensions` finite numbers. */
function checkVectors(vectors: readonly number[][], count: number, dimensions: number): void {
  if (vectors.length !== count) throw new Error(`gave ${vectors.length} vectors for ${count} texts`);
  for (const vector of vectors) {
    if (!Array.isArray(vector) || vector.length !== dimensions || dimensions === 0)
      throw new Error(`gave a vector of ${vector?.length} dimensions where ${dimensions} were expected`);
    if (!vector.every((value) => typeof value === 'number' && Number.isFinite(value)))
      throw new Error('gave a vector with a value that is not a finite number');
  }
}

/** Why the namespace's vectors cannot be used with `embedder`, or undefined. */
function modelMismatch(manifest: Pick<Manifest, 'model'>, embedder: Embedder): string | undefined {
  if (manifest.model === undefined || manifest.model === embedder.modelName) return undefined;
  return `its memories were embedded with ${manifest.model} and the embedder is ${embedder.modelName} (\`meta-agent memory reindex\` embeds them again)`;
}
