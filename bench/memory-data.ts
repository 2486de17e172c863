/**
 * The memory benchmark's data, made the same in every process from a seed: clustered unit vectors of
 * 384 dimensions (the size of small sentence-embedding models), and queries drawn the same way but not
 * among them; an embedder that looks them up by text; and exact (brute-force cosine) neighbours.
 *
 * A point is one of CENTRES random directions plus isotropic Gaussian noise, normalized: its cosine to
 * its centre is about 0.8, to a point of its own cluster about 0.6, to any other point about 0. This is
 * the hard case for a graph index: in 384 dimensions isotropic noise makes the distances inside a
 * cluster nearly equal (the 10th neighbour of a query is barely closer than its 100th), whereas real
 * embeddings, whose variance falls off over their principal directions, give it more to go on.
 */
import type { Embedder } from '../memory/embedding.js';
import { seededRandom } from '../src/engine/simulate.js';

export const DIMENSIONS = 384;
export const CENTRES = 100;
/** The noise's standard deviation in each dimension: a variance of 0.6 in all, a centre's norm being 1. */
const NOISE_SCALE = Math.sqrt(0.6 / DIMENSIONS);

/** The text each memory is stored as; the embedder maps it back to the vector. */
export function itemText(index: number): string {
  return `item ${index}`;
}

/** The item number of a memory's text (`item N`). */
export function itemNumber(text: string): number {
  const match = /^item (\d+)$/.exec(text);
  if (!match) throw new Error(`a hit that is not a benchmark item: ${JSON.stringify(text)}`);
  return Number(match[1]);
}

/** A query's text: it shares no word with any memory's, so the words side of a search finds nothing. */
export function queryText(index: number): string {
  return `query q${index}`;
}

/** Standard normal numbers (Box–Muller) from a seeded stream. */
function gaussian(seed: number): () => number {
  const next = seededRandom(seed);
  let spare: number | undefined;
  return () => {
    if (spare !== undefined) {
      const value = spare;
      spare = undefined;
      return value;
    }
    const radius = Math.sqrt(-2 * Math.log(1 - next()));
    const angle = 2 * Math.PI * next();
    spare = radius * Math.sin(angle);
    return radius * Math.cos(angle);
  };
}

function normalize(vector: Float64Array): void {
  let norm = 0;
  for (const value of vector) norm += value * value;
  norm = Math.sqrt(norm);
  for (let i = 0; i < vector.length; i++) vector[i]! /= norm;
}

function centres(seed: number): Float64Array[] {
  const random = gaussian(seed);
  return Array.from({ length: CENTRES }, () => {
    const centre = Float64Array.from({ length: DIMENSIONS }, random);
    normalize(centre);
    return centre;
  });
}

/**
 * `count` unit vectors, row after row in one array: point i belongs to centre i mod CENTRES. `stream`
 * picks the noise, so the data set (stream 1) and the queries (stream 2) share centres but no point.
 */
export function clusteredVectors(count: number, seed: number, stream: number): Float32Array {
  const around = centres(seed);
  const random = gaussian(seed * 7919 + stream);
  const out = new Float32Array(count * DIMENSIONS);
  const point = new Float64Array(DIMENSIONS);
  for (let i = 0; i < count; i++) {
    const centre = around[i % CENTRES]!;
    for (let j = 0; j < DIMENSIONS; j++) point[j] = centre[j]! + NOISE_SCALE * random();
    normalize(point);
    out.set(point, i * DIMENSIONS);
  }
  return out;
}

/** Row `index` of `vectors` as the number[] an embedder returns. */
export function row(vectors: Float32Array, index: number): number[] {
  return Array.from(vectors.subarray(index * DIMENSIONS, (index + 1) * DIMENSIONS));
}

/**
 * Not a model: an Embedder that looks each text up (`item N` in `items`, `query qN` in `queries`), so
 * that the store is exercised on its real path (embedding batches, the log, the indexes) with vectors
 * known in advance. Any other text is an error, so a benchmark cannot measure something else unseen.
 */
export function lookupEmbedder(items: Float32Array | undefined, queries: Float32Array): Embedder {
  const lookup = (text: string): number[] => {
    const match = /^(?:item (\d+)|query q(\d+))$/.exec(text);
    const table = match?.[1] !== undefined ? items : queries;
    const index = Number(match?.[1] ?? match?.[2]);
    if (!match || !table || (index + 1) * DIMENSIONS > table.length)
      throw new Error(`the bench embedder has no vector for ${JSON.stringify(text)}`);
    return row(table, index);
  };
  return {
    modelName: 'bench-lookup-384',
    embed: (texts) => Promise.resolve({ vectors: texts.map(lookup) }),
  };
}

/** Cosine similarity of unit rows: the dot product of row `a` of `left` and row `b` of `right`. */
function dot(left: Float32Array, a: number, right: Float32Array, b: number): number {
  let sum = 0;
  const i = a * DIMENSIONS;
  const j = b * DIMENSIONS;
  for (let d = 0; d < DIMENSIONS; d++) sum += left[i + d]! * right[j + d]!;
  return sum;
}

/** The indexes of the `k` rows of `vectors` closest to row `query` of `queries`, closest first. */
export function exactNeighbours(
  vectors: Float32Array,
  queries: Float32Array,
  query: number,
  k: number,
): number[] {
  const count = vectors.length / DIMENSIONS;
  const best: Array<{ index: number; similarity: number }> = [];
  for (let index = 0; index < count; index++) {
    const similarity = dot(vectors, index, queries, query);
    if (best.length === k && similarity <= best[k - 1]!.similarity) continue;
    let at = best.length;
    while (at > 0 && best[at - 1]!.similarity < similarity) at--;
    best.splice(at, 0, { index, similarity });
    if (best.length > k) best.pop();
  }
  return best.map(({ index }) => index);
}
