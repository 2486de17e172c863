/**
 * The goal runs or flow passes a server holds in this process, by id, each with its owner. An owner
 * finds only its own (another's is not said to exist); a bounded number of an owner's may be in
 * progress at once, so one key cannot take all of the server's model calls; the most recent finished
 * ones are kept for their views and event streams, and the oldest forgotten (their files stay).
 */
import { ApiError } from './errors.js';

export interface OwnedItem {
  readonly id: string;
  readonly owner: string;
  /** Done: it takes no more work and sends no more events. */
  readonly finished: boolean;
}

export interface OwnedLimits {
  /** An owner's items in progress at once; one more is refused with 429. */
  inProgress: number;
  /** An owner's finished items kept; older ones are forgotten. */
  kept: number;
}

export class OwnedWork<T extends OwnedItem> {
  readonly #items = new Map<string, T>();
  /** Items each owner has being made (a run opening its workspace): they count as in progress. */
  readonly #making = new Map<string, number>();
  readonly #noun: string;
  readonly #limits: OwnedLimits;

  /** `noun` names the items in messages: `runs`, `flow passes`. */
  constructor(noun: string, limits: OwnedLimits) {
    this.#noun = noun;
    this.#limits = limits;
  }

  /**
   * Makes `owner`'s new item with `make` and holds it; a 429 instead when `owner` has as many in
   * progress (or being made) as it may.
   */
  async start(owner: string, make: () => T | Promise<T>): Promise<T> {
    const busy = this.list(owner).filter((item) => !item.finished).length + (this.#making.get(owner) ?? 0);
    if (busy >= this.#limits.inProgress)
      throw new ApiError(
        429,
        `you have ${busy} ${this.#noun} in progress, the most this server runs for one key; wait for one to end`,
        'too_many_in_progress',
        undefined,
        { 'Retry-After': '5' },
      );
    this.#making.set(owner, (this.#making.get(owner) ?? 0) + 1);
    try {
      const item = await make();
      this.#items.set(item.id, item);
      const finished = this.list(owner).filter((other) => other.finished);
      for (const old of finished.slice(this.#limits.kept)) this.#items.delete(old.id);
      return item;
    } finally {
      this.#making.set(owner, this.#making.get(owner)! - 1);
    }
  }

  /** `owner`'s item `id`; undefined when there is none, or it is another's. */
  find(owner: string, id: string): T | undefined {
    const item = this.#items.get(id);
    return item?.owner === owner ? item : undefined;
  }

  /** `owner`'s items, the newest first. */
  list(owner: string): T[] {
    return [...this.#items.values()].filter((item) => item.owner === owner).reverse();
  }

  /** Every owner's items still in progress. */
  inProgress(): T[] {
    return [...this.#items.values()].filter((item) => !item.finished);
  }
}
