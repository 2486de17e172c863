/**
 * The lexical side of memory: BM25 over the memories' words (MiniSearch). An identifier such as
 * `ERR_4417`, `user-93a` or `build.gradle` is a term of its own as well as its parts, so a query that
 * names it exactly finds it whatever the embeddings think.
 */
import MiniSearch from 'minisearch';
import { isStopWord } from './stop-words.js';

interface Document {
  id: string;
  text: string;
}

/** Words, and identifiers joined by `_ - . : / #` kept whole beside their parts. */
const COMPOUND = /[\p{L}\p{N}]+(?:[_\-.:/#][\p{L}\p{N}]+)*/gu;
const PART = /[\p{L}\p{N}]+/gu;

/** The terms of `text` as the index keeps them, before lowercasing; Postgres memory keeps the same. */
export function terms(text: string): string[] {
  const found: string[] = [];
  for (const [compound] of text.matchAll(COMPOUND)) {
    const parts = compound.match(PART) ?? [];
    if (parts.length > 1) found.push(compound);
    found.push(...parts);
  }
  return found;
}

/** The distinct terms of a query that say what it is about, lowercase: its function words left out. */
export function queryTerms(query: string): string[] {
  const lower = terms(query).map((term) => term.toLowerCase());
  return [...new Set(lower.filter((term) => !isStopWord(term)))];
}

const OPTIONS = {
  fields: ['text'],
  tokenize: terms,
  processTerm: (term: string) => term.toLowerCase(),
  // Vacuuming runs on timers; the store vacuums when it compacts, and a CLI command must exit at once.
  autoVacuum: false,
};

export class WordIndex {
  readonly #search: MiniSearch<Document>;

  private constructor(search: MiniSearch<Document>) {
    this.#search = search;
  }

  static create(): WordIndex {
    return new WordIndex(new MiniSearch<Document>(OPTIONS));
  }

  /** From `toJSON()`'s text; throws when it is not one. */
  static load(json: string): WordIndex {
    return new WordIndex(MiniSearch.loadJSON<Document>(json, OPTIONS));
  }

  get size(): number {
    return this.#search.documentCount;
  }

  add(id: string, text: string): void {
    this.#search.add({ id, text });
  }

  remove(id: string): void {
    if (this.#search.has(id)) this.#search.discard(id);
  }

  /**
   * The `k` best matches, best first, by the query's terms less its function words (queryTerms); a
   * score is BM25's (higher is better, unbounded).
   */
  search(query: string, k: number): Array<{ id: string; score: number }> {
    const wanted = queryTerms(query);
    if (wanted.length === 0) return [];
    return this.#search
      .search(wanted.join(' '), { combineWith: 'OR', tokenize: (text) => text.split(' ') })
      .slice(0, k)
      .map((result) => ({ id: String(result.id), score: result.score }));
  }

  toJSON(): string {
    return JSON.stringify(this.#search);
  }
}
