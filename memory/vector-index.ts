/**
 * An hnswlib-node index with its sharp edges filed off: labels are checked 32-bit integers (hnswlib
 * keeps a label's low 32 bits, so 2^32 silently overwrites label 0, and -1 becomes 4294967295), the
 * index grows before it is full instead of throwing, vectors must have the index's dimensions and be
 * finite, deleted elements are left out of the size, and a file is loaded only after it passed
 * hnsw-file.ts's checks, from the file whose bytes were checked.
 */
import hnswlib from 'hnswlib-node';
import { IndexFileCheck, MIN_CAPACITY } from './hnsw-file.js';

const { HierarchicalNSW } = hnswlib;
type Hnsw = InstanceType<typeof HierarchicalNSW>;

export const MAX_LABEL = 0xffff_ffff;

/** Candidates a search keeps at least (hnswlib's `ef`): recall@10 ≥ 0.95 at 100,000 vectors (bench). */
export const SEARCH_EF = 64;

export interface IndexShape {
  dimensions: number;
  /** Links per element (hnswlib's M). */
  m: number;
  efConstruction: number;
}

export const DEFAULT_SHAPE = { m: 16, efConstruction: 100 } as const;

/** An index file that cannot be loaded; the message says why. */
export class IndexFileRejected extends Error {}

export class VectorIndex {
  readonly #index: Hnsw;
  readonly dimensions: number;
  readonly #deleted = new Set<number>();

  private constructor(index: Hnsw, dimensions: number) {
    this.#index = index;
    this.dimensions = dimensions;
  }

  static create(shape: IndexShape, capacity = MIN_CAPACITY): VectorIndex {
    const index = new HierarchicalNSW('cosine', shape.dimensions);
    index.initIndex({
      maxElements: Math.max(capacity, MIN_CAPACITY),
      m: shape.m,
      efConstruction: shape.efConstruction,
      randomSeed: 100,
    });
    return new VectorIndex(index, shape.dimensions);
  }

  /**
   * Loads the index file at `path` once `bytes`, the file read front to back in chunks, passed the
   * checks (hnsw-file.ts): `path` must open those very bytes (files.ts's openFilePath), and `bytes` may
   * throw to refuse the file (a digest that does not match). `labels`: the labels it must hold, each
   * once, or their count when they are 0 to count - 1. `deleted`: labels it holds that are no longer
   * live.
   */
  static async load(
    path: string,
    bytes: Iterable<Buffer> | AsyncIterable<Buffer>,
    shape: IndexShape,
    labels: number | readonly number[],
    deleted: Iterable<number>,
  ): Promise<VectorIndex> {
    const forgotten = new Set(deleted);
    const check = new IndexFileCheck({
      ...shape,
      labels: typeof labels === 'number' ? Array.from({ length: labels }, (_, label) => label) : labels,
      deleted: forgotten,
    });
    for await (const chunk of bytes) check.feed(chunk);
    const problem = check.finish();
    if (problem) throw new IndexFileRejected(problem);
    const index = new HierarchicalNSW('cosine', shape.dimensions);
    try {
      await index.readIndex(path);
    } catch (error) {
      // The bytes were checked; a file hnswlib still cannot read is rebuilt like any rejected one.
      throw new IndexFileRejected(`hnswlib could not read it (${(error as Error).message})`);
    }
    const loaded = new VectorIndex(index, shape.dimensions);
    const held = new Set(index.getIdsList());
    for (const label of forgotten) if (held.has(label)) loaded.remove(label);
    return loaded;
  }

  /** Elements a search can find. */
  get size(): number {
    return this.#index.getCurrentCount() - this.#deleted.size;
  }

  /** Elements deleted but still taking room, until the index is rebuilt. */
  get deletedCount(): number {
    return this.#deleted.size;
  }

  add(label: number, vector: readonly number[]): void {
    checkLabel(label);
    this.#checkVector(vector);
    const index = this.#index;
    if (index.getCurrentCount() >= index.getMaxElements()) index.resizeIndex(index.getMaxElements() * 2);
    index.addPoint(vector as number[], label);
  }

  /** Marks `label` deleted; a search no longer returns it. */
  remove(label: number): void {
    checkLabel(label);
    if (this.#deleted.has(label)) return;
    try {
      this.#index.markDelete(label);
    } catch (error) {
      // A loaded file keeps the marks made before it was written.
      if (!/already deleted/.test(String(error))) throw error;
    }
    this.#deleted.add(label);
  }

  /** The `k` nearest live elements, nearest first, with their cosine similarity. */
  search(vector: readonly number[], k: number): Array<{ label: number; similarity: number }> {
    this.#checkVector(vector);
    const n = Math.min(k, this.size);
    if (n <= 0) return [];
    this.#index.setEf(Math.max(SEARCH_EF, n));
    const { neighbors, distances } = this.#index.searchKnn(vector as number[], n);
    return neighbors.map((label, i) => ({ label, similarity: 1 - distances[i]! }));
  }

  /** The stored vector of `label` (normalized: the space is cosine). */
  vector(label: number): number[] {
    checkLabel(label);
    return this.#index.getPoint(label);
  }

  /** Writes the index to `path` (the caller makes that atomic). */
  async write(path: string): Promise<void> {
    await this.#index.writeIndex(path);
  }

  #checkVector(vector: readonly number[]): void {
    if (vector.length !== this.dimensions)
      throw new RangeError(`a vector of ${vector.length} dimensions for an index of ${this.dimensions}`);
    if (!vector.every(Number.isFinite))
      throw new RangeError('a vector with a value that is not a finite number');
    if (vector.every((value) => value === 0)) throw new RangeError('a vector of zeros has no direction');
  }
}

function checkLabel(label: number): void {
  if (!Number.isInteger(label) || label < 0 || label > MAX_LABEL)
    throw new RangeError(`memory label ${label} is not a 32-bit unsigned integer`);
}
