/**
 * Short-term memory: which of a run's steps go into a prompt within a token budget, oldest first
 * summarized or dropped. The newest steps are shown whole while they fit; the newest one is always
 * shown, cut in the middle when it alone is over the budget (a model that loses its last result can
 * only repeat the step); older steps are shown as one-line digests while those fit in a share of the
 * budget; the oldest are dropped and counted in one line. Also fits a list of texts (recalled
 * memories) into a budget. Pure and generic: the caller says how a step reads, whole and in short,
 * and how tokens are counted.
 */

/** Tokens in a text, in the model's encoding. */
export type CountTokens = (text: string) => number;

/** The largest share of the budget the digests of older steps take by default. */
export const DIGEST_SHARE = 0.25;

/** A text is not cut to fewer tokens than this: a few words around the marker say nothing. */
export const MIN_CUT_TOKENS = 32;

export interface ShortTermOptions<Step> {
  /** Tokens the chosen history may take, the parts' overhead included. */
  budget: number;
  count: CountTokens;
  /** How a step reads whole, as parts in order (for a goal loop: the model's answer, what came of it). */
  parts: (step: Step) => readonly string[];
  /** One line that stands for a step too old to show whole. */
  digest: (step: Step) => string;
  /** Tokens each part, and the block of older steps, costs beyond its text (a chat message's framing). */
  partOverhead?: number;
  /** The largest share of the budget the digests take (DIGEST_SHARE by default). */
  digestShare?: number;
}

export interface ShortTermHistory<Step> {
  /** The oldest steps, not shown at all. */
  dropped: number;
  /**
   * What stands for the steps before the whole ones: a line saying how many are not shown and how many
   * follow in short, then their digests, oldest first. Absent when every step is shown whole.
   */
  earlier?: string;
  /** The newest steps, oldest first, with their parts; the newest one's longest parts cut if need be. */
  whole: Array<{ step: Step; parts: string[] }>;
  /** Tokens the choice takes, as counted (an upper bound of what the texts cost together). */
  tokens: number;
}

/** The history a prompt shows of `steps` (oldest first) within `options.budget` tokens. */
export function chooseHistory<Step>(
  steps: readonly Step[],
  options: ShortTermOptions<Step>,
): ShortTermHistory<Step> {
  const { budget, count } = options;
  const overhead = options.partOverhead ?? 0;
  const cost = (text: string) => count(text) + overhead;
  const costs = new Map<number, number>();
  const stepCost = (index: number) => {
    let known = costs.get(index);
    if (known === undefined)
      costs.set(index, (known = options.parts(steps[index]!).reduce((sum, part) => sum + cost(part), 0)));
    return known;
  };
  const wholeStep = (index: number) => ({ step: steps[index]!, parts: [...options.parts(steps[index]!)] });
  const newest = steps.length - 1;
  if (newest < 0) return { dropped: 0, whole: [], tokens: 0 };

  // Everything whole, when it fits: the common case of a short run.
  let used = 0;
  let next = newest;
  for (; next >= 0 && used + stepCost(next) <= budget; next--) used += stepCost(next);
  if (next < 0) return { dropped: 0, whole: steps.map((_, index) => wholeStep(index)), tokens: used };

  // Some steps go: the line that says so must fit, and the digests get their share. The newest step
  // is cut only when it alone is over the budget, and then so that the digests keep their share.
  const lineCost =
    overhead + Math.max(count(earlierLine(steps.length, 0)), count(earlierLine(steps.length, steps.length)));
  const digestRoom = Math.floor(budget * (options.digestShare ?? DIGEST_SHARE));
  const wholeLimit = budget - Math.max(lineCost, digestRoom);
  const whole = [
    stepCost(newest) <= budget - lineCost
      ? wholeStep(newest)
      : { step: steps[newest]!, parts: cutParts(options.parts(steps[newest]!), wholeLimit, count, overhead) },
  ];
  used = whole[0]!.parts.reduce((sum, part) => sum + cost(part), 0);
  for (next = newest - 1; next >= 0 && used + stepCost(next) <= wholeLimit; next--) {
    used += stepCost(next);
    whole.push(wholeStep(next));
  }
  whole.reverse();
  if (next < 0) return { dropped: 0, whole, tokens: used };

  // Digests, newest first, each line counted with the newline that joins it.
  const digestLimit = Math.min(digestRoom, budget - used) - lineCost;
  const digests: string[] = [];
  let digestTokens = 0;
  for (; next >= 0; next--) {
    const line = options.digest(steps[next]!);
    const lineTokens = count(line) + 1;
    if (digestTokens + lineTokens > digestLimit) break;
    digestTokens += lineTokens;
    digests.push(line);
  }
  digests.reverse();
  // Counted apart, the lines are an estimate of the block: the block as sent is what must fit.
  let earlier = earlierText(next + 1, digests);
  while (digests.length > 0 && cost(earlier) > budget - used) {
    digests.shift();
    next += 1;
    earlier = earlierText(next + 1, digests);
  }
  return { dropped: next + 1, earlier, whole, tokens: used + cost(earlier) };
}

function earlierText(dropped: number, digests: readonly string[]): string {
  return [earlierLine(dropped, digests.length), ...digests].join('\n');
}

