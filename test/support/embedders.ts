/**
 * Embedders for memory tests, none of them a model: words hashed into a vector (the scripted provider's
 * feature hashing: texts sharing words are close), one that blurs everything into nearly the same
 * direction (weak embeddings), and one whose server is down.
 */
import { hashEmbedding } from '../../src/llm/scripted.js';
import type { Embedder } from '../../memory/embedding.js';

export function wordEmbedder(modelName = 'hashed-words'): Embedder & { calls: number } {
  return {
    modelName,
    calls: 0,
    async embed(texts) {
      this.calls++;
      return { vectors: texts.map(hashEmbedding) };
    },
  };
}

/** Every text lands near the same point: meaning says almost nothing. */
export function weakEmbedder(): Embedder {
  return {
    modelName: 'weak',
    async embed(texts) {
      return {
        vectors: texts.map((text) => [
          1,
          ...hashEmbedding(text)
            .slice(0, 15)
            .map((value) => value * 1e-3),
        ]),
      };
    },
  };
}

export function downEmbedder(): Embedder & { calls: number } {
  return {
    modelName: 'down',
    calls: 0,
    async embed() {
      this.calls++;
      throw new Error('connect ECONNREFUSED 127.0.0.1:11434');
    },
  };
}
