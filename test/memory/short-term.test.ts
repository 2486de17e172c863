import { describe, expect, it } from 'vitest';
import {
  chooseHistory,
  cutToTokens,
  fitTexts,
  MIN_CUT_TOKENS,
  type ShortTermOptions,
} from '../../memory/short-term.js';
import { countTokens } from '../../src/llm/tokens.js';

/** One token per character: budgets in these tests are easy to check by eye. */
const chars = (text: string) => text.length;

interface Step {
  n: number;
  answer: string;
  result: string;
}

function steps(count: number, result = (n: number) => `result ${n}`.padEnd(40, '.')): Step[] {
  return Array.from({ length: count }, (_, i) => ({
    n: i + 1,
    answer: `answer ${i + 1}`,
    result: result(i + 1),
  }));
}

function options(budget: number, extra: Partial<ShortTermOptions<Step>> = {}): ShortTermOptions<Step> {
  return {
    budget,
    count: chars,
    parts: (step) => [step.answer, step.result],
    digest: (step) => `Step ${step.n}: ${step.result.length} characters`,
    ...extra,
  };
}

/** What a choice costs, counted the way the caller sends it: every part and the earlier block. */
function spent(chosen: ReturnType<typeof chooseHistory<Step>>, overhead = 0): number {
  const texts = [
    ...(chosen.earlier !== undefined ? [chosen.earlier] : []),
    ...chosen.whole.flatMap((w) => w.parts),
  ];
  return texts.reduce((sum, text) => sum + chars(text) + overhead, 0);
}

describe('chooseHistory', () => {
  it('shows every step whole when they fit', () => {
    const chosen = chooseHistory(steps(3), options(1000));
    expect(chosen.whole.map((w) => w.step.n)).toEqual([1, 2, 3]);
    expect(chosen.earlier).toBeUndefined();
    expect(chosen.dropped).toBe(0);
    expect(chosen.tokens).toBe(spent(chosen));
  });

  it('shows nothing for no steps', () => {
    expect(chooseHistory([], options(100))).toEqual({ dropped: 0, whole: [], tokens: 0 });
  });

  it('keeps the newest step when it alone is over the budget: its head and tail, the middle cut', () => {
    const huge = `HEAD ${'middle '.repeat(2000)} TAIL`;
    const history = [...steps(2), { n: 3, answer: 'answer 3', result: huge }];
    const chosen = chooseHistory(history, options(400));
    const newest = chosen.whole.at(-1)!;
    expect(newest.step.n).toBe(3);
    expect(newest.parts[0]).toBe('answer 3');
    expect(newest.parts[1]).toMatch(/^HEAD middle/);
    expect(newest.parts[1]).toMatch(/middle {2}TAIL$/);
    expect(newest.parts[1]).toMatch(/\[… [\d,]+ tokens cut …\]/);
    expect(spent(chosen)).toBeLessThanOrEqual(400);
    // Cut anyway, it leaves the older steps' digests their share.
    expect(chosen.earlier).toBe(
      'The 2 earlier steps, in short:\nStep 1: 40 characters\nStep 2: 40 characters',
    );
  });

  it('keeps the newest step even when the budget is smaller than its answer', () => {
    const history = [{ n: 1, answer: 'a'.repeat(500), result: 'r'.repeat(500) }];
    const chosen = chooseHistory(history, options(120));
    expect(chosen.whole).toHaveLength(1);
    expect(chosen.whole[0]!.parts.join('')).toMatch(/tokens cut/);
    expect(spent(chosen)).toBeLessThanOrEqual(120);
  });

  it('shows older steps that no longer fit whole as digests, newest first, within a quarter of the budget', () => {
    const chosen = chooseHistory(steps(40), options(1000));
    const whole = chosen.whole.map((w) => w.step.n);
    expect(whole.at(-1)).toBe(40);
    const lines = chosen.earlier!.split('\n');
    const digests = lines.slice(1);
    expect(digests.length).toBeGreaterThan(0);
    // Contiguous: the digests end where the whole steps begin, and start where the dropped ones end.
    expect(digests.at(-1)).toBe(`Step ${whole[0]! - 1}: 40 characters`);
    expect(digests[0]).toBe(`Step ${chosen.dropped + 1}: 40 characters`);
    expect(lines[0]).toBe(
      `${chosen.dropped} earlier steps are not shown; the ${digests.length} after, in short:`,
    );
    expect(chars(chosen.earlier!)).toBeLessThanOrEqual(250);
    expect(spent(chosen)).toBeLessThanOrEqual(1000);
  });

  it('says in one line how many steps are not shown when no digest fits', () => {
    const chosen = chooseHistory(steps(12), options(200, { digestShare: 0 }));
    expect(chosen.earlier).toBe(`${chosen.dropped} earlier steps are not shown.`);
    expect(chosen.dropped + chosen.whole.length).toBe(12);
    expect(spent(chosen)).toBeLessThanOrEqual(200);
  });

  it('counts each part with its overhead', () => {
    const chosen = chooseHistory(steps(30), options(900, { partOverhead: 4 }));
    expect(spent(chosen, 4)).toBeLessThanOrEqual(900);
    expect(chosen.tokens).toBeLessThanOrEqual(900);
  });

  it('stays within the budget with a real tokenizer', () => {
    const count = (text: string) => countTokens('gpt-4o', text);
    const history = steps(200, (n) => `line ${n}: ${'lorem ipsum 😀 dolor '.repeat(n % 7 === 0 ? 400 : 5)}`);
    for (const budget of [150, 600, 2000]) {
      const chosen = chooseHistory(history, { ...options(budget), count, partOverhead: 4 });
      const texts = [...(chosen.earlier ? [chosen.earlier] : []), ...chosen.whole.flatMap((w) => w.parts)];
      expect(texts.reduce((sum, text) => sum + count(text) + 4, 0)).toBeLessThanOrEqual(budget);
      expect(chosen.whole.at(-1)!.step.n).toBe(200);
    }
  });
});

