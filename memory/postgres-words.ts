/**
 * The words side of memory in PostgreSQL: a memory's terms as a `tsvector` and a query's as a
 * `tsquery` of those terms joined by OR, both in Postgres's literal syntax. The terms are the files'
 * (word-index.ts's `terms`, lowercased), not a text search configuration's, so an identifier such as
 * `ERR_4417` is a term of its own beside its parts here too, and the two stores find the same memories
 * by the same words. Pure.
 */
import { queryTerms, terms } from './word-index.js';

/** Postgres's limits on a tsvector: a lexeme's bytes, a position, positions per lexeme, the whole. */
const MAX_LEXEME_BYTES = 2047;
const MAX_POSITION = 16_383;
const MAX_POSITIONS = 256;
/** Lexeme bytes kept of one memory, below the 1 MiB a tsvector may hold (positions take the rest). */
const MAX_VECTOR_BYTES = 600_000;

function lexemes(text: string): string[] {
  return terms(text)
    .map((term) => term.toLowerCase())
    .filter((term) => Buffer.byteLength(term) <= MAX_LEXEME_BYTES);
}

/** A lexeme quoted for a tsvector or tsquery literal. */
function quoted(lexeme: string): string {
  return `'${lexeme.replace(/\\/g, '\\\\').replace(/'/g, "''")}'`;
}

/**
 * `text`'s terms with their positions (which ts_rank counts), as a tsvector literal. A memory of more
 * distinct words than a tsvector can hold keeps its first ones.
 */
export function wordsVector(text: string): string {
  const positions = new Map<string, number[]>();
  let bytes = 0;
  lexemes(text).forEach((lexeme, index) => {
    let at = positions.get(lexeme);
    if (!at) {
      bytes += Buffer.byteLength(lexeme) + 4;
      if (bytes > MAX_VECTOR_BYTES) return;
      positions.set(lexeme, (at = []));
    }
    const position = Math.min(index + 1, MAX_POSITION);
    if (at.length < MAX_POSITIONS && at.at(-1) !== position) at.push(position);
  });
  return [...positions].map(([lexeme, at]) => `${quoted(lexeme)}:${at.join(',')}`).join(' ');
}

/**
 * `query`'s terms less its function words (as the files search), joined by OR as a tsquery literal,
 * or undefined when it has none.
 */
export function wordsQuery(query: string): string | undefined {
  const unique = queryTerms(query).filter((term) => Buffer.byteLength(term) <= MAX_LEXEME_BYTES);
  return unique.length === 0 ? undefined : unique.map(quoted).join(' | ');
}
