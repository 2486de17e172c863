/**
 * Token counting with tiktoken, and the token ids of classifier answer labels for `logit_bias`.
 *
 * Encoders are WASM objects: they are created once per encoding and kept for the life of the process
 * (a handful at most).
 */
import { CountCache } from './count-cache.js';
import { get_encoding, get_encoding_name_for_model } from './tiktoken.js';
import type { Tiktoken, TiktokenEncoding, TiktokenModel } from '@dqbd/tiktoken';
import type { AnswerLabel, ChatMessage } from './types.js';

/** Used for model names tiktoken does not know (local models): close enough to budget and report. */
const FALLBACK_ENCODING: TiktokenEncoding = 'o200k_base';

/** A model whose encoding is the fallback's: counts for a budget where no model is at hand. */
export const DEFAULT_TOKENIZER_MODEL = 'gpt-4o';

const encoders = new Map<TiktokenEncoding, Tiktoken>();
const encodingNames = new Map<string, TiktokenEncoding | undefined>();

/** The encoding tiktoken uses for `modelName`, or undefined when it does not know the model. */
export function knownEncoding(modelName: string): TiktokenEncoding | undefined {
  if (!encodingNames.has(modelName)) {
    let name: TiktokenEncoding | undefined;
    try {
      name = get_encoding_name_for_model(modelName as TiktokenModel);
    } catch {
      // Local model names (llama3, qwen2.5:7b, …) are not in tiktoken's table; the caller decides.
      name = undefined;
    }
    encodingNames.set(modelName, name);
  }
  return encodingNames.get(modelName);
}

function encoderFor(modelName: string): Tiktoken {
  const name = knownEncoding(modelName) ?? FALLBACK_ENCODING;
  let encoder = encoders.get(name);
  if (!encoder) {
    encoder = get_encoding(name);
    encoders.set(name, encoder);
  }
  return encoder;
}

/**
 * Characters of text whose counts are remembered per encoding (see count-cache.ts): a few MB, which
 * is the turns of a full history window (some 30 000 characters) a hundred times over.
 */
const COUNTED_CHARS_KEPT = 4_000_000;
const counts = new Map<TiktokenEncoding, CountCache>();

/**
 * Tokens in `text` for `modelName` (an estimate with o200k_base for models tiktoken does not know).
 * Remembered: every prompt of a conversation repeats the turns before it, and encoding is the costly part.
 */
export function countTokens(modelName: string, text: string): number {
  if (text === '') return 0;
  const encoding = knownEncoding(modelName) ?? FALLBACK_ENCODING;
  let known = counts.get(encoding);
  if (!known) counts.set(encoding, (known = new CountCache(COUNTED_CHARS_KEPT)));
  let count = known.get(text);
  if (count === undefined) {
    count = encodedLength(encoderFor(modelName), text);
    known.set(text, count);
  }
  return count;
}

/** Characters encoded at once: BPE takes time quadratic in the length of a run without spaces. */
const PIECE_CHARS = 1000;

/** Where a run without spaces is cut, when a piece has no space to end before. */
const RUN_CHARS = 256;

const SPACE = 0x20;

/**
 * The encoded length of `text`, encoded in pieces that end before a space (where a word's token
 * begins anyway), so a megabyte of `xxxx…` costs well under a second rather than hours. Text whose
 * every piece has a space is counted exactly; a run without spaces is cut every RUN_CHARS
 * characters, which may count one token more per cut (a token rarely spans more than a few dozen
 * characters). Linear in the length of `text`: the search for a space looks back only within the
 * piece, never to the start of the text (which made 20 MiB without spaces take minutes).
 */
function encodedLength(encoder: Tiktoken, text: string): number {
  if (text.length <= 2 * PIECE_CHARS) return encoder.encode_ordinary(text).length;
  let total = 0;
  for (let start = 0; start < text.length;) {
    const end = pieceEnd(text, start);
    total += encoder.encode_ordinary(text.slice(start, end)).length;
    start = end;
  }
  return total;
}

/**
 * Where the piece that begins at `start` ends: before its last space, else RUN_CHARS on. Looks at
 * PIECE_CHARS characters at most, so the whole text is scanned a bounded number of times.
 */
function pieceEnd(text: string, start: number): number {
  const limit = start + PIECE_CHARS;
  if (limit >= text.length) return text.length;
  // A piece may end at `limit` itself: the next one then begins with the space.
  for (let at = limit; at > start; at -= 1) if (text.charCodeAt(at) === SPACE) return at;
  const end = start + RUN_CHARS;
  // Never between the two halves of a surrogate pair.
  return isHighSurrogate(text.charCodeAt(end - 1)) ? end - 1 : end;
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

/**
 * Prompt tokens of a chat request, counted the way OpenAI documents for its chat models: each message
 * costs its content plus 3 tokens of framing, and the reply is primed with 3 more.
 */
export function countMessageTokens(
  modelName: string,
  messages: readonly Pick<ChatMessage, 'content'>[],
): number {
  let total = 3;
  for (const message of messages) total += 3 + countTokens(modelName, message.content);
  return total;
}

/**
 * The token ids that spell each label as one token, with and without a leading space (" A" and "A"),
 * as a `logit_bias` map of each label's bias. Undefined when tiktoken does not know the model's
 * tokenizer: ids from another tokenizer would push a server's model toward arbitrary tokens, so no
 * bias is better than a wrong one. Labels that are not a single token in the encoding are left out.
 */
export function labelLogitBias(
  modelName: string,
  labels: readonly AnswerLabel[],
): Record<string, number> | undefined {
  if (!knownEncoding(modelName)) return undefined;
  const encoder = encoderFor(modelName);
  const result: Record<string, number> = {};
  for (const label of labels) {
    for (const spelling of [label.text, ` ${label.text}`]) {
      const ids = encoder.encode_ordinary(spelling);
      if (ids.length === 1) result[String(ids[0])] = label.bias;
    }
  }
  return Object.keys(result).length > 0 ? result : undefined;
}

/** The text of one token id in `modelName`'s encoding (the fallback encoding for unknown models). */
export function tokenText(modelName: string, tokenId: number): string {
  return new TextDecoder().decode(encoderFor(modelName).decode(new Uint32Array([tokenId])));
}