describe('fitTexts', () => {
  it('keeps the most relevant texts whole, cuts the one that straddles the budget and drops the rest', () => {
    const fitted = fitTexts(['a'.repeat(100), `${'b'.repeat(300)}END`, 'c'.repeat(10)], 250, chars);
    expect(fitted[0]).toBe('a'.repeat(100));
    expect(fitted[1]).toMatch(/^b+\n\[… [\d,]+ tokens cut …\]\nb*END$/);
    expect(fitted).toHaveLength(2);
    expect(fitted.join('').length).toBeLessThanOrEqual(250);
  });

  it('drops a text rather than keep less than a few words of it', () => {
    const fitted = fitTexts(['a'.repeat(100), 'b'.repeat(300)], 100 + MIN_CUT_TOKENS - 1, chars);
    expect(fitted).toEqual(['a'.repeat(100)]);
  });

  it('counts the overhead of each text', () => {
    const fitted = fitTexts(['a'.repeat(50), 'b'.repeat(50)], 100, chars, 2);
    expect(fitted[1]).toMatch(/tokens cut/);
    expect(fitted.reduce((sum, text) => sum + text.length + 2, 0)).toBeLessThanOrEqual(100);
  });
});

describe('cutToTokens', () => {
  it('leaves a text that fits as it is', () => {
    expect(cutToTokens('short', 10, chars)).toBe('short');
  });

  it('cuts a long run without spaces, and never half of a surrogate pair', () => {
    const count = (text: string) => countTokens('gpt-4o', text);
    const text = `${'x'.repeat(5000)}${'😀'.repeat(3000)}`;
    const cut = cutToTokens(text, 300, count);
    expect(count(cut)).toBeLessThanOrEqual(300);
    expect(cut.startsWith('xxx')).toBe(true);
    expect(cut.endsWith('😀')).toBe(true);
    expect(cut).not.toMatch(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/);
  });
});
