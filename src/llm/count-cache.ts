/**
 * The token counts tokens.ts remembers. A conversation's prompts repeat its turns, which are worth
 * remembering; but a text counted whole once (a classifier's transcript, a prompt whose server reports
 * no usage, the scripted provider's) is new every reply. Kept like the turns, 20 000 of them at most,
 * such texts held 38 MB more by reply 6 000 of `chat --state` on the scripted provider, on their way
 * to some 120 MB; and each one that stays a while outlives V8's young generation, so forgetting them
 * later still leaves the heap larger (see bench/README.md, chat-memory).
 *
 * So a text is remembered from its second count on: the first only notes it among the last few texts
 * seen, where a turn is seen again by the next prompt. What is remembered is bounded by characters,
 * the least recently used forgotten first.
 */

/** What an entry costs beyond its characters: the Map's slot and the string's header, roughly. */
const ENTRY_OVERHEAD_CHARS = 64;

/** Texts counted once that are noted, waiting to be seen again; the oldest go first. */
const SEEN_ONCE_KEPT = 64;

/** Counts of texts seen at least twice, the least recently used forgotten past `budgetChars`. */
export class CountCache {
  readonly #counts = new Map<string, number>();
  readonly #seenOnce = new Set<string>();
  #heldChars = 0;

  constructor(readonly budgetChars: number) {}

  /** Characters of the remembered texts, entry overheads included; at most `budgetChars`. */
  get heldChars(): number {
    return this.#heldChars;
  }

  /** The count remembered for `text`, which becomes the most recently used; undefined when none is. */
  get(text: string): number | undefined {
    const count = this.#counts.get(text);
    if (count === undefined) return undefined;
    this.#counts.delete(text);
    this.#counts.set(text, count);
    return count;
  }

  /**
   * Notes that `text` counts `count` tokens: remembered when it was counted recently already (and
   * fits the budget on its own), else only noted as seen.
   */
  set(text: string, count: number): void {
    if (!this.#seenOnce.delete(text)) {
      this.#seenOnce.add(text);
      if (this.#seenOnce.size > SEEN_ONCE_KEPT) this.#seenOnce.delete(this.#seenOnce.values().next().value!);
      return;
    }
    const cost = text.length + ENTRY_OVERHEAD_CHARS;
    if (cost > this.budgetChars || this.#counts.has(text)) return;
    this.#counts.set(text, count);
    this.#heldChars += cost;
    for (const oldest of this.#counts.keys()) {
      if (this.#heldChars <= this.budgetChars) break;
      this.#counts.delete(oldest);
      this.#heldChars -= oldest.length + ENTRY_OVERHEAD_CHARS;
    }
  }
}
