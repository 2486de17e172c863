/**
 * Hybrid ranking: the meaning side (vector neighbours) and the words side (BM25) each give a ranked
 * list, fused by reciprocal rank (Cormack et al., 2009): neither side's scores need be comparable. A
 * memory holding an identifier the query names verbatim comes before any found by meaning alone, since
 * weak embeddings blur exactly such tokens. A memory found by words counts as much as it covers the
 * query: the share of the query's terms, function words left out (word-index.ts), that it holds; so a
 * score near 1 takes both sides and every word that matters. Pure.
 */
import { queryTerms, terms } from './word-index.js';

/** Reciprocal rank fusion's constant: a rank r counts 1 / (RRF_K + r). */
export const RRF_K = 60;

export interface Ranked {
  id: string;
  /** Cosine similarity, for a neighbour found by meaning. */
  similarity?: number;
}

export interface Fused {
  id: string;
  /** 1 for the first of both lists; higher is closer (an exact identifier adds to it). */
  score: number;
  similarity?: number;
  /** Which sides found it. */
  via: Array<'meaning' | 'words'>;
}

/** Query tokens that look like identifiers: a digit, an inner `_ - . : / #`, or an inner capital. */
export function identifiers(query: string): string[] {
  const tokens = query.match(/[\p{L}\p{N}]+(?:[_\-.:/#][\p{L}\p{N}]+)*/gu) ?? [];
  return tokens.filter(
    (token) =>
      token.length >= 3 && (/\p{N}/u.test(token) || /[_\-.:/#]/.test(token) || /\p{Ll}\p{Lu}/u.test(token)),
  );
}

export function fuse(
  meaning: readonly Ranked[],
  words: readonly Ranked[],
  query: string,
  textOf: (id: string) => string,
  k: number,
): Fused[] {
  const fused = new Map<string, Fused & { raw: number }>();
  const wanted = queryTerms(query);
  const covered = (id: string) => {
    const held = new Set(terms(textOf(id)).map((term) => term.toLowerCase()));
    return wanted.length === 0 ? 0 : wanted.filter((term) => held.has(term)).length / wanted.length;
  };
  const take = (list: readonly Ranked[], side: 'meaning' | 'words') =>
    list.forEach((item, rank) => {
      const entry = fused.get(item.id) ?? { id: item.id, score: 0, raw: 0, via: [] };
      entry.raw += (side === 'words' ? covered(item.id) : 1) / (RRF_K + rank + 1);
      entry.via.push(side);
      if (item.similarity !== undefined) entry.similarity = item.similarity;
      fused.set(item.id, entry);
    });
  take(meaning, 'meaning');
  take(words, 'words');
  const named = identifiers(query).map((token) => token.toLowerCase());
  const best = 2 / (RRF_K + 1);
  for (const entry of fused.values()) {
    const text = textOf(entry.id).toLowerCase();
    entry.raw += named.filter((token) => text.includes(token)).length * best;
    entry.score = Number((entry.raw / best).toFixed(4));
  }
  return [...fused.values()]
    .sort((a, b) => b.raw - a.raw)
    .slice(0, k)
    .map(({ raw: _raw, ...entry }) => entry);
}