/** The line before the digests: how many steps are not shown, and how many follow in short. */
function earlierLine(dropped: number, digests: number): string {
  const steps = (n: number) => `${formatCount(n)} earlier step${n === 1 ? '' : 's'}`;
  if (digests === 0) return `${steps(dropped)} ${dropped === 1 ? 'is' : 'are'} not shown.`;
  if (dropped === 0) return `The ${steps(digests)}, in short:`;
  return `${steps(dropped)} ${dropped === 1 ? 'is' : 'are'} not shown; the ${formatCount(digests)} after, in short:`;
}

/**
 * `parts` cut to `budget` tokens in all: the short ones stay whole, the long ones share what is left
 * equally and are cut in the middle.
 */
function cutParts(parts: readonly string[], budget: number, count: CountTokens, overhead: number): string[] {
  const sizes = parts.map((part) => count(part));
  const order = sizes.map((_, index) => index).sort((a, b) => sizes[a]! - sizes[b]!);
  let left = budget - overhead * parts.length;
  const caps: number[] = [];
  order.forEach((index, rank) => {
    const cap = Math.min(sizes[index]!, Math.floor(left / (parts.length - rank)));
    caps[index] = cap;
    left -= cap;
  });
  return parts.map((part, index) =>
    sizes[index]! <= caps[index]! ? part : cutToTokens(part, caps[index]!, count),
  );
}

/**
 * The texts (most relevant first) that fit in `budget` tokens, each costing `overhead` more than its
 * text (a separator): whole while they fit, the one that straddles the budget cut in the middle (unless
 * fewer than MIN_CUT_TOKENS would be left of it), the rest dropped.
 */
export function fitTexts(
  texts: readonly string[],
  budget: number,
  count: CountTokens,
  overhead = 0,
): string[] {
  const kept: string[] = [];
  let used = 0;
  for (const text of texts) {
    const cost = count(text) + overhead;
    if (used + cost <= budget) {
      kept.push(text);
      used += cost;
      continue;
    }
    const room = budget - used - overhead;
    if (room >= MIN_CUT_TOKENS) kept.push(cutToTokens(text, room, count));
    break;
  }
  return kept;
}

/**
 * `text` in at most `budget` tokens: its head and its tail, with a marker between them that says how
 * many tokens were cut ("[… 1,234 tokens cut …]"). Below the marker's own size, only the marker is left.
 */
export function cutToTokens(text: string, budget: number, count: CountTokens): string {
  const total = count(text);
  if (total <= budget) return text;
  // The marker is sized for the most that could be cut; a smaller number only takes fewer tokens.
  let room = budget - count(cutMarker(total)) - 2;
  for (;;) {
    const headRoom = Math.floor(room / 2);
    const headLength = longestWithin(text.length, headRoom, count, (n) => text.slice(0, n));
    const tailLength = longestWithin(text.length, room - headRoom, count, (n) => text.slice(text.length - n));
    const head = text.slice(0, headEnd(text, headLength));
    const tail = text.slice(tailStart(text, text.length - tailLength));
    const marker = cutMarker(total - count(head) - count(tail));
    const cut = [head, marker, tail].filter((piece) => piece !== '').join('\n');
    const over = count(cut) - budget;
    if (over <= 0 || room <= 0) return cut;
    // Tokens can merge differently across the joins: take back what went over and try again.
    room -= over;
  }
}

/** Where the head ends: before the last space or line break in its last tenth, so no word is cut. */
function headEnd(text: string, end: number): number {
  const from = Math.floor(end * 0.9);
  const space = text.slice(from, end).search(/\s\S*$/);
  return space < 0 ? end : from + space;
}

/** Where the tail starts: after the first space or line break in its first tenth, so no word is cut. */
function tailStart(text: string, start: number): number {
  const space = text.slice(start, start + Math.ceil((text.length - start) * 0.1)).search(/\s/);
  return space < 0 ? start : start + space + 1;
}

function cutMarker(tokens: number): string {
  return `[… ${formatCount(tokens)} tokens cut …]`;
}

/**
 * The most characters `take(n)` can have within `tokens`, found by proportion from the counts (a few
 * counts, not a search over every length), never splitting a surrogate pair.
 */
function longestWithin(
  length: number,
  tokens: number,
  count: CountTokens,
  take: (chars: number) => string,
): number {
  if (tokens <= 0) return 0;
  let best = 0;
  let guess = Math.min(length, Math.floor((length * tokens) / Math.max(1, count(take(length)))));
  for (let tries = 0; tries < 8 && guess > best; tries++) {
    if (splitsPair(take(guess))) guess -= 1;
    const used = count(take(guess));
    if (used <= tokens) {
      best = guess;
      if (guess === length || used >= tokens * 0.95) break;
      guess = Math.min(length, Math.floor((guess * tokens) / Math.max(1, used)));
    } else {
      guess = Math.min(guess - 1, Math.floor((guess * tokens) / used));
    }
  }
  return best;
}

/** Whether a piece cut out of a longer text begins or ends with half of a surrogate pair. */
function splitsPair(piece: string): boolean {
  return /^[\uDC00-\uDFFF]|[\uD800-\uDBFF]$/.test(piece);
}

function formatCount(n: number): string {
  return n.toLocaleString('en-US');
}
