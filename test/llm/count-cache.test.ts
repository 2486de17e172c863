import { describe, expect, it } from 'vitest';
import { CountCache } from '../../src/llm/count-cache.js';

const transcript = (reply: number) => `transcript ${reply} ${'x'.repeat(6_000)}`;

describe('CountCache', () => {
  it('remembers a text from its second count on', () => {
    const cache = new CountCache(100_000);
    const turn = 'Message 1: tell me a little more about topic number 1, please.';
    cache.set(turn, 17);
    expect(cache.get(turn)).toBeUndefined();
    cache.set(turn, 17);
    expect(cache.get(turn)).toBe(17);
  });

  it('keeps none of the texts counted only once, however many there are', () => {
    const cache = new CountCache(100_000);
    for (let reply = 0; reply < 1_000; reply++) cache.set(transcript(reply), reply);
    expect(cache.heldChars).toBe(0);
  });

  it('keeps the turns every prompt repeats while new transcripts pass through', () => {
    const cache = new CountCache(50_000);
    const turn = 'Message 1: tell me a little more about topic number 1, please.';
    cache.set(turn, 17);
    cache.set(turn, 17);
    for (let reply = 0; reply < 100; reply++) {
      expect(cache.get(turn)).toBe(17);
      cache.set(transcript(reply), reply);
    }
  });

  it('holds no more text than its budget, forgetting the least recently used', () => {
    const cache = new CountCache(100_000);
    for (let reply = 0; reply < 1_000; reply++) {
      cache.set(transcript(reply), reply);
      cache.set(transcript(reply), reply);
    }
    expect(cache.heldChars).toBeLessThanOrEqual(100_000);
    expect(cache.get(transcript(999))).toBe(999);
    expect(cache.get(transcript(0))).toBeUndefined();
  });

  it('does not remember a text larger than its whole budget', () => {
    const cache = new CountCache(1_000);
    cache.set('y'.repeat(5_000), 625);
    cache.set('y'.repeat(5_000), 625);
    expect(cache.get('y'.repeat(5_000))).toBeUndefined();
    expect(cache.heldChars).toBe(0);
  });
});
