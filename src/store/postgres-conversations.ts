/**
 * Conversations in Postgres, kept as the file store's journal keeps them (conversation-journal.ts), in
 * rows. Each reply is a row of `conversation_turns` under (key, turn), holding what the reply changed
 * (state-delta.ts) and a digest of the whole state, which keeps the turn unique. The conversation's row
 * in `conversations` names the latest turn and holds the whole state at an earlier one, its snapshot:
 * the state now is the snapshot and the replies' rows since. A reply's save appends its row and moves
 * the latest turn on; once the rows since the snapshot outgrow it (or when the saver does not have the
 * state the reply started from), the whole state becomes the snapshot again. So a save writes what the
 * reply changed, at the 10 000th turn as at the 10th, and a load reads at most about twice the state.
 */
import { parseState, type ConversationState } from '../engine/state.js';
import { UserError } from '../errors.js';
import { SCHEMA } from '../postgres/database.js';
import { recordUnique, type Queryable } from './postgres-sql.js';
import { applyDelta, stateDelta } from './state-delta.js';

/** Replies' rows are never folded into the snapshot below this size: a short conversation is not rewritten. */
const MIN_COMPACTION_BYTES = 64 * 1024;

/** The latest turn recorded under `key`; undefined when there is none. */
export async function storedTurn(db: Queryable, key: string): Promise<number | undefined> {
  const { rows } = await db.query<{ turn: number }>(
    `select turn from ${SCHEMA}.conversations where key = $1`,
    [key],
  );
  return rows[0]?.turn;
}

/** The current state of the conversation `key`, checked; undefined when there is none. */
export async function loadConversationState(
  db: Queryable,
  key: string,
): Promise<ConversationState | undefined> {
  const { rows } = await db.query<{ turn: number; snapshot_turn: number; state: unknown }>(
    `select turn, snapshot_turn, state from ${SCHEMA}.conversations where key = $1`,
    [key],
  );
  const row = rows[0];
  if (row === undefined) return undefined;
  const source = conversationSource(key);
  if (row.turn === row.snapshot_turn) return parseState(row.state, source);
  const tail = await db.query<{ turn: number; base: number | null; delta: unknown }>(
    `select turn, base, delta from ${SCHEMA}.conversation_turns where key = $1 and turn > $2 and turn <= $3`,
    [key, row.snapshot_turn, row.turn],
  );
  // The replies since the snapshot, from the latest back along what each started from.
  const byTurn = new Map(tail.rows.map((reply) => [reply.turn, reply]));
  const chain: unknown[] = [];
  for (let turn = row.turn; turn !== row.snapshot_turn;) {
    const reply = byTurn.get(turn);
    if (reply?.base === null || reply?.base === undefined)
      throw new UserError(`${source} is damaged: the reply of turn ${turn} is missing`, 2);
    chain.push(reply.delta);
    turn = reply.base;
  }
  let state = parseState(row.state, source);
  for (const delta of chain.reverse()) {
    try {
      state = applyDelta(state, delta);
    } catch (error) {
      throw new UserError(`${source} is damaged: ${(error as Error).message}`, 2);
    }
  }
  // A check of the whole, as a journal's replay makes: deltas are checked one by one.
  return parseState(state, source);
}

/**
 * Records the state a reply of the conversation `key` ended at, under (key, turn = state.steps): the
 * same state again changes nothing, another state under a turn already recorded is a DuplicateWrite
 * (thrown before anything is written). The conversation moves on to it unless a later turn is recorded
 * already. `before` is the state the reply started from, as the caller loaded or saved it: with it, the
 * save writes what the reply changed; without it, the whole state.
 *
 * It composes: run it on a client inside inTransaction with other writes (a catalog entry, a served
 * reply) to land them together. On the pool alone it is still safe to repeat after a failure.
 * Returns whether the turn was recorded now (false: it was recorded before, with this state).
 */
export async function recordConversationState(
  db: Queryable,
  key: string,
  state: ConversationState,
  before?: ConversationState,
): Promise<boolean> {
  const turn = state.steps;
  const delta = before && before.steps < turn ? JSON.stringify(stateDelta(before, state)) : undefined;
  const whole = delta === undefined ? JSON.stringify(state) : undefined;
  const recorded = await recordUnique(
    db,
    'conversation_turns',
    ['turn'],
    'conversation',
    key,
    [
      {
        columns: [turn],
        name: `turn ${turn}`,
        value: state,
        extra: [delta ? before!.steps : null, delta ?? whole],
      },
    ],
    ['base', 'delta'],
  );
  if (recorded.length > 0 && delta !== undefined) {
    const appended = await db.query(
      `update ${SCHEMA}.conversations set turn = $2, tail_bytes = tail_bytes + $4, updated_at = now()
       where key = $1 and turn = $3 and tail_bytes + $4 <= greatest(snapshot_bytes, $5)`,
      [key, turn, before!.steps, Buffer.byteLength(delta), MIN_COMPACTION_BYTES],
    );
    if (appended.rowCount === 1) return true;
  }
  // The whole state as the snapshot: a new conversation, a long tail, a saver without the state before,
  // or the retry of a save that failed between its two writes (on the pool, outside a transaction).
  const snapshot = whole ?? JSON.stringify(state);
  await db.query(
    `insert into ${SCHEMA}.conversations as c (key, turn, snapshot_turn, state, snapshot_bytes)
     values ($1, $2, $2, $3, $4)
     on conflict (key) do update set turn = excluded.turn, snapshot_turn = excluded.turn, state = excluded.state,
       snapshot_bytes = excluded.snapshot_bytes, tail_bytes = 0, updated_at = now()
     where c.turn < excluded.turn`,
    [key, turn, snapshot, Buffer.byteLength(snapshot)],
  );
  return recorded.length > 0;
}

/**
 * The state the conversation `key` was at after its turn `turn` (as a reply recorded it), rebuilt from
 * the turns' rows: the last whole state at or before it, then what each reply changed since. Undefined
 * when that turn was never recorded. For audits and transcripts; a conversation goes on from
 * loadConversationState, which is one row.
 */
export async function loadConversationAt(
  db: Queryable,
  key: string,
  turn: number,
): Promise<ConversationState | undefined> {
  const { rows } = await db.query<{ turn: number; base: number | null; delta: unknown }>(
    `select turn, base, delta from ${SCHEMA}.conversation_turns
     where key = $1 and turn <= $2
       and turn >= (select coalesce(max(turn), 0) from ${SCHEMA}.conversation_turns
                    where key = $1 and turn <= $2 and base is null)
     order by turn`,
    [key, turn],
  );
  if (rows.at(-1)?.turn !== turn) return undefined;
  const source = conversationSource(key);
  let state: ConversationState | undefined;
  // Each reply's row follows the one before it, unless two processes wrote the conversation at once
  // without a lock: a row that follows another branch is not this turn's line and is passed over.
  for (const row of rows) {
    if (row.base === null) state = parseState(row.delta, source);
    else if (state?.steps === row.base) {
      try {
        state = applyDelta(state, row.delta);
      } catch (error) {
        throw new UserError(`${source}: turn ${row.turn} is damaged (${(error as Error).message})`, 2);
      }
    }
  }
  // A whole-state check, as a journal's replay makes: deltas are checked one by one.
  return state?.steps === turn ? parseState(state, source) : undefined;
}

/** How a stored conversation is named in messages. */
export function conversationSource(key: string): string {
  return `the conversation "${key}" in the database`;
}
