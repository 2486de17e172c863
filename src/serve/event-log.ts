/**
 * The events of one conversation or run, numbered, for its SSE stream: a client that reconnects with
 * `Last-Event-ID` gets what it missed from the last `capacity` events, then the live ones. Ids are
 * `EPOCH-N`: a server restarted since the client's id (another epoch) replays everything it still
 * holds, since it cannot know what the client saw. Pieces of a streaming answer (`model.delta`) go to the
 * clients listening as they come but are not held: the finished answer is in the events that follow,
 * and a long reply's pieces would crowd out everything else.
 */
import type { AgentEvent } from '../events.js';

export interface LoggedEvent {
  id: string;
  event: AgentEvent;
}

/** What a reconnecting client gets first: the events it missed, and whether older ones were dropped. */
export interface Replay {
  events: LoggedEvent[];
  /** Some events after the client's id are no longer held. */
  gap: boolean;
}

/** Events kept for replay, per conversation or run. */
const DEFAULT_CAPACITY = 1000;

/** This process's epoch: ids from an earlier process never match it. */
const EPOCH = Date.now().toString(36);

export class EventLog {
  readonly #capacity: number;
  readonly #held: LoggedEvent[] = [];
  readonly #listeners = new Set<(entry: LoggedEvent) => void>();
  /** The number of the last event appended. */
  #last = 0;
  /** The number of the last held event let go to keep within capacity. */
  #dropped = 0;

  constructor(capacity = DEFAULT_CAPACITY) {
    this.#capacity = capacity;
  }

  append(event: AgentEvent): LoggedEvent {
    const entry = { id: `${EPOCH}-${++this.#last}`, event };
    if (event.type !== 'model.delta') this.#held.push(entry);
    if (this.#held.length > this.#capacity) this.#dropped = numberIn(this.#held.shift()!.id)!;
    for (const listener of this.#listeners) listener(entry);
    return entry;
  }

  /** The events after `lastId` (a `Last-Event-ID`); all that are held when it is absent or foreign. */
  since(lastId: string | undefined): Replay {
    const after = numberIn(lastId);
    if (after === undefined) return { events: [...this.#held], gap: lastId !== undefined && this.#last > 0 };
    return { events: this.#held.filter((entry) => numberIn(entry.id)! > after), gap: this.#dropped > after };
  }

  /** True while a stream follows the log. */
  get listened(): boolean {
    return this.#listeners.size > 0;
  }

  /** Calls `listener` with every event appended from now on; returns the unsubscriber. */
  subscribe(listener: (entry: LoggedEvent) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }
}

/** The number of one of this process's ids; undefined for another epoch's, or no id. */
function numberIn(id: string | undefined): number | undefined {
  if (id === undefined) return undefined;
  const [epoch, number] = id.split('-');
  const n = Number(number);
  return epoch === EPOCH && Number.isSafeInteger(n) && n >= 0 ? n : undefined;
}
