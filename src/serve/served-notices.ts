/**
 * Hearing that a turn was served, wherever it ran. A server waiting for a turn it queued would otherwise
 * learn of its end only by polling the workflow's status (DBOS polls every second); instead it listens
 * on the channel each committed turn is announced on (served-turns.ts) and reads the recorded reply at
 * once. A turn that ran in this process is told of directly. Polling stays the fallback: a lost
 * connection only slows the answer down.
 */
import pg from 'pg';
import type { Database } from '../postgres/database.js';
import { SERVED_CHANNEL, servedReply, type ServedReply } from './served-turns.js';

/** A wait for one turn's reply; `cancel` when it is no longer needed. */
export interface ServedWait {
  reply: Promise<ServedReply>;
  cancel(): void;
}

const RECONNECT_MS = 1_000;

export class ServedNotices {
  readonly #db: Database;
  readonly #url: string;
  readonly #onProblem: (message: string) => void;
  readonly #waiting = new Map<string, Set<(reply: ServedReply) => void>>();
  #client: pg.Client | undefined;
  #closed = false;

  private constructor(db: Database, url: string, onProblem: (message: string) => void) {
    this.#db = db;
    this.#url = url;
    this.#onProblem = onProblem;
  }

  /** Listens on `url`'s database (a connection of its own, outside the pool). */
  static async listen(
    db: Database,
    url: string,
    onProblem: (message: string) => void,
  ): Promise<ServedNotices> {
    const notices = new ServedNotices(db, url, onProblem);
    await notices.#connect();
    return notices;
  }

  /** Resolves with the reply of `request` in `conversation` once it is served here or announced. */
  wait(conversation: string, request: string): ServedWait {
    const key = `${conversation}\n${request}`;
    let told: (reply: ServedReply) => void = () => {};
    const reply = new Promise<ServedReply>((resolve) => (told = resolve));
    const waiters = this.#waiting.get(key) ?? new Set();
    waiters.add(told);
    this.#waiting.set(key, waiters);
    return {
      reply,
      cancel: () => {
        waiters.delete(told);
        if (waiters.size === 0 && this.#waiting.get(key) === waiters) this.#waiting.delete(key);
      },
    };
  }

  /** Tells the waiters of a turn served in this process. */
  served(conversation: string, request: string, reply: ServedReply): void {
    for (const told of this.#waiting.get(`${conversation}\n${request}`) ?? []) told(reply);
  }

  async close(): Promise<void> {
    this.#closed = true;
    await this.#client?.end().catch(() => undefined);
  }

  async #connect(): Promise<void> {
    const client = new pg.Client({ connectionString: this.#url });
    const lost = (error?: Error) => {
      if (this.#client !== client || this.#closed) return;
      this.#client = undefined;
      this.#onProblem(`turn notices: ${error?.message ?? 'the connection ended'}; listening again`);
      setTimeout(() => void this.#connect().catch(lost), RECONNECT_MS).unref();
    };
    client.on('error', lost);
    client.on('end', () => lost());
    client.on('notification', ({ payload }) => void this.#announced(payload ?? ''));
    this.#client = client;
    await client.connect();
    await client.query(`listen ${SERVED_CHANNEL}`);
  }

  async #announced(payload: string): Promise<void> {
    const waiters = this.#waiting.get(payload);
    if (!waiters) return;
    const [conversation = '', request = ''] = payload.split('\n');
    try {
      const reply = await servedReply(this.#db.pool, conversation, request);
      if (reply) for (const told of waiters) told(reply);
    } catch (error) {
      this.#onProblem(`turn notices: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
}
