import { get_encoding } from '@dqbd/tiktoken';
import { describe, expect, it } from 'vitest';
import { countTokens } from '../../src/llm/tokens.js';

describe('countTokens', () => {
  it('counts prose exactly, however long', () => {
    const prose = 'The quick brown fox jumps over the lazy dog.\nIt was not amused. '.repeat(4000);
    expect(countTokens('gpt-4o-mini', prose)).toBe(get_encoding('o200k_base').encode_ordinary(prose).length);
  });

  it('counts a megabyte without a single space (a model or file gone wrong) instead of hanging', () => {
    // Unsplit, BPE over one such run takes time quadratic in its length: hours for a megabyte.
    expect(countTokens('gpt-4o-mini', 'x'.repeat(1_000_000))).toBe(125_000);
  });

  it('never cuts an emoji in half', () => {
    expect(countTokens('gpt-4o-mini', '😀'.repeat(5000))).toBe(5000);
  });
});
