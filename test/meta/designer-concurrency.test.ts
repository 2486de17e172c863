import { describe, expect, it } from 'vitest';
import { mapBounded } from '../../src/map-bounded.js';
import { DEFAULT_DESIGN_LIMITS, designConcurrency, LOCAL_CONCURRENCY } from '../../meta/limits.js';
import { RoundTripTracker } from '../../meta/round-trips.js';
import { batches, MAX_NODES_PER_CALL } from '../../meta/write-fields.js';
import { TEXT_ONLY, type Completion, type LanguageModel } from '../../src/llm/types.js';

/** A job whose completion the test controls, recording how many ran at once. */
function gate() {
  let inFlight = 0;
  let peak = 0;
  const waiting: (() => void)[] = [];
  const job = async (n: number): Promise<number> => {
    inFlight++;
    peak = Math.max(peak, inFlight);
    await new Promise<void>((resolve) => waiting.push(resolve));
    inFlight--;
    return n * 2;
  };
  const releaseAll = async (): Promise<void> => {
    while (waiting.length > 0 || inFlight > 0) {
      waiting.splice(0).forEach((resolve) => resolve());
      await new Promise((resolve) => setImmediate(resolve));
    }
  };
  return { job, releaseAll, peak: () => peak };
}

describe('bounded concurrency', () => {
  it('never runs more than the limit at once and keeps results in input order', async () => {
    const g = gate();
    const done = mapBounded([1, 2, 3, 4, 5, 6, 7], 3, g.job);
    await g.releaseAll();
    expect(await done).toEqual([2, 4, 6, 8, 10, 12, 14]);
    expect(g.peak()).toBe(3);
  });

  it('starts every job at once when the limit is above the item count', async () => {
    const g = gate();
    const done = mapBounded([1, 2, 3], 8, g.job);
    await g.releaseAll();
    await done;
    expect(g.peak()).toBe(3);
  });

  it('rejects with the first failure and starts no further jobs', async () => {
    const started: number[] = [];
    const failing = mapBounded([1, 2, 3, 4], 1, async (n) => {
      started.push(n);
      if (n === 2) throw new Error('boom');
      return n;
    });
    await expect(failing).rejects.toThrow('boom');
    expect(started).toEqual([1, 2]);
  });

  it('refuses a limit below one', async () => {
    await expect(mapBounded([1], 0, async (n) => n)).rejects.toThrow(RangeError);
  });
});

describe('round-trip counting', () => {
  function model(): { model: LanguageModel; answerAll: () => void } {
    const pending: (() => void)[] = [];
    const answer = (): Promise<Completion> =>
      new Promise((resolve) =>
        pending.push(() =>
          resolve({ text: 'ok', usage: { promptTokens: 1, completionTokens: 1 }, model: 'm' }),
        ),
      );
    return {
      model: {
        id: 'test',
        modelName: 'm',
        capabilities: TEXT_ONLY,
        answersFrom: 'model',
        complete: answer,
        stream: answer,
        embed: () => Promise.reject(new Error('unused')),
      },
      answerAll: () => pending.splice(0).forEach((resolve) => resolve()),
    };
  }

  it('counts overlapping calls as one round trip and a call after an answer as the next', async () => {
    const { model: base, answerAll } = model();
    const tracker = new RoundTripTracker();
    const wrapped = tracker.wrap(base);
    const first = wrapped.complete({ messages: [] });
    answerAll();
    await first;
    const wave = [1, 2, 3].map(() => wrapped.complete({ messages: [] }));
    answerAll();
    await Promise.all(wave);
    expect(tracker.figures()).toEqual({ calls: 4, roundTrips: 2 });
  });
});

describe('the concurrency for a server', () => {
  it('is the local one for a loopback name and the default for any other server', () => {
    for (const url of ['http://localhost:11434/v1', 'http://127.0.0.2:1234/v1', 'http://[::1]:8080/v1'])
      expect(designConcurrency(url)).toBe(LOCAL_CONCURRENCY);
    for (const url of ['https://api.openai.com/v1', 'http://192.168.1.20:11434/v1', undefined])
      expect(designConcurrency(url)).toBe(DEFAULT_DESIGN_LIMITS.concurrency);
  });
});

describe('nodes per call', () => {
  const sizes = (items: number, concurrency: number) =>
    batches(
      Array.from({ length: items }, (_, i) => i),
      concurrency,
    ).map((batch) => batch.length);

  it('asks for one node a call while there are calls enough for every node', () => {
    expect(sizes(40, 40)).toEqual(Array(40).fill(1));
    expect(sizes(3, 4)).toEqual([1, 1, 1]);
  });

  it('spreads more nodes than calls over the calls in flight, keeping them in order', () => {
    expect(batches([1, 2, 3, 4, 5], 4)).toEqual([[1], [2, 3], [4, 5]]);
    expect(sizes(20, 4)).toEqual([5, 5, 5, 5]);
  });

  it('asks for no more than MAX_NODES_PER_CALL nodes a call, so 40 nodes take two waves of four calls', () => {
    expect(sizes(40, 4)).toEqual(Array(8).fill(MAX_NODES_PER_CALL));
    for (let nodes = 1; nodes <= 40; nodes++)
      expect(Math.ceil(sizes(nodes, 4).length / 4)).toBeLessThanOrEqual(2);
  });
});
