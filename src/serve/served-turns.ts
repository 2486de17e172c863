/**
 * The replies a server on Postgres has served, one row per (conversation, request): the table that makes
 * a turn answer once however often its request comes (a client's retry, on this server or another) and
 * however often its workflow's step runs (again after a crash). A turn's row is written in the same
 * transaction as the conversation's state and catalog entry, so a reply is recorded exactly when the
 * turn is. Beside it: the per-conversation lock that keeps one turn at a time across servers, and the
 * notice a committed turn sends, so a server waiting for a turn another process ran hears of it at once.
 */
import type pg from 'pg';
import type { TokenUsage } from '../events.js';
import { migrate, SCHEMA, type Database } from '../postgres/database.js';

/** A turn's reply as recorded, and as every request of that turn is answered. */
export interface ServedReply {
  reply: string;
  /** A quit was taken: the conversation takes no more messages. */
  ended: boolean;
  /** The node the conversation stood at after the turn. */
  node: string | undefined;
  usage: TokenUsage;
}

/** The channel a committed turn is announced on; the payload is `conversation\nrequest`. */
export const SERVED_CHANNEL = 'meta_agent_served_turns';

const MIGRATIONS = [
  `create table ${SCHEMA}.served_turns (
     conversation text not null,
     request text not null,
     reply json not null,
     served_at timestamptz not null default now(),
     primary key (conversation, request)
   );
   create index served_turns_request on ${SCHEMA}.served_turns (request)`,
];

/** Creates or migrates the table (the part `serve`). */
export function migrateServedTurns(db: Database): Promise<void> {
  return migrate(db, 'serve', MIGRATIONS);
}

/** The reply recorded for `request` in `conversation`, if that turn was served. */
export async function servedReply(
  db: pg.Pool | pg.PoolClient,
  conversation: string,
  request: string,
): Promise<ServedReply | undefined> {
  const { rows } = await db.query<{ reply: ServedReply }>(
    `select reply from ${SCHEMA}.served_turns where conversation = $1 and request = $2`,
    [conversation, request],
  );
  return rows[0]?.reply;
}

/**
 * The conversation that served `request`: a client resending a history the conversation has moved past
 * (its answer was lost) is retrying that turn. The request's digest holds the owner and the graph.
 */
export async function conversationOfRequest(db: pg.Pool, request: string): Promise<string | undefined> {
  const { rows } = await db.query<{ conversation: string }>(
    `select conversation from ${SCHEMA}.served_turns where request = $1 limit 1`,
    [request],
  );
  return rows[0]?.conversation;
}

/**
 * Records `reply` for `request` inside the caller's transaction on `client`, and announces it at commit
 * (one statement). False when the request has a reply already: another run of the turn won.
 */
export async function recordServedReply(
  client: pg.PoolClient,
  conversation: string,
  request: string,
  reply: ServedReply,
): Promise<boolean> {
  const { rowCount } = await client.query(
    `with served as (
       insert into ${SCHEMA}.served_turns (conversation, request, reply) values ($1, $2, $3)
       on conflict do nothing returning 1
     )
     select pg_notify($4, $5) from served`,
    [conversation, request, JSON.stringify(reply), SERVED_CHANNEL, `${conversation}\n${request}`],
  );
  return rowCount === 1;
}

/** What a turn finds before it runs: its recorded reply, and its conversation's catalog entry. */
export interface TurnFooting {
  recorded: ServedReply | undefined;
  /** The catalog entry's row (catalog.ts), as stored. */
  entry: Record<string, string | null> | undefined;
}

/**
 * Reads `request`'s recorded reply in `conversation` and its catalog entry (the store's table) in one
 * round trip: a turn reads both every time, on its lock's connection.
 */
export async function turnFooting(
  client: pg.PoolClient,
  conversation: string,
  request: string,
): Promise<TurnFooting> {
  const { rows } = await client.query<{
    recorded: ServedReply | null;
    entry: TurnFooting['entry'] | null;
  }>(
    `select
       (select reply from ${SCHEMA}.served_turns where conversation = $1 and request = $2) as recorded,
       (select row_to_json(e) from (select id, graph, owner, created, updated, history
          from ${SCHEMA}.catalog where id = $1) e) as entry`,
    [conversation, request],
  );
  const row = rows[0]!;
  return { recorded: row.recorded ?? undefined, entry: row.entry ?? undefined };
}

/**
 * Runs `work` in a transaction of a client of `db` that holds `conversation`'s lock: one turn at a time
 * in a conversation, whichever process runs it. The lock is the transaction's: the commit (when `work`
 * resolves) or the rollback (when it throws, or its process dies with its connection) lets it go. It is
 * taken with the transaction's start, in one round trip.
 */
export async function inConversationTransaction<T>(
  db: Database,
  conversation: string,
  work: (client: pg.PoolClient) => Promise<T>,
): Promise<T> {
  const client = await db.pool.connect();
  try {
    const name = client.escapeLiteral(conversation);
    await client.query(`begin; select pg_advisory_xact_lock(hashtext('meta_agent.turn'), hashtext(${name}))`);
    const result = await work(client);
    await client.query('commit');
    client.release();
    return result;
  } catch (error) {
    const rolledBack = await client.query('rollback').then(
      () => true,
      () => false,
    );
    // A connection that cannot roll back is not given back to the pool.
    client.release(rolledBack ? undefined : (error as Error));
    throw error;
  }
}
